//! lwIP sockets (any variant, either peer profile) over a lossy in-memory
//! wire: unless a side gives up by lwIP's own limits, both byte streams
//! arrive intact and in order, and both sides close.

use crate::any_wire;
use any_wire::*;
use coapcc_tcp::lwip::{LwipBackoff, LwipLossWindow, FIRST_TIMER_DELAY};
use coapcc_tcp::{LwipConfig, SocketConfig, TcpConfig, TcpState};
use proptest::prelude::*;

struct Case {
    up: Vec<u8>,
    down: Vec<u8>,
    lose_up: Vec<bool>,
    lose_down: Vec<bool>,
    delay_ms: u64,
    variant: u8,
    linux_server: bool,
    nagle: bool,
}

fn run(c: &Case) -> Wire {
    let client = LwipConfig {
        isn: 0xFFFF_FF00, // wraps during the transfer
        backoff: if c.variant & 1 == 1 {
            LwipBackoff::TwoThenOnePointThree
        } else {
            LwipBackoff::Table
        },
        loss_window: if c.variant & 2 == 2 {
            LwipLossWindow::HalfMinCwnd
        } else {
            LwipLossWindow::OneMss
        },
        nagle: c.nagle,
        mtu: 296,
        ..LwipConfig::lwip()
    };
    let server = if c.linux_server {
        SocketConfig::Linux(TcpConfig {
            isn: 0x7FFF_FFF0,
            time_wait: 1_000_000 * SEC,
            ..TcpConfig::linux()
        })
    } else {
        SocketConfig::Lwip(LwipConfig {
            isn: 0x7FFF_FFF0,
            timer_origin: c.delay_ms * MS + FIRST_TIMER_DELAY,
            ..client.clone()
        })
    };
    let mut w = Wire::new(SocketConfig::Lwip(client), server, c.delay_ms * MS);
    let (lose_up, lose_down) = (c.lose_up.clone(), c.lose_down.clone());
    w.set_drop(move |d, _, i| match d {
        Dir::ToServer => lose_up.get(i).copied().unwrap_or(false),
        Dir::ToClient => lose_down.get(i).copied().unwrap_or(false),
    });
    w.server_on_accept = Some((c.down.clone(), false));
    w.server_closes_on_fin = true;
    assert_eq!(w.client.send(&c.up), c.up.len());
    let limit = 100_000 * SEC;
    // The client closes (lwIP's `tcp_close`: it reads no more) once it has
    // everything the server sends.
    let want = c.down.len();
    w.run_while(limit, |w| {
        !(w.client.is_established() && w.client_rx.len() == want)
            && w.client.state() != TcpState::Closed
    });
    w.client.close();
    let done = |s: TcpState| matches!(s, TcpState::Closed | TcpState::TimeWait);
    w.run_while(limit, |w| {
        !(done(w.client.state()) && w.server.as_ref().is_none_or(|s| done(s.state())))
    });
    w
}

fn check(c: &Case) -> Result<(), TestCaseError> {
    let w = run(c);
    if w.client.abort_reason().is_some()
        || w.server
            .as_ref()
            .is_some_and(|s| s.abort_reason().is_some())
    {
        // Given up by lwIP's limits: what arrived is still a prefix.
        prop_assert!(c.up.starts_with(&w.server_rx));
        prop_assert!(c.down.starts_with(&w.client_rx));
        return Ok(());
    }
    prop_assert_eq!(&w.server_rx, &c.up);
    prop_assert_eq!(&w.client_rx, &c.down);
    prop_assert!(w.client.all_acked());
    for s in &w.log {
        prop_assert!(s.seg.payload.len() <= 256);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn streams_survive_loss(
        up in proptest::collection::vec(any::<u8>(), 1..3000),
        down in proptest::collection::vec(any::<u8>(), 0..3000),
        lose_up in proptest::collection::vec(proptest::bool::weighted(0.25), 0..60),
        lose_down in proptest::collection::vec(proptest::bool::weighted(0.25), 0..60),
        delay_ms in 1u64..300,
        variant in 0u8..4,
        linux_server in any::<bool>(),
        nagle in any::<bool>(),
    ) {
        check(&Case { up, down, lose_up, lose_down, delay_ms, variant, linux_server, nagle })?;
    }
}

#[test]
fn heavy_loss_every_variant() {
    let pattern = |seed: u32| -> Vec<bool> {
        (0..300u32)
            .map(|i| i > 6 && (i.wrapping_mul(2654435761) ^ seed) % 10 < 3)
            .collect()
    };
    for variant in 0..4 {
        let c = Case {
            up: (0..5000u32).map(|i| (i * 7) as u8).collect(),
            down: (0..4000u32).map(|i| (i * 13) as u8).collect(),
            lose_up: pattern(1),
            lose_down: pattern(2),
            delay_ms: 50,
            variant,
            linux_server: false,
            nagle: true,
        };
        let w = run(&c);
        assert_eq!(w.client.abort_reason(), None, "variant {variant}");
        assert_eq!(w.server_rx, c.up);
        assert_eq!(w.client_rx, c.down);
        assert!(w.client.stats().retransmitted_segments > 0);
    }
}
