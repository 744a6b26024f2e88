//! The CoAP client side (RFC 7252 §4.2, §4.4, §5.2), sans-IO: Message IDs,
//! tokens, retransmissions timed by a congestion-control algorithm, matching of
//! acknowledgements and responses, MAX_RETRANSMIT, NSTART, and counting of
//! duplicate responses. Each transmission may be marked (TC option, Rexmit-Cnt
//! option, 1-byte token) so that the echo tells which copy was answered (spec
//! algorithms.md §4, §6.6).

use std::collections::VecDeque;

use coapcc_rto::registry::{AlgorithmInfo, BoxedAlgorithm};
use coapcc_rto::{Ack, AlgorithmParams, CongestionControl, Echo, ExchangeTimer, Marking, Random};

use crate::message::{decode_uint, option, Code, MessageType, MessageView, MessageWriter};
use crate::{secs, to_nanos, Nanos};

/// Client settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientConfig {
    /// MAX_RETRANSMIT (RFC default 4; the published evaluations used 20).
    pub max_retransmit: u8,
    /// NSTART: most outstanding exchanges per destination.
    pub nstart: usize,
    /// Keep response payloads in [`ClientEvent::Response`].
    pub keep_payload: bool,
    /// Token length of requests not marked by token (0 in the testbed).
    pub token_len: u8,
}

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig {
            max_retransmit: 4,
            nstart: 1,
            keep_payload: false,
            token_len: 0,
        }
    }
}

/// A request to send.
#[derive(Clone, Copy, Debug)]
pub struct Request<'a> {
    /// Method.
    pub method: Code,
    /// Uri-Path, `/`-separated (leading slash optional).
    pub path: &'a str,
    /// Payload.
    pub payload: &'a [u8],
    /// Confirmable (retransmitted) or not.
    pub confirmable: bool,
}

/// Identifies an exchange for the lifetime of a client.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ExchangeId(pub u64);

/// A datagram to send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transmit<P> {
    /// Destination.
    pub peer: P,
    /// Bytes written into the caller's buffer.
    pub len: usize,
    /// The exchange (None for an Empty ACK or RST answering a response).
    pub exchange: Option<ExchangeId>,
    /// Message ID.
    pub mid: u16,
    /// 0 = original, 1 = first retransmission, …
    pub ordinal: u8,
}

/// Why an exchange failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailReason {
    /// MAX_RETRANSMIT retransmissions went unanswered.
    Timeout,
    /// The peer answered with RST.
    Reset,
}

/// Something the application or the metrics want to know.
#[derive(Clone, Debug, PartialEq)]
pub enum ClientEvent<P> {
    /// The exchange completed with a response.
    Response {
        /// Exchange.
        exchange: ExchangeId,
        /// Peer.
        peer: P,
        /// Response code.
        code: Code,
        /// Retransmissions sent before the acknowledgement.
        retransmissions: u8,
        /// E: original transmission to acknowledgement.
        elapsed: Nanos,
        /// The echoed transmission ordinal, if the request was marked and echoed.
        echo: Option<u8>,
        /// The payload (empty unless `keep_payload`).
        payload: Vec<u8>,
    },
    /// The exchange was abandoned.
    Failed {
        /// Exchange.
        exchange: ExchangeId,
        /// Peer.
        peer: P,
        /// Retransmissions sent.
        retransmissions: u8,
        /// Why.
        reason: FailReason,
    },
    /// A timer was armed for transmission `ordinal`.
    TimerArmed {
        /// Exchange.
        exchange: ExchangeId,
        /// Peer.
        peer: P,
        /// Transmission it guards.
        ordinal: u8,
        /// Seconds.
        timer: f64,
    },
    /// A timer expired.
    TimerExpired {
        /// Exchange.
        exchange: ExchangeId,
        /// Peer.
        peer: P,
        /// Seconds.
        timer: f64,
    },
    /// A response to an exchange already completed: an unnecessary
    /// retransmission's echo.
    DuplicateResponse {
        /// Peer.
        peer: P,
        /// Message ID.
        mid: u16,
    },
}

/// Why a request was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientError {
    /// The path has a segment longer than 255 bytes, or the message cannot fit
    /// a datagram of 1152 bytes.
    TooLarge,
}

impl std::fmt::Display for ClientError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("request too large for one datagram")
    }
}
impl std::error::Error for ClientError {}

