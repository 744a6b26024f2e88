//! One client exchange: its encoded request (kept in a reusable buffer), its
//! send times, and the bytes of each transmission (RFC 7252 §4.2: a
//! retransmission is the identical message, same Message ID; only the
//! transmission marking of spec docs/spec/algorithms-spec.md §4/§6.6 differs).

use coapcc_rto::{ExchangeTimer, Marking};
use smallvec::SmallVec;

use super::marking::{encode_marking_option, marking_option};
use super::{ClientError, ExchangeId, Request};
use crate::message::{option, Code, MessageType, MessageWriter, MAX_MESSAGE_SIZE};
use crate::Nanos;

/// Request bytes kept inside the exchange before they spill to an
/// allocation: the testbed's requests (a GET with one Uri-Path segment) fit.
pub(crate) const INLINE_REQUEST: usize = 24;

/// The scratch a request known to be short is encoded in ([`Exchange::encode`]).
const SMALL_REQUEST: usize = 64;

/// At least the bytes `req` encodes to: header and the longest token
/// (12), then per Uri-Path or Uri-Query option at most 3 bytes of option
/// header (no delta beyond 268, no value beyond 255 bytes) besides its value;
/// there are at most `path.len() + 2` of them and their values together are
/// shorter than the path; then the payload marker and the payload.
fn encoded_bound(req: &Request<'_>) -> usize {
    let path = req.path.len();
    12 + 3 * (path + 2) + path + 1 + req.payload.len()
}

/// A request encoded once for sending many times
/// ([`super::Client::request_encoded`]): its options, payload marker and
/// payload, which do not depend on the Message ID or token. Splitting the
/// path into options for every request was a tenth of a testbed run's work
/// (`docs/decisions/performance-choices.md`, "Work per event").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EncodedRequest {
    method: Code,
    confirmable: bool,
    /// Options, then the payload marker and payload.
    body: Vec<u8>,
    /// Bytes of `body` that are options.
    options_len: usize,
    /// The number of the last option.
    last_option: u16,
}

impl EncodedRequest {
    /// Encodes `req` for requests of at most `max_size` bytes (with the
    /// largest marking and no token; a client's
    /// [`super::ClientConfig::max_message_size`], with its token, is checked
    /// with each request). Fails as [`super::Client::request`] would.
    pub fn new(req: &Request<'_>, max_size: usize) -> Result<Self, ClientError> {
        let mut ex = Exchange::new(());
        ex.encode(req, max_size)?;
        Ok(EncodedRequest {
            method: req.method,
            confirmable: req.confirmable,
            body: ex.encoded[4..].to_vec(),
            options_len: ex.options_end - 4,
            last_option: ex.last_option,
        })
    }

    /// Whether the request is Confirmable.
    pub fn confirmable(&self) -> bool {
        self.confirmable
    }
}

/// A request's message type.
fn message_type(confirmable: bool) -> MessageType {
    if confirmable {
        MessageType::Con
    } else {
        MessageType::Non
    }
}

/// Where an exchange is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Waiting for room under NSTART.
    Queued,
    /// Sent; a CON is retransmitted until acknowledged, a NON waits for its
    /// response.
    Waiting,
    /// A CON acknowledged by an Empty ACK, waiting for the separate response.
    Separate,
}

