//! CoAP over TCP end to end: RFC 8323 connections from `coapcc-proto` over
//! two model sockets (docs/spec/transport-tcp-spec.md §1–2). Checks the behaviour the spec
//! names: the first request waits one RTT behind the CSM (Nagle), and the
//! real encoded sizes on the wire.

use crate::common;
use coapcc_proto::message::Code;
use coapcc_proto::tcp::{CoapTcpConnection, ConnEvent, RefuseRequests, TestbedHandler};
use coapcc_tcp::{TcpConfig, TcpSocket};
use common::*;

struct Apps {
    cl: CoapTcpConnection,
    sv: CoapTcpConnection,
    cl_read: usize,
    sv_read: usize,
    responses: Vec<(u64, usize)>,
}

fn write(sock: &mut TcpSocket, conn: &mut CoapTcpConnection) {
    let n = sock.send(conn.output());
    conn.consume_output(n);
}

impl Apps {
    /// Runs the applications after an event: feed new bytes, write replies.
    /// The server writes its CSM when it first reads (so that it carries
    /// the ACK of the client's CSM).
    fn run(&mut self, w: &mut Wire) {
        if w.server_rx.len() > self.sv_read {
            let new = w.server_rx[self.sv_read..].to_vec();
            self.sv_read = w.server_rx.len();
            self.sv
                .handle_bytes(&new, &mut TestbedHandler { payload_len: 60 });
            write(w.server(), &mut self.sv);
        }
        if w.client_rx.len() > self.cl_read {
            let new = w.client_rx[self.cl_read..].to_vec();
            self.cl_read = w.client_rx.len();
            self.cl.handle_bytes(&new, &mut RefuseRequests);
            while let Some(e) = self.cl.poll_event() {
                if let ConnEvent::Response { frame_len, .. } = e {
                    self.responses.push((w.now, frame_len));
                }
            }
        }
        w.flush();
    }
}

fn data(w: &Wire, dir: Dir) -> Vec<(u64, usize, usize)> {
    w.sent(dir)
        .filter(|s| !s.seg.payload.is_empty())
        .map(|s| (s.at / MS, s.seg.payload.len(), s.seg.wire_len()))
        .collect()
}

#[test]
fn first_request_waits_one_rtt_behind_the_csm() {
    let mut w = Wire::new(TcpConfig::linux(), 100 * MS);
    w.run_until(200 * MS);
    assert!(w.client.is_established());
    let mut apps = Apps {
        cl: CoapTcpConnection::initiator(),
        sv: CoapTcpConnection::responder(),
        cl_read: 0,
        sv_read: 0,
        responses: Vec::new(),
    };
    // The client writes its CSM, then its request (two writes).
    write(&mut w.client, &mut apps.cl);
    w.flush();
    apps.cl
        .send_request(Code(0x01), &[], &[(11, b"hello")], &[])
        .unwrap();
    write(&mut w.client, &mut apps.cl);
    w.flush();
    let mut sent = 1;
    while w.now < 3 * SEC && w.step() {
        apps.run(&mut w);
        // Continuous client: the next request as soon as a response arrives.
        if apps.responses.len() == sent && sent < 3 {
            sent += 1;
            apps.cl
                .send_request(Code(0x01), &[], &[(11, b"hello")], &[])
                .unwrap();
            write(&mut w.client, &mut apps.cl);
            w.flush();
        }
    }
    // CSM (2 B) at 0.2; the request (8 B → 48 B on the wire) held by Nagle
    // until the server's CSM brings the ACK at 0.4; then one per RTT.
    assert_eq!(
        data(&w, Dir::ToServer),
        vec![(200, 2, 42), (400, 8, 48), (600, 8, 48), (800, 8, 48)]
    );
    // Server CSM at 0.3 (carrying the ACK), responses of 64 B (104 B).
    assert_eq!(
        data(&w, Dir::ToClient),
        vec![(300, 2, 42), (500, 64, 104), (700, 64, 104), (900, 64, 104)]
    );
    assert_eq!(
        apps.responses,
        vec![(600 * MS, 64), (800 * MS, 64), (1000 * MS, 64)]
    );
}
