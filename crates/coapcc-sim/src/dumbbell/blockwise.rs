//! The dumbbell's block-wise world (`workload.kind = "blockwise"`,
//! RFC 7959): every client runs `exchanges` transfers back to back, each a
//! download (GET, Block2) or an upload (PUT, Block1) of `size` bytes in
//! blocks of `block_size`.
//!
//! - **Clients**: each block is one Confirmable exchange of the client's
//!   `coapcc-proto` [`Client`](coapcc_proto::client::Client), timed by its
//!   algorithm as any exchange, one at a time; the sans-IO machines
//!   [`Block2Download`] and [`Block1Upload`] say what each request carries
//!   (the block size asked for from the first request on: early
//!   negotiation) and take in each response.
//! - **Server**: the CoAP server ([`CoapServer`]) with a [`BlockResource`]:
//!   GET is answered with a block of the representation, PUT blocks are
//!   reassembled per client; its deduplication answers a repeated block from
//!   its cache.
//! - **Content**: the representation and every uploaded body are the
//!   deterministic [`pattern`]; the reassembled body is checked exactly at
//!   the end of each transfer (at the client for a download, at the server
//!   for an upload). A mismatch is a bug: it fails a debug assertion, and
//!   counts the transfer as failed.
//! - **End**: the run ends when every client has ended its transfers
//!   (completed or failed).
//!
//! Records: each block exchange counts as an exchange of
//! [`ClientRecord`] (completed, failed, retransmissions, the group's
//! histogram, RTT samples, timers); each transfer in [`TransferRecord`]
//! (from the first transmission of its first block to the response to its
//! last); the flow completion time runs from the client's first
//! transmission to the end of its last transfer.

use std::sync::Arc;

use coapcc_link::agenda::Agenda;
use coapcc_link::dumbbell::{Direction, Dumbbell, IPV4_HEADER};
use coapcc_link::rng::{derive, SimRng, Stream};
use coapcc_link::time::{to_secs, Nanos};
use coapcc_link::{Datagram, NodeId, PacketId};
use coapcc_proto::block::{
    is_pattern, pattern, Block1Upload, Block2Download, BlockOptions, BlockResource, Progress,
    UploadStep,
};
use coapcc_proto::client::{ClientConfig, ClientEvent, ClientSettings, Request};
use coapcc_proto::message::{option, Code};
use coapcc_workload::metrics::{ClientRecord, RunResult};
use coapcc_workload::transfer_metrics::TransferRecord;
use coapcc_workload::{TransferDirection, Workload};

use super::config::{validate, RunSpec, UDP_HEADER};
use super::records;
use super::world::{Event, Tap, MAX_DATAGRAM, SERVER};
use crate::apps::coap_client;
use coapcc_proto::client::Client;

/// The server, as the block-wise clients name their peer. A type of its own
/// gives this world its own copy of the CoAP client's code: shared with the
/// request world, the client's functions had two callers each and the
/// compiler stopped inlining them into the request world's event loop
/// (+5 % instructions there; `docs/performance.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Server;

/// A block-wise client's CoAP endpoint.
type CoapClient = Client<Server, SimRng>;
use crate::apps::coap_server::CoapServer;
use crate::apps::packets::PacketPool;
use crate::event_loop::{Core, World as EventWorld};
use crate::spec_error::SpecError;

/// "None" for a time.
const NEVER: Nanos = Nanos::MAX;

/// Bytes a block's message may carry besides its path and payload: the
/// 4-byte header, room for an 8-byte token and 8 bytes of the algorithms'
/// marking options (as `[coap] response_payload`'s check), the Block1 or
/// Block2 option (at most 5 bytes) and the payload marker.
const BLOCK_OVERHEAD: usize = 4 + 8 + 8 + 5 + 1;

