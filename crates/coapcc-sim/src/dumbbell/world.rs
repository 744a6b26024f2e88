//! The dumbbell's world (spec `docs/spec/testbed-spec.md` §1–2): CoAP clients and a server
//! on the network of [`coapcc_link::dumbbell`], their workloads, and their
//! records; the event loop ([`crate::event_loop`]) hands it the network's
//! events and the endpoints' timers.
//!
//! Clients and the server are the real sans-IO CoAP endpoints of `coapcc-proto`,
//! placed on the nodes as the shared applications of [`crate::apps`] (a
//! client endpoint per UDP client, the server on [`SERVER`]): every packet
//! carries the bytes they encoded, in the packet pool, and its size on the
//! wire is the IPv4 + UDP header plus those bytes.
//!
//! Clients of the algorithms `tcp` and `tcp-lwip*` run CoAP over TCP instead
//! (docs/spec/transport-tcp-spec.md §1–3, [`super::tcp`]): their packets are TCP segments of real size
//! ([`coapcc_tcp::Segment::wire_len`]) that cross the same buffers, serialisers,
//! error model and delays. A run may mix UDP and TCP groups.

use std::sync::Arc;

use coapcc_link::agenda::Agenda;
use coapcc_link::dumbbell::{Direction, Dumbbell, IPV4_HEADER};
use coapcc_link::rng::{derive, SimRng, Stream};
use coapcc_link::time::{to_secs, Nanos};
use coapcc_link::{Datagram, NodeId};
use coapcc_proto::client::{ClientConfig, ClientEvent, ClientSettings, EncodedRequest, Request};
use coapcc_proto::message::Code;
use coapcc_proto::server::FixedPayload;
use coapcc_workload::metrics::{ClientRecord, RunResult};
use coapcc_workload::WorkloadKind;

use super::config::{is_tcp, validate, Group, RunSpec, UDP_HEADER};
use super::tcp::{TcpTrace, TcpWorld};
use crate::apps::coap_client::{self, CoapClient};
use crate::apps::coap_server::CoapServer;
use crate::apps::packets::PacketPool;
use crate::event_loop::{Core, World as EventWorld};
use crate::spec_error::SpecError;

/// Largest CoAP message a packet can carry (the testbed's 296-byte MTU less
/// the IPv4 and UDP headers).
pub const MAX_DATAGRAM: usize = 296 - IPV4_HEADER - UDP_HEADER;
const _: () = assert!(MAX_DATAGRAM <= PacketPool::MAX_MESSAGE);

/// The server's address in the simulated network (clients are `0..N`).
pub const SERVER: u32 = coapcc_link::dumbbell::SERVER;

/// Identifies a packet: a [`PacketPool`] handle, or, with [`TCP_PACKET`]
/// set, an index into the TCP segment pool of [`TcpWorld`].
type PacketId = u32;

/// Marks a [`PacketId`] as a TCP segment.
const TCP_PACKET: PacketId = 1 << 31;

/// A timer event of the endpoints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A client's retransmission deadline (stale if the client moved it).
    ClientTimer(u32),
    /// A TCP endpoint's timer (`connection * 2 + side`; stale if moved).
    TcpTimer(u32),
    /// The server's retransmission timer of a group's observed resource
    /// (the observe world, `observe.rs`; stale if moved).
    ServerTimer(u32),
    /// Change `k` (1, 2, …) of the observed resource.
    Change(u32),
    /// The end of an observe run's drain.
    End,
}

/// A time a client's record holds for "none": not started, no timer armed,
/// no timer event queued (no deadline or event is ever that late). A
/// sentinel rather than an `Option` keeps the record 8 bytes smaller per
/// field (`docs/decisions/performance-choices.md`, "Ten million clients").
const NEVER: Nanos = Nanos::MAX;

