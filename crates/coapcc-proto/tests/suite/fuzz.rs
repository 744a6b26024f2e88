//! Fuzzing the parsers that face the network: the RFC 7252 codec, the
//! server's datagram handling and the RFC 8323 stream framing, with
//! arbitrary bytes and with mutations of valid messages (proptest, so it
//! runs in `cargo test`). Each property runs `COAPCC_FUZZ_CASES` cases
//! (default 1000, a few seconds in all); set it higher for a long run:
//!
//!   COAPCC_FUZZ_CASES=1000000 cargo test --release -p coapcc-proto --test suite fuzz::
//!
//! Properties: nothing panics; whatever decodes re-encodes to a message that
//! decodes to the same thing; the server's replies are valid CoAP no larger
//! than its output buffer and its cache stays bounded; the stream decoder
//! never returns a frame above its limit, never buffers past it without
//! failing, and cuts valid frames out of any split of the stream exactly.

use coapcc_proto::message::{Code, Message, MessageType, MessageView, MAX_MESSAGE_SIZE};
use coapcc_proto::server::{FixedPayload, Server, ServerConfig, ServerOutput};
use coapcc_proto::tcp::{encode_frame, FrameDecoder, FrameView};
use proptest::prelude::*;

fn config() -> ProptestConfig {
    let cases = std::env::var("COAPCC_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// A valid message: any type, code, Message ID, token, options and payload.
fn message() -> impl Strategy<Value = Message> {
    (
        0u8..4,
        any::<u8>(),
        any::<u16>(),
        prop::collection::vec(any::<u8>(), 0..=8),
        prop::collection::vec(
            (any::<u16>(), prop::collection::vec(any::<u8>(), 0..40)),
            0..6,
        ),
        prop::collection::vec(any::<u8>(), 0..80),
    )
        .prop_map(|(t, code, mid, token, options, payload)| {
            let code = if code == 0 { Code::GET } else { Code(code) };
            let mut m = Message::new(MessageType::from_bits(t), code, mid);
            m.token = token;
            m.options = options;
            m.payload = payload;
            m
        })
}

/// Bytes with a few of them changed, some cut off or some appended.
fn mutate(mut bytes: Vec<u8>, edits: &[(usize, u8)], cut: usize, extra: &[u8]) -> Vec<u8> {
    for &(at, v) in edits {
        if !bytes.is_empty() {
            let i = at % bytes.len();
            bytes[i] = v;
        }
    }
    bytes.truncate(bytes.len().saturating_sub(cut));
    bytes.extend_from_slice(extra);
    bytes
}

/// Decoding is total, and what decodes survives a re-encoding.
fn check_codec(bytes: &[u8]) -> Result<(), TestCaseError> {
    let view = MessageView::decode(bytes);
    let owned = Message::decode(bytes);
    prop_assert_eq!(view.is_ok(), owned.is_ok());
    if let Ok(m) = owned {
        let again = m.encode().expect("a decoded message encodes");
        let back = Message::decode(&again).expect("a re-encoded message decodes");
        prop_assert_eq!(back, m);
    }
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn arbitrary_bytes_decode_or_fail_cleanly(bytes in prop::collection::vec(any::<u8>(), 0..1400)) {
        check_codec(&bytes)?;
    }

    #[test]
    fn mutated_messages_decode_or_fail_cleanly(
        m in message(),
        edits in prop::collection::vec((any::<usize>(), any::<u8>()), 0..4),
        cut in 0usize..8,
        extra in prop::collection::vec(any::<u8>(), 0..4),
    ) {
        if let Ok(bytes) = m.encode() {
            check_codec(&bytes)?;
            check_codec(&mutate(bytes, &edits, cut, &extra))?;
        }
    }

    #[test]
    fn the_server_answers_anything_with_valid_bounded_replies(
        datagrams in prop::collection::vec(
            prop_oneof![
                prop::collection::vec(any::<u8>(), 0..200),
                (message(), prop::collection::vec((any::<usize>(), any::<u8>()), 0..3))
                    .prop_map(|(m, e)| mutate(m.encode().unwrap_or_default(), &e, 0, &[])),
            ],
            1..20,
        ),
    ) {
        let cfg = ServerConfig { max_cache_entries: 8, ..ServerConfig::default() };
        let mut s: Server<u32, FixedPayload> = Server::new(cfg, FixedPayload { size: 60 });
        let mut out = [0u8; MAX_MESSAGE_SIZE];
        for (i, d) in datagrams.iter().enumerate() {
            let peer = (i % 3) as u32;
            if let ServerOutput::Reply { len, .. } = s.handle_datagram(i as u64, peer, d, &mut out) {
                prop_assert!(len <= out.len());
                prop_assert!(MessageView::decode(&out[..len]).is_ok(), "invalid reply to {:?}", d);
            }
            prop_assert!(s.cached() <= 8);
        }
    }

    #[test]
    fn the_stream_decoder_survives_arbitrary_streams(
        bytes in prop::collection::vec(any::<u8>(), 0..600),
        cuts in prop::collection::vec(1usize..64, 1..20),
    ) {
        const MAX: usize = 256;
        let mut d = FrameDecoder::new(MAX);
        let mut at = 0;
        'stream: for &c in cuts.iter().cycle() {
            if at >= bytes.len() {
                break;
            }
            let end = (at + c).min(bytes.len());
            d.push(&bytes[at..end]);
            at = end;
            loop {
                match d.next_frame() {
                    Ok(Some(f)) => prop_assert!(f.encoded_len() <= MAX),
                    Ok(None) => break,
                    Err(_) => break 'stream,
                }
            }
            // without a complete frame, never more than one frame's worth buffered
            prop_assert!(d.buffered() <= MAX + 64, "{} bytes buffered", d.buffered());
        }
    }

    #[test]
    fn valid_frames_come_out_of_any_split_exactly(
        frames in prop::collection::vec(
            (
                1u8..=255,
                prop::collection::vec(any::<u8>(), 0..=8),
                prop::collection::vec((1u16..2000, prop::collection::vec(any::<u8>(), 0..20)), 0..4),
                prop::collection::vec(any::<u8>(), 0..300),
            ),
            1..6,
        ),
        cuts in prop::collection::vec(1usize..97, 1..10),
    ) {
        let mut stream = Vec::new();
        let mut expected = Vec::new();
        for (code, token, mut options, payload) in frames {
            options.sort_by_key(|o| o.0);
            let opts: Vec<(u16, &[u8])> = options.iter().map(|(n, v)| (*n, v.as_slice())).collect();
            let mut buf = vec![0u8; 2048];
            let n = encode_frame(&mut buf, Code(code), &token, &opts, &payload).unwrap();
            let view = FrameView::decode(&buf[..n]).unwrap();
            prop_assert_eq!((view.code, view.token, view.payload), (Code(code), &token[..], &payload[..]));
            expected.push(buf[..n].to_vec());
            stream.extend_from_slice(&buf[..n]);
        }
        let mut d = FrameDecoder::new(4096);
        let mut got = Vec::new();
        let mut at = 0;
        for &c in cuts.iter().cycle() {
            if at >= stream.len() {
                break;
            }
            let end = (at + c).min(stream.len());
            d.push(&stream[at..end]);
            at = end;
            while let Some(f) = d.next_frame().expect("valid frames") {
                got.push((f.code, f.token.to_vec(), f.payload.to_vec(), f.encoded_len()));
            }
        }
        prop_assert_eq!(got.len(), expected.len());
        for (g, e) in got.iter().zip(&expected) {
            let v = FrameView::decode(e).unwrap();
            prop_assert_eq!(g, &(v.code, v.token.to_vec(), v.payload.to_vec(), e.len()));
        }
        prop_assert_eq!(d.buffered(), 0);
    }
}
