//! CoAP over TCP in the testbed (docs/spec/transport-tcp-spec.md §1–2, docs/spec/testbed-spec.md §1–3)
//! against hand-derived physics: segment sizes, serialisation, delays, the
//! delayed ACK and Nagle's hold on the first request of a connection.
//!
//! `cargo test -p coapcc-sim --test suite tcp:: -- --ignored --nocapture print_trace`
//! prints the one-client trace of `docs/tcp-trace.md`.

use crate::support;

use coapcc_link::dumbbell::{Buffer, Config};
use coapcc_link::errors::ErrorProfile;
use coapcc_link::time::{serialisation, Nanos};
use coapcc_sim::dumbbell::{self, validate, Group, RunSpec, Tap, TcpNote, TcpTrace};
use coapcc_sim::network::{SimNetwork, Tapped};
use coapcc_tcp::{Flags, Segment};
use coapcc_workload::metrics::Summary;
use coapcc_workload::{AlgorithmSpec, WorkloadKind};
use support::{group, on_dumbbell};

const MS: Nanos = 1_000_000;

fn named(algorithm: &str, clients: u32, kind: WorkloadKind) -> Group {
    group(AlgorithmSpec::named(algorithm), clients, kind)
}

/// `tcp` with its timers firing exactly when due: the hand derivations below
/// count the 200 ms delayed ACK from the segment it waits for, where `tcp`
/// itself rounds every timer to Linux's timer wheel (4 ms jiffies, and the
/// wheel's buckets; tested in `coapcc-tcp`'s `tests/data.rs` and
/// `tests/handshake.rs`).
const TCP_EXACT: &str = "tcp-linux:er+frto+prr+oow+wscale+oowreset";

/// `tcp-linux49-debian9` with its timers firing exactly when due.
const DEBIAN9_EXACT: &str = "tcp-linux:sack+er+rack+tlp+frto+prr+oow+wscale+oowreset";

fn spec(clients: u32, kind: WorkloadKind, buffer: Buffer, errors: ErrorProfile) -> RunSpec {
    spec_of(TCP_EXACT, clients, kind, buffer, errors)
}

/// The TCP names whose timing the hand derivations below cover, with the
/// size of their SYN and SYN-ACK: `tcp` (SACK off) announces the MSS and the
/// window scale (NOP + option: 20 + 20 + 4 + 4), Debian 9's 4.9
/// SACK-permitted beside them (20 + 20 + 4 + 4 + 4), `tcp-newreno` only the
/// MSS (20 + 20 + 4).
const SYN_SIZES: [(&str, usize); 3] = [(TCP_EXACT, 48), ("tcp-newreno", 44), (DEBIAN9_EXACT, 52)];

fn spec_of(
    name: &str,
    clients: u32,
    kind: WorkloadKind,
    buffer: Buffer,
    errors: ErrorProfile,
) -> RunSpec {
    on_dumbbell(named(name, clients, kind), buffer, errors, 7)
}

/// The testbed with the router ↔ server path fixed at 15 ms each way (the
/// middle of its 10–20 ms range), so that times are exact.
fn fixed_path(mut s: RunSpec) -> RunSpec {
    s.network.path_delay_ms = [15.0, 15.0];
    s
}

fn up(bytes: usize) -> Nanos {
    serialisation(bytes, 60_000)
}
fn down(bytes: usize) -> Nanos {
    serialisation(bytes, 30_000)
}

/// One exchange on an open connection: the 8-byte request frame in a 48-byte
/// segment, 200 ms + 15 ms up, 15 ms + the 64-byte response frame in a
/// 104-byte segment, 400 ms down. The request carries the ACK of the previous
/// response and the response the ACK of the request: nothing else is sent.
fn exchange_rtt() -> Nanos {
    up(48) + 200 * MS + 15 * MS + 15 * MS + down(104) + 400 * MS
}