/// Builds a destination's algorithm: a registry entry and its parameters.
pub type AlgorithmFactory = (&'static AlgorithmInfo, AlgorithmParams);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Waiting for NSTART room.
    Queued,
    /// Sent, retransmitting until acknowledged.
    Waiting,
    /// Acknowledged by an Empty ACK; waiting for the separate response.
    Separate,
}

struct Exchange<P> {
    id: ExchangeId,
    peer: P,
    mid: u16,
    token: [u8; 8],
    token_len: u8,
    method: Code,
    confirmable: bool,
    path: String,
    payload: Vec<u8>,
    phase: Phase,
    timer: ExchangeTimer,
    marking: Marking,
    deadline: Nanos,
    sent_at: Vec<Nanos>,
    needs_tx: bool,
    /// The encoded request, when its bytes are the same for every transmission
    /// (no marking): encoded once, copied for each transmission.
    encoded: Vec<u8>,
    retransmissions_at_ack: u8,
    elapsed_at_ack: Nanos,
}

struct Peer<P> {
    peer: P,
    algorithm: BoxedAlgorithm,
    outstanding: usize,
}

const COMPLETED_RING: usize = 256;

/// A CoAP client endpoint for peers of type `P`, drawing randomness from `R`.
pub struct Client<P, R> {
    config: ClientConfig,
    factory: AlgorithmFactory,
    rng: R,
    next_mid: u16,
    next_id: u64,
    peers: Vec<Peer<P>>,
    exchanges: Vec<Exchange<P>>,
    spare: Vec<Exchange<P>>,
    completed: [Option<(P, u16)>; COMPLETED_RING],
    completed_at: usize,
    empty_acks: VecDeque<(P, u16, MessageType)>,
    events: VecDeque<ClientEvent<P>>,
}

impl<P: Copy + Eq, R: Random> Client<P, R> {
    /// A client whose destinations each run an algorithm built by `factory`;
    /// Message IDs start at `first_mid`.
    pub fn new(config: ClientConfig, factory: AlgorithmFactory, rng: R, first_mid: u16) -> Self {
        Client {
            config,
            factory,
            rng,
            next_mid: first_mid,
            next_id: 0,
            peers: Vec::new(),
            exchanges: Vec::new(),
            spare: Vec::new(),
            completed: [None; COMPLETED_RING],
            completed_at: 0,
            empty_acks: VecDeque::new(),
            events: VecDeque::new(),
        }
    }

    fn peer_index(&mut self, peer: P) -> usize {
        if let Some(i) = self.peers.iter().position(|p| p.peer == peer) {
            return i;
        }
        let algorithm = (self.factory.0.build)(&self.factory.1)
            .expect("parameters were checked when the client was configured");
        self.peers.push(Peer {
            peer,
            algorithm,
            outstanding: 0,
        });
        self.peers.len() - 1
    }

    /// Starts (or queues, when NSTART exchanges are outstanding) a request.
    pub fn request(
        &mut self,
        now: Nanos,
        peer: P,
        req: &Request<'_>,
    ) -> Result<ExchangeId, ClientError> {
        if req.path.split('/').any(|s| s.len() > 255) || req.path.len() + req.payload.len() > 1024 {
            return Err(ClientError::TooLarge);
        }
        let pi = self.peer_index(peer);
        self.next_id += 1;
        let id = ExchangeId(self.next_id);
        let mid = self.next_mid;
        self.next_mid = self.next_mid.wrapping_add(1);
        let mut token = [0u8; 8];
        let token_len = self.config.token_len.min(8);
        for b in token.iter_mut().take(token_len as usize) {
            *b = (self.rng.uniform() * 256.0) as u8;
        }
        let mut ex = self.spare.pop().unwrap_or_else(|| Exchange {
            id,
            peer,
            mid,
            token,
            token_len,
            method: req.method,
            confirmable: req.confirmable,
            path: String::new(),
            payload: Vec::new(),
            phase: Phase::Queued,
            timer: ExchangeTimer::default(),
            marking: Marking::None,
            deadline: 0,
            sent_at: Vec::new(),
            needs_tx: false,
            encoded: Vec::new(),
            retransmissions_at_ack: 0,
            elapsed_at_ack: 0,
        });
        ex.id = id;
        ex.peer = peer;
        ex.mid = mid;
        ex.token = token;
        ex.token_len = token_len;
        ex.method = req.method;
        ex.confirmable = req.confirmable;
        ex.path.clear();
        ex.path.push_str(req.path);
        ex.payload.clear();
        ex.payload.extend_from_slice(req.payload);
        ex.phase = Phase::Queued;
        ex.sent_at.clear();
        ex.needs_tx = false;
        ex.encoded.clear();
        self.exchanges.push(ex);
        if self.peers[pi].outstanding < self.config.nstart {
            let i = self.exchanges.len() - 1;
            self.begin(now, i);
        }
        Ok(id)
    }

