//! The `lwip` profile and its published variants (docs/spec/transport-tcp-spec.md §3),
//! socket against socket over an in-memory wire, against tick sequences
//! computed by hand.
//!
//! Common set-up unless a test says otherwise: one-way delay 110 ms; the
//! client connects at t = 0, so its timer grid starts at 250 ms (first fast
//! and slow tick; slow tick n at 0.25 + (n−1)·0.5 s); the server's first
//! connection appears when the SYN arrives at 110 ms, so its grid starts at
//! 360 ms. MSS 536 (MTU 1500), `TCP_WND` 2144.

use crate::any_wire;
use any_wire::*;
use coapcc_tcp::lwip::{LwipBackoff, LwipLossWindow, FIRST_TIMER_DELAY};
use coapcc_tcp::{
    AbortReason, AnySocket, LwipConfig, SocketConfig, TcpConfig, TcpEvent, TcpProfile, TcpState,
};

const DELAY: u64 = 110 * MS;

fn lwip(backoff: LwipBackoff, loss: LwipLossWindow) -> LwipConfig {
    LwipConfig {
        record_events: true,
        ..LwipConfig::variant(backoff, loss)
    }
}

fn table() -> LwipConfig {
    lwip(LwipBackoff::Table, LwipLossWindow::OneMss)
}

/// The server's device: timer grid from the SYN's arrival + 250 ms.
fn server_of(c: &LwipConfig) -> SocketConfig {
    SocketConfig::Lwip(LwipConfig {
        isn: 7_000,
        timer_origin: DELAY + FIRST_TIMER_DELAY,
        ..c.clone()
    })
}

fn wire(c: LwipConfig) -> Wire {
    let s = server_of(&c);
    Wire::new(SocketConfig::Lwip(c), s, DELAY)
}

fn slow_tick(n: u64) -> u64 {
    FIRST_TIMER_DELAY + (n - 1) * 500 * MS
}

fn lwip_of(s: &AnySocket) -> &coapcc_tcp::LwipSocket {
    match s {
        AnySocket::Lwip(l) => l,
        AnySocket::Linux(_) => panic!("not lwIP"),
    }
}

fn rto_events(w: &Wire) -> Vec<(u64, u64, u64)> {
    w.client_events
        .iter()
        .filter_map(|(t, e)| match e {
            TcpEvent::RtoExpired {
                expired, next_rto, ..
            } => Some((*t, *expired, *next_rto)),
            _ => None,
        })
        .collect()
}

/// Handshake, then the client writes `data` at t = 1 s.
///
/// 0: SYN (client rtime and RTT measurement start at tick count 0).
/// 110 ms: SYN-ACK. 220 ms: the client is established (no RTT sample:
/// lwIP takes none in SYN-SENT), sends a pure ACK; the SYN's measurement
/// keeps running. 330 ms: the server is established and samples its SYN-ACK:
/// m = 0 ticks (both at server tick count 0): sa = 0, sv = 6 + (0 − 6/4) = 5,
/// server RTO 5 ticks. 1 s: the client sends at tick count 2 ((1 − 0.25)/0.5
/// = 1.5 → 1, + 1), so rtime counts from tick 2.
fn established_then_write(w: &mut Wire, data: &[u8]) {
    w.run_until(SEC);
    assert_eq!(w.client.state(), TcpState::Established);
    assert_eq!(w.server().state(), TcpState::Established);
    let srv = lwip_of(w.server.as_ref().unwrap());
    assert_eq!(
        (srv.estimator().sa, srv.estimator().sv, srv.rto_ticks()),
        (0, 5, 5)
    );
    let cl = lwip_of(&w.client);
    assert_eq!(
        (cl.estimator().sa, cl.estimator().sv, cl.rto_ticks()),
        (0, 6, 6)
    );
    assert_eq!(w.client.send(data), data.len());
    w.flush();
}

/// Drops the first `k` client segments carrying data.
fn drop_first_client_data(w: &mut Wire, k: usize) {
    let mut seen = 0;
    w.set_drop(move |d, s, _| {
        if d == Dir::ToServer && !s.payload.is_empty() {
            seen += 1;
            seen <= k
        } else {
            false
        }
    });
}

