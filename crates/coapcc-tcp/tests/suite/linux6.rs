//! A Linux 6.x host (`tcp-linux6`) against `tcp` (Linux 4.9 as the thesis
//! configured it) on the wire: the SYN timers of 6.x (initial RTO 1 s,
//! `tcp_syn_linear_timeouts` = 4, 6 + 4 SYN retransmissions) and the
//! receiver's quick-ACK mode and adaptive delayed ACK, with times derived by
//! hand for a 100 ms one-way wire (RTT 200 ms: after the handshake SRTT
//! 200 ms and RTO 200 + max(400, 200) = 600 ms on both sides).

use crate::common;
use coapcc_tcp::{AbortReason, Mechanisms, Nagle, TcpConfig, TcpState};
use common::*;

/// SYNs into a black hole. 6.x: RTO 1 s kept for the first four timeouts,
/// then doubled: SYNs at 0, 1, 2, 3, 4, 5, 7, 11, 19, 35, 67 s (eleven, as
/// captured on this machine's kernel), given up at the next timeout,
/// 67 + 64 = 131 s. `tcp`: 2 s doubling, 4, 8, 16, 32, 64, then 120 s.
#[test]
fn syn_timeouts_of_linux6_are_linear_then_double() {
    let mut w = Wire::new(exact_timers(Mechanisms::LINUX6), 100 * MS);
    w.set_drop(|d, _, _| d == Dir::ToServer);
    w.run_until(200 * SEC);
    let syns: Vec<u64> = w.sent(Dir::ToServer).map(|s| s.at / SEC).collect();
    assert_eq!(syns, [0, 1, 2, 3, 4, 5, 7, 11, 19, 35, 67]);
    assert_eq!(w.client.state(), TcpState::Closed);
    assert_eq!(w.client.abort_reason(), Some(AbortReason::HandshakeTimeout));
    assert_eq!(w.client.stats().syn_retransmissions, 10);

    let mut t = Wire::new(exact_timers(Mechanisms::THESIS), 100 * MS);
    t.set_drop(|d, _, _| d == Dir::ToServer);
    t.run_until(500 * SEC);
    let syns: Vec<u64> = t.sent(Dir::ToServer).map(|s| s.at / SEC).collect();
    assert_eq!(syns, [0, 2, 6, 14, 30, 62, 126, 246, 366, 486]);
    assert_eq!(t.client.state(), TcpState::SynSent);

    // Only `rto1s`: 1 s doubling, no linear timeouts.
    let cfg = exact_timers(Mechanisms {
        initial_rto_1s: true,
        ..Mechanisms::THESIS
    });
    let mut r = Wire::new(cfg, 100 * MS);
    r.set_drop(|d, _, _| d == Dir::ToServer);
    r.run_until(20 * SEC);
    let syns: Vec<u64> = r.sent(Dir::ToServer).map(|s| s.at / SEC).collect();
    assert_eq!(syns, [0, 1, 3, 7, 15]);
}

/// A SYN-ACK lost once: the 6.x client resends its SYN after 1 s (1.0 s),
/// the server answers that copy at once and its own timer (1 s) fires at the
/// same instant (1.1 s); with no RTT sample on either side (Karn) data
/// starts with the 3 s fallback RTO (`tcp_init_metrics`).
#[test]
fn one_second_syn_timers_and_the_fallback_rto() {
    let mut w = Wire::new(exact_timers(Mechanisms::LINUX6), 100 * MS);
    w.set_drop(|d, _, i| d == Dir::ToClient && i == 0);
    w.run_until(3 * SEC);
    let syns: Vec<u64> = w.sent(Dir::ToServer).map(|s| s.at / MS).collect();
    assert_eq!(syns[..2], [0, 1000]);
    let synacks: Vec<u64> = w.sent(Dir::ToClient).map(|s| s.at / MS).collect();
    assert_eq!(synacks[..2], [100, 1100]);
    assert!(w.client.is_established());
    assert_eq!(w.client.rto(), 3 * SEC);
    assert_eq!(w.server().rto(), 3 * SEC);
}

