//! Connection-level tests of CoAP over TCP: CSM first, request/response by
//! token, Ping/Pong, Release, and Abort on malformed input (RFC 8323 §3–5).

use super::signal::{self, Csm};
use super::*;
use crate::message::Code;
use proptest::prelude::*;

const GET: Code = Code(0x01);

/// Moves all output of `from` into `to`, in pieces of `chunk` bytes.
fn pipe<H: RequestHandler>(
    from: &mut CoapTcpConnection,
    to: &mut CoapTcpConnection,
    chunk: usize,
    h: &mut H,
) {
    let bytes = from.output().to_vec();
    from.consume_output(bytes.len());
    for piece in bytes.chunks(chunk.max(1)) {
        to.handle_bytes(piece, h);
    }
}

fn events(c: &mut CoapTcpConnection) -> Vec<ConnEvent> {
    std::iter::from_fn(|| c.poll_event()).collect()
}

#[test]
fn csm_first_then_request_without_waiting() {
    let mut cl = CoapTcpConnection::initiator();
    assert_eq!(cl.output(), &[0x00, 0xE1]);
    assert!(!cl.peer_csm_seen());
    // The initiator sends its request at once, behind its CSM.
    let n = cl.send_request(GET, &[], &[(11, b"hello")], &[]).unwrap();
    assert_eq!(n, 8);
    assert_eq!(
        cl.output(),
        &[0x00, 0xE1, 0x60, 0x01, 0xB5, b'h', b'e', b'l', b'l', b'o']
    );
    let mut sv = CoapTcpConnection::responder();
    let mut h = TestbedHandler::default();
    pipe(&mut cl, &mut sv, 3, &mut h);
    assert_eq!(
        events(&mut sv),
        vec![
            ConnEvent::PeerCsm(Csm::default()),
            ConnEvent::RequestServed {
                token: Token::default(),
                code: GET
            }
        ]
    );
    // The server's CSM, then 2.05 with a 60-byte payload: 2 + 64 bytes.
    assert_eq!(sv.output().len(), 2 + 64);
    assert_eq!(&sv.output()[..5], &[0x00, 0xE1, 0xD0, 48, 0x45]);
    pipe(&mut sv, &mut cl, 1000, &mut RefuseRequests);
    assert_eq!(
        events(&mut cl),
        vec![
            ConnEvent::PeerCsm(Csm::default()),
            ConnEvent::Response {
                token: Token::default(),
                code: Code(0x45),
                payload_len: 60,
                frame_len: 64
            }
        ]
    );
    assert_eq!(cl.outstanding(), 0);
    assert_eq!(cl.state(), ConnState::Open);
}

#[test]
fn tokens_are_echoed_and_scoped_to_the_connection() {
    let mut cl = CoapTcpConnection::initiator();
    let a = cl.alloc_token(1);
    let b = cl.alloc_token(1);
    assert_ne!(a, b);
    cl.send_request(GET, a.as_slice(), &[], &[]).unwrap();
    assert_eq!(
        cl.send_request(GET, a.as_slice(), &[], &[]),
        Err(SendError::TokenInUse)
    );
    cl.send_request(GET, b.as_slice(), &[], &[]).unwrap();
    let mut sv = CoapTcpConnection::responder();
    pipe(&mut cl, &mut sv, 1, &mut TestbedHandler { payload_len: 5 });
    pipe(&mut sv, &mut cl, 2, &mut RefuseRequests);
    let got: Vec<Token> = events(&mut cl)
        .into_iter()
        .filter_map(|e| match e {
            ConnEvent::Response { token, .. } => Some(token),
            _ => None,
        })
        .collect();
    assert_eq!(got, vec![a, b]);
    // A second connection starts its tokens afresh.
    assert_eq!(CoapTcpConnection::initiator().alloc_token(1), a);
}