#[test]
fn initial_windows_and_mss() {
    let mut w = wire(table());
    w.run_until(SEC);
    // cwnd = min(4·536, max(2·536, 4380)) = min(2144, 4380) = 2144;
    // ssthresh = TCP_SND_BUF = 10·536 = 5360 (the published comparison).
    assert_eq!((w.client.cwnd(), w.client.ssthresh()), (2144, 5360));
    assert_eq!((w.server().cwnd(), w.server().ssthresh()), (2144, 5360));
    assert_eq!(w.client.mss(), 536);
    // The SYN announces 536 and the window TCP_WND = 4·536 = 2144.
    let syn = &w.log[0].seg;
    assert_eq!((syn.mss, syn.window), (Some(536), 2144));
    // On the 296-byte dumbbell: MSS min(536, 296 − 40) = 256, cwnd
    // min(1024, max(512, 4380)) = 1024, ssthresh still 5360 bytes.
    let c = LwipConfig {
        mtu: 296,
        ..table()
    };
    let mut d = wire(c);
    d.run_until(SEC);
    assert_eq!(d.client.mss(), 256);
    assert_eq!((d.client.cwnd(), d.client.ssthresh()), (1024, 5360));
}

#[test]
fn a_lost_syn_leaves_ssthresh_at_two_mss() {
    // lwIP's tcp_slowtmr cuts ssthresh on every timeout, the SYN's included:
    // cwnd is 1 byte in SYN-SENT, so ssthresh = max(min(1, 2144)/2, 2·536)
    // = 1072, for the rest of the connection.
    let mut w = wire(table());
    w.set_drop(|d, s, i| d == Dir::ToServer && i == 0 && s.payload.is_empty());
    w.run_until(5 * SEC);
    assert_eq!(w.client.state(), TcpState::Established);
    assert_eq!((w.client.cwnd(), w.client.ssthresh()), (2144, 1072));
    // The SYN went again when its rtime, counted from tick count 0, reached
    // 6: tick 6, at 0.25 + 5·0.5 = 2.75 s.
    let syns: Vec<u64> = w.sent(Dir::ToServer).map(|s| s.at).take(2).collect();
    assert_eq!(syns, vec![0, slow_tick(6)]);
}

#[test]
fn syn_retries_are_not_backed_off_and_stop_after_six() {
    // Every SYN lost: rto stays 6 ticks in SYN-SENT (not backed off), so the
    // SYN goes at ticks 6, 12, …, 36 (2.75 s, 5.75 s, …, 17.75 s); after the
    // 6th nrtx = 6 = TCP_SYNMAXRTX and the next tick (37, at 18.25 s) gives
    // up.
    let mut w = wire(table());
    w.set_drop(|d, _, _| d == Dir::ToServer);
    w.run_while(100 * SEC, |w| w.client.state() != TcpState::Closed);
    let syns: Vec<u64> = w.sent(Dir::ToServer).map(|s| s.at).collect();
    let want: Vec<u64> = [0, 6, 12, 18, 24, 30, 36]
        .iter()
        .map(|&n| if n == 0 { 0 } else { slow_tick(n) })
        .collect();
    assert_eq!(syns, want);
    assert_eq!(w.client.stats().syn_retransmissions, 6);
    assert_eq!(w.client.abort_reason(), Some(AbortReason::HandshakeTimeout));
    assert_eq!(w.now, slow_tick(37));
}

/// The RTO ticks at which the 12 retransmissions of a lost segment leave and
/// the tick at which the connection is given up, for a segment sent at tick
/// count 2 with rto 6.
fn give_up(backoff: LwipBackoff, fires: [u64; 12], abort: u64) {
    let mut w = wire(lwip(backoff, LwipLossWindow::OneMss));
    w.set_drop(|d, s, _| d == Dir::ToServer && !s.payload.is_empty());
    established_then_write(&mut w, b"x");
    w.run_while(10_000 * SEC, |w| w.client.state() != TcpState::Closed);
    let sends = w.client_sends_of(0, 0);
    let mut want = vec![SEC];
    want.extend(fires.iter().map(|&n| slow_tick(n)));
    assert_eq!(sends, want);
    assert_eq!(
        w.client.abort_reason(),
        Some(AbortReason::RetransmitTimeout)
    );
    assert_eq!(w.client.stats().rto_expirations, 12);
    assert_eq!(w.now, slow_tick(abort));
}

