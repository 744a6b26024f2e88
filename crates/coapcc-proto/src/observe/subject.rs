//! The server side (RFC 7641 §4): one observed resource — a *subject* —
//! with its observers, the notifications sent to them and their
//! retransmission.
//!
//! - **Registration** (§4.1): a GET with Observe = 0 adds (peer, token) to
//!   the observers unless a bound is reached: at most
//!   [`SubjectConfig::max_per_peer`] observers per peer and
//!   [`SubjectConfig::max_observers`] in all. A refused registration is
//!   served as a plain GET — its response carries no Observe option, which
//!   tells the client it is not on the list (§4.1). A second registration
//!   of the same (peer, token) updates the entry rather than adding one.
//! - **Sequence numbers** (§4.4): one 24-bit counter per subject, advanced
//!   (wrapping) at every state change; every notification and registration
//!   response carries the value of the state it holds.
//! - **Confirmable or not** (§4.5): per notification by [`ConfirmRule`].
//! - **Retransmission**: each peer's congestion-control algorithm
//!   ([`coapcc_rto::CongestionControl`], built from the same
//!   [`AlgorithmFactory`] a [`crate::client::Client`] uses) times the
//!   retransmissions of Confirmable notifications, called at the same four
//!   moments as for a client exchange (`start`, `expire`, `on_ack`,
//!   `on_failure`). Notifications are unmarked ([`coapcc_rto::Marking::None`])
//!   and an Empty ACK is not a piggybacked response.
//!   After [`SubjectConfig::max_retransmit`] unacknowledged retransmissions
//!   the observer is removed (§4.5); so is one that answers with RST (§3.6).
//! - **Replacement** (§4.5.2): at most one notification per observer is in
//!   flight. When the state changes while a Confirmable notification is
//!   unacknowledged, the server may abort the old one "but not before the
//!   current transmission attempt is completed" and start the new one "with
//!   the retransmission timer and counter of the aborted transmission
//!   retained". So the new state waits for the old one's timer; when it
//!   fires, the algorithm's `expire` backs off the timer and counts a
//!   retransmission as for any retransmission, and that transmission carries
//!   the new state under a new Message ID. An ACK of the current copy ends
//!   the flight and a state that changed meanwhile goes out at once; an ACK
//!   of an aborted copy is ignored (it confirms a state the client no longer
//!   needs); an RST of any copy removes the observer.

use coapcc_rto::registry::BoxedAlgorithm;
use coapcc_rto::{Ack, ExchangeTimer, ParamError, Random};
use smallvec::SmallVec;

use super::confirm::ConfirmRule;
use super::token::Token;
use super::value::{encode_observe, observe_of, ObserveAction, OBSERVE_MAX};
use crate::client::AlgorithmFactory;
use crate::message::{option, Code, MessageType, MessageView, MessageWriter};
use crate::{secs, timer_deadline, Nanos};

/// Subject settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubjectConfig {
    /// Most observers in all (default 1024).
    pub max_observers: usize,
    /// Most observers per peer (default 4): a flood of registrations from one
    /// address fills only these.
    pub max_per_peer: usize,
    /// MAX_RETRANSMIT of Confirmable notifications (RFC 7252 default 4).
    pub max_retransmit: u8,
    /// Which notifications are Confirmable.
    pub confirm: ConfirmRule,
    /// Max-Age (seconds) sent in notifications; `None` sends none (the
    /// client then assumes RFC 7252's default 60 s).
    pub max_age: Option<u32>,
    /// The sequence number of the initial state (taken modulo 2^24;
    /// default 0).
    pub first_seq: u32,
}

impl Default for SubjectConfig {
    fn default() -> Self {
        SubjectConfig {
            max_observers: 1024,
            max_per_peer: 4,
            max_retransmit: 4,
            confirm: ConfirmRule::default(),
            max_age: None,
            first_seq: 0,
        }
    }
}

/// Why a registration was not taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The peer has [`SubjectConfig::max_per_peer`] observers already.
    PeerFull,
    /// The subject has [`SubjectConfig::max_observers`] observers already.
    Full,
}

/// The outcome of a registration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Registration {
    /// On the list: the response carries Observe = `seq`.
    Accepted {
        /// The current sequence number.
        seq: u32,
    },
    /// Not on the list: the response is a plain GET's, without Observe.
    Refused(Refusal),
}

