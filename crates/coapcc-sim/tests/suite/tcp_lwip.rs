//! CoAP over lwIP's TCP in the dumbbell (docs/spec/transport-tcp-spec.md §3): the names
//! `tcp-lwip`, `tcp-lwip-backoff`, `tcp-lwip-cwnd`, `tcp-lwip-backoff-cwnd`
//! run wherever `tcp` does, both ends of every connection on lwIP, MSS 256
//! from the 296-byte MTU.

use crate::support;

use coapcc_link::dumbbell::{Buffer, Config};
use coapcc_link::errors::ErrorProfile;
use coapcc_link::time::{serialisation, Nanos};
use coapcc_sim::dumbbell::{self, Group, RunSpec, Tap, TcpTrace};
use coapcc_sim::network::{SimNetwork, Tapped};
use coapcc_workload::metrics::Summary;
use coapcc_workload::{AlgorithmSpec, Workload, WorkloadKind};
use support::{group, on_dumbbell};

const MS: Nanos = 1_000_000;
const LWIP: [&str; 4] = [
    "tcp-lwip",
    "tcp-lwip-backoff",
    "tcp-lwip-cwnd",
    "tcp-lwip-backoff-cwnd",
];

fn spec(
    name: &str,
    clients: u32,
    kind: WorkloadKind,
    buffer: Buffer,
    errors: ErrorProfile,
) -> RunSpec {
    on_dumbbell(
        group(AlgorithmSpec::named(name), clients, kind),
        buffer,
        errors,
        7,
    )
}

#[test]
fn one_continuous_lwip_client_takes_fifty_round_trips_exactly() {
    // lwIP's handshake ACK rides on the client's CSM, and the server writes
    // its CSM after reading the client's, so the server's CSM carries that
    // ACK; the client's (delayed) ACK of the server's CSM then rides on the
    // first request. Nothing waits ahead of the first request (unlike the
    // linux profile's 0.267 ms), so with the path fixed at 15 ms the FCT is
    // 50 × (6.4 + 200 + 15 + 15 + 27.733 + 400) ms = 33.206 666 650 s.
    let mut s = spec(
        "tcp-lwip",
        1,
        WorkloadKind::Continuous,
        Buffer::Bytes(2500),
        ErrorProfile::None,
    );
    s.network.path_delay_ms = [15.0, 15.0];
    let rtt =
        serialisation(48, 60_000) + 200 * MS + 30 * MS + serialisation(104, 30_000) + 400 * MS;
    let r = dumbbell::Sim::run(&s, 0).unwrap();
    let c = &r.clients[0];
    assert!(
        (c.fct.unwrap() - (50 * rtt) as f64 / 1e9).abs() < 1e-9,
        "{:?} vs {}",
        c.fct,
        50 * rtt
    );
    assert_eq!((c.completed, c.failed, c.retransmissions), (50, 0, 0));
    let t = c.tcp.as_ref().unwrap();
    assert_eq!(t.connections, 1);
}

#[derive(Default)]
struct Segments {
    up: Vec<(Nanos, usize, bool)>,
}

impl Tap for Segments {
    fn packet(&mut self, _: Nanos, _: u32, _: u32, _: &[u8]) {}
    fn tcp(&mut self, at: Nanos, _client: u32, what: TcpTrace<'_>) {
        if let TcpTrace::Sent {
            from_client: true,
            seg,
        } = what
        {
            up_push(&mut self.up, at, seg.wire_len(), seg.mss.is_some());
        }
    }
}

fn up_push(v: &mut Vec<(Nanos, usize, bool)>, at: Nanos, len: usize, syn: bool) {
    v.push((at, len, syn));
}

#[test]
fn the_lwip_handshake_has_no_separate_ack() {
    // Client → server: SYN (44 B, MSS option 256), then the CSM (2-byte frame,
    // 42 B) carrying the handshake's ACK at once, then requests (48 B).
    let s = spec(
        "tcp-lwip",
        1,
        WorkloadKind::Continuous,
        Buffer::Bytes(2500),
        ErrorProfile::None,
    );
    let mut tap = Segments::default();
    dumbbell::Sim::run_with_tap(&s, 0, &mut tap).unwrap();
    let sizes: Vec<usize> = tap.up.iter().take(3).map(|x| x.1).collect();
    assert_eq!(sizes, vec![44, 42, 48]);
    assert!(tap.up[0].2);
}

#[test]
fn every_lwip_name_runs_and_completes_under_errors() {
    for name in LWIP {
        for kind in [WorkloadKind::Continuous, WorkloadKind::Random] {
            let s = spec(name, 10, kind, Buffer::Bytes(2500), ErrorProfile::High);
            let r = dumbbell::Sim::run(&s, 0).unwrap();
            assert!(r.conservation.holds());
            for c in &r.clients {
                assert!(c.fct.is_some(), "{name} {kind:?}: a client did not finish");
                assert_eq!(c.completed + c.failed, 50);
                assert_eq!(c.unnecessary, c.tcp.as_ref().unwrap().unnecessary());
            }
            let sum = Summary::of(name, 0, std::slice::from_ref(&r));
            let t = sum.tcp.unwrap();
            assert!(t.client_retransmitted_segments + t.server_retransmitted_segments > 0);
            // lwIP's RTO is whole 500 ms ticks: every expired timer is.
            for c in &r.clients {
                let x = c.max_expired_timer * 2.0;
                assert!(
                    (x - x.round()).abs() < 1e-9,
                    "{name}: {}",
                    c.max_expired_timer
                );
            }
        }
    }
}

#[test]
fn the_backoff_variant_keeps_expired_timers_small() {
    // Over a few lossy replications, the largest timer that expired under
    // lwIP's shift table is larger than under ×2 / ×1.3 (docs/spec/transport-tcp-spec.md §3;
    // docs/spec/calibration-spec.md: "the back-off variant keeps the largest RTO far below
    // original lwIP's").
    let largest = |name: &str| -> f64 {
        (0..3)
            .map(|rep| {
                let s = spec(
                    name,
                    20,
                    WorkloadKind::Continuous,
                    Buffer::Bytes(2500),
                    ErrorProfile::High,
                );
                let r = dumbbell::Sim::run(&s, rep).unwrap();
                r.clients
                    .iter()
                    .map(|c| c.max_expired_timer)
                    .fold(0.0, f64::max)
            })
            .fold(0.0, f64::max)
    };
    let (table, backoff) = (largest("tcp-lwip"), largest("tcp-lwip-backoff"));
    assert!(table > backoff, "{table} vs {backoff}");
}

#[test]
fn lwip_runs_are_deterministic_and_mix_with_linux() {
    let s = RunSpec {
        network: Config {
            buffer: Buffer::Bytes(2500),
            errors: ErrorProfile::Medium,
            ..Config::default()
        },
        coap: Default::default(),
        groups: vec![
            Group {
                algorithm: AlgorithmSpec::named("tcp"),
                workload: Workload::default(),
                clients: 3,
            },
            Group {
                algorithm: AlgorithmSpec::named("tcp-lwip-backoff-cwnd"),
                workload: Workload {
                    kind: WorkloadKind::Random,
                    ..Workload::default()
                },
                clients: 3,
            },
        ],
        seed: 5,
    };
    let a = dumbbell::Sim::run(&s, 1).unwrap();
    let b = dumbbell::Sim::run(&s, 1).unwrap();
    assert_eq!(a, b);
    assert!(a.clients.iter().all(|c| c.fct.is_some()));
}
