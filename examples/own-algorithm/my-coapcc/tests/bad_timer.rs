//! An algorithm arming a timer no deadline can hold stops the run, or the
//! campaign, with a message naming the algorithm, the method and the value
//! (a test binary of its own: it installs the process's registry).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{mpsc, Once};
use std::time::Duration;

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

fn message(name: &str, shown: &str) -> String {
    format!(
        "algorithm `{name}`: `expire` armed a timer of {shown} s; a timer must be a number of \
         seconds greater than 0 and at most 1.8e10"
    )
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
        let panic = catch_unwind(AssertUnwindSafe(|| {
            coapcc::api::run(&source, &Overrides::default(), &options, &|| {})
        }))
        .expect_err("the run stops");
        let msg = panic.downcast_ref::<String>().cloned().unwrap_or_default();
        assert_eq!(msg, message(name, shown));
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
    let (done, finished) = mpsc::channel();
    let (f, s) = (file.clone(), store.clone());
    std::thread::spawn(move || {
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            coapcc::cli::campaign::run(&f, &s, Some(2), None, &Ceilings::DEFAULT, false)
        }));
        let _ = done.send(outcome.is_err());
    });
    let panicked = finished
        .recv_timeout(Duration::from_secs(120))
        .expect("the campaign stops");
    // The workers' panic (its message printed on stderr) ends the
    // campaign's scope of threads, which panics in turn.
    assert!(panicked);
    let runs = coapcc::networks::open_store_read_only(&store)
        .and_then(|s| coapcc::networks::dumbbell::store::run_count(&s))
        .unwrap();
    assert_eq!(runs, 0);
}