/// A simulated client: a CoAP endpoint plus its workload. It keeps up to
/// the run's NSTART exchanges outstanding ([`World::fill`]).
struct SimClient {
    coap: CoapClient,
    group: u32,
    kind: WorkloadKind,
    batch: [u32; 2],
    /// Exchanges not yet started.
    remaining: u32,
    /// Exchanges left in the current batch (random clients).
    batch_left: u32,
    rng: SimRng,
    /// When it first sent ([`NEVER`]: not yet).
    started: Nanos,
    /// The deadline its timer is armed for ([`NEVER`]: none), and the
    /// scheduling order taken when it was armed (see [`World::arm`]).
    armed: Nanos,
    armed_seq: u64,
    /// When the client's earliest timer event in the agenda is due
    /// ([`NEVER`]: none), no later than `armed`.
    queued: Nanos,
    finished: bool,
}

/// Sees every packet an endpoint sends, when it sends it (e.g. to write a pcap).
pub trait Tap {
    /// `src` and `dst` are client indices or [`SERVER`]; `bytes` is the CoAP
    /// message (the UDP payload).
    fn packet(&mut self, at: Nanos, src: u32, dst: u32, bytes: &[u8]);

    /// Sees what CoAP-over-TCP client `client` (and the server's side of its
    /// connections) does: segments sent and arrived, application steps.
    fn tcp(&mut self, at: Nanos, client: u32, what: TcpTrace<'_>) {
        let _ = (at, client, what);
    }
}

/// Where a client lives: among the UDP clients or the TCP clients.
#[derive(Clone, Copy)]
enum Slot {
    Udp(u32),
    Tcp(u32),
}

/// One replication on the dumbbell in progress.
pub struct World<'a> {
    /// The network, the endpoints' timers, the clock.
    core: Core<Dumbbell, Event>,
    packets: PacketPool,
    /// UDP clients; their address in packets is their index here.
    clients: Vec<SimClient>,
    /// The UDP clients' result records, by the same index. Kept apart from
    /// the clients so that a run of UDP clients only hands them over as its
    /// result instead of building a copy while every client is alive.
    records: Vec<ClientRecord>,
    /// The global index of each UDP client.
    udp_global: Vec<u32>,
    /// Every client in global order.
    order: Vec<Slot>,
    tcp: TcpWorld,
    /// The server; its peers are the UDP clients' indexes, so its
    /// deduplication cache is indexed per client.
    server: CoapServer<FixedPayload>,
    histograms: Vec<Vec<u64>>,
    unfinished: usize,
    /// The GET every UDP client sends, its options encoded once.
    request: EncodedRequest,
    /// NSTART: exchanges a UDP client keeps outstanding at once.
    nstart: usize,
    buf: [u8; MAX_DATAGRAM],
    tap: Option<&'a mut dyn Tap>,
}

impl<'a> World<'a> {
    /// Replication `replication` of `spec`, before time 0.
    pub(super) fn new(spec: &'a RunSpec, replication: u32) -> Result<Self, SpecError> {
        validate(spec)?;
        let seed = derive(spec.seed, Stream::Replication, u64::from(replication));
        let n = &spec.network;
        let population: usize = spec.groups.iter().map(|g| g.clients as usize).sum();
        let mut clients = Vec::with_capacity(population);
        let mut records = Vec::with_capacity(population);
        let mut udp_global = Vec::with_capacity(population);
        let mut order = Vec::with_capacity(population);
        let profiles: Vec<_> = spec
            .groups
            .iter()
            .map(|g| g.algorithm.tcp_profile())
            .collect();
        let mut tcp = TcpWorld::new(
            n.mtu,
            &spec.coap.path,
            spec.coap.response_payload,
            &profiles,
        );
        for (gi, g) in spec.groups.iter().enumerate() {
            // One copy of a UDP group's settings, shared by its clients.
            let settings = if is_tcp(&g.algorithm) {
                None
            } else {
                let config = ClientConfig {
                    max_retransmit: spec.coap.max_retransmit,
                    nstart: spec.coap.nstart as usize,
                    ..ClientConfig::default()
                };
                Some(coap_client::settings(&g.algorithm, config)?)
            };
            for _ in 0..g.clients {
                let index = order.len() as u32;
                let seed = derive(seed, Stream::Client, u64::from(index));
                if is_tcp(&g.algorithm) {
                    let w = &g.workload;
                    let c = tcp.add_client(
                        index,
                        gi as u32,
                        w.kind,
                        w.batch,
                        w.exchanges,
                        SimRng::new(seed),
                    );
                    order.push(Slot::Tcp(c));
                } else {
                    order.push(Slot::Udp(clients.len() as u32));
                    udp_global.push(index);
                    let settings = settings.as_ref().expect("a UDP group has settings");
                    clients.push(new_client(settings, g, gi as u32, seed));
                    records.push(ClientRecord {
                        group: gi as u32,
                        ..ClientRecord::default()
                    });
                }
            }
        }
        let server = CoapServer::new(
            SERVER,
            FixedPayload {
                size: spec.coap.response_payload,
            },
            clients.len(),
            MAX_DATAGRAM,
        );
        let unfinished = order.len();
        let request = EncodedRequest::new(
            &Request {
                method: Code::GET,
                path: &spec.coap.path,
                payload: &[],
                confirmable: true,
            },
            ClientConfig::default().max_message_size,
        )
        .expect("a validated path encodes");
        Ok(World {
            core: Core::new(
                Dumbbell::new(n, seed, 2 * order.len() + 64),
                Agenda::new(0, 2 * order.len() + 64),
            ),
            packets: PacketPool::default(),
            clients,
            records,
            udp_global,
            order,
            tcp,
            server,
            histograms: vec![Vec::new(); spec.groups.len()],
            unfinished,
            request,
            nstart: spec.coap.nstart as usize,
            buf: [0; MAX_DATAGRAM],
            tap: None,
        })
    }