#[test]
fn data_gives_up_after_twelve_retransmissions_table() {
    // rto 6, then ((sa>>3)+sv) << backoff[n] = 6 << 1, 2, 3, … : 12, 24, 48,
    // 96, 192, 384, 768, then 768 (6 << 7) for ever. From tick 2: 2+6 = 8,
    // +12 = 20, +24 = 44, +48 = 92, +96 = 188, +192 = 380, +384 = 764,
    // +768 = 1532, 2300, 3068, 3836, 4604; nrtx = 12 = TCP_MAXRTX, so tick
    // 4605 (2302.25 s) gives up.
    give_up(
        LwipBackoff::Table,
        [8, 20, 44, 92, 188, 380, 764, 1532, 2300, 3068, 3836, 4604],
        4605,
    );
}

#[test]
fn data_gives_up_after_twelve_retransmissions_backoff_variant() {
    // rto 6 (3 s ≤ 3 s: ×2) → 12; then ×1.3 to the nearest tick:
    // 12 → 15.6 → 16 → 20.8 → 21 → 27.3 → 27 → 35.1 → 35 → 45.5 → 46 →
    // 59.8 → 60 → 78 → 101.4 → 101 → 131.3 → 131 → 170.3 → 170.
    // Fires: 2+6 = 8, +12 = 20, +16 = 36, +21 = 57, +27 = 84, +35 = 119,
    // +46 = 165, +60 = 225, +78 = 303, +101 = 404, +131 = 535, +170 = 705;
    // given up at tick 706 (352.75 s) instead of 2302.25 s.
    give_up(
        LwipBackoff::TwoThenOnePointThree,
        [8, 20, 36, 57, 84, 119, 165, 225, 303, 404, 535, 705],
        706,
    );
}

/// A 100-byte write whose first three transmissions are lost; returns the
/// wire after it is acknowledged.
fn lossy_transfer(backoff: LwipBackoff) -> Wire {
    let mut w = wire(lwip(backoff, LwipLossWindow::OneMss));
    drop_first_client_data(&mut w, 3);
    let data: Vec<u8> = (0..100u8).collect();
    established_then_write(&mut w, &data);
    w.run_while(100 * SEC, |w| !w.client.all_acked());
    assert_eq!(w.server_rx, data);
    w
}

#[test]
fn timer_sequence_through_a_lossy_channel_table() {
    // Sent at 1 s (tick count 2), rto 6: expires at tick 8 (3.75 s) → rto
    // 6 << 1 = 12, resent; tick 20 (9.75 s) → 6 << 2 = 24; tick 44
    // (21.75 s) → 48. The third retransmission arrives at 21.86 s; the
    // server's delayed ACK leaves at its next fast tick, 0.36 + 87·0.25 =
    // 22.11 s, and reaches the client at 22.22 s: new data acknowledged,
    // nrtx = 0, rto = (sa>>3)+sv = 6. The retransmission sent at tick count
    // 44 was timed (lwIP restarts the measurement on the next segment sent
    // after abandoning one): at 22.22 s the tick count is still 44, m = 0:
    // sa = 0, sv = 6 + (0 − 6/4) = 5, rto = 5 ticks (2.5 s).
    let w = lossy_transfer(LwipBackoff::Table);
    let sends = w.client_sends_of(0, 0);
    assert_eq!(sends, vec![SEC, slow_tick(8), slow_tick(20), slow_tick(44)]);
    assert_eq!(slow_tick(44), 21_750 * MS);
    let t = rto_events(&w);
    assert_eq!(
        t,
        vec![
            (slow_tick(8), 3 * SEC, 6 * SEC),
            (slow_tick(20), 6 * SEC, 12 * SEC),
            (slow_tick(44), 12 * SEC, 24 * SEC),
        ]
    );
    let ack_at = w
        .sent(Dir::ToClient)
        .find(|s| s.at > 21 * SEC)
        .map(|s| s.at);
    assert_eq!(ack_at, Some(22_110 * MS));
    let cl = lwip_of(&w.client);
    assert_eq!(
        (cl.estimator().sa, cl.estimator().sv, cl.rto_ticks()),
        (0, 5, 5)
    );
    assert_eq!(cl.backoff(), 0);
    // Three timeouts: ssthresh = max(min(cwnd, wnd)/2, 1072) each time.
    // 1st: min(2144, 2144)/2 = 1072; then cwnd = 536: 268 → 1072.
    assert_eq!(w.client.ssthresh(), 1072);
}

