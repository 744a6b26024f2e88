//! An algorithm arming a timer no deadline can hold stops the run, or the
//! campaign, with an error naming the algorithm, the method, the value and
//! the time (a test binary of its own: it installs the process's registry).

use std::sync::Once;

use coapcc::api::{RunOptions, Source};
use coapcc::campaign::ceiling::Ceilings;
use coapcc::scenario_file::Overrides;
use coapcc_rto::registry::{self, BoxedAlgorithm, NewAlgorithm, Registry};
use coapcc_rto::{Ack, CongestionControl, ExchangeTimer, Random};

/// Arms a first timer of 1 s, then `next` on expiry.
struct Backs {
    next: f64,
}

impl CongestionControl for Backs {
    fn start(&mut self, _now: f64, _outstanding: usize, _rng: &mut dyn Random) -> ExchangeTimer {
        ExchangeTimer {
            initial: 1.0,
            current: 1.0,
            ..ExchangeTimer::default()
        }
    }
    fn expire(&mut self, _now: f64, ex: &mut ExchangeTimer, _rng: &mut dyn Random) {
        ex.retransmissions += 1;
        ex.current = self.next;
    }
    fn on_ack(&mut self, _ex: &ExchangeTimer, _ack: &Ack) {}
    fn reset(&mut self) {}
}

fn backs(name: &str, next: f64) -> NewAlgorithm {
    NewAlgorithm::new(
        name,
        move |_| Ok(Box::new(Backs { next }) as BoxedAlgorithm),
    )
}

/// Installs the process's registry: the built-ins and three bad algorithms.
fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let r = Registry::builtin()
            .with(backs("nan-rto", f64::NAN))
            .and_then(|r| r.with(backs("negative-rto", -1.0)))
            .and_then(|r| r.with(backs("huge-rto", 1e30)))
            .unwrap();
        registry::install(r).unwrap();
    });
}

/// The error's text without its time (where the first retransmission
/// falls depends on the run).
fn message(name: &str, shown: &str) -> (String, String) {
    (
        format!("algorithm `{name}`: `expire` at t = "),
        format!(
            " s of the run: armed a timer of {shown} s; a timer must be a number of seconds \
             greater than 0 and at most 1.8e10"
        ),
    )
}

/// Whether `text` is the message of `name` arming `shown`, at a time of
/// the run (`d.dddddd`).
fn is_message(text: &str, name: &str, shown: &str) -> bool {
    let (head, tail) = message(name, shown);
    let Some(rest) = text.find(&head).map(|i| &text[i + head.len()..]) else {
        return false;
    };
    let Some(at) = rest.strip_suffix(tail.as_str()) else {
        return false;
    };
    at.parse::<f64>().is_ok_and(|t| t > 0.0)
}

#[test]
fn a_nan_negative_or_huge_timer_stops_the_run_naming_it() {
    install();
    for (name, shown) in [
        ("nan-rto", "NaN"),
        ("negative-rto", "-1.0"),
        ("huge-rto", "1e30"),
    ] {
        // High link errors: some exchange is retransmitted.
        let toml = format!(
            "name = \"bad\"\nclients = 10\nreplications = 1\nseed = 1\n\
             [network]\nerrors = \"high\"\n[workload]\nkind = \"continuous\"\nexchanges = 10\n\
             [[algorithm]]\nname = \"{name}\"\n"
        );
        let source = Source::Toml(toml, "bad.toml".into());
        let options = RunOptions {
            threads: Some(1),
            ..RunOptions::default()
        };
        let Err(e) = coapcc::api::run(&source, &Overrides::default(), &options, &|| {}) else {
            panic!("the run stops with an error");
        };
        let text = format!("{e:#}");
        assert!(is_message(&text, name, shown), "{text}");
    }
}

#[test]
fn a_campaign_stops_too_and_stores_none_of_its_runs() {
    install();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.toml");
    let store = dir.path().join("bad.sqlite");
    std::fs::write(
        &file,
        "name = \"bad\"\ntitle = \"a bad timer\"\nseed = 1\nalgorithms = [\"nan-rto\"]\n\
         [workload]\nexchanges = 10\n\
         [[set]]\nname = \"s\"\nclients = [10]\nbuffers = [\"inf\"]\nerrors = [\"high\"]\n\
         replications = 2\n",
    )
    .unwrap();
    let Err(e) =
        coapcc::cli::campaign::run(&file, &store, Some(2), None, &Ceilings::DEFAULT, false)
    else {
        panic!("the campaign stops with an error");
    };
    let text = format!("{e:#}");
    assert!(text.contains("(replication "), "{text}");
    assert!(is_message(&text, "nan-rto", "NaN"), "{text}");
    let runs = coapcc::networks::open_store_read_only(&store)
        .and_then(|s| coapcc::networks::dumbbell::store::run_count(&s))
        .unwrap();
    assert_eq!(runs, 0);
}
