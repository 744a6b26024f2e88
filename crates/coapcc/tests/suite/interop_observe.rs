//! Observe (RFC 7641) with real peers on loopback: coapcc's client
//! observing libcoap's `/time` and an aiocoap server's `/obs`, and
//! libcoap's and aiocoap's clients observing coapcc's server. Every
//! observation is checked for order, acknowledgement of Confirmable
//! notifications and the observer's removal at the end.
//!
//! A test whose peer is not installed prints `SKIPPED …` and passes (it
//! fails with `COAPCC_REQUIRE_PEERS` set); CI installs libcoap3-bin and
//! aiocoap. Every observation is bounded by a notification count and a
//! duration; peers are killed when their guard drops.

use crate::net_support;

use std::net::SocketAddr;
use std::process::Command;
use std::time::{Duration, Instant};

use coapcc_net::observe::{self, Notification, ObserveOptions, ObserveReport};
use coapcc_net::resources::Resources;
use coapcc_net::server::{self, ServerHandle, ServerOptions, Snapshot};
use coapcc_net::tokio;
use coapcc_proto::message::{Code, MessageType};
use net_support::*;

/// Observes `path` at `peer` for `n` notifications (at most 15 s).
fn observe_peer(peer: SocketAddr, path: &str, n: u64) -> (Vec<Notification>, ObserveReport) {
    let opts = ObserveOptions {
        notifications: Some(n),
        duration: Some(Duration::from_secs(15)),
        first_response: Duration::from_secs(5),
        token_len: 4,
        seed: 11,
    };
    rt().block_on(async {
        let socket = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let mut seen = Vec::new();
        let r = observe::observe(
            &socket,
            peer,
            path,
            &opts,
            |x| seen.push(x.clone()),
            std::future::pending(),
        )
        .await
        .unwrap();
        (seen, r)
    })
}

/// Checks an observation's notifications: `n` of them, 2.05, in order.
fn check_order(seen: &[Notification], r: &ObserveReport, n: u64) {
    assert_eq!(r.notifications, n, "{r:?}");
    assert_eq!(seen.len() as u64, n);
    assert!(seen.iter().all(|x| x.code == Code::CONTENT), "{seen:?}");
    assert!(
        seen.windows(2).all(|w| w[0].seq < w[1].seq),
        "Observe values in order: {seen:?}"
    );
    assert_eq!(r.ended_by, None, "{r:?}");
}

/// libcoap's `/time` changes every second and its notifications are
/// Confirmable (no `-N`): each is acknowledged, and the deregistration is
/// answered.
#[test]
fn our_client_observes_libcoap_time() {
    let Some((_peer, addr)) = libcoap_server() else {
        return skip(
            "our_client_observes_libcoap_time",
            "coap-server-notls not found",
        );
    };
    let (seen, r) = observe_peer(addr, "time", 3);
    check_order(&seen, &r, 3);
    assert!(
        seen.iter().any(|x| x.mtype == MessageType::Con),
        "libcoap notifies with CON by default: {seen:?}"
    );
    assert!(r.deregistered, "{r:?}");
    assert!(
        seen.iter().all(|x| x.delay.is_none()),
        "libcoap's time string carries no `N T`"
    );
}

/// The aiocoap peer's `/obs` changes every 200 ms with coapcc's `N T`
/// representation: the delay is derivable and small on loopback.
#[test]
fn our_client_observes_aiocoap() {
    let Some((_peer, addr)) = aiocoap_server() else {
        return skip(
            "our_client_observes_aiocoap",
            "python3 with aiocoap not found",
        );
    };
    let (seen, r) = observe_peer(addr, "obs", 5);
    check_order(&seen, &r, 5);
    // The first is the registration's response: the state may be older.
    assert!(
        seen[1..]
            .iter()
            .all(|x| x.delay.is_some_and(|d| d.abs() < 1.0)),
        "{seen:?}"
    );
    assert!(r.deregistered, "{r:?}");
}

