//! The server: piggybacked and NON responses, deduplication with the copy's
//! (or the cached) token and the current copy's echo, rejection rules,
//! bounded cache, floods.

use coapcc_proto::message::{option, Code, Message, MessageType, MessageView};
use coapcc_proto::server::{FixedPayload, Handler, Response, Server, ServerConfig, ServerOutput};
use proptest::prelude::*;

const SEC: u64 = 1_000_000_000;

fn server() -> Server<u32, FixedPayload> {
    Server::new(ServerConfig::default(), FixedPayload { size: 60 })
}

fn request(mtype: MessageType, mid: u16, token: &[u8], extra: &[(u16, Vec<u8>)]) -> Vec<u8> {
    let mut m = Message::new(mtype, Code::GET, mid);
    m.token = token.to_vec();
    m.options.push((option::URI_PATH, b"sense".to_vec()));
    m.options.extend_from_slice(extra);
    m.encode().unwrap()
}

/// Sends `data` and decodes the reply, if any: (reply, duplicate flag).
fn ask<H: Handler>(
    s: &mut Server<u32, H>,
    now: u64,
    peer: u32,
    data: &[u8],
) -> Option<(Message, bool)> {
    let mut out = [0u8; 1152];
    match s.handle_datagram(now, peer, data, &mut out) {
        ServerOutput::Nothing => None,
        ServerOutput::Reply { len, duplicate } => {
            Some((Message::decode(&out[..len]).unwrap(), duplicate))
        }
    }
}

#[test]
fn default_lifetime_is_rederived_for_max_retransmit_20() {
    // 3+6+12+24+48 + 15×60 = 993; + 2×100 + 2 = 1195 s.
    assert_eq!(ServerConfig::default().exchange_lifetime, 1195 * SEC);
    assert!(ServerConfig::default().echo_options);
}

#[test]
fn testbed_exchange_is_byte_exact() {
    let mut s = server();
    let req = request(MessageType::Con, 0x1234, &[], &[]);
    assert_eq!(req.len(), 10);
    let mut out = [0u8; 300];
    let ServerOutput::Reply { len, duplicate } = s.handle_datagram(0, 1, &req, &mut out) else {
        panic!("no reply");
    };
    assert_eq!((len, duplicate), (65, false));
    assert_eq!(&out[..5], &[0x60, 0x45, 0x12, 0x34, 0xFF]);
    assert!(out[5..65].iter().all(|&b| b == b'x'));
    assert_eq!(s.stats().requests, 1);
    assert_eq!(s.cached(), 1);
}

#[test]
fn piggybacked_response_carries_mid_and_token() {
    let mut s = server();
    let (r, dup) = ask(
        &mut s,
        0,
        1,
        &request(MessageType::Con, 77, &[1, 2, 3], &[]),
    )
    .unwrap();
    assert!(!dup);
    assert_eq!(
        (r.mtype, r.code, r.mid),
        (MessageType::Ack, Code::CONTENT, 77)
    );
    assert_eq!(r.token, vec![1, 2, 3]);
    assert_eq!(r.payload.len(), 60);
}

#[test]
fn non_request_gets_a_non_response_with_our_own_mid() {
    let mut s = server();
    s.set_next_mid(500);
    let (r, _) = ask(&mut s, 0, 1, &request(MessageType::Non, 77, &[9], &[])).unwrap();
    assert_eq!(
        (r.mtype, r.mid, r.token.as_slice()),
        (MessageType::Non, 500, &[9][..])
    );
    let (r, dup) = ask(&mut s, 0, 1, &request(MessageType::Non, 77, &[9], &[])).unwrap();
    assert_eq!(r.mid, 501);
    assert!(!dup, "NON requests are not deduplicated");
    assert_eq!(s.stats().requests, 2);
    assert_eq!(s.cached(), 0);
}

#[test]
fn duplicate_is_answered_from_the_cache_with_its_own_token_and_current_echo() {
    let mut s = server();
    let first = request(MessageType::Con, 5, &[0], &[(option::TC, vec![1])]);
    let (r1, dup1) = ask(&mut s, 0, 1, &first).unwrap();
    assert!(!dup1);
    assert_eq!(r1.option(option::TC), Some(&[1][..]));
    // The retransmission carries a new ordinal token (FASOR+Token) and TC 2.
    let second = request(MessageType::Con, 5, &[1], &[(option::TC, vec![2])]);
    let (r2, dup2) = ask(&mut s, 3 * SEC, 1, &second).unwrap();
    assert!(dup2);
    assert_eq!(r2.mid, 5);
    assert_eq!(r2.token, vec![1], "the copy's token");
    assert_eq!(r2.option(option::TC), Some(&[2][..]), "the copy's TC");
    assert_eq!(r2.payload, r1.payload);
    assert_eq!(s.stats().requests, 1);
    assert_eq!(s.stats().duplicates, 1);
    // The same MID from another peer is a different exchange.
    let (_, dup3) = ask(&mut s, 3 * SEC, 2, &second).unwrap();
    assert!(!dup3);
}

