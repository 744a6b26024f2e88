//! `cargo run --manifest-path fuzz/seeds/Cargo.toml -- fuzz/corpus` writes
//! the binary seeds: real datagrams of a client and server exchange
//! (`coap_message/`) and real CoAP-over-TCP streams (`tcp_frame/`). The
//! scenario seeds are the repository's scenario and campaign files, copied
//! by `fuzz/seeds/copy-scenarios.sh`.

use std::path::Path;

use coapcc_proto::client::{Client, ClientConfig, Request};
use coapcc_proto::message::{option, Code, Message, MessageType, MessageWriter};
use coapcc_proto::server::{FixedPayload, Server, ServerConfig, ServerOutput};
use coapcc_proto::tcp::{encode_frame, CoapTcpConnection, Csm, Role, TestbedHandler};
use coapcc_rto::{AlgorithmParams, Random};

struct Mix(u64);
impl Random for Mix {
    fn uniform(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn write(dir: &Path, name: &str, bytes: &[u8]) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join(name), bytes).unwrap();
}

/// Datagrams of client/server exchanges: requests (first sends and
/// retransmissions, with each algorithm's marking options), the server's
/// piggybacked responses, RSTs, pings.
fn udp(dir: &Path) {
    const SEC: u64 = 1_000_000_000;
    let mut n = 0;
    let mut save = |what: &str, b: &[u8]| {
        write(dir, &format!("{n:02}-{what}"), b);
        n += 1;
    };
    for (alg, path, payload, con) in [
        ("default", "/sense", &b""[..], true),
        ("cocoa", "/sense?limit=5&unit=c", &b""[..], true),
        ("pcocoa", "/a/b/c", &b"report 21.5"[..], true),
        ("fasor", "/sense", &[7u8; 40][..], false),
    ] {
        let info = coapcc_rto::registry::find(alg).expect(alg);
        let config = ClientConfig {
            max_retransmit: 2,
            ..ClientConfig::default()
        };
        let mut c: Client<u32, Mix> =
            Client::new(config, (info, AlgorithmParams::default()), Mix(7), 0x1234);
        let mut s: Server<u32, FixedPayload> =
            Server::new(ServerConfig::default(), FixedPayload { size: 60 });
        let req = Request {
            method: if payload.is_empty() {
                Code::GET
            } else {
                Code::POST
            },
            path,
            payload,
            confirmable: con,
        };
        c.request(0, 1, &req).unwrap();
        let mut buf = [0u8; 1152];
        let mut sent = Vec::new();
        while let Some(t) = c.poll_transmit(&mut buf) {
            sent.push(buf[..t.len].to_vec());
        }
        // A retransmission (marking options count it).
        c.handle_timeout(70 * SEC);
        while let Some(t) = c.poll_transmit(&mut buf) {
            sent.push(buf[..t.len].to_vec());
        }
        for (i, d) in sent.iter().enumerate() {
            save(&format!("{alg}-request-{i}"), d);
            let mut out = [0u8; 1152];
            if let ServerOutput::Reply { len, .. } = s.handle_datagram(SEC, 1, d, &mut out) {
                save(&format!("{alg}-response-{i}"), &out[..len]);
            }
        }
    }
    // A ping (Empty CON), the server's RST, and the RST for a malformed CON.
    let ping = Message::new(MessageType::Con, Code::EMPTY, 7)
        .encode()
        .unwrap();
    save("ping", &ping);
    let mut s: Server<u32, FixedPayload> =
        Server::new(ServerConfig::default(), FixedPayload { size: 60 });
    let mut out = [0u8; 1152];
    if let ServerOutput::Reply { len, .. } = s.handle_datagram(0, 1, &ping, &mut out) {
        save("ping-rst", &out[..len]);
    }
    if let ServerOutput::Reply { len, .. } =
        s.handle_datagram(0, 1, &[0x40, 0x01, 0, 9, 0xFF], &mut out)
    {
        save("malformed-rst", &out[..len]);
    }
    // Options at the extension boundaries (delta/length 12, 13, 268, 269),
    // Echo, Block2/Block1/Size2, the marking options, a full token.
    let long = [b'v'; 300];
    let mut buf = [0u8; 1152];
    let mut w = MessageWriter::new(&mut buf, MessageType::Con, Code::PUT, 0xBEEF, &[1; 8]).unwrap();
    w.option(option::IF_MATCH, &[]).unwrap();
    w.option(option::URI_HOST, b"node-1").unwrap();
    w.uint_option(option::URI_PORT, 5683).unwrap();
    w.option(option::URI_PATH, &long[..12]).unwrap();
    w.option(option::URI_PATH, &long[..13]).unwrap();
    w.uint_option(option::CONTENT_FORMAT, 50).unwrap();
    w.uint_option(option::BLOCK2, 0x16).unwrap();
    w.uint_option(option::BLOCK1, 0x0E).unwrap();
    w.uint_option(option::SIZE2, 70_000).unwrap();
    w.option(option::PROXY_URI, &long[..268]).unwrap();
    w.option(option::ECHO, &[0xEC; option::ECHO_MAX_LEN])
        .unwrap();
    w.uint_option(option::REXMIT_CNT, 3).unwrap();
    w.uint_option(option::TC, 1).unwrap();
    w.payload(b"{\"t\":21.5}").unwrap();
    let len = w.len();
    save("options-boundaries", &buf[..len]);
    let mut big = vec![0u8; 1024];
    let mut w = MessageWriter::new(&mut big, MessageType::Non, Code::CONTENT, 1, &[9]).unwrap();
    w.option(300, &long[..269]).unwrap();
    let len = w.len();
    save("option-delta-and-length-269", &big[..len]);
}

