//! The CoAP client side, sans-IO (RFC 7252 §4.2, §4.4, §4.7, §5.2, §5.3).
//!
//! - Message IDs are sequential from `first_mid`; tokens are zero-length by
//!   default (the testbed's messages) or [`ClientConfig::token_len`] bytes.
//! - Each destination (peer) has its own congestion-control algorithm
//!   ([`coapcc_rto::CongestionControl`], spec docs/spec/algorithms-spec.md §0.1), built on
//!   first use. The algorithm chooses every retransmission timer; this module
//!   keeps the RFC's retransmission counter, MAX_RETRANSMIT and NSTART.
//! - Transmissions are marked as the algorithm asks ([`Marking`], docs/spec/algorithms-spec.md §4,
//!   §6.6); the echo is decoded back to the ordinal and the precise RTT of that
//!   copy handed to the algorithm.
//! - Matching: an ACK or RST by Message ID and peer; a piggybacked response
//!   completes the exchange only if its token is also the exchange's (RFC
//!   7252 §5.3.2; with FASOR+Token any token the exchange has sent) —
//!   otherwise it acknowledges the request like an Empty ACK and is reported
//!   as [`ClientEvent::MismatchedResponse`]; an Empty ACK stops retransmission and the
//!   separate response is then matched by token (and acknowledged with an
//!   Empty ACK when Confirmable). With zero-length tokens a separate response
//!   is accepted only when exactly one exchange with that peer awaits one.
//! - Duplicate acknowledgements of exchanges already acknowledged (the echoes
//!   of unnecessary retransmissions, docs/spec/algorithms-spec.md §0.2) are reported as
//!   [`ClientEvent::DuplicateResponse`].
//! - Echo (RFC 9175 §2.4): a 4.01 Unauthorized carrying an Echo option is
//!   a server's challenge to show that the client receives at its address
//!   (the amplification bound of RFC 7252 §11.3). The exchange is sent
//!   again, once, as a new request: same method, options and token, a new
//!   Message ID, the Echo value added; its timers start over (the 4.01
//!   acknowledged the first request and went to the algorithm as any
//!   response does). It is reported as [`ClientEvent::EchoRetry`]; a second
//!   4.01 with Echo, or one whose value is empty, longer than 40 bytes or
//!   too large for the request, ends the exchange with that 4.01.
//!
//! Non-confirmable requests are sent once and do not involve the algorithm;
//! they, and Confirmable requests waiting for a separate response, are given
//! up after [`ClientConfig::response_timeout`].
//!
//! In steady state nothing is allocated per packet: exchanges (with their
//! encoded request and send-time buffers) are recycled.

mod exchange;
mod marking;
mod recent;
mod slots;

use std::collections::VecDeque;
use std::sync::Arc;

use coapcc_rto::registry::{AlgorithmInfo, BoxedAlgorithm};
use coapcc_rto::{Ack, AlgorithmParams, CongestionControl, Echo, Marking, ParamError, Random};
use smallvec::SmallVec;

use crate::message::{
    option, peek_header, Code, MessageType, MessageView, MessageWriter, MAX_MESSAGE_SIZE,
};
use crate::{secs, timer_deadline, Nanos};
pub use exchange::EncodedRequest;
use exchange::{Exchange, Phase};
use marking::decode_echo;
use recent::RecentAcks;
use slots::Slots;

/// Client settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientConfig {
    /// MAX_RETRANSMIT (RFC 7252 default 4; the published evaluations used 20).
    pub max_retransmit: u8,
    /// NSTART: most outstanding interactions per destination (RFC 7252 §4.7).
    pub nstart: usize,
    /// Keep response payloads in [`ClientEvent::Response`] (costs an
    /// allocation per response).
    pub keep_payload: bool,
    /// Token length of requests not marked by token (0 in the testbed).
    /// Tokens are a per-client random base plus a counter, so they are unique
    /// among the last 2^(8·len) exchanges.
    pub token_len: u8,
    /// How long a Non-confirmable request waits for its response, and a
    /// Confirmable one for its separate response after an Empty ACK, before it
    /// fails. Default: NON_LIFETIME, 145 s (RFC 7252 §4.8.2).
    pub response_timeout: Nanos,
    /// Largest request, marking included; larger ones are refused. Default
    /// 1152 (RFC 7252 §4.6). [`Client::poll_transmit`] needs a buffer this big.
    pub max_message_size: usize,
}

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig {
            max_retransmit: 4,
            nstart: 1,
            keep_payload: false,
            token_len: 0,
            response_timeout: 145_000_000_000,
            max_message_size: MAX_MESSAGE_SIZE,
        }
    }
}

