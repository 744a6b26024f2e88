//! Data transfer: RTO backoff and its collapse, Karn's rule, fast
//! retransmit / recovery, Nagle, delayed ACKs, close (docs/spec/transport-tcp-spec.md §2).
//! Loss recovery here is model 2's NewReno ([`TcpConfig::newreno`],
//! `tcp-newreno`); Linux 4.9's is in `tests/linux49.rs`.

use crate::common;
use coapcc_tcp::{Flags, Nagle, TcpConfig, TcpState};
use common::*;

fn acks_after(w: &Wire, dir: Dir, t: u64) -> Vec<(u64, u32)> {
    w.sent(dir)
        .filter(|s| s.at >= t && s.seg.is_pure_ack())
        .map(|s| (s.at, s.seg.ack))
        .collect()
}

#[test]
fn rto_backs_off_and_karn_keeps_it_until_a_valid_sample() {
    let mut w = established(TcpConfig::newreno());
    assert_eq!(w.client.rto(), 600 * MS);
    // Data segments carrying byte 0: the first three transmissions are lost.
    let mut lost = 0;
    w.set_drop(move |d, s, _| {
        if d == Dir::ToServer && !s.payload.is_empty() && lost < 3 {
            lost += 1;
            true
        } else {
            false
        }
    });
    w.client.send(&[1; 100]);
    w.run_until(6 * SEC);
    // 600 ms, then ×2 each time.
    assert_eq!(
        data_times(&w, Dir::ToServer),
        vec![SEC, 1600 * MS, 2800 * MS, 5200 * MS]
    );
    assert_eq!(w.client.stats().rto_expirations, 3);
    assert_eq!(w.client.stats().retransmitted_segments, 3);
    // Delivered at 5.3, delayed ACK at 5.5, back at 5.6: Karn, no sample;
    // the backed-off 4.8 s stays.
    assert_eq!(w.server_rx, vec![1; 100]);
    assert!(w.client.all_acked());
    assert_eq!(w.client.stats().rtt_samples, 1); // the handshake's
    assert_eq!(w.client.rto(), 4800 * MS);
    assert_eq!(w.client.backoff(), 3);
    // New data at 6.0: ACKed (delayed) at 6.3, back at 6.4: R = 400 ms.
    // SRTT 200 → 225; mdev4 400 → 500 = RTTVAR4; RTO = 225 + 500 = 725 ms.
    w.client.send(&[2; 100]);
    w.run_until(7 * SEC);
    assert_eq!(w.client.stats().rtt_samples, 2);
    assert_eq!(w.client.srtt(), Some(225 * MS));
    assert_eq!(w.client.rto(), 725 * MS);
    assert_eq!(w.client.backoff(), 0);
    // Loss window after the timeout: ssthresh = max(flight/2, 2 MSS).
    assert_eq!(w.client.ssthresh(), 512);
}

#[test]
fn repeated_timeouts_are_capped_at_120s() {
    let mut cfg = TcpConfig::newreno();
    cfg.data_retries = 12;
    let mut w = established(cfg);
    w.set_drop(|d, s, _| d == Dir::ToServer && !s.payload.is_empty());
    w.client.send(b"x");
    w.run_until(2000 * SEC);
    let t = data_times(&w, Dir::ToServer);
    let gaps: Vec<u64> = t.windows(2).map(|p| (p[1] - p[0]) / MS).collect();
    assert_eq!(
        gaps,
        vec![600, 1200, 2400, 4800, 9600, 19200, 38400, 76800, 120_000, 120_000, 120_000, 120_000]
    );
    assert_eq!(w.client.state(), TcpState::Closed);
    assert_eq!(
        w.client.abort_reason(),
        Some(coapcc_tcp::AbortReason::RetransmitTimeout)
    );
}

#[test]
fn fast_retransmit_on_third_duplicate_ack() {
    let mut w = established(TcpConfig::newreno());
    let mut first = true;
    w.set_drop(move |d, s, _| {
        let hit = d == Dir::ToServer && !s.payload.is_empty() && s.seq == 1 && first;
        first &= !hit;
        hit
    });
    let data: Vec<u8> = (0..2560u32).map(|i| i as u8).collect();
    w.client.send(&data);
    w.run_until(1200 * MS - 1);
    // Ten full segments at once (initial window 10 MSS).
    assert_eq!(data_times(&w, Dir::ToServer), vec![SEC; 10]);
    // Nine out-of-order arrivals at 1.1 s: nine immediate duplicate ACKs.
    let dups = acks_after(&w, Dir::ToClient, SEC);
    assert_eq!(dups.len(), 9);
    assert!(dups.iter().all(|&(t, a)| t == 1100 * MS && a == 1));
    w.run_until(1250 * MS);
    // The third duplicate ACK (1.2 s) retransmits the head, long before
    // the RTO (1.6 s).
    let t = data_times(&w, Dir::ToServer);
    assert_eq!(t.len(), 11);
    assert_eq!(t[10], 1200 * MS);
    assert_eq!(w.client.stats().fast_retransmits, 1);
    assert!(w.client.in_fast_recovery());
    assert_eq!(w.client.ssthresh(), 1280);
    // ssthresh + 3 MSS, then +1 MSS for each of the six further duplicates.
    assert_eq!(w.client.cwnd(), 1280 + 768 + 6 * 256);
    // The retransmission fills the gap: immediate cumulative ACK at 1.3,
    // full ACK at 1.4 ends recovery with cwnd = min(ssthresh, 0 + 2 MSS).
    w.run_until(1500 * MS);
    assert_eq!(w.server_rx, data);
    assert!(!w.client.in_fast_recovery());
    assert_eq!(w.client.cwnd(), 512);
    assert_eq!(w.client.stats().rto_expirations, 0);
    assert_eq!(w.server().stats().dup_data_segments, 0);
    assert_eq!(
        acks_after(&w, Dir::ToClient, 1300 * MS),
        vec![(1300 * MS, 1 + 2560)]
    );
}

