//! Encoding into a caller buffer without allocation (RFC 7252 §3, §3.1).

use core::fmt;

use super::{Code, MessageType};

/// Why a message could not be written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EncodeError {
    /// The message does not fit the buffer.
    BufferTooSmall,
    /// Options must be written in ascending number order, before the payload.
    OptionOrder,
    /// A token longer than 8 bytes.
    TokenTooLong,
    /// An option value longer than 65804 bytes (the largest encodable length).
    OptionTooLong,
    /// An Empty message (0.00) given a token, an option or a payload (§4.1).
    NonEmptyEmpty,
    /// A code of a reserved class, 1, 6 or 7 (RFC 7252 §12.1; class 7 is
    /// RFC 8323's signalling, which UDP does not carry): the decoder refuses
    /// it, so the encoder does not write it.
    ReservedClass,
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            EncodeError::BufferTooSmall => "buffer too small for the message",
            EncodeError::OptionOrder => "options out of ascending order or after the payload",
            EncodeError::TokenTooLong => "token longer than 8 bytes",
            EncodeError::OptionTooLong => "option value longer than 65804 bytes",
            EncodeError::NonEmptyEmpty => "an Empty message carries no token, option or payload",
            EncodeError::ReservedClass => "code of a reserved class (1, 6 or 7)",
        })
    }
}

impl std::error::Error for EncodeError {}

/// The largest option length (or delta) the format can express: 65535 + 269.
const MAX_EXTENDED: usize = 0xFFFF + 269;

/// The nibble and extension bytes of a delta or length (RFC 7252 §3.1).
fn nibble(v: usize) -> (u8, [u8; 2], usize) {
    match v {
        0..=12 => (v as u8, [0, 0], 0),
        13..=268 => (13, [(v - 13) as u8, 0], 1),
        _ => (14, ((v - 269) as u16).to_be_bytes(), 2),
    }
}

/// A uint option value, minimally encoded (RFC 7252 §3.2: no leading zero
/// bytes, so 0 is the empty value): returns the bytes and how many of the
/// trailing ones to use.
pub fn encode_uint(value: u32) -> ([u8; 4], usize) {
    let bytes = value.to_be_bytes();
    let len = 4 - (value.leading_zeros() / 8) as usize;
    (bytes, len)
}

/// Writes one message into a caller buffer: [`MessageWriter::new`] writes the
/// header and token, then options in ascending number order, then
/// [`MessageWriter::payload`]; [`MessageWriter::len`] is the encoded size.
///
/// ```
/// use coapcc_proto::message::{option, Code, MessageType, MessageWriter};
/// let mut buf = [0u8; 64];
/// let mut w = MessageWriter::new(&mut buf, MessageType::Con, Code::GET, 0x1234, &[]).unwrap();
/// w.option(option::URI_PATH, b"sense").unwrap();
/// assert_eq!(w.len(), 10);
/// ```
#[derive(Debug)]
pub struct MessageWriter<'b> {
    buf: &'b mut [u8],
    len: usize,
    last: u16,
    finished: bool,
    empty: bool,
}

impl<'b> MessageWriter<'b> {
    /// Writes the header and token.
    pub fn new(
        buf: &'b mut [u8],
        mtype: MessageType,
        code: Code,
        mid: u16,
        token: &[u8],
    ) -> Result<Self, EncodeError> {
        if token.len() > 8 {
            return Err(EncodeError::TokenTooLong);
        }
        if code.is_reserved_class() {
            return Err(EncodeError::ReservedClass);
        }
        if code.is_empty() && !token.is_empty() {
            return Err(EncodeError::NonEmptyEmpty);
        }
        let len = 4 + token.len();
        if buf.len() < len {
            return Err(EncodeError::BufferTooSmall);
        }
        buf[0] = 0x40 | ((mtype as u8) << 4) | token.len() as u8;
        buf[1] = code.0;
        buf[2..4].copy_from_slice(&mid.to_be_bytes());
        buf[4..len].copy_from_slice(token);
        Ok(MessageWriter {
            buf,
            len,
            last: 0,
            finished: false,
            empty: code.is_empty(),
        })
    }

    /// Appends `parts` atomically: all or nothing.
    fn put(&mut self, parts: &[&[u8]]) -> Result<(), EncodeError> {
        let total: usize = parts.iter().map(|p| p.len()).sum();
        if self.buf.len() - self.len < total {
            return Err(EncodeError::BufferTooSmall);
        }
        for p in parts {
            self.buf[self.len..self.len + p.len()].copy_from_slice(p);
            self.len += p.len();
        }
        Ok(())
    }

    /// Appends an option; numbers must not decrease (repeats are allowed).
    pub fn option(&mut self, number: u16, value: &[u8]) -> Result<&mut Self, EncodeError> {
        if self.empty {
            return Err(EncodeError::NonEmptyEmpty);
        }
        if number < self.last || self.finished {
            return Err(EncodeError::OptionOrder);
        }
        if value.len() > MAX_EXTENDED {
            return Err(EncodeError::OptionTooLong);
        }
        let (dn, dx, dl) = nibble(usize::from(number - self.last));
        let (ln, lx, ll) = nibble(value.len());
        self.put(&[&[(dn << 4) | ln], &dx[..dl], &lx[..ll], value])?;
        self.last = number;
        Ok(self)
    }

    /// Appends a uint option, minimally encoded (0 is the empty value).
    pub fn uint_option(&mut self, number: u16, value: u32) -> Result<&mut Self, EncodeError> {
        let (bytes, len) = encode_uint(value);
        self.option(number, &bytes[4 - len..])
    }

    /// Appends the payload marker and the payload (nothing when the payload is
    /// empty, §3); no option may follow.
    pub fn payload(&mut self, payload: &[u8]) -> Result<&mut Self, EncodeError> {
        if self.finished {
            return Err(EncodeError::OptionOrder);
        }
        if !payload.is_empty() {
            if self.empty {
                return Err(EncodeError::NonEmptyEmpty);
            }
            self.put(&[&[0xFF], payload])?;
        }
        self.finished = true;
        Ok(self)
    }

    /// The encoded length so far (the whole message once finished).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Always false: the header is written on creation.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The encoded bytes so far.
    pub fn bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uint_is_minimal() {
        assert_eq!(encode_uint(0).1, 0);
        assert_eq!(encode_uint(1), ([0, 0, 0, 1], 1));
        assert_eq!(encode_uint(255).1, 1);
        assert_eq!(encode_uint(256), ([0, 0, 1, 0], 2));
        assert_eq!(encode_uint(0x0100_0000).1, 4);
    }

    #[test]
    fn nibbles_at_the_boundaries() {
        assert_eq!(nibble(12), (12, [0, 0], 0));
        assert_eq!(nibble(13), (13, [0, 0], 1));
        assert_eq!(nibble(268), (13, [255, 0], 1));
        assert_eq!(nibble(269), (14, [0, 0], 2));
        assert_eq!(nibble(MAX_EXTENDED), (14, [0xFF, 0xFF], 2));
    }

    #[test]
    fn a_failed_option_leaves_the_message_intact() {
        let mut buf = [0u8; 8];
        let mut w = MessageWriter::new(&mut buf, MessageType::Con, Code::GET, 1, &[]).unwrap();
        assert_eq!(
            w.option(11, b"toolong").unwrap_err(),
            EncodeError::BufferTooSmall
        );
        assert_eq!(w.len(), 4);
        w.option(11, b"ab").unwrap();
        assert_eq!(w.bytes(), &[0x40, 0x01, 0x00, 0x01, 0xB2, b'a', b'b']);
    }
}
