//! The CoAP server application: the real sans-IO server of `coapcc-proto`
//! ([`Server`]) on one node, answering the requests that reach it from the
//! [`PacketPool`] and putting its replies there; and [`Sink`], the handler
//! of a server that takes every request (the grid's).
//!
//! Its peers are the source addresses of the requests, numbered densely
//! (a deduplication record each, [`DenseIndex`]). The world sends the reply
//! and keeps its own counts (a duplicate's bytes, requests carried).

use coapcc_link::time::Nanos;
use coapcc_proto::message::{Code, MessageView};
use coapcc_proto::server::{DenseIndex, Handler, Response, Server, ServerConfig, ServerOutput};

use super::packets::{PacketPool, PacketRef};

/// A reply the server put in the pool.
#[derive(Clone, Copy, Debug)]
pub struct Reply {
    /// The packet (from the server to [`Self::to`]).
    pub packet: PacketRef,
    /// The request's source: where the reply goes.
    pub to: u32,
    /// Bytes of the reply's message.
    pub len: usize,
    /// Bytes of the request's message.
    pub request_len: usize,
    /// The request was a duplicate (answered from the cache).
    pub duplicate: bool,
}

/// A CoAP server at one address, with handler `H`.
pub struct CoapServer<H> {
    server: Server<u32, H, DenseIndex>,
    /// Its address: the source of its replies.
    addr: u32,
    /// Where a reply is encoded before it enters the pool.
    buf: Vec<u8>,
}

impl<H: Handler> CoapServer<H> {
    /// A server at `addr` answering with `handler` peers `0..peers`, with
    /// replies of at most `max_message` bytes.
    pub fn new(addr: u32, handler: H, peers: usize, max_message: usize) -> Self {
        CoapServer {
            server: Server::with_index(
                ServerConfig::default(),
                handler,
                DenseIndex::with_peers(peers),
            ),
            addr,
            buf: vec![0; max_message],
        }
    }

    /// The handler (e.g. to name the next request's source, or to take
    /// what a request completed).
    pub fn handler_mut(&mut self) -> &mut H {
        self.server.handler_mut()
    }

    /// Request `p` reached the server at `now`: it is read and released,
    /// and the reply, if any, is put in `packets`.
    #[inline]
    pub fn answer(&mut self, now: Nanos, packets: &mut PacketPool, p: PacketRef) -> Option<Reply> {
        let request = packets.get(p);
        let (src, request_len) = (request.src, request.data.len());
        let out = self
            .server
            .handle_datagram(now, src, request.data, &mut self.buf);
        packets.release(p);
        let ServerOutput::Reply { len, duplicate } = out else {
            return None;
        };
        let packet = packets.alloc(self.addr, src, &self.buf[..len]);
        Some(Reply {
            packet,
            to: src,
            len,
            request_len,
            duplicate,
        })
    }
}

/// Answers every POST or PUT with 2.04 Changed, every GET with 2.05 and
/// `payload` bytes (a sink, as the pCoCoA server).
pub struct Sink {
    /// Bytes of a 2.05 response's payload (and of every response's).
    pub payload: usize,
}

impl Handler for Sink {
    fn handle(&mut self, request: &MessageView<'_>, response: &mut Response) {
        response.code = if request.code == Code::GET {
            Code::CONTENT
        } else {
            Code::CHANGED
        };
        response.payload.resize(self.payload, b'x');
    }
}
