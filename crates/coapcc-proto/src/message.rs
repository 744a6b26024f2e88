//! RFC 7252 message codec (§3): encoding into a caller buffer and decoding as a
//! borrowed view, neither allocating.

use core::fmt;

/// Message type (RFC 7252 §3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MessageType {
    /// Confirmable.
    Con = 0,
    /// Non-confirmable.
    Non = 1,
    /// Acknowledgement.
    Ack = 2,
    /// Reset.
    Rst = 3,
}

/// A method or response code, `class.detail` (RFC 7252 §12.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Code(pub u8);

impl Code {
    /// 0.00 Empty.
    pub const EMPTY: Code = Code(0x00);
    /// 0.01 GET.
    pub const GET: Code = Code(0x01);
    /// 0.02 POST.
    pub const POST: Code = Code(0x02);
    /// 0.03 PUT.
    pub const PUT: Code = Code(0x03);
    /// 0.04 DELETE.
    pub const DELETE: Code = Code(0x04);
    /// 2.01 Created.
    pub const CREATED: Code = Code(0x41);
    /// 2.02 Deleted.
    pub const DELETED: Code = Code(0x42);
    /// 2.03 Valid.
    pub const VALID: Code = Code(0x43);
    /// 2.04 Changed.
    pub const CHANGED: Code = Code(0x44);
    /// 2.05 Content.
    pub const CONTENT: Code = Code(0x45);
    /// 4.00 Bad Request.
    pub const BAD_REQUEST: Code = Code(0x80);
    /// 4.02 Bad Option.
    pub const BAD_OPTION: Code = Code(0x82);
    /// 4.04 Not Found.
    pub const NOT_FOUND: Code = Code(0x84);
    /// 4.05 Method Not Allowed.
    pub const METHOD_NOT_ALLOWED: Code = Code(0x85);
    /// 4.13 Request Entity Too Large.
    pub const REQUEST_ENTITY_TOO_LARGE: Code = Code(0x8D);
    /// 5.00 Internal Server Error.
    pub const INTERNAL_SERVER_ERROR: Code = Code(0xA0);
    /// 5.01 Not Implemented.
    pub const NOT_IMPLEMENTED: Code = Code(0xA1);

    /// The class (0–7).
    pub fn class(self) -> u8 {
        self.0 >> 5
    }
    /// The detail (0–31).
    pub fn detail(self) -> u8 {
        self.0 & 0x1F
    }
    /// A request method (0.01–0.31).
    pub fn is_request(self) -> bool {
        self.class() == 0 && self.detail() != 0
    }
    /// A response (2.xx, 4.xx, 5.xx).
    pub fn is_response(self) -> bool {
        matches!(self.class(), 2 | 4 | 5)
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:02}", self.class(), self.detail())
    }
}

/// Option numbers used by coapcc.
pub mod option {
    /// If-Match.
    pub const IF_MATCH: u16 = 1;
    /// Uri-Host.
    pub const URI_HOST: u16 = 3;
    /// ETag.
    pub const ETAG: u16 = 4;
    /// Observe.
    pub const OBSERVE: u16 = 6;
    /// Uri-Port.
    pub const URI_PORT: u16 = 7;
    /// Uri-Path.
    pub const URI_PATH: u16 = 11;
    /// Content-Format.
    pub const CONTENT_FORMAT: u16 = 12;
    /// Max-Age.
    pub const MAX_AGE: u16 = 14;
    /// Uri-Query.
    pub const URI_QUERY: u16 = 15;
    /// Accept.
    pub const ACCEPT: u16 = 17;
    /// Block2.
    pub const BLOCK2: u16 = 23;
    /// Block1.
    pub const BLOCK1: u16 = 27;
    /// Size1.
    pub const SIZE1: u16 = 60;
    /// pCoCoA's Transmission Counter (spec algorithms.md §4 Decision: an
    /// experimental number; elective, safe-to-forward, NoCacheKey).
    pub const TC: u16 = 65052;
    /// FASOR's Rexmit-Cnt (spec algorithms.md §6.6 Decision).
    pub const REXMIT_CNT: u16 = 65020;

    /// Whether an option is critical (odd number, RFC 7252 §5.4.1).
    pub fn is_critical(number: u16) -> bool {
        number & 1 == 1
    }
}

/// Why bytes are not a valid CoAP message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// Fewer than 4 bytes.
    TooShort,
    /// Version is not 1.
    BadVersion,
    /// Token length 9–15 (reserved).
    BadTokenLength,
    /// The token runs past the end.
    TruncatedToken,
    /// An option delta or length nibble of 15 outside the payload marker.
    ReservedNibble,
    /// An option runs past the end.
    TruncatedOption,
    /// An option number above 65535.
    OptionNumberOverflow,
    /// A payload marker followed by no payload.
    EmptyPayload,
    /// An Empty message (0.00) with a token, options or payload.
    NonEmptyEmpty,
    /// A code of a reserved class (1, 6, 7).
    ReservedClass,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DecodeError::TooShort => "shorter than the 4-byte header",
            DecodeError::BadVersion => "version is not 1",
            DecodeError::BadTokenLength => "token length 9-15 is reserved",
            DecodeError::TruncatedToken => "token runs past the end",
            DecodeError::ReservedNibble => "option delta or length nibble 15 is reserved",
            DecodeError::TruncatedOption => "option runs past the end",
            DecodeError::OptionNumberOverflow => "option number above 65535",
            DecodeError::EmptyPayload => "payload marker with no payload",
            DecodeError::NonEmptyEmpty => "Empty message with token, options or payload",
            DecodeError::ReservedClass => "code of a reserved class",
        })
    }
}