#[test]
fn handler_closure_sets_code_options_payload() {
    let mut cl = CoapTcpConnection::initiator();
    cl.send_request(Code(0x02), &[9], &[], b"in").unwrap();
    let mut sv = CoapTcpConnection::responder();
    let mut h = |req: &FrameView<'_>, resp: &mut Response| {
        assert_eq!(req.payload, b"in");
        resp.code = Code(0x41);
        resp.options.push((12, vec![0]));
        resp.payload.extend_from_slice(b"ok");
    };
    pipe(&mut cl, &mut sv, 4, &mut h);
    let out = sv.output();
    // Skip the 2-byte CSM and decode the response.
    let f = FrameView::decode(&out[2..]).unwrap();
    assert_eq!(f.code, Code(0x41));
    assert_eq!(f.token, &[9]);
    assert_eq!(f.option(12), Some(&[0][..]));
    assert_eq!(f.payload, b"ok");
}

#[test]
fn ping_gets_pong_with_same_token() {
    let mut a = CoapTcpConnection::initiator();
    let mut b = CoapTcpConnection::responder();
    a.ping(&[0xAB, 0xCD]).unwrap();
    pipe(&mut a, &mut b, 1, &mut RefuseRequests);
    assert_eq!(&b.output()[2..], &[0x02, 0xE3, 0xAB, 0xCD]);
    assert!(events(&mut b).contains(&ConnEvent::PingAnswered(Token::new(&[0xAB, 0xCD]).unwrap())));
    pipe(&mut b, &mut a, 1, &mut RefuseRequests);
    assert!(events(&mut a).contains(&ConnEvent::Pong(Token::new(&[0xAB, 0xCD]).unwrap())));
}

#[test]
fn release_stops_new_requests() {
    let mut a = CoapTcpConnection::initiator();
    let mut b = CoapTcpConnection::responder();
    a.release().unwrap();
    assert_eq!(a.send_request(GET, &[], &[], &[]), Err(SendError::NotOpen));
    pipe(&mut a, &mut b, 100, &mut RefuseRequests);
    assert_eq!(b.state(), ConnState::Released);
    assert!(events(&mut b).contains(&ConnEvent::PeerReleased));
    assert!(!b.should_close());
}

fn expect_abort(c: &mut CoapTcpConnection, input: &[u8]) -> AbortCause {
    let before = c.output().len();
    c.handle_bytes(input, &mut RefuseRequests);
    assert!(c.should_close());
    let abort = FrameView::decode(&c.output()[before..]).unwrap();
    assert_eq!(abort.code, signal::ABORT);
    match events(c).into_iter().last() {
        Some(ConnEvent::Aborted(cause)) => cause,
        other => panic!("no abort event: {other:?}"),
    }
}

#[test]
fn first_message_must_be_csm() {
    let mut c = CoapTcpConnection::responder();
    // A request before any CSM.
    assert_eq!(expect_abort(&mut c, &[0x00, 0x01]), AbortCause::MissingCsm);
    // Nothing is processed afterwards.
    c.handle_bytes(&[0x00, 0xE1], &mut RefuseRequests);
    assert!(events(&mut c).is_empty());
}

#[test]
fn malformed_frames_abort() {
    let cases: [(&[u8], FrameError); 4] = [
        (&[0x09, 0x01], FrameError::BadTokenLength),
        (&[0x10, 0x45, 0xFF], FrameError::EmptyPayload),
        (&[0x10, 0x45, 0xF0], FrameError::ReservedNibble),
        (&[0x20, 0x45, 0x12, 0], FrameError::TruncatedOption),
    ];
    for (bytes, err) in cases {
        let mut c = CoapTcpConnection::initiator();
        c.handle_bytes(&[0x00, 0xE1], &mut RefuseRequests);
        assert_eq!(expect_abort(&mut c, bytes), AbortCause::Malformed(err));
    }
}

