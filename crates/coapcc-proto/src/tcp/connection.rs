//! A CoAP-over-TCP connection as a sans-IO state machine (RFC 8323 §3–5;
//! docs/spec/transport-tcp-spec.md §1).
//!
//! It sits on a reliable byte stream: bytes read from the stream go into
//! [`CoapTcpConnection::handle_bytes`], bytes to write come out of
//! [`CoapTcpConnection::output`] / [`CoapTcpConnection::consume_output`].
//!
//! - Each side's first message is its CSM, queued at construction; the
//!   initiator does not wait for the peer's CSM before its requests (§4.3).
//! - The first message received must be a CSM, or the connection is aborted.
//! - Requests are answered through a [`RequestHandler`]; responses are matched
//!   to outstanding requests by token, and tokens are scoped to the
//!   connection. There are no types, Message IDs, retransmissions or
//!   deduplication: the stream is reliable.
//! - Ping is answered with Pong carrying the same token; Release stops new
//!   requests; a malformed frame, an invalid CSM, or a frame larger than our
//!   Max-Message-Size is answered with Abort (7.05) and the connection must
//!   then be closed ([`CoapTcpConnection::should_close`]).

use std::collections::VecDeque;

use super::decoder::FrameDecoder;
use super::frame::{FrameView, FrameWriter};
use super::signal::{self, Csm};
use super::FrameError;
use crate::message::Code;

/// A token of up to 8 bytes, stored inline.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Token {
    len: u8,
    bytes: [u8; 8],
}

impl Token {
    /// A token from bytes; `None` if longer than 8.
    pub fn new(bytes: &[u8]) -> Option<Token> {
        if bytes.len() > 8 {
            return None;
        }
        let mut t = Token {
            len: bytes.len() as u8,
            bytes: [0; 8],
        };
        t.bytes[..bytes.len()].copy_from_slice(bytes);
        Some(t)
    }
    /// The token bytes.
    pub fn as_slice(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }
}

impl core::fmt::Debug for Token {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Token({:02x?})", self.as_slice())
    }
}

/// Which end of the connection this is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Opened the TCP connection (the CoAP client in the testbed).
    Initiator,
    /// Accepted it (the server).
    Responder,
}

/// Connection state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConnState {
    /// Messages flow.
    Open,
    /// Release sent or received: no new requests.
    Released,
    /// Abort sent or received: close the stream.
    Aborted,
}

/// What happened on the connection, for the application or simulator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConnEvent {
    /// The peer's CSM (first or later) was applied.
    PeerCsm(Csm),
    /// A response to an outstanding request.
    Response {
        /// The request's token.
        token: Token,
        /// Response code.
        code: Code,
        /// Payload length.
        payload_len: usize,
        /// Whole frame length.
        frame_len: usize,
    },
    /// A request was answered through the handler.
    RequestServed {
        /// The request's token.
        token: Token,
        /// Request code.
        code: Code,
    },
    /// A response matched no outstanding request (ignored).
    UnmatchedResponse(Token),
    /// A Pong answered our Ping.
    Pong(Token),
    /// The peer's Ping was answered with a Pong (same token).
    PingAnswered(Token),
    /// The peer sent Release.
    PeerReleased,
    /// The peer sent Abort.
    PeerAborted,
    /// We sent Abort because of this error; the stream must be closed.
    Aborted(AbortCause),
    /// A message ignored as RFC 8323 asks (Empty, unknown signalling code or
    /// reserved class).
    Ignored(Code),
}

/// Why we aborted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AbortCause {
    /// The byte stream did not parse as frames.
    Malformed(FrameError),
    /// The peer's first message was not a CSM.
    MissingCsm,
    /// The peer's CSM carried an unknown critical option.
    BadCsmOption(u16),
}

/// Why a message could not be queued.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendError {
    /// The connection was released or aborted.
    NotOpen,
    /// A request with this token is still outstanding.
    TokenInUse,
    /// Larger than the peer's Max-Message-Size.
    TooLarge,
    /// The message cannot be encoded.
    Encode(FrameError),
}

/// The response a [`RequestHandler`] fills in. Its buffers are reused from
/// request to request.
#[derive(Clone, Debug)]
pub struct Response {
    /// Response code (2.05 Content unless set).
    pub code: Code,
    /// Options, in ascending number order.
    pub options: Vec<(u16, Vec<u8>)>,
    /// Payload.
    pub payload: Vec<u8>,
}

impl Default for Response {
    fn default() -> Self {
        Response {
            code: Code(0x45),
            options: Vec::new(),
            payload: Vec::new(),
        }
    }
}

impl Response {
    fn reset(&mut self) {
        self.code = Code(0x45);
        self.options.clear();
        self.payload.clear();
    }
}

