//! The client side (RFC 7641 §3): observations of resources, the
//! notifications they accept, and their registration, re-registration and
//! cancellation.
//!
//! - **Matching** (§3.2): a response from the observed peer with the
//!   observation's token is a notification of it — in a CON, NON or ACK.
//!   A CON notification is acknowledged with an Empty ACK.
//! - **Order** (§3.4): a notification is handed to the application only if
//!   it is newer ([`is_fresher`]) than the last one handed over; an older one
//!   is reported as [`ObserveClientEvent::Discarded`]; one with the same
//!   value (a duplicate, or the current state sent again in answer to a
//!   re-registration) keeps the observation fresh but is not handed over
//!   twice.
//! - **End** (§3.2): a response with a code other than 2.xx, or a 2.xx
//!   without an Observe option (the server did not or no longer observes),
//!   ends the observation ([`ObserveClientEvent::Ended`]).
//! - **Unknown token** (§3.6): a CON or NON notification from a peer that
//!   matches no observation is rejected with RST — which also tells its
//!   server to forget the observer.
//! - **Freshness** (§3.3.1): when Max-Age (60 s if absent, RFC 7252
//!   §5.10.5) plus [`ObserveClientConfig::reregister_margin`] passes
//!   without a notification that is not older, the client registers again
//!   with the same token. The deadline starts with the registration, so a
//!   lost registration is repeated the same way.
//! - **Cancellation** (§3.6): [`Cancel::Deregister`] sends a GET with
//!   Observe = 1 and the same token; notifications arriving meanwhile are
//!   acknowledged but not handed over, and the response without Observe
//!   ends the observation. [`Cancel::Forget`] drops it at once; the next
//!   notification gets the RST of an unknown token.
//!
//! Registration and deregistration requests are Non-confirmable GETs sent
//! once: the re-registration deadline is their retransmission.

use std::collections::VecDeque;

use super::fresh::is_fresher;
use super::token::Token;
use super::value::{observe_of, ObserveAction};
use crate::message::{option, Code, MessageType, MessageView, MessageWriter};
use crate::Nanos;

/// Nanoseconds per second.
const SEC: Nanos = 1_000_000_000;

/// Max-Age when a notification carries none (RFC 7252 §5.10.5: 60 s).
pub const DEFAULT_MAX_AGE: Nanos = 60 * SEC;

/// Client settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObserveClientConfig {
    /// How long past a notification's Max-Age the client waits for the next
    /// one before it registers again (§3.3.1 leaves it open). Default 2 s:
    /// RFC 7252's PROCESSING_DELAY (§4.8.2), the time a server may take to
    /// send what it has.
    pub reregister_margin: Nanos,
    /// Most observations at a time (default 64).
    pub max_observations: usize,
    /// How long a deregistration waits for its response before the
    /// observation is dropped anyway. Default NON_LIFETIME, 145 s (RFC 7252
    /// §4.8.2).
    pub cancel_timeout: Nanos,
}

impl Default for ObserveClientConfig {
    fn default() -> Self {
        ObserveClientConfig {
            reregister_margin: 2 * SEC,
            max_observations: 64,
            cancel_timeout: 145 * SEC,
        }
    }
}

/// Identifies an observation for the lifetime of a client (1, 2, …).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObservationId(pub u64);

/// How to cancel an observation (RFC 7641 §3.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cancel {
    /// Send a GET with Observe = 1 (proactive).
    Deregister,
    /// Forget it; the next notification is answered with RST (reactive).
    Forget,
}

/// Why an observation ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// A response with a code other than 2.xx (§3.2).
    Error,
    /// A 2.xx response without Observe: the server does not observe for us.
    NotObserved,
    /// The deregistration was answered, or timed out.
    Cancelled,
}

/// What happened, for the application and the metrics.
#[derive(Clone, Debug, PartialEq)]
pub enum ObserveClientEvent<P> {
    /// A notification newer than every one handed over before.
    Notification {
        /// Observation.
        observation: ObservationId,
        /// Peer.
        peer: P,
        /// Observe value.
        seq: u32,
        /// Response code (2.xx).
        code: Code,
        /// Payload.
        payload: Vec<u8>,
    },
    /// A notification older than the last one handed over (§3.4).
    Discarded {
        /// Observation.
        observation: ObservationId,
        /// Its Observe value.
        seq: u32,
    },
    /// The observation ended; it is forgotten.
    Ended {
        /// Observation.
        observation: ObservationId,
        /// Peer.
        peer: P,
        /// The ending response's code (`None` on a timeout).
        code: Option<Code>,
        /// Why.
        reason: Ending,
        /// The ending response's payload (a 2.xx one is a representation).
        payload: Vec<u8>,
    },
    /// A registration is sent again (§3.3.1).
    Reregistered {
        /// Observation.
        observation: ObservationId,
    },
}

/// Why an observation could not be started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObserveClientError {
    /// A token longer than 8 bytes.
    TokenTooLong,
    /// The peer already has an observation with this token.
    TokenInUse,
    /// [`ObserveClientConfig::max_observations`] are running.
    TooMany,
}