    /// Sends exchange `i` for the first time.
    fn begin(&mut self, now: Nanos, i: usize) {
        let pi = self.peer_index(self.exchanges[i].peer);
        let peer = &mut self.peers[pi];
        let outstanding = peer.outstanding;
        peer.outstanding += 1;
        let ex = &mut self.exchanges[i];
        ex.marking = peer.algorithm.marking();
        ex.timer = peer.algorithm.start(secs(now), outstanding, &mut self.rng);
        ex.phase = Phase::Waiting;
        ex.sent_at.push(now);
        ex.needs_tx = true;
        if ex.confirmable {
            ex.deadline = now + to_nanos(ex.timer.current);
            self.events.push_back(ClientEvent::TimerArmed {
                exchange: ex.id,
                peer: ex.peer,
                ordinal: 0,
                timer: ex.timer.current,
            });
        } else {
            ex.deadline = Nanos::MAX;
        }
    }

    /// The earliest retransmission deadline.
    pub fn poll_timeout(&self) -> Option<Nanos> {
        self.exchanges
            .iter()
            .filter(|e| e.phase == Phase::Waiting && e.confirmable)
            .map(|e| e.deadline)
            .min()
    }

    /// Fires every timer due at `now`.
    pub fn handle_timeout(&mut self, now: Nanos) {
        let mut i = 0;
        while i < self.exchanges.len() {
            let ex = &self.exchanges[i];
            if ex.phase != Phase::Waiting || !ex.confirmable || ex.deadline > now {
                i += 1;
                continue;
            }
            let (id, peer, timer) = (ex.id, ex.peer, ex.timer.current);
            self.events.push_back(ClientEvent::TimerExpired {
                exchange: id,
                peer,
                timer,
            });
            let pi = self.peer_index(peer);
            let ex = &mut self.exchanges[i];
            if ex.timer.retransmissions >= self.config.max_retransmit {
                self.peers[pi].algorithm.on_failure(secs(now), &ex.timer);
                self.events.push_back(ClientEvent::Failed {
                    exchange: id,
                    peer,
                    retransmissions: ex.timer.retransmissions,
                    reason: FailReason::Timeout,
                });
                self.finish(now, i);
                continue;
            }
            self.peers[pi]
                .algorithm
                .expire(secs(now), &mut ex.timer, &mut self.rng);
            ex.sent_at.push(now);
            ex.needs_tx = true;
            ex.deadline = now + to_nanos(ex.timer.current);
            self.events.push_back(ClientEvent::TimerArmed {
                exchange: id,
                peer,
                ordinal: ex.timer.retransmissions,
                timer: ex.timer.current,
            });
            i += 1;
        }
    }

    /// Removes exchange `i`, remembers its Message ID, and starts a queued one.
    fn finish(&mut self, now: Nanos, i: usize) {
        let ex = self.exchanges.swap_remove(i);
        let peer = ex.peer;
        if ex.confirmable {
            self.completed[self.completed_at] = Some((peer, ex.mid));
            self.completed_at = (self.completed_at + 1) % COMPLETED_RING;
        }
        self.spare.push(ex);
        let pi = self.peer_index(peer);
        self.peers[pi].outstanding -= 1;
        // Start the oldest queued exchange to this peer.
        if let Some(q) = self
            .exchanges
            .iter()
            .enumerate()
            .filter(|(_, e)| e.peer == peer && e.phase == Phase::Queued)
            .min_by_key(|(_, e)| e.id)
            .map(|(q, _)| q)
        {
            self.begin(now, q);
        }
    }