#[test]
fn tcp_and_the_lwip_names_validate() {
    let s = spec(
        1,
        WorkloadKind::Continuous,
        Buffer::Infinite,
        ErrorProfile::None,
    );
    assert_eq!(validate(&s), Ok(()));
    for name in [
        "tcp-lwip",
        "tcp-lwip-backoff",
        "tcp-lwip-cwnd",
        "tcp-lwip-backoff-cwnd",
    ] {
        let mut lwip = s.clone();
        lwip.groups[0].algorithm = AlgorithmSpec::named(name);
        assert_eq!(validate(&lwip), Ok(()), "{name}");
        lwip.groups[0].algorithm.aging = Some(true);
        let e = validate(&lwip).unwrap_err().0;
        assert!(
            e.contains(name) && e.contains("`aging` does not apply"),
            "{e}"
        );
    }
    let mut other = s.clone();
    other.groups[0].algorithm = AlgorithmSpec::named("tcp-lwip-foo");
    let e = validate(&other).unwrap_err().0;
    assert!(
        e.contains("unknown") && e.contains("tcp-lwip-backoff-cwnd"),
        "{e}"
    );
    let mut capped = s.clone();
    capped.groups[0].algorithm.cap = Some(60.0);
    let e = validate(&capped).unwrap_err().0;
    assert!(e.contains("`cap` does not apply"), "{e}");
    let mut tiny = s;
    tiny.network.mtu = 40;
    assert!(validate(&tiny).is_err());
}

#[test]
fn one_continuous_client_takes_fifty_tcp_round_trips() {
    // Exact with a fixed path: 50 × (6.4 + 215 + 15 + 27.733 + 400) ms, plus
    // 0.267 ms that the first request waits in the uplink behind the client's
    // delayed ACK of the server's CSM (see `first_response_of_a_connection`).
    let r = dumbbell::Sim::run(
        &fixed_path(spec(
            1,
            WorkloadKind::Continuous,
            Buffer::Bytes(2500),
            ErrorProfile::None,
        )),
        0,
    )
    .unwrap();
    let c = &r.clients[0];
    // `tcp`'s 48-byte SYNs: the CSM exchange completes at 1500.8 ms.
    let behind_ack = first_response_of_a_connection(48) - exchange_rtt() - 1_500_800_000;
    assert_eq!(behind_ack, 266_666);
    let expected = 50 * exchange_rtt() + behind_ack;
    assert_eq!(expected, 33_206_933_316);
    assert!(
        (c.fct.unwrap() - expected as f64 / 1e9).abs() < 1e-9,
        "{:?}",
        c.fct
    );
    assert_eq!((c.completed, c.failed, c.retransmissions), (50, 0, 0));
    assert_eq!(r.histograms[0], vec![50]);
    assert!((c.rtt_sum - expected as f64 / 1e9).abs() < 1e-6);

    // With the jittered path (2 × U(10, 20) ms per exchange) the FCT stays
    // within 4 standard deviations (4 × 10 × 2.9 ms) of the same mean, which
    // is also the published 33.208 s (docs/spec/calibration-spec.md §1).
    for rep in 0..5 {
        let r = dumbbell::Sim::run(
            &spec(
                1,
                WorkloadKind::Continuous,
                Buffer::Bytes(2500),
                ErrorProfile::None,
            ),
            rep,
        )
        .unwrap();
        let fct = r.clients[0].fct.unwrap();
        assert!((fct - 33.2067).abs() < 0.116, "{fct}");
        assert!((fct - 33.208).abs() < 0.12, "{fct}");
    }
}

/// Records every segment sent, with its direction and time.
#[derive(Default)]
struct Segments {
    sent: Vec<(Nanos, bool, Segment)>,
    arrived: Vec<(Nanos, bool, Segment)>,
    notes: Vec<(Nanos, TcpNote)>,
}

impl Tap for Segments {
    fn packet(&mut self, _: Nanos, _: u32, _: u32, _: &[u8]) {
        panic!("no UDP packets in a TCP-only run");
    }
    fn tcp(&mut self, at: Nanos, _client: u32, what: TcpTrace<'_>) {
        match what {
            TcpTrace::Sent { from_client, seg } => self.sent.push((at, from_client, seg.clone())),
            TcpTrace::Arrived { to_server, seg } => self.arrived.push((at, to_server, seg.clone())),
            TcpTrace::Note(n) => self.notes.push((at, n)),
        }
    }
}

#[test]
fn wire_sizes_are_those_of_the_real_segments() {
    for (name, syn) in SYN_SIZES {
        wire_sizes_of(name, syn);
    }
}