/// Answers requests.
pub trait RequestHandler {
    /// Fills `resp` for `req` (code, options, payload); the token is echoed.
    fn handle(&mut self, req: &FrameView<'_>, resp: &mut Response);
}

impl<F: FnMut(&FrameView<'_>, &mut Response)> RequestHandler for F {
    fn handle(&mut self, req: &FrameView<'_>, resp: &mut Response) {
        self(req, resp)
    }
}

/// The testbed server (docs/spec/testbed-spec.md §1.2): every request gets 2.05 Content
/// with a payload of `payload_len` bytes.
#[derive(Clone, Copy, Debug)]
pub struct TestbedHandler {
    /// Payload length (60 in the testbed).
    pub payload_len: usize,
}

impl Default for TestbedHandler {
    fn default() -> Self {
        TestbedHandler { payload_len: 60 }
    }
}

impl RequestHandler for TestbedHandler {
    fn handle(&mut self, _req: &FrameView<'_>, resp: &mut Response) {
        resp.code = Code(0x45);
        resp.payload.resize(self.payload_len, b'x');
    }
}

/// Answers every request with 5.01 Not Implemented (for a pure client).
#[derive(Clone, Copy, Debug, Default)]
pub struct RefuseRequests;

impl RequestHandler for RefuseRequests {
    fn handle(&mut self, _req: &FrameView<'_>, resp: &mut Response) {
        resp.code = Code(0xA1);
    }
}

/// Appends a frame encoded by `f` into at most `max` bytes of `out`; the
/// vector's capacity is reused, so a warm connection does not allocate.
fn push_frame(
    out: &mut Vec<u8>,
    f: impl FnOnce(&mut [u8]) -> Result<usize, FrameError>,
    max: usize,
) -> Result<usize, FrameError> {
    let start = out.len();
    out.resize(start + max, 0);
    match f(&mut out[start..]) {
        Ok(n) => {
            out.truncate(start + n);
            Ok(n)
        }
        Err(e) => {
            out.truncate(start);
            Err(e)
        }
    }
}

/// One CoAP-over-TCP connection.
#[derive(Debug)]
pub struct CoapTcpConnection {
    role: Role,
    state: ConnState,
    ours: Csm,
    peer: Csm,
    peer_csm_seen: bool,
    decoder: FrameDecoder,
    out: Vec<u8>,
    outstanding: Vec<Token>,
    next_token: u64,
    events: VecDeque<ConnEvent>,
    response: Response,
    keep_payload: bool,
    last_payload: Vec<u8>,
    last_options: Vec<(u16, Vec<u8>)>,
}

impl CoapTcpConnection {
    /// A connection whose own CSM states `ours`; the CSM is queued at once.
    pub fn new(role: Role, ours: Csm) -> Self {
        let mut c = CoapTcpConnection {
            role,
            state: ConnState::Open,
            ours,
            peer: Csm::default(),
            peer_csm_seen: false,
            decoder: FrameDecoder::new(ours.max_message_size as usize),
            out: Vec::new(),
            outstanding: Vec::new(),
            next_token: 0,
            events: VecDeque::new(),
            response: Response::default(),
            keep_payload: false,
            last_payload: Vec::new(),
            last_options: Vec::new(),
        };
        // A CSM with at most two small options always fits.
        let _ = push_frame(&mut c.out, |b| ours.encode(b), 32);
        c
    }

    /// The initiator's side with the base settings (Max-Message-Size 1152).
    pub fn initiator() -> Self {
        Self::new(Role::Initiator, Csm::default())
    }

    /// The responder's side with the base settings.
    pub fn responder() -> Self {
        Self::new(Role::Responder, Csm::default())
    }

    /// Which end this is.
    pub fn role(&self) -> Role {
        self.role
    }
    /// Connection state.
    pub fn state(&self) -> ConnState {
        self.state
    }
    /// Our settings, as our CSM stated them.
    pub fn our_csm(&self) -> Csm {
        self.ours
    }
    /// The peer's settings (base values until its CSM arrives).
    pub fn peer_csm(&self) -> Csm {
        self.peer
    }
    /// Whether the peer's CSM has arrived.
    pub fn peer_csm_seen(&self) -> bool {
        self.peer_csm_seen
    }
    /// Whether the stream should now be closed (after writing the output).
    pub fn should_close(&self) -> bool {
        self.state == ConnState::Aborted
    }
    /// Requests awaiting a response.
    pub fn outstanding(&self) -> usize {
        self.outstanding.len()
    }

    /// Keep the payload and options of each response matched to a request,
    /// readable through [`CoapTcpConnection::last_response_payload`] and
    /// [`CoapTcpConnection::last_response_options`] until the next one (off
    /// by default: the simulator needs only lengths).
    pub fn set_keep_payload(&mut self, keep: bool) {
        self.keep_payload = keep;
        self.last_payload.clear();
        self.last_options.clear();
    }