#[test]
fn timer_sequence_through_a_lossy_channel_backoff_variant() {
    // Same losses: tick 8 (3.75 s, rto 6 = 3 s → ×2 = 12), tick 20 (9.75 s,
    // 12 = 6 s > 3 s → ×1.3 = 15.6 → 16), tick 36 (17.75 s, → 20.8 → 21).
    // Arrival 17.86 s, server fast tick 0.36 + 71·0.25 = 18.11 s, ACK at the
    // client 18.22 s, tick count 36 = the retransmission's: m = 0, rto 5.
    let w = lossy_transfer(LwipBackoff::TwoThenOnePointThree);
    let sends = w.client_sends_of(0, 0);
    assert_eq!(sends, vec![SEC, slow_tick(8), slow_tick(20), slow_tick(36)]);
    let t = rto_events(&w);
    let ms = |x: u64| x * 500 * MS;
    assert_eq!(
        t,
        vec![
            (slow_tick(8), ms(6), ms(12)),
            (slow_tick(20), ms(12), ms(16)),
            (slow_tick(36), ms(16), ms(21)),
        ]
    );
    assert_eq!(lwip_of(&w.client).rto_ticks(), 5);
}

/// A sink as in the lwIP paper's Wi-Fi star: ACKs every segment, window
/// 14·MSS = 7504 bytes.
fn sink(c: &LwipConfig) -> SocketConfig {
    let SocketConfig::Lwip(s) = server_of(c) else {
        unreachable!()
    };
    SocketConfig::Lwip(LwipConfig {
        rcv_wnd: 14 * 536,
        delayed_ack: false,
        ..s
    })
}

/// Six full segments, each acknowledged on its own, take cwnd through slow
/// start from 2144 by min(536, 2·536) per ACK: 2680, 3216, 3752, 4288, 4824,
/// 5360 = ssthresh (no segment lost).
fn grown_to_5360(c: LwipConfig) -> Wire {
    let mut w = Wire::new(SocketConfig::Lwip(c.clone()), sink(&c), DELAY);
    w.run_until(SEC);
    assert_eq!(w.client.send(&[7u8; 6 * 536]), 6 * 536);
    w.run_while(20 * SEC, |w| !w.client.all_acked());
    assert_eq!((w.client.cwnd(), w.client.ssthresh()), (5360, 5360));
    assert_eq!(lwip_of(&w.client).snd_wnd(), 7504);
    w
}

fn cwnd_after_timeout(loss: LwipLossWindow) -> (u64, u64) {
    let mut w = grown_to_5360(lwip(LwipBackoff::Table, loss));
    // One more segment, lost: no duplicate ACKs, so the timer expires.
    let from = w.log.len();
    w.set_drop(move |d, s, _| d == Dir::ToServer && !s.payload.is_empty());
    assert_eq!(w.client.send(&[8u8; 536]), 536);
    w.run_while(60 * SEC, |w| w.client.stats().rto_expirations == 0);
    assert!(w.log.len() > from);
    (w.client.ssthresh(), w.client.cwnd())
}

#[test]
fn loss_window_after_a_timeout() {
    // cwnd has reached ssthresh = 10·536 = 5360 under the sink's window
    // 14·536 = 7504; the timeout recomputes ssthresh = max(min(5360, 7504)/2,
    // 2·536) = 2680. lwIP: cwnd = 1 MSS = 536. The readings of "50% of its
    // ssthresh limit" (paper §4.2): prior 5360/2 = 2680; min
    // min(5360, 5360)/2 = 2680; fresh 2680/2 = 1340.
    for (loss, expect) in [
        (LwipLossWindow::OneMss, (2680, 536)),
        (LwipLossWindow::HalfPriorSsthresh, (2680, 2680)),
        (LwipLossWindow::HalfMinCwnd, (2680, 2680)),
        (LwipLossWindow::HalfFreshSsthresh, (2680, 1340)),
    ] {
        assert_eq!(cwnd_after_timeout(loss), expect, "{loss:?}");
    }
}