/// The largest message of a block-wise transfer of `block` bytes a block:
/// an upload's request carries the Uri-Path options too.
pub fn largest_message(direction: TransferDirection, path: &str, block: usize) -> usize {
    let path_options: usize = match direction {
        TransferDirection::Download => 0,
        TransferDirection::Upload => path
            .trim_start_matches('/')
            .split('/')
            .filter(|s| !s.is_empty())
            .map(|s| {
                1 + s.len()
                    + match s.len() {
                        0..=12 => 0,
                        13..=268 => 1,
                        _ => 2,
                    }
            })
            .sum(),
    };
    BLOCK_OVERHEAD + path_options + block
}

/// Checks a block-wise workload against the network: a block's message
/// fits the MTU less the IPv4 and UDP headers; every group transfers the
/// same representation.
pub fn check(w: &Workload, spec: &RunSpec) -> Result<(), SpecError> {
    let b = w.blockwise();
    let room = spec.network.mtu.saturating_sub(IPV4_HEADER + UDP_HEADER);
    let largest = largest_message(b.direction, &spec.coap.path, b.block_size as usize);
    if largest > room {
        return Err(SpecError(format!(
            "workload.block_size: a {}-byte block makes a message of up to {largest} bytes \
             ({}), more than the {room} bytes the {}-byte MTU leaves after the IPv4 and UDP \
             headers",
            b.block_size,
            b.direction.name(),
            spec.network.mtu
        )));
    }
    if spec
        .groups
        .iter()
        .any(|g| g.workload.blockwise().size != b.size)
    {
        return Err(SpecError(
            "workload.size: every group of a block-wise run transfers the same representation"
                .into(),
        ));
    }
    Ok(())
}

/// The transfer a client is in.
enum Transfer {
    Idle,
    Download(Block2Download),
    Upload(Block1Upload),
}

/// One block-wise client.
struct BlockClient {
    coap: CoapClient,
    group: u32,
    direction: TransferDirection,
    /// SZX of its blocks.
    szx: u8,
    /// Transfers not yet started.
    remaining: u32,
    transfer: Transfer,
    /// The first transmission of the current transfer ([`NEVER`]: not yet).
    transfer_started: Nanos,
    /// Its first transmission ([`NEVER`]: not yet).
    started: Nanos,
    /// The deadline its timer event is queued for ([`NEVER`]: none).
    armed: Nanos,
    /// Whether the server reassembled its current upload exactly (`None`:
    /// not complete at the server).
    upload_ok: Option<bool>,
}

/// One replication of a block-wise run on the dumbbell in progress.
pub struct World<'a> {
    core: Core<Dumbbell, Event>,
    packets: PacketPool,
    clients: Vec<BlockClient>,
    records: Vec<ClientRecord>,
    transfers: Vec<TransferRecord>,
    server: CoapServer<BlockResource<u32>>,
    histograms: Vec<Vec<u64>>,
    /// Bytes of the representation.
    size: usize,
    /// The body every upload sends.
    body: Vec<u8>,
    unfinished: usize,
    path: String,
    buf: [u8; MAX_DATAGRAM],
    tap: Option<&'a mut dyn Tap>,
}

