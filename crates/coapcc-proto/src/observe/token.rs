//! A token kept inline (RFC 7252 §5.3.1: 0–8 bytes), which names an
//! observation on both sides (RFC 7641 §3.2, §4.1).

/// A token of 0–8 bytes, stored inline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Token {
    bytes: [u8; 8],
    len: u8,
}

impl Token {
    /// The token of `bytes`; `None` beyond 8 bytes.
    pub fn new(bytes: &[u8]) -> Option<Token> {
        let mut t = Token::default();
        t.bytes.get_mut(..bytes.len())?.copy_from_slice(bytes);
        t.len = bytes.len() as u8;
        Some(t)
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn up_to_eight_bytes() {
        assert_eq!(Token::new(&[1, 2]).unwrap().as_slice(), &[1, 2]);
        assert_eq!(Token::new(&[]).unwrap().as_slice(), &[] as &[u8]);
        assert!(Token::new(&[0; 9]).is_none());
    }
}
