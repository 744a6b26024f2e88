//! The CoAP server side, sans-IO (RFC 7252 §4.2–§4.5, §5.2.1, §5.4.1).
//!
//! - A Confirmable request is answered with a piggybacked response in an ACK
//!   carrying the request's Message ID and token; a Non-confirmable request
//!   with a NON response carrying its token.
//! - Deduplication (§4.5): a Confirmable request is remembered by (peer,
//!   Message ID) for EXCHANGE_LIFETIME together with its response; a duplicate
//!   is answered from that cache (processed once), echoing the marking option
//!   of the *current* copy (docs/spec/algorithms-spec.md §4) and, by default, the current copy's
//!   token: a copy whose token differs from the first one's (FASOR+Token's
//!   ordinal tokens, spec docs/spec/algorithms-spec.md §6.6) is answered as a server that
//!   processes an idempotent duplicate again (§4.5's relaxation) answers it.
//!   [`ServerConfig::cached_token`] answers with the *cached* token instead
//!   (the same ACK for every copy); `docs/decisions/coap-udp-choices.md`, "Server",
//!   "FASOR+Token: the token a duplicate's answer carries".
//! - Echo: the Transmission Counter (option 65052, spec docs/spec/algorithms-spec.md §4) is
//!   echoed in every response to a request carrying it; Rexmit-Cnt (65020,
//!   §6.6) only in piggybacked responses. Both only when
//!   [`ServerConfig::echo_options`] is set (a server without support does not).
//! - Rejection (§4.2, §4.3): a Confirmable message with a format error but a
//!   readable version-1 header, a Confirmable Empty message (a "ping") and a
//!   Confirmable response get a matching RST; anything else that cannot be
//!   processed is silently ignored. An unrecognised critical option gets 4.02
//!   Bad Option in a Confirmable exchange and RST in a Non-confirmable one
//!   (§5.4.1).
//!
//! Memory is bounded by [`ServerConfig::max_cache_entries`] (the oldest entry
//! is forgotten first) and, in steady state, nothing is allocated per request.

mod cache;
mod index;

use std::hash::Hash;
use std::sync::Arc;

use crate::message::{option, Code, MessageType, MessageView, MessageWriter};
use crate::Nanos;
use cache::DedupCache;
pub use index::{DedupIndex, DenseIndex, HashIndex};

/// Nanoseconds per second.
const SEC: Nanos = 1_000_000_000;

/// Server settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerConfig {
    /// Echo the TC and Rexmit-Cnt options (default true; false models a
    /// server without support for them).
    pub echo_options: bool,
    /// How long a Confirmable request's (peer, Message ID) is remembered.
    pub exchange_lifetime: Nanos,
    /// Most remembered exchanges; when full, the oldest is forgotten first.
    pub max_cache_entries: usize,
    /// Answer a duplicate with the token of the copy first answered (the
    /// cached response unchanged) instead of the duplicate's own token.
    /// Default false. The two differ only for requests whose copies carry
    /// different tokens (FASOR+Token).
    pub cached_token: bool,
}

impl ServerConfig {
    /// EXCHANGE_LIFETIME (RFC 7252 §4.8.2) re-derived for the evaluations'
    /// MAX_RETRANSMIT = 20 and the 60 s cap on a backed-off timer (spec
    /// docs/spec/algorithms-spec.md §0.1, §7): the timers of the worst case are 3, 6, 12, 24,
    /// 48 and then 60 s, so MAX_TRANSMIT_SPAN = 93 + 15 × 60 = 993 s; adding
    /// 2 × MAX_LATENCY (2 × 100 s) and PROCESSING_DELAY (2 s) gives 1195 s.
    pub const EVALUATION_EXCHANGE_LIFETIME: Nanos = 1195 * SEC;
    /// RFC 7252's own EXCHANGE_LIFETIME (MAX_RETRANSMIT = 4): 247 s.
    pub const RFC_EXCHANGE_LIFETIME: Nanos = 247 * SEC;
}