    /// The payload of the last [`ConnEvent::Response`], if payloads are kept.
    pub fn last_response_payload(&self) -> &[u8] {
        &self.last_payload
    }

    /// The options of the last [`ConnEvent::Response`] as (number, value) in
    /// message order, if payloads are kept.
    pub fn last_response_options(&self) -> &[(u16, Vec<u8>)] {
        &self.last_options
    }

    /// Bytes waiting to be written to the stream.
    pub fn output(&self) -> &[u8] {
        &self.out
    }
    /// Marks `n` output bytes as written.
    pub fn consume_output(&mut self, n: usize) {
        self.out.drain(..n.min(self.out.len()));
    }

    /// Next event.
    pub fn poll_event(&mut self) -> Option<ConnEvent> {
        self.events.pop_front()
    }

    /// A fresh token of `len` bytes (1–8) not in use on this connection:
    /// a per-connection counter, big-endian.
    pub fn alloc_token(&mut self, len: usize) -> Token {
        let len = len.clamp(1, 8);
        loop {
            let v = self.next_token.to_be_bytes();
            self.next_token = self.next_token.wrapping_add(1);
            let t = Token::new(&v[8 - len..]).unwrap_or_default();
            if !self.outstanding.contains(&t) {
                return t;
            }
        }
    }

    /// Queues a request. `options` in ascending order.
    pub fn send_request(
        &mut self,
        code: Code,
        token: &[u8],
        options: &[(u16, &[u8])],
        payload: &[u8],
    ) -> Result<usize, SendError> {
        if self.state != ConnState::Open {
            return Err(SendError::NotOpen);
        }
        let t = Token::new(token).ok_or(SendError::Encode(FrameError::BadTokenLength))?;
        if self.outstanding.contains(&t) {
            return Err(SendError::TokenInUse);
        }
        let max = self.peer.max_message_size as usize;
        let need = super::frame::frame_len(token.len(), options, payload);
        if need > max {
            return Err(SendError::TooLarge);
        }
        let n = push_frame(
            &mut self.out,
            |b| super::frame::encode_frame(b, code, token, options, payload),
            need + super::frame::WRITER_SLACK,
        )
        .map_err(SendError::Encode)?;
        self.outstanding.push(t);
        Ok(n)
    }

    /// Queues a Ping with `token`.
    pub fn ping(&mut self, token: &[u8]) -> Result<usize, SendError> {
        if self.state == ConnState::Aborted {
            return Err(SendError::NotOpen);
        }
        push_frame(
            &mut self.out,
            |b| super::frame::encode_frame(b, signal::PING, token, &[], &[]),
            16,
        )
        .map_err(SendError::Encode)
    }

    /// Queues a Release; no further requests are sent.
    pub fn release(&mut self) -> Result<usize, SendError> {
        if self.state == ConnState::Aborted {
            return Err(SendError::NotOpen);
        }
        self.state = ConnState::Released;
        push_frame(
            &mut self.out,
            |b| super::frame::encode_frame(b, signal::RELEASE, &[], &[], &[]),
            8,
        )
        .map_err(SendError::Encode)
    }

    /// Queues an Abort (7.05) carrying `diagnostic` (cut to 128 bytes, at a
    /// character boundary) for a reason of the application's (e.g. a
    /// deadline); the stream must then be closed. No event is queued.
    pub fn abort(&mut self, diagnostic: &str) -> Result<usize, SendError> {
        if self.state == ConnState::Aborted {
            return Err(SendError::NotOpen);
        }
        let mut cut = diagnostic.len().min(128);
        while !diagnostic.is_char_boundary(cut) {
            cut -= 1;
        }
        let diag = &diagnostic[..cut];
        self.state = ConnState::Aborted;
        push_frame(
            &mut self.out,
            |b| signal::encode_abort(b, None, diag),
            diag.len() + 8,
        )
        .map_err(SendError::Encode)
    }

    /// Bytes received and not yet a whole frame (the frame in progress).
    pub fn buffered_input(&self) -> usize {
        self.decoder.buffered()
    }

    fn abort_for(&mut self, cause: AbortCause) {
        let (bad, diag) = match cause {
            AbortCause::Malformed(_) => (None, "malformed message"),
            AbortCause::MissingCsm => (None, "first message not a CSM"),
            AbortCause::BadCsmOption(signal::OPT_MAX_MESSAGE_SIZE) => (
                Some(signal::OPT_MAX_MESSAGE_SIZE),
                "Max-Message-Size invalid or below 16 bytes",
            ),
            AbortCause::BadCsmOption(n) => (Some(n), "unsupported CSM option"),
        };
        let _ = push_frame(&mut self.out, |b| signal::encode_abort(b, bad, diag), 64);
        self.state = ConnState::Aborted;
        self.events.push_back(ConnEvent::Aborted(cause));
    }

