//! The exchanges of RFC 7959 §3 replayed through the state machines, with
//! every message encoded and decoded; reassembly under loss (property
//! tests); bad input.

use proptest::prelude::*;

use super::*;
use crate::message::{option, Code, Message, MessageType};

fn b(num: u32, more: bool, szx: u8) -> BlockValue {
    BlockValue::new(num, more, szx).unwrap()
}

/// A body of `len` bytes whose bytes differ from block to block.
fn body(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| {
            (i as u8)
                .wrapping_mul(31)
                .wrapping_add(seed ^ (i >> 8) as u8)
        })
        .collect()
}

/// Sends `m` through the codec, as the network would.
fn wire(m: &Message) -> Message {
    Message::decode(&m.encode().unwrap()).unwrap()
}

/// A message as the RFC's figures write it: code, then `1:NUM/M/size`,
/// `2:NUM/M/size`, `size1:N`, `size2:N` for the options present.
fn describe(m: &Message) -> String {
    let o = BlockOptions::of(m).unwrap();
    let mut s = m.code.to_string();
    if let Some(v) = o.block1 {
        s += &format!(" 1:{v}");
    }
    if let Some(v) = o.block2 {
        s += &format!(" 2:{v}");
    }
    if let Some(v) = o.size1 {
        s += &format!(" size1:{v}");
    }
    if let Some(v) = o.size2 {
        s += &format!(" size2:{v}");
    }
    s
}

fn request(code: Code, mid: u16, opts: BlockOptions, payload: &[u8]) -> Message {
    let mut m = Message::new(MessageType::Con, code, mid);
    m.options.push((option::URI_PATH, b"status".to_vec()));
    opts.write_to(&mut m);
    m.payload = payload.to_vec();
    wire(&m)
}

fn response(
    req: &Message,
    code: Code,
    opts: BlockOptions,
    etag: Option<&[u8]>,
    payload: &[u8],
) -> Message {
    let mut m = Message::new(MessageType::Ack, code, req.mid);
    opts.write_to(&mut m);
    if let Some(e) = etag {
        m.options.push((option::ETAG, e.to_vec()));
    }
    m.payload = payload.to_vec();
    wire(&m)
}

/// The server of a GET: the responder over `rep`.
fn serve_get(server: &Block2Responder, rep: &[u8], etag: Option<&[u8]>, req: &Message) -> Message {
    let o = BlockOptions::of(req).unwrap();
    match server.respond(rep, o.block2, o.size2.is_some()) {
        Ok(r) => {
            let opts = BlockOptions {
                block2: r.block2,
                size2: r.size2,
                ..Default::default()
            };
            response(req, Code::CONTENT, opts, etag, r.payload)
        }
        Err(e) => response(req, e.code(), BlockOptions::default(), None, &[]),
    }
}

/// Runs a block-wise GET to completion, calling `between` after each
/// response; returns the figure lines and the body.
fn get(
    server: &Block2Responder,
    rep: &[u8],
    mut client: Block2Download,
    mut between: impl FnMut(usize, &mut Block2Download),
) -> (Vec<String>, Vec<u8>) {
    let mut lines = Vec::new();
    for (i, mid) in (1234u16..).enumerate() {
        let opts = BlockOptions {
            block2: client.next_request().unwrap(),
            ..Default::default()
        };
        let req = request(Code::GET, mid, opts, &[]);
        let resp = serve_get(server, rep, Some(b"\x01\x02"), &req);
        lines.push(describe(&req));
        lines.push(describe(&resp));
        let o = BlockOptions::of(&resp).unwrap();
        let etag = resp.option(option::ETAG);
        if client
            .on_response(o.block2, etag, o.size2, &resp.payload)
            .unwrap()
            == Progress::Complete
        {
            return (lines, client.into_body());
        }
        between(i, &mut client);
    }
    unreachable!()
}

