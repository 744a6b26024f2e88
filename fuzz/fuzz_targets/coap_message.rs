//! The RFC 7252 codec (coapcc-proto `message`): decoding any datagram, and
//! encoding any message built from the input.
//!
//! Decode side, for every input:
//! - `MessageView::decode` returns Ok or Err, never panics;
//! - an accepted datagram re-encodes to the same bytes (the wire format is
//!   canonical), both through `Message::encode` and through a
//!   `MessageWriter` on a buffer of exactly its size, and `encoded_len` is its
//!   length; a buffer one byte short fails with `BufferTooSmall` having written
//!   a prefix of it;
//! - token, option values and payload lie inside the input, options come in
//!   ascending order, `option`/`uint_option`/`path_segments` agree with the
//!   iteration;
//! - a refused datagram's error matches its header (`TooShort`, `BadVersion`,
//!   `BadTokenLength` as `peek_header` reads it).
//!
//! Encode side (the input read as a message by `arbitrary`): `Message::encode`
//! fails exactly for a token over 8 bytes, an Empty message with content, or
//! an option value over 65804 bytes, and otherwise decodes back to the same
//! message (options sorted by number, repeats in order) unless its code is of
//! a reserved class, which the decoder refuses.
#![no_main]

use arbitrary::{Arbitrary, Unstructured};
use coapcc_fuzz::Bytes;
use coapcc_proto::message::{
    decode_uint, option, peek_header, Code, DecodeError, EncodeError, Message, MessageType,
    MessageView, MessageWriter,
};
use libfuzzer_sys::fuzz_target;

/// The largest option length the format expresses.
const MAX_OPTION: usize = 0xFFFF + 269;

fuzz_target!(|data: &[u8]| {
    decode_side(data);
    encode_side(data);
});

fn inside(outer: &[u8], inner: &[u8]) -> bool {
    let (o, i) = (outer.as_ptr() as usize, inner.as_ptr() as usize);
    inner.is_empty() || (i >= o && i + inner.len() <= o + outer.len())
}

fn decode_side(data: &[u8]) {
    let view = match MessageView::decode(data) {
        Ok(v) => v,
        Err(e) => return refused(data, e),
    };
    assert!(inside(data, view.token) && view.token.len() <= 8);
    assert!(inside(data, view.payload));
    let mut last = 0u16;
    let mut paths = 0;
    for (n, v) in view.options() {
        assert!(n >= last, "options out of order");
        assert!(inside(data, v));
        assert!(view.option(n).is_some());
        if view.option(n).map(|f| f.as_ptr()) == Some(v.as_ptr()) {
            assert_eq!(view.uint_option(n), decode_uint(v));
        }
        paths += usize::from(n == option::URI_PATH);
        last = n;
    }
    assert_eq!(view.path_segments().count(), paths);

    // Owned form: byte-identical re-encoding.
    let owned = Message::from(&view);
    assert_eq!(owned.encoded_len(), data.len());
    let again = owned.encode().expect("a decoded message encodes");
    assert_eq!(again, data, "decode -> encode changed the bytes");
    assert_eq!(Message::decode(&again).as_ref(), Ok(&owned));

    // Writer on a buffer of exactly the size, then one byte short.
    let mut buf = vec![0u8; data.len()];
    let n = write(&mut buf, &view).expect("fits exactly");
    assert_eq!(&buf[..n], data);
    let mut short = vec![0u8; data.len() - 1];
    match write(&mut short, &view) {
        Err((EncodeError::BufferTooSmall, written)) => {
            assert!(written < data.len());
            assert_eq!(&short[..written], &data[..written], "not a prefix");
        }
        other => panic!("one byte short: {other:?}"),
    }
}

/// Writes `view` with a `MessageWriter`; on failure, the error and how many
/// bytes the writer holds.
fn write(buf: &mut [u8], view: &MessageView<'_>) -> Result<usize, (EncodeError, usize)> {
    let mut w =
        MessageWriter::new(buf, view.mtype, view.code, view.mid, view.token).map_err(|e| (e, 0))?;
    for (n, v) in view.options() {
        let held = w.len();
        w.option(n, v).map_err(|e| (e, held))?;
        assert!(w.len() > held);
    }
    let held = w.len();
    w.payload(view.payload).map_err(|e| (e, held))?;
    Ok(w.len())
}

fn refused(data: &[u8], e: DecodeError) {
    let header = peek_header(data);
    match e {
        DecodeError::TooShort => assert!(data.len() < 4),
        DecodeError::BadVersion => assert!(data.len() >= 4 && header.is_none()),
        DecodeError::BadTokenLength => assert!(header.expect("header").tkl > 8),
        _ => {
            let h = header.expect("a version-1 header was read");
            assert!(h.tkl <= 8);
        }
    }
    // Any refusal but a short or foreign datagram is answered with RST.
    assert_eq!(
        e.rejects_confirmable(),
        !matches!(e, DecodeError::TooShort | DecodeError::BadVersion)
    );
}

#[derive(Debug, Arbitrary)]
struct Spec {
    mtype: u8,
    code: u8,
    mid: u16,
    token: Vec<u8>,
    options: Vec<(u16, Bytes)>,
    payload: Bytes,
}

fn encode_side(data: &[u8]) {
    let Ok(spec) = Spec::arbitrary_take_rest(Unstructured::new(data)) else {
        return;
    };
    let mut budget = 1usize << 19; // at most 512 KiB of long values per run
    let mut options = Vec::new();
    for (n, v) in &spec.options {
        let v = v.to_vec();
        if v.len() > budget {
            break;
        }
        budget -= v.len();
        options.push((*n, v));
    }
    let payload = spec.payload.to_vec();
    let payload = if payload.len() > budget {
        Vec::new()
    } else {
        payload
    };
    let msg = Message {
        mtype: MessageType::from_bits(spec.mtype),
        code: Code(spec.code),
        mid: spec.mid,
        token: spec.token.clone(),
        options,
        payload,
    };
    let empty = msg.code.0 == 0;
    let content = !msg.token.is_empty() || !msg.options.is_empty() || !msg.payload.is_empty();
    let reserved = matches!(msg.code.0 >> 5, 1 | 6 | 7);
    let expected = if msg.token.len() > 8 {
        Some(EncodeError::TokenTooLong)
    } else if reserved {
        Some(EncodeError::ReservedClass)
    } else if empty && content {
        Some(EncodeError::NonEmptyEmpty)
    } else if msg.options.iter().any(|(_, v)| v.len() > MAX_OPTION) {
        Some(EncodeError::OptionTooLong)
    } else {
        None
    };
    match (msg.encode(), expected) {
        (Err(e), Some(want)) => assert_eq!(e, want),
        (Ok(bytes), None) => {
            assert_eq!(bytes.len(), msg.encoded_len());
            match Message::decode(&bytes) {
                Ok(back) => {
                    let mut sorted = msg.clone();
                    sorted.options.sort_by_key(|(n, _)| *n); // stable: repeats keep order
                    assert_eq!(back, sorted, "encode -> decode changed the message");
                }
                other => panic!("encoded {msg:?}, decoded {other:?}"),
            }
        }
        (got, want) => panic!("encode {msg:?}: got {got:?}, expected error {want:?}"),
    }
}
