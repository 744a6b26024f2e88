//! A deterministic representation for block-wise transfers: byte `i` is the
//! printable ASCII `0x21 + i mod 94` (`!` to `~`), a period that no block
//! size divides, so a block sent at the wrong offset never looks right.

/// Byte `i` of the pattern.
pub fn pattern_byte(i: usize) -> u8 {
    0x21 + (i % 94) as u8
}

/// The first `len` bytes of the pattern.
pub fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(pattern_byte).collect()
}

/// Whether `body` is exactly the first `len` bytes of the pattern.
pub fn is_pattern(body: &[u8], len: usize) -> bool {
    body.len() == len && body.iter().enumerate().all(|(i, &b)| b == pattern_byte(i))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pattern_repeats_every_94_bytes() {
        let p = pattern(200);
        assert_eq!(&p[..3], b"!\"#");
        assert_eq!(p[93], b'~');
        assert_eq!(p[94], b'!');
        assert!(is_pattern(&p, 200));
        assert!(!is_pattern(&p, 199));
        let mut q = p.clone();
        q[150] ^= 1;
        assert!(!is_pattern(&q, 200));
    }
}