/// What each side sends, as (ms, payload bytes), in one direction.
fn log(w: &Wire, dir: Dir, from: u64) -> Vec<(u64, usize)> {
    w.sent(dir)
        .filter(|s| s.at >= from)
        .map(|s| (s.at / MS, s.seg.payload.len()))
        .collect()
}

/// Request–response over an established connection (t = 1 s), the server
/// answering the first request at once and not answering the next two.
///
/// `tcp-linux6`: the server's first data (1.1 s) starts quick-ACK mode
/// (min(65535 / 512, 16) = 16 quick ACKs, ato 40 ms): a pure ACK leaves at
/// once, before the response written in the same instant; the response,
/// written 0 ms after the request arrived (< ato), makes the server
/// interactive (ping-pong). The client's first data (1.2 s) is acknowledged
/// at once too. The second request (2.1 s) finds the server interactive: no
/// quick ACK; the delayed ACK waits ato = 40 ms (2.14 s); that timer firing
/// ends ping-pong mode, so the third request (3.1 s, more than an RTO after
/// the last data: quick ACKs topped up) is acknowledged at once.
///
/// `tcp`: no quick ACK; the response carries the ACK of the first request,
/// the client's ACK of the response waits 200 ms (1.4 s), and the server's
/// ACKs of the unanswered requests 200 ms (2.3 s, 3.3 s).
#[test]
fn quick_acks_and_the_adaptive_delayed_ack() {
    for (cfg, to_client, to_server) in [
        (
            exact_timers(Mechanisms::LINUX6),
            vec![(1100, 0), (1100, 64), (2140, 0), (3100, 0)],
            vec![(1000, 8), (1200, 0), (2000, 8), (3000, 8)],
        ),
        (
            exact_timers(Mechanisms::THESIS),
            vec![(1100, 64), (2300, 0), (3300, 0)],
            vec![(1000, 8), (1400, 0), (2000, 8), (3000, 8)],
        ),
    ] {
        let mut w = established(cfg);
        assert_eq!(w.client.rto(), 600 * MS);
        w.client.send(&[1; 8]);
        w.run_until(1100 * MS);
        w.server().send(&[2; 64]);
        w.run_until(2 * SEC);
        w.client.send(&[3; 8]);
        w.run_until(3 * SEC);
        w.client.send(&[4; 8]);
        w.run_until(4 * SEC);
        assert_eq!(log(&w, Dir::ToClient, SEC), to_client);
        assert_eq!(log(&w, Dir::ToServer, SEC), to_server);
    }
}

/// ato doubles when the delayed-ACK timer fires and the timer follows it
/// (`tcp-linux:frto+prr+ato`: the adaptive timer without quick ACKs; Nagle
/// off so that two 8-byte writes 100 ms apart both leave). The first
/// segment (1.1 s) sets ato = 40 ms: ACK at 1.14 s, and the timer firing
/// doubles ato to min(80, RTO 600) = 80 ms; the second (1.2 s, 100 ms later:
/// not below ato) keeps it: min(80, SRTT 200, 200) = 80 ms, ACK at 1.28 s.
/// Constant 200 ms (`tcp`): the timer the first segment started (1.3 s)
/// acknowledges both.
#[test]
fn ato_doubles_on_the_timer() {
    let ato_only = exact_timers(Mechanisms {
        adaptive_ato: true,
        ..Mechanisms::THESIS
    });
    for (cfg, acks) in [
        (ato_only, vec![(1140, 0), (1280, 0)]),
        (exact_timers(Mechanisms::THESIS), vec![(1300, 0)]),
    ] {
        let mut w = established(TcpConfig {
            nagle: Nagle::Off,
            ..cfg
        });
        w.client.send(&[1; 8]);
        w.run_until(1100 * MS);
        w.client.send(&[2; 8]);
        w.run_until(2 * SEC);
        assert_eq!(log(&w, Dir::ToClient, SEC), acks);
    }
}