impl std::fmt::Display for ObserveClientError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ObserveClientError::TokenTooLong => "token longer than 8 bytes",
            ObserveClientError::TokenInUse => "token already names an observation of this peer",
            ObserveClientError::TooMany => "too many observations",
        })
    }
}
impl std::error::Error for ObserveClientError {}

/// A datagram written by [`ObserveClient::poll_transmit`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ObserveTransmit<P> {
    /// Destination.
    pub peer: P,
    /// Bytes written.
    pub len: usize,
    /// Message ID.
    pub mid: u16,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Observing,
    Cancelling,
}

struct Observation<P> {
    id: ObservationId,
    peer: P,
    token: Token,
    path: String,
    /// (Observe value, arrival) of the last notification handed over.
    last: Option<(u32, Nanos)>,
    phase: Phase,
    /// Re-registration (Observing) or give-up (Cancelling) deadline.
    deadline: Nanos,
}

enum Outgoing<P> {
    Empty(P, u16, MessageType),
    Request(ObservationId, ObserveAction),
}

/// The observations of one client endpoint, for peers of type `P`.
pub struct ObserveClient<P> {
    config: ObserveClientConfig,
    next_mid: u16,
    next_id: u64,
    observations: Vec<Observation<P>>,
    outgoing: VecDeque<Outgoing<P>>,
    events: VecDeque<ObserveClientEvent<P>>,
}

impl<P: Copy + Eq> ObserveClient<P> {
    /// A client whose requests' Message IDs start at `first_mid`.
    pub fn new(config: ObserveClientConfig, first_mid: u16) -> Self {
        ObserveClient {
            config,
            next_mid: first_mid,
            next_id: 0,
            observations: Vec::new(),
            outgoing: VecDeque::new(),
            events: VecDeque::new(),
        }
    }

    /// Observations running (cancelling ones included).
    pub fn active(&self) -> usize {
        self.observations.len()
    }

    /// Starts observing `path` (Uri-Path segments separated by `/`) at
    /// `peer` under `token`: a registration is queued for `poll_transmit`.
    pub fn observe(
        &mut self,
        now: Nanos,
        peer: P,
        token: &[u8],
        path: &str,
    ) -> Result<ObservationId, ObserveClientError> {
        let token = Token::new(token).ok_or(ObserveClientError::TokenTooLong)?;
        if self.find(peer, token.as_slice()).is_some() {
            return Err(ObserveClientError::TokenInUse);
        }
        if self.observations.len() >= self.config.max_observations {
            return Err(ObserveClientError::TooMany);
        }
        self.next_id += 1;
        let id = ObservationId(self.next_id);
        self.observations.push(Observation {
            id,
            peer,
            token,
            path: path.to_string(),
            last: None,
            phase: Phase::Observing,
            deadline: self.fresh_until(now, DEFAULT_MAX_AGE),
        });
        self.outgoing
            .push_back(Outgoing::Request(id, ObserveAction::Register));
        Ok(id)
    }

    /// Cancels observation `id`; `false` if there is none.
    pub fn cancel(&mut self, now: Nanos, id: ObservationId, how: Cancel) -> bool {
        let Some(i) = self.observations.iter().position(|o| o.id == id) else {
            return false;
        };
        match how {
            Cancel::Forget => {
                self.observations.swap_remove(i);
            }
            Cancel::Deregister => {
                let o = &mut self.observations[i];
                o.phase = Phase::Cancelling;
                o.deadline = now.saturating_add(self.config.cancel_timeout);
                self.outgoing
                    .push_back(Outgoing::Request(id, ObserveAction::Deregister));
            }
        }
        true
    }

    fn fresh_until(&self, now: Nanos, max_age: Nanos) -> Nanos {
        now.saturating_add(max_age)
            .saturating_add(self.config.reregister_margin)
    }

    fn find(&self, peer: P, token: &[u8]) -> Option<usize> {
        self.observations
            .iter()
            .position(|o| o.peer == peer && o.token.as_slice() == token)
    }