fn wire_sizes_of(name: &str, syn: usize) {
    let mut tap = Segments::default();
    let r = dumbbell::Sim::run_with_tap(
        &spec_of(
            name,
            1,
            WorkloadKind::Continuous,
            Buffer::Bytes(2500),
            ErrorProfile::None,
        ),
        0,
        &mut tap,
    )
    .unwrap();
    let kinds = |from_client: bool| -> Vec<(bool, usize, usize)> {
        tap.sent
            .iter()
            .filter(|s| s.1 == from_client)
            .map(|(_, _, s)| (s.flags.contains(Flags::SYN), s.payload.len(), s.wire_len()))
            .collect()
    };
    let client = kinds(true);
    let server = kinds(false);
    // SYN with the MSS option (and SACK-permitted with Debian 9's defaults).
    assert_eq!(client[0], (true, 0, syn));
    assert_eq!(server[0], (true, 0, syn));
    // The client's CSM (`00 E1` is 2 bytes, RFC 8323 default CSM): 42 bytes.
    assert!(client.contains(&(false, 2, 42)));
    assert!(server.contains(&(false, 2, 42)));
    // 50 GETs of 8 bytes (2-byte header, 6-byte Uri-Path) and 50 2.05
    // responses of 64 bytes (3-byte header: Len 13 + 1 extended byte, code,
    // marker, 60 bytes of payload).
    assert_eq!(client.iter().filter(|k| **k == (false, 8, 48)).count(), 50);
    assert_eq!(
        server.iter().filter(|k| **k == (false, 64, 104)).count(),
        50
    );
    // Everything else is a pure ACK of 40 bytes.
    for k in client.iter().chain(&server) {
        assert!(
            matches!(
                k,
                (false, 2, 42) | (false, 8, 48) | (false, 64, 104) | (false, 0, 40)
            ) || *k == (true, 0, syn),
            "{k:?}"
        );
    }
    // The links carried exactly these sizes (nothing lost, nothing left).
    let bytes = |from_client: bool| -> u64 {
        tap.sent
            .iter()
            .filter(|s| s.1 == from_client)
            .map(|s| s.2.wire_len() as u64)
            .sum()
    };
    assert_eq!(r.uplink.bytes, bytes(true));
    assert_eq!(r.downlink.bytes, bytes(false));
    assert_eq!(r.uplink.packets as usize, client.len());
    assert_eq!(r.conservation.in_flight, 0);
}

#[test]
fn continuous_timing_starts_after_the_csm_exchange() {
    // 48-byte SYNs take 4 · 8 bits longer at 60 and at 30 kbit/s than
    // 44-byte ones: 0.533 + 1.067 = 1.6 ms later; 52-byte ones twice that,
    // 3.2 ms later.
    for (name, exchanged_at) in [
        ("tcp-newreno", 1_499_200_000),
        (TCP_EXACT, 1_500_800_000),
        (DEBIAN9_EXACT, 1_502_400_000),
    ] {
        continuous_timing_of(name, exchanged_at);
    }
}

fn continuous_timing_of(name: &str, exchanged_at: Nanos) {
    let mut tap = Segments::default();
    let r = dumbbell::Sim::run_with_tap(
        &fixed_path(spec_of(
            name,
            1,
            WorkloadKind::Continuous,
            Buffer::Bytes(2500),
            ErrorProfile::None,
        )),
        0,
        &mut tap,
    )
    .unwrap();
    let exchanged = tap
        .notes
        .iter()
        .find(|n| n.1 == TcpNote::CsmExchanged)
        .unwrap()
        .0;
    let first_request = tap
        .sent
        .iter()
        .find(|s| s.1 && s.2.payload.len() == 8)
        .unwrap()
        .0;
    // The request leaves the moment the CSM exchange completes…
    assert_eq!(first_request, exchanged);
    // …which is when the server's delayed ACK of the client's CSM arrives:
    // 1.4992 s after a 44-byte SYN (derivation in `random_batches_pay_…`
    // below).
    assert_eq!(exchanged, exchanged_at);
    let end = r.duration;
    let behind_ack = 266_666;
    assert!((end - (first_request + behind_ack + 50 * exchange_rtt()) as f64 / 1e9).abs() < 1e-9);
}

