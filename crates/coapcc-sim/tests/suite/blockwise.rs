//! Block-wise transfers on the dumbbell (`workload.kind = "blockwise"`,
//! RFC 7959): each block one Confirmable exchange, one at a time.
//!
//! Timings by hand, on the default dumbbell with a fixed 10 ms router ↔
//! server path and the `default` algorithm (no marking options), 1000 bytes
//! in 128-byte blocks: ⌈1000 / 128⌉ = 8 blocks, the last of 104 bytes.
//!
//! Download: a request is the 4-byte header, Uri-Path `sense` (6 bytes)
//! and Block2 (2 bytes: NUM ≤ 7 fits one value byte): 12 bytes, 40 on the
//! wire, 40 × 8 / 60 000 = 5.333 ms on the uplink. A response is the
//! header, Block2 (3 bytes: its number 23 needs an extended delta byte),
//! the payload marker and the block: 136 bytes (164 on the wire, 43.733 ms
//! on the 30 kbit/s downlink), the last 112 (140, 37.333 ms). A round
//! trip adds 200 + 10 + 10 + 400 ms: 669.067 ms, the last 662.667 ms.
//!
//! Upload: a request is the header, Uri-Path (6), Block1 (3), the marker
//! and the block: 142 bytes (170 on the wire, 22.667 ms), the last 118
//! (146, 19.467 ms); a response (2.31 or 2.04) the header and Block1: 7
//! bytes (35, 9.333 ms): 652 ms a round trip, the last 648.8 ms.

use crate::support;

use coapcc_link::dumbbell::Buffer;
use coapcc_link::errors::ErrorProfile;
use coapcc_sim::dumbbell::{self, validate, RunSpec};
use coapcc_sim::network::SimNetwork;
use coapcc_workload::{AlgorithmSpec, TransferDirection, WorkloadKind};
use support::{group, on_dumbbell};

const FIXED: f64 = 0.200 + 0.010 + 0.010 + 0.400;

fn spec(
    algorithm: &str,
    clients: u32,
    direction: TransferDirection,
    size: u32,
    block: u32,
    transfers: u32,
) -> RunSpec {
    let mut g = group(
        AlgorithmSpec::named(algorithm),
        clients,
        WorkloadKind::Blockwise,
    );
    g.workload.exchanges = transfers;
    g.workload.direction = Some(direction);
    g.workload.size = Some(size);
    g.workload.block_size = Some(block);
    let mut s = on_dumbbell(g, Buffer::Infinite, ErrorProfile::None, 7959);
    s.network.path_delay_ms = [10.0, 10.0];
    s.coap.max_retransmit = 20;
    s
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-6
}

fn wire(bytes: f64, bps: f64) -> f64 {
    (bytes + 28.0) * 8.0 / bps
}

#[test]
fn a_download_takes_one_round_trip_a_block() {
    let rtt = wire(12.0, 60e3) + FIXED + wire(136.0, 30e3);
    let last = wire(12.0, 60e3) + FIXED + wire(112.0, 30e3);
    let want = 7.0 * rtt + last;
    assert!(close(want, 5.346_133_333), "{want}");
    let r = dumbbell::Sim::run(
        &spec("default", 1, TransferDirection::Download, 1000, 128, 2),
        0,
    )
    .unwrap();
    let c = &r.clients[0];
    let t = c.transfers.as_deref().unwrap();
    assert_eq!((t.size, t.completed, t.failed), (1000, 2, 0));
    for time in &t.times {
        assert!(
            close(*time, want),
            "transfer took {time} s, expected {want} s"
        );
    }
    assert_eq!((c.completed, c.retransmissions, c.failed), (16, 0, 0));
    assert_eq!(r.histograms[0], vec![16]);
    assert!(close(c.rtt_sum, 2.0 * want));
    assert!(close(c.fct.unwrap(), 2.0 * want));
    assert!(r.conservation.holds());
}

#[test]
fn an_upload_takes_one_round_trip_a_block() {
    let rtt = wire(142.0, 60e3) + FIXED + wire(7.0, 30e3);
    let last = wire(118.0, 60e3) + FIXED + wire(7.0, 30e3);
    let want = 7.0 * rtt + last;
    assert!(close(want, 5.2128), "{want}");
    let r = dumbbell::Sim::run(
        &spec("default", 1, TransferDirection::Upload, 1000, 128, 1),
        0,
    )
    .unwrap();
    let c = &r.clients[0];
    let t = c.transfers.as_deref().unwrap();
    assert_eq!((t.completed, t.failed), (1, 0));
    assert!(close(t.times[0], want), "{} vs {want}", t.times[0]);
    assert!(close(c.fct.unwrap(), want));
    assert_eq!(c.completed, 8);
}

/// High link errors: every transfer ends, and one that completes was
/// reassembled exactly (a wrong body fails a debug assertion in the world
/// and would count as failed).
#[test]
fn transfers_reassemble_exactly_whatever_is_lost() {
    for (seed, direction) in [
        (1, TransferDirection::Download),
        (2, TransferDirection::Upload),
        (3, TransferDirection::Download),
        (4, TransferDirection::Upload),
    ] {
        for algorithm in ["default", "cocoa", "fasor"] {
            let mut s = spec(algorithm, 4, direction, 700, 64, 3);
            s.network.errors = ErrorProfile::High;
            s.seed = seed;
            s.coap.max_retransmit = 4;
            let r = dumbbell::Sim::run(&s, 0).unwrap();
            let mut retransmissions = 0;
            for c in &r.clients {
                let t = c.transfers.as_deref().unwrap();
                assert_eq!(t.completed + t.failed, 3);
                assert_eq!(t.times.len() as u32, t.completed);
                assert!(c.fct.is_some());
                retransmissions += c.retransmissions;
            }
            assert!(
                retransmissions > 0,
                "{algorithm} {direction:?}: no loss at all?"
            );
            assert!(r.conservation.holds());
        }
    }
}

#[test]
fn the_same_seed_gives_the_same_run() {
    let mut s = spec("cocoa", 3, TransferDirection::Upload, 2048, 128, 2);
    s.network.errors = ErrorProfile::Medium;
    assert_eq!(
        dumbbell::Sim::run(&s, 1).unwrap(),
        dumbbell::Sim::run(&s, 1).unwrap()
    );
}

#[test]
fn bad_settings_are_refused_by_field() {
    let err = |s: &RunSpec| validate(s).unwrap_err().to_string();
    // 256-byte blocks: 282 bytes of message in a 268-byte datagram.
    let big = spec("default", 1, TransferDirection::Download, 4096, 256, 1);
    assert!(err(&big).contains("workload.block_size"), "{}", err(&big));
    let mut small_mtu = spec("default", 1, TransferDirection::Upload, 4096, 128, 1);
    small_mtu.network.mtu = 150;
    assert!(err(&small_mtu).contains("workload.block_size"));
    let mut nstart = spec("default", 1, TransferDirection::Download, 4096, 64, 1);
    nstart.coap.nstart = 2;
    assert!(err(&nstart).contains("coap.nstart"), "{}", err(&nstart));
    let mut tcp = spec("default", 1, TransferDirection::Download, 4096, 64, 1);
    tcp.groups[0].algorithm = AlgorithmSpec::named("tcp");
    assert!(err(&tcp).contains("workload.kind"));
    let mut other = spec("default", 1, TransferDirection::Download, 4096, 64, 1);
    other.groups[0].workload.period = Some(1.0);
    assert!(err(&other).contains("workload.period"), "{}", err(&other));
}
