//! Round trips of coapcc's messages through the rule set, hand-computed
//! sizes, and malformed input.

use proptest::prelude::*;

use super::*;
use crate::message::{option, Code, Message, MessageType};

fn msg(mtype: MessageType, code: Code, mid: u16, token: &[u8]) -> Message {
    let mut m = Message::new(mtype, code, mid);
    m.token = token.to_vec();
    m
}

fn get_sense(mid: u16, token: &[u8]) -> Message {
    let mut m = msg(MessageType::Con, Code::GET, mid, token);
    m.options.push((option::URI_PATH, SENSE.to_vec()));
    m
}

/// Compresses the packet of `m` going `dir` under `profile`, checks that
/// decompression gives back the very same bytes, and returns the packet's
/// length, the rule ID, the residue's bits and the SCHC packet's length.
fn round_trip_with(profile: &Profile, m: &Message, dir: Direction) -> (usize, u8, usize, usize) {
    let ctx = Context::default();
    let rules = coapcc_rules(profile);
    let packet = build(m, profile, &ctx, dir).unwrap();
    let c = compress(&rules, &packet, dir, &ctx);
    let wire = c.to_bytes();
    assert_eq!(wire.len(), c.len());
    let back = decompress(&rules, c.rule_id, &wire, dir, &ctx).unwrap();
    assert_eq!(back, packet, "{m:?} {dir:?} rule {}", c.rule_id);
    (packet.len(), c.rule_id, c.residue_bits, c.len())
}

fn round_trip(m: &Message, dir: Direction) -> (usize, u8, usize, usize) {
    round_trip_with(&Profile::default(), m, dir)
}

#[test]
fn con_get_sense_with_every_token_length() {
    for tkl in 0..=8usize {
        let token: Vec<u8> = (1..=tkl as u8).collect();
        let (len, rule, bits, schc) = round_trip(&get_sense(0x0042, &token), Direction::Up);
        assert_eq!(len, 40 + 8 + 4 + tkl + 6);
        assert_eq!(rule, UP_FIRST + 1, "the \"sense\" rule");
        // type 2 + TKL 4 + code index 2 + MID LSB 8 + token 8·TKL bits.
        assert_eq!(bits, 16 + 8 * tkl);
        assert_eq!(schc, 2 + tkl);
    }
}

#[test]
fn hand_computed_sizes_of_the_main_messages() {
    // CON GET /sense, 1-byte token: rule ID 33 in FPort; residue = type 2 +
    // TKL 4 + code 2 (GET is index 1 of 4) + MID 8 + token 8 = 24 bits →
    // 3 bytes, against 40 (IPv6) + 8 (UDP) + 4 + 1 + 6 (CoAP) = 59 bytes.
    assert_eq!(
        round_trip(&get_sense(7, &[0xAA]), Direction::Up),
        (59, 33, 24, 3)
    );

    // Its piggybacked 2.05 in an ACK with 60 bytes of payload: type 2 + TKL
    // 4 + code 3 (index 3 of 8) + MID 8 + token 8 = 25 bits, then the
    // payload (the 0xFF marker is elided): 25 + 480 bits → 64 bytes, against
    // 40 + 8 + 4 + 1 + 1 + 60 = 114.
    let mut ack = msg(MessageType::Ack, Code::CONTENT, 7, &[0xAA]);
    ack.payload = vec![0x5A; 60];
    assert_eq!(round_trip(&ack, Direction::Down), (114, 96, 25, 64));

    // An Empty ACK down: 2 + 4 + 3 + 8 = 17 bits → 3 bytes (52 before);
    // up (code index on 2 bits): 16 bits → 2 bytes.
    let empty = msg(MessageType::Ack, Code::EMPTY, 9, &[]);
    assert_eq!(round_trip(&empty, Direction::Down), (52, 96, 17, 3));
    assert_eq!(round_trip(&empty, Direction::Up), (52, 32, 16, 2));

    // A RST up (rejecting a notification): 16 bits → 2 bytes.
    let rst = msg(MessageType::Rst, Code::EMPTY, 10, &[]);
    assert_eq!(round_trip(&rst, Direction::Up), (52, 32, 16, 2));

    // pCoCoA's TC marking on the GET: + 4-bit size + 8-bit value = 36 bits →
    // 5 bytes (59 + 4 before). The marking rules follow the 13 unmarked ones.
    let mut marked = get_sense(7, &[0xAA]);
    marked.options.push((option::TC, vec![2]));
    assert_eq!(round_trip(&marked, Direction::Up), (63, 32 + 13 + 1, 36, 5));
}

