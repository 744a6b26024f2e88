//! The option block shared by RFC 7252 and RFC 8323 frames (RFC 7252 §3.1):
//! delta/length nibbles with 1- or 2-byte extensions, numbers ascending,
//! 0xFF marking the payload. Written into caller buffers and read as borrowed
//! slices, without allocation.

use super::FrameError;

/// Encoded size of one option header plus value.
pub fn option_len(delta: u32, value_len: usize) -> usize {
    1 + ext_len(delta) + ext_len(value_len as u32) + value_len
}

fn ext_len(v: u32) -> usize {
    match v {
        0..=12 => 0,
        13..=268 => 1,
        _ => 2,
    }
}

fn nibble(v: u32, out: &mut [u8], at: &mut usize) -> u8 {
    match v {
        0..=12 => v as u8,
        13..=268 => {
            out[*at] = (v - 13) as u8;
            *at += 1;
            13
        }
        _ => {
            let x = (v - 269) as u16;
            out[*at..*at + 2].copy_from_slice(&x.to_be_bytes());
            *at += 2;
            14
        }
    }
}

/// Writes one option at the start of `out` (which must hold
/// [`option_len`] bytes); returns the bytes written.
pub fn write_option(out: &mut [u8], delta: u16, value: &[u8]) -> usize {
    let mut ext = [0u8; 4];
    let mut n = 0;
    let d = nibble(u32::from(delta), &mut ext, &mut n);
    let l = nibble(value.len() as u32, &mut ext, &mut n);
    out[0] = (d << 4) | l;
    out[1..1 + n].copy_from_slice(&ext[..n]);
    out[1 + n..1 + n + value.len()].copy_from_slice(value);
    1 + n + value.len()
}

fn read_ext(nibble: u8, bytes: &[u8], at: &mut usize) -> Result<u32, FrameError> {
    match nibble {
        0..=12 => Ok(u32::from(nibble)),
        13 => {
            let b = *bytes.get(*at).ok_or(FrameError::TruncatedOption)?;
            *at += 1;
            Ok(u32::from(b) + 13)
        }
        14 => {
            let b = bytes.get(*at..*at + 2).ok_or(FrameError::TruncatedOption)?;
            *at += 2;
            Ok(u32::from(u16::from_be_bytes([b[0], b[1]])) + 269)
        }
        _ => Err(FrameError::ReservedNibble),
    }
}

/// One parsed option: number, value, position of the next option.
pub type ParsedOption<'a> = (u16, &'a [u8], usize);

/// Reads the option at `at` of `body` (after an option numbered `last`).
/// `Ok(None)` at the end or at the payload marker.
pub fn read_option(
    body: &[u8],
    at: usize,
    last: u16,
) -> Result<Option<ParsedOption<'_>>, FrameError> {
    if at >= body.len() || body[at] == 0xFF {
        return Ok(None);
    }
    let b = body[at];
    let mut pos = at + 1;
    let delta = read_ext(b >> 4, body, &mut pos)?;
    let len = read_ext(b & 0x0F, body, &mut pos)? as usize;
    let number = u32::from(last) + delta;
    if number > u32::from(u16::MAX) {
        return Err(FrameError::OptionNumberOverflow);
    }
    let value = body
        .get(pos..pos + len)
        .ok_or(FrameError::TruncatedOption)?;
    Ok(Some((number as u16, value, pos + len)))
}

/// Validates an option block and payload; returns (options, payload).
pub fn split_body(body: &[u8]) -> Result<(&[u8], &[u8]), FrameError> {
    let mut at = 0;
    let mut last = 0;
    while let Some((n, _, next)) = read_option(body, at, last)? {
        last = n;
        at = next;
    }
    if at < body.len() {
        if at + 1 == body.len() {
            return Err(FrameError::EmptyPayload);
        }
        Ok((&body[..at], &body[at + 1..]))
    } else {
        Ok((body, &[]))
    }
}

/// Iterator over a validated option block, as (number, value).
#[derive(Clone, Debug)]
pub struct OptionIter<'a> {
    block: &'a [u8],
    at: usize,
    last: u16,
}

impl<'a> OptionIter<'a> {
    /// Iterates `block`, which [`split_body`] validated.
    pub fn new(block: &'a [u8]) -> Self {
        OptionIter {
            block,
            at: 0,
            last: 0,
        }
    }
}

impl<'a> Iterator for OptionIter<'a> {
    type Item = (u16, &'a [u8]);
    fn next(&mut self) -> Option<Self::Item> {
        let (n, v, next) = read_option(self.block, self.at, self.last).ok()??;
        self.at = next;
        self.last = n;
        Some((n, v))
    }
}

/// Minimal big-endian bytes of a uint option value (RFC 7252 §3.2).
pub fn uint_bytes(v: u32) -> ([u8; 4], usize) {
    let b = v.to_be_bytes();
    let skip = (v.leading_zeros() / 8) as usize;
    let mut out = [0u8; 4];
    out[..4 - skip].copy_from_slice(&b[skip..]);
    (out, 4 - skip)
}

/// Reads a uint option value of at most 4 bytes.
pub fn read_uint(v: &[u8]) -> Option<u32> {
    (v.len() <= 4).then(|| v.iter().fold(0u32, |a, b| (a << 8) | u32::from(*b)))
}