    /// Shows every packet sent, and every TCP happening, to `tap`.
    pub(super) fn attach(&mut self, tap: &'a mut dyn Tap) {
        self.tcp.trace = true;
        self.tap = Some(tap);
    }

    /// Schedules an endpoint's timer event.
    fn schedule(&mut self, at: Nanos, ev: Event) {
        self.core.agenda.push(at, ev);
    }

    /// Time 0 (docs/spec/testbed-spec.md §1.3): all clients start, in index order.
    /// Continuous TCP clients set up their connection first (docs/spec/transport-tcp-spec.md
    /// §2); then time 0 of the workload is when the last of them is ready.
    fn start_clients(&mut self) {
        if self.tcp.warming == 0 {
            self.start_all();
        } else {
            for i in 0..self.order.len() {
                if let Slot::Tcp(c) = self.order[i] {
                    if self.tcp.is_continuous(c) {
                        self.tcp.start(0, c);
                        self.drain_tcp();
                    }
                }
            }
        }
    }

    /// Starts every client's workload now, in index order.
    fn start_all(&mut self) {
        let now = self.core.now;
        for i in 0..self.order.len() {
            match self.order[i] {
                Slot::Udp(c) => {
                    self.fill(c as usize, now);
                    self.service(c as usize);
                }
                Slot::Tcp(c) => {
                    if self.tcp.is_continuous(c) {
                        self.tcp.go(now, c);
                    } else {
                        self.tcp.start(now, c);
                    }
                    self.drain_tcp();
                }
            }
        }
    }

    /// Returns a packet dropped in the network to its pool.
    #[inline]
    fn release(&mut self, p: PacketId) {
        if p & TCP_PACKET == 0 {
            self.packets.release(p);
        } else {
            self.tcp.release(p & !TCP_PACKET);
        }
    }