impl Default for ServerConfig {
    /// Echo on, [`ServerConfig::EVALUATION_EXCHANGE_LIFETIME`], and room for
    /// 65 536 exchanges (a whole testbed run: 400 clients × 50 requests).
    fn default() -> Self {
        ServerConfig {
            echo_options: true,
            exchange_lifetime: Self::EVALUATION_EXCHANGE_LIFETIME,
            max_cache_entries: 1 << 16,
            cached_token: false,
        }
    }
}

/// A response as a handler fills it in. The server reuses these (cleared)
/// between requests, so a handler that only writes into them does not
/// allocate once their capacity has grown.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Response {
    /// Response code (starts as 2.05 Content).
    pub code: Code,
    /// Options as (number, value), in any order (sorted when encoding; repeated
    /// options keep their order). The TC and Rexmit-Cnt options are the
    /// server's to echo: a handler's values for them are not sent.
    pub options: Vec<(u16, Vec<u8>)>,
    /// Payload.
    pub payload: Vec<u8>,
}

impl Response {
    /// Back to 2.05 with no options or payload (capacity kept).
    pub fn clear(&mut self) {
        self.code = Code::CONTENT;
        self.options.clear();
        self.payload.clear();
    }
}

/// Answers requests.
pub trait Handler {
    /// Fills `response` (arriving cleared, code 2.05) for `request`.
    fn handle(&mut self, request: &MessageView<'_>, response: &mut Response);

    /// Whether the handler understands critical option `number` (RFC 7252
    /// §5.4.1); a request with a critical option it does not understand is
    /// answered with 4.02 Bad Option without reaching [`Handler::handle`].
    /// Elective (even) options are never asked about. Default:
    /// [`recognized_by_default`].
    fn recognizes(&self, number: u16) -> bool {
        recognized_by_default(number)
    }
}

/// The critical options every handler understands unless it says otherwise:
/// Uri-Host, Uri-Port, Uri-Path, Uri-Query and Accept ([`Handler::recognizes`]).
pub fn recognized_by_default(number: u16) -> bool {
    matches!(
        number,
        option::URI_HOST | option::URI_PORT | option::URI_PATH | option::URI_QUERY | option::ACCEPT
    )
}

/// The testbed's resource (spec docs/spec/testbed-spec.md §1.2): 2.05 with `size` bytes of
/// payload to any GET, whatever the path; 4.05 Method Not Allowed to other
/// methods.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FixedPayload {
    /// Payload bytes.
    pub size: usize,
}

impl Handler for FixedPayload {
    fn handle(&mut self, request: &MessageView<'_>, response: &mut Response) {
        if request.code == Code::GET {
            response.code = Code::CONTENT;
            response.payload.resize(self.size, b'x');
        } else {
            response.code = Code::METHOD_NOT_ALLOWED;
        }
    }
}

/// What the server sends back for one datagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServerOutput {
    /// Nothing to send.
    Nothing,
    /// Send the first `len` bytes of the output buffer back to the sender.
    Reply {
        /// Bytes written.
        len: usize,
        /// Answered from the deduplication cache: the request was a copy of
        /// one already answered, and so is this reply.
        duplicate: bool,
    },
}

/// Counters of what the server saw (each datagram counts once).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ServerStats {
    /// Requests answered by the handler.
    pub requests: u64,
    /// Duplicate Confirmable requests answered from the cache.
    pub duplicates: u64,
    /// Datagrams that were not valid CoAP.
    pub malformed: u64,
    /// Valid messages rejected with RST: pings, unexpected Confirmable
    /// responses, Non-confirmable requests with an unrecognised critical
    /// option. (Malformed Confirmable messages also get an RST; they count
    /// under `malformed` only, so every datagram counts exactly once.)
    pub rejected: u64,
    /// 4.02 Bad Option responses.
    pub bad_option: u64,
    /// Valid messages silently ignored (ACK, RST, NON responses).
    pub ignored: u64,
    /// Responses that did not fit the output buffer, replaced by 5.00.
    pub too_large: u64,
    /// Cache entries forgotten early because the cache was full.
    pub evicted: u64,
}

