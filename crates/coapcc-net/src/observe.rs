//! Observing a resource (RFC 7641) from a real UDP socket: the sans-IO
//! [`ObserveClient`] driven by tokio, for `coapcc client --observe`.
//!
//! [`observe`] registers (a Non-confirmable GET with Observe = 0), hands
//! each notification newer than the last one to a callback (the response to
//! the registration is the first), acknowledges Confirmable ones, registers
//! again when Max-Age passes without one, and stops after
//! [`ObserveOptions::notifications`], at [`ObserveOptions::duration`] or
//! when its `stop` future completes — whichever is first. It then
//! deregisters (a GET with Observe = 1) and waits at most
//! [`DEREGISTER_WAIT`] for the answer.
//!
//! A server that answers the registration without an Observe option does
//! not observe the resource for the client: [`observe`] fails with a
//! message saying so.

use std::future::Future;
use std::net::SocketAddr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Result};
use coapcc_link::rng::SimRng;
use coapcc_proto::message::{peek_header, Code, MessageType};
use coapcc_proto::observe::{
    Cancel, Ending, ObserveClient, ObserveClientConfig, ObserveClientEvent,
};
use coapcc_proto::Nanos;
use tokio::net::UdpSocket;
use tokio::time::Instant;

use crate::clock::Clock;
use crate::RECV_BUFFER;

/// How long the deregistration waits for its answer (it is sent once, as a
/// Non-confirmable request).
pub const DEREGISTER_WAIT: Duration = Duration::from_secs(5);

/// What to observe and for how long.
#[derive(Clone, Debug)]
pub struct ObserveOptions {
    /// Stop after this many notifications (the registration's response
    /// included); `None`: no count.
    pub notifications: Option<u64>,
    /// Stop after this long; `None`: no bound.
    pub duration: Option<Duration>,
    /// Fail if the registration gets no response within this long.
    pub first_response: Duration,
    /// Token length (1 to 8 bytes).
    pub token_len: u8,
    /// Seed of the token and the first Message ID.
    pub seed: u64,
}

/// One notification handed over.
#[derive(Clone, Debug, PartialEq)]
pub struct Notification {
    /// Its Observe value.
    pub seq: u32,
    /// Its message type: CON, NON (or ACK, a response to a Confirmable
    /// registration, which this client does not send).
    pub mtype: MessageType,
    /// Its code.
    pub code: Code,
    /// Its payload.
    pub payload: Vec<u8>,
    /// When it arrived, since the start of the observation.
    pub at: Duration,
    /// Arrival minus the time a representation of
    /// [`crate::observed::Observable`] (`N T`) carries, in seconds
    /// (negative if the clocks disagree); `None` for other payloads.
    pub delay: Option<f64>,
}

/// How an observation went.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ObserveReport {
    /// Notifications handed over (the registration's response included).
    pub notifications: u64,
    /// Notifications older than one handed over before (RFC 7641 §3.4).
    pub discarded: u64,
    /// Registrations sent again because Max-Age passed (§3.3.1).
    pub reregistrations: u64,
    /// Whether the deregistration was answered within [`DEREGISTER_WAIT`].
    pub deregistered: bool,
    /// The observation ended before it was cancelled: the code of the
    /// response that ended it (a 2.xx without Observe, or an error code).
    pub ended_by: Option<Code>,
}