impl Registration {
    /// The Observe option the response to the registration carries, as a
    /// [`crate::server::Response`] option; `None` when refused.
    pub fn response_option(&self) -> Option<(u16, Vec<u8>)> {
        match *self {
            Registration::Accepted { seq } => {
                let (bytes, len) = encode_observe(seq & OBSERVE_MAX).ok()?;
                Some((option::OBSERVE, bytes[4 - len..].to_vec()))
            }
            Registration::Refused(_) => None,
        }
    }
}

/// Why an observer left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Removal {
    /// A GET with Observe = 1 (RFC 7641 §3.6).
    Deregistered,
    /// An RST answered a notification (§3.6, §4.5).
    Reset,
    /// A Confirmable notification went unacknowledged after
    /// [`SubjectConfig::max_retransmit`] retransmissions (§4.5).
    Timeout,
    /// It was sent a notification with a code other than 2.xx, which ends
    /// the observation (§4.2); that notification is not retransmitted.
    Ended,
}

/// What happened, for the application and the metrics.
#[derive(Clone, Debug, PartialEq)]
pub enum SubjectEvent<P> {
    /// A Confirmable notification was acknowledged.
    Acknowledged {
        /// Peer.
        peer: P,
        /// The sequence number acknowledged.
        seq: u32,
        /// Retransmissions (replacements included) before the ACK.
        retransmissions: u8,
        /// From the flight's first transmission to the ACK.
        elapsed: Nanos,
    },
    /// A newer state replaced an unacknowledged one (§4.5.2).
    Replaced {
        /// Peer.
        peer: P,
        /// The replaced sequence number.
        old_seq: u32,
        /// The new one.
        new_seq: u32,
        /// The new transmission's Message ID.
        mid: u16,
    },
    /// An observer left.
    Removed {
        /// Peer.
        peer: P,
        /// Its token.
        token: Token,
        /// Why.
        reason: Removal,
    },
}

/// Counters of the subject's registrations.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SubjectStats {
    /// Registrations taken (re-registrations included).
    pub registered: u64,
    /// Registrations refused by [`SubjectConfig::max_per_peer`].
    pub refused_peer: u64,
    /// Registrations refused by [`SubjectConfig::max_observers`].
    pub refused_full: u64,
    /// Requests whose Observe option was unusable (served as plain GETs).
    pub bad_option: u64,
}

/// A notification written by [`Subject::poll_transmit`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotifyTransmit<P> {
    /// Destination.
    pub peer: P,
    /// Bytes written.
    pub len: usize,
    /// Message ID.
    pub mid: u16,
    /// Observe value.
    pub seq: u32,
    /// Confirmable or not.
    pub confirmable: bool,
    /// 0 = first transmission of the flight, 1 = first retransmission, …
    pub ordinal: u8,
}

/// One Confirmable notification waiting for its ACK.
struct Flight {
    timer: ExchangeTimer,
    /// The retransmission deadline.
    deadline: Nanos,
    first_sent: Nanos,
    /// Message IDs of the flight's copies, the current one last.
    mids: SmallVec<[u16; 2]>,
}

struct Observer<P> {
    peer: P,
    token: Token,
    /// Notifications since the last Confirmable one (or the registration).
    since_con: u32,
    /// When the last Confirmable notification (or the registration) was.
    last_con: Nanos,
    /// The state the client was last sent.
    sent_seq: u32,
    flight: Option<Flight>,
    /// A transmission waits for `poll_transmit`: its queue order.
    pending: Option<u64>,
    /// The last Non-confirmable notification's Message ID.
    last_non: Option<u16>,
}

struct Peer<P> {
    peer: P,
    algorithm: BoxedAlgorithm,
    observers: usize,
    /// Confirmable notifications to the peer in flight.
    in_flight: usize,
}

/// An observed resource with its observers, for peers of type `P`, drawing
/// randomness from `R` (for the algorithms).
pub struct Subject<P, R> {
    config: SubjectConfig,
    factory: AlgorithmFactory,
    rng: R,
    seq: u32,
    code: Code,
    payload: Vec<u8>,
    next_mid: u16,
    next_tx: u64,
    observers: Vec<Observer<P>>,
    peers: Vec<Peer<P>>,
    events: Vec<SubjectEvent<P>>,
    stats: SubjectStats,
}