/// `tcp-linux6` (quick-ACK mode, adaptive delayed ACK, 52-byte SYNs: MSS,
/// SACK-permitted and window scale), one continuous client, path fixed at
/// 15 ms, derived by hand:
/// - SYN-ACK at the client at up(52) + 215 + 15 + down(52) + 400 = 650.8 ms;
///   its ACK (40 B) and CSM (42 B) leave back to back;
/// - the ACK reaches the server at 650.8 + 5.333 + 215 = 871.133 ms: the
///   server's CSM leaves; the client's CSM arrives 5.6 ms later, the
///   server's first data: quick-ACK mode, a pure ACK at once, which follows
///   the CSM on the downlink (15 + 11.2 + 10.667 + 400 ms): at the client at
///   1308.0 ms, and Nagle releases the request (1500.8 ms with the constant
///   200 ms timer and 48-byte SYNs of `tcp`);
/// - the client answered the server's CSM (its first data, 1297.333 ms)
///   with its own quick ACK, gone from the uplink by 1302.667 ms; its request
///   leaves 10.667 ms after that CSM, within ato = 40 ms: the client is now
///   interactive (ping-pong) and sends no more quick ACKs;
/// - the first request finds the server in quick-ACK mode: its pure ACK
///   goes down just ahead of the response (+10.667 ms); answering at once
///   makes the server interactive, so the 49 later exchanges are the plain
///   `exchange_rtt` (request and response carrying each other's ACKs).
#[test]
fn continuous_timing_with_quick_acks() {
    let mut tap = Segments::default();
    let r = dumbbell::Sim::run_with_tap(
        &fixed_path(spec_of(
            "tcp-linux6",
            1,
            WorkloadKind::Continuous,
            Buffer::Bytes(2500),
            ErrorProfile::None,
        )),
        0,
        &mut tap,
    )
    .unwrap();
    let syn_ack_at_client = up(52) + 215 * MS + 15 * MS + down(52) + 400 * MS;
    let exchanged_at =
        syn_ack_at_client + up(40) + 215 * MS + 15 * MS + down(42) + down(40) + 400 * MS;
    assert!(exchanged_at.abs_diff(1_308_000_000) < 2, "{exchanged_at}");
    let exchanged = tap
        .notes
        .iter()
        .find(|n| n.1 == TcpNote::CsmExchanged)
        .unwrap()
        .0;
    assert_eq!(exchanged, exchanged_at);
    let first_request = tap
        .sent
        .iter()
        .find(|s| s.1 && s.2.payload.len() == 8)
        .unwrap()
        .0;
    assert_eq!(first_request, exchanged);
    // Pure ACKs: the server's of the client's CSM and of the first request,
    // the client's of the server's CSM; then none until the last response.
    let pure = |from_client: bool| {
        tap.sent
            .iter()
            .filter(|s| s.1 == from_client && s.2.payload.is_empty())
            .filter(|s| !s.2.flags.contains(Flags::SYN))
            .map(|s| s.0)
            .collect::<Vec<_>>()
    };
    let server = pure(false);
    assert_eq!(server.len(), 2, "{server:?}");
    assert!(server[1] > first_request && server[1] < first_request + exchange_rtt());
    let client = pure(true);
    // The handshake's ACK and the quick ACK of the server's CSM (the run
    // ends with the last response).
    assert_eq!(client, [syn_ack_at_client, exchanged - down(40)]);
    let end = first_request + down(40) + 50 * exchange_rtt();
    assert!(
        (r.duration - end as f64 / 1e9).abs() < 1e-9,
        "{} vs {end}",
        r.duration
    );
}

/// Time from a connection's SYN entering an idle uplink to its first response,
/// with the path fixed at 15 ms:
/// - SYN (44 B) up; SYN-ACK (44 B) down: at the client after 647.6 ms
///   (the times below are for 44-byte SYNs; every 4 bytes more, as `tcp`'s
///   window-scale option, add 1.6 ms);
/// - the client sends its ACK (40 B), then its CSM (42 B), and writes the request
///   at once: Nagle holds it behind the unacknowledged CSM;
/// - the server writes its CSM when the ACK completes its handshake (it reaches
///   the client at 1294.133 ms); the client's CSM arrives 5.6 ms after the ACK
///   and is acknowledged only by the server's 200 ms delayed ACK, at the client
///   at 1499.2 ms;
/// - the client's own delayed ACK of the server's CSM left at 1494.133 ms and
///   occupies the uplink until 1499.467 ms, so the request is serialised from
///   then: its response arrives 6.4 + 215 + 15 + 27.733 + 400 ms later.
fn first_response_of_a_connection(syn: usize) -> Nanos {
    let syn_ack_at_client = up(syn) + 215 * MS + 15 * MS + down(syn) + 400 * MS;
    let csm_sent = syn_ack_at_client + up(40) + up(42);
    let server_ack_at_client = csm_sent + 215 * MS + 200 * MS + 15 * MS + down(40) + 400 * MS;
    let server_csm_at_client =
        syn_ack_at_client + up(40) + 215 * MS + 15 * MS + down(42) + 400 * MS;
    let client_ack_done = server_csm_at_client + 200 * MS + up(40);
    assert!(client_ack_done > server_ack_at_client);
    client_ack_done + exchange_rtt()
}