    /// Puts what the TCP endpoints emitted on the network and schedules their
    /// timers; counts clients that finished.
    #[cold]
    #[inline(never)]
    fn drain_tcp(&mut self) {
        if let Some(tap) = self.tap.as_mut() {
            for &(at, client, note) in &self.tcp.notes {
                tap.tcp(at, client, TcpTrace::Note(note));
            }
            self.tcp.notes.clear();
        }
        let mut up = std::mem::take(&mut self.tcp.out_up);
        for &id in &up {
            if let Some(tap) = self.tap.as_mut() {
                let seg = self.tcp.seg(id);
                let what = TcpTrace::Sent {
                    from_client: true,
                    seg,
                };
                tap.tcp(self.core.now, self.tcp.seg_client(id), what);
            }
            self.send_tcp(id);
        }
        up.clear();
        self.tcp.out_up = up;
        let mut down = std::mem::take(&mut self.tcp.out_down);
        for &id in &down {
            if let Some(tap) = self.tap.as_mut() {
                let seg = self.tcp.seg(id);
                let what = TcpTrace::Sent {
                    from_client: false,
                    seg,
                };
                tap.tcp(self.core.now, self.tcp.seg_client(id), what);
            }
            self.send_tcp(id);
        }
        down.clear();
        self.tcp.out_down = down;
        let mut timers = std::mem::take(&mut self.tcp.out_timers);
        for &(due, ep) in &timers {
            let ev = Event::TcpTimer(ep);
            match due.level {
                // One host's timer wheel (`docs/decisions/tcp-choices.md`, "Timers
                // of one bucket, last armed first").
                Some(level) => self.core.agenda.push_newest_first(due.at, level, ev),
                None => self.schedule(due.at, ev),
            }
        }
        timers.clear();
        self.tcp.out_timers = timers;
        self.unfinished -= self.tcp.finished;
        self.tcp.finished = 0;
        if self.tcp.barrier {
            self.tcp.barrier = false;
            self.start_all();
        }
    }

    /// Hands TCP segment `id` to the network.
    fn send_tcp(&mut self, id: u32) {
        let seg = self.tcp.seg(id);
        let payload = seg.payload.len() as u16;
        let header = (seg.wire_len() - IPV4_HEADER) as u16 - payload;
        let (src, dst) = if self.tcp.to_server(id) {
            (self.tcp.seg_client(id), SERVER)
        } else {
            (SERVER, self.tcp.seg_client(id))
        };
        self.send(Datagram {
            id: id | TCP_PACKET,
            src,
            dst,
            transport_header: header,
            payload,
            unnecessary: false,
        });
    }

    /// Hands a packet to the network; counts it sent, and dropped if the
    /// network refuses it at once.
    fn send(&mut self, d: Datagram) {
        if !self.core.send(d) {
            self.release(d.id);
        }
    }

    /// A TCP endpoint's timer event.
    #[cold]
    #[inline(never)]
    fn tcp_timer(&mut self, ep: u32) {
        self.tcp.timer(self.core.now, ep);
        self.drain_tcp();
    }

    /// A TCP segment reached its endpoint (the server or its client).
    #[cold]
    #[inline(never)]
    fn tcp_arrival(&mut self, p: PacketId) {
        let id = p & !TCP_PACKET;
        let to_server = self.tcp.to_server(id);
        if let Some(tap) = self.tap.as_mut() {
            let seg = self.tcp.seg(id);
            tap.tcp(
                self.core.now,
                self.tcp.seg_client(id),
                TcpTrace::Arrived { to_server, seg },
            );
        }
        let dup_bytes = self.tcp.deliver(self.core.now, id);
        let dir = if to_server {
            Direction::Up
        } else {
            Direction::Down
        };
        self.core.net.count_unnecessary(dir, dup_bytes);
        self.drain_tcp();
    }