#[test]
fn cached_token_server_answers_every_copy_with_the_first_token() {
    let mut s = Server::new(
        ServerConfig {
            cached_token: true,
            ..ServerConfig::default()
        },
        FixedPayload { size: 60 },
    );
    let first = request(MessageType::Con, 5, &[0], &[]);
    let (r1, _) = ask(&mut s, 0, 1, &first).unwrap();
    let second = request(MessageType::Con, 5, &[1], &[]);
    let (r2, dup) = ask(&mut s, 3 * SEC, 1, &second).unwrap();
    assert!(dup);
    assert_eq!((r1.token.clone(), r2.token), (vec![0], vec![0]));
    assert_eq!(r2.payload, r1.payload);
    assert_eq!(s.stats().requests, 1);
}

#[test]
fn duplicate_reply_bytes_equal_the_original_when_nothing_changes() {
    let mut s = server();
    let req = request(MessageType::Con, 9, &[], &[]);
    let mut a = [0u8; 300];
    let mut b = [0u8; 300];
    let ServerOutput::Reply { len: la, .. } = s.handle_datagram(0, 1, &req, &mut a) else {
        panic!()
    };
    let ServerOutput::Reply { len: lb, duplicate } = s.handle_datagram(SEC, 1, &req, &mut b) else {
        panic!()
    };
    assert!(duplicate);
    assert_eq!(a[..la], b[..lb]);
}

#[test]
fn rexmit_cnt_is_echoed_only_in_piggybacked_responses() {
    let mut s = server();
    let probe = request(MessageType::Con, 1, &[], &[(option::REXMIT_CNT, vec![255])]);
    let (r, _) = ask(&mut s, 0, 1, &probe).unwrap();
    assert_eq!(r.option(option::REXMIT_CNT), Some(&[255][..]));
    // Empty value (ordinal 0) is echoed as an empty value.
    let orig = request(MessageType::Con, 2, &[], &[(option::REXMIT_CNT, vec![])]);
    let (r, _) = ask(&mut s, 0, 1, &orig).unwrap();
    assert_eq!(r.option(option::REXMIT_CNT), Some(&[][..]));
    // The duplicate echoes the copy's ordinal.
    let rexmit = request(MessageType::Con, 2, &[], &[(option::REXMIT_CNT, vec![1])]);
    let (r, dup) = ask(&mut s, SEC, 1, &rexmit).unwrap();
    assert!(dup);
    assert_eq!(r.option(option::REXMIT_CNT), Some(&[1][..]));
    // Not in a NON response.
    let non = request(MessageType::Non, 3, &[], &[(option::REXMIT_CNT, vec![1])]);
    let (r, _) = ask(&mut s, 0, 1, &non).unwrap();
    assert_eq!(r.option(option::REXMIT_CNT), None);
}

#[test]
fn tc_is_echoed_in_non_responses_and_both_options_together() {
    let mut s = server();
    let non = request(MessageType::Non, 3, &[], &[(option::TC, vec![4])]);
    let (r, _) = ask(&mut s, 0, 1, &non).unwrap();
    assert_eq!(r.option(option::TC), Some(&[4][..]));
    let both = request(
        MessageType::Con,
        4,
        &[],
        &[(option::TC, vec![2]), (option::REXMIT_CNT, vec![1])],
    );
    let (r, _) = ask(&mut s, 0, 1, &both).unwrap();
    assert_eq!(
        r.options,
        vec![(option::REXMIT_CNT, vec![1]), (option::TC, vec![2])],
        "ascending order on the wire"
    );
}

#[test]
fn no_echo_when_disabled() {
    let config = ServerConfig {
        echo_options: false,
        ..ServerConfig::default()
    };
    let mut s = Server::new(config, FixedPayload { size: 60 });
    let req = request(
        MessageType::Con,
        1,
        &[],
        &[(option::TC, vec![1]), (option::REXMIT_CNT, vec![])],
    );
    let (r, _) = ask(&mut s, 0, 1, &req).unwrap();
    assert!(r.options.is_empty());
    let (r, dup) = ask(&mut s, 0, 1, &req).unwrap();
    assert!(dup && r.options.is_empty());
}