#[test]
fn random_batches_pay_handshake_csm_and_nagle_every_time() {
    for (name, syn) in SYN_SIZES {
        random_batches_of(name, syn);
    }
}

fn random_batches_of(name: &str, syn: usize) {
    let s = fixed_path(spec_of(
        name,
        1,
        WorkloadKind::Random,
        Buffer::Bytes(2500),
        ErrorProfile::None,
    ));
    for rep in 0..4 {
        let mut tap = Segments::default();
        let r = dumbbell::Sim::run_with_tap(&s, rep, &mut tap).unwrap();
        let c = &r.clients[0];
        let tcp = c.tcp.as_ref().unwrap();
        let batches = u64::from(tcp.connections);
        assert!((5..=50).contains(&batches));
        // Between batches the client's FIN (40 B) is serialised before the new
        // SYN, and the server's FIN (40 B) reaches the downlink 4.8 ms before
        // the new SYN-ACK: 5.333 + 4.8 ms more per later batch (with 48-byte
        // SYNs 5.333 + 4.267 ms, with 52-byte ones 5.333 + 3.733 ms).
        let between = up(40) + (down(40) - up(syn));
        let derived = match syn {
            44 => 10_133_333,
            48 => 9_600_000,
            _ => 9_066_667,
        };
        assert_eq!(between, derived);
        let expected = batches * first_response_of_a_connection(syn)
            + (batches - 1) * between
            + (50 - batches) * exchange_rtt();
        let fct = c.fct.unwrap();
        assert!(
            (fct - expected as f64 / 1e9).abs() < 1e-6,
            "{batches} batches: {fct} vs {expected}"
        );
        // Timing starts at the first SYN.
        assert_eq!(tap.sent[0].0, 0);
        assert!(tap.sent[0].2.flags.contains(Flags::SYN));
        // Nagle: each first request was written when the handshake completed
        // and left one delayed-ACK round later.
        let written: Vec<Nanos> = tap
            .notes
            .windows(2)
            .filter(|w| w[0].1 == TcpNote::CsmWritten && w[1].1 == TcpNote::RequestWritten)
            .map(|w| w[1].0)
            .collect();
        assert_eq!(written.len() as u64, batches);
        for w in written {
            let left = tap
                .sent
                .iter()
                .find(|s| s.0 >= w && s.1 && s.2.payload.len() == 8)
                .unwrap()
                .0;
            let held = left - w;
            assert!(held > 850 * MS && held < 860 * MS, "held {held}");
        }
        assert_eq!(c.completed, 50);
        assert_eq!(r.histograms[0], vec![50]);
        assert_eq!(tcp.unnecessary(), 0);
    }
}

#[test]
fn random_tcp_clients_are_much_slower_than_udp_ones() {
    let mut s = spec(
        1,
        WorkloadKind::Random,
        Buffer::Bytes(2500),
        ErrorProfile::None,
    );
    let tcp: Vec<_> = (0..5).map(|r| dumbbell::Sim::run(&s, r).unwrap()).collect();
    s.groups[0].algorithm = AlgorithmSpec::named("default");
    let udp: Vec<_> = (0..5).map(|r| dumbbell::Sim::run(&s, r).unwrap()).collect();
    let (t, u) = (Summary::of("tcp", 0, &tcp), Summary::of("udp", 0, &udp));
    // Several batches of about 1.5 s of set-up each (docs/spec/calibration-spec.md §1:
    // 47.093 s against 33.003 s).
    assert!(t.fct.min > u.fct.max + 8.0, "{:?} {:?}", t.fct, u.fct);
    assert!(t.tcp.as_ref().unwrap().connections >= 25);
    assert!(u.tcp.is_none());
}