#[test]
fn a_timeout_at_the_initial_window() {
    // A timeout before cwnd grew: cwnd = min(4·536, max(2·536, 4380)) =
    // 2144, ssthresh 5360, the lwIP server's window TCP_WND = 4·536 = 2144.
    // ssthresh = max(min(2144, 2144)/2, 1072) = 1072 for all. lwIP: 536.
    // prior: 5360/2 = 2680 — more than the 2144 the timeout interrupted, so
    // under this reading a timeout raises cwnd. min: min(2144, 5360)/2 =
    // 1072. fresh: 1072/2 = 536, as lwIP.
    //
    // A second timeout of the same segment: ssthresh = max(min(cwnd,
    // 2144)/2, 1072) = 1072 whatever cwnd the first left (at most 2680);
    // prior 1072/2 = 536, min min(cwnd ≥ 536, 1072)/2 = 536 for 1072,
    // fresh 1072/2 = 536: all back to one MSS.
    for (loss, cwnd) in [
        (LwipLossWindow::OneMss, 536),
        (LwipLossWindow::HalfPriorSsthresh, 2680),
        (LwipLossWindow::HalfMinCwnd, 1072),
        (LwipLossWindow::HalfFreshSsthresh, 536),
    ] {
        let mut w = wire(lwip(LwipBackoff::Table, loss));
        w.set_drop(|d, s, _| d == Dir::ToServer && !s.payload.is_empty());
        established_then_write(&mut w, b"x");
        assert_eq!((w.client.cwnd(), w.client.ssthresh()), (2144, 5360));
        w.run_while(60 * SEC, |w| w.client.stats().rto_expirations == 0);
        assert_eq!(
            (w.client.ssthresh(), w.client.cwnd()),
            (1072, cwnd),
            "{loss:?}"
        );
        w.run_while(120 * SEC, |w| w.client.stats().rto_expirations == 1);
        assert_eq!(w.client.stats().rto_expirations, 2);
        assert_eq!(
            (w.client.ssthresh(), w.client.cwnd()),
            (1072, 536),
            "{loss:?}"
        );
    }
}

#[test]
fn reno_fast_retransmit_and_recovery() {
    // From cwnd = ssthresh = 5360 (congestion avoidance), five full segments
    // leave at once (5·536 = 2680 ≤ min(5360, 7504)); the first is lost.
    // Segments 2–5 each draw an immediate duplicate ACK. Third: ssthresh =
    // max(min(5360, 7504)/2, 1072) = 2680, cwnd = 2680 + 3·536 = 4288, the
    // first segment resent. Fourth: cwnd + 536 = 4824. The resent segment
    // fills the hole; the ACK of all five ends recovery: cwnd = ssthresh =
    // 2680, then congestion avoidance counts the 2680 acknowledged bytes:
    // 2680 ≥ cwnd, so cwnd = 2680 + 536 = 3216.
    let mut w = grown_to_5360(table());
    let mut first = true;
    w.set_drop(move |d, s, _| {
        if d == Dir::ToServer && !s.payload.is_empty() && first {
            first = false;
            true
        } else {
            false
        }
    });
    let start_events = w.client_events.len();
    assert_eq!(w.client.send(&[9u8; 5 * 536]), 5 * 536);
    w.run_while(20 * SEC, |w| !w.client.all_acked());
    let windows: Vec<(u64, u64)> = w.client_events[start_events..]
        .iter()
        .filter_map(|(_, e)| match e {
            TcpEvent::Window { cwnd, ssthresh } => Some((*cwnd, *ssthresh)),
            _ => None,
        })
        .collect();
    assert_eq!(windows, vec![(4288, 2680), (4824, 2680), (3216, 2680)]);
    assert_eq!(w.client.stats().fast_retransmits, 1);
    assert_eq!(w.client.stats().rto_expirations, 0);
    assert!(!w.client.in_fast_recovery());
    assert_eq!(w.server_rx.len(), 11 * 536);
}