impl<'a> World<'a> {
    /// Replication `replication` of `spec` (every group transferring
    /// block-wise), before time 0.
    pub(super) fn new(spec: &'a RunSpec, replication: u32) -> Result<Self, SpecError> {
        validate(spec)?;
        let seed = derive(spec.seed, Stream::Replication, u64::from(replication));
        let population: usize = spec.groups.iter().map(|g| g.clients as usize).sum();
        let size = spec.groups[0].workload.blockwise().size as usize;
        let mut clients = Vec::with_capacity(population);
        let mut records = Vec::with_capacity(population);
        for (gi, g) in spec.groups.iter().enumerate() {
            let b = g.workload.blockwise();
            let config = ClientConfig {
                max_retransmit: spec.coap.max_retransmit,
                nstart: 1,
                keep_payload: true,
                ..ClientConfig::default()
            };
            let settings: Arc<ClientSettings> = coap_client::settings(&g.algorithm, config)?;
            for _ in 0..g.clients {
                let index = clients.len() as u32;
                let mut rng = SimRng::new(derive(seed, Stream::Client, u64::from(index)));
                clients.push(BlockClient {
                    coap: coap_client::endpoint(&settings, &mut rng),
                    group: gi as u32,
                    direction: b.direction,
                    szx: b.block_size.trailing_zeros() as u8 - 4,
                    remaining: b.transfers,
                    transfer: Transfer::Idle,
                    transfer_started: NEVER,
                    started: NEVER,
                    armed: NEVER,
                    upload_ok: None,
                });
                records.push(ClientRecord {
                    group: gi as u32,
                    ..ClientRecord::default()
                });
            }
        }
        let mut resource = BlockResource::new(pattern(size));
        resource.max_uploads = population.max(1);
        resource.receiver.max_body = size;
        let server = CoapServer::new(SERVER, resource, population, MAX_DATAGRAM);
        let transfers = vec![
            TransferRecord {
                size: size as u32,
                ..TransferRecord::default()
            };
            population
        ];
        Ok(World {
            core: Core::new(
                Dumbbell::new(&spec.network, seed, 2 * population + 64),
                Agenda::new(0, 2 * population + 64),
            ),
            packets: PacketPool::default(),
            clients,
            records,
            transfers,
            server,
            histograms: vec![Vec::new(); spec.groups.len()],
            size,
            body: pattern(size),
            unfinished: population,
            path: spec.coap.path.clone(),
            buf: [0; MAX_DATAGRAM],
            tap: None,
        })
    }

    /// Shows every packet sent to `tap`.
    pub(super) fn attach(&mut self, tap: &'a mut dyn Tap) {
        self.tap = Some(tap);
    }

    /// Hands a packet to the network; recycles it if refused at once.
    fn send(&mut self, d: Datagram) {
        if !self.core.send(d) {
            self.packets.release(d.id);
        }
    }

    /// A request reached the server: answered, and a completed upload
    /// checked.
    fn at_server(&mut self, p: PacketId) {
        let now = self.core.now;
        let src = self.packets.get(p).src;
        self.server.handler_mut().set_peer(src);
        let reply = self.server.answer(now, &mut self.packets, p);
        if let Some(done) = self.server.handler_mut().take_upload() {
            let ok = is_pattern(&done.body, self.size);
            debug_assert!(ok, "client {}'s upload reassembled wrong", done.peer);
            self.clients[done.peer as usize].upload_ok = Some(ok);
        }
        let Some(reply) = reply else { return };
        if reply.duplicate {
            let ip_len = (IPV4_HEADER + UDP_HEADER + reply.request_len) as u64;
            self.core.net.count_unnecessary(Direction::Up, ip_len);
        }
        if let Some(tap) = self.tap.as_mut() {
            tap.packet(now, SERVER, reply.to, self.packets.get(reply.packet).data);
        }
        self.send(Datagram {
            id: reply.packet,
            src: SERVER,
            dst: reply.to,
            transport_header: UDP_HEADER as u16,
            payload: reply.len as u16,
            unnecessary: reply.duplicate,
        });
    }

    /// A response reached its client.
    fn at_client(&mut self, p: PacketId) {
        let packet = self.packets.get(p);
        let c = packet.dst as usize;
        self.clients[c]
            .coap
            .handle_datagram(self.core.now, Server, packet.data);
        self.packets.release(p);
        self.service(c);
    }

    /// Starts client `c`'s next transfer.
    fn begin_transfer(&mut self, c: usize) {
        let cl = &mut self.clients[c];
        cl.remaining -= 1;
        cl.transfer_started = NEVER;
        cl.upload_ok = None;
        cl.transfer = match cl.direction {
            TransferDirection::Download => {
                Transfer::Download(Block2Download::new(self.size, Some(cl.szx)))
            }
            TransferDirection::Upload => Transfer::Upload(
                Block1Upload::new(self.body.clone(), cl.szx)
                    .expect("a checked size has few enough blocks"),
            ),
        };
        self.request_block(c);
    }

