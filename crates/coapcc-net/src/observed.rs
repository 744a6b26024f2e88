//! Observable resources on the UDP server (RFC 7641): each one a
//! [`Subject`] whose representation changes every period, its notifications'
//! retransmissions timed by the server's congestion-control algorithm (one
//! instance per observing peer, [`ServerOptions::notify_algorithm`]).
//!
//! - **Representation**: `N T` in text/plain, `N` the change counter (0 when
//!   the resource was created, one more every period) and `T` the server's
//!   wall clock at change `N` in microseconds since the Unix epoch (the
//!   resource's creation time plus `N` periods). A client on a synchronised
//!   clock takes its own time at arrival minus `T` as the notification's
//!   delay. The representation is a function of the time alone, so the TCP
//!   listener's plain GET answers the same `N`.
//! - **Registration** (GET with Observe = 0), **deregistration** (GET with
//!   Observe = 1) and an RST answering a notification are the
//!   [`Subject`]'s, with its bounds: at most 4 observers per peer and 1024
//!   per resource.
//! - **Max-Age** is the period rounded up to whole seconds (at least 1), so
//!   a client that misses notifications registers again soon.
//!
//! Notifications go to registered observers without the amplification
//! bound's check (`docs/decisions/real-network-choices.md`): an observer
//! registered from a forged address receives at most `K − 1`
//! Non-confirmable notifications and one Confirmable one with its
//! retransmissions before it is removed.

use std::net::SocketAddr;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{anyhow, Result};
use coapcc_link::rng::SimRng;
use coapcc_proto::message::{option, Code, MessageView};
use coapcc_proto::observe::{
    ConfirmRule, NotifyTransmit, Removal, Subject, SubjectConfig, SubjectEvent,
};
use coapcc_proto::server::Response;
use coapcc_proto::Nanos;
use coapcc_workload::AlgorithmSpec;

use crate::clock::Clock;

/// The shortest period of an observable resource.
pub const MIN_PERIOD: Duration = Duration::from_millis(10);

/// The longest period of an observable resource (one day).
pub const MAX_PERIOD: Duration = Duration::from_secs(86_400);

/// An observable resource's definition: how often it changes, which
/// notifications are Confirmable, and when change 0 was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Observable {
    /// Time between changes.
    pub period: Duration,
    /// Every `every`-th notification to an observer is Confirmable.
    pub every: u32,
    /// Change 0, on the monotonic clock.
    epoch: Instant,
    /// Change 0, since the Unix epoch.
    epoch_unix: Duration,
}

impl Observable {
    /// A resource changing every `period` from now, every `every`-th
    /// notification Confirmable.
    pub fn new(period: Duration, every: u32) -> Self {
        Observable {
            period,
            every,
            epoch: Instant::now(),
            epoch_unix: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default(),
        }
    }

    /// Parses `PERIOD[:K]` (PERIOD as in [`parse_period`], K at least 1,
    /// default [`ConfirmRule::default`]'s).
    pub fn parse(spec: &str) -> Result<Self, String> {
        let (period, every) = match spec.split_once(':') {
            Some((p, k)) => (p, k),
            None => (spec, ""),
        };
        let period = parse_period(period)?;
        let every = if every.is_empty() {
            ConfirmRule::default().every
        } else {
            match every.parse::<u32>() {
                Ok(k) if k >= 1 => k,
                _ => {
                    return Err(format!(
                        "K: expected a whole number from 1, found `{every}`"
                    ))
                }
            }
        };
        Ok(Observable::new(period, every))
    }

    /// The change counter at `t`.
    pub fn change_at(&self, t: Instant) -> u64 {
        (t.saturating_duration_since(self.epoch).as_nanos() / self.period.as_nanos()) as u64
    }

    /// When change `n` happens.
    fn instant_of(&self, n: u64) -> Instant {
        self.epoch + self.after(n)
    }

    fn after(&self, n: u64) -> Duration {
        let nanos = self.period.as_nanos().saturating_mul(u128::from(n));
        Duration::from_nanos(nanos.min(u128::from(u64::MAX)) as u64)
    }

    /// The representation of change `n` (see the module docs).
    pub fn representation(&self, n: u64) -> Vec<u8> {
        let t = self.epoch_unix + self.after(n);
        format!("{n} {}", t.as_micros()).into_bytes()
    }