#[test]
fn nagle_and_the_delayed_ack() {
    // Two small writes: the second waits for the ACK of the first (lwIP's
    // Nagle: something unacknowledged, one small segment queued). The
    // server acknowledges the first segment with a delayed ACK at its next
    // fast tick after the arrival at 1.11 s: 0.36 + 4·0.25 = 1.36 s; the
    // second write then leaves at 1.47 s. (1.11 s is itself a fast tick of
    // the server's grid, 0.36 + 3·0.25; at an instant the tick runs first,
    // so the ACK waits for the next one.)
    let mut w = wire(table());
    established_then_write(&mut w, b"first");
    assert_eq!(w.client.send(b"second"), 6);
    w.run_while(10 * SEC, |w| !w.client.all_acked());
    let data: Vec<(u64, usize)> = w
        .sent(Dir::ToServer)
        .filter(|s| !s.seg.payload.is_empty())
        .map(|s| (s.at, s.seg.payload.len()))
        .collect();
    assert_eq!(data, vec![(SEC, 5), (1_470 * MS, 6)]);
    let acks: Vec<u64> = w
        .sent(Dir::ToClient)
        .filter(|s| s.seg.is_pure_ack())
        .map(|s| s.at)
        .collect();
    // Second arrival 1.58 s, next server fast tick 1.61 s.
    assert_eq!(acks, vec![1_360 * MS, 1_610 * MS]);
    assert_eq!(w.server_rx, b"firstsecond");
}

#[test]
fn every_second_segment_is_acknowledged_at_once() {
    // Three small segments (Nagle off at the client, three flushed writes)
    // reach the server together at 1.11 s: the first sets TF_ACK_DELAY, the
    // second finds it set and is acknowledged at once (tcp_ack), the third
    // waits for the server's next fast tick, 1.36 s.
    let c = LwipConfig {
        nagle: false,
        ..table()
    };
    let mut w = wire(c);
    w.run_until(SEC);
    for _ in 0..3 {
        assert_eq!(w.client.send(&[1u8; 100]), 100);
        w.flush();
    }
    w.run_while(10 * SEC, |w| !w.client.all_acked());
    let acks: Vec<u64> = w
        .sent(Dir::ToClient)
        .filter(|s| s.seg.is_pure_ack())
        .map(|s| s.at)
        .collect();
    assert_eq!(acks, vec![1_110 * MS, 1_360 * MS]);
}

#[test]
fn reading_a_full_segment_sends_a_window_update_at_once() {
    // With TCP_WND = 4·536, reading 536 bytes moves the window's right edge
    // by 536 ≥ min(TCP_WND/2, MSS) = 536, and that is ≥ the update
    // threshold min(TCP_WND/4, 4·TCP_MSS) = 536: tcp_recved acknowledges at
    // once. So three full segments draw three ACKs on arrival.
    let mut w = wire(table());
    established_then_write(&mut w, &[1u8; 3 * 536]);
    w.run_while(10 * SEC, |w| !w.client.all_acked());
    let acks: Vec<u64> = w
        .sent(Dir::ToClient)
        .filter(|s| s.seg.is_pure_ack())
        .map(|s| s.at)
        .collect();
    assert_eq!(acks, vec![1_110 * MS; 3]);
    assert!(w.sent(Dir::ToClient).all(|s| s.seg.window == 2144));
}

#[test]
fn lwip_talks_to_the_linux_profile() {
    // Either side may run the other profile: a full close both ways.
    for (c, s) in [
        (
            SocketConfig::Lwip(table()),
            SocketConfig::Linux(TcpConfig {
                isn: 9,
                ..TcpConfig::linux()
            }),
        ),
        (SocketConfig::Linux(TcpConfig::linux()), server_of(&table())),
    ] {
        let mut w = Wire::new(c, s, DELAY);
        w.server_on_accept = Some((vec![5u8; 700], false));
        w.server_closes_on_fin = true;
        let up: Vec<u8> = (0..1500u32).map(|i| i as u8).collect();
        assert_eq!(w.client.send(&up), up.len());
        // (lwIP's tcp_close in SYN-SENT drops the connection: close once
        // established.)
        w.run_until(SEC);
        w.client.close();
        w.run_while(1_000 * SEC, |w| {
            w.client.state() != TcpState::TimeWait && w.client.state() != TcpState::Closed
        });
        assert_eq!(w.server_rx, up);
        assert_eq!(w.client_rx, vec![5u8; 700]);
    }
}

#[test]
fn profiles_by_name() {
    let p = TcpProfile::from_name("tcp-lwip-backoff-cwnd").unwrap();
    let SocketConfig::Lwip(c) = p.config(1500) else {
        panic!()
    };
    assert_eq!(c.backoff, LwipBackoff::TwoThenOnePointThree);
    // The listed names run `min` (paper §4.2: cwnd "drops", "by 0.5").
    assert_eq!(c.loss_window, LwipLossWindow::HalfMinCwnd);
    assert!(p.state_bytes() > 0);
}
