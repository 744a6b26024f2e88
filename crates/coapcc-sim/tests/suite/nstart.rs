//! NSTART > 1 on the dumbbell (`[coap] nstart`): a client pipelines its
//! exchanges through its one algorithm state toward the server.
//!
//! The expected flow completion time of one uncongested client, by hand.
//! One round trip is the sum of 38 B at 60 kbit/s (5.067 ms), 200 ms,
//! 2 × U(10, 20) ms, 93 B at 30 kbit/s (d = 24.8 ms) and 400 ms: on average
//! RTT = 659.867 ms
//! (`testbed::one_client_takes_fifty_base_round_trips`). With NSTART = k the
//! k first requests leave together; the uplink spaces them 5.067 ms apart,
//! the downlink spaces their responses d apart (d > 5.067 ms, so the
//! downlink sets the spacing), so the response of slot j (0-based) arrives at
//! RTT + j·d. Each slot's next request leaves when its response arrives, so
//! each slot repeats with period RTT and keeps its offset j·d (requests and
//! responses d apart no longer queue). The 50 exchanges fill ⌈50/k⌉ rounds;
//! the last one is the ((50 − 1) mod k)-th slot of the last round:
//!
//!   FCT = ⌈50/k⌉ · RTT + ((50 − 1) mod k) · d
//!
//! k = 1: 50 RTT = 32.99 s; k = 2: 25 RTT + d = 16.52 s; k = 4: 13 RTT + d =
//! 8.60 s; k = 8: 7 RTT + d = 4.64 s.
//!
//! Tolerance: the path delays are the only randomness; the last exchange's
//! chain is ⌈50/k⌉ round trips, each with its own 2 × U(10, 20) ms (standard
//! deviation 4.1 ms per round trip, so ≤ 15 ms over 13 rounds), and the
//! order-keeping path can hold a packet behind an earlier one by up to 10 ms
//! per crossing. 4 ms per round trip (as the NSTART 1 test of `testbed`) plus
//! one d for the slot order covers both.

use crate::support;

use coapcc_link::dumbbell::Buffer;
use coapcc_link::errors::ErrorProfile;
use coapcc_sim::dumbbell::{self, validate, RunSpec, Scenario};
use coapcc_sim::network::SimNetwork;
use coapcc_sim::scenario::NetworkScenario;
use coapcc_workload::{AlgorithmSpec, WorkloadKind};
use support::{group, on_dumbbell};

/// Mean round trip of one uncongested client (see the module docs), s.
const RTT: f64 = 0.005_066_667 + 0.2 + 0.030 + 0.024_8 + 0.4;
/// Downlink serialisation of one 93-byte response, s.
const D: f64 = 0.024_8;

fn spec(algorithm: &str, clients: u32, kind: WorkloadKind, nstart: u32) -> RunSpec {
    let mut a = AlgorithmSpec::named(algorithm);
    if algorithm == "cocoa" {
        a.aging = Some(false);
    }
    let mut s = on_dumbbell(
        group(a, clients, kind),
        Buffer::Bytes(2500),
        ErrorProfile::None,
        42,
    );
    s.coap.nstart = nstart;
    s
}

/// The hand-derived FCT of one uncongested client with NSTART `k`.
fn expected_fct(k: u32) -> f64 {
    f64::from(50u32.div_ceil(k)) * RTT + f64::from(49 % k) * D
}

#[test]
fn one_client_finishes_in_ceil_fifty_over_k_round_trips() {
    for algorithm in ["default", "cocoa", "fasor"] {
        for k in [1, 2, 4, 8] {
            for replication in 0..3 {
                let r = dumbbell::Sim::run(
                    &spec(algorithm, 1, WorkloadKind::Continuous, k),
                    replication,
                )
                .unwrap();
                let c = &r.clients[0];
                let fct = c.fct.unwrap();
                let want = expected_fct(k);
                let rounds = f64::from(50u32.div_ceil(k));
                assert!(
                    (fct - want).abs() < 0.004 * rounds + D,
                    "{algorithm} k={k} rep {replication}: FCT {fct} s, expected {want} s"
                );
                assert_eq!((c.completed, c.failed), (50, 0));
                assert_eq!(c.retransmissions, 0, "{algorithm} k={k}");
                assert_eq!((r.uplink.packets, r.downlink.packets), (50, 50));
            }
        }
    }
}