    /// Feeds bytes read from the stream; requests go to `handler`.
    pub fn handle_bytes<H: RequestHandler + ?Sized>(&mut self, bytes: &[u8], handler: &mut H) {
        if self.state == ConnState::Aborted {
            return;
        }
        self.decoder.push(bytes);
        loop {
            let frame = match self.decoder.next_frame() {
                Ok(Some(f)) => f,
                Ok(None) => return,
                Err(e) => {
                    self.abort_for(AbortCause::Malformed(e));
                    return;
                }
            };
            let code = frame.code;
            let token = Token::new(frame.token).unwrap_or_default();
            if !self.peer_csm_seen && code != signal::CSM {
                self.abort_for(AbortCause::MissingCsm);
                return;
            }
            match code {
                signal::CSM => match Csm::update(self.peer, &frame) {
                    Ok(c) => {
                        self.peer = c;
                        self.peer_csm_seen = true;
                        self.events.push_back(ConnEvent::PeerCsm(c));
                    }
                    Err(bad) => {
                        self.abort_for(AbortCause::BadCsmOption(bad.0));
                        return;
                    }
                },
                signal::PING => {
                    let t = token;
                    let _ = push_frame(
                        &mut self.out,
                        |b| super::frame::encode_frame(b, signal::PONG, t.as_slice(), &[], &[]),
                        16,
                    );
                    self.events.push_back(ConnEvent::PingAnswered(t));
                }
                signal::PONG => self.events.push_back(ConnEvent::Pong(token)),
                signal::RELEASE => {
                    if self.state == ConnState::Open {
                        self.state = ConnState::Released;
                    }
                    self.events.push_back(ConnEvent::PeerReleased);
                }
                signal::ABORT => {
                    self.state = ConnState::Aborted;
                    self.events.push_back(ConnEvent::PeerAborted);
                    return;
                }
                c if c.0 == 0 || signal::is_signal(c) || matches!(c.0 >> 5, 1 | 6) => {
                    self.events.push_back(ConnEvent::Ignored(c));
                }
                c if c.0 >> 5 == 0 => {
                    // A request: answer through the handler, echoing the token.
                    let mut resp = core::mem::take(&mut self.response);
                    resp.reset();
                    handler.handle(&frame, &mut resp);
                    self.events
                        .push_back(ConnEvent::RequestServed { token, code: c });
                    let opts_len: usize = resp.options.iter().map(|(_, v)| v.len() + 5).sum();
                    let max = 6 + token.as_slice().len() + opts_len + 1 + resp.payload.len();
                    let r = &resp;
                    let start = self.out.len();
                    let written = push_frame(
                        &mut self.out,
                        |b| {
                            let mut w = FrameWriter::new(b, r.code, token.as_slice())?;
                            for (n, v) in &r.options {
                                w.option(*n, v)?;
                            }
                            w.payload(&r.payload)?;
                            Ok(w.finish())
                        },
                        max,
                    );
                    let peer_max = self.peer.max_message_size as usize;
                    if written.is_ok_and(|n| n > peer_max) {
                        // RFC 8323 §5.3.1: never send more than the peer's
                        // Max-Message-Size; 5.00 with a diagnostic instead
                        // (without one, at most 10 bytes: within any limit a
                        // CSM may state, signal::MIN_MAX_MESSAGE_SIZE).
                        self.out.truncate(start);
                        let diag: &[u8] = b"response larger than your Max-Message-Size";
                        let diag = if 8 + token.as_slice().len() + diag.len() <= peer_max {
                            diag
                        } else {
                            &[]
                        };
                        let _ = push_frame(
                            &mut self.out,
                            |b| {
                                super::frame::encode_frame(
                                    b,
                                    Code(0xA0),
                                    token.as_slice(),
                                    &[],
                                    diag,
                                )
                            },
                            diag.len() + 16,
                        );
                    }
                    self.response = resp;
                }
                c => {
                    // A response (class 2, 4, 5).
                    let payload_len = frame.payload.len();
                    let frame_len = frame.encoded_len();
                    if let Some(i) = self.outstanding.iter().position(|t| *t == token) {
                        self.outstanding.swap_remove(i);
                        if self.keep_payload {
                            self.last_payload.clear();
                            self.last_payload.extend_from_slice(frame.payload);
                            self.last_options.clear();
                            self.last_options
                                .extend(frame.options().map(|(n, v)| (n, v.to_vec())));
                        }
                        self.events.push_back(ConnEvent::Response {
                            token,
                            code: c,
                            payload_len,
                            frame_len,
                        });
                    } else {
                        self.events.push_back(ConnEvent::UnmatchedResponse(token));
                    }
                }
            }
        }
    }
}
