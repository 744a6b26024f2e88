//! `tcp-newreno` is the `linux` profile as it was before model 3 (NewReno,
//! no SACK, no tail loss probe, no RACK, no F-RTO, no PRR): its runs must
//! stay bit-identical to the values recorded with that model. Each case's
//! per-replication results are serialised to JSON; the file
//! `tests/data/tcp_newreno/<case>.txt`, recorded from the `tcp` of model 2,
//! holds the 64-bit FNV-1a hash of that JSON on its first line and a
//! readable summary after it, and both must match (`RECORD_TCP_NEWRENO=1`
//! rewrites the files). They were recorded again once, when model 3's other
//! two changes met this one: every result gained the `mismatched_responses`
//! count (the error-free cases differed by that key alone, every figure
//! equal), and the link errors' sojourns became clamped (the two
//! high-error cases run on that changed network). Model 4 recorded them
//! once more when every TCP record gained the `loss_probes`,
//! `spurious_rtos` and `dsacks_received` counts, all zero here (the
//! summaries differ by those keys alone).

use crate::support;

use coapcc_link::dumbbell::Buffer;
use coapcc_link::errors::ErrorProfile;
use coapcc_sim::dumbbell::{self, RunSpec};
use coapcc_sim::network::SimNetwork;
use coapcc_sim::star;
use coapcc_workload::metrics::Summary;
use coapcc_workload::{AlgorithmSpec, WorkloadKind};
use support::{group, on_dumbbell};

/// The name under test (model 2 recorded these runs under `tcp`), labelled
/// `tcp` so that the results carry the recorded label.
fn newreno() -> AlgorithmSpec {
    AlgorithmSpec {
        name: "tcp-newreno".into(),
        label: Some("tcp".into()),
        ..AlgorithmSpec::default()
    }
}

fn spec(
    clients: u32,
    kind: WorkloadKind,
    buffer: Buffer,
    errors: ErrorProfile,
    seed: u64,
) -> RunSpec {
    on_dumbbell(group(newreno(), clients, kind), buffer, errors, seed)
}

/// 64-bit FNV-1a.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn check(case: &str, full_json: &str, summary_json: &str) {
    let path = format!(
        "{}/tests/data/tcp_newreno/{case}.txt",
        env!("CARGO_MANIFEST_DIR")
    );
    let now = format!("{:016x}\n{summary_json}\n", fnv(full_json.as_bytes()));
    if std::env::var_os("RECORD_TCP_NEWRENO").is_some() {
        std::fs::write(&path, &now).unwrap();
        return;
    }
    let recorded = std::fs::read_to_string(&path).unwrap();
    assert!(
        recorded == now,
        "{case}: tcp-newreno differs from the recorded model-2 run:\n{now}"
    );
}

fn dumbbell(case: &str, s: &RunSpec, replications: u32) {
    let runs: Vec<_> = (0..replications)
        .map(|r| dumbbell::Sim::run(s, r).unwrap())
        .collect();
    let summary = Summary::of("tcp", 0, &runs);
    check(
        case,
        &serde_json::to_string(&runs).unwrap(),
        &serde_json::to_string_pretty(&summary).unwrap(),
    );
}

#[test]
fn fifty_continuous_clients_small_buffer() {
    let s = spec(
        50,
        WorkloadKind::Continuous,
        Buffer::Bytes(2500),
        ErrorProfile::None,
        1,
    );
    dumbbell("continuous-50-2500", &s, 2);
}

#[test]
fn hundred_continuous_clients_small_buffer() {
    let s = spec(
        100,
        WorkloadKind::Continuous,
        Buffer::Bytes(2500),
        ErrorProfile::None,
        1,
    );
    dumbbell("continuous-100-2500", &s, 1);
}

#[test]
fn random_clients_high_errors() {
    let s = spec(
        10,
        WorkloadKind::Random,
        Buffer::Bytes(2500),
        ErrorProfile::High,
        3,
    );
    dumbbell("random-10-high", &s, 2);
}

#[test]
fn continuous_clients_high_errors() {
    let s = spec(
        10,
        WorkloadKind::Continuous,
        Buffer::Infinite,
        ErrorProfile::High,
        5,
    );
    dumbbell("continuous-10-inf-high", &s, 2);
}

#[test]
fn overloaded_star() {
    let mut s = star::RunSpec {
        network: Default::default(),
        workload: Default::default(),
        algorithm: newreno(),
        seed: 5,
    };
    s.network.stations = 40;
    s.workload.writes = 40;
    let r = star::Sim::run(&s, 0).unwrap();
    let headline = (
        r.goodput_bps,
        r.events,
        r.stations.iter().map(|s| s.timeouts).sum::<u64>(),
        r.stations
            .iter()
            .map(|s| s.retransmitted_segments)
            .sum::<u64>(),
    );
    check(
        "star-40",
        &serde_json::to_string(&r).unwrap(),
        &serde_json::to_string(&headline).unwrap(),
    );
}