#[test]
fn figure_2_simple_block_wise_get() {
    let rep = body(300, 1);
    let server = Block2Responder {
        max_szx: 3,
        ..Default::default()
    };
    let (lines, got) = get(&server, &rep, Block2Download::new(4096, None), |_, _| {});
    assert_eq!(
        lines,
        [
            "0.01",
            "2.05 2:0/1/128",
            "0.01 2:1/0/128",
            "2.05 2:1/1/128",
            "0.01 2:2/0/128",
            "2.05 2:2/0/128"
        ]
    );
    assert_eq!(got, rep);
}

#[test]
fn figure_3_early_negotiation() {
    let rep = body(350, 2);
    let (lines, got) = get(
        &Block2Responder::default(),
        &rep,
        Block2Download::new(4096, Some(2)),
        |_, _| {},
    );
    let mut want = Vec::new();
    for n in 0..6 {
        want.push(format!("0.01 2:{n}/0/64"));
        want.push(format!("2.05 2:{n}/{}/64", u8::from(n < 5)));
    }
    assert_eq!(lines, want);
    assert_eq!(got, rep);
}

#[test]
fn figure_4_late_negotiation() {
    let rep = body(350, 3);
    let server = Block2Responder {
        max_szx: 3,
        ..Default::default()
    };
    // After the first block the client asks for 64-byte blocks: the second
    // request is block 2 of 64 bytes (byte 128).
    let (lines, got) = get(&server, &rep, Block2Download::new(4096, None), |i, c| {
        if i == 0 {
            c.prefer_szx(2);
        }
    });
    let mut want = vec!["0.01".to_string(), "2.05 2:0/1/128".to_string()];
    for n in 2..6 {
        want.push(format!("0.01 2:{n}/0/64"));
        want.push(format!("2.05 2:{n}/{}/64", u8::from(n < 5)));
    }
    assert_eq!(lines, want);
    assert_eq!(got, rep);
}

#[test]
fn the_client_follows_a_smaller_server_size() {
    // The client asks for 1024-byte blocks; the server sends 256.
    let rep = body(700, 4);
    let server = Block2Responder {
        max_szx: 4,
        size2_in_first_block: true,
    };
    let (lines, got) = get(&server, &rep, Block2Download::new(4096, Some(6)), |_, _| {});
    assert_eq!(
        lines,
        [
            "0.01 2:0/0/1024",
            "2.05 2:0/1/256 size2:700",
            "0.01 2:1/0/256",
            "2.05 2:1/1/256",
            "0.01 2:2/0/256",
            "2.05 2:2/0/256"
        ]
    );
    assert_eq!(got, rep);
}

/// Runs a Block1 upload to its end; returns the figure lines, the client's
/// last step and what the server assembled.
fn put(
    server: &mut Block1Receiver,
    mut client: Block1Upload,
) -> (
    Vec<String>,
    Result<UploadStep, UploadError>,
    Option<Vec<u8>>,
) {
    let mut lines = Vec::new();
    let mut assembled = None;
    for mid in 1234u16.. {
        let Some(out) = client.next_block() else {
            unreachable!("the upload ended without a final response")
        };
        let opts = BlockOptions {
            block1: Some(out.block1),
            size1: out.size1,
            ..Default::default()
        };
        let req = request(Code::PUT, mid, opts, out.payload);
        let o = BlockOptions::of(&req).unwrap();
        let (code, opts) = match server.on_request(o.block1, o.size1, &req.payload) {
            Block1Outcome::Continue(v) => (
                Code::CONTINUE,
                BlockOptions {
                    block1: Some(v),
                    ..Default::default()
                },
            ),
            Block1Outcome::Complete { block1, body } => {
                assembled = Some(body);
                (
                    Code::CHANGED,
                    BlockOptions {
                        block1,
                        ..Default::default()
                    },
                )
            }
            Block1Outcome::Reject { code, size1 } => (
                code,
                BlockOptions {
                    size1,
                    ..Default::default()
                },
            ),
        };
        let resp = response(&req, code, opts, None, &[]);
        lines.push(describe(&req));
        lines.push(describe(&resp));
        let o = BlockOptions::of(&resp).unwrap();
        match client.on_response(resp.code, o.block1, o.size1) {
            Ok(UploadStep::Continue) => {}
            last => return (lines, last, assembled),
        }
    }
    unreachable!()
}