pub(crate) struct Exchange<P> {
    pub id: ExchangeId,
    pub peer: P,
    pub mid: u16,
    pub token: [u8; 8],
    pub token_len: u8,
    pub confirmable: bool,
    pub phase: Phase,
    pub timer: ExchangeTimer,
    pub marking: Marking,
    /// The retransmission deadline (CON, Waiting) or the give-up deadline
    /// (NON, Waiting; Separate).
    pub deadline: Nanos,
    /// Send time of every transmission, by ordinal (the first four inside
    /// the exchange).
    pub sent_at: SmallVec<[Nanos; 4]>,
    /// Set while a transmission waits for `poll_transmit`: its queue order.
    pub pending_tx: Option<u64>,
    /// Whether the exchange counts toward NSTART (RFC 7252 §4.7: until it is
    /// acknowledged or, for a NON, answered).
    pub holds_slot: bool,
    /// The request as sent without marking: header, own token, options, then
    /// from `options_end` the payload marker and payload.
    /// The first [`INLINE_REQUEST`] bytes inside the exchange.
    pub encoded: SmallVec<[u8; INLINE_REQUEST]>,
    pub options_end: usize,
    pub last_option: u16,
    /// What the acknowledgement gave: echoed ordinal, retransmissions, E.
    pub echo: Option<u8>,
    pub retransmissions_at_ack: u8,
    pub elapsed_at_ack: Nanos,
    /// Sent again with an Echo option after a 4.01 (RFC 9175 §2.4): at
    /// most once per exchange.
    pub echoed: bool,
}

impl<P: Copy> Exchange<P> {
    pub fn new(peer: P) -> Self {
        Exchange {
            id: ExchangeId(0),
            peer,
            mid: 0,
            token: [0; 8],
            token_len: 0,
            confirmable: true,
            phase: Phase::Queued,
            timer: ExchangeTimer::default(),
            marking: Marking::None,
            deadline: Nanos::MAX,
            sent_at: SmallVec::new(),
            pending_tx: None,
            holds_slot: false,
            encoded: SmallVec::new(),
            options_end: 0,
            last_option: 0,
            echo: None,
            retransmissions_at_ack: 0,
            elapsed_at_ack: 0,
            echoed: false,
        }
    }

    pub fn token(&self) -> &[u8] {
        &self.token[..usize::from(self.token_len)]
    }

    /// Encodes the request into the exchange's buffer (reusing its capacity).
    /// Uri-Path segments come from `path` (a leading `/` is dropped, then
    /// every `/` separates segments), Uri-Query from what follows `?` (split at
    /// `&`). The encoding plus the largest marking must fit `max_size`.
    ///
    /// The request is written in a scratch buffer and only its bytes are kept,
    /// so the exchange's buffer is as large as the requests it held, not as
    /// `max_size` (issue 12: memory per client).
    ///
    /// A request whose encoding is known to fit [`SMALL_REQUEST`] bytes (by
    /// [`encoded_bound`]) is written in a scratch of that size: zeroing the
    /// largest message's scratch for each request cost more than encoding it
    /// (`docs/decisions/performance-choices.md`, "Work per event"). The buffer is
    /// never shorter than the encoding, so the result is the same.
    pub fn encode(&mut self, req: &Request<'_>, max_size: usize) -> Result<(), ClientError> {
        let mut small = [0u8; SMALL_REQUEST];
        let mut scratch: [u8; MAX_MESSAGE_SIZE];
        let mut large = Vec::new();
        let bound = encoded_bound(req);
        let buf = if bound <= SMALL_REQUEST {
            &mut small[..bound.min(max_size)]
        } else if max_size <= MAX_MESSAGE_SIZE {
            scratch = [0u8; MAX_MESSAGE_SIZE];
            &mut scratch[..max_size]
        } else {
            large.resize(max_size, 0);
            &mut large[..]
        };
        let result = self.encode_into(buf, req, max_size);
        self.encoded.clear();
        if let Ok(len) = result {
            self.encoded.extend_from_slice(&buf[..len]);
        }
        result.map(|_| ())
    }