#[test]
fn lossy_runs_complete_and_count_unnecessary_copies_by_kind() {
    for kind in [WorkloadKind::Continuous, WorkloadKind::Random] {
        let s = spec(10, kind, Buffer::Bytes(2500), ErrorProfile::High);
        let r = dumbbell::Sim::run(&s, 0).unwrap();
        // Conservation is asserted inside the run; it must also balance here.
        assert!(r.conservation.holds());
        assert!(r.uplink.dropped_error + r.downlink.dropped_error > 0);
        let mut all = coapcc_workload::tcp_metrics::TcpRecord::default();
        for c in &r.clients {
            assert!(c.fct.is_some(), "{kind:?}: a client did not finish");
            assert_eq!(c.completed + c.failed, 50);
            let t = c.tcp.as_ref().unwrap();
            assert_eq!(c.unnecessary, t.unnecessary());
            all.add(t);
        }
        assert!(all.client_retransmitted_segments + all.server_retransmitted_segments > 0);
        // Losses make some exchanges need more than one transmission.
        assert!(r.histograms[0].len() > 1, "{:?}", r.histograms[0]);
        assert_eq!(r.histograms[0].iter().sum::<u64>(), 500);
        let s = Summary::of("tcp", 0, std::slice::from_ref(&r));
        assert_eq!(s.tcp.as_ref(), Some(&all));
        if kind == WorkloadKind::Random {
            assert!(all.connections > 10);
        }
    }
}

#[test]
fn a_high_error_run_sees_every_kind_of_copy() {
    // Summed over a few replications, each kind of unnecessary copy appears.
    let s = spec(
        10,
        WorkloadKind::Random,
        Buffer::Bytes(2500),
        ErrorProfile::High,
    );
    let runs: Vec<_> = (0..4).map(|r| dumbbell::Sim::run(&s, r).unwrap()).collect();
    let t = Summary::of("tcp", 0, &runs).tcp.unwrap();
    assert!(t.unnecessary_requests > 0, "{t:?}");
    assert!(t.unnecessary_responses > 0, "{t:?}");
    assert!(
        t.unnecessary_syn + t.unnecessary_synack + t.unnecessary_csm > 0,
        "{t:?}"
    );
    assert!(t.syn_retransmissions > 0, "{t:?}");
    let down_unn: u64 = runs.iter().map(|r| r.downlink.unnecessary_bytes).sum();
    assert!(down_unn > 0);
}

#[test]
fn runs_are_deterministic() {
    let s = spec(
        20,
        WorkloadKind::Random,
        Buffer::Bytes(2500),
        ErrorProfile::Medium,
    );
    let a = dumbbell::Sim::run(&s, 3).unwrap();
    let b = dumbbell::Sim::run(&s, 3).unwrap();
    assert_eq!(a, b);
    let c = dumbbell::Sim::run(&s, 4).unwrap();
    assert_ne!(a.clients, c.clients);
}

#[test]
fn udp_and_tcp_clients_share_one_run() {
    let s = RunSpec {
        network: Config {
            buffer: Buffer::Bytes(2500),
            ..Config::default()
        },
        coap: Default::default(),
        groups: vec![
            named("default", 3, WorkloadKind::Continuous),
            named("tcp", 2, WorkloadKind::Continuous),
            named("tcp", 2, WorkloadKind::Random),
        ],
        seed: 11,
    };
    let r = dumbbell::Sim::run(&s, 0).unwrap();
    let groups: Vec<u32> = r.clients.iter().map(|c| c.group).collect();
    assert_eq!(groups, vec![0, 0, 0, 1, 1, 2, 2]);
    for c in &r.clients {
        assert!(c.fct.is_some());
        assert_eq!(c.completed, 50);
        assert_eq!(c.tcp.is_some(), c.group > 0);
    }
    assert_eq!(r.histograms[0].iter().sum::<u64>(), 150);
    assert_eq!(r.histograms[1].iter().sum::<u64>(), 100);
    assert_eq!(r.histograms[2].iter().sum::<u64>(), 100);
    // UDP clients: 38-byte requests; TCP: 48-byte segments; all on one uplink.
    assert!(r.uplink.bytes > 150 * 38 + 200 * 48);
}