#[test]
fn figure_6_block_wise_put() {
    let data = body(300, 5);
    let mut server = Block1Receiver::default();
    let (lines, last, got) = put(&mut server, Block1Upload::new(data.clone(), 3).unwrap());
    assert_eq!(
        lines,
        [
            "0.03 1:0/1/128",
            "2.31 1:0/1/128",
            "0.03 1:1/1/128",
            "2.31 1:1/1/128",
            "0.03 1:2/0/128",
            "2.04 1:2/0/128"
        ]
    );
    assert_eq!(last, Ok(UploadStep::Done(Code::CHANGED)));
    assert_eq!(got, Some(data));
    assert!(!server.is_active());
}

#[test]
fn figure_7_block_wise_put_with_late_negotiation() {
    let data = body(200, 6);
    let mut server = Block1Receiver::new(Block1Config {
        max_szx: 1,
        ..Default::default()
    });
    let (lines, last, got) = put(&mut server, Block1Upload::new(data.clone(), 3).unwrap());
    assert_eq!(
        lines,
        [
            "0.03 1:0/1/128",
            "2.31 1:0/1/32",
            "0.03 1:4/1/32",
            "2.31 1:4/1/32",
            "0.03 1:5/1/32",
            "2.31 1:5/1/32",
            "0.03 1:6/0/32",
            "2.04 1:6/0/32"
        ]
    );
    assert_eq!(last, Ok(UploadStep::Done(Code::CHANGED)));
    assert_eq!(got, Some(data));
}

#[test]
fn a_body_over_the_limit_gets_4_13_with_size1() {
    let config = Block1Config {
        max_body: 256,
        ..Default::default()
    };
    // Announced with Size1: refused at block 0 (RFC 7959 §4).
    let mut server = Block1Receiver::new(config);
    let up = Block1Upload::new(body(300, 7), 3).unwrap().with_size1(true);
    let (lines, last, got) = put(&mut server, up);
    assert_eq!(lines, ["0.03 1:0/1/128 size1:300", "4.13 size1:256"]);
    assert_eq!(last, Err(UploadError::TooLarge(Some(256))));
    assert_eq!(got, None);
    // Not announced: refused at the block that crosses the limit.
    let mut server = Block1Receiver::new(config);
    let (lines, last, _) = put(&mut server, Block1Upload::new(body(300, 7), 3).unwrap());
    assert_eq!(lines[4..], ["0.03 1:2/0/128", "4.13 size1:256"]);
    assert_eq!(last, Err(UploadError::TooLarge(Some(256))));
    assert!(!server.is_active());
    // Not block-wise at all.
    let out = server.on_request(None, None, &body(300, 7));
    assert_eq!(
        out,
        Block1Outcome::Reject {
            code: Code::REQUEST_ENTITY_TOO_LARGE,
            size1: Some(256)
        }
    );
}

