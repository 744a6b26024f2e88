//! Decoding and validation without allocation (RFC 7252 §3, §3.1, §4.1–§4.3).

use core::fmt;

use super::{Code, MessageType};

/// Why bytes are not a valid CoAP message (each a "message format error" in
/// the sense of RFC 7252 §4.2/§4.3, except [`DecodeError::BadVersion`]: a
/// message of an unknown version is silently ignored, §3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DecodeError {
    /// Fewer than 4 bytes.
    TooShort,
    /// Version is not 1.
    BadVersion,
    /// Token length 9–15 (reserved, §3).
    BadTokenLength,
    /// The token runs past the end of the datagram.
    TruncatedToken,
    /// An option delta or length nibble of 15 other than in the payload
    /// marker 0xFF (§3.1).
    ReservedNibble,
    /// An option header or value runs past the end of the datagram.
    TruncatedOption,
    /// The option numbers add up beyond 65535.
    OptionNumberOverflow,
    /// A payload marker followed by a zero-length payload (§3).
    EmptyPayload,
    /// An Empty message (0.00) with a token, options or payload (§4.1).
    NonEmptyEmpty,
    /// A code of a reserved class 1, 6 or 7 (§4.2, §12.1).
    ReservedClass,
}

impl DecodeError {
    /// Whether RFC 7252 wants a Confirmable message with this error rejected
    /// with RST (§4.2); an unknown version is silently ignored (§3).
    pub fn rejects_confirmable(self) -> bool {
        !matches!(self, DecodeError::TooShort | DecodeError::BadVersion)
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DecodeError::TooShort => "datagram shorter than the 4-byte CoAP header",
            DecodeError::BadVersion => "CoAP version is not 1",
            DecodeError::BadTokenLength => "token length 9-15 is reserved",
            DecodeError::TruncatedToken => "token runs past the end of the datagram",
            DecodeError::ReservedNibble => {
                "option delta or length nibble 15 (reserved outside the payload marker)"
            }
            DecodeError::TruncatedOption => "option runs past the end of the datagram",
            DecodeError::OptionNumberOverflow => "option number above 65535",
            DecodeError::EmptyPayload => "payload marker followed by an empty payload",
            DecodeError::NonEmptyEmpty => "Empty message (0.00) with a token, options or payload",
            DecodeError::ReservedClass => "code of a reserved class (1, 6 or 7)",
        })
    }
}

impl std::error::Error for DecodeError {}

/// The fixed 4-byte header, readable even when the rest is malformed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// Type.
    pub mtype: MessageType,
    /// Code.
    pub code: Code,
    /// Message ID.
    pub mid: u16,
    /// The token length nibble (may be a reserved 9–15).
    pub tkl: u8,
}

/// Reads the fixed header of a version-1 message (no further validation), so
/// that a malformed Confirmable message can still be rejected with a matching
/// RST (RFC 7252 §4.2). `None` for fewer than 4 bytes or another version.
pub fn peek_header(bytes: &[u8]) -> Option<Header> {
    if bytes.len() < 4 || bytes[0] >> 6 != 1 {
        return None;
    }
    Some(Header {
        mtype: MessageType::from_bits(bytes[0] >> 4),
        code: Code(bytes[1]),
        mid: u16::from_be_bytes([bytes[2], bytes[3]]),
        tkl: bytes[0] & 0x0F,
    })
}

/// A decoded, validated message borrowing its bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MessageView<'a> {
    /// Type.
    pub mtype: MessageType,
    /// Code.
    pub code: Code,
    /// Message ID.
    pub mid: u16,
    /// Token (0–8 bytes).
    pub token: &'a [u8],
    /// The validated option block (between the token and the payload marker).
    options: &'a [u8],
    /// Payload (empty if none).
    pub payload: &'a [u8],
}

/// Reads an extended delta or length (RFC 7252 §3.1): nibbles 0–12 are the
/// value, 13 adds one byte (+13), 14 two bytes (+269), 15 is reserved.
fn extended(nibble: u8, bytes: &[u8], at: &mut usize) -> Result<u32, DecodeError> {
    match nibble {
        0..=12 => Ok(u32::from(nibble)),
        13 => {
            let b = *bytes.get(*at).ok_or(DecodeError::TruncatedOption)?;
            *at += 1;
            Ok(u32::from(b) + 13)
        }
        14 => {
            let b = bytes
                .get(*at..*at + 2)
                .ok_or(DecodeError::TruncatedOption)?;
            *at += 2;
            Ok(u32::from(u16::from_be_bytes([b[0], b[1]])) + 269)
        }
        _ => Err(DecodeError::ReservedNibble),
    }
}

/// An option's number, value and the position just after it.
type RawOption<'a> = (u16, &'a [u8], usize);