/// Prints a one-client random-workload trace (docs/tcp-trace.md).
#[test]
#[ignore]
fn print_trace() {
    struct Print;
    impl Tap for Print {
        fn packet(&mut self, _: Nanos, _: u32, _: u32, _: &[u8]) {}
        fn tcp(&mut self, at: Nanos, _client: u32, what: TcpTrace<'_>) {
            let t = at as f64 / 1e9;
            let kind = |s: &Segment, from_client: bool| match s.payload.len() {
                0 => "",
                2 => " (CSM)",
                8 if from_client => " (GET /sense)",
                64 => " (2.05 Content)",
                _ => " (data)",
            };
            match what {
                TcpTrace::Sent { from_client, seg } => println!(
                    "| {t:9.6} | {} sends | {seg:?}{} | {} B |",
                    if from_client { "client" } else { "server" },
                    kind(seg, from_client),
                    seg.wire_len()
                ),
                TcpTrace::Arrived { to_server, seg } => println!(
                    "| {t:9.6} | {} receives | {seg:?}{} | |",
                    if to_server { "server" } else { "client" },
                    kind(seg, to_server),
                ),
                TcpTrace::Note(n) => println!("| {t:9.6} | app | {n:?} | |"),
            }
        }
    }
    let mut s = fixed_path(spec(
        1,
        WorkloadKind::Random,
        Buffer::Bytes(2500),
        ErrorProfile::None,
    ));
    s.groups[0].workload.exchanges = 3;
    s.groups[0].workload.batch = [2, 2];
    let r = dumbbell::Sim::run_with_tap(&s, 0, &mut Print).unwrap();
    println!("FCT {:?}", r.clients[0].fct);
}

/// Every SYN a client sends: (time, client).
#[derive(Default)]
struct Syns(Vec<(Nanos, u32)>);

impl Tap for Syns {
    fn packet(&mut self, _: Nanos, _: u32, _: u32, _: &[u8]) {}
    fn tcp(&mut self, at: Nanos, client: u32, what: TcpTrace<'_>) {
        if let TcpTrace::Sent {
            from_client: true,
            seg,
        } = what
        {
            if seg.flags.contains(Flags::SYN) {
                self.0.push((at, client));
            }
        }
    }
}

/// The first instant any client resends its SYN, and the clients that do
/// then, in the order they send it.
fn first_syn_resends(name: &str) -> (Nanos, Vec<u32>) {
    let mut tap = Syns::default();
    dumbbell::Sim::run_with_tap(
        &spec_of(
            name,
            100,
            WorkloadKind::Continuous,
            Buffer::Bytes(2500),
            ErrorProfile::None,
        ),
        0,
        &mut tap,
    )
    .unwrap();
    let mut first = std::collections::HashSet::new();
    let resends: Vec<(Nanos, u32)> = tap
        .0
        .into_iter()
        .filter(|&(_, c)| !first.insert(c))
        .collect();
    let at = resends.first().expect("some SYN is resent").0;
    (
        at,
        resends
            .iter()
            .take_while(|r| r.0 == at)
            .map(|r| r.1)
            .collect(),
    )
}

/// Linux's timer wheel runs a bucket's timers last armed first
/// (`docs/decisions/tcp-choices.md`, "Timers of one bucket, last armed first"), as
/// the kernel check's captures show: 100 clients send their SYNs at time 0
/// in index order, every SYN timer (1 s) waits in the same level-1 bucket,
/// and the clients whose SYN the 2500-byte buffer dropped resend theirs at
/// its end (1.024 s) from the highest index down. Off the wheel, timers due
/// together run in the order they were armed.
#[test]
fn syn_timers_of_one_bucket_run_last_armed_first() {
    let (at, wheel) = first_syn_resends("tcp-linux6");
    assert_eq!(at, 1024 * MS);
    assert!(wheel.len() >= 10, "{wheel:?}");
    assert!(wheel.windows(2).all(|w| w[0] > w[1]), "{wheel:?}");
    let (at, exact) = first_syn_resends(
        "tcp-linux:sack+er+rack+tlp+frto+prr+oow+quickack+ato+rto1s+syn6+tlp6+tlp1+wscale",
    );
    assert_eq!(at, 1000 * MS);
    assert!(exact.len() >= 10, "{exact:?}");
    assert!(exact.windows(2).all(|w| w[0] < w[1]), "{exact:?}");
}