#[test]
fn block1_then_block2_in_one_exchange() {
    // RFC 7959 §3.4: a block-wise POST whose response is block-wise too.
    let data = body(300, 8);
    let answer = body(500, 9);
    let mut server = Block1Receiver::default();
    let mut up = Block1Upload::new(data.clone(), 3).unwrap();
    let responder = Block2Responder {
        max_szx: 3,
        ..Default::default()
    };
    let mut down = Block2Download::new(4096, None);
    let mut lines = Vec::new();
    let mut mid = 1234;
    while let Some(out) = up.next_block() {
        let req = request(
            Code::POST,
            mid,
            BlockOptions {
                block1: Some(out.block1),
                ..Default::default()
            },
            out.payload,
        );
        mid += 1;
        let o = BlockOptions::of(&req).unwrap();
        let resp = match server.on_request(o.block1, None, &req.payload) {
            Block1Outcome::Continue(v) => response(
                &req,
                Code::CONTINUE,
                BlockOptions {
                    block1: Some(v),
                    ..Default::default()
                },
                None,
                &[],
            ),
            Block1Outcome::Complete { block1, body } => {
                assert_eq!(body, data);
                let r = responder.respond(&answer, None, false).unwrap();
                let opts = BlockOptions {
                    block1,
                    block2: r.block2,
                    ..Default::default()
                };
                response(&req, Code::CHANGED, opts, Some(b"t"), r.payload)
            }
            other => panic!("{other:?}"),
        };
        lines.push(describe(&req));
        lines.push(describe(&resp));
        let o = BlockOptions::of(&resp).unwrap();
        if up.on_response(resp.code, o.block1, None).unwrap() != UploadStep::Continue {
            down.on_response(o.block2, resp.option(option::ETAG), None, &resp.payload)
                .unwrap();
        }
    }
    while !down.is_complete() {
        let opts = BlockOptions {
            block2: down.next_request().unwrap(),
            ..Default::default()
        };
        let req = request(Code::POST, mid, opts, &[]);
        mid += 1;
        let o = BlockOptions::of(&req).unwrap();
        let r = responder.respond(&answer, o.block2, false).unwrap();
        let opts = BlockOptions {
            block2: r.block2,
            ..Default::default()
        };
        let resp = response(&req, Code::CHANGED, opts, Some(b"t"), r.payload);
        lines.push(describe(&req));
        lines.push(describe(&resp));
        let o = BlockOptions::of(&resp).unwrap();
        down.on_response(o.block2, resp.option(option::ETAG), None, &resp.payload)
            .unwrap();
    }
    assert_eq!(
        lines,
        [
            "0.02 1:0/1/128",
            "2.31 1:0/1/128",
            "0.02 1:1/1/128",
            "2.31 1:1/1/128",
            "0.02 1:2/0/128",
            "2.04 1:2/0/128 2:0/1/128",
            "0.02 2:1/0/128",
            "2.04 2:1/1/128",
            "0.02 2:2/0/128",
            "2.04 2:2/1/128",
            "0.02 2:3/0/128",
            "2.04 2:3/0/128"
        ]
    );
    assert_eq!(down.body(), answer);
}

#[test]
fn a_changed_etag_voids_the_download() {
    let rep = body(300, 10);
    let server = Block2Responder {
        max_szx: 3,
        ..Default::default()
    };
    let mut c = Block2Download::new(4096, None);
    let r = server.respond(&rep, None, false).unwrap();
    assert_eq!(
        c.on_response(r.block2, Some(b"a"), None, r.payload),
        Ok(Progress::Continue)
    );
    let r = server
        .respond(&rep, c.next_request().unwrap(), false)
        .unwrap();
    assert_eq!(
        c.on_response(r.block2, Some(b"b"), None, r.payload),
        Err(DownloadError::EtagChanged)
    );
    // An ETag that vanishes is a change too.
    assert_eq!(
        c.on_response(r.block2, None, None, r.payload),
        Err(DownloadError::EtagChanged)
    );
    // Restarting fetches block 0 again, at the size reached.
    c.restart();
    assert_eq!(c.next_request(), Ok(Some(b(0, false, 3))));
    assert!(c.body().is_empty() && c.etag().is_none());
}

