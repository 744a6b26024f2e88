//! RFC 8323 §3.2 frames: `Len(4) | TKL(4) | [Extended Length] | Code | Token |
//! Options | [0xFF Payload]` (docs/spec/transport-tcp-spec.md §1).
//!
//! `Len` counts the options, the payload marker and the payload only. 0–12 is
//! literal; 13 adds one byte holding len − 13, 14 two bytes holding len − 269,
//! 15 four bytes holding len − 65805. There is no version, type or Message ID.

use super::options::{option_len, split_body, write_option, OptionIter};
use super::FrameError;
use crate::message::Code;

/// The longest option value the option format can express: length nibble 14
/// with 65535 in its two extension bytes, plus 269 (RFC 7252 §3.1).
const MAX_OPTION_LEN: usize = 0xFFFF + 269;

/// Largest header: first byte, 4 extended-length bytes, code (token apart).
const MAX_FIXED_HEADER: usize = 1 + 4 + 1;

/// Extra room [`FrameWriter`] needs beyond the final frame length: it writes
/// the body behind space for the largest header before moving it into place.
pub const WRITER_SLACK: usize = MAX_FIXED_HEADER;

/// Length-nibble encoding of a body length: (nibble, extension bytes, count).
fn len_field(body: usize) -> (u8, [u8; 4], usize) {
    let b = body as u64;
    if b < 13 {
        (b as u8, [0; 4], 0)
    } else if b < 269 {
        (13, [(b - 13) as u8, 0, 0, 0], 1)
    } else if b < 65805 {
        let x = ((b - 269) as u16).to_be_bytes();
        (14, [x[0], x[1], 0, 0], 2)
    } else {
        ((15), ((b - 65805) as u32).to_be_bytes(), 4)
    }
}

/// Header size (first byte, extended length, code, token) for a body of
/// `body` bytes and a token of `tkl` bytes.
pub fn header_len(body: usize, tkl: usize) -> usize {
    1 + len_field(body).2 + 1 + tkl
}

/// The encoded size of a frame with these parts (options given in ascending
/// order).
pub fn frame_len(tkl: usize, options: &[(u16, &[u8])], payload: &[u8]) -> usize {
    let mut body = 0;
    let mut last = 0u16;
    for (n, v) in options {
        body += option_len(u32::from(n - last), v.len());
        last = *n;
    }
    if !payload.is_empty() {
        body += 1 + payload.len();
    }
    header_len(body, tkl) + body
}

/// How many bytes the frame at the start of `bytes` occupies, if its header
/// is complete: `Ok(None)` means more bytes are needed to know.
pub fn peek_frame_len(bytes: &[u8]) -> Result<Option<usize>, FrameError> {
    let Some(&first) = bytes.first() else {
        return Ok(None);
    };
    let tkl = usize::from(first & 0x0F);
    if tkl > 8 {
        return Err(FrameError::BadTokenLength);
    }
    let nib = first >> 4;
    let ext = match nib {
        13 => 1,
        14 => 2,
        15 => 4,
        _ => 0,
    };
    let Some(e) = bytes.get(1..1 + ext) else {
        return Ok(None);
    };
    let body: u64 = match nib {
        13 => u64::from(e[0]) + 13,
        14 => u64::from(u16::from_be_bytes([e[0], e[1]])) + 269,
        15 => u64::from(u32::from_be_bytes([e[0], e[1], e[2], e[3]])) + 65805,
        n => u64::from(n),
    };
    let total = 1 + ext as u64 + 1 + tkl as u64 + body;
    Ok(Some(
        usize::try_from(total).map_err(|_| FrameError::TooLarge)?,
    ))
}

/// A decoded frame borrowing its bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameView<'a> {
    /// Code.
    pub code: Code,
    /// Token (0–8 bytes).
    pub token: &'a [u8],
    options: &'a [u8],
    /// Payload (empty if none).
    pub payload: &'a [u8],
    len: usize,
}