impl std::error::Error for DecodeError {}

/// A decoded message borrowing its bytes.
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
    options: &'a [u8],
    /// Payload (empty if none).
    pub payload: &'a [u8],
}

fn ext(nibble: u8, bytes: &[u8], at: &mut usize) -> Result<u32, DecodeError> {
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

/// Walks options from `bytes`; returns (number, value, next position) or the
/// position of the payload marker / end.
fn next_option(
    bytes: &[u8],
    at: usize,
    last: u16,
) -> Result<Option<(u16, &[u8], usize)>, DecodeError> {
    if at >= bytes.len() || bytes[at] == 0xFF {
        return Ok(None);
    }
    let b = bytes[at];
    let mut pos = at + 1;
    let delta = ext(b >> 4, bytes, &mut pos)?;
    let len = ext(b & 0x0F, bytes, &mut pos)? as usize;
    let number = u32::from(last) + delta;
    if number > 0xFFFF {
        return Err(DecodeError::OptionNumberOverflow);
    }
    let value = bytes
        .get(pos..pos + len)
        .ok_or(DecodeError::TruncatedOption)?;
    Ok(Some((number as u16, value, pos + len)))
}

impl<'a> MessageView<'a> {
    /// Decodes and validates `bytes` (RFC 7252 §3).
    pub fn decode(bytes: &'a [u8]) -> Result<Self, DecodeError> {
        if bytes.len() < 4 {
            return Err(DecodeError::TooShort);
        }
        if bytes[0] >> 6 != 1 {
            return Err(DecodeError::BadVersion);
        }
        let mtype = match (bytes[0] >> 4) & 3 {
            0 => MessageType::Con,
            1 => MessageType::Non,
            2 => MessageType::Ack,
            _ => MessageType::Rst,
        };
        let tkl = (bytes[0] & 0x0F) as usize;
        if tkl > 8 {
            return Err(DecodeError::BadTokenLength);
        }
        let code = Code(bytes[1]);
        let mid = u16::from_be_bytes([bytes[2], bytes[3]]);
        let token = bytes.get(4..4 + tkl).ok_or(DecodeError::TruncatedToken)?;
        let rest = &bytes[4 + tkl..];
        // Validate every option and find the payload.
        let mut at = 0;
        let mut last = 0;
        while let Some((n, _, next)) = next_option(rest, at, last)? {
            last = n;
            at = next;
        }
        let options = &rest[..at];
        let payload = if at < rest.len() {
            if at + 1 == rest.len() {
                return Err(DecodeError::EmptyPayload);
            }
            &rest[at + 1..]
        } else {
            &[]
        };
        if code == Code::EMPTY && (tkl != 0 || !rest.is_empty()) {
            return Err(DecodeError::NonEmptyEmpty);
        }
        if matches!(code.class(), 1 | 6 | 7) {
            return Err(DecodeError::ReservedClass);
        }
        Ok(MessageView {
            mtype,
            code,
            mid,
            token,
            options,
            payload,
        })
    }

    /// The options in order, as (number, value).
    pub fn options(&self) -> Options<'a> {
        Options {
            bytes: self.options,
            at: 0,
            last: 0,
        }
    }

    /// The first value of option `number`.
    pub fn option(&self, number: u16) -> Option<&'a [u8]> {
        self.options().find(|(n, _)| *n == number).map(|(_, v)| v)
    }

    /// The first value of option `number` read as an unsigned integer.
    pub fn uint_option(&self, number: u16) -> Option<u32> {
        self.option(number).and_then(decode_uint)
    }
}

/// Reads a uint option value (RFC 7252 §3.2): big-endian, up to 4 bytes.
pub fn decode_uint(v: &[u8]) -> Option<u32> {
    if v.len() > 4 {
        return None;
    }
    Some(v.iter().fold(0u32, |acc, b| (acc << 8) | u32::from(*b)))
}

/// Iterator over a validated option block.
#[derive(Clone, Debug)]
pub struct Options<'a> {
    bytes: &'a [u8],
    at: usize,
    last: u16,
}

impl<'a> Iterator for Options<'a> {
    type Item = (u16, &'a [u8]);
    fn next(&mut self) -> Option<Self::Item> {
        let (n, v, next) = next_option(self.bytes, self.at, self.last).ok()??;
        self.at = next;
        self.last = n;
        Some((n, v))
    }
}

/// The buffer was too small, or the options were not in ascending order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EncodeError {
    /// The message does not fit.
    BufferTooSmall,
    /// Options must be written in ascending number order.
    OptionOrder,
    /// Token longer than 8 bytes.
    TokenTooLong,
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            EncodeError::BufferTooSmall => "buffer too small for the message",
            EncodeError::OptionOrder => "options out of ascending order",
            EncodeError::TokenTooLong => "token longer than 8 bytes",
        })
    }
}

