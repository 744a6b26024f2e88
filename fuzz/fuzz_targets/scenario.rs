//! Scenario and campaign files (crates/coapcc): `AnyScenario::parse` and
//! `AnyPlan::parse` (what `coapcc run FILE` and `coapcc campaign FILE` call
//! on the file's text), on any UTF-8 text.
//!
//! - Err, never a panic, for bad input, and every error names the file
//!   (its message starts with the origin given);
//! - parsing is deterministic: the same text gives an equal scenario, or a
//!   plan with the same name, definition hash and run keys;
//! - what `coapcc run` and `coapcc campaign` compute right after parsing
//!   (a scenario's labels, planned runs and cost; a plan's cells' costs and
//!   distinct keys) does not panic either.
#![no_main]

use coapcc::networks::{AnyPlan, AnyScenario};
use libfuzzer_sys::fuzz_target;

const ORIGIN: &str = "fuzz-input.toml";

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match AnyScenario::parse(text, ORIGIN) {
        Ok(s) => {
            let again = AnyScenario::parse(text, ORIGIN).expect("parses twice");
            assert!(s == again, "scenario parsing is not deterministic");
            assert_eq!(
                s.labels().len() as u64 * u64::from(s.replications()),
                s.planned_runs()
            );
            let _ = s.cost();
        }
        Err(e) => names_origin(&e),
    }
    match AnyPlan::parse(text, ORIGIN) {
        Ok(p) => {
            let again = AnyPlan::parse(text, ORIGIN).expect("parses twice");
            assert_eq!(p.identity(), again.identity());
            assert_eq!(p.distinct_keys(), again.distinct_keys());
            assert_eq!(p.text(), (text, ORIGIN));
            let _ = p.costs();
        }
        Err(e) => names_origin(&e),
    }
});

fn names_origin(e: &anyhow::Error) {
    let msg = format!("{e:#}");
    assert!(
        msg.starts_with(ORIGIN),
        "error does not name the file: {msg}"
    );
}