/// CoAP-over-TCP streams as `tcp_frame` reads them: a selector byte of 0
/// (no chunking seed) and the stream.
fn tcp(dir: &Path) {
    let mut n = 0;
    let mut save = |what: &str, stream: &[u8]| {
        let mut b = vec![0u8];
        b.extend_from_slice(stream);
        write(dir, &format!("{n:02}-{what}"), &b);
        n += 1;
    };
    // A whole exchange: the initiator's CSM and requests, the responder's
    // CSM and responses.
    let mut client = CoapTcpConnection::initiator();
    client
        .send_request(Code::GET, &[1], &[(option::URI_PATH, b"sense")], &[])
        .unwrap();
    client
        .send_request(Code::POST, &[2, 2], &[(option::URI_PATH, b"r")], b"data")
        .unwrap();
    client.ping(&[3]).unwrap();
    let up = client.output().to_vec();
    save("initiator-csm-requests-ping", &up);
    let mut server = CoapTcpConnection::responder();
    server.handle_bytes(&up, &mut TestbedHandler::default());
    let down = server.output().to_vec();
    save("responder-csm-responses-pong", &down);
    client.handle_bytes(&down, &mut TestbedHandler::default());
    client.release().unwrap();
    let rel = client.output()[up.len()..].to_vec();
    save("release", &rel);
    // A CSM with Max-Message-Size and Block-Wise-Transfer, then a request
    // too large for a small peer.
    let mut buf = [0u8; 2048];
    let csm = Csm {
        max_message_size: 64,
        block_wise: true,
    };
    let k = csm.encode(&mut buf).unwrap();
    let mut s = buf[..k].to_vec();
    let k = encode_frame(
        &mut buf,
        Code::GET,
        &[4; 8],
        &[(option::URI_PATH, b"x")],
        &[],
    )
    .unwrap();
    s.extend_from_slice(&buf[..k]);
    save("csm-small-max-then-request", &s);
    let mut small = CoapTcpConnection::new(Role::Responder, Csm::default());
    small.handle_bytes(&s, &mut TestbedHandler::default());
    save("responder-500-too-large", small.output());
    // Frame lengths at each extended-length form (0, 13, 269 bytes of body).
    for body in [12usize, 13, 268, 269, 1100] {
        let payload = vec![0x5A; body - 1];
        let k = encode_frame(&mut buf, Code::CONTENT, &[7], &[], &payload).unwrap();
        let mut s = CoapTcpConnection::initiator().output().to_vec();
        s.extend_from_slice(&buf[..k]);
        save(&format!("csm-then-body-{body}"), &s);
    }
    // The Abort a bad CSM draws.
    let k = encode_frame(
        &mut buf,
        coapcc_proto::tcp::signal::CSM,
        &[],
        &[(9, &[1])],
        &[],
    )
    .unwrap();
    let mut r = CoapTcpConnection::responder();
    r.handle_bytes(&buf[..k], &mut TestbedHandler::default());
    let mut s = buf[..k].to_vec();
    s.extend_from_slice(r.output());
    save("bad-csm-and-abort", &s);
}

fn main() {
    let root = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "fuzz/corpus".into());
    let root = Path::new(&root);
    udp(&root.join("coap_message"));
    tcp(&root.join("tcp_frame"));
}
