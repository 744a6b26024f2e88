//! The Block1/Block2 option value (RFC 7959 §2.2) and the Size1/Size2
//! options (§4).

use core::fmt;

use crate::message::{decode_uint, encode_uint, Code};

/// The largest block number: NUM has at most 20 bits (RFC 7959 §2.2).
pub const MAX_NUM: u32 = (1 << 20) - 1;

/// The largest SZX this module sends or accepts: 6, blocks of 1024 bytes.
/// SZX 7 is reserved over UDP (RFC 7959 §2.2); RFC 8323 §6 gives it to BERT
/// over reliable transports, which this module does not implement.
pub const MAX_SZX: u8 = 6;

/// Why a Block option value (or a Size option value) is not acceptable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BlockError {
    /// A Block option value of more than 3 bytes (RFC 7959 §2.2), or a Size
    /// option value of more than 4 (RFC 7959 §4).
    BadLength(usize),
    /// SZX 7, reserved (RFC 7959 §2.2; BERT only over reliable transports,
    /// RFC 8323 §6).
    ReservedSzx,
    /// A block number above [`MAX_NUM`] (20 bits).
    NumOverflow,
    /// A Block or Size option given twice; none is repeatable (RFC 7959
    /// Table 1 and Table 2), and RFC 7252 §5.4.5 treats the extra copy as an
    /// unrecognised option.
    Repeated(u16),
}

impl BlockError {
    /// The response code a server answers a request carrying this error
    /// with: 4.00 Bad Request for SZX 7 (RFC 7959 §2.2 requires it); 4.02 Bad
    /// Option for a value of a bad length, as RFC 7252 §5.4.3 treats an
    /// option of bad length like an unrecognised one, and both Block options
    /// are critical (§5.4.1); a repeated option likewise (§5.4.5; for the
    /// elective Size options a server could ignore the copy, but refusing is
    /// simpler and not wrong). [`BlockError::NumOverflow`] cannot come from a
    /// decoded value; it is 4.02 too.
    pub fn response_code(self) -> Code {
        match self {
            BlockError::ReservedSzx => Code::BAD_REQUEST,
            BlockError::BadLength(_) | BlockError::NumOverflow | BlockError::Repeated(_) => {
                Code::BAD_OPTION
            }
        }
    }
}

impl fmt::Display for BlockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BlockError::BadLength(n) => write!(f, "option value of {n} bytes is too long"),
            BlockError::ReservedSzx => f.write_str("SZX 7 is reserved (BERT is not supported)"),
            BlockError::NumOverflow => f.write_str("block number above 2^20 - 1"),
            BlockError::Repeated(n) => write!(f, "option {n} given more than once"),
        }
    }
}

impl std::error::Error for BlockError {}

/// The block size of an SZX: 2^(SZX + 4) bytes, 16 to 1024.
pub const fn block_size(szx: u8) -> usize {
    16 << szx
}

/// The value of a Block1 or Block2 option (RFC 7959 §2.2): block number,
/// "more" flag and size exponent. Built only through [`BlockValue::new`] or
/// [`BlockValue::decode`], so NUM fits 20 bits and SZX is 0–6.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BlockValue {
    num: u32,
    more: bool,
    szx: u8,
}

impl BlockValue {
    /// A value; fails for NUM above [`MAX_NUM`] or SZX above [`MAX_SZX`].
    pub fn new(num: u32, more: bool, szx: u8) -> Result<Self, BlockError> {
        if szx > MAX_SZX {
            return Err(BlockError::ReservedSzx);
        }
        if num > MAX_NUM {
            return Err(BlockError::NumOverflow);
        }
        Ok(BlockValue { num, more, szx })
    }

    /// The block holding byte `offset` at size exponent `szx` (M unset).
    pub fn at_offset(offset: usize, szx: u8) -> Result<Self, BlockError> {
        let num = u32::try_from(offset / block_size(szx)).map_err(|_| BlockError::NumOverflow)?;
        BlockValue::new(num, false, szx)
    }

    /// The block number.
    pub fn num(self) -> u32 {
        self.num
    }

    /// The M ("more blocks follow") flag.
    pub fn more(self) -> bool {
        self.more
    }

    /// The size exponent, 0–6.
    pub fn szx(self) -> u8 {
        self.szx
    }

    /// The block size, 2^(SZX + 4) bytes.
    pub fn size(self) -> usize {
        block_size(self.szx)
    }

    /// The byte offset of the block: NUM × size.
    pub fn offset(self) -> usize {
        self.num as usize * self.size()
    }

    /// The same value with M set to `more`.
    pub fn with_more(self, more: bool) -> Self {
        BlockValue { more, ..self }
    }