/// A connection whose first two SYNs (0 s, 1 s) are lost: the third (2 s)
/// is answered at 2.1 s and the client is established at 2.2 s with
/// cwnd 1 (more than one SYN retransmission, `tcp_init_transfer`), no RTT
/// sample (Karn) and the 3 s fallback RTO, so its probe timeout is 1 s
/// (`TCP_TIMEOUT_INIT` without SRTT). Segments for which `drop` holds are
/// lost too.
fn slow_start_up(
    m: Mechanisms,
    drop: impl Fn(Dir, &coapcc_tcp::Segment) -> bool + 'static,
) -> Wire {
    let mut w = Wire::new(exact_timers(m), 100 * MS);
    w.set_drop(move |d, s, i| (d == Dir::ToServer && i < 2) || drop(d, s));
    w.run_until(2200 * MS);
    assert!(w.client.is_established());
    assert_eq!((w.client.cwnd(), w.client.rto()), (256, 3 * SEC));
    w
}

/// The probe's new data is not held by a full cwnd (`tcp_send_loss_probe`
/// → `tcp_write_xmit` with `push_one` = 2, which forces a quota of one;
/// Linux 4.9 as 6.x): the client writes 2 bytes (the CSM) and then 8 (the
/// request) at 2.2 s; cwnd 1 and Nagle hold the 8 while the 2 are out, and
/// nothing comes back. The probe at 2.2 + 1 = 3.2 s sends the 8 bytes, as
/// the kernel's captures show, not the 2 bytes again; the RTO then counts
/// 3 s from the probe (6.2 s).
#[test]
fn the_probe_sends_new_data_past_a_full_cwnd() {
    for m in [Mechanisms::LINUX6, Mechanisms::DEBIAN9] {
        let mut w = slow_start_up(
            Mechanisms {
                initial_rto_1s: true,
                syn6: true,
                ..m
            },
            |d, s| d == Dir::ToClient && !s.flags.contains(coapcc_tcp::Flags::SYN),
        );
        w.client.send(&[1; 2]);
        w.flush();
        w.client.send(&[2; 8]);
        w.run_until(6 * SEC);
        let data: Vec<(u64, usize)> = log(&w, Dir::ToServer, 2200 * MS)
            .into_iter()
            .filter(|x| x.1 > 0)
            .collect();
        assert_eq!(data, [(2200, 2), (3200, 8)], "{}", m.joined());
        assert_eq!(w.client.stats().loss_probes, 1);
        // Two SYN timeouts so far; the data's first at 6.2 s.
        assert_eq!(w.client.stats().rto_expirations, 2);
        w.run_until(6200 * MS);
        assert_eq!(w.client.stats().rto_expirations, 3);
    }
}

/// An ACK that acknowledges nothing leaves a pending probe alone (Linux
/// 4.15+: `tcp_ack` re-arms the probe or RTO timer only with
/// `FLAG_SET_XMIT_TIMER`, set when data is acknowledged; the `tlp1`
/// switch). The client's 2 bytes (2.2 s) are lost; the server's 64 bytes,
/// written on accept and sent when its handshake completes (2.3 s), reach
/// the client at 2.4 s acknowledging nothing new. The probe stays due at
/// 2.2 + 1 = 3.2 s and resends the 2 bytes then; without `tlp1` that
/// arrival re-armed it 1 s later, at 3.4 s.
#[test]
fn an_ack_of_nothing_leaves_the_probe_where_it_was() {
    for (tlp1, probe) in [(true, 3200), (false, 3400)] {
        let m = Mechanisms {
            tlp1,
            ..Mechanisms::LINUX6
        };
        let mut first = true;
        let mut w = Wire::new(exact_timers(m), 100 * MS);
        w.server_on_accept = Some((vec![9; 64], false));
        w.set_drop(move |d, s, i| {
            let csm = d == Dir::ToServer && !s.payload.is_empty() && first;
            first &= !csm;
            (d == Dir::ToServer && i < 2) || csm
        });
        w.run_until(2200 * MS);
        assert_eq!(w.client.rto(), 3 * SEC);
        w.client.send(&[1; 2]);
        w.run_until(4 * SEC);
        assert_eq!(w.client_rx, vec![9; 64]);
        let data: Vec<(u64, usize)> = log(&w, Dir::ToServer, 2200 * MS)
            .into_iter()
            .filter(|x| x.1 > 0)
            .collect();
        assert_eq!(data, [(2200, 2), (probe, 2)], "tlp1 {tlp1}");
        assert_eq!(w.client.stats().loss_probes, 1);
    }
}