    /// Writes the next datagram to send into `buf`.
    pub fn poll_transmit(&mut self, buf: &mut [u8]) -> Option<Transmit<P>> {
        if let Some((peer, mid, mtype)) = self.empty_acks.pop_front() {
            let w = MessageWriter::new(buf, mtype, Code::EMPTY, mid, &[]).ok()?;
            return Some(Transmit {
                peer,
                len: w.len(),
                exchange: None,
                mid,
                ordinal: 0,
            });
        }
        let ex = self.exchanges.iter_mut().find(|e| e.needs_tx)?;
        ex.needs_tx = false;
        let ordinal = ex.timer.retransmissions;
        let len = if ex.marking == Marking::None {
            if ex.encoded.is_empty() {
                let mut encoded = std::mem::take(&mut ex.encoded);
                encoded.resize(buf.len(), 0);
                let len = encode_request(&mut encoded, ex, 0)?;
                encoded.truncate(len);
                ex.encoded = encoded;
            }
            let len = ex.encoded.len();
            buf.get_mut(..len)?.copy_from_slice(&ex.encoded);
            len
        } else {
            encode_request(buf, ex, ordinal)?
        };
        Some(Transmit {
            peer: ex.peer,
            len,
            exchange: Some(ex.id),
            mid: ex.mid,
            ordinal,
        })
    }

    /// The next event.
    pub fn poll_event(&mut self) -> Option<ClientEvent<P>> {
        self.events.pop_front()
    }

    /// Forgets what the algorithm learnt about `peer` (a new short-lived client).
    pub fn reset_peer(&mut self, peer: P) {
        if let Some(p) = self.peers.iter_mut().find(|p| p.peer == peer) {
            p.algorithm.reset();
        }
    }

    /// The algorithm state toward `peer`, if any exchange was started to it.
    pub fn algorithm(&self, peer: P) -> Option<&dyn CongestionControl> {
        self.peers
            .iter()
            .find(|p| p.peer == peer)
            .map(|p| &*p.algorithm as &dyn CongestionControl)
    }

    /// Handles a datagram from `from`.
    pub fn handle_datagram(&mut self, now: Nanos, from: P, data: &[u8]) {
        let Ok(msg) = MessageView::decode(data) else {
            return;
        };
        match msg.mtype {
            MessageType::Ack | MessageType::Rst => {
                let found = self
                    .exchanges
                    .iter()
                    .position(|e| e.peer == from && e.mid == msg.mid && e.phase == Phase::Waiting);
                match found {
                    Some(i) if msg.mtype == MessageType::Rst => self.reset(now, i),
                    Some(i) if msg.code == Code::EMPTY => self.empty_ack(now, i),
                    Some(i) if msg.code.is_response() => self.respond(now, i, &msg, true),
                    Some(_) => {}
                    None => {
                        if msg.mtype == MessageType::Ack
                            && msg.code.is_response()
                            && self.recently_completed(from, msg.mid)
                        {
                            self.events.push_back(ClientEvent::DuplicateResponse {
                                peer: from,
                                mid: msg.mid,
                            });
                        }
                    }
                }
            }
            MessageType::Con | MessageType::Non if msg.code.is_response() => {
                let found = self.exchanges.iter().position(|e| {
                    e.peer == from
                        && e.token[..e.token_len as usize] == *msg.token
                        && (e.phase == Phase::Separate
                            || (e.phase == Phase::Waiting && !e.confirmable))
                });
                if msg.mtype == MessageType::Con {
                    // Acknowledge a Confirmable response; one we cannot match
                    // (e.g. a retransmission of one already handled) is rejected
                    // with RST (RFC 7252 §4.2), which also stops the sender.
                    let reply = if found.is_some() {
                        MessageType::Ack
                    } else {
                        MessageType::Rst
                    };
                    self.empty_acks.push_back((from, msg.mid, reply));
                }
                if let Some(i) = found {
                    self.respond(now, i, &msg, false);
                }
            }
            _ => {}
        }
    }

    /// Whether `(peer, mid)` is among the last exchanges completed, searched from
    /// the most recent (duplicates mostly concern the latest exchanges).
    fn recently_completed(&self, peer: P, mid: u16) -> bool {
        (1..=COMPLETED_RING).any(|k| {
            self.completed[(self.completed_at + COMPLETED_RING - k) % COMPLETED_RING]
                == Some((peer, mid))
        })
    }

    fn reset(&mut self, now: Nanos, i: usize) {
        let ex = &self.exchanges[i];
        let (id, peer, n) = (ex.id, ex.peer, ex.timer.retransmissions);
        let pi = self.peer_index(peer);
        self.peers[pi]
            .algorithm
            .on_failure(secs(now), &self.exchanges[i].timer);
        self.events.push_back(ClientEvent::Failed {
            exchange: id,
            peer,
            retransmissions: n,
            reason: FailReason::Reset,
        });
        self.finish(now, i);
    }