/// Reads the option at `at` of `bytes` (after option number `last`). Returns
/// `None` at the end of the block or at a payload marker, else the option's
/// number, value and the position after it.
fn next_option(bytes: &[u8], at: usize, last: u16) -> Result<Option<RawOption<'_>>, DecodeError> {
    let Some(&first) = bytes.get(at) else {
        return Ok(None);
    };
    if first == 0xFF {
        return Ok(None);
    }
    let mut pos = at + 1;
    let delta = extended(first >> 4, bytes, &mut pos)?;
    let len = extended(first & 0x0F, bytes, &mut pos)? as usize;
    let number = u32::from(last) + delta;
    let number = u16::try_from(number).map_err(|_| DecodeError::OptionNumberOverflow)?;
    let value = bytes
        .get(pos..pos + len)
        .ok_or(DecodeError::TruncatedOption)?;
    Ok(Some((number, value, pos + len)))
}

/// Splits what follows the token into the validated option block and the
/// payload (RFC 7252 §3: options, then 0xFF and a non-empty payload). Also
/// used by the RFC 8323 framing, whose options and payload are the same.
pub(crate) fn split_options(rest: &[u8]) -> Result<(&[u8], &[u8]), DecodeError> {
    let mut at = 0;
    let mut last = 0;
    while let Some((number, _, next)) = next_option(rest, at, last)? {
        last = number;
        at = next;
    }
    let (options, tail) = rest.split_at(at);
    match tail {
        [] => Ok((options, &[])),
        [_marker] => Err(DecodeError::EmptyPayload),
        [_marker, payload @ ..] => Ok((options, payload)),
    }
}

impl<'a> MessageView<'a> {
    /// Decodes and validates `bytes` as one CoAP-over-UDP message.
    pub fn decode(bytes: &'a [u8]) -> Result<Self, DecodeError> {
        if bytes.len() < 4 {
            return Err(DecodeError::TooShort);
        }
        let header = peek_header(bytes).ok_or(DecodeError::BadVersion)?;
        let tkl = usize::from(header.tkl);
        if tkl > 8 {
            return Err(DecodeError::BadTokenLength);
        }
        let token = bytes.get(4..4 + tkl).ok_or(DecodeError::TruncatedToken)?;
        let rest = &bytes[4 + tkl..];
        if header.code.is_empty() && (tkl != 0 || !rest.is_empty()) {
            return Err(DecodeError::NonEmptyEmpty);
        }
        let (options, payload) = split_options(rest)?;
        if header.code.is_reserved_class() {
            return Err(DecodeError::ReservedClass);
        }
        Ok(MessageView {
            mtype: header.mtype,
            code: header.code,
            mid: header.mid,
            token,
            options,
            payload,
        })
    }

    /// The options in wire order (ascending numbers), as (number, value).
    pub fn options(&self) -> Options<'a> {
        Options {
            bytes: self.options,
            at: 0,
            last: 0,
        }
    }

    /// The first value of option `number`.
    pub fn option(&self, number: u16) -> Option<&'a [u8]> {
        self.options()
            .take_while(|(n, _)| *n <= number)
            .find(|(n, _)| *n == number)
            .map(|(_, v)| v)
    }

    /// The first value of option `number` read as a uint (RFC 7252 §3.2);
    /// `None` when absent or longer than 4 bytes.
    pub fn uint_option(&self, number: u16) -> Option<u32> {
        self.option(number).and_then(decode_uint)
    }

    /// The Uri-Path segments, in order.
    pub fn path_segments(&self) -> impl Iterator<Item = &'a [u8]> {
        self.options()
            .filter(|(n, _)| *n == super::option::URI_PATH)
            .map(|(_, v)| v)
    }

    /// Whether this is an Empty message (code 0.00).
    pub fn is_empty_message(&self) -> bool {
        self.code.is_empty()
    }
}

/// Reads a uint option value (RFC 7252 §3.2): big-endian, leading zeros
/// allowed, up to 4 bytes here; the empty value is 0.
pub fn decode_uint(value: &[u8]) -> Option<u32> {
    if value.len() > 4 {
        return None;
    }
    Some(value.iter().fold(0u32, |acc, b| (acc << 8) | u32::from(*b)))
}

/// Iterator over the options of a [`MessageView`] (an already validated block).
#[derive(Clone, Debug)]
pub struct Options<'a> {
    bytes: &'a [u8],
    at: usize,
    last: u16,
}

impl<'a> Options<'a> {
    /// Iterates over an option block; iteration stops at the first malformed
    /// option or at a payload marker, so validate the block first (as
    /// [`MessageView::decode`] does) when that matters.
    pub fn new(block: &'a [u8]) -> Self {
        Options {
            bytes: block,
            at: 0,
            last: 0,
        }
    }
}

impl<'a> Iterator for Options<'a> {
    type Item = (u16, &'a [u8]);
    fn next(&mut self) -> Option<Self::Item> {
        let (number, value, next) = next_option(self.bytes, self.at, self.last).ok()??;
        self.at = next;
        self.last = number;
        Some((number, value))
    }
}
