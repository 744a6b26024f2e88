//! The Observe option value (RFC 7641 §2): a uint of 0–3 bytes. In a GET
//! request it is an action (0 = register, 1 = deregister); in a
//! notification a 24-bit sequence number.

use core::fmt;

use crate::message::{decode_uint, encode_uint, option, MessageView};

/// The largest Observe value: 24 bits (RFC 7641 §2, the 3-byte uint).
pub const OBSERVE_MAX: u32 = 0xFF_FFFF;

/// Why an Observe option value is unusable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ObserveError {
    /// The option is longer than 3 bytes (RFC 7641 §2: length 0–3).
    TooLong(usize),
    /// A value above [`OBSERVE_MAX`] was to be encoded.
    OutOfRange(u32),
    /// A request's Observe value other than 0 (register) or 1 (deregister);
    /// RFC 7641 §2 defines no other action.
    UnknownAction(u32),
}

impl fmt::Display for ObserveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ObserveError::TooLong(n) => write!(f, "Observe option of {n} bytes (at most 3)"),
            ObserveError::OutOfRange(v) => write!(f, "Observe value {v} exceeds 24 bits"),
            ObserveError::UnknownAction(v) => {
                write!(
                    f,
                    "Observe value {v} in a request (0 registers, 1 deregisters)"
                )
            }
        }
    }
}

impl std::error::Error for ObserveError {}

/// Decodes an Observe option value (leading zero bytes are accepted, as
/// RFC 7252 §3.2 asks of a uint's recipient).
pub fn decode_observe(bytes: &[u8]) -> Result<u32, ObserveError> {
    if bytes.len() > 3 {
        return Err(ObserveError::TooLong(bytes.len()));
    }
    Ok(decode_uint(bytes).unwrap_or(0))
}

/// Encodes an Observe value minimally: returns the bytes and how many of
/// the trailing ones to use (0 is the empty value).
pub fn encode_observe(value: u32) -> Result<([u8; 4], usize), ObserveError> {
    if value > OBSERVE_MAX {
        return Err(ObserveError::OutOfRange(value));
    }
    Ok(encode_uint(value))
}

/// What the Observe option of a GET request asks (RFC 7641 §2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ObserveAction {
    /// 0: add the client to the resource's observers.
    Register,
    /// 1: remove the client from the resource's observers.
    Deregister,
}

impl ObserveAction {
    /// The action of a request's Observe value.
    pub fn from_value(value: u32) -> Result<Self, ObserveError> {
        match value {
            0 => Ok(ObserveAction::Register),
            1 => Ok(ObserveAction::Deregister),
            v => Err(ObserveError::UnknownAction(v)),
        }
    }

    /// The option value carrying the action.
    pub fn value(self) -> u32 {
        match self {
            ObserveAction::Register => 0,
            ObserveAction::Deregister => 1,
        }
    }
}

/// The Observe value of `msg`, if it carries the option (the first one, as
/// the option is not repeatable, RFC 7641 §2).
pub fn observe_of(msg: &MessageView<'_>) -> Option<Result<u32, ObserveError>> {
    msg.option(option::OBSERVE).map(decode_observe)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_at_the_length_boundaries() {
        for (v, len) in [
            (0, 0),
            (1, 1),
            (255, 1),
            (256, 2),
            (0xFFFF, 2),
            (0x1_0000, 3),
        ] {
            let (bytes, n) = encode_observe(v).unwrap();
            assert_eq!(n, len, "{v}");
            assert_eq!(decode_observe(&bytes[4 - n..]), Ok(v));
        }
        let (bytes, n) = encode_observe(OBSERVE_MAX).unwrap();
        assert_eq!(&bytes[4 - n..], &[0xFF, 0xFF, 0xFF]);
    }

    #[test]
    fn bad_values_are_errors() {
        assert_eq!(
            encode_observe(OBSERVE_MAX + 1),
            Err(ObserveError::OutOfRange(0x100_0000))
        );
        assert_eq!(decode_observe(&[0, 0, 0, 1]), Err(ObserveError::TooLong(4)));
        assert_eq!(decode_observe(&[0, 7]), Ok(7));
        assert_eq!(
            ObserveAction::from_value(2),
            Err(ObserveError::UnknownAction(2))
        );
        assert_eq!(ObserveAction::from_value(0), Ok(ObserveAction::Register));
        assert_eq!(ObserveAction::Deregister.value(), 1);
        assert!(!ObserveError::TooLong(5).to_string().is_empty());
    }
}