impl<P: Copy + Eq, R: Random> Subject<P, R> {
    /// A subject with state 2.05 and an empty payload at sequence number
    /// [`SubjectConfig::first_seq`];
    /// notifications' Message IDs start at `first_mid`. Fails if `factory`
    /// rejects its parameters.
    pub fn new(
        config: SubjectConfig,
        factory: AlgorithmFactory,
        rng: R,
        first_mid: u16,
    ) -> Result<Self, ParamError> {
        (factory.0.build)(&factory.1)?;
        Ok(Subject {
            seq: config.first_seq & OBSERVE_MAX,
            config,
            factory,
            rng,
            code: Code::CONTENT,
            payload: Vec::new(),
            next_mid: first_mid,
            next_tx: 0,
            observers: Vec::new(),
            peers: Vec::new(),
            events: Vec::new(),
            stats: SubjectStats::default(),
        })
    }

    /// The current sequence number.
    pub fn seq(&self) -> u32 {
        self.seq
    }

    /// Observers on the list.
    pub fn observers(&self) -> usize {
        self.observers.len()
    }

    /// Observers of `peer`.
    pub fn observers_of(&self, peer: P) -> usize {
        self.peers
            .iter()
            .find(|p| p.peer == peer)
            .map_or(0, |p| p.observers)
    }

    /// The counters.
    pub fn stats(&self) -> SubjectStats {
        self.stats
    }

    fn find(&self, peer: P, token: &[u8]) -> Option<usize> {
        self.observers
            .iter()
            .position(|o| o.peer == peer && o.token.as_slice() == token)
    }

    fn peer_index(&self, peer: P) -> Option<usize> {
        self.peers.iter().position(|p| p.peer == peer)
    }

    /// Handles the Observe option of a request for this resource from
    /// `from`: registers on Observe = 0 (GET only), deregisters on 1.
    /// Returns the registration to answer (put its
    /// [`Registration::response_option`] in the response), or `None` when
    /// the response is a plain one: no option, a deregistration, another
    /// method, or an unusable Observe value (RFC 7641 §2 defines no other;
    /// the request is then served as if it had none).
    pub fn on_request(
        &mut self,
        now: Nanos,
        from: P,
        request: &MessageView<'_>,
    ) -> Option<Registration> {
        if request.code != Code::GET {
            return None;
        }
        let action = match observe_of(request)? {
            Ok(v) => ObserveAction::from_value(v),
            Err(e) => Err(e),
        };
        match action {
            Ok(ObserveAction::Register) => Some(self.register(now, from, request.token)),
            Ok(ObserveAction::Deregister) => {
                self.deregister(from, request.token);
                None
            }
            Err(_) => {
                self.stats.bad_option += 1;
                None
            }
        }
    }

    /// Adds (`peer`, `token`) to the observers, or updates it if already
    /// there; refused when a bound is reached.
    pub fn register(&mut self, now: Nanos, peer: P, token: &[u8]) -> Registration {
        let Some(token) = Token::new(token) else {
            self.stats.bad_option += 1;
            return Registration::Refused(Refusal::Full);
        };
        if self.find(peer, token.as_slice()).is_some() {
            // The entry stays as it is: a notification in flight goes on
            // (its copies must stay identical), and the response to this
            // registration carries the current state anyway.
            self.stats.registered += 1;
            return Registration::Accepted { seq: self.seq };
        }
        if self.observers_of(peer) >= self.config.max_per_peer {
            self.stats.refused_peer += 1;
            return Registration::Refused(Refusal::PeerFull);
        }
        if self.observers.len() >= self.config.max_observers {
            self.stats.refused_full += 1;
            return Registration::Refused(Refusal::Full);
        }
        let pi = match self.peer_index(peer) {
            Some(pi) => pi,
            None => {
                let algorithm = (self.factory.0.build)(&self.factory.1)
                    .expect("parameters checked in Subject::new");
                self.peers.push(Peer {
                    peer,
                    algorithm,
                    observers: 0,
                    in_flight: 0,
                });
                self.peers.len() - 1
            }
        };
        self.peers[pi].observers += 1;
        self.observers.push(Observer {
            peer,
            token,
            since_con: 0,
            last_con: now,
            sent_seq: self.seq,
            flight: None,
            pending: None,
            last_non: None,
        });
        self.stats.registered += 1;
        Registration::Accepted { seq: self.seq }
    }