    /// Max-Age: the period in whole seconds, rounded up, at least 1.
    pub fn max_age(&self) -> u32 {
        let s = self.period.as_nanos().div_ceil(1_000_000_000);
        s.clamp(1, u128::from(u32::MAX)) as u32
    }
}

/// Parses a period: a number with `ms` or `s` (`500ms`, `1s`, `2.5s`; a
/// bare number is seconds), from [`MIN_PERIOD`] to [`MAX_PERIOD`].
pub fn parse_period(s: &str) -> Result<Duration, String> {
    let (number, scale) = match s.strip_suffix("ms") {
        Some(n) => (n, 1e-3),
        None => (s.strip_suffix('s').unwrap_or(s), 1.0),
    };
    let secs = number
        .trim()
        .parse::<f64>()
        .ok()
        .map(|v| v * scale)
        .filter(|v| v.is_finite())
        .ok_or_else(|| format!("period: expected e.g. 500ms or 1s, found `{s}`"))?;
    if secs < MIN_PERIOD.as_secs_f64() || secs > MAX_PERIOD.as_secs_f64() {
        return Err(format!(
            "period: expected {} ms to {} s, found `{s}`",
            MIN_PERIOD.as_millis(),
            MAX_PERIOD.as_secs()
        ));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Counters of the observable resources.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ObserveStats {
    /// Observers now, over all resources.
    pub observers: usize,
    /// Registrations taken (re-registrations included).
    pub registered: u64,
    /// Registrations refused by a bound (answered without Observe).
    pub refused: u64,
    /// Notifications sent, retransmissions included.
    pub notifications: u64,
    /// Of those, Confirmable retransmissions.
    pub retransmissions: u64,
    /// Confirmable notifications acknowledged.
    pub acknowledged: u64,
    /// Observers removed by a deregistration (GET with Observe = 1).
    pub deregistered: u64,
    /// Observers removed by an RST.
    pub reset: u64,
    /// Observers removed after an unacknowledged Confirmable notification.
    pub timed_out: u64,
}

struct Entry {
    path: String,
    spec: Observable,
    subject: Subject<SocketAddr, SimRng>,
    /// The change the subject holds.
    change: u64,
    payload: Vec<u8>,
}

/// The observable resources of one UDP server.
pub struct Observed {
    entries: Vec<Entry>,
    clock: Clock,
    stats: ObserveStats,
}

impl Observed {
    /// One subject per `(path, definition)`, their notifications timed by
    /// `algorithm` (refused if the registry does not know it or its
    /// parameters), on `clock`; `seed` draws the algorithms' randomness and
    /// the notifications' first Message IDs.
    pub fn new<'a>(
        observables: impl Iterator<Item = (&'a str, &'a Observable)>,
        algorithm: &AlgorithmSpec,
        clock: Clock,
        seed: u64,
    ) -> Result<Self> {
        let factory = crate::client::factory(algorithm)?;
        let mut rng = SimRng::new(seed);
        let now = clock.now();
        let mut entries = Vec::new();
        for (path, spec) in observables {
            let config = SubjectConfig {
                confirm: ConfirmRule {
                    every: spec.every,
                    ..ConfirmRule::default()
                },
                max_age: Some(spec.max_age()),
                ..SubjectConfig::default()
            };
            let mut subject = Subject::new(
                config,
                factory,
                SimRng::new(rng.next_u64()),
                rng.next_u64() as u16,
            )
            .map_err(|e| anyhow!("--notify-cc: {e}"))?;
            let change = spec.change_at(Instant::now());
            let payload = spec.representation(change);
            subject.set_state(now, Code::CONTENT, &payload);
            entries.push(Entry {
                path: path.to_string(),
                spec: *spec,
                subject,
                change,
                payload,
            });
        }
        Ok(Observed {
            entries,
            clock,
            stats: ObserveStats::default(),
        })
    }

    /// The clock the subjects' time comes from.
    pub fn clock(&self) -> Clock {
        self.clock
    }

    /// The counters.
    pub fn stats(&self) -> ObserveStats {
        self.stats
    }

    /// The observable resource a request's Uri-Path names, if any.
    pub fn find(&self, request: &MessageView<'_>) -> Option<usize> {
        self.entries.iter().position(|e| {
            let mut want = e.path.split('/').filter(|s| !s.is_empty());
            let mut got = request.path_segments();
            loop {
                match (want.next(), got.next()) {
                    (None, None) => return true,
                    (Some(a), Some(b)) if a.as_bytes() == b => {}
                    _ => return false,
                }
            }
        })
    }

    /// Answers a GET of resource `i` from `peer` at `now`: the current
    /// representation, with Observe when it registers the peer.
    pub fn answer(
        &mut self,
        i: usize,
        now: Nanos,
        peer: SocketAddr,
        request: &MessageView<'_>,
        response: &mut Response,
    ) {
        let e = &mut self.entries[i];
        let before = e.subject.stats();
        if let Some(registration) = e.subject.on_request(now, peer, request) {
            if let Some(o) = registration.response_option() {
                response.options.push(o);
            }
        }
        let after = e.subject.stats();
        self.stats.registered += after.registered - before.registered;
        self.stats.refused +=
            (after.refused_peer + after.refused_full) - (before.refused_peer + before.refused_full);
        response.code = Code::CONTENT;
        // text/plain is format 0: a uint option of value 0 is empty.
        response.options.push((option::CONTENT_FORMAT, Vec::new()));
        let max_age = e.spec.max_age().to_be_bytes();
        let skip = max_age.iter().take_while(|b| **b == 0).count();
        response
            .options
            .push((option::MAX_AGE, max_age[skip..].to_vec()));
        response.payload.extend_from_slice(&e.payload);
        self.drain_events();
    }

    /// Handles an Empty ACK or an RST from `from`; `false` if it answers no
    /// notification.
    pub fn handle_message(&mut self, now: Nanos, from: SocketAddr, msg: &MessageView<'_>) -> bool {
        let taken = self
            .entries
            .iter_mut()
            .any(|e| e.subject.handle_message(now, from, msg));
        self.drain_events();
        taken
    }

    /// The next deadline: a change or a retransmission.
    pub fn poll_timeout(&self) -> Option<Nanos> {
        self.entries
            .iter()
            .flat_map(|e| {
                let change = self.clock.since(tokio::time::Instant::from_std(
                    e.spec.instant_of(e.change + 1),
                ));
                [Some(change), e.subject.poll_timeout()]
            })
            .flatten()
            .min()
    }

    /// Changes the resources whose period has passed (to the latest change:
    /// a late timer skips none of the counter, only notifications) and fires
    /// the retransmission deadlines due at `now`.
    pub fn handle_timeout(&mut self, now: Nanos) {
        let wall = Instant::now();
        for e in &mut self.entries {
            let change = e.spec.change_at(wall);
            if change > e.change {
                e.change = change;
                e.payload = e.spec.representation(change);
                e.subject.set_state(now, Code::CONTENT, &e.payload);
            }
            if e.subject.poll_timeout().is_some_and(|d| d <= now) {
                e.subject.handle_timeout(now);
            }
        }
        self.drain_events();
    }

    /// Writes the next notification into `buf`.
    pub fn poll_transmit(&mut self, buf: &mut [u8]) -> Option<NotifyTransmit<SocketAddr>> {
        let sent = self
            .entries
            .iter_mut()
            .find_map(|e| e.subject.poll_transmit(buf))?;
        self.stats.notifications += 1;
        if sent.ordinal > 0 && sent.confirmable {
            self.stats.retransmissions += 1;
        }
        self.drain_events();
        Some(sent)
    }

    fn drain_events(&mut self) {
        for e in &mut self.entries {
            while let Some(ev) = e.subject.poll_event() {
                match ev {
                    SubjectEvent::Acknowledged { .. } => self.stats.acknowledged += 1,
                    SubjectEvent::Replaced { .. } => {}
                    SubjectEvent::Removed { reason, .. } => match reason {
                        Removal::Deregistered => self.stats.deregistered += 1,
                        Removal::Reset => self.stats.reset += 1,
                        Removal::Timeout => self.stats.timed_out += 1,
                        Removal::Ended => {}
                    },
                }
            }
        }
        self.stats.observers = self.entries.iter().map(|e| e.subject.observers()).sum();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn periods_and_specs() {
        assert_eq!(parse_period("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_period("1s"), Ok(Duration::from_secs(1)));
        assert_eq!(parse_period("2.5"), Ok(Duration::from_millis(2500)));
        assert!(parse_period("1ms").is_err());
        assert!(parse_period("2d").is_err());
        assert!(parse_period("nan").is_err());
        let o = Observable::parse("1s:3").unwrap();
        assert_eq!((o.period, o.every), (Duration::from_secs(1), 3));
        assert_eq!(Observable::parse("1s").unwrap().every, 5);
        assert!(Observable::parse("1s:0").is_err());
        assert!(Observable::parse("1s:x").is_err());
        assert_eq!(Observable::parse("500ms").unwrap().max_age(), 1);
        assert_eq!(Observable::parse("2.5s").unwrap().max_age(), 3);
    }

    /// A raw observer on loopback: registers for `path` at `server` with
    /// token `[7]`; returns the socket.
    fn register(server: SocketAddr, path: &str) -> std::net::UdpSocket {
        use coapcc_proto::message::{MessageType, MessageWriter};
        let s = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        let mut buf = [0u8; 64];
        let mut w = MessageWriter::new(&mut buf, MessageType::Non, Code::GET, 1, &[7]).unwrap();
        w.uint_option(option::OBSERVE, 0).unwrap();
        w.option(option::URI_PATH, path.as_bytes()).unwrap();
        w.payload(&[]).unwrap();
        let n = w.len();
        s.send_to(&buf[..n], server).unwrap();
        s
    }

    /// An observer that never acknowledges: each Confirmable notification
    /// is retransmitted on the algorithm's backed-off timers, and after
    /// MAX_RETRANSMIT (4) retransmissions the observer is removed; an
    /// observer that answers a notification with RST is removed at once.
    #[test]
    fn unacknowledged_notifications_are_retransmitted_then_the_observer_removed() {
        use crate::resources::Resources;
        use crate::server::{self, ServerOptions};
        use coapcc_proto::message::MessageType;
        let mut r = Resources::new();
        r.add_spec("o=observe:20ms:1").unwrap();
        let opts = ServerOptions {
            notify_algorithm: AlgorithmSpec {
                ack_timeout: Some(0.05),
                ..AlgorithmSpec::named("default")
            },
            ..ServerOptions::default()
        };
        let h = server::spawn("127.0.0.1:0".parse().unwrap(), opts, r).unwrap();
        let s = register(h.addr(), "o");
        let mut buf = [0u8; 1500];
        let mut seen = Vec::new();
        let end = Instant::now() + Duration::from_secs(10);
        while Instant::now() < end && h.snapshot().observe.timed_out == 0 {
            if let Ok((n, _)) = s.recv_from(&mut buf) {
                let m = MessageView::decode(&buf[..n]).unwrap();
                seen.push((m.mtype, Instant::now()));
            }
        }
        let snap = h.snapshot().observe;
        assert_eq!(snap.timed_out, 1, "{snap:?}");
        assert_eq!(snap.observers, 0);
        // The response, then one Confirmable notification's 5 transmissions
        // (replacements carry newer states under the same timers).
        assert_eq!(seen.len(), 6, "{seen:?}");
        assert!(seen[1..].iter().all(|(t, _)| *t == MessageType::Con));
        assert_eq!(snap.retransmissions, 4, "{snap:?}");
        // Gaps grow: the timer doubles (dithered at first: 50 to 75 ms).
        let gaps: Vec<f64> = seen[1..]
            .windows(2)
            .map(|w| (w[1].1 - w[0].1).as_secs_f64())
            .collect();
        assert!(gaps[0] >= 0.04 && gaps[3] > 2.5 * gaps[0], "{gaps:?}");
        // An RST of a notification removes the observer.
        let s = register(h.addr(), "o");
        let mut mid = None;
        while mid.is_none() && Instant::now() < end {
            if let Ok((n, _)) = s.recv_from(&mut buf) {
                let m = MessageView::decode(&buf[..n]).unwrap();
                if m.mtype == MessageType::Con {
                    mid = Some(m.mid);
                }
            }
        }
        let [a, b] = mid.expect("a notification").to_be_bytes();
        s.send_to(&[0x70, 0x00, a, b], h.addr()).unwrap();
        while h.snapshot().observe.reset == 0 && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(h.stop().observe.reset, 1);
    }

    #[test]
    fn the_representation_is_a_function_of_time() {
        let o = Observable::parse("100ms").unwrap();
        assert_eq!(o.change_at(o.epoch + Duration::from_millis(250)), 2);
        let r = String::from_utf8(o.representation(3)).unwrap();
        let (n, t) = r.split_once(' ').unwrap();
        assert_eq!(n, "3");
        let t: u128 = t.parse().unwrap();
        assert_eq!(t, o.epoch_unix.as_micros() + 300_000);
    }
}