/// A CoAP server endpoint for peers of type `P` (`u32` in the simulator,
/// `SocketAddr` on real sockets), answering with `H`, finding remembered
/// exchanges through the index `I` ([`HashIndex`] for any peer,
/// [`DenseIndex`] for peers numbered from 0).
pub struct Server<P, H, I = HashIndex<P>> {
    config: ServerConfig,
    handler: H,
    cache: DedupCache<P, I>,
    stats: ServerStats,
    /// Message ID of the next Non-confirmable response (the server's own
    /// Message ID space, RFC 7252 §4.4).
    next_mid: u16,
    /// The response the handler fills (cleared between requests).
    scratch: Response,
    /// The response last remembered in the cache: the next one equal to it
    /// is remembered as the same shared copy, so a handler that always
    /// answers alike (the testbed's [`FixedPayload`]) costs no allocation or
    /// copy per cache entry.
    last: Option<Arc<Response>>,
}

/// The marking options of the copy being answered (raw values).
#[derive(Clone, Copy, Default)]
struct Echo<'a> {
    rexmit_cnt: Option<&'a [u8]>,
    tc: Option<&'a [u8]>,
}

impl<P: Copy + Eq + Hash, H: Handler> Server<P, H> {
    /// A server answering with `handler`, its cache indexed by hashing.
    pub fn new(config: ServerConfig, handler: H) -> Self {
        let index = HashIndex::with_capacity(cache::reserve(config.max_cache_entries));
        Self::with_index(config, handler, index)
    }
}

impl<P: Copy + Eq, H: Handler, I: DedupIndex<P>> Server<P, H, I> {
    /// A server answering with `handler`, its cache indexed by `index`.
    pub fn with_index(config: ServerConfig, handler: H, index: I) -> Self {
        Server {
            cache: DedupCache::new(config.exchange_lifetime, config.max_cache_entries, index),
            config,
            handler,
            stats: ServerStats::default(),
            next_mid: 0,
            scratch: Response::default(),
            last: None,
        }
    }

    /// Counters so far.
    pub fn stats(&self) -> ServerStats {
        self.stats
    }

    /// Remembered exchanges (some possibly expired but not yet swept).
    pub fn cached(&self) -> usize {
        self.cache.len()
    }

    /// Sets the Message ID of the next Non-confirmable response (responses to
    /// Non-confirmable requests are new messages with the server's own IDs;
    /// the sequence starts at 0).
    pub fn set_next_mid(&mut self, mid: u16) {
        self.next_mid = mid;
    }

    /// The settings.
    pub fn config(&self) -> &ServerConfig {
        &self.config
    }

    /// The handler.
    pub fn handler(&self) -> &H {
        &self.handler
    }

    /// The handler, mutably.
    pub fn handler_mut(&mut self) -> &mut H {
        &mut self.handler
    }