    /// Sends the request for client `c`'s next block; ends the transfer
    /// if there is none to ask for.
    fn request_block(&mut self, c: usize) {
        let now = self.core.now;
        let BlockClient { coap, transfer, .. } = &mut self.clients[c];
        let started = match transfer {
            Transfer::Download(dl) => match dl.next_request() {
                Ok(Some(b)) => {
                    let (v, n) = b.encode();
                    let req = Request {
                        method: Code::GET,
                        path: &self.path,
                        payload: &[],
                        confirmable: true,
                    };
                    coap.request_with_options(now, Server, &req, &[(option::BLOCK2, &v[4 - n..])])
                        .is_ok()
                }
                _ => false,
            },
            Transfer::Upload(up) => match up.next_block() {
                Some(b) => {
                    let (v, n) = b.block1.encode();
                    let req = Request {
                        method: Code::PUT,
                        path: &self.path,
                        payload: b.payload,
                        confirmable: true,
                    };
                    coap.request_with_options(now, Server, &req, &[(option::BLOCK1, &v[4 - n..])])
                        .is_ok()
                }
                None => false,
            },
            Transfer::Idle => false,
        };
        if !started {
            self.end_transfer(c, false);
        }
    }

    /// Client `c`'s current transfer ended, exactly reassembled (`ok`) or
    /// not; its next one starts.
    fn end_transfer(&mut self, c: usize, ok: bool) {
        let now = self.core.now;
        let cl = &mut self.clients[c];
        cl.transfer = Transfer::Idle;
        let t = &mut self.transfers[c];
        if ok {
            t.completed += 1;
            t.times.push(to_secs(now - cl.transfer_started));
        } else {
            t.failed += 1;
        }
        if cl.remaining > 0 {
            self.begin_transfer(c);
        } else {
            let from = if cl.started == NEVER { now } else { cl.started };
            self.records[c].fct = Some(to_secs(now - from));
            self.unfinished -= 1;
        }
    }

    /// The response to client `c`'s block: `code`, `payload`, `options`.
    fn on_block(&mut self, c: usize, code: Code, payload: &[u8], options: &[(u16, Vec<u8>)]) {
        let Ok(opts) = BlockOptions::read(options.iter().map(|(n, v)| (*n, v.as_slice()))) else {
            return self.end_transfer(c, false);
        };
        let cl = &mut self.clients[c];
        match &mut cl.transfer {
            Transfer::Download(dl) => {
                if code.class() != 2 {
                    return self.end_transfer(c, false);
                }
                let etag = options
                    .iter()
                    .find(|(n, _)| *n == option::ETAG)
                    .map(|(_, v)| v.as_slice());
                match dl.on_response(opts.block2, etag, opts.size2, payload) {
                    Ok(Progress::Continue | Progress::Duplicate) => self.request_block(c),
                    Ok(Progress::Complete) => {
                        let ok = is_pattern(dl.body(), self.size);
                        debug_assert!(ok, "client {c}'s download reassembled wrong");
                        self.end_transfer(c, ok);
                    }
                    Err(_) => self.end_transfer(c, false),
                }
            }
            Transfer::Upload(up) => match up.on_response(code, opts.block1, opts.size1) {
                Ok(UploadStep::Continue) => self.request_block(c),
                Ok(UploadStep::Done(code)) => {
                    let ok = code == Code::CHANGED && cl.upload_ok == Some(true);
                    self.end_transfer(c, ok);
                }
                Err(_) => self.end_transfer(c, false),
            },
            Transfer::Idle => {}
        }
    }