impl<'a> FrameView<'a> {
    /// Decodes exactly one frame occupying all of `bytes`.
    pub fn decode(bytes: &'a [u8]) -> Result<Self, FrameError> {
        let total = peek_frame_len(bytes)?.ok_or(FrameError::Truncated)?;
        if total != bytes.len() {
            return Err(if total > bytes.len() {
                FrameError::Truncated
            } else {
                FrameError::TrailingBytes
            });
        }
        let first = bytes[0];
        let tkl = usize::from(first & 0x0F);
        let ext = match first >> 4 {
            13 => 1,
            14 => 2,
            15 => 4,
            _ => 0,
        };
        let code = Code(bytes[1 + ext]);
        let token = &bytes[2 + ext..2 + ext + tkl];
        let (options, payload) = split_body(&bytes[2 + ext + tkl..])?;
        Ok(FrameView {
            code,
            token,
            options,
            payload,
            len: total,
        })
    }

    /// The frame's encoded length (header included).
    pub fn encoded_len(&self) -> usize {
        self.len
    }

    /// Options in order, as (number, value).
    pub fn options(&self) -> OptionIter<'a> {
        OptionIter::new(self.options)
    }

    /// The first value of option `number`.
    pub fn option(&self, number: u16) -> Option<&'a [u8]> {
        self.options().find(|(n, _)| *n == number).map(|(_, v)| v)
    }
}

/// Writes one frame into a caller buffer, without allocation: the body is
/// written after room for the largest header and moved into place by
/// [`FrameWriter::finish`] once its length is known. The buffer must hold
/// the frame plus [`WRITER_SLACK`] bytes.
#[derive(Debug)]
pub struct FrameWriter<'b> {
    buf: &'b mut [u8],
    code: Code,
    tkl: usize,
    body_start: usize,
    len: usize,
    last: u16,
    payload: bool,
}

impl<'b> FrameWriter<'b> {
    /// Starts a frame with `code` and `token` (at most 8 bytes).
    pub fn new(buf: &'b mut [u8], code: Code, token: &[u8]) -> Result<Self, FrameError> {
        if token.len() > 8 {
            return Err(FrameError::BadTokenLength);
        }
        let body_start = MAX_FIXED_HEADER + token.len();
        if buf.len() < body_start {
            return Err(FrameError::BufferTooSmall);
        }
        // The token sits just before the body; the header goes in front of
        // it at finish().
        buf[MAX_FIXED_HEADER..body_start].copy_from_slice(token);
        Ok(FrameWriter {
            buf,
            code,
            tkl: token.len(),
            body_start,
            len: body_start,
            last: 0,
            payload: false,
        })
    }

    /// Appends an option; numbers must not decrease.
    pub fn option(&mut self, number: u16, value: &[u8]) -> Result<&mut Self, FrameError> {
        if number < self.last || self.payload {
            return Err(FrameError::OptionOrder);
        }
        if value.len() > MAX_OPTION_LEN {
            return Err(FrameError::OptionTooLong);
        }
        let delta = number - self.last;
        let need = option_len(u32::from(delta), value.len());
        if self.len + need > self.buf.len() {
            return Err(FrameError::BufferTooSmall);
        }
        self.len += write_option(&mut self.buf[self.len..], delta, value);
        self.last = number;
        Ok(self)
    }

    /// Appends a uint option, minimally encoded.
    pub fn uint_option(&mut self, number: u16, value: u32) -> Result<&mut Self, FrameError> {
        let (b, n) = super::options::uint_bytes(value);
        self.option(number, &b[..n])
    }

    /// Appends the payload marker and payload (nothing if empty).
    pub fn payload(&mut self, payload: &[u8]) -> Result<&mut Self, FrameError> {
        if self.payload {
            return Err(FrameError::OptionOrder);
        }
        if !payload.is_empty() {
            if self.len + 1 + payload.len() > self.buf.len() {
                return Err(FrameError::BufferTooSmall);
            }
            self.buf[self.len] = 0xFF;
            self.buf[self.len + 1..self.len + 1 + payload.len()].copy_from_slice(payload);
            self.len += 1 + payload.len();
        }
        self.payload = true;
        Ok(self)
    }