#[test]
fn entries_expire_after_the_exchange_lifetime() {
    let config = ServerConfig {
        exchange_lifetime: 10 * SEC,
        ..ServerConfig::default()
    };
    let mut s = Server::new(config, FixedPayload { size: 60 });
    let req = request(MessageType::Con, 1, &[], &[]);
    assert!(!ask(&mut s, 0, 1, &req).unwrap().1);
    assert!(ask(&mut s, 10 * SEC - 1, 1, &req).unwrap().1);
    assert!(
        !ask(&mut s, 10 * SEC, 1, &req).unwrap().1,
        "a new exchange after the lifetime"
    );
    assert_eq!(s.stats().requests, 2);
    // Sweeping is lazy but bounded: one entry left.
    assert_eq!(s.cached(), 1);
}

#[test]
fn cache_is_bounded_and_forgets_the_oldest() {
    let config = ServerConfig {
        max_cache_entries: 4,
        ..ServerConfig::default()
    };
    let mut s = Server::new(config, FixedPayload { size: 60 });
    for mid in 0..6u16 {
        ask(
            &mut s,
            u64::from(mid),
            1,
            &request(MessageType::Con, mid, &[], &[]),
        )
        .unwrap();
    }
    assert_eq!(s.cached(), 4);
    assert_eq!(s.stats().evicted, 2);
    // 0 and 1 were forgotten, 2..6 are remembered.
    assert!(
        ask(&mut s, 10, 1, &request(MessageType::Con, 5, &[], &[]))
            .unwrap()
            .1
    );
    assert!(
        ask(&mut s, 10, 1, &request(MessageType::Con, 2, &[], &[]))
            .unwrap()
            .1
    );
    assert!(
        !ask(&mut s, 10, 1, &request(MessageType::Con, 0, &[], &[]))
            .unwrap()
            .1
    );
}

#[test]
fn malformed_confirmable_gets_rst_others_are_ignored() {
    let mut s = server();
    // TKL 9 in a CON: a format error with a readable header → RST, same MID.
    let (r, _) = ask(
        &mut s,
        0,
        1,
        &[0x49, 0x01, 0xAB, 0xCD, 0, 0, 0, 0, 0, 0, 0, 0, 0],
    )
    .unwrap();
    assert_eq!(
        (r.mtype, r.code, r.mid),
        (MessageType::Rst, Code::EMPTY, 0xABCD)
    );
    // Payload marker without payload in a CON → RST.
    assert_eq!(
        ask(&mut s, 0, 1, &[0x40, 0x01, 0x00, 0x02, 0xFF])
            .unwrap()
            .0
            .mid,
        2
    );
    // Reserved class in a CON → RST.
    assert_eq!(
        ask(&mut s, 0, 1, &[0x40, 0xE1, 0x00, 0x03])
            .unwrap()
            .0
            .mtype,
        MessageType::Rst
    );
    // The same errors in a NON: silence.
    assert!(ask(&mut s, 0, 1, &[0x59, 0x01, 0xAB, 0xCD]).is_none());
    // Version 2, too short: silence.
    assert!(ask(&mut s, 0, 1, &[0x80, 0x01, 0xAB, 0xCD, 0xFF]).is_none());
    assert!(ask(&mut s, 0, 1, &[0x40, 0x01]).is_none());
    assert_eq!(s.stats().malformed, 6);
    assert_eq!(s.stats().rejected, 0, "counted as malformed only");
    assert_eq!(s.stats().requests, 0);
}

#[test]
fn ping_and_unexpected_messages() {
    let mut s = server();
    // CoAP ping: Empty CON → RST.
    let (r, _) = ask(&mut s, 0, 1, &[0x40, 0x00, 0x12, 0x34]).unwrap();
    assert_eq!((r.mtype, r.mid), (MessageType::Rst, 0x1234));
    // A Confirmable response to a server → RST.
    let mut m = Message::new(MessageType::Con, Code::CONTENT, 8);
    m.payload = b"x".to_vec();
    assert_eq!(
        ask(&mut s, 0, 1, &m.encode().unwrap()).unwrap().0.mtype,
        MessageType::Rst
    );
    // ACK, RST, NON response: ignored.
    assert!(ask(&mut s, 0, 1, &[0x60, 0x00, 0x12, 0x34]).is_none());
    assert!(ask(&mut s, 0, 1, &[0x70, 0x00, 0x12, 0x34]).is_none());
    m.mtype = MessageType::Non;
    assert!(ask(&mut s, 0, 1, &m.encode().unwrap()).is_none());
    assert_eq!(s.stats().ignored, 3);
    assert_eq!(s.stats().rejected, 2);
}

