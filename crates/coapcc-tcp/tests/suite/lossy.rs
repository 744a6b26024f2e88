//! Two sockets over a lossy in-memory wire: whatever the loss pattern, both
//! byte streams arrive intact and in order, and both sides close, with
//! Linux 4.9's recovery as the thesis configured it (`tcp`, no SACK), with
//! Debian 9's defaults (`tcp-linux49-debian9`, SACK), as a Linux 6.x host
//! (`tcp-linux6`) and with model 2's NewReno (`tcp-newreno`).

use crate::common;
use coapcc_tcp::{TcpConfig, TcpState};
use common::*;
use proptest::prelude::*;

fn run(
    up: Vec<u8>,
    down: Vec<u8>,
    lose_up: Vec<bool>,
    lose_down: Vec<bool>,
    delay_ms: u64,
    nagle_off: bool,
    profile: u8,
) -> Wire {
    let mut cfg = config(profile);
    cfg.isn = 0xFFFF_FF00; // wraps during the transfer
                           // TIME-WAIT outlasts every retransmission, so that a last ACK lost
                           // after the peer's TIME-WAIT ended (which real TCP answers with RST)
                           // cannot end the run early: the property is about the streams.
    cfg.time_wait = 1_000_000 * SEC;
    if nagle_off {
        cfg.nagle = coapcc_tcp::Nagle::Off;
    }
    let mut w = Wire::new(cfg, delay_ms * MS);
    w.server_cfg.isn = 0x7FFF_FFF0;
    w.set_drop(move |d, _, i| match d {
        Dir::ToServer => lose_up.get(i).copied().unwrap_or(false),
        Dir::ToClient => lose_down.get(i).copied().unwrap_or(false),
    });
    w.server_on_accept = Some((down, true));
    assert_eq!(w.client.send(&up), up.len());
    w.client.close();
    let done = |w: &Wire| {
        let closed = |s: TcpState| matches!(s, TcpState::Closed | TcpState::TimeWait);
        !(closed(w.client.state()) && w.server.as_ref().is_some_and(|s| closed(s.state())))
    };
    w.run_while(200_000 * SEC, done);
    w
}

/// 0: `tcp-newreno`, 1: `tcp`, 2: `tcp-linux49-debian9`, 3: `tcp-linux6`.
fn config(profile: u8) -> TcpConfig {
    match profile {
        0 => TcpConfig::newreno(),
        1 => TcpConfig::linux(),
        2 => TcpConfig::debian9(),
        _ => TcpConfig::linux6(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]
    #[test]
    fn streams_survive_any_loss_pattern(
        up in proptest::collection::vec(any::<u8>(), 1..3000),
        down in proptest::collection::vec(any::<u8>(), 0..3000),
        lose_up in proptest::collection::vec(proptest::bool::weighted(0.3), 0..80),
        lose_down in proptest::collection::vec(proptest::bool::weighted(0.3), 0..80),
        delay_ms in 1u64..300,
        nagle_off in any::<bool>(),
        profile in 0u8..4,
    ) {
        let w = run(up.clone(), down.clone(), lose_up, lose_down, delay_ms, nagle_off, profile);
        let sack = config(profile).linux.is_some_and(|m| m.sack);
        prop_assert_eq!(w.client.abort_reason(), None, "sizes {} {}", up.len(), down.len());
        prop_assert_eq!(&w.server_rx, &up);
        prop_assert_eq!(&w.client_rx, &down);
        let srv = w.server.as_ref().unwrap();
        prop_assert!(w.client.recv_finished() && srv.recv_finished());
        prop_assert!(w.client.all_acked() && srv.all_acked());
        // Every segment respects the MSS; sizes are real.
        for s in &w.log {
            prop_assert!(s.seg.payload.len() <= 256);
            let syn = s.seg.flags.contains(coapcc_tcp::Flags::SYN);
            prop_assert_eq!(s.seg.mss.is_some(), syn);
            prop_assert_eq!(s.seg.sack_permitted, syn && sack);
            prop_assert_eq!(s.seg.wscale, syn && config(profile).linux.is_some_and(|m| m.wscale));
            prop_assert!(!syn || s.seg.sack.is_empty());
            prop_assert!(sack || s.seg.sack.is_empty());
            prop_assert_eq!(
                s.seg.wire_len(),
                40 + s.seg.payload.len()
                    + if syn { 4 } else { 0 }
                    + if s.seg.sack_permitted { 4 } else { 0 }
                    + if s.seg.wscale { 4 } else { 0 }
                    + if s.seg.sack.is_empty() { 0 } else { 4 + 8 * s.seg.sack.len() }
            );
        }
    }
}

#[test]
fn heavy_loss_in_both_directions() {
    let up: Vec<u8> = (0..5000u32).map(|i| (i * 7) as u8).collect();
    let down: Vec<u8> = (0..4000u32).map(|i| (i * 13) as u8).collect();
    let pattern = |seed: u32| -> Vec<bool> {
        (0..400u32)
            .map(|i| (i.wrapping_mul(2654435761) ^ seed) % 10 < 3)
            .collect()
    };
    for profile in 0..4 {
        let w = run(
            up.clone(),
            down.clone(),
            pattern(1),
            pattern(2),
            50,
            false,
            profile,
        );
        assert_eq!(w.server_rx, up);
        assert_eq!(w.client_rx, down);
        let c = w.client.stats();
        assert!(c.retransmitted_segments > 0);
        assert!(c.rto_expirations > 0 || c.fast_retransmits > 0);
    }
}
