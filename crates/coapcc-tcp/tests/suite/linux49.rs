//! Linux 4.9's loss recovery on the wire with Debian 9's defaults
//! (`tcp-linux49-debian9`; docs/spec/transport-tcp-spec.md §2, corrected):
//! SACK blocks and SACK-based recovery, the tail loss probe, F-RTO after a
//! spurious timeout, IW10 — against times and windows derived by hand for a
//! 100 ms one-way wire (RTT 200 ms, so SRTT 200 ms and RTO 600 ms after the
//! handshake), every timer firing exactly when due (`exact_timers`; the
//! wheel's rounding is tested in `tests/data.rs` and `tests/handshake.rs`).

use crate::common;
use coapcc_tcp::{Linux49, SackBlock, TcpConfig};
use common::*;

/// IW10, the first segment lost. The nine later segments arrive out of
/// order and each is answered at once by a duplicate ACK whose first SACK
/// block covers everything held: [257, 257 + 256·k) relative to the ISN.
/// FACK starts recovery on the third (fackets_out 4 > 3) and resends the
/// hole alone at 1.2 s; no timeout. The cumulative ACK at 1.4 s ends
/// recovery with cwnd = ssthresh = 10/2 packets.
#[test]
fn sack_recovery_resends_only_the_hole() {
    let mut w = established(exact_timers(Linux49::DEBIAN9));
    let mut first = true;
    w.set_drop(move |d, s, _| {
        let hit = d == Dir::ToServer && !s.payload.is_empty() && s.seq == 1 && first;
        first &= !hit;
        hit
    });
    let data: Vec<u8> = (0..2560u32).map(|i| i as u8).collect();
    w.client.send(&data);
    w.run_until(1250 * MS);
    assert_eq!(
        data_times(&w, Dir::ToServer),
        [vec![SEC; 10], vec![1200 * MS]].concat()
    );
    let sacks: Vec<Vec<SackBlock>> = w
        .sent(Dir::ToClient)
        .filter(|s| s.at >= SEC && s.seg.is_pure_ack())
        .map(|s| s.seg.sack.as_slice().to_vec())
        .collect();
    assert_eq!(sacks.len(), 9);
    for (k, b) in sacks.iter().enumerate() {
        let right = 257 + 256 * (k as u32 + 1);
        assert_eq!(b, &[SackBlock { left: 257, right }], "dupack {k}");
    }
    // 40 bytes of headers + NOP NOP SACK(10) = 52 bytes.
    assert!(w
        .sent(Dir::ToClient)
        .filter(|s| !s.seg.sack.is_empty())
        .all(|s| s.seg.wire_len() == 52));
    assert_eq!(w.client.stats().fast_retransmits, 1);
    assert!(w.client.in_fast_recovery());
    w.run_until(1500 * MS);
    assert_eq!(w.server_rx, data);
    assert!(!w.client.in_fast_recovery());
    assert_eq!(w.client.cwnd(), 5 * 256);
    assert_eq!(w.client.ssthresh(), 5 * 256);
    let c = w.client.stats();
    assert_eq!((c.retransmitted_segments, c.rto_expirations), (1, 0));
    // Model 2's NewReno resends the same hole, but its window counts bytes.
    let mut n = established(TcpConfig::newreno());
    let mut first = true;
    n.set_drop(move |d, s, _| {
        let hit = d == Dir::ToServer && !s.payload.is_empty() && s.seq == 1 && first;
        first &= !hit;
        hit
    });
    n.client.send(&data);
    n.run_until(1500 * MS);
    assert!(n.sent(Dir::ToClient).all(|s| s.seg.sack.is_empty()));
    assert_eq!(n.client.cwnd(), 512);
}

/// One 100-byte segment, lost. With one packet out the probe waits
/// PTO = max(2·SRTT, 1.5·SRTT + 200 ms) = max(400, 500) ms; the RTO would
/// fire at 1.0 + 0.6 s, so the probe goes first, at 1.5 s, and repairs the
/// loss: no timeout, no backoff. Without the probe, the RTO resends at 1.6 s.
#[test]
fn tail_loss_probe_beats_the_rto() {
    for (m, second, timeouts) in [
        (Linux49::DEBIAN9, 1500 * MS, 0),
        (
            Linux49 {
                tlp: false,
                ..Linux49::DEBIAN9
            },
            1600 * MS,
            1,
        ),
    ] {
        let mut w = established(exact_timers(m));
        let mut first = true;
        w.set_drop(move |d, s, _| {
            let hit = d == Dir::ToServer && !s.payload.is_empty() && first;
            first &= !hit;
            hit
        });
        w.client.send(&[7; 100]);
        w.run_until(3 * SEC);
        assert_eq!(data_times(&w, Dir::ToServer), vec![SEC, second]);
        assert_eq!(w.server_rx, vec![7; 100]);
        assert_eq!(w.client.stats().rto_expirations, timeouts);
        assert_eq!(w.client.backoff(), timeouts as u32);
    }
}