#[test]
fn nstart_one_is_the_default_and_runs_as_before() {
    let mut s = spec("cocoa", 20, WorkloadKind::Random, 1);
    let explicit = dumbbell::Sim::run(&s, 2).unwrap();
    s.coap = Default::default();
    assert_eq!(s.coap.nstart, 1);
    assert_eq!(dumbbell::Sim::run(&s, 2).unwrap(), explicit);
    // Left out of the serialised spec, which stays as it was.
    let json = serde_json::to_string(&s.coap).unwrap();
    assert!(!json.contains("nstart"), "{json}");
    s.coap.nstart = 3;
    let json = serde_json::to_string(&s.coap).unwrap();
    assert!(json.contains("\"nstart\":3"), "{json}");
}

#[test]
fn pipelined_runs_conserve_packets_and_finish_every_exchange() {
    for kind in [WorkloadKind::Continuous, WorkloadKind::Random] {
        for (errors, buffer) in [
            (ErrorProfile::None, Buffer::Infinite),
            (ErrorProfile::High, Buffer::Bytes(2500)),
        ] {
            for algorithm in ["default", "cocoa", "fasor"] {
                let mut s = spec(algorithm, 30, kind, 4);
                s.network.errors = errors;
                s.network.buffer = buffer;
                let r = dumbbell::Sim::run(&s, 1).unwrap();
                let c = &r.conservation;
                assert!(c.holds(), "{algorithm} {kind:?} {errors:?}: {c:?}");
                let dropped = r.uplink.dropped_buffer
                    + r.uplink.dropped_error
                    + r.downlink.dropped_buffer
                    + r.downlink.dropped_error;
                assert_eq!(c.dropped, dropped);
                for cl in &r.clients {
                    assert!(cl.fct.is_some());
                    assert_eq!(cl.completed + cl.failed, 50, "{algorithm} {kind:?}");
                }
            }
        }
    }
}

#[test]
fn pipelining_shortens_a_random_client_too() {
    // Batches of 1–10 exchanges, a new device (fresh state) per batch: the
    // next batch waits for the last exchange of the current one.
    let fct = |k| {
        let r = dumbbell::Sim::run(&spec("cocoa", 1, WorkloadKind::Random, k), 0).unwrap();
        assert_eq!(r.clients[0].completed, 50);
        r.clients[0].fct.unwrap()
    };
    let (one, four) = (fct(1), fct(4));
    assert!(four < 0.5 * one, "NSTART 4: {four} s, NSTART 1: {one} s");
}

#[test]
fn a_bad_nstart_is_refused_naming_the_field() {
    for k in [0, 17, 1000] {
        let s = spec("default", 1, WorkloadKind::Continuous, k);
        let e = validate(&s).unwrap_err().0;
        assert!(e.starts_with("coap.nstart:") && e.contains("1..=16"), "{e}");
        assert!(dumbbell::Sim::run(&s, 0).is_err());
    }
    let s = spec("tcp", 1, WorkloadKind::Continuous, 2);
    let e = validate(&s).unwrap_err().0;
    assert!(e.starts_with("coap.nstart:") && e.contains("tcp"), "{e}");
    for k in [1, 16] {
        validate(&spec("default", 1, WorkloadKind::Continuous, k)).unwrap();
    }
}

#[test]
fn a_scenario_file_states_nstart_in_its_coap_table() {
    let file = |nstart: &str| {
        format!(
            "name = \"n\"\nclients = 2\n[coap]\nnstart = {nstart}\n\
             [[algorithm]]\nname = \"default\"\n"
        )
    };
    let s: Scenario = toml::from_str(&file("4")).unwrap();
    assert_eq!(s.coap.nstart, 4);
    s.validate().unwrap();
    let s: Scenario = toml::from_str(&file("0")).unwrap();
    assert!(s.validate().unwrap_err().0.starts_with("coap.nstart:"));
    for bad in ["-1", "\"two\"", "2.5"] {
        let e = toml::from_str::<Scenario>(&file(bad))
            .unwrap_err()
            .to_string();
        assert!(e.contains("nstart"), "{bad}: {e}");
    }
}