#[test]
fn non_notification_with_observe() {
    // 2 + 4 + 3 + 8 + token 16 + Observe (size 4 + 8) = 45 bits, then 10
    // payload bytes: 125 bits → 16 bytes.
    let mut n = msg(MessageType::Non, Code::CONTENT, 0x0033, &[1, 2]);
    n.options.push((option::OBSERVE, vec![5]));
    n.payload = b"21.5 degC.".to_vec();
    let (len, rule, bits, schc) = round_trip(&n, Direction::Down);
    assert_eq!(
        (len, rule, bits, schc),
        (40 + 8 + 4 + 2 + 2 + 1 + 10, 98, 45, 16)
    );
    // A CON notification with Observe 0 (an empty value), Content-Format
    // cbor and Max-Age: Observe and Max-Age sizes, CF's 3-bit index.
    let mut c = msg(MessageType::Con, Code::CONTENT, 0x0034, &[1, 2]);
    c.options.push((option::OBSERVE, vec![]));
    c.options.push((option::CONTENT_FORMAT, vec![60]));
    c.options.push((option::MAX_AGE, vec![30]));
    c.payload = vec![0xA1, 0x01, 0x02];
    let (_, rule, bits, _) = round_trip(&c, Direction::Down);
    assert_eq!((rule, bits), (100, 33 + 4 + 3 + 12));
    // The device's registration: GET /sense with Observe 0.
    let mut reg = get_sense(0x0035, &[1, 2]);
    reg.options.insert(0, (option::OBSERVE, vec![]));
    assert_eq!(round_trip(&reg, Direction::Up).2, 32 + 4);
}

#[test]
fn block_wise_requests_and_responses() {
    // GET /sense with Block2 2/0/64 (0x22), and its response with
    // Content-Format, Block2 2/1/64 and Size2.
    let mut req = get_sense(0x0050, &[9]);
    req.options.push((option::BLOCK2, vec![0x22]));
    assert_eq!(round_trip(&req, Direction::Up).2, 24 + 12);
    let mut resp = msg(MessageType::Ack, Code::CONTENT, 0x0050, &[9]);
    resp.options.push((option::CONTENT_FORMAT, vec![42]));
    resp.options.push((option::BLOCK2, vec![0x2A]));
    resp.options.push((option::SIZE2, vec![0x01, 0x00]));
    resp.payload = vec![7; 64];
    let (_, rule, bits, _) = round_trip(&resp, Direction::Down);
    assert_eq!((rule, bits), (103, 25 + 3 + 12 + 20));
    // A PUT of block 0 (Block1 0/1/16 = 0x08) to an arbitrary path, and its
    // 2.31 Continue.
    let mut put = msg(MessageType::Con, Code::PUT, 0x0051, &[9]);
    put.options.push((option::URI_PATH, b"store".to_vec()));
    put.options.push((option::BLOCK1, vec![0x08]));
    put.payload = vec![1; 16];
    let (_, rule, bits, _) = round_trip(&put, Direction::Up);
    assert_eq!((rule, bits), (UP_FIRST + 11, 24 + 4 + 40 + 12));
    let mut cont = msg(MessageType::Ack, Code::CONTINUE, 0x0051, &[9]);
    cont.options.push((option::BLOCK1, vec![0x08]));
    assert_eq!(round_trip(&cont, Direction::Down).1, 104);
}

#[test]
fn post_with_content_format() {
    let mut post = msg(MessageType::Con, Code::POST, 0x0060, &[3]);
    post.options.push((option::URI_PATH, SENSE.to_vec()));
    post.options.push((option::CONTENT_FORMAT, vec![])); // text/plain
    post.payload = b"on".to_vec();
    let (_, rule, bits, schc) = round_trip(&post, Direction::Up);
    assert_eq!((rule, bits, schc), (UP_FIRST + 3, 27, 6));
    // A Content-Format outside the mapping list has no rule.
    post.options[1].1 = vec![0x2F];
    assert_eq!(round_trip(&post, Direction::Up).1, NO_COMPRESSION);
}

#[test]
fn message_ids_across_the_lsb_boundary_within_the_msb() {
    let profile = Profile {
        mid_msb: 0x12,
        ..Profile::default()
    };
    for mid in [0x1200, 0x12FE, 0x12FF] {
        let (_, rule, bits, _) = round_trip_with(&profile, &get_sense(mid, &[1]), Direction::Up);
        assert_eq!((rule, bits), (UP_FIRST + 1, 24), "{mid:#06x}");
    }
    // The next MID leaves the MSB: the packet goes uncompressed, intact.
    for mid in [0x1300, 0x11FF, 0x0012] {
        let (len, rule, bits, schc) =
            round_trip_with(&profile, &get_sense(mid, &[1]), Direction::Up);
        assert_eq!((rule, bits, schc), (NO_COMPRESSION, 0, len), "{mid:#06x}");
    }
}

