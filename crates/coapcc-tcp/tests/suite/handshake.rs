//! Three-way handshake: timing, SYN / SYN-ACK losses and retries, the
//! handshake's RTT sample, and the RTO and window it leaves for data
//! (docs/spec/transport-tcp-spec.md §2).

use crate::common;
use coapcc_tcp::{AbortReason, Due, Flags, Segment, TcpConfig, TcpSocket, TcpState};
use common::*;

fn syn_times(w: &Wire, dir: Dir) -> Vec<u64> {
    w.sent(dir)
        .filter(|s| s.seg.flags.contains(Flags::SYN))
        .map(|s| s.at)
        .collect()
}

#[test]
fn clean_handshake_samples_rtt_on_both_sides() {
    let mut w = Wire::new(linux_exact_timers(), 100 * MS);
    w.run_until(SEC);
    assert_eq!(w.client.state(), TcpState::Established);
    assert_eq!(w.server().state(), TcpState::Established);
    let log: Vec<_> = w
        .log
        .iter()
        .map(|s| (s.at, s.dir, s.seg.wire_len()))
        .collect();
    assert_eq!(
        log,
        vec![
            // 40 bytes of headers + MSS (4) + NOP and window scale (4,
            // `tcp_window_scaling` = 1, 4.9's default): `tcp` announces no
            // SACK.
            (0, Dir::ToServer, 48),
            (100 * MS, Dir::ToClient, 48),
            (200 * MS, Dir::ToServer, 40),
        ]
    );
    // With SACK (Debian 9's defaults, a 6.x host): + NOP NOP
    // SACK-permitted (4) on both SYNs: 52 bytes, as the kernel
    // cross-check's captures show; without window scaling (the spec's
    // sizes) 4 fewer; model 2's profile has neither option.
    let mut nosack = TcpConfig::linux6();
    if let Some(m) = &mut nosack.linux {
        m.set("sack", false);
    }
    let mut no_wscale = TcpConfig::linux();
    if let Some(m) = &mut no_wscale.linux {
        m.set("wscale", false);
    }
    for (cfg, syn) in [
        (TcpConfig::debian9(), 52),
        (TcpConfig::linux6(), 52),
        (nosack, 48),
        (no_wscale, 44),
        (TcpConfig::newreno(), 44),
    ] {
        let mut n = Wire::new(cfg, 100 * MS);
        n.run_until(SEC);
        let sizes: Vec<_> = n.log.iter().map(|s| s.seg.wire_len()).collect();
        assert_eq!(sizes, vec![syn, syn, 40]);
    }
    // R = 200 ms: RTO = R + max(2R, 200 ms) = 600 ms on both sides.
    assert_eq!(w.client.srtt(), Some(200 * MS));
    assert_eq!(w.client.rto(), 600 * MS);
    assert_eq!(w.server().rto(), 600 * MS);
    assert_eq!(w.client.cwnd(), 10 * 256);
    assert_eq!(w.client.mss(), 256);
    assert!(w.client.poll_timeout().is_none());
}

#[test]
fn syn_losses_retry_at_2_4_8_seconds() {
    let mut w = Wire::new(linux_exact_timers(), 100 * MS);
    w.set_drop(|d, _, i| d == Dir::ToServer && i < 3);
    w.run_until(30 * SEC);
    assert_eq!(
        syn_times(&w, Dir::ToServer),
        vec![0, 2 * SEC, 6 * SEC, 14 * SEC]
    );
    assert_eq!(w.client.stats().syn_retransmissions, 3);
    assert_eq!(w.client.state(), TcpState::Established);
    // No RTT sample (Karn): data starts with the 3 s fallback RTO, and more
    // than one SYN retransmission leaves a 1-MSS initial window.
    assert_eq!(w.client.srtt(), None);
    assert_eq!(w.client.rto(), 3 * SEC);
    assert_eq!(w.client.cwnd(), 256);
    // The server's SYN-ACK was not retransmitted: it sampled 200 ms.
    assert_eq!(w.server().srtt(), Some(200 * MS));
    assert_eq!(w.server().cwnd(), 2560);
}