    /// Removes (`peer`, `token`) (a GET with Observe = 1, §3.6); `false` if
    /// it was not an observer.
    pub fn deregister(&mut self, peer: P, token: &[u8]) -> bool {
        match self.find(peer, token) {
            Some(i) => {
                self.remove(i, Removal::Deregistered);
                true
            }
            None => false,
        }
    }

    fn remove(&mut self, i: usize, reason: Removal) {
        let o = self.observers.swap_remove(i);
        if let Some(pi) = self.peer_index(o.peer) {
            let p = &mut self.peers[pi];
            p.observers -= 1;
            if o.flight.is_some() {
                p.in_flight -= 1;
            }
            if p.observers == 0 {
                // What the algorithm learnt goes with the last observer:
                // the peer table stays bounded by the observers.
                self.peers.swap_remove(pi);
            }
        }
        self.events.push(SubjectEvent::Removed {
            peer: o.peer,
            token: o.token,
            reason,
        });
    }

    /// The resource changed to `code` with `payload`: the sequence number
    /// advances and every observer is notified — at once, or, while one of
    /// its Confirmable notifications is in flight, when that one is
    /// acknowledged or its timer fires (see the module docs).
    pub fn set_state(&mut self, now: Nanos, code: Code, payload: &[u8]) {
        self.seq = (self.seq + 1) & OBSERVE_MAX;
        self.code = code;
        self.payload.clear();
        self.payload.extend_from_slice(payload);
        for i in 0..self.observers.len() {
            if self.observers[i].flight.is_none() {
                self.begin(now, i);
            }
        }
    }

    /// Starts a notification of the current state to observer `i`.
    fn begin(&mut self, now: Nanos, i: usize) {
        let o = &mut self.observers[i];
        o.pending = Some(self.next_tx);
        self.next_tx += 1;
        let con = self
            .config
            .confirm
            .confirmable(o.since_con, o.last_con, now);
        if !con {
            o.since_con = o.since_con.saturating_add(1);
            return;
        }
        o.since_con = 0;
        o.last_con = now;
        let Some(pi) = self.peers.iter().position(|p| p.peer == o.peer) else {
            return;
        };
        let peer = &mut self.peers[pi];
        let timer = peer
            .algorithm
            .start(secs(now), peer.in_flight, &mut self.rng);
        peer.in_flight += 1;
        o.flight = Some(Flight {
            timer,
            deadline: timer_deadline(now, timer.current, self.factory.0.name, "start"),
            first_sent: now,
            mids: SmallVec::new(),
        });
    }

    /// The earliest retransmission deadline, if any.
    pub fn poll_timeout(&self) -> Option<Nanos> {
        self.observers
            .iter()
            .filter_map(|o| o.flight.as_ref().map(|f| f.deadline))
            .min()
    }

    /// Fires every retransmission deadline due at `now`: retransmits (or
    /// sends the replacing state), or removes the observer.
    pub fn handle_timeout(&mut self, now: Nanos) {
        let mut i = 0;
        while i < self.observers.len() {
            let o = &mut self.observers[i];
            let Some(f) = o.flight.as_mut().filter(|f| f.deadline <= now) else {
                i += 1;
                continue;
            };
            let Some(pi) = self.peers.iter().position(|p| p.peer == o.peer) else {
                i += 1;
                continue;
            };
            let algorithm = &mut self.peers[pi].algorithm;
            if f.timer.retransmissions >= self.config.max_retransmit {
                algorithm.on_failure(secs(now), &f.timer);
                self.remove(i, Removal::Timeout);
                continue;
            }
            algorithm.expire(secs(now), &mut f.timer, &mut self.rng);
            let name = self.factory.0.name;
            f.deadline = timer_deadline(now, f.timer.current, name, "expire");
            o.pending = Some(self.next_tx);
            self.next_tx += 1;
            i += 1;
        }
    }

    /// Handles an ACK or RST from `from` (anything else is not the
    /// subject's and returns `false`).
    pub fn handle_message(&mut self, now: Nanos, from: P, msg: &MessageView<'_>) -> bool {
        match msg.mtype {
            MessageType::Ack if msg.code.is_empty() => self.on_ack(now, from, msg.mid),
            MessageType::Rst => self.on_rst(now, from, msg.mid),
            _ => false,
        }
    }