#[test]
fn packets_no_rule_matches_go_whole() {
    let ctx = Context::default();
    let rules = coapcc_rules(&Profile::default());
    let other_port = Profile {
        app_port: 5684,
        ..Profile::default()
    };
    let other_server = Profile {
        app_iid: [0, 0, 0, 0, 0, 0, 0, 2],
        ..Profile::default()
    };
    for profile in [other_port, other_server] {
        let packet = build(&get_sense(1, &[1]), &profile, &ctx, Direction::Up).unwrap();
        let c = compress(&rules, &packet, Direction::Up, &ctx);
        assert_eq!((c.rule_id, c.len()), (NO_COMPRESSION, packet.len()));
        let back = decompress(&rules, c.rule_id, &c.to_bytes(), Direction::Up, &ctx);
        assert_eq!(back.unwrap(), packet);
    }
    // A device whose IID is not the context's: no rule either.
    let stranger = Context {
        dev_iid: [9; 8],
        ..ctx
    };
    let packet = build(
        &get_sense(1, &[1]),
        &Profile::default(),
        &stranger,
        Direction::Up,
    );
    let packet = packet.unwrap();
    assert_eq!(
        compress(&rules, &packet, Direction::Up, &ctx).rule_id,
        NO_COMPRESSION
    );
    // DELETE, a 2-segment path and an ETag are outside the shapes.
    let mut del = get_sense(1, &[1]);
    del.code = Code::DELETE;
    let mut deep = get_sense(1, &[1]);
    deep.options.push((option::URI_PATH, b"x".to_vec()));
    let mut etag = msg(MessageType::Ack, Code::CONTENT, 1, &[1]);
    etag.options.push((option::ETAG, vec![1, 2]));
    assert_eq!(round_trip(&del, Direction::Up).1, NO_COMPRESSION);
    assert_eq!(round_trip(&deep, Direction::Up).1, NO_COMPRESSION);
    assert_eq!(round_trip(&etag, Direction::Down).1, NO_COMPRESSION);
}

#[test]
fn damaged_or_foreign_packets_go_whole() {
    let (profile, ctx) = (Profile::default(), Context::default());
    let rules = coapcc_rules(&profile);
    let good = build(&get_sense(1, &[1]), &profile, &ctx, Direction::Up).unwrap();
    let mut bad_sum = good.clone();
    bad_sum[IPV6_HEADER + 6] ^= 1;
    let mut bad_len = good.clone();
    bad_len.push(0);
    let mut tcp = good.clone();
    tcp[6] = 6;
    for packet in [
        bad_sum,
        bad_len,
        tcp,
        vec![],
        vec![0x60; 47],
        b"not IPv6".to_vec(),
    ] {
        let c = compress(&rules, &packet, Direction::Up, &ctx);
        assert_eq!((c.rule_id, c.payload), (NO_COMPRESSION, &packet[..]));
        let back = decompress(&rules, c.rule_id, &c.to_bytes(), Direction::Up, &ctx);
        assert_eq!(back.unwrap(), packet);
    }
}

#[test]
fn downlink_hop_limit_is_restored_as_one() {
    // RFC 8724 §10.6: whatever the hop limit on arrival, the device gets 1.
    let (profile, ctx) = (Profile::default(), Context::default());
    let rules = coapcc_rules(&profile);
    let ack = msg(MessageType::Ack, Code::EMPTY, 3, &[]);
    let mut packet = build(&ack, &profile, &ctx, Direction::Down).unwrap();
    assert_eq!(packet[7], HOP_LIMIT_DOWN);
    packet[7] = 57;
    let c = compress(&rules, &packet, Direction::Down, &ctx);
    let back = decompress(&rules, c.rule_id, &c.to_bytes(), Direction::Down, &ctx).unwrap();
    packet[7] = HOP_LIMIT_DOWN;
    assert_eq!(back, packet);
}