#[test]
fn syn_retries_stop_after_40_with_120s_cap() {
    let mut c = TcpSocket::connect(0, linux_exact_timers());
    let mut times = Vec::new();
    let mut now = 0;
    loop {
        while let Some(s) = c.poll_transmit(now) {
            assert!(s.flags.contains(Flags::SYN));
            times.push(now);
        }
        match c.poll_timeout() {
            Some(t) => {
                now = t;
                c.handle_timeout(now);
            }
            None => break,
        }
    }
    assert_eq!(times.len(), 41);
    assert_eq!(
        &times[..7],
        &[0, 2 * SEC, 6 * SEC, 14 * SEC, 30 * SEC, 62 * SEC, 126 * SEC]
    );
    assert_eq!(times[7] - times[6], 120 * SEC);
    // Given up at the 41st expiry: 2+4+…+64 + 35·120 = 4326 s.
    assert_eq!(now, 4326 * SEC);
    assert_eq!(c.state(), TcpState::Closed);
    assert_eq!(c.abort_reason(), Some(AbortReason::HandshakeTimeout));
    assert_eq!(c.stats().syn_retransmissions, 40);
}

#[test]
fn synack_retries_on_timer_and_at_once_on_duplicate_syn() {
    let mut c = TcpSocket::connect(0, linux_exact_timers());
    let syn = c.poll_transmit(0).unwrap();
    let mut s = TcpSocket::accept(0, linux_exact_timers(), &syn).unwrap();
    let sa = s.poll_transmit(0).unwrap();
    assert_eq!(sa.flags, Flags::SYN | Flags::ACK);
    assert_eq!(sa.ack, syn.seq.wrapping_add(1));
    assert!(s.poll_transmit(0).is_none());
    assert_eq!(s.poll_timeout(), Some(2 * SEC));
    s.handle_timeout(2 * SEC);
    assert!(s.poll_transmit(2 * SEC).unwrap().flags.contains(Flags::SYN));
    assert_eq!(s.poll_timeout(), Some(6 * SEC));
    // The client's retransmitted SYN arrives: counted, answered at once,
    // and the SYN-ACK timer restarts from now with the backed-off 4 s
    // (`tcp_check_req`): 3 + 4 = 7 s.
    s.handle_segment(3 * SEC, &syn);
    assert_eq!(s.stats().dup_syns, 1);
    assert!(s.poll_transmit(3 * SEC).unwrap().flags.contains(Flags::SYN));
    assert_eq!(s.poll_timeout(), Some(7 * SEC));
    assert_eq!(s.stats().synack_retransmissions, 2);
    // Another copy 200 ms later: counted, not answered (at most one answer
    // per 500 ms, `tcp_oow_rate_limited`), the timer left alone.
    s.handle_segment(3200 * MS, &syn);
    assert_eq!(s.stats().dup_syns, 2);
    assert!(s.poll_transmit(3200 * MS).is_none());
    assert_eq!(s.poll_timeout(), Some(7 * SEC));
    // 500 ms after the last answer it is answered again.
    s.handle_segment(3500 * MS, &syn);
    assert!(s
        .poll_transmit(3500 * MS)
        .unwrap()
        .flags
        .contains(Flags::SYN));
    assert_eq!(s.poll_timeout(), Some(7500 * MS));
    assert_eq!(s.stats().synack_retransmissions, 3);
    s.handle_timeout(7500 * MS);
    s.poll_transmit(7500 * MS).unwrap();
    assert_eq!(s.poll_timeout(), Some(15_500 * MS));
}