/// Our server with a fast observable resource: every second notification
/// Confirmable.
fn fast_server() -> ServerHandle {
    let mut r = Resources::standard();
    r.add_spec("fast=observe:100ms:2").unwrap();
    server::spawn(any_port(), ServerOptions::default(), r).unwrap()
}

/// Waits (at most 5 s) until the server has no observer left.
fn no_observers_left(h: &ServerHandle) -> Snapshot {
    let end = Instant::now() + Duration::from_secs(5);
    while h.snapshot().observe.observers > 0 && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(20));
    }
    h.snapshot()
}

/// `coap-client-notls -s 2` observes `/fast` for 2 s: about 20
/// notifications, the Confirmable ones acknowledged, and libcoap
/// deregisters (or resets) at the end.
#[test]
fn libcoap_client_observes_our_server() {
    if !have("coap-client-notls") {
        return skip(
            "libcoap_client_observes_our_server",
            "coap-client-notls not found",
        );
    }
    let h = fast_server();
    let (ok, out, err) = run_bounded(Command::new("coap-client-notls").args([
        "-s",
        "2",
        &format!("coap://127.0.0.1:{}/fast", h.addr().port()),
    ]));
    assert!(ok, "{err}");
    assert!(!out.is_empty(), "libcoap printed no notification: {err}");
    let s = no_observers_left(&h).observe;
    assert_eq!(s.registered, 1, "{s:?}");
    assert!(s.notifications >= 10, "{s:?}");
    assert!(s.acknowledged >= 5, "{s:?}");
    assert_eq!(s.timed_out, 0, "{s:?}");
    assert_eq!(s.observers, 0, "{s:?}");
    assert_eq!(s.deregistered + s.reset, 1, "{s:?}");
    assert_eq!(h.stop().stats.malformed, 0);
}

/// aiocoap's client observes `/fast`: the registration's response and
/// notifications in order, each `N T` one change apart or more; after it
/// cancels, the server forgets it (a deregistration, or an RST of the next
/// notification).
#[test]
fn aiocoap_client_observes_our_server() {
    if !have_aiocoap() {
        return skip(
            "aiocoap_client_observes_our_server",
            "python3 with aiocoap not found",
        );
    }
    let h = fast_server();
    let port = h.addr().port();
    let script = format!(
        r#"
import asyncio, aiocoap
async def main():
    ctx = await aiocoap.Context.create_client_context()
    req = aiocoap.Message(code=aiocoap.GET, uri="coap://127.0.0.1:{port}/fast", observe=0)
    pr = ctx.request(req)
    r = await pr.response
    print(r.opt.observe, r.payload.decode())
    n = 0
    async for r in pr.observation:
        print(r.opt.observe, r.payload.decode())
        n += 1
        if n == 5:
            break
    pr.observation.cancel()
    await asyncio.sleep(0.5)
    await ctx.shutdown()
asyncio.run(asyncio.wait_for(main(), 15))
"#
    );
    let (ok, out, err) = run_bounded(Command::new("python3").args(["-c", &script]));
    assert!(ok, "{err}");
    let lines: Vec<Vec<u64>> = out
        .lines()
        .map(|l| l.split(' ').map(|x| x.parse().unwrap()).collect())
        .collect();
    assert_eq!(lines.len(), 6, "{out}");
    for w in lines.windows(2) {
        assert!(w[0][0] < w[1][0], "Observe values in order: {out}");
        assert!(w[0][1] < w[1][1], "change counters in order: {out}");
        assert!(w[0][2] < w[1][2], "timestamps in order: {out}");
    }
    let s = no_observers_left(&h).observe;
    assert_eq!(s.registered, 1, "{s:?}");
    assert_eq!(s.observers, 0, "{s:?}");
    assert_eq!(s.deregistered + s.reset, 1, "{s:?}");
    assert_eq!(s.timed_out, 0, "{s:?}");
    assert_eq!(h.stop().stats.malformed, 0);
}