#[test]
fn unrecognised_critical_option() {
    let mut s = server();
    // Option 9 (critical, unknown): 4.02 in a CON, cached like any response.
    let req = request(MessageType::Con, 1, &[], &[(9, vec![1])]);
    let (r, _) = ask(&mut s, 0, 1, &req).unwrap();
    assert_eq!((r.mtype, r.code), (MessageType::Ack, Code::BAD_OPTION));
    assert!(r.payload.is_empty());
    let (r, dup) = ask(&mut s, 0, 1, &req).unwrap();
    assert!(dup && r.code == Code::BAD_OPTION);
    // In a NON: RST.
    let (r, _) = ask(
        &mut s,
        0,
        1,
        &request(MessageType::Non, 2, &[], &[(9, vec![1])]),
    )
    .unwrap();
    assert_eq!(r.mtype, MessageType::Rst);
    // Elective unknown options are ignored.
    let (r, _) = ask(
        &mut s,
        0,
        1,
        &request(MessageType::Con, 3, &[], &[(10, vec![1])]),
    )
    .unwrap();
    assert_eq!(r.code, Code::CONTENT);
    assert_eq!(s.stats().bad_option, 1);
}

#[test]
fn fixed_payload_refuses_other_methods() {
    let mut s = server();
    let mut m = Message::new(MessageType::Con, Code::POST, 1);
    m.payload = b"data".to_vec();
    let (r, _) = ask(&mut s, 0, 1, &m.encode().unwrap()).unwrap();
    assert_eq!(r.code, Code::METHOD_NOT_ALLOWED);
    assert!(r.payload.is_empty());
}

struct Echoer;
impl Handler for Echoer {
    fn handle(&mut self, request: &MessageView<'_>, response: &mut Response) {
        response.code = Code::CHANGED;
        response.options.push((option::CONTENT_FORMAT, vec![0]));
        // A handler's own TC is dropped: only the server echoes it.
        response.options.push((option::TC, vec![99]));
        response.options.push((option::MAX_AGE, vec![]));
        response.payload.extend_from_slice(request.payload);
    }
}

#[test]
fn custom_handler_options_are_sorted_and_echo_merged() {
    let mut s = Server::new(ServerConfig::default(), Echoer);
    let mut m = Message::new(MessageType::Con, Code::POST, 1);
    m.options.push((option::TC, vec![3]));
    m.payload = b"abc".to_vec();
    let (r, _) = ask(&mut s, 0, 1, &m.encode().unwrap()).unwrap();
    assert_eq!(r.code, Code::CHANGED);
    assert_eq!(
        r.options,
        vec![
            (option::CONTENT_FORMAT, vec![0]),
            (option::MAX_AGE, vec![]),
            (option::TC, vec![3])
        ]
    );
    assert_eq!(r.payload, b"abc");
}

#[test]
fn response_too_large_for_the_buffer_becomes_5_00() {
    let mut s = Server::new(ServerConfig::default(), FixedPayload { size: 500 });
    let mut out = [0u8; 100];
    let ServerOutput::Reply { len, .. } =
        s.handle_datagram(0, 1, &request(MessageType::Con, 1, &[7], &[]), &mut out)
    else {
        panic!()
    };
    let r = Message::decode(&out[..len]).unwrap();
    assert_eq!(
        (r.code, r.mid, r.token.as_slice()),
        (Code::INTERNAL_SERVER_ERROR, 1, &[7][..])
    );
    assert_eq!(s.stats().too_large, 1);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// A flood of garbage and near-valid datagrams from many peers: no panic,
    /// every reply is valid CoAP that fits, the cache stays within its bound.
    #[test]
    fn garbage_flood(datagrams in proptest::collection::vec(
        (0u32..50, 0u64..2 * SEC, prop_oneof![
            proptest::collection::vec(any::<u8>(), 0..40),
            (0u8..4, any::<u16>(), proptest::collection::vec(any::<u8>(), 0..30))
                .prop_map(|(t, mid, tail)| {
                    let mut b = vec![0x40 | (t << 4), 0x01, (mid >> 8) as u8, mid as u8];
                    b.extend_from_slice(&tail);
                    b
                }),
        ]),
        1..200,
    )) {
        let config = ServerConfig { max_cache_entries: 16, exchange_lifetime: 5 * SEC, ..ServerConfig::default() };
        let mut s = Server::new(config, FixedPayload { size: 60 });
        let mut now = 0;
        let mut out = [0u8; 128];
        for (peer, dt, data) in &datagrams {
            now += dt;
            if let ServerOutput::Reply { len, .. } = s.handle_datagram(now, *peer, data, &mut out) {
                prop_assert!(len <= out.len());
                let reply = MessageView::decode(&out[..len]);
                prop_assert!(reply.is_ok(), "invalid reply {:02x?} to {:02x?}", &out[..len], data);
            }
            prop_assert!(s.cached() <= 16);
        }
        let st = s.stats();
        prop_assert_eq!(
            st.requests + st.duplicates + st.malformed + st.ignored + st.rejected + st.bad_option,
            datagrams.len() as u64,
            "every datagram counts once: {:?}", st
        );
    }
}