/// A request to send.
#[derive(Clone, Copy, Debug)]
pub struct Request<'a> {
    /// Method.
    pub method: Code,
    /// `path[?query]`: Uri-Path segments separated by `/` (a leading `/` is
    /// optional), Uri-Query arguments separated by `&`.
    pub path: &'a str,
    /// Payload.
    pub payload: &'a [u8],
    /// Confirmable (retransmitted until acknowledged) or not.
    pub confirmable: bool,
}

/// Identifies an exchange for the lifetime of a client (1, 2, … in request
/// order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ExchangeId(pub u64);

/// A datagram to send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transmit<P> {
    /// Destination.
    pub peer: P,
    /// Bytes written into the caller's buffer.
    pub len: usize,
    /// The exchange (`None` for an Empty ACK or RST the client sends).
    pub exchange: Option<ExchangeId>,
    /// Message ID.
    pub mid: u16,
    /// 0 = original, 1 = first retransmission, …
    pub ordinal: u8,
}

/// Why an exchange failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailReason {
    /// MAX_RETRANSMIT retransmissions went unacknowledged, or no response
    /// came within [`ClientConfig::response_timeout`].
    Timeout,
    /// The peer answered with RST.
    Reset,
}

/// What a response carried, kept when [`ClientConfig::keep_payload`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResponseBody {
    /// The payload.
    pub payload: Vec<u8>,
    /// The options as (number, value), in message order, e.g. the Block2
    /// and ETag of a block-wise transfer.
    pub options: Vec<(u16, Vec<u8>)>,
}

/// What happened, for the application and the metrics.
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
        /// E: from the original transmission to the acknowledgement.
        elapsed: Nanos,
        /// The echoed ordinal given to the algorithm (`None` when nothing
        /// decodable was echoed, or when an Empty ACK acknowledged).
        echo: Option<u8>,
        /// The payload and options (`None` unless
        /// [`ClientConfig::keep_payload`]). Boxed: most clients keep
        /// neither, and the event stays small for them.
        body: Option<Box<ResponseBody>>,
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
    /// The algorithm armed a timer for transmission `ordinal`.
    TimerArmed {
        /// Exchange.
        exchange: ExchangeId,
        /// Peer.
        peer: P,
        /// The transmission it guards.
        ordinal: u8,
        /// Seconds.
        timer: f64,
    },
    /// A retransmission timer expired.
    TimerExpired {
        /// Exchange.
        exchange: ExchangeId,
        /// Peer.
        peer: P,
        /// The expired timer's value (seconds).
        timer: f64,
    },
    /// An acknowledgement (piggybacked response or Empty ACK) for an exchange
    /// already acknowledged: the echo of an unnecessary retransmission.
    DuplicateResponse {
        /// Peer.
        peer: P,
        /// Message ID.
        mid: u16,
    },
    /// A piggybacked response whose Message ID and endpoint are the exchange's
    /// but whose token is none of the tokens it sent (RFC 7252 §5.3.2): it
    /// acknowledges the Confirmable request (retransmission stops, as after an
    /// Empty ACK) but is not its response; the exchange goes on waiting for
    /// one (a separate response) until [`ClientConfig::response_timeout`].
    MismatchedResponse {
        /// The exchange it acknowledged.
        exchange: ExchangeId,
        /// Peer.
        peer: P,
        /// Message ID.
        mid: u16,
    },
    /// The peer answered with a 4.01 carrying an Echo option (RFC 9175
    /// §2.4): the request goes out again with the Echo value under Message
    /// ID `mid`; the exchange goes on.
    EchoRetry {
        /// Exchange.
        exchange: ExchangeId,
        /// Peer.
        peer: P,
        /// The new Message ID.
        mid: u16,
    },
}

/// Why a request was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientError {
    /// The request, with its largest marking, exceeds
    /// [`ClientConfig::max_message_size`].
    TooLarge,
    /// A Uri-Path segment or Uri-Query argument over 255 bytes.
    OptionTooLong,
    /// An extra option of [`Client::request_with_options`] out of order or
    /// outside the numbers it takes.
    OptionOrder,
}