#[test]
fn nagle_holds_a_small_segment_behind_unacked_data() {
    let mut w = established(linux_exact_timers());
    w.client.send(&[1; 10]);
    w.run_until(1050 * MS);
    w.client.send(&[2; 10]);
    w.run_until(1060 * MS);
    assert_eq!(data_times(&w, Dir::ToServer), vec![SEC]);
    // The first is ACKed after the 200 ms delayed-ACK timer (1.3), arrives
    // at 1.4: only then does the second leave.
    w.run_until(2 * SEC);
    assert_eq!(data_times(&w, Dir::ToServer), vec![SEC, 1400 * MS]);
    // A full-size segment is not held; its short tail is.
    w.client.send(&[3; 10]);
    w.run_until(3 * SEC);
    w.client.send(&[4; 300]);
    w.run_until(3 * SEC + 1);
    let sizes: Vec<usize> = w
        .sent(Dir::ToServer)
        .filter(|s| s.at >= 3 * SEC)
        .map(|s| s.seg.payload.len())
        .collect();
    assert_eq!(sizes, vec![256]);
    w.run_until(5 * SEC);
    assert_eq!(w.server_rx.len(), 330);
}

#[test]
fn minshall_and_off_do_not_hold_behind_full_segments() {
    for nagle in [Nagle::Off, Nagle::Minshall] {
        let mut cfg = TcpConfig::linux();
        cfg.nagle = nagle;
        let mut w = established(cfg);
        w.client.send(&[1; 256]);
        w.client.send(&[2; 10]);
        w.run_until(SEC + 1);
        assert_eq!(data_times(&w, Dir::ToServer), vec![SEC, SEC], "{nagle:?}");
        w.client.send(&[3; 10]);
        w.run_until(SEC + 2);
        let expect = if nagle == Nagle::Off { 3 } else { 2 };
        assert_eq!(data_times(&w, Dir::ToServer).len(), expect, "{nagle:?}");
    }
}

#[test]
fn delayed_ack_200ms_and_immediate_on_second_full_segment() {
    let mut w = established(linux_exact_timers());
    w.client.send(&[0; 100]);
    w.run_until(3 * SEC);
    assert_eq!(
        acks_after(&w, Dir::ToClient, SEC),
        vec![(1300 * MS, 1 + 100)]
    );
    // Three full segments at 3.0: ACK at once after the second (3.1), the
    // third waits for the timer (3.3).
    w.client.send(&[0; 768]);
    w.run_until(4 * SEC);
    assert_eq!(
        acks_after(&w, Dir::ToClient, 3 * SEC),
        vec![(3100 * MS, 101 + 512), (3300 * MS, 101 + 768)]
    );
}

#[test]
fn response_piggybacks_the_ack() {
    let mut w = established(linux_exact_timers());
    w.client.send(&[0; 12]);
    w.run_until(1100 * MS);
    assert_eq!(w.server_rx.len(), 12);
    w.server().send(&[9; 60]);
    w.run_until(2 * SEC);
    assert!(acks_after(&w, Dir::ToClient, SEC).is_empty());
    let resp: Vec<_> = w.sent(Dir::ToClient).filter(|s| s.at > SEC).collect();
    assert_eq!(resp.len(), 1);
    assert_eq!(resp[0].seg.wire_len(), 100);
    assert_eq!(resp[0].seg.ack, 1 + 12);
    // The client's delayed ACK of the response: 1.2 + 0.2.
    assert_eq!(
        acks_after(&w, Dir::ToServer, SEC),
        vec![(1400 * MS, 7_001 + 60)]
    );
}