    /// Feeds the acknowledgement of exchange `i` to its algorithm.
    fn acknowledge(&mut self, now: Nanos, i: usize, echo: Option<u8>, piggybacked: bool) {
        let pi = self.peer_index(self.exchanges[i].peer);
        let ex = &mut self.exchanges[i];
        let elapsed = now - ex.sent_at[0];
        let echo = echo
            .filter(|j| (*j as usize) < ex.sent_at.len())
            .map(|j| Echo {
                ordinal: j,
                rtt: secs(now - ex.sent_at[j as usize]),
            });
        let ack = Ack {
            now: secs(now),
            elapsed: secs(elapsed),
            echo,
            piggybacked,
        };
        self.peers[pi].algorithm.on_ack(&ex.timer, &ack);
        ex.retransmissions_at_ack = ex.timer.retransmissions;
        ex.elapsed_at_ack = elapsed;
    }

    fn empty_ack(&mut self, now: Nanos, i: usize) {
        self.acknowledge(now, i, None, false);
        self.exchanges[i].phase = Phase::Separate;
    }

    fn respond(&mut self, now: Nanos, i: usize, msg: &MessageView<'_>, piggybacked: bool) {
        let echo = if piggybacked {
            decode_echo(self.exchanges[i].marking, msg)
        } else {
            None
        };
        if self.exchanges[i].phase == Phase::Waiting && self.exchanges[i].confirmable {
            self.acknowledge(now, i, echo, piggybacked);
        } else if self.exchanges[i].phase == Phase::Waiting {
            let ex = &mut self.exchanges[i];
            ex.retransmissions_at_ack = 0;
            ex.elapsed_at_ack = now - ex.sent_at[0];
        }
        let ex = &self.exchanges[i];
        self.events.push_back(ClientEvent::Response {
            exchange: ex.id,
            peer: ex.peer,
            code: msg.code,
            retransmissions: ex.retransmissions_at_ack,
            elapsed: ex.elapsed_at_ack,
            echo: echo.filter(|j| (*j as usize) < ex.sent_at.len()),
            payload: if self.config.keep_payload {
                msg.payload.to_vec()
            } else {
                Vec::new()
            },
        });
        self.finish(now, i);
    }
}

/// The ordinal echoed in a response, decoded according to the request's marking.
fn decode_echo(marking: Marking, msg: &MessageView<'_>) -> Option<u8> {
    match marking {
        Marking::None => None,
        Marking::TransmissionCounter => {
            let v = msg.option(option::TC).and_then(decode_uint)?;
            (1..=256).contains(&v).then(|| (v - 1) as u8)
        }
        Marking::RexmitCount { .. } => {
            let v = msg.option(option::REXMIT_CNT).and_then(decode_uint)?;
            match v {
                255 => Some(0),
                0..=254 => Some(v as u8),
                _ => None,
            }
        }
        Marking::Token => (msg.token.len() == 1).then(|| msg.token[0]),
    }
}

/// Encodes transmission `ordinal` of `ex`.
fn encode_request<P>(buf: &mut [u8], ex: &Exchange<P>, ordinal: u8) -> Option<usize> {
    let mtype = if ex.confirmable {
        MessageType::Con
    } else {
        MessageType::Non
    };
    let ordinal_token = [ordinal];
    let token: &[u8] = match ex.marking {
        Marking::Token => &ordinal_token,
        _ => &ex.token[..ex.token_len as usize],
    };
    let mut w = MessageWriter::new(buf, mtype, ex.method, ex.mid, token).ok()?;
    for segment in ex.path.split('/').filter(|s| !s.is_empty()) {
        w.option(option::URI_PATH, segment.as_bytes()).ok()?;
    }
    match ex.marking {
        Marking::RexmitCount { probe } => {
            let v = if probe && ordinal == 0 {
                255
            } else {
                u32::from(ordinal)
            };
            w.uint_option(option::REXMIT_CNT, v).ok()?;
        }
        Marking::TransmissionCounter => {
            w.uint_option(option::TC, u32::from(ordinal) + 1).ok()?;
        }
        Marking::None | Marking::Token => {}
    }
    w.payload(&ex.payload).ok()?;
    Some(w.len())
}