    fn encode_into(
        &mut self,
        buf: &mut [u8],
        req: &Request<'_>,
        max_size: usize,
    ) -> Result<usize, ClientError> {
        let token = self.token;
        let mut w = MessageWriter::new(
            buf,
            message_type(req.confirmable),
            req.method,
            self.mid,
            &token[..usize::from(self.token_len)],
        )
        .map_err(|_| ClientError::TooLarge)?;
        let (path, query) = match req.path.split_once('?') {
            Some((p, q)) => (p, Some(q)),
            None => (req.path, None),
        };
        let path = path.strip_prefix('/').unwrap_or(path);
        let mut last = 0;
        let mut put = |w: &mut MessageWriter<'_>, number: u16, value: &str| {
            if value.len() > 255 {
                return Err(ClientError::OptionTooLong);
            }
            w.option(number, value.as_bytes())
                .map_err(|_| ClientError::TooLarge)?;
            last = number;
            Ok(())
        };
        if !path.is_empty() {
            for segment in path.split('/') {
                put(&mut w, option::URI_PATH, segment)?;
            }
        }
        for q in query.into_iter().flat_map(|q| q.split('&')) {
            put(&mut w, option::URI_QUERY, q)?;
        }
        self.last_option = last;
        self.options_end = w.len();
        w.payload(req.payload).map_err(|_| ClientError::TooLarge)?;
        if w.len() + super::marking::MAX_MARKING_OVERHEAD > max_size {
            return Err(ClientError::TooLarge);
        }
        Ok(w.len())
    }

    /// Encodes the request `req` was built from into the exchange's buffer:
    /// the header with the exchange's Message ID and token, then `req`'s
    /// options and payload as they were encoded once. The bytes, and the
    /// errors, are those of [`Exchange::encode`] of that request.
    pub fn encode_from(
        &mut self,
        req: &EncodedRequest,
        max_size: usize,
    ) -> Result<(), ClientError> {
        self.encoded.clear();
        // The header and token (at most 4 + 8 bytes), as `encode` writes them.
        let mut head = [0u8; 12];
        let token = self.token;
        let head_len = MessageWriter::new(
            &mut head,
            message_type(req.confirmable),
            req.method,
            self.mid,
            &token[..usize::from(self.token_len)],
        )
        .map_err(|_| ClientError::TooLarge)?
        .len();
        // A request that does not fit leaves `max_size` less than its size
        // with the largest marking.
        if head_len + req.body.len() + super::marking::MAX_MARKING_OVERHEAD > max_size {
            return Err(ClientError::TooLarge);
        }
        self.encoded.extend_from_slice(&head[..head_len]);
        self.encoded.extend_from_slice(&req.body);
        self.options_end = head_len + req.options_len;
        self.last_option = req.last_option;
        Ok(())
    }

    /// Adds option `number` with `value` to the encoded request, after its
    /// Uri-Path and Uri-Query options and before any marking (so `number`
    /// must be at least the last option's, and below the marking options'
    /// numbers). `false`, and nothing changed, if it does not fit
    /// `max_size` with the largest marking.
    pub fn add_option(&mut self, number: u16, value: &[u8], max_size: usize) -> bool {
        if number < self.last_option {
            return false;
        }
        // The option's bytes: a writer starting from option number 0 given
        // the delta as the number writes exactly the delta encoding.
        let mut scratch = [0u8; 4 + 5 + option::ECHO_MAX_LEN];
        let len = match MessageWriter::new(&mut scratch, MessageType::Con, Code::GET, 0, &[])
            .and_then(|mut w| {
                w.option(number - self.last_option, value)?;
                Ok(w.len())
            }) {
            Ok(n) => n,
            Err(_) => return false,
        };
        let bytes = &scratch[4..len];
        if self.encoded.len() + bytes.len() + super::marking::MAX_MARKING_OVERHEAD > max_size {
            return false;
        }
        self.encoded
            .insert_many(self.options_end, bytes.iter().copied());
        self.options_end += bytes.len();
        self.last_option = number;
        true
    }

    /// Gives the exchange a new Message ID (in the encoded request too).
    pub fn set_mid(&mut self, mid: u16) {
        self.mid = mid;
        self.encoded[2..4].copy_from_slice(&mid.to_be_bytes());
    }

    /// Whether `token` is this exchange's (for the Token marking: any ordinal
    /// sent so far).
    pub fn token_matches(&self, token: &[u8]) -> bool {
        match self.marking {
            Marking::Token => matches!(token, [j] if usize::from(*j) < self.sent_at.len()),
            _ => token == self.token(),
        }
    }

    /// Writes transmission `ordinal` into `buf`; `None` if it does not fit.
    pub fn write_transmission(&self, buf: &mut [u8], ordinal: u8) -> Option<usize> {
        let own_tkl = usize::from(self.token_len);
        let ordinal_token = [ordinal];
        let token: &[u8] = match self.marking {
            Marking::Token => &ordinal_token,
            _ => self.token(),
        };
        let (opt, opt_len) = match marking_option(self.marking, ordinal) {
            Some((number, value)) => encode_marking_option(number, value, self.last_option),
            None if self.marking != Marking::Token => {
                // Unmarked, with its own token: the request as encoded, in
                // one copy.
                let len = self.encoded.len();
                buf.get_mut(..len)?.copy_from_slice(&self.encoded);
                return Some(len);
            }
            None => ([0; 8], 0),
        };
        let options = &self.encoded[4 + own_tkl..self.options_end];
        let rest = &self.encoded[self.options_end..];
        let len = 4 + token.len() + options.len() + opt_len + rest.len();
        let out = buf.get_mut(..len)?;
        out[0] = (self.encoded[0] & 0xF0) | token.len() as u8;
        out[1..4].copy_from_slice(&self.encoded[1..4]);
        let mut at = 4;
        for part in [token, options, &opt[..opt_len], rest] {
            out[at..at + part.len()].copy_from_slice(part);
            at += part.len();
        }
        Some(len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An exchange's request as [`Exchange::encode`] and
    /// [`Exchange::encode_from`] write it: bytes, option bounds and errors.
    fn both(req: &Request<'_>, token_len: u8, max: usize) -> [Result<Vec<u8>, ClientError>; 2] {
        let template = EncodedRequest::new(req, MAX_MESSAGE_SIZE);
        let mut out = [Ok(Vec::new()), Ok(Vec::new())];
        for (k, o) in out.iter_mut().enumerate() {
            let mut ex = Exchange::new(0u32);
            ex.mid = 0xBEEF;
            ex.token = [1, 2, 3, 4, 5, 6, 7, 8];
            ex.token_len = token_len;
            let r = match (k, &template) {
                (0, _) => ex.encode(req, max),
                (_, Ok(t)) => ex.encode_from(t, max),
                (_, Err(e)) => Err(*e),
            };
            *o = r.map(|()| {
                let mut v = ex.encoded.to_vec();
                v.extend_from_slice(&(ex.options_end as u32).to_be_bytes());
                v.extend_from_slice(&ex.last_option.to_be_bytes());
                v
            });
        }
        out
    }

    #[test]
    fn an_encoded_request_gives_the_same_exchange() {
        let long = "x".repeat(300);
        let paths = ["", "sense", "/a/b/c", "a?x=1&y", "?q", "a//b", &long[..]];
        let payloads: [&[u8]; 2] = [b"", b"hello"];
        for path in paths {
            for payload in payloads {
                for (method, confirmable) in [(Code::GET, true), (Code::POST, false)] {
                    for token_len in [0, 3, 8] {
                        for max in [16, 24, 40, MAX_MESSAGE_SIZE] {
                            let req = Request {
                                method,
                                path,
                                payload,
                                confirmable,
                            };
                            let [a, b] = both(&req, token_len, max);
                            assert_eq!(a, b, "{path:?} {payload:?} {token_len} {max}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn the_small_scratch_bound_holds() {
        // Every option of a path of separators, each with a 1-byte header.
        for path in ["/", "//", "?&&", "a/b?c&d", "/x/y/z?"] {
            let req = Request {
                method: Code::GET,
                path,
                payload: b"p",
                confirmable: true,
            };
            let mut ex = Exchange::new(0u32);
            ex.token_len = 8;
            ex.encode(&req, MAX_MESSAGE_SIZE).unwrap();
            assert!(ex.encoded.len() <= encoded_bound(&req), "{path:?}");
        }
    }
}