#[test]
fn malformed_input_is_refused() {
    let (profile, ctx) = (Profile::default(), Context::default());
    let rules = coapcc_rules(&profile);
    let up = Direction::Up;
    assert_eq!(
        decompress(&rules, 200, &[1, 2, 3], up, &ctx),
        Err(DecompressError::UnknownRule(200))
    );
    // Rule 33's residue cut short: no bytes, or a token cut.
    assert_eq!(
        decompress(&rules, 33, &[], up, &ctx),
        Err(DecompressError::Truncated(Fid::CoapType))
    );
    let packet = build(&get_sense(5, &[1; 8]), &profile, &ctx, up).unwrap();
    let wire = compress(&rules, &packet, up, &ctx).to_bytes();
    assert_eq!(
        decompress(&rules, 33, &wire[..wire.len() - 1], up, &ctx),
        Err(DecompressError::Truncated(Fid::CoapToken))
    );
    // TKL 15: the token is read, the message cannot be written.
    assert_eq!(
        decompress(&rules, 33, &[0b0011_1101, 0, 0, 0], up, &ctx),
        Err(DecompressError::Truncated(Fid::CoapToken))
    );
    let mut tkl15 = vec![0b0011_1101, 0b0000_0000];
    tkl15.extend([0u8; 15]);
    assert!(matches!(
        decompress(&rules, 33, &tkl15, up, &ctx),
        Err(DecompressError::BadMessage(_))
    ));
    // A down code index past the 8-entry list cannot happen (3 bits); an
    // Empty message with a payload can.
    let empty_with_payload = [0b1000_0000, 0, 0, 0xFF];
    assert!(matches!(
        decompress(&rules, 96, &empty_with_payload, Direction::Down, &ctx),
        Err(DecompressError::BadMessage(_))
    ));
}

#[test]
fn too_large_is_refused_clearly() {
    assert_eq!(fits(51, 51), Ok(()));
    let e = fits(60, 51).unwrap_err();
    assert_eq!(
        e,
        TooLarge {
            size: 60,
            max_payload: 51
        }
    );
    let text = e.to_string();
    assert!(text.contains("60 bytes") && text.contains("51"), "{text}");
}

#[test]
fn rule_ids_are_distinct_and_valid_fports() {
    let rules = coapcc_rules(&Profile::default());
    let mut ids: Vec<u8> = rules.rules.iter().map(|r| r.id).collect();
    ids.push(rules.no_compression);
    let n = ids.len();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), n);
    assert!(ids
        .iter()
        .all(|id| (1..=223).contains(id) && !matches!(id, 20 | 21)));
    assert_eq!(n, 39 + 27 + 1);
}

/// A message of one of the shapes coapcc sends, going up (a request or an
/// Empty ACK/RST) or down (a response or notification).
fn coapcc_message() -> impl Strategy<Value = (Message, Direction)> {
    let token = prop::collection::vec(any::<u8>(), 0..=8);
    let payload = prop::collection::vec(any::<u8>(), 0..80);
    let uint = |max: u32| (0..=max).prop_map(crate::message::encode_uint);
    let uint = move |max| uint(max).prop_map(|(b, n)| b[4 - n..].to_vec());
    let opt = move |n: u16, max: u32| prop::option::of(uint(max).prop_map(move |v| (n, v)));
    let path = prop_oneof![
        Just(SENSE.to_vec()),
        prop::collection::vec(any::<u8>(), 0..20)
    ];
    (
        any::<bool>(),
        (0..4u8, 0..8usize, any::<u8>()),
        token,
        payload,
        path,
        (
            opt(option::OBSERVE, 0xFF_FFFF),
            opt(option::BLOCK2, 0xFF_FFFF),
            opt(option::TC, 255),
            prop::sample::select(CONTENT_FORMATS.to_vec()),
        ),
    )
        .prop_map(
            |(up, (t, code, mid), token, payload, path, (obs, b2, tc, cf))| {
                let mtype = MessageType::from_bits(t);
                let code = if up {
                    UP_CODES[code % 4]
                } else {
                    DOWN_CODES[code]
                };
                let mut m = msg(mtype, code, u16::from(mid), &token);
                if code.is_empty() {
                    m.token.clear();
                    return (m, if up { Direction::Up } else { Direction::Down });
                }
                m.options.extend(obs);
                if up {
                    m.options.push((option::URI_PATH, path));
                } else {
                    let (b, n) = crate::message::encode_uint(cf);
                    m.options
                        .push((option::CONTENT_FORMAT, b[4 - n..].to_vec()));
                }
                m.options.extend(b2);
                m.options.extend(tc);
                m.payload = payload;
                (m, if up { Direction::Up } else { Direction::Down })
            },
        )
}

proptest! {
    #[test]
    fn coapcc_messages_round_trip((m, dir) in coapcc_message()) {
        round_trip(&m, dir);
    }

    #[test]
    fn arbitrary_bytes_never_panic(rule in any::<u8>(), bytes in prop::collection::vec(any::<u8>(), 0..64), up in any::<bool>()) {
        let rules = coapcc_rules(&Profile::default());
        let dir = if up { Direction::Up } else { Direction::Down };
        let ctx = Context::default();
        if let Ok(packet) = decompress(&rules, rule, &bytes, dir, &ctx) {
            // Whatever decompresses is a packet that compresses back to it.
            let c = compress(&rules, &packet, dir, &ctx);
            let again = decompress(&rules, c.rule_id, &c.to_bytes(), dir, &ctx);
            prop_assert_eq!(again.unwrap(), packet);
        }
    }
}
