//! MSB-first bit packing for the compression residue (RFC 8724 §7.3: field
//! residues are concatenated bit by bit, most significant bit first), and the
//! size prefix of a variable-length residue (RFC 8724 §7.5.2).

/// Appends bits, most significant first, to a byte vector; the last byte is
/// padded with zero bits (RFC 8724 §9 recommends 0 as padding).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BitWriter {
    bytes: Vec<u8>,
    bits: usize,
}

impl BitWriter {
    /// An empty writer.
    pub fn new() -> Self {
        BitWriter::default()
    }

    /// Appends the `n` low bits of `value` (`n` ≤ 64), most significant first.
    pub fn push(&mut self, value: u64, n: u32) {
        debug_assert!(n <= 64);
        for i in (0..n).rev() {
            self.push_bit((value >> i) & 1 == 1);
        }
    }

    /// Appends whole bytes (byte-wise when aligned).
    pub fn push_bytes(&mut self, bytes: &[u8]) {
        if self.bits.is_multiple_of(8) {
            self.bytes.extend_from_slice(bytes);
            self.bits += 8 * bytes.len();
        } else {
            for b in bytes {
                self.push(u64::from(*b), 8);
            }
        }
    }

    /// Appends the size of a variable-length residue (RFC 8724 §7.5.2): 0–14
    /// on 4 bits; 15–254 as 0b1111 then 8 bits; larger as twelve 1 bits then
    /// 16 bits.
    pub fn push_size(&mut self, size: usize) {
        match size {
            0..=14 => self.push(size as u64, 4),
            15..=254 => {
                self.push(0xF, 4);
                self.push(size as u64, 8);
            }
            _ => {
                self.push(0xFFF, 12);
                self.push(size as u64, 16);
            }
        }
    }

    fn push_bit(&mut self, bit: bool) {
        if self.bits.is_multiple_of(8) {
            self.bytes.push(0);
        }
        if bit {
            let last = self.bytes.len() - 1;
            self.bytes[last] |= 0x80 >> (self.bits % 8);
        }
        self.bits += 1;
    }

    /// The number of bits written.
    pub fn bit_len(&self) -> usize {
        self.bits
    }

    /// The bytes written so far, the last one padded with zeros.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The bytes, the last one padded with zeros.
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }
}

/// Reads bits, most significant first; every read is checked against the end.
#[derive(Clone, Debug)]
pub struct BitReader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> BitReader<'a> {
    /// Reads `bytes` from its first bit.
    pub fn new(bytes: &'a [u8]) -> Self {
        BitReader { bytes, at: 0 }
    }

    /// The next `n` bits (`n` ≤ 64) as an unsigned number; `None` past the end.
    pub fn read(&mut self, n: u32) -> Option<u64> {
        debug_assert!(n <= 64);
        if self.remaining() < n as usize {
            return None;
        }
        let mut v = 0u64;
        for _ in 0..n {
            let bit = (self.bytes[self.at / 8] >> (7 - self.at % 8)) & 1;
            v = (v << 1) | u64::from(bit);
            self.at += 1;
        }
        Some(v)
    }

    /// The next `n` whole bytes (not necessarily aligned); `None` past the end.
    pub fn read_bytes(&mut self, n: usize) -> Option<Vec<u8>> {
        if self.remaining() < 8 * n {
            return None;
        }
        if self.at.is_multiple_of(8) {
            let start = self.at / 8;
            self.at += 8 * n;
            return Some(self.bytes[start..start + n].to_vec());
        }
        (0..n).map(|_| self.read(8).map(|b| b as u8)).collect()
    }

    /// A variable-length residue's size (RFC 8724 §7.5.2, see
    /// [`BitWriter::push_size`]).
    pub fn read_size(&mut self) -> Option<usize> {
        let short = self.read(4)?;
        if short < 15 {
            return Some(short as usize);
        }
        let medium = self.read(8)?;
        if medium < 255 {
            return Some(medium as usize);
        }
        self.read(16).map(|v| v as usize)
    }

    /// Bits left to read.
    pub fn remaining(&self) -> usize {
        8 * self.bytes.len() - self.at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_pack_msb_first_and_pad_with_zeros() {
        let mut w = BitWriter::new();
        w.push(0b10, 2);
        w.push(0b0001, 4);
        w.push(0b1, 1);
        assert_eq!(w.bit_len(), 7);
        assert_eq!(w.bytes(), &[0b1000_0110]);
        w.push_bytes(&[0xAB]);
        assert_eq!(w.into_bytes(), vec![0b1000_0111, 0b0101_0110]);
    }

    #[test]
    fn reads_give_back_what_was_written() {
        let mut w = BitWriter::new();
        w.push(5, 3);
        w.push_bytes(b"xyz");
        w.push(u64::MAX, 64);
        for size in [0, 14, 15, 254, 255, 1000] {
            w.push_size(size);
        }
        let bytes = w.into_bytes();
        let mut r = BitReader::new(&bytes);
        assert_eq!(r.read(3), Some(5));
        assert_eq!(r.read_bytes(3).as_deref(), Some(&b"xyz"[..]));
        assert_eq!(r.read(64), Some(u64::MAX));
        for size in [0, 14, 15, 254, 255, 1000] {
            assert_eq!(r.read_size(), Some(size));
        }
        assert!(r.remaining() < 8);
        assert_eq!(r.read(8), None);
        assert_eq!(r.read_bytes(1), None);
    }

    #[test]
    fn size_prefix_lengths_follow_rfc_8724() {
        for (size, bits) in [(0, 4), (14, 4), (15, 12), (254, 12), (255, 28)] {
            let mut w = BitWriter::new();
            w.push_size(size);
            assert_eq!(w.bit_len(), bits, "size {size}");
        }
    }
}