impl std::fmt::Display for ClientError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ClientError::TooLarge => "request too large for one datagram",
            ClientError::OptionTooLong => {
                "a Uri-Path segment or Uri-Query argument exceeds 255 bytes"
            }
            ClientError::OptionOrder => {
                "extra options must be numbered 16 to 251, in ascending order"
            }
        })
    }
}
impl std::error::Error for ClientError {}

/// Builds each destination's algorithm: a registry entry and its parameters.
pub type AlgorithmFactory = (&'static AlgorithmInfo, AlgorithmParams);

/// What a client is set up with, shared by every client of a population (a
/// simulated group of 10⁶ clients holds one copy, not one each:
/// `docs/decisions/performance-choices.md`, "Scale: the engine at a million clients").
#[derive(Clone)]
pub struct ClientSettings {
    /// The protocol settings.
    pub config: ClientConfig,
    /// The destinations' algorithm.
    pub factory: AlgorithmFactory,
}

impl ClientSettings {
    /// Settings to share, once the factory has accepted its parameters.
    pub fn new(config: ClientConfig, factory: AlgorithmFactory) -> Result<Arc<Self>, ParamError> {
        (factory.0.build)(&factory.1)?;
        Ok(Arc::new(ClientSettings { config, factory }))
    }
}

struct Peer<P> {
    peer: P,
    algorithm: BoxedAlgorithm,
    /// Exchanges counting toward NSTART.
    outstanding: usize,
}

/// How many acknowledged Confirmable separate responses are remembered.
const SEPARATE: usize = 16;

/// What a client holds only once it needs it: a testbed client (zero-length
/// tokens, piggybacked responses, nothing to reject) never does, and keeps
/// one pointer instead of 80 bytes (`docs/decisions/performance-choices.md`, "Ten
/// million clients").
struct Rare<P> {
    /// The random base of non-empty tokens, drawn with the first one.
    token_base: Option<u64>,
    /// (peer, Message ID) of the last Confirmable separate responses we
    /// acknowledged: their retransmissions are acknowledged again. A ring of
    /// at most [`SEPARATE`], allocated with the first one.
    separate: Vec<(P, u16)>,
    separate_at: usize,
    /// Empty ACKs and RSTs to send: (peer, Message ID, type).
    control: VecDeque<(P, u16, MessageType)>,
}

impl<P> Rare<P> {
    fn new() -> Box<Self> {
        Box::new(Rare {
            token_base: None,
            separate: Vec::new(),
            separate_at: 0,
            control: VecDeque::new(),
        })
    }
}

/// A CoAP client endpoint for peers of type `P`, drawing randomness from `R`.
pub struct Client<P, R> {
    settings: Arc<ClientSettings>,
    rng: R,
    next_mid: u16,
    next_id: u64,
    next_tx: u64,
    /// The first destination inside the client.
    peers: SmallVec<[Peer<P>; 1]>,
    /// Live exchanges, then ended ones kept for reuse.
    exchanges: Slots<P>,
    /// (peer, Message ID) of the last acknowledged Confirmable exchanges.
    acked: RecentAcks<P>,
    /// What most clients never need, allocated on first use.
    rare: Option<Box<Rare<P>>>,
    /// Oldest first; two inside the client (see [`Client::with_settings`]).
    events: SmallVec<[ClientEvent<P>; 2]>,
}

impl<P: Copy + Eq, R: Random> Client<P, R> {
    /// A client whose destinations each run an algorithm built by `factory`;
    /// Message IDs start at `first_mid`.
    ///
    /// # Panics
    /// If `factory` rejects its parameters (use [`Client::try_new`] to check).
    pub fn new(config: ClientConfig, factory: AlgorithmFactory, rng: R, first_mid: u16) -> Self {
        match Self::try_new(config, factory, rng, first_mid) {
            Ok(c) => c,
            Err(e) => panic!("algorithm `{}`: {e}", factory.0.name),
        }
    }

    /// As [`Client::new`], but checks the algorithm's parameters.
    pub fn try_new(
        config: ClientConfig,
        factory: AlgorithmFactory,
        rng: R,
        first_mid: u16,
    ) -> Result<Self, ParamError> {
        Ok(Self::with_settings(
            ClientSettings::new(config, factory)?,
            rng,
            first_mid,
        ))
    }

    /// A client set up with shared `settings` (their factory already
    /// checked by [`ClientSettings::new`]); Message IDs start at `first_mid`.
    pub fn with_settings(settings: Arc<ClientSettings>, rng: R, first_mid: u16) -> Self {
        Client {
            settings,
            rng,
            next_mid: first_mid,
            next_id: 0,
            next_tx: 0,
            // Room inside the client for one destination, one exchange and
            // two events, what a stop-and-wait client of one server needs:
            // its record is one block of memory, not one allocation each
            // (`docs/decisions/performance-choices.md`, "Ten million clients"). The
            // ended exchange is kept in the same slot for the next request.
            peers: SmallVec::new(),
            exchanges: Slots::new(),
            acked: RecentAcks::new(),
            rare: None,
            // Two events wait at most between polls of a stop-and-wait
            // client (an expiry and the timer re-armed, or the failure).
            events: SmallVec::new(),
        }
    }

    /// The settings.
    pub fn config(&self) -> &ClientConfig {
        &self.settings.config
    }

    fn peer_index(&mut self, peer: P) -> usize {
        if let Some(i) = self.peers.iter().position(|p| p.peer == peer) {
            return i;
        }
        let algorithm = (self.settings.factory.0.build)(&self.settings.factory.1)
            .expect("parameters checked in ClientSettings::new");
        self.peers.push(Peer {
            peer,
            algorithm,
            outstanding: 0,
        });
        self.peers.len() - 1
    }

    /// Starts a request, or queues it while NSTART interactions with `peer` are
    /// outstanding (it starts when one ends).
    pub fn request(
        &mut self,
        now: Nanos,
        peer: P,
        req: &Request<'_>,
    ) -> Result<ExchangeId, ClientError> {
        let max = self.settings.config.max_message_size;
        self.start_request(now, peer, req.confirmable, |ex| ex.encode(req, max))
    }

    /// [`Client::request`] with `extra` options after the request's Uri-Path
    /// and Uri-Query ones (for example Block1, Block2, Size1 and Size2,
    /// RFC 7959): numbered 16 to 251 (below the Echo option and the
    /// transmission markings), in ascending order, each value at most 40
    /// bytes. Fails with [`ClientError::OptionOrder`] for other numbers, and
    /// as [`Client::request`] does otherwise ([`ClientError::TooLarge`] for a
    /// longer value).
    pub fn request_with_options(
        &mut self,
        now: Nanos,
        peer: P,
        req: &Request<'_>,
        extra: &[(u16, &[u8])],
    ) -> Result<ExchangeId, ClientError> {
        let ordered = extra.windows(2).all(|w| w[0].0 <= w[1].0);
        let in_range = extra
            .iter()
            .all(|(n, _)| *n > option::URI_QUERY && *n < option::ECHO);
        if !ordered || !in_range {
            return Err(ClientError::OptionOrder);
        }
        let max = self.settings.config.max_message_size;
        self.start_request(now, peer, req.confirmable, |ex| {
            ex.encode(req, max)?;
            for &(number, value) in extra {
                if !ex.add_option(number, value, max) {
                    return Err(ClientError::TooLarge);
                }
            }
            Ok(())
        })
    }

    /// [`Client::request`] of the request `req` was encoded from, without
    /// encoding its options again: the same exchange, bytes and errors.
    pub fn request_encoded(
        &mut self,
        now: Nanos,
        peer: P,
        req: &EncodedRequest,
    ) -> Result<ExchangeId, ClientError> {
        let max = self.settings.config.max_message_size;
        self.start_request(now, peer, req.confirmable(), |ex| ex.encode_from(req, max))
    }

    /// Starts (or queues) an exchange whose request `encode` writes.
    #[inline]
    fn start_request(
        &mut self,
        now: Nanos,
        peer: P,
        confirmable: bool,
        encode: impl FnOnce(&mut Exchange<P>) -> Result<(), ClientError>,
    ) -> Result<ExchangeId, ClientError> {
        // Written in place in the first spare slot; it becomes live only
        // once its request is encoded.
        let ex = self.exchanges.next_slot(|| Exchange::new(peer));
        ex.peer = peer;
        ex.mid = self.next_mid;
        ex.token_len = self.settings.config.token_len.min(8);
        ex.token = [0; 8];
        if ex.token_len > 0 {
            let rare = self.rare.get_or_insert_with(Rare::new);
            let base = match rare.token_base {
                Some(b) => b,
                None => {
                    let b = (self.rng.uniform() * 2f64.powi(53)) as u64;
                    rare.token_base = Some(b);
                    b
                }
            };
            let t = base.wrapping_add(self.next_id).to_be_bytes();
            ex.token[..usize::from(ex.token_len)]
                .copy_from_slice(&t[8 - usize::from(ex.token_len)..]);
        }
        encode(ex)?;
        self.next_mid = self.next_mid.wrapping_add(1);
        self.next_id += 1;
        ex.id = ExchangeId(self.next_id);
        ex.confirmable = confirmable;
        ex.phase = Phase::Queued;
        ex.sent_at.clear();
        ex.pending_tx = None;
        ex.holds_slot = false;
        ex.echo = None;
        ex.echoed = false;
        ex.deadline = Nanos::MAX;
        let id = ex.id;
        self.exchanges.open_next();
        let pi = self.peer_index(peer);
        if self.peers[pi].outstanding < self.settings.config.nstart {
            self.begin(now, self.exchanges.len() - 1);
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
        ex.holds_slot = true;
        ex.phase = Phase::Waiting;
        ex.sent_at.push(now);
        ex.pending_tx = Some(self.next_tx);
        self.next_tx += 1;
        if ex.confirmable {
            ex.marking = peer.algorithm.marking();
            ex.timer = peer.algorithm.start(secs(now), outstanding, &mut self.rng);
            let name = self.settings.factory.0.name;
            ex.deadline = timer_deadline(now, ex.timer.current, name, "start");
            self.events.push(ClientEvent::TimerArmed {
                exchange: ex.id,
                peer: ex.peer,
                ordinal: 0,
                timer: ex.timer.current,
            });
        } else {
            ex.marking = Marking::None;
            ex.timer = Default::default();
            ex.deadline = now.saturating_add(self.settings.config.response_timeout);
        }
    }

    /// The earliest deadline (retransmission or give-up), if any.
    pub fn poll_timeout(&self) -> Option<Nanos> {
        self.exchanges
            .iter()
            .filter(|e| e.phase != Phase::Queued)
            .map(|e| e.deadline)
            .min()
    }

    /// Fires every deadline due at `now`: retransmits, or gives up.
    pub fn handle_timeout(&mut self, now: Nanos) {
        let mut i = 0;
        while i < self.exchanges.len() {
            let ex = &self.exchanges[i];
            if ex.phase == Phase::Queued || ex.deadline > now {
                i += 1;
                continue;
            }
            let (id, peer) = (ex.id, ex.peer);
            if ex.phase == Phase::Separate || !ex.confirmable {
                // No response in time.
                self.events.push(ClientEvent::Failed {
                    exchange: id,
                    peer,
                    retransmissions: ex.timer.retransmissions,
                    reason: FailReason::Timeout,
                });
                self.finish(now, i);
                continue;
            }
            self.events.push(ClientEvent::TimerExpired {
                exchange: id,
                peer,
                timer: ex.timer.current,
            });
            let pi = self.peer_index(peer);
            let ex = &mut self.exchanges[i];
            if ex.timer.retransmissions >= self.settings.config.max_retransmit {
                self.peers[pi].algorithm.on_failure(secs(now), &ex.timer);
                self.events.push(ClientEvent::Failed {
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
            ex.pending_tx = Some(self.next_tx);
            self.next_tx += 1;
            let name = self.settings.factory.0.name;
            ex.deadline = timer_deadline(now, ex.timer.current, name, "expire");
            self.events.push(ClientEvent::TimerArmed {
                exchange: id,
                peer,
                ordinal: ex.timer.retransmissions,
                timer: ex.timer.current,
            });
            i += 1;
        }
    }

    /// Frees exchange `i`'s NSTART slot and starts queued exchanges to its
    /// peer, oldest first, while there is room.
    fn release_slot(&mut self, now: Nanos, i: usize) {
        let ex = &mut self.exchanges[i];
        if !ex.holds_slot {
            return;
        }
        ex.holds_slot = false;
        let peer = ex.peer;
        let pi = self.peer_index(peer);
        self.peers[pi].outstanding -= 1;
        while self.peers[pi].outstanding < self.settings.config.nstart {
            let next = self
                .exchanges
                .iter()
                .enumerate()
                .filter(|(_, e)| e.peer == peer && e.phase == Phase::Queued)
                .min_by_key(|(_, e)| e.id)
                .map(|(q, _)| q);
            match next {
                Some(q) => self.begin(now, q),
                None => break,
            }
        }
    }

    /// Ends exchange `i`.
    fn finish(&mut self, now: Nanos, i: usize) {
        self.release_slot(now, i);
        self.exchanges.end(i);
    }

    /// Writes the next datagram to send into `buf` (which must hold
    /// [`ClientConfig::max_message_size`] bytes; a transmission that does not
    /// fit stays pending).
    pub fn poll_transmit(&mut self, buf: &mut [u8]) -> Option<Transmit<P>> {
        if let Some(rare) = self.rare.as_mut() {
            if let Some(&(peer, mid, mtype)) = rare.control.front() {
                let w = MessageWriter::new(buf, mtype, Code::EMPTY, mid, &[]).ok()?;
                rare.control.pop_front();
                return Some(Transmit {
                    peer,
                    len: w.len(),
                    exchange: None,
                    mid,
                    ordinal: 0,
                });
            }
        }
        let ex = self
            .exchanges
            .iter_mut()
            .filter(|e| e.pending_tx.is_some())
            .min_by_key(|e| e.pending_tx)?;
        let ordinal = ex.timer.retransmissions;
        let len = ex.write_transmission(buf, ordinal)?;
        ex.pending_tx = None;
        Some(Transmit {
            peer: ex.peer,
            len,
            exchange: Some(ex.id),
            mid: ex.mid,
            ordinal,
        })
    }

    /// The queue of Empty ACKs and RSTs to send.
    fn control(&mut self) -> &mut VecDeque<(P, u16, MessageType)> {
        &mut self.rare.get_or_insert_with(Rare::new).control
    }

    /// The next event.
    pub fn poll_event(&mut self) -> Option<ClientEvent<P>> {
        // A front removal shifts what waits behind: at most a few events.
        (!self.events.is_empty()).then(|| self.events.remove(0))
    }

    /// Forgets what the algorithm learnt about `peer` (a new short-lived
    /// client, spec docs/spec/testbed-spec.md §2): [`CongestionControl::reset`].
    pub fn reset_peer(&mut self, peer: P) {
        if let Some(p) = self.peers.iter_mut().find(|p| p.peer == peer) {
            p.algorithm.reset();
        }
    }

    /// The algorithm state toward `peer`, once an exchange was started to it.
    pub fn algorithm(&self, peer: P) -> Option<&dyn CongestionControl> {
        self.peers
            .iter()
            .find(|p| p.peer == peer)
            .map(|p| &*p.algorithm as &dyn CongestionControl)
    }

    /// Exchanges not yet ended (queued, waiting or awaiting a separate
    /// response).
    pub fn active(&self) -> usize {
        self.exchanges.len()
    }

    /// Interactions with `peer` counting toward NSTART.
    pub fn outstanding(&self, peer: P) -> usize {
        self.peers
            .iter()
            .find(|p| p.peer == peer)
            .map_or(0, |p| p.outstanding)
    }

    /// Handles a datagram received from `from` at `now`.
    pub fn handle_datagram(&mut self, now: Nanos, from: P, data: &[u8]) {
        let msg = match MessageView::decode(data) {
            Ok(m) => m,
            Err(e) => {
                // A malformed Confirmable message is rejected (RFC 7252 §4.2).
                if let Some(h) = peek_header(data) {
                    if h.mtype == MessageType::Con && e.rejects_confirmable() {
                        self.control().push_back((from, h.mid, MessageType::Rst));
                    }
                }
                return;
            }
        };
        match msg.mtype {
            MessageType::Ack | MessageType::Rst => self.on_ack_or_rst(now, from, &msg),
            _ if msg.code.is_response() => self.on_separate(now, from, &msg),
            // A request or ping to a client: reject a Confirmable one.
            MessageType::Con => self.control().push_back((from, msg.mid, MessageType::Rst)),
            MessageType::Non => {}
        }
    }

    fn on_ack_or_rst(&mut self, now: Nanos, from: P, msg: &MessageView<'_>) {
        // An ACK answers a CON; an RST may answer either (RFC 7252 §4.2, §4.3).
        let rst = msg.mtype == MessageType::Rst;
        let found = self.exchanges.iter().position(|e| {
            e.peer == from
                && e.mid == msg.mid
                && e.phase == Phase::Waiting
                && (e.confirmable || rst)
        });
        let Some(i) = found else {
            // The response of an exchange that a mismatched piggybacked
            // response acknowledged: Message ID, endpoint and token match.
            let answers = |e: &Exchange<P>| {
                e.peer == from
                    && e.mid == msg.mid
                    && e.confirmable
                    && e.phase == Phase::Separate
                    && e.token_matches(msg.token)
            };
            if msg.mtype == MessageType::Ack && msg.code.is_response() {
                if let Some(i) = self.exchanges.iter().position(answers) {
                    self.complete(now, i, msg);
                    return;
                }
            }
            if msg.mtype == MessageType::Ack
                && (msg.code.is_response() || msg.code.is_empty())
                && self.recently_acked(from, msg.mid)
            {
                self.events.push(ClientEvent::DuplicateResponse {
                    peer: from,
                    mid: msg.mid,
                });
            }
            return;
        };
        if rst {
            let ex = &self.exchanges[i];
            if ex.confirmable {
                let pi = self.peer_index(from);
                self.peers[pi]
                    .algorithm
                    .on_failure(secs(now), &self.exchanges[i].timer);
            }
            let ex = &self.exchanges[i];
            self.events.push(ClientEvent::Failed {
                exchange: ex.id,
                peer: from,
                retransmissions: ex.timer.retransmissions,
                reason: FailReason::Reset,
            });
            self.finish(now, i);
        } else if msg.code.is_empty() {
            // Empty ACK: the request arrived; the response comes separately.
            self.acknowledge(now, i, None, false);
            self.await_separate(now, i);
        } else if msg.code.is_response() && !self.exchanges[i].token_matches(msg.token) {
            // RFC 7252 §5.3.2: a piggybacked response matches by Message ID
            // and token. This one acknowledges our CON (the Message ID is
            // ours) but answers some other request: for the algorithm it is
            // an Empty ACK (no echo; not a piggybacked response, so it says
            // nothing about Rexmit-Cnt support), and the exchange waits for
            // its own response.
            self.acknowledge(now, i, None, false);
            let ex = &self.exchanges[i];
            self.events.push(ClientEvent::MismatchedResponse {
                exchange: ex.id,
                peer: from,
                mid: msg.mid,
            });
            self.await_separate(now, i);
        } else if msg.code.is_response() {
            let echo = decode_echo(self.exchanges[i].marking, msg);
            self.acknowledge(now, i, echo, true);
            self.complete(now, i, msg);
        }
        // An ACK carrying a request code is meaningless: ignored.
    }

    /// Exchange `i` was acknowledged without its response: it stops being
    /// retransmitted, leaves NSTART and waits for a separate response.
    fn await_separate(&mut self, now: Nanos, i: usize) {
        let ex = &mut self.exchanges[i];
        ex.phase = Phase::Separate;
        ex.pending_tx = None;
        ex.deadline = now.saturating_add(self.settings.config.response_timeout);
        self.release_slot(now, i);
    }

    /// A CON or NON response: matched by token to an exchange with `from`
    /// that awaits a separate response, a NON request, or (non-empty tokens
    /// only) a CON whose ACK was lost or overtaken.
    fn on_separate(&mut self, now: Nanos, from: P, msg: &MessageView<'_>) {
        let awaits = |e: &Exchange<P>| {
            e.phase == Phase::Separate || (e.phase == Phase::Waiting && !e.confirmable)
        };
        let mut candidates = self
            .exchanges
            .iter()
            .enumerate()
            .filter(|(_, e)| e.peer == from && e.token_matches(msg.token))
            .filter(|(_, e)| awaits(e) || (e.phase == Phase::Waiting && !msg.token.is_empty()));
        // Only a response attributable to a single exchange is taken: with
        // zero-length tokens, or ordinal tokens (FASOR+Token) and NSTART > 1,
        // several exchanges may match.
        let found = match (candidates.next(), candidates.next()) {
            (Some((i, _)), None) => Some(i),
            _ => None,
        };
        if msg.mtype == MessageType::Con {
            let known = found.is_some()
                || self
                    .rare
                    .as_ref()
                    .is_some_and(|r| r.separate.contains(&(from, msg.mid)));
            let reply = if known {
                MessageType::Ack
            } else {
                MessageType::Rst
            };
            let rare = self.rare.get_or_insert_with(Rare::new);
            rare.control.push_back((from, msg.mid, reply));
            if found.is_some() {
                if rare.separate.len() < SEPARATE {
                    rare.separate.reserve_exact(SEPARATE);
                    rare.separate.push((from, msg.mid));
                } else {
                    rare.separate[rare.separate_at] = (from, msg.mid);
                    rare.separate_at = (rare.separate_at + 1) % SEPARATE;
                }
            }
        }
        let Some(i) = found else { return };
        if self.exchanges[i].phase == Phase::Waiting {
            if self.exchanges[i].confirmable {
                // The response implies the acknowledgement.
                let echo = decode_echo(self.exchanges[i].marking, msg);
                self.acknowledge(now, i, echo, false);
            } else {
                let ex = &mut self.exchanges[i];
                ex.retransmissions_at_ack = 0;
                ex.elapsed_at_ack = now.saturating_sub(ex.sent_at[0]);
                ex.echo = None;
            }
        }
        self.complete(now, i, msg);
    }

    /// RFC 9175 §2.4: if `msg` is a 4.01 with a usable Echo option and
    /// exchange `i` has not been retried yet, starts it over as a new
    /// request carrying the Echo value (see the module docs).
    fn echo_retry(&mut self, now: Nanos, i: usize, msg: &MessageView<'_>) -> bool {
        if msg.code != Code::UNAUTHORIZED || self.exchanges[i].echoed {
            return false;
        }
        let Some(value) = msg.option(option::ECHO) else {
            return false;
        };
        if value.is_empty() || value.len() > option::ECHO_MAX_LEN {
            return false;
        }
        let max = self.settings.config.max_message_size;
        let mid = self.next_mid;
        let ex = &mut self.exchanges[i];
        if !ex.add_option(option::ECHO, value, max) {
            return false;
        }
        self.next_mid = self.next_mid.wrapping_add(1);
        ex.echoed = true;
        ex.set_mid(mid);
        ex.phase = Phase::Queued;
        ex.sent_at.clear();
        ex.pending_tx = None;
        ex.echo = None;
        ex.deadline = Nanos::MAX;
        let (id, peer) = (ex.id, ex.peer);
        self.events.push(ClientEvent::EchoRetry {
            exchange: id,
            peer,
            mid,
        });
        // Frees its NSTART slot (if it still held one) and starts queued
        // exchanges oldest first — this one among them; else it starts
        // itself when there is room.
        self.release_slot(now, i);
        let pi = self.peer_index(peer);
        if self.exchanges[i].phase == Phase::Queued
            && self.peers[pi].outstanding < self.settings.config.nstart
        {
            self.begin(now, i);
        }
        true
    }

    fn recently_acked(&self, peer: P, mid: u16) -> bool {
        self.acked.contains(peer, mid)
    }

    /// Feeds the first acknowledgement of CON exchange `i` to its algorithm.
    fn acknowledge(&mut self, now: Nanos, i: usize, echo: Option<u8>, piggybacked: bool) {
        let pi = self.peer_index(self.exchanges[i].peer);
        let ex = &mut self.exchanges[i];
        let elapsed = now.saturating_sub(ex.sent_at[0]);
        let echo = echo.filter(|j| usize::from(*j) < ex.sent_at.len());
        let ack = Ack {
            now: secs(now),
            elapsed: secs(elapsed),
            echo: echo.map(|j| Echo {
                ordinal: j,
                rtt: secs(now.saturating_sub(ex.sent_at[usize::from(j)])),
            }),
            piggybacked,
        };
        self.peers[pi].algorithm.on_ack(&ex.timer, &ack);
        ex.echo = echo;
        ex.retransmissions_at_ack = ex.timer.retransmissions;
        ex.elapsed_at_ack = elapsed;
        self.acked.push(ex.peer, ex.mid);
    }

    /// Reports exchange `i`'s response and ends it — unless the response is
    /// an Echo challenge it answers by sending the request again.
    fn complete(&mut self, now: Nanos, i: usize, msg: &MessageView<'_>) {
        if self.echo_retry(now, i, msg) {
            return;
        }
        let ex = &self.exchanges[i];
        self.events.push(ClientEvent::Response {
            exchange: ex.id,
            peer: ex.peer,
            code: msg.code,
            retransmissions: ex.retransmissions_at_ack,
            elapsed: ex.elapsed_at_ack,
            echo: ex.echo,
            body: self.settings.config.keep_payload.then(|| {
                Box::new(ResponseBody {
                    payload: msg.payload.to_vec(),
                    options: msg.options().map(|(n, v)| (n, v.to_vec())).collect(),
                })
            }),
        });
        self.finish(now, i);
    }
}