#[test]
fn oversized_frame_aborts_before_it_arrives() {
    let mut c = CoapTcpConnection::initiator();
    c.handle_bytes(&[0x00, 0xE1], &mut RefuseRequests);
    // Len 14: 2 extension bytes, body 269 + 1000 > 1152.
    let cause = expect_abort(&mut c, &[0xE0, 0x03, 0xE8]);
    assert_eq!(cause, AbortCause::Malformed(FrameError::TooLarge));
}

#[test]
fn bad_csm_option_aborts_with_its_number() {
    let mut c = CoapTcpConnection::initiator();
    let before = c.output().len();
    let cause = expect_abort(&mut c, &[0x20, 0xE1, 0x91, 0x01]);
    assert_eq!(cause, AbortCause::BadCsmOption(9));
    let f = FrameView::decode(&c.output()[before..]).unwrap();
    assert_eq!(f.option(signal::OPT_BAD_CSM_OPTION), Some(&[9][..]));
}

#[test]
fn peer_max_message_size_limits_requests() {
    let mut c = CoapTcpConnection::initiator();
    let mut buf = [0u8; 16];
    let n = Csm {
        max_message_size: 20,
        block_wise: false,
    }
    .encode(&mut buf)
    .unwrap();
    c.handle_bytes(&buf[..n], &mut RefuseRequests);
    assert_eq!(c.peer_csm().max_message_size, 20);
    assert_eq!(
        c.send_request(GET, &[], &[], &[0; 30]),
        Err(SendError::TooLarge)
    );
    assert!(c.send_request(GET, &[], &[], &[0; 10]).is_ok());
}

#[test]
fn empty_and_unknown_signals_are_ignored() {
    let mut c = CoapTcpConnection::initiator();
    c.handle_bytes(&[0x00, 0xE1, 0x00, 0x00, 0x00, 0xE7], &mut RefuseRequests);
    assert_eq!(
        events(&mut c),
        vec![
            ConnEvent::PeerCsm(Csm::default()),
            ConnEvent::Ignored(Code(0)),
            ConnEvent::Ignored(Code(0xE7))
        ]
    );
    assert_eq!(c.state(), ConnState::Open);
}

#[test]
fn peer_abort_closes() {
    let mut c = CoapTcpConnection::initiator();
    c.handle_bytes(&[0x00, 0xE1, 0x00, 0xE5], &mut RefuseRequests);
    assert!(c.should_close());
    assert!(events(&mut c).contains(&ConnEvent::PeerAborted));
}

/// (code, token, options, payload) of a generated frame.
type FrameParts = (u8, Vec<u8>, Vec<(u16, Vec<u8>)>, Vec<u8>);

fn arb_frame() -> impl Strategy<Value = FrameParts> {
    (
        any::<u8>(),
        proptest::collection::vec(any::<u8>(), 0..=8),
        proptest::collection::vec(
            (0u16..2000, proptest::collection::vec(any::<u8>(), 0..300)),
            0..4,
        ),
        proptest::collection::vec(any::<u8>(), 0..700),
    )
        .prop_map(|(code, token, mut opts, payload)| {
            opts.sort_by_key(|o| o.0);
            (code, token, opts, payload)
        })
}