    /// Drains client `c`'s transmissions and events (starting its next
    /// block or transfer), and queues its timer.
    fn service(&mut self, c: usize) {
        let now = self.core.now;
        loop {
            while let Some(tx) = self.clients[c].coap.poll_transmit(&mut self.buf) {
                let cl = &mut self.clients[c];
                if cl.started == NEVER {
                    cl.started = now;
                }
                if cl.transfer_started == NEVER {
                    cl.transfer_started = now;
                }
                if tx.ordinal > 0 {
                    self.records[c].retransmissions += 1;
                }
                if let Some(tap) = self.tap.as_mut() {
                    tap.packet(now, c as u32, SERVER, &self.buf[..tx.len]);
                }
                let p = self.packets.alloc(c as u32, SERVER, &self.buf[..tx.len]);
                self.send(Datagram {
                    id: p,
                    src: c as u32,
                    dst: SERVER,
                    transport_header: UDP_HEADER as u16,
                    payload: tx.len as u16,
                    unnecessary: false,
                });
            }
            let mut more = false;
            while let Some(ev) = self.clients[c].coap.poll_event() {
                let group = self.clients[c].group as usize;
                let record = &mut self.records[c];
                match ev {
                    ClientEvent::Response {
                        code,
                        retransmissions,
                        elapsed,
                        body,
                        ..
                    } => {
                        record.completed += 1;
                        record.rtt_sum += to_secs(elapsed);
                        records::count(&mut self.histograms[group], retransmissions);
                        let body = body.map(|b| *b).unwrap_or_default();
                        self.on_block(c, code, &body.payload, &body.options);
                        more = true;
                    }
                    ClientEvent::Failed { .. } => {
                        record.failed += 1;
                        self.end_transfer(c, false);
                        more = true;
                    }
                    ClientEvent::TimerExpired { timer, .. } => {
                        record.expirations += 1;
                        record.max_expired_timer = record.max_expired_timer.max(timer);
                    }
                    ClientEvent::DuplicateResponse { .. } => record.unnecessary += 1,
                    ClientEvent::MismatchedResponse { .. } => record.mismatched_responses += 1,
                    _ => {}
                }
            }
            if !more {
                break;
            }
        }
        let cl = &mut self.clients[c];
        if let Some(t) = cl.coap.poll_timeout().filter(|&t| t != cl.armed) {
            cl.armed = t;
            self.core.agenda.push(t, Event::ClientTimer(c as u32));
        }
    }

    fn finish_run(mut self, processed: u64) -> RunResult {
        for ((record, cl), t) in self
            .records
            .iter_mut()
            .zip(&self.clients)
            .zip(&mut self.transfers)
        {
            record.spurious_detected = cl
                .coap
                .algorithm(Server)
                .map_or(0, |a| a.spurious_detected() as u32);
            record.transfers = Some(Box::new(std::mem::take(t)));
        }
        records::result(&mut self.core, self.records, self.histograms, processed)
    }
}

impl<'a> EventWorld for World<'a> {
    type Net = Dumbbell;
    type Timer = Event;
    type Result = RunResult;

    fn start(&mut self) {
        for c in 0..self.clients.len() {
            self.begin_transfer(c);
            self.service(c);
        }
    }

    #[inline]
    fn core(&mut self) -> &mut Core<Dumbbell, Event> {
        &mut self.core
    }

    #[inline]
    fn done(&self) -> bool {
        self.unfinished == 0
    }

    fn on_delivered(&mut self, id: PacketId, node: NodeId) {
        if node == SERVER {
            self.at_server(id)
        } else {
            self.at_client(id)
        }
    }

    fn on_dropped(&mut self, id: PacketId) {
        self.packets.release(id);
    }

    fn on_timer(&mut self, at: Nanos, timer: Event) {
        let Event::ClientTimer(c) = timer else {
            unreachable!("a timer of another world in the block-wise world")
        };
        let cl = &mut self.clients[c as usize];
        if cl.armed == at {
            cl.armed = NEVER;
            cl.coap.handle_timeout(at);
            self.service(c as usize);
        }
    }

    fn finish(self, processed: u64) -> RunResult {
        self.finish_run(processed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_largest_message_counts_the_path_of_uploads() {
        // "sense": one 6-byte option.
        assert_eq!(
            largest_message(TransferDirection::Upload, "sense", 128),
            BLOCK_OVERHEAD + 6 + 128
        );
        assert_eq!(
            largest_message(TransferDirection::Download, "sense", 128),
            BLOCK_OVERHEAD + 128
        );
        // A 13-character segment needs an extended length byte.
        assert_eq!(
            largest_message(TransferDirection::Upload, "/a/abcdefghijklm", 16),
            BLOCK_OVERHEAD + 2 + 15 + 16
        );
    }
}