impl std::error::Error for EncodeError {}

/// Writes a message into a caller buffer: header and token first, then options
/// in ascending order, then the payload.
pub struct MessageWriter<'b> {
    buf: &'b mut [u8],
    len: usize,
    last: u16,
    payload: bool,
}

impl<'b> MessageWriter<'b> {
    /// Starts a message.
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
        if buf.len() < 4 + token.len() {
            return Err(EncodeError::BufferTooSmall);
        }
        buf[0] = 0x40 | ((mtype as u8) << 4) | token.len() as u8;
        buf[1] = code.0;
        buf[2..4].copy_from_slice(&mid.to_be_bytes());
        buf[4..4 + token.len()].copy_from_slice(token);
        Ok(MessageWriter {
            buf,
            len: 4 + token.len(),
            last: 0,
            payload: false,
        })
    }

    fn put(&mut self, bytes: &[u8]) -> Result<(), EncodeError> {
        let end = self.len + bytes.len();
        if end > self.buf.len() {
            return Err(EncodeError::BufferTooSmall);
        }
        self.buf[self.len..end].copy_from_slice(bytes);
        self.len = end;
        Ok(())
    }

    /// Appends an option; numbers must not decrease.
    pub fn option(&mut self, number: u16, value: &[u8]) -> Result<&mut Self, EncodeError> {
        if number < self.last || self.payload {
            return Err(EncodeError::OptionOrder);
        }
        let delta = u32::from(number - self.last);
        let len = value.len() as u32;
        let (dn, dx, dl) = nibble(delta);
        let (ln, lx, ll) = nibble(len);
        let mut head = [0u8; 5];
        head[0] = (dn << 4) | ln;
        head[1..1 + dl].copy_from_slice(&dx[..dl]);
        head[1 + dl..1 + dl + ll].copy_from_slice(&lx[..ll]);
        self.put(&head[..1 + dl + ll])?;
        self.put(value)?;
        self.last = number;
        Ok(self)
    }

    /// Appends a uint option, minimally encoded (0 is the empty value).
    pub fn uint_option(&mut self, number: u16, value: u32) -> Result<&mut Self, EncodeError> {
        let bytes = value.to_be_bytes();
        let skip = (value.leading_zeros() / 8) as usize;
        self.option(number, &bytes[skip..])
    }

    /// Appends the payload marker and payload (nothing if empty); finishes.
    pub fn payload(&mut self, payload: &[u8]) -> Result<&mut Self, EncodeError> {
        if !payload.is_empty() {
            self.put(&[0xFF])?;
            self.put(payload)?;
        }
        self.payload = true;
        Ok(self)
    }

    /// The encoded length.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing was written (never: the header is always there).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

fn nibble(v: u32) -> (u8, [u8; 2], usize) {
    match v {
        0..=12 => (v as u8, [0, 0], 0),
        13..=268 => (13, [(v - 13) as u8, 0], 1),
        _ => {
            let x = (v - 269) as u16;
            (14, x.to_be_bytes(), 2)
        }
    }
}

/// An owned message, for the real-socket side.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    /// Type.
    pub mtype: MessageType,
    /// Code.
    pub code: Code,
    /// Message ID.
    pub mid: u16,
    /// Token.
    pub token: Vec<u8>,
    /// Options in any order (sorted when encoding; stable for repeats).
    pub options: Vec<(u16, Vec<u8>)>,
    /// Payload.
    pub payload: Vec<u8>,
}

impl Message {
    /// Encodes into a new vector.
    pub fn encode(&self) -> Result<Vec<u8>, EncodeError> {
        let size = 4
            + self.token.len()
            + self.options.iter().map(|(_, v)| 5 + v.len()).sum::<usize>()
            + 1
            + self.payload.len();
        let mut buf = vec![0u8; size];
        let mut opts: Vec<&(u16, Vec<u8>)> = self.options.iter().collect();
        opts.sort_by_key(|(n, _)| *n);
        let mut w = MessageWriter::new(&mut buf, self.mtype, self.code, self.mid, &self.token)?;
        for (n, v) in opts {
            w.option(*n, v)?;
        }
        w.payload(&self.payload)?;
        let len = w.len();
        buf.truncate(len);
        Ok(buf)
    }

    /// Decodes and validates.
    pub fn decode(bytes: &[u8]) -> Result<Self, DecodeError> {
        let v = MessageView::decode(bytes)?;
        Ok(Message {
            mtype: v.mtype,
            code: v.code,
            mid: v.mid,
            token: v.token.to_vec(),
            options: v.options().map(|(n, v)| (n, v.to_vec())).collect(),
            payload: v.payload.to_vec(),
        })
    }
}
