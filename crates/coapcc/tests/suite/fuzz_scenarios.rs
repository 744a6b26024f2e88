//! Scenario files, mutated (proptest, so it runs in `cargo test`): every
//! scenario file of `scenarios/` with one `key = value` line given an
//! extreme or ill-typed value, removed, or followed by garbage. Each case
//! runs `COAPCC_FUZZ_CASES` times (default 256); set it higher for a long
//! run:
//!
//!   COAPCC_FUZZ_CASES=100000 cargo test --release -p coapcc --test suite fuzz_scenarios::
//!
//! Properties: nothing panics; a refused file is refused by an error naming
//! the file and, for a changed value, the field; an accepted file passes or
//! fails the resource checks of `coapcc run` ([`coapcc::budget`]) without
//! panicking, and if it passes them with a small estimate, it runs (one
//! replication) to the end within a bounded multiple of its estimated
//! events.

use std::path::PathBuf;

use coapcc::api::{self, RunOptions, Source};
use coapcc::budget;
use coapcc::networks::AnyScenario;
use coapcc::scenario_file::{self, Overrides};
use proptest::prelude::*;

/// Values a mutated line may get: extremes, non-finite numbers, wrong types.
const VALUES: &[&str] = &[
    "0",
    "-1",
    "1e-9",
    "1e30",
    "inf",
    "-inf",
    "nan",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "\"x\"",
    "true",
    "[]",
    "{}",
    "1e7",
    "0.5",
    "1e-300",
    "[1e300, -1]",
];

/// Accepted mutants estimated at up to this many events per run are run.
const RUN_BELOW: u64 = 100_000;

/// The name the mutants are parsed under.
const ORIGIN: &str = "mutant.toml";

fn cases() -> u32 {
    std::env::var("COAPCC_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256)
}

/// The text of every scenario file (campaign files excluded) and the
/// embedded default.
fn read_seeds() -> Vec<String> {
    let root = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios"));
    let mut texts = vec![scenario_file::DEFAULT_SCENARIO.to_string()];
    for dir in std::fs::read_dir(&root).unwrap() {
        let dir = dir.unwrap().path();
        if dir.is_dir() && !dir.ends_with("campaigns") {
            let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
                .unwrap()
                .map(|f| f.unwrap().path())
                .collect();
            files.sort();
            texts.extend(files.iter().map(|f| std::fs::read_to_string(f).unwrap()));
        }
    }
    texts
}

/// [`read_seeds`], read once.
fn seeds() -> &'static [String] {
    static SEEDS: std::sync::LazyLock<Vec<String>> = std::sync::LazyLock::new(read_seeds);
    &SEEDS
}

/// How a line is changed.
#[derive(Clone, Copy, Debug)]
enum Mutation {
    /// Its value replaced by `VALUES[i]`.
    Value(usize),
    /// Removed.
    Remove,
    /// Followed by a line of garbage.
    Garbage,
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        6 => (0..VALUES.len()).prop_map(Mutation::Value),
        1 => Just(Mutation::Remove),
        1 => Just(Mutation::Garbage),
    ]
}

/// `text` with its `pick`-th `key = value` line mutated; the key, if a
/// value was changed.
fn mutate(text: &str, pick: prop::sample::Index, m: Mutation) -> (String, Option<String>) {
    let lines: Vec<&str> = text.lines().collect();
    let assignments: Vec<usize> = (0..lines.len())
        .filter(|&i| !lines[i].trim_start().starts_with('#') && lines[i].contains(" = "))
        .collect();
    let at = assignments[pick.index(assignments.len())];
    let key = lines[at].split(" = ").next().unwrap().trim().to_string();
    let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    let changed = match m {
        Mutation::Value(v) => {
            out[at] = format!("{key} = {}", VALUES[v]);
            Some(key)
        }
        Mutation::Remove => {
            out.remove(at);
            None
        }
        Mutation::Garbage => {
            out.insert(at + 1, "\u{1}= ]] \"".to_string());
            None
        }
    };
    (out.join("\n"), changed)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases(),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn mutated_scenarios_are_refused_by_field_or_run_within_their_estimate(
        seed in 0..seeds().len(),
        pick in any::<prop::sample::Index>(),
        m in mutation(),
    ) {
        let (text, key) = mutate(&seeds()[seed], pick, m);
        let scenario = match AnyScenario::parse(&text, ORIGIN) {
            Ok(s) => s,
            Err(e) => {
                let e = format!("{e:#}");
                prop_assert!(e.starts_with(ORIGIN), "{e}\n{text}");
                if let Some(key) = key {
                    prop_assert!(e.contains(&key), "`{key}` not named: {e}\n{text}");
                }
                return Ok(());
            }
        };
        let checked = scenario.check_budget(ORIGIN, 1, false);
        let (cost, runs) = scenario.cost();
        if let Err(e) = checked {
            let e = e.to_string();
            prop_assert!(e.starts_with(ORIGIN), "{e}");
            return Ok(());
        }
        prop_assert!(cost.events <= budget::MAX_EVENTS);
        if cost.events > RUN_BELOW || cost.bytes() > 256 << 20 || runs > 20 {
            return Ok(());
        }
        let overrides = Overrides { replications: Some(1), ..Overrides::default() };
        let options = RunOptions { threads: Some(1), ..RunOptions::default() };
        let source = Source::Toml(text.clone(), ORIGIN.into());
        match api::run(&source, &overrides, &options, &|| {}) {
            Ok(o) => {
                let bound = o.runs * 100 * cost.events.max(10_000);
                prop_assert!(o.events <= bound, "{} events, estimated {cost:?}\n{text}", o.events);
            }
            Err(e) => {
                let e = format!("{e:#}");
                prop_assert!(e.starts_with(ORIGIN), "{e}\n{text}");
            }
        }
    }
}
