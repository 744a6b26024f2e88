//! Transmission marking and its echo (spec docs/spec/algorithms-spec.md §4 and §6.6): how the
//! ordinal `i` of a transmission (0 = original) is written into a request, and
//! how the peer's echo is read back into the ordinal.

use coapcc_rto::Marking;

use crate::message::{decode_uint, encode_uint, option, MessageView};

/// The marking option of transmission `ordinal`, as (number, uint value), if
/// the marking uses an option.
///
/// - TC (65052): `ordinal + 1`;
/// - Rexmit-Cnt (65020): `ordinal` on retransmissions; on the original, 255
///   when probing and no option at all otherwise — thesis §7.3: "The original
///   transmission does not need the option as it can have an implicit value
///   of zero."
pub(crate) fn marking_option(marking: Marking, ordinal: u8) -> Option<(u16, u32)> {
    match marking {
        Marking::TransmissionCounter => Some((option::TC, u32::from(ordinal) + 1)),
        Marking::RexmitCount { probe: true } if ordinal == 0 => Some((option::REXMIT_CNT, 255)),
        Marking::RexmitCount { .. } if ordinal == 0 => None,
        Marking::RexmitCount { .. } => Some((option::REXMIT_CNT, u32::from(ordinal))),
        Marking::None | Marking::Token => None,
    }
}

/// The encoded marking option: header byte, delta extension, value, after an
/// option numbered `last`. Returns the bytes and their count.
pub(crate) fn encode_marking_option(number: u16, value: u32, last: u16) -> ([u8; 8], usize) {
    let mut out = [0u8; 8];
    let (v, vlen) = encode_uint(value);
    let delta = usize::from(number - last);
    let mut n = 1;
    let dn = match delta {
        0..=12 => delta as u8,
        13..=268 => {
            out[1] = (delta - 13) as u8;
            n = 2;
            13
        }
        _ => {
            out[1..3].copy_from_slice(&((delta - 269) as u16).to_be_bytes());
            n = 3;
            14
        }
    };
    // A uint of at most 4 bytes: the length always fits the nibble.
    out[0] = (dn << 4) | vlen as u8;
    out[n..n + vlen].copy_from_slice(&v[4 - vlen..]);
    (out, n + vlen)
}

/// The largest number of bytes a marking adds to a request: a 3-byte option
/// header with a 2-byte value (TC 256), or a 1-byte token.
pub(crate) const MAX_MARKING_OVERHEAD: usize = 5;

/// The ordinal echoed in the response `msg`, read according to the request's
/// marking. Rexmit-Cnt 255 is the probe on the original, so it reads as 0;
/// once the peer's support is confirmed (`probe: false`), a response without
/// the option answers the original, ordinal 0 — thesis §7.3: "From this
/// point on messages missing the option are inferred as original
/// transmissions." (Empty ACKs never reach here: they carry no echo.)
pub(crate) fn decode_echo(marking: Marking, msg: &MessageView<'_>) -> Option<u8> {
    match marking {
        Marking::None => None,
        Marking::TransmissionCounter => {
            let v = msg.option(option::TC).and_then(decode_uint)?;
            (1..=256).contains(&v).then(|| (v - 1) as u8)
        }
        Marking::RexmitCount { probe } => match msg.option(option::REXMIT_CNT) {
            None if !probe => Some(0),
            None => None,
            Some(v) => match decode_uint(v)? {
                255 => Some(0),
                v => u8::try_from(v).ok(),
            },
        },
        Marking::Token => match msg.token {
            [ordinal] => Some(*ordinal),
            _ => None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{Code, MessageType, MessageWriter};

    #[test]
    fn option_values() {
        assert_eq!(
            marking_option(Marking::TransmissionCounter, 0),
            Some((option::TC, 1))
        );
        assert_eq!(
            marking_option(Marking::TransmissionCounter, 4),
            Some((option::TC, 5))
        );
        // The original needs no option once support is known (§7.3).
        assert_eq!(
            marking_option(Marking::RexmitCount { probe: false }, 0),
            None
        );
        assert_eq!(
            marking_option(Marking::RexmitCount { probe: false }, 1),
            Some((option::REXMIT_CNT, 1))
        );
        assert_eq!(
            marking_option(Marking::RexmitCount { probe: true }, 0),
            Some((option::REXMIT_CNT, 255))
        );
        assert_eq!(
            marking_option(Marking::RexmitCount { probe: true }, 2),
            Some((option::REXMIT_CNT, 2))
        );
        assert_eq!(marking_option(Marking::Token, 3), None);
        assert_eq!(marking_option(Marking::None, 3), None);
    }

    #[test]
    fn encoded_option_matches_the_writer() {
        for (number, value, last) in [
            (option::TC, 1, 11),
            (option::TC, 256, 0),
            (option::REXMIT_CNT, 0, 11),
            (20, 3, 11),
            (40, 1, 11),
        ] {
            let mut buf = [0u8; 32];
            let mut w = MessageWriter::new(&mut buf, MessageType::Con, Code::GET, 0, &[]).unwrap();
            if last > 0 {
                w.option(last, &[]).unwrap();
            }
            let start = w.len();
            w.uint_option(number, value).unwrap();
            let expected = w.bytes()[start..].to_vec();
            let (bytes, n) = encode_marking_option(number, value, last);
            assert_eq!(&bytes[..n], &expected[..], "{number} {value} {last}");
            assert!(n <= MAX_MARKING_OVERHEAD);
        }
    }
}
