//! What the fuzz targets share: option values that may be far longer than a
//! fuzzer input (to reach the 65804-byte limit of an option length), and a
//! chunking of a byte stream decided by the input.

use arbitrary::{Arbitrary, Unstructured};

/// An option value or payload: bytes from the input, or `len` copies of one
/// byte (lengths up to 2^17, past the largest encodable option, 65804).
#[derive(Clone, Debug)]
pub enum Bytes {
    /// Taken from the input.
    Given(Vec<u8>),
    /// `len` copies of `fill`.
    Long { fill: u8, len: u32 },
}

impl<'a> Arbitrary<'a> for Bytes {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        if u.ratio(1u8, 16)? {
            // Mostly near the boundaries that matter: 268/269 (one- and
            // two-byte extensions), 65804/65805 (the largest option length,
            // the four-byte frame length), anywhere up to 2^17 otherwise.
            let len = match u.int_in_range(0u8..=5)? {
                0 => u.int_in_range(260u32..=280)?,
                1 => u.int_in_range(65_790u32..=65_820)?,
                _ => u.int_in_range(0u32..=1 << 17)?,
            };
            Ok(Bytes::Long {
                fill: u.arbitrary()?,
                len,
            })
        } else {
            Ok(Bytes::Given(u.arbitrary()?))
        }
    }
}

impl Bytes {
    /// The bytes themselves.
    pub fn to_vec(&self) -> Vec<u8> {
        match self {
            Bytes::Given(v) => v.clone(),
            Bytes::Long { fill, len } => vec![*fill; *len as usize],
        }
    }
}

/// Cuts `data` into pieces whose sizes come from `seed` (1 to 16 bytes, or
/// everything left when a size byte says 0), so that a stream decoder sees
/// frames split at every kind of place.
pub fn chunks<'a>(data: &'a [u8], seed: &[u8]) -> Vec<&'a [u8]> {
    let mut out = Vec::new();
    let mut rest = data;
    let mut sizes = seed.iter().cycle();
    while !rest.is_empty() {
        let s = match sizes.next() {
            None | Some(0) => rest.len(),
            Some(b) => usize::from(b % 16) + 1,
        };
        let (a, b) = rest.split_at(s.min(rest.len()));
        out.push(a);
        rest = b;
    }
    out
}
