//! CoAP over TCP (RFC 8323; docs/spec/transport-tcp-spec.md §1), sans-IO: the frame codec
//! ([`frame`]), incremental decoding of a byte stream ([`decoder`]),
//! signalling messages ([`signal`]) and the connection state machine
//! ([`connection`]).

pub mod connection;
pub mod decoder;
pub mod frame;
pub mod options;
pub mod signal;

#[cfg(test)]
mod tests;

pub use connection::{
    AbortCause, CoapTcpConnection, ConnEvent, ConnState, RefuseRequests, RequestHandler, Response,
    Role, SendError, TestbedHandler, Token,
};
pub use decoder::FrameDecoder;
pub use frame::{encode_frame, frame_len, FrameView, FrameWriter};
pub use signal::Csm;

use core::fmt;

/// Why bytes are not a valid RFC 8323 frame, or a frame cannot be written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameError {
    /// Token length 9–15 (reserved).
    BadTokenLength,
    /// The frame's length runs past the bytes given.
    Truncated,
    /// Bytes left over after the frame's length.
    TrailingBytes,
    /// An option delta or length nibble of 15 outside the payload marker.
    ReservedNibble,
    /// An option runs past the end of the frame.
    TruncatedOption,
    /// An option number above 65535.
    OptionNumberOverflow,
    /// A payload marker followed by no payload.
    EmptyPayload,
    /// Longer than the Max-Message-Size in force.
    TooLarge,
    /// An earlier error broke the stream; nothing more can be read.
    StreamFailed,
    /// The caller's buffer is too small.
    BufferTooSmall,
    /// Options written out of ascending order, or after the payload.
    OptionOrder,
    /// An option value longer than 65804 bytes, the largest length the
    /// option format can express (RFC 7252 §3.1).
    OptionTooLong,
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FrameError::BadTokenLength => "token length 9-15 is reserved",
            FrameError::Truncated => "frame runs past the end",
            FrameError::TrailingBytes => "bytes after the frame",
            FrameError::ReservedNibble => "option nibble 15 is reserved",
            FrameError::TruncatedOption => "option runs past the end",
            FrameError::OptionNumberOverflow => "option number above 65535",
            FrameError::EmptyPayload => "payload marker with no payload",
            FrameError::TooLarge => "message larger than Max-Message-Size",
            FrameError::StreamFailed => "stream broken by an earlier error",
            FrameError::BufferTooSmall => "buffer too small",
            FrameError::OptionOrder => "options out of order",
            FrameError::OptionTooLong => "option value longer than 65804 bytes",
        })
    }
}

impl std::error::Error for FrameError {}
