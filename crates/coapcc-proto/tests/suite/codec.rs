//! RFC 7252 codec: byte-exact vectors built by hand from the RFC's §3 layout,
//! every validation error, and round-trip properties.

use coapcc_proto::message::{
    decode_uint, option, peek_header, Code, DecodeError, EncodeError, Message, MessageType,
    MessageView, MessageWriter,
};
use proptest::prelude::*;

/// The testbed's request (spec docs/spec/testbed-spec.md §1.2): CON GET, MID 0x1234, no token,
/// Uri-Path "sense". Header 0x40 = version 1, type CON, TKL 0; option header 0xB5
/// = delta 11, length 5.
const TESTBED_REQUEST: [u8; 10] = [0x40, 0x01, 0x12, 0x34, 0xB5, b's', b'e', b'n', b's', b'e'];

fn encode(
    mtype: MessageType,
    code: Code,
    mid: u16,
    token: &[u8],
    f: impl FnOnce(&mut MessageWriter<'_>),
) -> Vec<u8> {
    let mut buf = [0u8; 2048];
    let mut w = MessageWriter::new(&mut buf, mtype, code, mid, token).unwrap();
    f(&mut w);
    let len = w.len();
    buf[..len].to_vec()
}

#[test]
fn testbed_request_is_10_bytes() {
    let bytes = encode(MessageType::Con, Code::GET, 0x1234, &[], |w| {
        w.option(option::URI_PATH, b"sense").unwrap();
        w.payload(&[]).unwrap();
    });
    assert_eq!(bytes, TESTBED_REQUEST);
    let m = MessageView::decode(&bytes).unwrap();
    assert_eq!(
        (m.mtype, m.code, m.mid),
        (MessageType::Con, Code::GET, 0x1234)
    );
    assert!(m.token.is_empty() && m.payload.is_empty());
    assert_eq!(m.options().collect::<Vec<_>>(), vec![(11, &b"sense"[..])]);
    assert_eq!(m.path_segments().collect::<Vec<_>>(), vec![&b"sense"[..]]);
}

#[test]
fn testbed_response_is_65_bytes() {
    let payload = [b'x'; 60];
    let bytes = encode(MessageType::Ack, Code::CONTENT, 0x1234, &[], |w| {
        w.payload(&payload).unwrap();
    });
    assert_eq!(bytes.len(), 65);
    // 0x60 = version 1, type ACK (2), TKL 0; 0x45 = 2.05; then the marker.
    assert_eq!(&bytes[..5], &[0x60, 0x45, 0x12, 0x34, 0xFF]);
    assert_eq!(&bytes[5..], &payload[..]);
    let m = MessageView::decode(&bytes).unwrap();
    assert_eq!(m.payload, &payload[..]);
    assert_eq!(m.options().count(), 0);
}

#[test]
fn one_byte_token_adds_one_byte() {
    let bytes = encode(MessageType::Con, Code::GET, 7, &[3], |w| {
        w.option(option::URI_PATH, b"sense").unwrap();
    });
    assert_eq!(
        bytes,
        [0x41, 0x01, 0x00, 0x07, 0x03, 0xB5, b's', b'e', b'n', b's', b'e']
    );
    assert_eq!(MessageView::decode(&bytes).unwrap().token, &[3]);
}

#[test]
fn transmission_counter_needs_a_two_byte_delta_extension() {
    // 65052 - 11 = 65041 = 269 + 64772 = 269 + 0xFD04: nibble 14; TC = 1 is one
    // byte long.
    let bytes = encode(MessageType::Con, Code::GET, 0x1234, &[], |w| {
        w.option(option::URI_PATH, b"sense").unwrap();
        w.uint_option(option::TC, 1).unwrap();
    });
    let mut expected = TESTBED_REQUEST.to_vec();
    expected.extend_from_slice(&[0xE1, 0xFD, 0x04, 0x01]);
    assert_eq!(bytes, expected);
    let m = MessageView::decode(&bytes).unwrap();
    assert_eq!(m.uint_option(option::TC), Some(1));
    assert_eq!(m.option(option::REXMIT_CNT), None);
}

#[test]
fn rexmit_cnt_zero_is_an_empty_value() {
    // 65020 - 11 = 65009 = 269 + 0xFCE4; value 0 has length 0.
    let bytes = encode(MessageType::Con, Code::GET, 0x1234, &[], |w| {
        w.option(option::URI_PATH, b"sense").unwrap();
        w.uint_option(option::REXMIT_CNT, 0).unwrap();
    });
    assert_eq!(&bytes[10..], &[0xE0, 0xFC, 0xE4]);
    let m = MessageView::decode(&bytes).unwrap();
    assert_eq!(m.option(option::REXMIT_CNT), Some(&[][..]));
    assert_eq!(m.uint_option(option::REXMIT_CNT), Some(0));
    // 255 (the probe) is one byte.
    let probe = encode(MessageType::Con, Code::GET, 1, &[], |w| {
        w.uint_option(option::REXMIT_CNT, 255).unwrap();
    });
    // First option: delta 65020 = 269 + 0xFCEF.
    assert_eq!(&probe[4..], &[0xE1, 0xFC, 0xEF, 0xFF]);
    assert_eq!(
        MessageView::decode(&probe)
            .unwrap()
            .uint_option(option::REXMIT_CNT),
        Some(255)
    );
}

#[test]
fn one_byte_extensions_for_delta_and_length() {
    // Size1 (60): delta 60 = 13 + 47; a 20-byte Uri-Query value: length 13 + 7.
    let query = [b'q'; 20];
    let bytes = encode(MessageType::Non, Code::POST, 0xBEEF, &[0xAA, 0xBB], |w| {
        w.option(option::URI_QUERY, &query).unwrap();
        w.uint_option(option::SIZE1, 1000).unwrap();
        w.payload(b"hi").unwrap();
    });
    // Uri-Query 15: delta nibble 13 with extension 2 (15 - 13), length nibble 13
    // with extension 7 (20 - 13).
    let mut expected = vec![0x52, 0x02, 0xBE, 0xEF, 0xAA, 0xBB, 0xDD, 2, 7];
    expected.extend_from_slice(&query);
    // Size1 after 15: delta 45 = 13 + 32, value 1000 = 0x03E8 (2 bytes).
    expected.extend_from_slice(&[0xD2, 32, 0x03, 0xE8]);
    expected.extend_from_slice(&[0xFF, b'h', b'i']);
    assert_eq!(bytes, expected);
    let m = MessageView::decode(&bytes).unwrap();
    assert_eq!(m.uint_option(option::SIZE1), Some(1000));
    assert_eq!(m.option(option::URI_QUERY), Some(&query[..]));
    assert_eq!(m.payload, b"hi");
    assert_eq!(m.token, &[0xAA, 0xBB]);
}

#[test]
fn two_byte_length_extension() {
    let value = vec![7u8; 300]; // 300 = 269 + 31
    let bytes = encode(MessageType::Con, Code::PUT, 1, &[], |w| {
        w.option(option::URI_PATH, &value).unwrap();
    });
    assert_eq!(&bytes[4..7], &[0xBE, 0x00, 31]);
    assert_eq!(bytes.len(), 4 + 3 + 300);
    assert_eq!(
        MessageView::decode(&bytes)
            .unwrap()
            .option(option::URI_PATH),
        Some(&value[..])
    );
}

#[test]
fn repeated_options_keep_their_order() {
    let bytes = encode(MessageType::Con, Code::GET, 1, &[], |w| {
        w.option(option::URI_PATH, b"a").unwrap();
        w.option(option::URI_PATH, b"bc").unwrap();
    });
    // The second has delta 0.
    assert_eq!(&bytes[4..], &[0xB1, b'a', 0x02, b'b', b'c']);
    let m = MessageView::decode(&bytes).unwrap();
    assert_eq!(
        m.path_segments().collect::<Vec<_>>(),
        vec![&b"a"[..], &b"bc"[..]]
    );
}

#[test]
fn empty_messages() {
    let ack = encode(MessageType::Ack, Code::EMPTY, 0x0102, &[], |_| {});
    assert_eq!(ack, [0x60, 0x00, 0x01, 0x02]);
    let rst = encode(MessageType::Rst, Code::EMPTY, 0xFFFF, &[], |_| {});
    assert_eq!(rst, [0x70, 0x00, 0xFF, 0xFF]);
    assert!(MessageView::decode(&rst).unwrap().is_empty_message());
}

#[test]
fn writer_errors() {
    let mut buf = [0u8; 64];
    assert_eq!(
        MessageWriter::new(&mut buf, MessageType::Con, Code::GET, 1, &[0; 9]).unwrap_err(),
        EncodeError::TokenTooLong
    );
    assert_eq!(
        MessageWriter::new(&mut buf, MessageType::Ack, Code::EMPTY, 1, &[1]).unwrap_err(),
        EncodeError::NonEmptyEmpty
    );
    assert_eq!(
        MessageWriter::new(&mut buf[..5], MessageType::Con, Code::GET, 1, &[1, 2]).unwrap_err(),
        EncodeError::BufferTooSmall
    );
    let mut w = MessageWriter::new(&mut buf, MessageType::Con, Code::GET, 1, &[]).unwrap();
    w.option(15, b"x").unwrap();
    assert_eq!(w.option(11, b"x").unwrap_err(), EncodeError::OptionOrder);
    w.payload(b"p").unwrap();
    assert_eq!(w.option(20, b"x").unwrap_err(), EncodeError::OptionOrder);
    let mut w = MessageWriter::new(&mut buf, MessageType::Ack, Code::EMPTY, 1, &[]).unwrap();
    assert_eq!(w.option(11, b"x").unwrap_err(), EncodeError::NonEmptyEmpty);
    assert_eq!(w.payload(b"x").unwrap_err(), EncodeError::NonEmptyEmpty);
    let mut small = [0u8; 12];
    let mut w = MessageWriter::new(&mut small, MessageType::Con, Code::GET, 1, &[]).unwrap();
    assert_eq!(w.payload(&[1; 8]).unwrap_err(), EncodeError::BufferTooSmall);
    assert_eq!(w.len(), 4, "nothing partial was written");
    assert!(!EncodeError::OptionOrder.to_string().is_empty());
}

#[test]
fn decode_errors() {
    let cases: &[(&[u8], DecodeError)] = &[
        (&[], DecodeError::TooShort),
        (&[0x40, 0x01, 0x00], DecodeError::TooShort),
        (&[0x80, 0x01, 0x00, 0x01], DecodeError::BadVersion),
        (&[0x00, 0x01, 0x00, 0x01], DecodeError::BadVersion),
        (
            &[0x49, 0x01, 0x00, 0x01, 1, 2, 3, 4, 5, 6, 7, 8, 9],
            DecodeError::BadTokenLength,
        ),
        (&[0x4F, 0x01, 0x00, 0x01], DecodeError::BadTokenLength),
        (&[0x42, 0x01, 0x00, 0x01, 0xAA], DecodeError::TruncatedToken),
        // Delta nibble 15 without length 15.
        (&[0x40, 0x01, 0x00, 0x01, 0xF0], DecodeError::ReservedNibble),
        // Length nibble 15.
        (&[0x40, 0x01, 0x00, 0x01, 0xBF], DecodeError::ReservedNibble),
        // Value past the end.
        (
            &[0x40, 0x01, 0x00, 0x01, 0xB5, b's'],
            DecodeError::TruncatedOption,
        ),
        // Missing delta extension bytes.
        (
            &[0x40, 0x01, 0x00, 0x01, 0xD0],
            DecodeError::TruncatedOption,
        ),
        (
            &[0x40, 0x01, 0x00, 0x01, 0xE0, 0x01],
            DecodeError::TruncatedOption,
        ),
        (
            &[0x40, 0x01, 0x00, 0x01, 0x0E, 0x00],
            DecodeError::TruncatedOption,
        ),
        // 65052 then another delta of 65041: beyond 65535.
        (
            &[0x40, 0x01, 0x00, 0x01, 0xE0, 0xFD, 0x0F, 0xE0, 0xFD, 0x04],
            DecodeError::OptionNumberOverflow,
        ),
        // Payload marker with nothing after it.
        (&[0x40, 0x01, 0x00, 0x01, 0xFF], DecodeError::EmptyPayload),
        (
            &[0x40, 0x01, 0x00, 0x01, 0xB1, b'a', 0xFF],
            DecodeError::EmptyPayload,
        ),
        // Empty messages must be exactly 4 bytes.
        (&[0x61, 0x00, 0x00, 0x01, 0x01], DecodeError::NonEmptyEmpty),
        (
            &[0x60, 0x00, 0x00, 0x01, 0xFF, 0x01],
            DecodeError::NonEmptyEmpty,
        ),
        (
            &[0x70, 0x00, 0x00, 0x01, 0xB1, b'a'],
            DecodeError::NonEmptyEmpty,
        ),
        // Reserved classes 1, 6, 7.
        (&[0x40, 0x20, 0x00, 0x01], DecodeError::ReservedClass),
        (&[0x60, 0xC1, 0x00, 0x01], DecodeError::ReservedClass),
        (&[0x60, 0xE3, 0x00, 0x01], DecodeError::ReservedClass),
    ];
    for (bytes, err) in cases {
        assert_eq!(MessageView::decode(bytes), Err(*err), "{bytes:02x?}");
        assert!(!err.to_string().is_empty());
    }
    assert!(!DecodeError::BadVersion.rejects_confirmable());
    assert!(DecodeError::ReservedClass.rejects_confirmable());
}

#[test]
fn largest_option_number_is_accepted() {
    // Delta 65535 = 269 + 0xFEF2.
    let bytes = [0x40, 0x01, 0x00, 0x01, 0xE0, 0xFE, 0xF2];
    let m = MessageView::decode(&bytes).unwrap();
    assert_eq!(m.options().collect::<Vec<_>>(), vec![(65535, &[][..])]);
}

#[test]
fn header_can_be_peeked_from_malformed_messages() {
    let h = peek_header(&[0x4F, 0x01, 0xAB, 0xCD]).unwrap();
    assert_eq!(
        (h.mtype, h.code, h.mid, h.tkl),
        (MessageType::Con, Code::GET, 0xABCD, 15)
    );
    assert!(peek_header(&[0x80, 0x01, 0xAB, 0xCD]).is_none());
    assert!(peek_header(&[0x40, 0x01, 0xAB]).is_none());
}

#[test]
fn uint_values() {
    assert_eq!(decode_uint(&[]), Some(0));
    assert_eq!(
        decode_uint(&[0, 0, 1]),
        Some(1),
        "leading zeros are tolerated"
    );
    assert_eq!(decode_uint(&[1, 0, 0, 0]), Some(1 << 24));
    assert_eq!(decode_uint(&[1, 0, 0, 0, 0]), None);
}

#[test]
fn owned_message_sorts_options_and_round_trips() {
    let mut m = Message::new(MessageType::Con, Code::GET, 0x1234);
    m.options.push((option::TC, vec![1]));
    m.options.push((option::URI_PATH, b"sense".to_vec()));
    let bytes = m.encode().unwrap();
    let mut expected = TESTBED_REQUEST.to_vec();
    expected.extend_from_slice(&[0xE1, 0xFD, 0x04, 0x01]);
    assert_eq!(bytes, expected);
    assert_eq!(m.encoded_len(), bytes.len());
    let back = Message::decode(&bytes).unwrap();
    assert_eq!(back.option(option::TC), Some(&[1][..]));
    assert_eq!(back.options[0], (option::URI_PATH, b"sense".to_vec()));
    let mut big = Message::new(MessageType::Con, Code::GET, 1);
    big.token = vec![0; 9];
    assert_eq!(big.encode(), Err(EncodeError::TokenTooLong));
}

/// What the decoder refuses the encoder does not write: every code of the
/// reserved classes 1, 6 and 7 (RFC 7252 §12.1), each detail 0–31, is
/// refused as `ReservedClass`; the classes around them encode.
#[test]
fn reserved_classes_are_not_encoded() {
    let mut buf = [0u8; 16];
    for class in [1u8, 6, 7] {
        for detail in 0..32 {
            let code = Code::new(class, detail);
            assert_eq!(
                MessageWriter::new(&mut buf, MessageType::Con, code, 1, &[]).unwrap_err(),
                EncodeError::ReservedClass,
                "{class}.{detail:02}"
            );
        }
    }
    for code in [Code::new(0, 1), Code::new(2, 5), Code::new(5, 31)] {
        assert!(MessageWriter::new(&mut buf, MessageType::Con, code, 1, &[]).is_ok());
    }
}

fn arb_message() -> impl Strategy<Value = Message> {
    let mtype = prop_oneof![
        Just(MessageType::Con),
        Just(MessageType::Non),
        Just(MessageType::Ack),
        Just(MessageType::Rst)
    ];
    // Non-empty, non-reserved classes (0 with detail > 0, 2, 3, 4, 5).
    let code = prop_oneof![
        (1u8..32).prop_map(|d| Code::new(0, d)),
        (2u8..6, 0u8..32).prop_map(|(c, d)| Code::new(c, d))
    ];
    let value = prop_oneof![
        4 => proptest::collection::vec(any::<u8>(), 0..16),
        1 => proptest::collection::vec(any::<u8>(), 0..400),
    ];
    let number = prop_oneof![0u16..40, 0u16..300, any::<u16>()];
    (
        mtype,
        code,
        any::<u16>(),
        proptest::collection::vec(any::<u8>(), 0..=8),
        proptest::collection::vec((number, value), 0..6),
        proptest::collection::vec(any::<u8>(), 0..80),
    )
        .prop_map(|(mtype, code, mid, token, mut options, payload)| {
            options.sort_by_key(|(n, _)| *n);
            Message {
                mtype,
                code,
                mid,
                token,
                options,
                payload,
            }
        })
}

proptest! {
    #[test]
    fn round_trip(m in arb_message()) {
        let bytes = m.encode().unwrap();
        prop_assert_eq!(bytes.len(), m.encoded_len());
        let back = Message::decode(&bytes).unwrap();
        prop_assert_eq!(&back, &m);
        // The borrowed view sees the same.
        let v = MessageView::decode(&bytes).unwrap();
        prop_assert_eq!(v.options().count(), m.options.len());
        prop_assert_eq!(v.payload, &m.payload[..]);
    }

    #[test]
    fn random_bytes_never_panic_and_valid_ones_reencode_identically(
        bytes in proptest::collection::vec(any::<u8>(), 0..64)
    ) {
        if let Ok(m) = Message::decode(&bytes) {
            // Every delta/length has exactly one encoding, so a valid message
            // re-encodes to the same bytes.
            prop_assert_eq!(m.encode().unwrap(), bytes);
        }
    }

    #[test]
    fn plausible_bytes_never_panic(
        tail in proptest::collection::vec(any::<u8>(), 0..48),
        first in 0x40u8..0x80,
        code in any::<u8>(),
    ) {
        // Version 1 headers reach the option parser far more often.
        let mut bytes = vec![first, code, 0, 1];
        bytes.extend_from_slice(&tail);
        if let Ok(m) = Message::decode(&bytes) {
            prop_assert_eq!(m.encode().unwrap(), bytes);
        }
    }

    #[test]
    fn truncations_are_rejected_or_consistent(m in arb_message(), cut in 0usize..64) {
        let bytes = m.encode().unwrap();
        let cut = cut.min(bytes.len());
        let short = &bytes[..bytes.len() - cut];
        if let Ok(v) = MessageView::decode(short) {
            prop_assert_eq!(Message::from(&v).encode().unwrap(), short.to_vec());
        }
    }
}