/// Four segments out at 1.0 s; every ACK is lost until 1.65 s, so the RTO
/// (600 ms) fires at 1.6 s although nothing was lost: Loss state, cwnd 1,
/// ssthresh 5, the head resent. Its duplicate reaches the server at 1.7 s,
/// whose immediate ACK (all four) is back at 1.8 s. That ACK covers
/// segments never retransmitted, sent before the timeout: with F-RTO the
/// timeout is undone (cwnd = 2·ssthresh = 10 packets, ssthresh back to
/// unbounded); without it the window stays reduced: slow start from 1 by
/// the four delivered packets, to 5.
#[test]
fn frto_undoes_a_spurious_timeout() {
    // SACK off on both ends, so that no D-SACK undoes the timeout instead.
    for (frto, cwnd, ssthresh) in [(true, 10 * 256, u64::MAX), (false, 5 * 256, 5 * 256)] {
        let m = Linux49 {
            frto,
            ..Linux49::BASE
        };
        let mut w = established(exact_timers(m));
        w.set_drop(|d, _, _| d == Dir::ToClient);
        w.client.send(&[1; 1024]);
        w.run_until(1650 * MS);
        assert_eq!(w.client.stats().rto_expirations, 1);
        assert_eq!(w.client.cwnd(), 256);
        assert_eq!(w.client.ssthresh(), 5 * 256);
        w.set_drop(|_, _, _| false);
        w.client.send(&[2; 512]); // F-RTO wants new data to send
        w.run_until(1850 * MS);
        assert!(w.client.bytes_in_flight() > 0 || w.client.all_acked());
        assert_eq!(w.client.cwnd(), cwnd, "frto {frto}");
        assert_eq!(w.client.ssthresh(), ssthresh, "frto {frto}");
        assert_eq!(w.client.stats().retransmitted_segments, 1);
    }
}

/// A duplicate segment is reported by a D-SACK block (RFC 2883). With
/// Debian 9's defaults the four segments above are not left to the RTO:
/// with four packets out the probe waits 2·SRTT = 400 ms and resends the
/// last one at 1.4 s; the server, which had it, answers at 1.5 s with a
/// D-SACK of it, [769, 1025). Without the probe and F-RTO, the timeout at
/// 1.6 s resends the head, the server D-SACKs [1, 257) at 1.7 s, and that
/// D-SACK alone undoes the timeout (`tcp_try_undo_loss`: every
/// retransmission D-SACKed): cwnd 10 packets, ssthresh unbounded again.
#[test]
fn dsack_reports_the_duplicate_and_undoes() {
    let dsacks = |w: &Wire| -> Vec<(u64, u32, Vec<SackBlock>)> {
        w.sent(Dir::ToClient)
            .filter(|s| s.at >= SEC && !s.seg.sack.is_empty())
            .map(|s| (s.at, s.seg.ack, s.seg.sack.as_slice().to_vec()))
            .collect()
    };
    let mut w = established(exact_timers(Linux49::DEBIAN9));
    w.set_drop(|d, _, _| d == Dir::ToClient);
    w.client.send(&[1; 1024]);
    w.run_until(1550 * MS);
    assert_eq!(
        data_times(&w, Dir::ToServer),
        vec![SEC, SEC, SEC, SEC, 1400 * MS]
    );
    let block = |left, right| SackBlock { left, right };
    assert_eq!(dsacks(&w), vec![(1500 * MS, 1025, vec![block(769, 1025)])]);
    assert_eq!(w.client.stats().rto_expirations, 0);

    let m = Linux49 {
        frto: false,
        tlp: false,
        ..Linux49::DEBIAN9
    };
    let mut w = established(exact_timers(m));
    w.set_drop(|d, _, _| d == Dir::ToClient);
    w.client.send(&[1; 1024]);
    w.run_until(1650 * MS);
    assert_eq!(w.client.stats().rto_expirations, 1);
    assert_eq!(w.client.cwnd(), 256);
    w.set_drop(|_, _, _| false);
    w.run_until(1850 * MS);
    assert_eq!(dsacks(&w), vec![(1700 * MS, 1025, vec![block(1, 257)])]);
    assert_eq!(w.client.cwnd(), 10 * 256);
    assert_eq!(w.client.ssthresh(), u64::MAX);
}
