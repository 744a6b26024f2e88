//! Whether a SCHC packet fits one LoRaWAN frame. SCHC fragmentation (RFC 8724
//! §8, ACK-on-Error as RFC 9011 profiles it) is not implemented: a packet too
//! large for the spreading factor's payload limit is refused.

use core::fmt;

/// A SCHC packet larger than the frame payload the spreading factor allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TooLarge {
    /// The SCHC packet's size in bytes.
    pub size: usize,
    /// The largest frame payload (FRMPayload) at the spreading factor, in
    /// bytes.
    pub max_payload: usize,
}

impl fmt::Display for TooLarge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the compressed packet is {} bytes but the spreading factor allows at most {} \
             bytes of frame payload; SCHC fragmentation is not implemented, so send a \
             smaller message (a smaller block size) or use a lower spreading factor",
            self.size, self.max_payload
        )
    }
}

impl std::error::Error for TooLarge {}

/// `Ok` if a SCHC packet of `compressed_len` bytes fits a frame payload of
/// `max_payload` bytes.
pub fn fits(compressed_len: usize, max_payload: usize) -> Result<(), TooLarge> {
    if compressed_len <= max_payload {
        Ok(())
    } else {
        Err(TooLarge {
            size: compressed_len,
            max_payload,
        })
    }
}
