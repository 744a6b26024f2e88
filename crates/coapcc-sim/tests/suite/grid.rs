//! The pCoCoA workloads on the grid: accounting that must balance, and the
//! behaviour that must hold whatever the model's details.

use coapcc_sim::grid::{self, Role, TraceKind};
use coapcc_sim::network::SimNetwork;
use coapcc_workload::AlgorithmSpec;

fn spec(period: f64, algorithm: &str) -> grid::RunSpec {
    let mut s = grid::RunSpec {
        network: Default::default(),
        coap: Default::default(),
        workload: Default::default(),
        algorithm: AlgorithmSpec {
            ack_timeout: (algorithm == "default").then_some(3.0),
            ..AlgorithmSpec::named(algorithm)
        },
        seed: 3,
    };
    s.workload.period_s = period;
    s.workload.duration_s = 300.0;
    s
}

/// Same spec and replication, same result; another replication differs.
#[test]
fn runs_are_pure_functions_of_spec_and_replication() {
    let s = spec(8.0, "cocoa-plus");
    let a = grid::Sim::run(&s, 0).unwrap();
    assert_eq!(a, grid::Sim::run(&s, 0).unwrap());
    assert_ne!(a, grid::Sim::run(&s, 1).unwrap());
}

/// At a light load (T = 64 s) nothing is congested: every request is sent,
/// carried and answered, almost always at the first transmission; the
/// server's own node and the border router run no client.
#[test]
fn light_load_is_carried_whole() {
    let s = spec(64.0, "default");
    let runs: Vec<_> = (0..3).map(|r| grid::Sim::run(&s, r).unwrap()).collect();
    let sum = grid::Summary::of("default", &s, &runs);
    assert_eq!(sum.clients, 34);
    // 34 × 95 B / 64 s = 50.47 B/s nominal
    assert!((sum.offered - 34.0 * 95.0 / 64.0).abs() < 1e-9);
    let rel = |a: f64, b: f64| (a - b).abs() / b;
    assert!(rel(sum.carried.mean, sum.actual_offered.mean) < 0.02);
    assert!(rel(sum.actual_offered.mean, sum.offered) < 0.1);
    assert!(sum.tx_per_transaction.mean < 1.02);
    assert_eq!(sum.app_drops.mean, 0.0);
    let r = &runs[0];
    assert_eq!(r.nodes[0].role, Role::Root);
    assert_eq!(r.nodes[2].role, Role::Server);
    assert_eq!(r.nodes[0].generated + r.nodes[2].generated, 0);
}

/// Every request generated is dropped at the client, sent, or still held
/// (at most the buffer's 4, the one in flight included); every exchange that
/// started has completed, failed or is the one in flight; the server carried
/// no more than was sent.
#[test]
fn client_accounting_balances_under_overload() {
    for alg in ["default", "pcocoa"] {
        let s = spec(0.5, alg);
        let r = grid::Sim::run(&s, 0).unwrap();
        let mut app_drops = 0;
        for n in r.nodes.iter().filter(|n| n.role == Role::Client) {
            let held = n.generated - n.app_drops - n.sent;
            assert!(held <= 4, "node {}: {held} held", n.node);
            let open = n.sent - n.completed - n.failed;
            assert!(open <= 1, "node {}: {open} exchanges open", n.node);
            assert!(n.carried <= n.sent);
            assert!(n.completed_transmissions >= n.completed);
            assert!(n.acks >= n.completed);
            app_drops += n.app_drops;
        }
        assert!(app_drops > 0, "{alg}: T = 0.5 s must overflow the buffers");
        assert!(r.conservation.holds());
    }
}

/// Bursty interferers send only while ON; the others keep their period.
#[test]
fn bursty_interferers_alternate() {
    let mut s = spec(14.0, "default");
    s.workload.kind = grid::WorkloadKind::Bursty;
    s.workload.on_s = 20.0;
    let r = grid::Sim::run(&s, 0).unwrap();
    let interferers: Vec<_> = r
        .nodes
        .iter()
        .filter(|n| n.role == Role::Interferer)
        .map(|n| n.node)
        .collect();
    assert_eq!(interferers, [2, 8, 15, 32, 34]);
    for n in &r.nodes {
        match n.role {
            Role::Interferer => assert!(n.generated > 10 && n.carried > 0),
            // 300 s at one request per 14 s: 21 or 22 ticks
            Role::Client => assert!((21..=22).contains(&n.generated)),
            _ => assert_eq!(n.generated, 0),
        }
    }
    let bad = grid::RunSpec {
        workload: grid::Workload {
            interferers: vec![3],
            ..s.workload.clone()
        },
        ..s.clone()
    };
    let e = grid::validate(&bad).unwrap_err().0;
    assert!(
        e.contains("workload.interferers: node 3 is not a client"),
        "{e}"
    );
}

/// The trace node records each exchange's first timer and its RTT sample.
#[test]
fn the_trace_node_records_rto_and_rtt() {
    let mut s = spec(16.0, "pcocoa");
    s.workload.trace_node = Some(36);
    let r = grid::Sim::run(&s, 0).unwrap();
    let rto = r.trace.iter().filter(|p| p.kind == TraceKind::Rto).count();
    let rtt = r.trace.iter().filter(|p| p.kind == TraceKind::Rtt).count();
    let n = &r.nodes[35];
    assert_eq!(rtt as u64, n.completed);
    assert_eq!(rto as u64, n.sent);
    assert!(r.trace.windows(2).all(|w| w[0].t <= w[1].t));
}

#[test]
fn invalid_specs_name_their_field() {
    let mut s = spec(10.0, "default");
    s.coap.request_size = 9; // a POST to `sense` is 10 bytes without payload
    assert!(grid::validate(&s)
        .unwrap_err()
        .0
        .contains("coap.request_size"));
    let mut s = spec(10.0, "tcp");
    s.algorithm = AlgorithmSpec::named("tcp");
    assert!(grid::validate(&s).unwrap_err().0.contains("TCP"));
    let mut s = spec(-1.0, "default");
    s.workload.period_s = -1.0;
    assert!(grid::validate(&s)
        .unwrap_err()
        .0
        .contains("workload.period_s"));
    let mut s = spec(10.0, "default");
    s.network.server = 99;
    assert!(grid::validate(&s).unwrap_err().0.contains("network.server"));
}
