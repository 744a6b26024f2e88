//! The CoAP server side (RFC 7252 §4.2, §4.5, §5.2.1), sans-IO: piggybacked
//! responses, deduplication of Confirmable requests within EXCHANGE_LIFETIME
//! answered from a bounded cache, and the echo of the Transmission Counter
//! (spec algorithms.md §4) and Rexmit-Cnt (§6.6) options.

use std::collections::{HashMap, VecDeque};

use foldhash::fast::RandomState;
use std::hash::Hash;

use crate::message::{option, Code, MessageType, MessageView, MessageWriter};
use crate::Nanos;

/// Server settings.
#[derive(Clone, Debug, PartialEq)]
pub struct ServerConfig {
    /// Echo TC / Rexmit-Cnt options (a server without support does not).
    pub echo_options: bool,
    /// How long a Confirmable request's Message ID is remembered.
    pub exchange_lifetime: Nanos,
    /// Most remembered exchanges; the oldest is forgotten first.
    pub max_cache_entries: usize,
}

impl Default for ServerConfig {
    /// EXCHANGE_LIFETIME re-derived (RFC 7252 §4.8.2) for MAX_RETRANSMIT = 20 with
    /// timers capped at 60 s: MAX_TRANSMIT_SPAN = 3 + 6 + 12 + 24 + 48 + 15 × 60 =
    /// 993 s, plus 2 × MAX_LATENCY (100 s each) and PROCESSING_DELAY (2 s) = 1195 s.
    fn default() -> Self {
        ServerConfig {
            echo_options: true,
            exchange_lifetime: 1195 * 1_000_000_000,
            max_cache_entries: 65_536,
        }
    }
}

/// What a handler fills in for a response.
#[derive(Clone, Debug, Default)]
pub struct Response {
    /// Response code.
    pub code: Code,
    /// Options (number, value), any order.
    pub options: Vec<(u16, Vec<u8>)>,
    /// Payload.
    pub payload: Vec<u8>,
}

impl Default for Code {
    fn default() -> Self {
        Code::CONTENT
    }
}

/// Answers requests. `response` arrives empty (code 2.05) and may be reused
/// between calls, so a handler need not allocate.
pub trait Handler {
    /// Fills `response` for `request`.
    fn handle(&mut self, request: &MessageView<'_>, response: &mut Response);
}

/// The testbed's resource: 2.05 with a payload of `size` bytes to any GET,
/// 4.05 to other methods.
#[derive(Clone, Debug)]
pub struct FixedPayload {
    /// Payload bytes.
    pub size: usize,
}

impl Handler for FixedPayload {
    fn handle(&mut self, request: &MessageView<'_>, response: &mut Response) {
        response.options.clear();
        response.payload.clear();
        if request.code == Code::GET {
            response.code = Code::CONTENT;
            response.payload.resize(self.size, b'x');
        } else {
            response.code = Code::METHOD_NOT_ALLOWED;
        }
    }
}

/// What the server sends back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServerOutput {
    /// Nothing to send.
    Nothing,
    /// `len` bytes in the output buffer; `duplicate` when answered from the
    /// deduplication cache.
    Reply {
        /// Bytes written.
        len: usize,
        /// A duplicate of a request already answered.
        duplicate: bool,
    },
}

/// Counters of what the server saw.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ServerStats {
    /// Requests answered by the handler.
    pub requests: u64,
    /// Duplicates answered from the cache.
    pub duplicates: u64,
    /// Datagrams that were not valid CoAP.
    pub malformed: u64,
    /// Valid messages ignored (ACK, RST, responses, NON duplicates).
    pub ignored: u64,
    /// Cache entries evicted before their lifetime because the cache was full.
    pub evicted: u64,
}

struct Cached {
    at: Nanos,
    response: Response,
    token: [u8; 8],
    token_len: u8,
}

/// A CoAP server endpoint for peers of type `P`.
pub struct Server<P, H> {
    config: ServerConfig,
    handler: H,
    cache: HashMap<(P, u16), Cached, RandomState>,
    order: VecDeque<(Nanos, P, u16)>,
    spare: Vec<Response>,
    stats: ServerStats,
}

impl<P: Copy + Eq + Hash, H: Handler> Server<P, H> {
    /// A server answering with `handler`.
    pub fn new(config: ServerConfig, handler: H) -> Self {
        let cap = config.max_cache_entries.min(1 << 16);
        Server {
            config,
            handler,
            cache: HashMap::with_capacity_and_hasher(cap, RandomState::default()),
            order: VecDeque::with_capacity(cap),
            spare: Vec::new(),
            stats: ServerStats::default(),
        }
    }

    /// Counters so far.
    pub fn stats(&self) -> ServerStats {
        self.stats
    }

    /// Remembered exchanges.
    pub fn cached(&self) -> usize {
        self.cache.len()
    }

    /// The handler.
    pub fn handler_mut(&mut self) -> &mut H {
        &mut self.handler
    }