#[test]
fn download_refusals() {
    let rep = body(300, 11);
    let server = Block2Responder {
        max_szx: 3,
        ..Default::default()
    };
    // Size2 over the limit, and bytes over the limit.
    let mut c = Block2Download::new(200, None);
    let r = server.respond(&rep, None, true).unwrap();
    assert_eq!(
        c.on_response(r.block2, None, r.size2, r.payload),
        Err(DownloadError::TooLarge)
    );
    let mut c = Block2Download::new(200, None);
    c.on_response(r.block2, None, None, r.payload).unwrap();
    let r = server.respond(&rep, Some(b(1, false, 3)), false).unwrap();
    assert_eq!(
        c.on_response(r.block2, None, None, r.payload),
        Err(DownloadError::TooLarge)
    );
    // A skipped block, a short block with M set, a larger block than asked.
    let mut c = Block2Download::new(4096, Some(3));
    let r = server.respond(&rep, Some(b(1, false, 3)), false).unwrap();
    assert_eq!(
        c.on_response(r.block2, None, None, r.payload),
        Err(DownloadError::OutOfSequence)
    );
    assert_eq!(
        c.on_response(Some(b(0, true, 3)), None, None, &[0; 100]),
        Err(DownloadError::BadLength)
    );
    assert_eq!(
        c.on_response(Some(b(0, true, 4)), None, None, &[0; 256]),
        Err(DownloadError::BadBlock)
    );
    // After the last block.
    let mut c = Block2Download::new(4096, None);
    assert_eq!(
        c.on_response(None, None, None, b"all"),
        Ok(Progress::Complete)
    );
    // The same whole response again (a duplicated datagram) is a repeat; a
    // different one is not a block of this transfer.
    assert_eq!(
        c.on_response(None, None, None, b"all"),
        Ok(Progress::Duplicate)
    );
    assert_eq!(
        c.on_response(None, None, None, b"new"),
        Err(DownloadError::BadBlock)
    );
    assert_eq!(
        c.on_response(Some(b(0, false, 0)), None, None, b"all"),
        Ok(Progress::Duplicate)
    );
    assert_eq!(
        c.on_response(Some(b(0, false, 0)), None, None, b"new"),
        Err(DownloadError::Finished)
    );
    assert_eq!(c.next_request(), Ok(None));
}

#[test]
fn block1_out_of_sequence_gets_4_08() {
    let data = body(512, 12);
    let mut s = Block1Receiver::default();
    let incomplete = Block1Outcome::Reject {
        code: Code::REQUEST_ENTITY_INCOMPLETE,
        size1: None,
    };
    // A block without block 0.
    assert_eq!(
        s.on_request(Some(b(1, true, 3)), None, &data[128..256]),
        incomplete
    );
    // A gap.
    assert_eq!(
        s.on_request(Some(b(0, true, 3)), None, &data[..128]),
        Block1Outcome::Continue(b(0, true, 3))
    );
    assert_eq!(
        s.on_request(Some(b(2, true, 3)), None, &data[256..384]),
        incomplete
    );
    assert!(!s.is_active());
    // A repeat of the last block stored is acknowledged again.
    s.on_request(Some(b(0, true, 3)), None, &data[..128]);
    s.on_request(Some(b(1, true, 3)), None, &data[128..256]);
    assert_eq!(
        s.on_request(Some(b(1, true, 3)), None, &data[128..256]),
        Block1Outcome::Continue(b(1, true, 3))
    );
    let done = s.on_request(Some(b(2, false, 3)), None, &data[256..300]);
    assert_eq!(
        done,
        Block1Outcome::Complete {
            block1: Some(b(2, false, 3)),
            body: data[..300].to_vec()
        }
    );
    // A payload that does not match its block: 4.00.
    assert_eq!(
        s.on_request(Some(b(0, true, 3)), None, &data[..100]),
        Block1Outcome::Reject {
            code: Code::BAD_REQUEST,
            size1: None
        }
    );
}

