//! The RFC 7252 message format (§3): header, token, options, payload.
//!
//! - [`MessageView`] decodes and validates a datagram without allocating,
//!   borrowing the token, options and payload from the input;
//! - [`MessageWriter`] encodes into a caller buffer without allocating;
//! - [`Message`] is an owned, `Vec`-backed form for code that prefers it (the
//!   real-socket crate, tests).
//!
//! Validation follows RFC 7252 §3, §4.1–§4.3 and §12.1; what the RFC leaves to
//! the implementation is recorded in `docs/decisions/coap-udp-choices.md` ("Codec").

mod code;
mod decode;
mod encode;
pub mod option;
mod owned;

pub use code::{Code, MessageType};
pub use decode::{decode_uint, peek_header, DecodeError, Header, MessageView, Options};
pub use encode::{encode_uint, EncodeError, MessageWriter};
pub use owned::Message;

/// The recommended upper bound of a CoAP message when nothing is known about
/// the path MTU (RFC 7252 §4.6): 1152 bytes of message (1024 of payload).
pub const MAX_MESSAGE_SIZE: usize = 1152;