#[test]
fn synack_loss_over_the_wire() {
    let mut w = Wire::new(linux_exact_timers(), 150 * MS);
    w.set_drop(|d, _, i| d == Dir::ToClient && i < 2);
    w.run_until(10 * SEC);
    // SYN-ACK at 0.15 lost; the client's SYN retry (2.0) arrives at 2.15,
    // just before the server's own timer: answered (lost too), and the timer
    // restarted from now with its 2 s; its copy at 4.15 gets through.
    assert_eq!(
        syn_times(&w, Dir::ToClient),
        vec![150 * MS, 2150 * MS, 4150 * MS]
    );
    assert_eq!(w.server().stats().dup_syns, 1);
    assert_eq!(w.server().stats().synack_retransmissions, 2);
    assert_eq!(w.client.state(), TcpState::Established);
    assert_eq!(w.server().state(), TcpState::Established);
    // Karn on both sides: no handshake sample.
    assert_eq!(w.client.srtt(), None);
    assert_eq!(w.server().srtt(), None);
    assert_eq!(w.server().rto(), 3 * SEC);
    // One SYN retransmission: the client keeps the 10-segment window.
    assert_eq!(w.client.cwnd(), 2560);
}

#[test]
fn duplicate_synack_is_counted_and_acked() {
    let mut c = TcpSocket::connect(0, linux_exact_timers());
    let syn = c.poll_transmit(0).unwrap();
    let mut s = TcpSocket::accept(0, linux_exact_timers(), &syn).unwrap();
    let sa = s.poll_transmit(0).unwrap();
    c.handle_segment(MS, &sa);
    let ack = c.poll_transmit(MS).unwrap();
    assert!(ack.is_pure_ack());
    assert!(c.poll_transmit(MS).is_none());
    c.handle_segment(2 * MS, &sa);
    assert_eq!(c.stats().dup_synacks, 1);
    let again = c.poll_transmit(2 * MS).unwrap();
    assert!(again.is_pure_ack());
    assert_eq!(again.ack, ack.ack);
}

/// `tcp`'s SYN timer on Linux's timer wheel (4 ms jiffies): the 2 s RTO
/// (500 jiffies, level 1, 8-jiffy buckets) fires at
/// `((500 >> 3) + 1) << 3` = 504 → 2.016 s; 4 s later (level 2, 64-jiffy
/// buckets) at `((1504 >> 6) + 1) << 6` = 1536 → 6.144 s; 8 s later at
/// `((3536 >> 6) + 1) << 6` = 3584 → 14.336 s.
#[test]
fn syn_retries_fire_on_the_timer_wheel() {
    let mut w = Wire::new(TcpConfig::linux(), 100 * MS);
    w.set_drop(|d, s, _| d == Dir::ToServer && s.flags.contains(Flags::SYN));
    w.run_until(15 * SEC);
    let syns: Vec<u64> = w
        .sent(Dir::ToServer)
        .filter(|s| s.seg.flags.contains(Flags::SYN))
        .map(|s| s.at)
        .collect();
    assert_eq!(syns, vec![0, 2016 * MS, 6144 * MS, 14_336 * MS]);
}

/// `tcp` with `hz1000` (1 ms jiffies, the same levels in jiffies): the 2 s
/// RTO (2000 jiffies, 504 ≤ 2000 < 4032: level 2, 64-jiffy buckets) fires at
/// `((2000 >> 6) + 1) << 6` = 2048 → 2.048 s; 4 s later (expires 6048,
/// distance 4000: level 2) at `((6048 >> 6) + 1) << 6` = 6080 → 6.080 s; 8 s
/// later (expires 14080, distance 8000 ≥ 4032: level 3, 512-jiffy buckets)
/// at `((14080 >> 9) + 1) << 9` = 14336 → 14.336 s.
#[test]
fn syn_retries_fire_on_the_1000_hz_wheel() {
    let cfg = TcpConfig::with_mechanisms(coapcc_tcp::Mechanisms {
        hz1000: true,
        ..coapcc_tcp::Mechanisms::THESIS
    });
    let mut w = Wire::new(cfg, 100 * MS);
    w.set_drop(|d, s, _| d == Dir::ToServer && s.flags.contains(Flags::SYN));
    w.run_until(15 * SEC);
    assert_eq!(
        syn_times(&w, Dir::ToServer),
        vec![0, 2048 * MS, 6080 * MS, 14_336 * MS]
    );
}