    /// Handles one datagram from `from` received at `now`; any reply is written
    /// into `out` (which should hold the largest response, e.g.
    /// [`crate::message::MAX_MESSAGE_SIZE`] bytes).
    pub fn handle_datagram(
        &mut self,
        now: Nanos,
        from: P,
        data: &[u8],
        out: &mut [u8],
    ) -> ServerOutput {
        let req = match MessageView::decode(data) {
            Ok(m) => m,
            Err(e) => {
                self.stats.malformed += 1;
                return match crate::message::peek_header(data) {
                    Some(h) if h.mtype == MessageType::Con && e.rejects_confirmable() => {
                        rst(out, h.mid)
                    }
                    _ => ServerOutput::Nothing,
                };
            }
        };
        match req.mtype {
            MessageType::Con | MessageType::Non if req.code.is_request() => {}
            // A ping, or a Confirmable response we did not ask for.
            MessageType::Con => return self.reject(out, req.mid),
            _ => {
                self.stats.ignored += 1;
                return ServerOutput::Nothing;
            }
        }
        let confirmable = req.mtype == MessageType::Con;
        let echo = self.echo_of(&req);
        self.cache.expire(now);
        if confirmable {
            if let Some(entry) = self.cache.get(&(from, req.mid), now) {
                self.stats.duplicates += 1;
                let token = if self.config.cached_token {
                    entry.token()
                } else {
                    req.token
                };
                let len = encode(out, MessageType::Ack, req.mid, token, &entry.response, echo);
                return match len {
                    Some(len) => ServerOutput::Reply {
                        len,
                        duplicate: true,
                    },
                    None => ServerOutput::Nothing,
                };
            }
        }
        let handler = &self.handler;
        let unknown_critical = req
            .options()
            .any(|(n, _)| option::is_critical(n) && !handler.recognizes(n));
        if unknown_critical && !confirmable {
            return self.reject(out, req.mid);
        }
        let mut response = std::mem::take(&mut self.scratch);
        response.clear();
        if unknown_critical {
            self.stats.bad_option += 1;
            response.code = Code::BAD_OPTION;
        } else {
            self.stats.requests += 1;
            self.handler.handle(&req, &mut response);
        }
        response.options.sort_by_key(|(n, _)| *n);
        // A piggybacked response carries the request's Message ID; a NON
        // response is a new message with one of ours.
        let (mtype, mid) = if confirmable {
            (MessageType::Ack, req.mid)
        } else {
            self.next_mid = self.next_mid.wrapping_add(1);
            (MessageType::Non, self.next_mid.wrapping_sub(1))
        };
        let mut len = encode(out, mtype, mid, req.token, &response, echo);
        if len.is_none() {
            self.stats.too_large += 1;
            response.clear();
            response.code = Code::INTERNAL_SERVER_ERROR;
            len = encode(out, mtype, mid, req.token, &response, echo);
        }
        if confirmable {
            let shared = match &self.last {
                Some(last) if **last == response => Arc::clone(last),
                _ => {
                    let shared = self.cache.share(&mut response);
                    if let Some(old) = self.last.replace(Arc::clone(&shared)) {
                        self.cache.recycle(old);
                    }
                    shared
                }
            };
            self.stats.evicted += self.cache.insert((from, req.mid), now, req.token, shared);
        }
        self.scratch = response;
        match len {
            Some(len) => ServerOutput::Reply {
                len,
                duplicate: false,
            },
            None => ServerOutput::Nothing,
        }
    }

    fn reject(&mut self, out: &mut [u8], mid: u16) -> ServerOutput {
        self.stats.rejected += 1;
        rst(out, mid)
    }

    fn echo_of<'a>(&self, req: &MessageView<'a>) -> Echo<'a> {
        if !self.config.echo_options {
            return Echo::default();
        }
        Echo {
            rexmit_cnt: if req.mtype == MessageType::Con {
                req.option(option::REXMIT_CNT)
            } else {
                None
            },
            tc: req.option(option::TC),
        }
    }
}

/// Writes an RST with Message ID `mid`.
fn rst(out: &mut [u8], mid: u16) -> ServerOutput {
    match MessageWriter::new(out, MessageType::Rst, Code::EMPTY, mid, &[]) {
        Ok(w) => ServerOutput::Reply {
            len: w.len(),
            duplicate: false,
        },
        Err(_) => ServerOutput::Nothing,
    }
}

/// Encodes a response (options already sorted) with the echoed options merged
/// in at their place (Rexmit-Cnt 65020 before TC 65052); `None` if `out` is too
/// small.
fn encode(
    out: &mut [u8],
    mtype: MessageType,
    mid: u16,
    token: &[u8],
    r: &Response,
    echo: Echo<'_>,
) -> Option<usize> {
    let mut w = MessageWriter::new(out, mtype, r.code, mid, token).ok()?;
    let mut pending = [(option::REXMIT_CNT, echo.rexmit_cnt), (option::TC, echo.tc)];
    let mut flush = |w: &mut MessageWriter<'_>, upto: u16| -> Option<()> {
        for (n, v) in pending.iter_mut() {
            if *n <= upto {
                if let Some(v) = v.take() {
                    w.option(*n, v).ok()?;
                }
            }
        }
        Some(())
    };
    for (n, v) in &r.options {
        if *n == option::TC || *n == option::REXMIT_CNT {
            continue;
        }
        flush(&mut w, *n)?;
        w.option(*n, v).ok()?;
    }
    flush(&mut w, u16::MAX)?;
    w.payload(&r.payload).ok()?;
    Some(w.len())
}
