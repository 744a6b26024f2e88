//! RFC 8323 framing (coapcc-proto `tcp`): one frame, a byte stream cut into
//! frames, the connection state machine fed that stream, and frames encoded
//! from parts built out of the input.
//!
//! Input layout: byte 0 picks the chunking seed length `k` (0–7), the next
//! `k` bytes are the seed ([`coapcc_fuzz::chunks`]), the rest is the stream.
//! The whole input is also read by `FrameView::decode` as one frame and by
//! `arbitrary` as frame parts.
//!
//! - one frame: Ok or Err, never a panic; an accepted frame's length is the
//!   input's, `peek_frame_len` agrees, and it re-encodes to the same bytes;
//!   a CSM frame that `Csm::update` accepts re-encodes to the same settings;
//! - stream: the frames `FrameDecoder` returns, and its first error, do not
//!   depend on how the stream is cut; each frame is at most Max-Message-Size
//!   and at most the bytes not yet consumed, and is those bytes; frames plus
//!   what stays buffered make up the stream; after an error every call
//!   returns `StreamFailed`;
//! - connection: a responder fed the stream in those pieces never panics, and
//!   everything it writes is a well-formed frame stream starting with its CSM;
//!   each request served gets one response, and a response larger than the
//!   peer's Max-Message-Size in force when it was served (a later CSM may
//!   change it) is only the bare 5.00 the connection falls back on;
//! - encode: `encode_frame` succeeds exactly when the token is at most 8
//!   bytes and every option value at most 65804 bytes; what it writes is
//!   `frame_len` long and decodes to the same parts.
#![no_main]

use arbitrary::{Arbitrary, Unstructured};
use coapcc_fuzz::{chunks, Bytes};
use coapcc_proto::message::Code;
use coapcc_proto::tcp::frame::{peek_frame_len, WRITER_SLACK};
use coapcc_proto::tcp::signal::{self, Csm};
use coapcc_proto::tcp::{
    encode_frame, frame_len, CoapTcpConnection, ConnEvent, FrameDecoder, FrameError, FrameView,
    TestbedHandler,
};
use libfuzzer_sys::fuzz_target;

const MAX_OPTION: usize = 0xFFFF + 269;

fuzz_target!(|data: &[u8]| {
    one_frame(data);
    let k = usize::from(data.first().copied().unwrap_or(0) & 7);
    let seed = data.get(1..1 + k).unwrap_or(&[]);
    let stream = data.get(1 + k..).unwrap_or(&[]);
    let whole = decode_stream(&[stream], 1152);
    let cut = decode_stream(&chunks(stream, seed), 1152);
    assert_eq!(whole, cut, "framing depends on how the stream is cut");
    // A small Max-Message-Size: TooLarge from the header alone.
    let small = decode_stream(&chunks(stream, seed), 16);
    assert!(small.0.iter().all(|f| f.len <= 16));
    connection(&chunks(stream, seed));
    encode_side(data);
});

fn one_frame(data: &[u8]) {
    let Ok(f) = FrameView::decode(data) else {
        return;
    };
    assert_eq!(f.encoded_len(), data.len());
    assert_eq!(peek_frame_len(data), Ok(Some(data.len())));
    assert_eq!(reencode(&f), data, "decode -> encode changed the frame");
    if f.code == signal::CSM {
        if let Ok(c) = Csm::update(Csm::default(), &f) {
            let mut buf = [0u8; 64];
            let n = c.encode(&mut buf).expect("a CSM fits 64 bytes");
            let back = FrameView::decode(&buf[..n]).expect("our CSM decodes");
            assert_eq!(Csm::update(Csm::default(), &back), Ok(c));
        }
    }
}

fn reencode(f: &FrameView<'_>) -> Vec<u8> {
    let opts: Vec<(u16, &[u8])> = f.options().collect();
    let len = frame_len(f.token.len(), &opts, f.payload);
    assert_eq!(len, f.encoded_len());
    let mut buf = vec![0u8; len + WRITER_SLACK];
    let n = encode_frame(&mut buf, f.code, f.token, &opts, f.payload).expect("re-encodes");
    buf.truncate(n);
    buf
}

#[derive(Debug, PartialEq)]
struct Owned {
    code: u8,
    len: usize,
    bytes: Vec<u8>,
}