    fn on_ack(&mut self, now: Nanos, from: P, mid: u16) -> bool {
        let Some(i) = self.observers.iter().position(|o| {
            o.peer == from
                && o.flight
                    .as_ref()
                    .is_some_and(|f| f.mids.last() == Some(&mid))
        }) else {
            return false;
        };
        let Some(pi) = self.peer_index(from) else {
            return false;
        };
        let o = &mut self.observers[i];
        let Some(f) = o.flight.take() else {
            return false;
        };
        let elapsed = now.saturating_sub(f.first_sent);
        let ack = Ack {
            now: secs(now),
            elapsed: secs(elapsed),
            echo: None,
            piggybacked: false,
        };
        let peer = &mut self.peers[pi];
        peer.algorithm.on_ack(&f.timer, &ack);
        peer.in_flight -= 1;
        o.pending = None;
        self.events.push(SubjectEvent::Acknowledged {
            peer: from,
            seq: o.sent_seq,
            retransmissions: f.timer.retransmissions,
            elapsed,
        });
        if o.sent_seq != self.seq {
            self.begin(now, i);
        }
        true
    }

    fn on_rst(&mut self, now: Nanos, from: P, mid: u16) -> bool {
        let Some(i) = self.observers.iter().position(|o| {
            o.peer == from
                && (o.last_non == Some(mid)
                    || o.flight.as_ref().is_some_and(|f| f.mids.contains(&mid)))
        }) else {
            return false;
        };
        if let (Some(f), Some(pi)) = (&self.observers[i].flight, self.peer_index(from)) {
            self.peers[pi].algorithm.on_failure(secs(now), &f.timer);
        }
        self.remove(i, Removal::Reset);
        true
    }

    /// Writes the next notification into `buf`; a notification that does
    /// not fit stays pending.
    pub fn poll_transmit(&mut self, buf: &mut [u8]) -> Option<NotifyTransmit<P>> {
        let i = self
            .observers
            .iter()
            .enumerate()
            .filter(|(_, o)| o.pending.is_some())
            .min_by_key(|(_, o)| o.pending)?
            .0;
        let seq = self.seq;
        let o = &self.observers[i];
        let (mid, confirmable, ordinal, replaced) = match &o.flight {
            Some(f) => match f.mids.last() {
                // A retransmission of the state last sent: the same message.
                Some(&m) if o.sent_seq == seq => (m, true, f.timer.retransmissions, false),
                // A replacement (§4.5.2), or the flight's first copy.
                last => (self.next_mid, true, f.timer.retransmissions, last.is_some()),
            },
            None => (self.next_mid, false, 0, false),
        };
        let len = self.write(buf, i, mid, confirmable)?;
        if mid == self.next_mid {
            self.next_mid = self.next_mid.wrapping_add(1);
        }
        let o = &mut self.observers[i];
        if replaced {
            self.events.push(SubjectEvent::Replaced {
                peer: o.peer,
                old_seq: o.sent_seq,
                new_seq: seq,
                mid,
            });
        }
        match o.flight.as_mut() {
            Some(f) if f.mids.last() != Some(&mid) => f.mids.push(mid),
            Some(_) => {}
            None => o.last_non = Some(mid),
        }
        o.sent_seq = seq;
        o.pending = None;
        let sent = NotifyTransmit {
            peer: o.peer,
            len,
            mid,
            seq,
            confirmable,
            ordinal,
        };
        if self.code.class() != 2 {
            self.remove(i, Removal::Ended);
        }
        Some(sent)
    }

    /// Writes observer `i`'s notification of the current state.
    fn write(&self, buf: &mut [u8], i: usize, mid: u16, confirmable: bool) -> Option<usize> {
        let o = &self.observers[i];
        let mtype = if confirmable {
            MessageType::Con
        } else {
            MessageType::Non
        };
        let mut w = MessageWriter::new(buf, mtype, self.code, mid, o.token.as_slice()).ok()?;
        w.uint_option(option::OBSERVE, self.seq).ok()?;
        if let Some(age) = self.config.max_age {
            w.uint_option(option::MAX_AGE, age).ok()?;
        }
        w.payload(&self.payload).ok()?;
        Some(w.len())
    }

    /// The next event.
    pub fn poll_event(&mut self) -> Option<SubjectEvent<P>> {
        (!self.events.is_empty()).then(|| self.events.remove(0))
    }
}