    #[inline]
    fn at_server(&mut self, p: PacketId) {
        if p & TCP_PACKET != 0 {
            return self.tcp_arrival(p);
        }
        let Some(reply) = self.server.answer(self.core.now, &mut self.packets, p) else {
            return;
        };
        if reply.duplicate {
            let ip_len = (IPV4_HEADER + UDP_HEADER + reply.request_len) as u64;
            self.core.net.count_unnecessary(Direction::Up, ip_len);
        }
        if let Some(tap) = self.tap.as_mut() {
            let dst = self.udp_global[reply.to as usize];
            let bytes = self.packets.get(reply.packet).data;
            tap.packet(self.core.now, SERVER, dst, bytes);
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

    #[inline]
    fn at_client(&mut self, p: PacketId) {
        if p & TCP_PACKET != 0 {
            return self.tcp_arrival(p);
        }
        let packet = self.packets.get(p);
        let c = packet.dst as usize;
        self.clients[c]
            .coap
            .handle_datagram(self.core.now, SERVER, packet.data);
        self.packets.release(p);
        self.service(c);
    }

    /// Starts the client's next exchanges while fewer than NSTART are
    /// outstanding; a random client's next batch (a new device) waits until
    /// every exchange of its current one has ended. Returns whether it
    /// started any.
    #[inline]
    fn fill(&mut self, c: usize, now: Nanos) -> bool {
        let mut started = false;
        loop {
            let cl = &self.clients[c];
            let active = cl.coap.active();
            let batch_ends = cl.kind == WorkloadKind::Random && cl.batch_left == 0;
            if cl.remaining == 0 || active >= self.nstart || (batch_ends && active > 0) {
                return started;
            }
            self.start_next(c, now);
            started = true;
        }
    }

    /// Starts the client's next exchange (and a new batch if one is due).
    fn start_next(&mut self, c: usize, now: Nanos) {
        let cl = &mut self.clients[c];
        if cl.remaining == 0 {
            return;
        }
        if cl.kind == WorkloadKind::Random && cl.batch_left == 0 {
            // A new short-lived device: all congestion-control state is discarded.
            cl.coap.reset_peer(SERVER);
            cl.batch_left = cl.rng.int_in(cl.batch[0], cl.batch[1]).min(cl.remaining);
        }
        cl.remaining -= 1;
        cl.batch_left = cl.batch_left.saturating_sub(1);
        cl.coap
            .request_encoded(now, SERVER, &self.request)
            .expect("a client below NSTART always has room for its next request");
    }

    /// Drains a client's transmissions and events, and re-arms its timer.
    fn service(&mut self, c: usize) {
        while let Some(tx) = self.clients[c].coap.poll_transmit(&mut self.buf) {
            let cl = &mut self.clients[c];
            if cl.started == NEVER {
                cl.started = self.core.now;
            }
            if tx.ordinal > 0 {
                self.records[c].retransmissions += 1;
            }
            if let Some(tap) = self.tap.as_mut() {
                let src = self.udp_global[c];
                tap.packet(self.core.now, src, SERVER, &self.buf[..tx.len]);
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
        let mut exchange_ended = false;
        while let Some(ev) = self.clients[c].coap.poll_event() {
            let cl = &self.clients[c];
            let record = &mut self.records[c];
            match ev {
                ClientEvent::Response {
                    retransmissions,
                    elapsed,
                    ..
                } => {
                    record.completed += 1;
                    record.rtt_sum += to_secs(elapsed);
                    let h = &mut self.histograms[cl.group as usize];
                    let n = retransmissions as usize;
                    if h.len() <= n {
                        h.resize(n + 1, 0);
                    }
                    h[n] += 1;
                    exchange_ended = true;
                }
                ClientEvent::Failed { .. } => {
                    record.failed += 1;
                    exchange_ended = true;
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
        if exchange_ended {
            let cl = &mut self.clients[c];
            if cl.remaining == 0 {
                if !cl.finished && cl.coap.active() == 0 {
                    cl.finished = true;
                    self.records[c].fct = Some(to_secs(
                        self.core.now - if cl.started == NEVER { 0 } else { cl.started },
                    ));
                    self.unfinished -= 1;
                }
            } else if self.fill(c, self.core.now) {
                return self.service(c);
            }
        }
        self.arm(c);
    }

    /// Arms the client's timer for its deadline when the deadline changed.
    ///
    /// An armed timer takes its scheduling order now, but its event enters
    /// the agenda only if no event of the client is queued at or before the
    /// deadline; otherwise the queued one, when it comes up, schedules the
    /// armed timer with the order taken here ([`World::client_timer`]). So
    /// events come out in exactly the order of one event per arming, while a
    /// client whose deadline moves later with each exchange keeps one event
    /// in the agenda instead of one per exchange
    /// (`docs/decisions/performance-choices.md`, "Timers put off instead of
    /// left stale").
    #[inline]
    fn arm(&mut self, c: usize) {
        let deadline = self.clients[c].coap.poll_timeout();
        let Some(t) = deadline.filter(|&t| t != self.clients[c].armed) else {
            return;
        };
        debug_assert!(t >= self.core.now, "a deadline in the past");
        let seq = self.core.agenda.reserve();
        let cl = &mut self.clients[c];
        cl.armed = t;
        cl.armed_seq = seq;
        if cl.queued > t {
            cl.queued = t;
            self.core
                .agenda
                .push_reserved(t, seq, Event::ClientTimer(c as u32));
        }
    }

    /// A client's timer event, due at `at`: the armed timer fires, or
    /// (when the armed deadline is later) is scheduled; an event an earlier
    /// one has replaced is skipped.
    #[inline]
    fn client_timer(&mut self, c: usize, at: Nanos) {
        let cl = &mut self.clients[c];
        if cl.queued != at {
            return;
        }
        match cl.armed {
            NEVER => cl.queued = NEVER,
            t if t == at => {
                cl.queued = NEVER;
                cl.armed = NEVER;
                cl.coap.handle_timeout(at);
                self.service(c);
            }
            t => {
                debug_assert!(t > at, "an armed timer fires through its own event");
                cl.queued = t;
                let seq = cl.armed_seq;
                self.core
                    .agenda
                    .push_reserved(t, seq, Event::ClientTimer(c as u32));
            }
        }
    }

    fn finish_run(mut self, processed: u64) -> RunResult {
        let conservation = self.core.conservation();
        for (record, cl) in self.records.iter_mut().zip(&self.clients) {
            record.spurious_detected = cl
                .coap
                .algorithm(SERVER)
                .map_or(0, |a| a.spurious_detected() as u32);
        }
        let tcp_records = self.tcp.finish();
        let mut records = std::mem::take(&mut self.records);
        // UDP clients only: their records are already in global order.
        let clients = if tcp_records.is_empty() {
            records
        } else {
            let mut tcp_records = tcp_records.into_iter();
            let mut clients = Vec::with_capacity(self.order.len());
            for slot in &self.order {
                clients.push(match *slot {
                    Slot::Udp(c) => std::mem::take(&mut records[c as usize]),
                    Slot::Tcp(_) => tcp_records.next().expect("one per TCP client"),
                });
            }
            clients
        };
        for (h, t) in self.histograms.iter_mut().zip(&self.tcp.histograms) {
            if h.len() < t.len() {
                h.resize(t.len(), 0);
            }
            for (a, b) in h.iter_mut().zip(t) {
                *a += b;
            }
        }
        RunResult {
            clients,
            histograms: self.histograms,
            uplink: self.core.net.record(Direction::Up),
            downlink: self.core.net.record(Direction::Down),
            duration: to_secs(self.core.now),
            events: self.core.events(processed),
            conservation,
        }
    }
}

impl<'a> EventWorld for World<'a> {
    type Net = Dumbbell;
    type Timer = Event;
    type Result = RunResult;

    fn start(&mut self) {
        self.start_clients();
    }

    #[inline]
    fn core(&mut self) -> &mut Core<Dumbbell, Event> {
        &mut self.core
    }

    #[inline]
    fn done(&self) -> bool {
        self.unfinished == 0
    }

    #[inline]
    fn on_delivered(&mut self, id: PacketId, node: NodeId) {
        if node == SERVER {
            self.at_server(id)
        } else {
            self.at_client(id)
        }
    }

    #[inline]
    fn on_dropped(&mut self, id: PacketId) {
        self.release(id);
    }

    #[inline]
    fn on_timer(&mut self, at: Nanos, timer: Event) {
        match timer {
            Event::ClientTimer(c) => self.client_timer(c as usize, at),
            Event::TcpTimer(ep) => self.tcp_timer(ep),
            Event::ServerTimer(_) | Event::Change(_) | Event::End => {
                unreachable!("an observe timer in the request world")
            }
        }
    }

    fn finish(self, processed: u64) -> RunResult {
        self.finish_run(processed)
    }
}

fn new_client(settings: &Arc<ClientSettings>, g: &Group, group: u32, seed: u64) -> SimClient {
    let mut rng = SimRng::new(seed);
    let coap = coap_client::endpoint(settings, &mut rng);
    SimClient {
        coap,
        group,
        kind: g.workload.kind,
        batch: g.workload.batch,
        remaining: g.workload.exchanges,
        batch_left: 0,
        rng,
        started: NEVER,
        armed: NEVER,
        armed_seq: 0,
        queued: NEVER,
        finished: false,
    }
}