#[test]
fn upload_refusals() {
    let mut up = Block1Upload::new(body(300, 13), 3).unwrap();
    assert_eq!(
        up.on_response(Code::CONTINUE, Some(b(5, true, 3)), None),
        Err(UploadError::BadResponse)
    );
    assert_eq!(
        up.on_response(Code::CONTINUE, None, None),
        Err(UploadError::BadResponse)
    );
    assert_eq!(
        up.on_response(Code::REQUEST_ENTITY_INCOMPLETE, None, None),
        Err(UploadError::Incomplete)
    );
    assert_eq!(
        up.on_response(Code::NOT_FOUND, None, None),
        Err(UploadError::Rejected(Code::NOT_FOUND))
    );
    // A 4.13 asking for smaller blocks: start over at that size.
    assert_eq!(
        up.on_response(
            Code::REQUEST_ENTITY_TOO_LARGE,
            Some(b(0, true, 1)),
            Some(1000)
        ),
        Err(UploadError::TooLarge(Some(1000)))
    );
    up.restart(Some(1)).unwrap();
    assert_eq!(up.next_block().unwrap().block1, b(0, true, 1));
    // NUM overflow: 2^20 blocks of 16 bytes and one byte more.
    let big = vec![0u8; (MAX_NUM as usize + 1) * 16 + 1];
    assert_eq!(
        Block1Upload::new(big.clone(), 0),
        Err(UploadError::NumOverflow)
    );
    assert!(Block1Upload::new(big, 1).is_ok());
    // An empty body is one empty final block.
    let mut up = Block1Upload::new(Vec::new(), 3).unwrap();
    assert_eq!(up.next_block().unwrap().block1, b(0, false, 3));
    assert_eq!(
        up.on_response(Code::CHANGED, Some(b(0, false, 3)), None),
        Ok(UploadStep::Done(Code::CHANGED))
    );
    assert_eq!(
        up.on_response(Code::CHANGED, None, None),
        Err(UploadError::Finished)
    );
    assert!(up.is_done() && up.next_block().is_none());
}

#[test]
fn a_block_past_the_end_gets_4_02_in_a_message() {
    let rep = body(256, 14);
    let req = request(
        Code::GET,
        1,
        BlockOptions {
            block2: Some(b(2, false, 3)),
            ..Default::default()
        },
        &[],
    );
    let resp = serve_get(&Block2Responder::default(), &rep, None, &req);
    assert_eq!(describe(&resp), "4.02");
}

/// A block as the deduplication cache of the upload property test knows it.
type BlockKey = (BlockValue, usize);
/// A response's code and Block1.
type Answer = (Code, Option<BlockValue>);

/// What happens to one exchange in the property tests.
#[derive(Clone, Copy, Debug)]
enum Fate {
    Delivered,
    /// The request is lost; the client asks again.
    RequestLost,
    /// The response is lost after the server acted; the client asks again.
    ResponseLost,
    /// The response arrives twice.
    Duplicated,
}