    /// The uint the option carries: NUM << 4 | M << 3 | SZX.
    fn as_uint(self) -> u32 {
        (self.num << 4) | (u32::from(self.more) << 3) | u32::from(self.szx)
    }

    /// The minimal encoding (RFC 7252 §3.2: no leading zero bytes, so
    /// 0/0/16 is the empty value): the bytes and how many of the trailing
    /// ones to use (0–3).
    pub fn encode(self) -> ([u8; 4], usize) {
        encode_uint(self.as_uint())
    }

    /// The encoded bytes (0–3 of them) as a vector, for [`crate::message::Message`].
    pub fn to_vec(self) -> Vec<u8> {
        let (bytes, len) = self.encode();
        bytes[4 - len..].to_vec()
    }

    /// Decodes an option value of 0–3 bytes; leading zero bytes are accepted
    /// (RFC 7252 §3.2 asks only senders to avoid them).
    pub fn decode(value: &[u8]) -> Result<Self, BlockError> {
        if value.len() > 3 {
            return Err(BlockError::BadLength(value.len()));
        }
        let v = decode_uint(value).unwrap_or(0);
        BlockValue::new(v >> 4, v & 8 != 0, (v & 7) as u8)
    }
}

impl fmt::Display for BlockValue {
    /// The RFC 7959 §3 notation `NUM/M/size`, e.g. `2/0/128`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}/{}", self.num, u8::from(self.more), self.size())
    }
}

/// Decodes a Size1 or Size2 option value (RFC 7959 §4: uint, 0–4 bytes).
pub fn decode_size(value: &[u8]) -> Result<u32, BlockError> {
    decode_uint(value).ok_or(BlockError::BadLength(value.len()))
}

/// A Size1 or Size2 value for a length, saturating at `u32::MAX`.
pub fn size_value(len: usize) -> u32 {
    u32::try_from(len).unwrap_or(u32::MAX)
}

/// The minimal encoding of a Size1 or Size2 value, as a vector.
pub fn size_to_vec(size: u32) -> Vec<u8> {
    let (bytes, len) = encode_uint(size);
    bytes[4 - len..].to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodings_are_minimal_and_round_trip() {
        let v = BlockValue::new(0, false, 0).unwrap();
        assert_eq!(v.encode().1, 0);
        assert_eq!(BlockValue::decode(&[]).unwrap(), v);
        // 2:1/0/128 → 0x13 (one byte); 2:16/1/1024 → 0x010E (two bytes).
        assert_eq!(BlockValue::new(1, false, 3).unwrap().to_vec(), vec![0x13]);
        assert_eq!(
            BlockValue::new(16, true, 6).unwrap().to_vec(),
            vec![0x01, 0x0E]
        );
        let top = BlockValue::new(MAX_NUM, true, 6).unwrap();
        assert_eq!(top.to_vec(), vec![0xFF, 0xFF, 0xFE]);
        assert_eq!(BlockValue::decode(&top.to_vec()).unwrap(), top);
        assert_eq!(top.to_string(), "1048575/1/1024");
    }

    #[test]
    fn leading_zeros_are_accepted() {
        assert_eq!(
            BlockValue::decode(&[0, 0, 0x13]).unwrap(),
            BlockValue::new(1, false, 3).unwrap()
        );
    }

    #[test]
    fn bad_values_are_refused_with_their_codes() {
        assert_eq!(BlockValue::decode(&[0x17]), Err(BlockError::ReservedSzx));
        assert_eq!(BlockError::ReservedSzx.response_code(), Code::BAD_REQUEST);
        assert_eq!(
            BlockValue::decode(&[0, 0, 0, 1]),
            Err(BlockError::BadLength(4))
        );
        assert_eq!(BlockError::BadLength(4).response_code(), Code::BAD_OPTION);
        assert_eq!(
            BlockValue::new(MAX_NUM + 1, false, 0),
            Err(BlockError::NumOverflow)
        );
        assert_eq!(BlockValue::new(0, false, 7), Err(BlockError::ReservedSzx));
        assert_eq!(
            BlockValue::at_offset((MAX_NUM as usize + 1) * 16, 0),
            Err(BlockError::NumOverflow)
        );
    }

    #[test]
    fn sizes() {
        assert_eq!(block_size(0), 16);
        assert_eq!(block_size(6), 1024);
        assert_eq!(BlockValue::new(3, false, 2).unwrap().offset(), 192);
        assert_eq!(decode_size(&[0x05, 0x00]), Ok(1280));
        assert_eq!(decode_size(&[1, 2, 3, 4, 5]), Err(BlockError::BadLength(5)));
        assert_eq!(size_to_vec(1280), vec![0x05, 0x00]);
        assert_eq!(size_value(usize::MAX), u32::MAX);
    }
}