/// The frames of `pieces` and the first error, checking the decoder's
/// invariants on the way.
fn decode_stream(pieces: &[&[u8]], max: usize) -> (Vec<Owned>, Option<FrameError>) {
    let mut d = FrameDecoder::new(max);
    let mut frames = Vec::new();
    let mut pushed = Vec::new();
    let mut used = 0;
    for p in pieces {
        d.push(p);
        pushed.extend_from_slice(p);
        loop {
            match d.next_frame() {
                Ok(Some(f)) => {
                    let len = f.encoded_len();
                    assert!(len <= max, "frame over Max-Message-Size");
                    assert!(len <= pushed.len() - used, "frame longer than its input");
                    let bytes = reencode(&f);
                    assert_eq!(bytes, pushed[used..used + len], "frame is not its bytes");
                    used += len;
                    frames.push(Owned {
                        code: f.code.0,
                        len,
                        bytes,
                    });
                }
                Ok(None) => {
                    assert_eq!(d.buffered(), pushed.len() - used);
                    break;
                }
                Err(e) => {
                    assert_ne!(e, FrameError::StreamFailed);
                    assert_eq!(d.next_frame().unwrap_err(), FrameError::StreamFailed);
                    d.push(b"more");
                    assert_eq!(d.buffered(), 0);
                    assert_eq!(d.next_frame().unwrap_err(), FrameError::StreamFailed);
                    return (frames, Some(e));
                }
            }
        }
    }
    (frames, None)
}

fn connection(pieces: &[&[u8]]) {
    let mut c = CoapTcpConnection::responder();
    let mut handler = TestbedHandler::default();
    // The peer's Max-Message-Size in force when each request was served (a
    // later CSM may change it): responses are written in that order.
    let mut limits = std::collections::VecDeque::new();
    let mut peer_max = Csm::default().max_message_size as usize;
    for p in pieces {
        c.handle_bytes(p, &mut handler);
        while let Some(e) = c.poll_event() {
            match e {
                ConnEvent::PeerCsm(csm) => peer_max = csm.max_message_size as usize,
                ConnEvent::RequestServed { .. } => limits.push_back(peer_max),
                _ => {}
            }
        }
    }
    let out = c.output().to_vec();
    let mut d = FrameDecoder::new(usize::MAX);
    d.push(&out);
    let mut first = true;
    while let Some(f) = d.next_frame().expect("we write well-formed frames") {
        if first {
            assert_eq!(f.code, signal::CSM, "our first frame is a CSM");
            first = false;
            continue;
        }
        if matches!(f.code.0 >> 5, 2..=5) {
            let max = limits
                .pop_front()
                .expect("a response for each request served");
            if f.encoded_len() > max {
                assert_eq!(f.code, Code(0xA0), "a response over the peer's limit");
                assert!(f.payload.is_empty() && f.options().next().is_none());
            }
        }
    }
    assert!(limits.is_empty(), "a request served without a response");
    assert_eq!(d.buffered(), 0, "we write whole frames");
    assert!(!first, "the CSM is queued at once");
}

#[derive(Debug, Arbitrary)]
struct Parts {
    code: u8,
    token: Vec<u8>,
    options: Vec<(u16, Bytes)>,
    payload: Bytes,
}

fn encode_side(data: &[u8]) {
    let Ok(p) = Parts::arbitrary_take_rest(Unstructured::new(data)) else {
        return;
    };
    let mut budget = 1usize << 19;
    let mut owned: Vec<(u16, Vec<u8>)> = Vec::new();
    for (n, v) in &p.options {
        let v = v.to_vec();
        if v.len() > budget {
            break;
        }
        budget -= v.len();
        owned.push((*n, v));
    }
    owned.sort_by_key(|(n, _)| *n);
    let payload = p.payload.to_vec();
    let payload = if payload.len() > budget {
        Vec::new()
    } else {
        payload
    };
    let opts: Vec<(u16, &[u8])> = owned.iter().map(|(n, v)| (*n, v.as_slice())).collect();
    let len = frame_len(p.token.len().min(8), &opts, &payload);
    let mut buf = vec![0u8; len + WRITER_SLACK];
    let result = encode_frame(&mut buf, Code(p.code), &p.token, &opts, &payload);
    let too_long = opts.iter().any(|(_, v)| v.len() > MAX_OPTION);
    match result {
        Err(FrameError::BadTokenLength) => assert!(p.token.len() > 8),
        Err(FrameError::OptionTooLong) => assert!(p.token.len() <= 8 && too_long),
        Ok(n) => {
            assert!(
                p.token.len() <= 8 && !too_long,
                "encoded an unencodable frame"
            );
            assert_eq!(n, len, "frame_len disagrees with encode_frame");
            let f = FrameView::decode(&buf[..n]).expect("an encoded frame decodes");
            assert_eq!(f.code, Code(p.code));
            assert_eq!(f.token, &p.token[..]);
            assert_eq!(f.options().collect::<Vec<_>>(), opts);
            assert_eq!(f.payload, &payload[..]);
        }
        Err(e) => panic!("encode_frame: unexpected {e:?}"),
    }
}