fn fate() -> impl Strategy<Value = Fate> {
    prop_oneof![
        3 => Just(Fate::Delivered),
        1 => Just(Fate::RequestLost),
        1 => Just(Fate::ResponseLost),
        1 => Just(Fate::Duplicated),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn downloads_reassemble_exactly_under_loss(
        len in 0usize..20000,
        server_szx in 0u8..=6,
        client_szx in proptest::option::of(0u8..=6),
        fates in proptest::collection::vec(fate(), 0..64),
    ) {
        let rep = body(len, len as u8);
        let server = Block2Responder { max_szx: server_szx, size2_in_first_block: true };
        let mut c = Block2Download::new(20000, client_szx);
        let mut fates = fates.into_iter();
        let mut exchanges = 0;
        while !c.is_complete() {
            exchanges += 1;
            prop_assert!(exchanges < 3000);
            let ask = c.next_request().unwrap();
            let fate = fates.next().unwrap_or(Fate::Delivered);
            if matches!(fate, Fate::RequestLost) {
                continue;
            }
            let r = server.respond(&rep, ask, false).unwrap();
            if matches!(fate, Fate::ResponseLost) {
                continue;
            }
            let step = c.on_response(r.block2, Some(b"e"), r.size2, r.payload).unwrap();
            prop_assert_ne!(step, Progress::Duplicate);
            if matches!(fate, Fate::Duplicated) {
                let again = c.on_response(r.block2, Some(b"e"), r.size2, r.payload).unwrap();
                prop_assert_eq!(again, Progress::Duplicate);
            }
        }
        prop_assert_eq!(c.body(), &rep[..]);
    }

    #[test]
    fn uploads_reassemble_exactly_under_loss(
        len in 0usize..20000,
        server_szx in 0u8..=6,
        client_szx in 0u8..=6,
        fates in proptest::collection::vec(fate(), 0..64),
    ) {
        let data = body(len, len as u8);
        let mut s = Block1Receiver::new(Block1Config { max_body: 20000, max_szx: server_szx });
        let mut up = Block1Upload::new(data.clone(), client_szx).unwrap().with_size1(true);
        let mut fates = fates.into_iter();
        let mut assembled = None;
        // The server's message layer answers a retransmitted request from its
        // deduplication cache (RFC 7252 §4.5): the last request and answer.
        let mut cache: Option<(BlockKey, Answer)> = None;
        let mut exchanges = 0;
        while !up.is_done() {
            exchanges += 1;
            prop_assert!(exchanges < 3000);
            let out = up.next_block().unwrap();
            let key = (out.block1, out.payload.len());
            let fate = fates.next().unwrap_or(Fate::Delivered);
            if matches!(fate, Fate::RequestLost) {
                continue;
            }
            let answer = match cache {
                Some((k, a)) if k == key => a,
                _ => {
                    let a = match s.on_request(Some(out.block1), out.size1, out.payload) {
                        Block1Outcome::Continue(v) => (Code::CONTINUE, Some(v)),
                        Block1Outcome::Complete { block1, body } => {
                            prop_assert!(assembled.is_none());
                            assembled = Some(body);
                            (Code::CHANGED, block1)
                        }
                        Block1Outcome::Reject { code, .. } => {
                            return Err(TestCaseError::fail(format!("rejected with {code}")));
                        }
                    };
                    cache = Some((key, a));
                    a
                }
            };
            if matches!(fate, Fate::ResponseLost) {
                continue;
            }
            up.on_response(answer.0, answer.1, None).unwrap();
            if matches!(fate, Fate::Duplicated) {
                // A second copy names a block no longer due (or comes after
                // the final response): refused, and nothing changes.
                let before = up.clone();
                prop_assert!(up.on_response(answer.0, answer.1, None).is_err());
                prop_assert_eq!(&up, &before);
            }
        }
        prop_assert_eq!(assembled, Some(data));
    }

    #[test]
    fn arbitrary_option_values_never_panic(value in proptest::collection::vec(any::<u8>(), 0..6)) {
        let decoded = BlockValue::decode(&value);
        prop_assert_eq!(decoded.is_ok(), value.len() <= 3 && value.last().is_none_or(|v| v & 7 != 7));
        if let Ok(v) = decoded {
            prop_assert_eq!(BlockValue::decode(&v.to_vec()), Ok(v));
        }
    }

    #[test]
    fn arbitrary_block_sequences_never_panic(
        blocks in proptest::collection::vec((0u32..64, any::<bool>(), 0u8..=6, 0usize..1100, proptest::option::of(any::<u32>())), 0..32),
    ) {
        let mut s = Block1Receiver::new(Block1Config { max_body: 4096, max_szx: 4 });
        let mut c = Block2Download::new(4096, None);
        let payload = vec![0u8; 1100];
        for (num, more, szx, len, size) in blocks {
            let v = b(num, more, szx);
            let _ = s.on_request(Some(v), size, &payload[..len]);
            let _ = c.on_response(Some(v), None, size, &payload[..len]);
            let _ = c.next_request();
        }
    }
}