/// The delay of an `N T` payload (T in microseconds since the Unix epoch)
/// arriving now, in seconds.
pub fn delay_of(payload: &[u8]) -> Option<f64> {
    let text = std::str::from_utf8(payload).ok()?;
    let mut parts = text.split(' ');
    let (_, t) = (parts.next()?.parse::<u64>().ok()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    let t = t.parse::<u64>().ok()?;
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .ok()?
        .as_micros() as f64;
    Some((now - t as f64) / 1e6)
}

/// Observes `path` at `peer` from `socket` (see the module docs); `on`
/// sees each notification.
pub async fn observe(
    socket: &UdpSocket,
    peer: SocketAddr,
    path: &str,
    opts: &ObserveOptions,
    mut on: impl FnMut(&Notification),
    stop: impl Future<Output = ()>,
) -> Result<ObserveReport> {
    let clock = Clock::start();
    let mut rng = SimRng::new(opts.seed);
    let config = ObserveClientConfig {
        cancel_timeout: DEREGISTER_WAIT.as_nanos() as Nanos,
        ..ObserveClientConfig::default()
    };
    let mut client = ObserveClient::new(config, rng.next_u64() as u16);
    let token = rng.next_u64().to_be_bytes();
    let token = &token[..usize::from(opts.token_len.clamp(1, 8))];
    let id = client.observe(clock.now(), peer, token, path)?;
    let mut report = ObserveReport::default();
    let first_deadline = Instant::now() + opts.first_response;
    let end = opts.duration.map(|d| Instant::now() + d);
    let mut cancelling = false;
    let mut tx = vec![0u8; RECV_BUFFER];
    let mut rx = vec![0u8; RECV_BUFFER];
    let mut last_type = MessageType::Non;
    tokio::pin!(stop);
    loop {
        while let Some(t) = client.poll_transmit(&mut tx) {
            let _ = socket.send_to(&tx[..t.len], t.peer).await;
        }
        while let Some(ev) = client.poll_event() {
            match ev {
                ObserveClientEvent::Notification {
                    seq, code, payload, ..
                } => {
                    report.notifications += 1;
                    let n = Notification {
                        seq,
                        mtype: last_type,
                        code,
                        delay: delay_of(&payload),
                        payload,
                        at: Duration::from_nanos(clock.now()),
                    };
                    on(&n);
                }
                ObserveClientEvent::Discarded { .. } => report.discarded += 1,
                ObserveClientEvent::Reregistered { .. } => report.reregistrations += 1,
                ObserveClientEvent::Ended { reason, code, .. } => match reason {
                    Ending::Cancelled => {
                        report.deregistered = code.is_some();
                        return Ok(report);
                    }
                    Ending::NotObserved if report.notifications == 0 => bail!(
                        "/{} at {peer} is not observed: the response ({}) carries no Observe \
                         option (RFC 7641 §3.2)",
                        path.trim_start_matches('/'),
                        code.map_or("none".to_string(), |c| c.to_string())
                    ),
                    Ending::NotObserved | Ending::Error => {
                        report.ended_by = code;
                        return Ok(report);
                    }
                },
            }
        }
        if !cancelling {
            let done = opts
                .notifications
                .is_some_and(|n| report.notifications >= n)
                || end.is_some_and(|e| Instant::now() >= e);
            if done {
                cancelling = true;
                client.cancel(clock.now(), id, Cancel::Deregister);
                continue;
            }
            if report.notifications == 0 && Instant::now() >= first_deadline {
                bail!(
                    "no response to the registration from {peer} within {:.1} s",
                    opts.first_response.as_secs_f64()
                );
            }
        }
        let mut wake = client
            .poll_timeout()
            .map_or(first_deadline, |d| clock.instant(d));
        if !cancelling {
            if report.notifications == 0 {
                wake = wake.min(first_deadline);
            }
            if let Some(e) = end {
                wake = wake.min(e);
            }
        }
        tokio::select! {
            r = socket.recv_from(&mut rx) => {
                if let Ok((n, from)) = r {
                    if let Some(h) = peek_header(&rx[..n]) {
                        last_type = h.mtype;
                    }
                    client.handle_datagram(clock.now(), from, &rx[..n]);
                }
            }
            _ = tokio::time::sleep_until(wake) => {
                let now = clock.now();
                if client.poll_timeout().is_some_and(|d| d <= now) {
                    client.handle_timeout(now);
                }
            }
            _ = &mut stop, if !cancelling => {
                cancelling = true;
                client.cancel(clock.now(), id, Cancel::Deregister);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::Resources;
    use crate::server::{self, ServerOptions};

    fn opts(n: u64) -> ObserveOptions {
        ObserveOptions {
            notifications: Some(n),
            duration: Some(Duration::from_secs(10)),
            first_response: Duration::from_secs(5),
            token_len: 4,
            seed: 7,
        }
    }

    /// Against coapcc's own server: notifications every 50 ms, every
    /// second one Confirmable and acknowledged, in order; the
    /// deregistration is answered and leaves no observer.
    #[tokio::test]
    async fn observes_our_server_and_deregisters() {
        let mut r = Resources::new();
        r.add_spec("o=observe:50ms:2").unwrap();
        r.add_spec("plain=3").unwrap();
        let h = server::spawn("127.0.0.1:0".parse().unwrap(), ServerOptions::default(), r).unwrap();
        let socket = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let mut seen = Vec::new();
        let report = observe(
            &socket,
            h.addr(),
            "o",
            &opts(6),
            |n| seen.push(n.clone()),
            std::future::pending(),
        )
        .await
        .unwrap();
        assert_eq!(report.notifications, 6);
        assert!(report.deregistered, "{report:?}");
        assert_eq!(report.ended_by, None);
        assert!(seen.windows(2).all(|w| w[0].seq < w[1].seq), "{seen:?}");
        assert!(seen.iter().any(|n| n.mtype == MessageType::Con), "{seen:?}");
        assert!(seen.iter().all(|n| n.delay.is_some_and(|d| d.abs() < 1.0)));
        let s = h.snapshot();
        assert_eq!(s.observe.observers, 0, "{s:?}");
        assert_eq!(s.observe.deregistered, 1, "{s:?}");
        assert!(s.observe.acknowledged >= 1, "{s:?}");
        // A resource that is not observable: a clear error.
        let e = observe(
            &socket,
            h.addr(),
            "plain",
            &opts(2),
            |_| {},
            std::future::pending(),
        )
        .await
        .unwrap_err();
        assert!(e.to_string().contains("is not observed"), "{e}");
        h.stop();
    }

    #[test]
    fn delays_of_representations() {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
        let p = format!("12 {}", now.as_micros() - 250_000);
        let d = delay_of(p.as_bytes()).unwrap();
        assert!((0.25..1.25).contains(&d), "{d}");
        assert_eq!(delay_of(b"Nov 28 09:00:00"), None);
        assert_eq!(delay_of(b"1 2 3"), None);
    }
}