    /// Handles a datagram received from `from` at `now`. Messages that are
    /// not responses (requests, Empty ACKs and RSTs) are left alone.
    pub fn handle_datagram(&mut self, now: Nanos, from: P, data: &[u8]) {
        let Ok(msg) = MessageView::decode(data) else {
            return;
        };
        if !msg.code.is_response() {
            return;
        }
        let con = msg.mtype == MessageType::Con;
        let Some(i) = self.find(from, msg.token) else {
            // §3.6: a notification nobody observes.
            if matches!(msg.mtype, MessageType::Con | MessageType::Non) {
                self.outgoing
                    .push_back(Outgoing::Empty(from, msg.mid, MessageType::Rst));
            }
            return;
        };
        let seq = match observe_of(&msg) {
            None => None,
            Some(Ok(v)) => Some(v),
            Some(Err(_)) => {
                // An unusable Observe value: the message cannot be processed.
                if con {
                    self.outgoing
                        .push_back(Outgoing::Empty(from, msg.mid, MessageType::Rst));
                }
                return;
            }
        };
        if con {
            self.outgoing
                .push_back(Outgoing::Empty(from, msg.mid, MessageType::Ack));
        }
        let o = &self.observations[i];
        let ending = match (msg.code.class() == 2, seq, o.phase) {
            (false, _, _) => Some(Ending::Error),
            (true, None, Phase::Cancelling) => Some(Ending::Cancelled),
            (true, None, Phase::Observing) => Some(Ending::NotObserved),
            (true, Some(_), _) => None,
        };
        if let Some(reason) = ending {
            let o = self.observations.swap_remove(i);
            self.events.push_back(ObserveClientEvent::Ended {
                observation: o.id,
                peer: from,
                code: Some(msg.code),
                reason,
                payload: msg.payload.to_vec(),
            });
            return;
        }
        let (Some(seq), Phase::Observing) = (seq, o.phase) else {
            return;
        };
        let max_age = msg
            .uint_option(option::MAX_AGE)
            .map_or(DEFAULT_MAX_AGE, |s| Nanos::from(s) * SEC);
        let deadline = self.fresh_until(now, max_age);
        let o = &mut self.observations[i];
        match o.last {
            Some((v1, t1)) if !is_fresher(v1, t1, seq, now) => {
                if v1 == seq {
                    o.deadline = deadline;
                } else {
                    self.events.push_back(ObserveClientEvent::Discarded {
                        observation: o.id,
                        seq,
                    });
                }
            }
            _ => {
                o.last = Some((seq, now));
                o.deadline = deadline;
                self.events.push_back(ObserveClientEvent::Notification {
                    observation: o.id,
                    peer: from,
                    seq,
                    code: msg.code,
                    payload: msg.payload.to_vec(),
                });
            }
        }
    }

    /// The earliest deadline (re-registration or give-up), if any.
    pub fn poll_timeout(&self) -> Option<Nanos> {
        self.observations.iter().map(|o| o.deadline).min()
    }

    /// Fires every deadline due at `now`: registers again, or drops a
    /// deregistration that got no answer.
    pub fn handle_timeout(&mut self, now: Nanos) {
        let mut i = 0;
        while i < self.observations.len() {
            if self.observations[i].deadline > now {
                i += 1;
                continue;
            }
            if self.observations[i].phase == Phase::Cancelling {
                let o = self.observations.swap_remove(i);
                self.events.push_back(ObserveClientEvent::Ended {
                    observation: o.id,
                    peer: o.peer,
                    code: None,
                    reason: Ending::Cancelled,
                    payload: Vec::new(),
                });
                continue;
            }
            let deadline = self.fresh_until(now, DEFAULT_MAX_AGE);
            let o = &mut self.observations[i];
            o.deadline = deadline;
            self.outgoing
                .push_back(Outgoing::Request(o.id, ObserveAction::Register));
            self.events
                .push_back(ObserveClientEvent::Reregistered { observation: o.id });
            i += 1;
        }
    }

    /// Writes the next datagram to send into `buf`; one that does not fit
    /// stays pending.
    pub fn poll_transmit(&mut self, buf: &mut [u8]) -> Option<ObserveTransmit<P>> {
        loop {
            let next = self.outgoing.front()?;
            let sent = match *next {
                Outgoing::Empty(peer, mid, mtype) => {
                    let w = MessageWriter::new(buf, mtype, Code::EMPTY, mid, &[]).ok()?;
                    Some(ObserveTransmit {
                        peer,
                        len: w.len(),
                        mid,
                    })
                }
                Outgoing::Request(id, action) => {
                    match self.observations.iter().find(|o| o.id == id) {
                        // Cancelled since: nothing to send.
                        None => None,
                        Some(o) => Some(ObserveTransmit {
                            peer: o.peer,
                            len: write_request(buf, o, self.next_mid, action)?,
                            mid: self.next_mid,
                        }),
                    }
                }
            };
            if let Some(Outgoing::Request(..)) = self.outgoing.pop_front() {
                if sent.is_some() {
                    self.next_mid = self.next_mid.wrapping_add(1);
                }
            }
            if sent.is_some() {
                return sent;
            }
        }
    }

    /// The next event.
    pub fn poll_event(&mut self) -> Option<ObserveClientEvent<P>> {
        self.events.pop_front()
    }
}

/// A NON GET for `o`'s resource with its token and Observe = `action`.
fn write_request<P>(
    buf: &mut [u8],
    o: &Observation<P>,
    mid: u16,
    action: ObserveAction,
) -> Option<usize> {
    let mut w =
        MessageWriter::new(buf, MessageType::Non, Code::GET, mid, o.token.as_slice()).ok()?;
    w.uint_option(option::OBSERVE, action.value()).ok()?;
    let path = o.path.strip_prefix('/').unwrap_or(&o.path);
    if !path.is_empty() {
        for segment in path.split('/') {
            w.option(option::URI_PATH, segment.as_bytes()).ok()?;
        }
    }
    w.payload(&[]).ok()?;
    Some(w.len())
}