#[test]
fn close_both_ways() {
    let mut w = established(linux_exact_timers());
    w.client.send(b"hello");
    w.client.close();
    assert_eq!(w.client.state(), TcpState::FinWait1);
    w.run_until(1200 * MS);
    // Data and FIN in one segment; the server ACKs the FIN at once.
    let s = w.sent(Dir::ToServer).last().unwrap();
    assert_eq!(s.seg.flags, Flags::ACK | Flags::FIN);
    assert_eq!(s.seg.payload, b"hello");
    assert_eq!(w.server().state(), TcpState::CloseWait);
    assert!(w.server().recv_finished());
    assert_eq!(w.client.state(), TcpState::FinWait2);
    w.server().close();
    assert_eq!(w.server().state(), TcpState::LastAck);
    w.run_until(1400 * MS);
    assert_eq!(w.client.state(), TcpState::TimeWait);
    assert_eq!(w.server().state(), TcpState::Closed);
    assert_eq!(w.client.poll_timeout(), Some(1300 * MS + 60 * SEC));
    w.run_until(62 * SEC);
    assert_eq!(w.client.state(), TcpState::Closed);
    assert_eq!(w.client.abort_reason(), None);
}

#[test]
fn lost_fin_is_retransmitted_and_duplicate_data_counted() {
    let mut w = established(TcpConfig::linux());
    w.client.send(b"abc");
    w.run_until(2 * SEC);
    // Lose the server's ACKs of the FIN segment: the client retransmits it,
    // the server counts it as data it already had.
    w.set_drop(|d, _, _| d == Dir::ToClient);
    w.client.send(b"defg");
    w.client.close();
    w.run_until(3 * SEC);
    w.set_drop(|_, _, _| false);
    w.run_until(5 * SEC);
    assert_eq!(w.server_rx, b"abcdefg");
    assert!(w.server().stats().dup_data_segments >= 1);
    assert_eq!(w.client.state(), TcpState::FinWait2);
}

#[test]
fn events_trace_samples_timeouts_windows_and_duplicates() {
    use coapcc_tcp::TcpEvent;
    let mut cfg = TcpConfig::newreno();
    cfg.record_events = true;
    let mut w = established(cfg);
    let ev: Vec<TcpEvent> = std::iter::from_fn(|| w.client.poll_event()).collect();
    assert_eq!(
        ev,
        vec![
            TcpEvent::RttSample {
                rtt: 200 * MS,
                srtt: 200 * MS,
                rto: 600 * MS
            },
            TcpEvent::Connected,
            TcpEvent::Window {
                cwnd: 2560,
                ssthresh: u64::MAX
            },
        ]
    );
    // Lose the ACK of a 2-byte "CSM": the retransmission is a duplicate at
    // the server, reported with its stream offsets.
    w.set_drop(|d, _, _| d == Dir::ToClient);
    w.client.send(&[0, 0xE1]);
    // ACK at 1.3 lost; RTO retransmission at 1.6, duplicate at 1.7, whose
    // immediate ACK gets through.
    w.run_until(1650 * MS);
    w.set_drop(|_, _, _| false);
    w.run_until(3 * SEC);
    let ev: Vec<TcpEvent> = std::iter::from_fn(|| w.client.poll_event()).collect();
    assert!(ev.contains(&TcpEvent::RtoExpired {
        expired: 600 * MS,
        next_rto: 1200 * MS,
        backoff: 1
    }));
    assert!(ev.contains(&TcpEvent::Window {
        cwnd: 256,
        ssthresh: 512
    }));
    let sv: Vec<TcpEvent> = std::iter::from_fn(|| w.server().poll_event()).collect();
    assert!(sv.contains(&TcpEvent::DuplicateData { start: 0, end: 2 }));
    assert_eq!(w.server().stats().dup_data_segments, 1);
}

/// `tcp` keeps its timers in 4 ms jiffies on Linux's timer wheel
/// (`coapcc_tcp::linux::wheel`); times computed by hand.
#[test]
fn tcp_timers_fire_on_the_timer_wheel() {
    let mut w = established(TcpConfig::linux());
    // Handshake sample 200 ms: RTO = 200 + max(400, 200) = 600 ms = 150
    // jiffies.
    assert_eq!(w.client.rto(), 600 * MS);
    let mut lost = 0;
    w.set_drop(move |d, s, _| {
        if d == Dir::ToServer && !s.payload.is_empty() && lost < 2 {
            lost += 1;
            true
        } else {
            false
        }
    });
    w.client.send(&[1; 100]);
    w.run_until(4 * SEC);
    // Sent at jiffy 250; expires 400, 150 jiffies away: level 1 (8-jiffy
    // buckets), fires at ((400 >> 3) + 1) << 3 = 408 → 1.632 s. Backed off
    // to 1.2 s: expires 408 + 300 = 708, level 1 → 712 → 2.848 s.
    assert_eq!(
        data_times(&w, Dir::ToServer),
        vec![SEC, 1632 * MS, 2848 * MS]
    );
    // The copy arrives at 2.948 s (jiffy 737): the delayed ACK's 50 jiffies
    // expire at 787, level 0 fires one jiffy later: 788 → 3.152 s.
    assert_eq!(
        acks_after(&w, Dir::ToClient, 2 * SEC),
        vec![(3152 * MS, 1 + 100)]
    );
}