proptest! {
    #[test]
    fn random_bytes_never_panic_and_errors_abort(
        bytes in proptest::collection::vec(any::<u8>(), 0..400),
        chunk in 1usize..50,
        csm_first in any::<bool>(),
    ) {
        let mut c = CoapTcpConnection::responder();
        let start = c.output().len();
        if csm_first {
            c.handle_bytes(&[0x00, 0xE1], &mut TestbedHandler::default());
        }
        for piece in bytes.chunks(chunk) {
            c.handle_bytes(piece, &mut TestbedHandler::default());
        }
        let evs = events(&mut c);
        if let Some(ConnEvent::Aborted(_)) = evs.last() {
            // The last frame written is the Abort.
            let mut d = FrameDecoder::new(1 << 20);
            d.push(&c.output()[start..]);
            let mut last = None;
            while let Some(f) = d.next_frame().unwrap() {
                last = Some(f.code);
            }
            prop_assert_eq!(last, Some(signal::ABORT));
            prop_assert!(c.should_close());
        }
    }

    #[test]
    fn frames_round_trip_through_the_stream_decoder(
        frames in proptest::collection::vec(arb_frame(), 1..6),
        chunk in 1usize..200,
    ) {
        let mut stream = Vec::new();
        let mut buf = vec![0u8; 4000];
        for (code, token, opts, payload) in &frames {
            let o: Vec<(u16, &[u8])> = opts.iter().map(|(n, v)| (*n, v.as_slice())).collect();
            let n = encode_frame(&mut buf, Code(*code), token, &o, payload).unwrap();
            prop_assert_eq!(n, frame_len(token.len(), &o, payload));
            stream.extend_from_slice(&buf[..n]);
        }
        let mut d = FrameDecoder::new(1 << 20);
        let mut got = Vec::new();
        for piece in stream.chunks(chunk) {
            d.push(piece);
            while let Some(f) = d.next_frame().unwrap() {
                let opts: Vec<(u16, Vec<u8>)> = f.options().map(|(n, v)| (n, v.to_vec())).collect();
                got.push((f.code.0, f.token.to_vec(), opts, f.payload.to_vec()));
            }
        }
        prop_assert_eq!(got, frames);
    }
}

#[test]
fn a_response_larger_than_the_peers_max_message_size_becomes_5_00() {
    let small = Csm {
        max_message_size: 100,
        block_wise: false,
    };
    let mut a = CoapTcpConnection::new(Role::Initiator, small);
    let mut b = CoapTcpConnection::responder();
    pipe(&mut a, &mut b, 1, &mut RefuseRequests);
    b.consume_output(b.output().len()); // b's CSM
    a.send_request(Code(0x01), &[7], &[], &[]).unwrap();
    pipe(&mut a, &mut b, 1, &mut TestbedHandler { payload_len: 500 });
    let f = crate::tcp::FrameView::decode(b.output()).unwrap();
    assert_eq!(f.code, Code(0xA0));
    assert_eq!(f.token, &[7]);
    assert!(b.output().len() <= 100);
    a.send_request(Code(0x01), &[8], &[], &[]).unwrap();
    b.consume_output(b.output().len());
    pipe(&mut a, &mut b, 1, &mut TestbedHandler { payload_len: 60 });
    let f = crate::tcp::FrameView::decode(b.output()).unwrap();
    assert_eq!((f.code, f.payload.len()), (Code(0x45), 60));
}

#[test]
fn a_max_message_size_below_the_floor_aborts_naming_it() {
    for mms in [0u8, 10, 15] {
        let mut c = CoapTcpConnection::responder();
        let before = c.output().len();
        // CSM with Max-Message-Size `mms`, then a GET
        let cause = expect_abort(&mut c, &[0x20, 0xE1, 0x21, mms, 0x00, 0x01]);
        assert_eq!(
            cause,
            AbortCause::BadCsmOption(signal::OPT_MAX_MESSAGE_SIZE)
        );
        let f = FrameView::decode(&c.output()[before..]).unwrap();
        assert_eq!(f.option(signal::OPT_BAD_CSM_OPTION), Some(&[2][..]));
        assert_eq!(f.payload, b"Max-Message-Size invalid or below 16 bytes");
        // the limit refused is not applied: the Abort is within the base one
        assert_eq!(c.peer_csm(), Csm::default());
    }
}

#[test]
fn an_application_abort_carries_its_diagnostic() {
    let mut c = CoapTcpConnection::responder();
    c.handle_bytes(&[0x00, 0xE1], &mut RefuseRequests);
    let before = c.output().len();
    assert!(c.abort("frame not complete within 30.0 s").is_ok());
    assert!(c.should_close());
    let f = FrameView::decode(&c.output()[before..]).unwrap();
    assert_eq!(f.code, signal::ABORT);
    assert_eq!(f.payload, b"frame not complete within 30.0 s");
    assert_eq!(c.abort("again"), Err(SendError::NotOpen));
}