    /// Writes the header, moves the frame to the start of the buffer and
    /// returns its length.
    pub fn finish(self) -> usize {
        let body = self.len - self.body_start;
        let (nib, ext, n) = len_field(body);
        let head = 1 + n + 1;
        let start = MAX_FIXED_HEADER - head;
        self.buf[start] = (nib << 4) | self.tkl as u8;
        self.buf[start + 1..start + 1 + n].copy_from_slice(&ext[..n]);
        self.buf[start + 1 + n] = self.code.0;
        let total = self.len - start;
        self.buf.copy_within(start..self.len, 0);
        total
    }
}

/// Encodes a whole frame into `buf`; returns its length.
pub fn encode_frame(
    buf: &mut [u8],
    code: Code,
    token: &[u8],
    options: &[(u16, &[u8])],
    payload: &[u8],
) -> Result<usize, FrameError> {
    let mut w = FrameWriter::new(buf, code, token)?;
    for (n, v) in options {
        w.option(*n, v)?;
    }
    w.payload(payload)?;
    Ok(w.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_vector_2_03_with_token() {
        let mut buf = [0u8; 32];
        let n = encode_frame(&mut buf, Code(0x43), &[0x7f], &[], &[]).unwrap();
        assert_eq!(&buf[..n], &[0x01, 0x43, 0x7f]);
        let v = FrameView::decode(&buf[..n]).unwrap();
        assert_eq!(v.code, Code(0x43));
        assert_eq!(v.token, &[0x7f]);
        assert!(v.payload.is_empty());
        assert_eq!(frame_len(1, &[], &[]), 3);
    }

    #[test]
    fn length_boundaries() {
        // body = marker + payload; test each extended-length form.
        for (payload, first_nibble, ext) in [
            (11usize, 12u8, 0usize),
            (12, 13, 1),
            (267, 13, 1),
            (268, 14, 2),
            (65803, 14, 2),
            (65804, 15, 4),
        ] {
            let p = vec![0xAB; payload];
            let mut buf = vec![0u8; payload + 16];
            let n = encode_frame(&mut buf, Code(0x45), &[], &[], &p).unwrap();
            assert_eq!(buf[0] >> 4, first_nibble, "payload {payload}");
            assert_eq!(n, 1 + ext + 1 + 1 + payload);
            assert_eq!(peek_frame_len(&buf[..n]).unwrap(), Some(n));
            let v = FrameView::decode(&buf[..n]).unwrap();
            assert_eq!(v.payload.len(), payload);
        }
        // 13 → len − 13 in one byte: body 13 → 0xD0 0x00.
        let mut buf = [0u8; 64];
        let n = encode_frame(&mut buf, Code(0x45), &[], &[], &[1; 12]).unwrap();
        assert_eq!(&buf[..3], &[0xD0, 0x00, 0x45]);
        assert_eq!(n, 16);
    }

    #[test]
    fn testbed_sizes() {
        // GET with a 6-byte Uri-Path option, no token: 1 + 1 + 6 = 8 bytes.
        let mut buf = [0u8; 128];
        let n = encode_frame(&mut buf, Code(0x01), &[], &[(11, b"hello")], &[]).unwrap();
        assert_eq!(n, 8);
        assert_eq!(&buf[..3], &[0x60, 0x01, 0xB5]);
        // 2.05 with 60-byte payload: Len 61 → 13 + 48: 1 + 1 + 1 + 61 = 64.
        let n = encode_frame(&mut buf, Code(0x45), &[], &[], &[7; 60]).unwrap();
        assert_eq!(n, 64);
        assert_eq!(&buf[..3], &[0xD0, 48, 0x45]);
        let v = FrameView::decode(&buf[..n]).unwrap();
        assert_eq!(v.payload, &[7; 60]);
    }

    #[test]
    fn options_round_trip() {
        let mut buf = [0u8; 600];
        let long = [9u8; 300];
        let opts: [(u16, &[u8]); 4] = [(2, &[4, 128]), (4, &[]), (11, b"a"), (2000, &long)];
        let n = encode_frame(&mut buf, Code(0xE1), &[1, 2], &opts, b"xy").unwrap();
        assert_eq!(n, frame_len(2, &opts, b"xy"));
        let v = FrameView::decode(&buf[..n]).unwrap();
        let got: Vec<_> = v.options().collect();
        assert_eq!(got, opts.to_vec());
        assert_eq!(v.payload, b"xy");
        assert_eq!(v.option(4), Some(&[][..]));
    }

    #[test]
    fn an_option_longer_than_the_format_allows_is_refused() {
        // 65804 bytes is the largest option length (nibble 14: 269 + 65535).
        // One byte more was written with its length cut to 16 bits, a frame
        // that decoded as something else (found by fuzz/ tcp_frame).
        let mut buf = vec![0u8; 65_805 + 64];
        let longest = vec![0xAB; 65_804];
        let n = encode_frame(&mut buf, Code(0x45), &[1], &[(11, &longest)], b"p").unwrap();
        assert_eq!(n, frame_len(1, &[(11, &longest)], b"p"));
        let v = FrameView::decode(&buf[..n]).unwrap();
        assert_eq!(v.option(11), Some(&longest[..]));
        assert_eq!(v.payload, b"p");
        let over = vec![0xAB; 65_805];
        assert_eq!(
            encode_frame(&mut buf, Code(0x45), &[1], &[(11, &over)], b"p"),
            Err(FrameError::OptionTooLong)
        );
        let mut w = FrameWriter::new(&mut buf, Code(0x45), &[]).unwrap();
        assert_eq!(w.option(11, &over).unwrap_err(), FrameError::OptionTooLong);
    }

    #[test]
    fn writer_rejects_misuse() {
        let mut buf = [0u8; 16];
        assert_eq!(
            FrameWriter::new(&mut buf, Code(1), &[0; 9]).unwrap_err(),
            FrameError::BadTokenLength
        );
        let mut w = FrameWriter::new(&mut buf, Code(1), &[]).unwrap();
        w.option(5, b"").unwrap();
        assert_eq!(w.option(4, b"").unwrap_err(), FrameError::OptionOrder);
        assert_eq!(w.payload(&[0; 20]).unwrap_err(), FrameError::BufferTooSmall);
        let mut tiny = [0u8; 3];
        assert_eq!(
            FrameWriter::new(&mut tiny, Code(1), &[]).unwrap_err(),
            FrameError::BufferTooSmall
        );
    }

    #[test]
    fn malformed_frames() {
        assert_eq!(
            FrameView::decode(&[0x09, 0x01]),
            Err(FrameError::BadTokenLength)
        );
        assert_eq!(FrameView::decode(&[0x01, 0x45]), Err(FrameError::Truncated));
        assert_eq!(
            FrameView::decode(&[0x00, 0x45, 0]),
            Err(FrameError::TrailingBytes)
        );
        // Payload marker with no payload.
        assert_eq!(
            FrameView::decode(&[0x10, 0x45, 0xFF]),
            Err(FrameError::EmptyPayload)
        );
        // Option with reserved length nibble 15.
        assert_eq!(
            FrameView::decode(&[0x10, 0x45, 0x1F]),
            Err(FrameError::ReservedNibble)
        );
        // Option value running past the end.
        assert_eq!(
            FrameView::decode(&[0x10, 0x45, 0x12]),
            Err(FrameError::TruncatedOption)
        );
        assert_eq!(peek_frame_len(&[0xE0, 0x01]), Ok(None));
    }
}