/// A copy of the SYN 300 ms after the server answered the previous copy,
/// arriving once the handshake is complete: `tcp` keeps the stamp of that
/// answer (1.0 s) and stays silent (1.3 s < 1.0 + 0.5 s); with `oowreset`
/// the child socket starts without one (`tcp_create_openreq_child`) and
/// answers with an ACK.
#[test]
fn oowreset_gives_the_established_socket_a_fresh_stamp() {
    for (reset, answered) in [(false, false), (true, true)] {
        let cfg = exact_timers(coapcc_tcp::Mechanisms {
            oow_reset: reset,
            ..coapcc_tcp::Mechanisms::THESIS
        });
        let mut c = TcpSocket::connect(0, cfg.clone());
        let syn = c.poll_transmit(0).unwrap();
        let mut s = TcpSocket::accept(0, cfg, &syn).unwrap();
        s.poll_transmit(0).unwrap(); // the SYN-ACK, lost
        s.handle_segment(SEC, &syn); // a copy: answered, stamp 1.0 s
        let sa = s.poll_transmit(SEC).unwrap();
        assert_eq!(sa.flags, Flags::SYN | Flags::ACK);
        c.handle_segment(1100 * MS, &sa);
        let ack = c.poll_transmit(1100 * MS).unwrap();
        s.handle_segment(1200 * MS, &ack);
        assert_eq!(s.state(), TcpState::Established);
        s.handle_segment(1300 * MS, &syn);
        assert_eq!(s.stats().dup_syns, 2);
        let reply = s.poll_transmit(1300 * MS);
        assert_eq!(reply.is_some(), answered, "oowreset {reset}");
        assert!(reply.is_none_or(|r| r.is_pure_ack()));
    }
}

/// The SYN timer's level on the wheel: the first (2 s, 500 jiffies) waits
/// in level 1, the second (4 s, 1000 jiffies) in level 2; off the wheel a
/// timer has none (`docs/decisions/tcp-choices.md`, "Timers of one bucket, last
/// armed first").
#[test]
fn syn_timers_tell_their_wheel_level() {
    let mut s = TcpSocket::connect(0, TcpConfig::linux());
    let mut seg = Segment::default();
    assert!(s.poll_transmit_into(0, &mut seg));
    assert_eq!(
        s.poll_timer(),
        Some(Due {
            at: 2016 * MS,
            level: Some(1)
        })
    );
    s.handle_timeout(2016 * MS);
    assert!(s.poll_transmit_into(2016 * MS, &mut seg));
    assert_eq!(
        s.poll_timer(),
        Some(Due {
            at: 6144 * MS,
            level: Some(2)
        })
    );
    let mut e = TcpSocket::connect(0, linux_exact_timers());
    assert!(e.poll_transmit_into(0, &mut seg));
    assert_eq!(
        e.poll_timer(),
        Some(Due {
            at: 2000 * MS,
            level: None
        })
    );
}

#[test]
fn the_window_scale_option_is_answered_only_when_the_syn_had_it() {
    // A 6.x host (`wscale` on) sends it on its SYN and answers it; to a SYN
    // without it (`tcp` without `wscale`: the spec's sizes), its SYN-ACK
    // has none (Linux sets `wscale_ok` from the SYN's options).
    let syn_of = |cfg: TcpConfig| {
        let mut c = TcpSocket::connect(0, cfg);
        c.poll_transmit(0).expect("the SYN")
    };
    let with = syn_of(TcpConfig::linux6());
    let without = syn_of(TcpConfig::with_mechanisms(coapcc_tcp::Mechanisms {
        wscale: false,
        ..coapcc_tcp::Mechanisms::THESIS
    }));
    assert!(with.wscale && with.flags == Flags::SYN);
    assert!(!without.wscale);
    assert_eq!(
        with.wire_len() - without.wire_len(),
        4 + 4,
        "SACK-permitted and window scale"
    );
    for (syn, answered) in [(&with, true), (&without, false)] {
        let mut s = TcpSocket::accept(0, TcpConfig::linux6(), syn).unwrap();
        let synack = s.poll_transmit(0).expect("the SYN-ACK");
        assert!(synack.flags.contains(Flags::SYN | Flags::ACK));
        assert_eq!(synack.wscale, answered);
    }
}