    /// Forgets exchanges older than EXCHANGE_LIFETIME, and the oldest ones while
    /// the cache is full.
    fn expire(&mut self, now: Nanos) {
        while let Some(&(at, peer, mid)) = self.order.front() {
            let full = self.cache.len() >= self.config.max_cache_entries;
            let old = now.saturating_sub(at) >= self.config.exchange_lifetime;
            if !old && !full {
                break;
            }
            self.order.pop_front();
            // The key may since have been reused by a newer exchange.
            if self.cache.get(&(peer, mid)).is_some_and(|c| c.at == at) {
                let c = self.cache.remove(&(peer, mid)).expect("present");
                if !old {
                    self.stats.evicted += 1;
                }
                self.spare.push(c.response);
            }
        }
    }

    /// Handles one datagram from `from`; writes any reply into `out`.
    pub fn handle_datagram(
        &mut self,
        now: Nanos,
        from: P,
        data: &[u8],
        out: &mut [u8],
    ) -> ServerOutput {
        let req = match MessageView::decode(data) {
            Ok(m) => m,
            Err(_) => {
                self.stats.malformed += 1;
                // RFC 7252 §4.2: a malformed Confirmable message is rejected with
                // RST when its header can be read.
                if data.len() >= 4 && data[0] >> 6 == 1 && (data[0] >> 4) & 3 == 0 {
                    return write_rst(out, u16::from_be_bytes([data[2], data[3]]));
                }
                return ServerOutput::Nothing;
            }
        };
        match req.mtype {
            // CoAP ping (an Empty CON) is answered with RST (RFC 7252 §4.3).
            MessageType::Con if req.code == Code::EMPTY => return write_rst(out, req.mid),
            MessageType::Con | MessageType::Non if req.code.is_request() => {}
            // A Confirmable message we cannot process is rejected (§4.2).
            MessageType::Con => {
                self.stats.ignored += 1;
                return write_rst(out, req.mid);
            }
            _ => {
                self.stats.ignored += 1;
                return ServerOutput::Nothing;
            }
        }
        let echo = self.echo_of(&req);
        self.expire(now);
        if req.mtype == MessageType::Con {
            if let Some(c) = self.cache.get(&(from, req.mid)) {
                // A duplicate: the cached response (with the cached token), but
                // echoing the option value of this copy.
                self.stats.duplicates += 1;
                let token = &c.token[..c.token_len as usize];
                return match encode(out, MessageType::Ack, req.mid, token, &c.response, echo) {
                    Some(len) => ServerOutput::Reply {
                        len,
                        duplicate: true,
                    },
                    None => ServerOutput::Nothing,
                };
            }
        }
        self.stats.requests += 1;
        let mut response = self.spare.pop().unwrap_or_default();
        response.code = Code::CONTENT;
        response.options.clear();
        response.payload.clear();
        self.handler.handle(&req, &mut response);
        response.options.sort_by_key(|(n, _)| *n);
        let mtype = if req.mtype == MessageType::Con {
            MessageType::Ack
        } else {
            MessageType::Non
        };
        let len = encode(out, mtype, req.mid, req.token, &response, echo);
        if req.mtype == MessageType::Con {
            let mut token = [0u8; 8];
            token[..req.token.len()].copy_from_slice(req.token);
            self.cache.insert(
                (from, req.mid),
                Cached {
                    at: now,
                    response,
                    token,
                    token_len: req.token.len() as u8,
                },
            );
            self.order.push_back((now, from, req.mid));
        } else {
            self.spare.push(response);
        }
        match len {
            Some(len) => ServerOutput::Reply {
                len,
                duplicate: false,
            },
            None => ServerOutput::Nothing,
        }
    }

    fn echo_of(&self, req: &MessageView<'_>) -> Option<(u16, u32)> {
        if !self.config.echo_options {
            return None;
        }
        // Rexmit-Cnt is echoed only in piggybacked responses (to CON requests).
        if req.mtype == MessageType::Con {
            if let Some(v) = req.uint_option(option::REXMIT_CNT) {
                return Some((option::REXMIT_CNT, v));
            }
        }
        req.uint_option(option::TC).map(|v| (option::TC, v))
    }
}

fn write_rst(out: &mut [u8], mid: u16) -> ServerOutput {
    match MessageWriter::new(out, MessageType::Rst, Code::EMPTY, mid, &[]) {
        Ok(w) => ServerOutput::Reply {
            len: w.len(),
            duplicate: false,
        },
        Err(_) => ServerOutput::Nothing,
    }
}

/// Encodes a response (options sorted) with an optional echo option merged in.
fn encode(
    out: &mut [u8],
    mtype: MessageType,
    mid: u16,
    token: &[u8],
    r: &Response,
    echo: Option<(u16, u32)>,
) -> Option<usize> {
    let mut w = MessageWriter::new(out, mtype, r.code, mid, token).ok()?;
    let mut echo = echo;
    for (n, v) in &r.options {
        if let Some((en, ev)) = echo.filter(|(en, _)| en <= n) {
            w.uint_option(en, ev).ok()?;
            echo = None;
        }
        w.option(*n, v).ok()?;
    }
    if let Some((en, ev)) = echo {
        w.uint_option(en, ev).ok()?;
    }
    w.payload(&r.payload).ok()?;
    Some(w.len())
}
