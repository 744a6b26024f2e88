//! The constrained-link testbed (spec `testbed.md` §1–2) as a discrete-event
//! simulation.
//!
//! ```text
//!  N clients ──uplink 60 kbit/s, 200 ms──▶ router ──10–20 ms──▶ server
//!  N clients ◀─downlink 30 kbit/s, 400 ms── router ◀─10–20 ms── server
//! ```
//!
//! Each bottleneck direction is a tail-drop buffer (bytes of waiting IP packets;
//! the packet being serialised is not counted), a serialiser at the link rate,
//! the link-error model, then the propagation delay — in that order. The router ↔
//! server path adds a uniform 10–20 ms per packet and keeps packets in order.
//!
//! Clients and the server are the real sans-IO CoAP endpoints of `coapcc-proto`:
//! every packet carries the bytes they encoded, and its size on the wire is the
//! IPv4 + UDP header plus those bytes.
//!
//! Clients of the algorithm `tcp` run CoAP over TCP instead (transport-tcp.md
//! §1–2, [`crate::tcp_endpoint`]): their packets are TCP segments of real size
//! ([`coapcc_tcp::Segment::wire_len`]) that cross the same buffers, serialisers,
//! error model and delays. A run may mix UDP and TCP groups.

use std::collections::VecDeque;

use coapcc_proto::client::{Client, ClientConfig, ClientEvent, Request};
use coapcc_proto::message::Code;
use coapcc_proto::server::{FixedPayload, Server, ServerConfig, ServerOutput};

use crate::agenda::Agenda;
use crate::client_factory::is_tcp;
use crate::config::{Group, RunSpec, WorkloadKind};
use crate::link_errors::LinkErrors;
use crate::metrics::{ClientRecord, Conservation, LinkRecord, RunResult};
use crate::rng::{derive, SimRng, Stream};
use crate::tcp_endpoint::{TcpTrace, TcpWorld};
use crate::time::{from_secs, round_nonneg, serialisation, to_secs, Nanos};

/// IPv4 header bytes.
pub const IPV4_HEADER: usize = 20;
/// UDP header bytes.
pub const UDP_HEADER: usize = 8;
/// Largest CoAP message a packet can carry (the testbed's 296-byte MTU less
/// the IPv4 and UDP headers).
pub const MAX_DATAGRAM: usize = 296 - IPV4_HEADER - UDP_HEADER;

/// The server's address in the simulated network (clients are `0..N`).
pub const SERVER: u32 = u32::MAX;

/// A configuration the testbed cannot run.
#[derive(Debug, Clone, PartialEq)]
pub struct SpecError(pub String);

impl std::fmt::Display for SpecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for SpecError {}

/// A packet in the network: the encoded CoAP message and its endpoints.
#[derive(Clone)]
struct Packet {
    src: u32,
    dst: u32,
    /// IP-level size on the wire.
    ip_len: u16,
    len: u16,
    /// A copy the receiver did not need (set by the server for duplicates).
    unnecessary: bool,
    data: [u8; MAX_DATAGRAM],
}

/// Identifies a packet: an index into the UDP [`PacketPool`], or, with
/// [`TCP_PACKET`] set, into the TCP segment pool of [`TcpWorld`].
type PacketId = u32;

/// Marks a [`PacketId`] as a TCP segment.
const TCP_PACKET: PacketId = 1 << 31;

/// Packets in the network, allocated once and recycled.
#[derive(Default)]
struct PacketPool {
    slots: Vec<Packet>,
    free: Vec<PacketId>,
}

impl PacketPool {
    fn alloc(&mut self, src: u32, dst: u32, bytes: &[u8]) -> PacketId {
        let id = match self.free.pop() {
            Some(id) => id,
            None => {
                self.slots.push(Packet {
                    src: 0,
                    dst: 0,
                    ip_len: 0,
                    len: 0,
                    unnecessary: false,
                    data: [0; MAX_DATAGRAM],
                });
                (self.slots.len() - 1) as PacketId
            }
        };
        let p = &mut self.slots[id as usize];
        p.src = src;
        p.dst = dst;
        p.len = bytes.len() as u16;
        p.ip_len = (IPV4_HEADER + UDP_HEADER + bytes.len()) as u16;
        p.unnecessary = false;
        p.data[..bytes.len()].copy_from_slice(bytes);
        id
    }

    fn get(&self, id: PacketId) -> &Packet {
        &self.slots[id as usize]
    }

    fn release(&mut self, id: PacketId) {
        self.free.push(id);
    }
}

/// A direction of the bottleneck.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dir {
    Up = 0,
    Down = 1,
}

/// One direction of the bottleneck: buffer → serialiser → errors → delay.
struct Link {
    rate_bps: u64,
    delay: Nanos,
    limit: Option<u64>,
    queue: VecDeque<PacketId>,
    queued_bytes: u64,
    /// The packet being serialised.
    sending: Option<PacketId>,
    errors: LinkErrors,
    record: LinkRecord,
    busy: Nanos,
}

/// The router ↔ server path: jittered delay, order kept.
struct Path {
    lo: Nanos,
    hi: Nanos,
    last_arrival: Nanos,
    rng: SimRng,
}

impl Path {
    fn arrival(&mut self, now: Nanos) -> Nanos {
        let d = self.lo + round_nonneg((self.hi - self.lo) as f64 * self.rng.uniform());
        self.last_arrival = self.last_arrival.max(now + d);
        self.last_arrival
    }
}

const LANE_TX: usize = 0; // and 1: one per direction
const LANE_ROUTER: usize = 2;
const LANE_SERVER: usize = 3;
const LANE_CLIENT: usize = 4;
const LANES: usize = 5;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Event {
    /// A client's retransmission deadline (stale if the client moved it).
    ClientTimer(u32),
    /// The bottleneck finished serialising in this direction.
    TxDone(u8),
    /// A packet reached the router from the server path.
    RouterFromServer(PacketId),
    /// A packet reached the server.
    AtServer(PacketId),
    /// A packet reached its client.
    AtClient(PacketId),
    /// A TCP endpoint's timer (`connection * 2 + side`; stale if moved).
    TcpTimer(u32),
}

/// A simulated client: a CoAP endpoint plus its workload.
struct SimClient {
    coap: Client<u32, SimRng>,
    group: u32,
    kind: WorkloadKind,
    batch: [u32; 2],
    /// Exchanges not yet started.
    remaining: u32,
    /// Exchanges left in the current batch (random clients).
    batch_left: u32,
    rng: SimRng,
    started: Option<Nanos>,
    /// The deadline for which a timer event is queued.
    timer_queued: Option<Nanos>,
    finished: bool,
    record: ClientRecord,
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

/// Runs one replication of `spec`.
pub fn run(spec: &RunSpec, replication: u32) -> Result<RunResult, SpecError> {
    let mut tb = Testbed::new(spec, replication)?;
    tb.run();
    Ok(tb.finish())
}

/// Runs one replication of `spec`, showing every sent packet to `tap`.
pub fn run_with_tap(
    spec: &RunSpec,
    replication: u32,
    tap: &mut dyn Tap,
) -> Result<RunResult, SpecError> {
    let mut tb = Testbed::new(spec, replication)?;
    tb.tcp.trace = true;
    tb.tap = Some(tap);
    tb.run();
    Ok(tb.finish())
}

/// Runs one replication of `spec` and also returns the wall time of the event
/// loop alone (set-up and result collection excluded), for benchmarks.
pub fn run_timed(
    spec: &RunSpec,
    replication: u32,
) -> Result<(RunResult, std::time::Duration), SpecError> {
    let mut tb = Testbed::new(spec, replication)?;
    let t0 = std::time::Instant::now();
    tb.run();
    let wall = t0.elapsed();
    Ok((tb.finish(), wall))
}

/// Checks that `spec` can run: algorithms known and parameters valid, messages fit
/// the MTU, rates positive.
pub fn validate(spec: &RunSpec) -> Result<(), SpecError> {
    let n = &spec.network;
    if n.uplink_bps == 0 || n.downlink_bps == 0 {
        return Err(SpecError(
            "network: link rates must be greater than 0".into(),
        ));
    }
    if n.mtu < IPV4_HEADER + UDP_HEADER + 4 || n.mtu > 296 {
        return Err(SpecError(format!(
            "network.mtu: expected 32..=296 bytes, found {}",
            n.mtu
        )));
    }
    let [lo, hi] = n.path_delay_ms;
    if !(lo >= 0.0 && hi >= lo && hi.is_finite()) {
        return Err(SpecError(
            "network.path_delay_ms: expected [lo, hi] with 0 <= lo <= hi".into(),
        ));
    }
    if !(n.uplink_delay_ms >= 0.0 && n.downlink_delay_ms >= 0.0) {
        return Err(SpecError("network: delays must be >= 0".into()));
    }
    let any_tcp = spec.groups.iter().any(|g| is_tcp(&g.algorithm));
    let any_udp = spec.groups.iter().any(|g| !is_tcp(&g.algorithm));
    let largest = IPV4_HEADER + UDP_HEADER + 4 + 8 + 1 + spec.coap.response_payload + 8;
    if any_udp && largest > n.mtu {
        return Err(SpecError(format!(
            "coap.response_payload: {} bytes do not fit the {}-byte MTU with headers",
            spec.coap.response_payload, n.mtu
        )));
    }
    if any_tcp {
        // The MSS is the MTU less 40 bytes of IPv4 and TCP headers; the response
        // must fit the client's Max-Message-Size (RFC 8323 base value 1152).
        if n.mtu < 48 {
            return Err(SpecError(format!(
                "network.mtu: CoAP over TCP needs at least 48 bytes, found {}",
                n.mtu
            )));
        }
        let frame = coapcc_proto::tcp::frame_len(0, &[], &vec![0; spec.coap.response_payload]);
        if frame > 1152 {
            return Err(SpecError(format!(
                "coap.response_payload: a {frame}-byte response exceeds the 1152-byte \
                 Max-Message-Size of CoAP over TCP"
            )));
        }
    }
    if spec.coap.path.len() > 200 {
        return Err(SpecError(
            "coap.path: expected at most 200 characters".into(),
        ));
    }
    if spec.groups.is_empty() || spec.groups.iter().all(|g| g.clients == 0) {
        return Err(SpecError("the population has no clients".into()));
    }
    for g in &spec.groups {
        crate::client_factory::check(&g.algorithm)?;
        let [a, b] = g.workload.batch;
        if g.workload.kind == WorkloadKind::Random && (a == 0 || b < a) {
            return Err(SpecError(
                "workload.batch: expected [lo, hi] with 1 <= lo <= hi".into(),
            ));
        }
        if g.workload.exchanges == 0 {
            return Err(SpecError("workload.exchanges: expected at least 1".into()));
        }
    }
    Ok(())
}

struct Testbed<'a> {
    spec: &'a RunSpec,
    now: Nanos,
    events: Agenda<Event>,
    processed: u64,
    packets: PacketPool,
    links: [Link; 2],
    to_server: Path,
    to_router: Path,
    /// UDP clients; their address in packets is their index here.
    clients: Vec<SimClient>,
    /// The global index of each UDP client.
    udp_global: Vec<u32>,
    /// Every client in global order.
    order: Vec<Slot>,
    tcp: TcpWorld,
    server: Server<u32, FixedPayload>,
    histograms: Vec<Vec<u64>>,
    unfinished: usize,
    buf: [u8; MAX_DATAGRAM],
    conservation: Conservation,
    tap: Option<&'a mut dyn Tap>,
}

impl<'a> Testbed<'a> {
    fn new(spec: &'a RunSpec, replication: u32) -> Result<Self, SpecError> {
        validate(spec)?;
        let seed = derive(spec.seed, Stream::Replication, u64::from(replication));
        let n = &spec.network;
        let link = |dir: Dir, rate_bps, delay_ms: f64| Link {
            rate_bps,
            delay: from_secs(delay_ms / 1000.0),
            limit: n.buffer.limit(),
            queue: VecDeque::with_capacity(1024),
            queued_bytes: 0,
            sending: None,
            errors: LinkErrors::new(
                n.errors,
                derive(seed, Stream::ErrorState, dir as u64),
                derive(seed, Stream::ErrorLoss, dir as u64),
            ),
            record: LinkRecord::default(),
            busy: 0,
        };
        let path = |dir: Dir| Path {
            lo: from_secs(n.path_delay_ms[0] / 1000.0),
            hi: from_secs(n.path_delay_ms[1] / 1000.0),
            last_arrival: 0,
            rng: SimRng::new(derive(seed, Stream::PathJitter, dir as u64)),
        };
        let mut clients = Vec::new();
        let mut udp_global = Vec::new();
        let mut order = Vec::new();
        let mut tcp = TcpWorld::new(
            n.mtu,
            &spec.coap.path,
            spec.coap.response_payload,
            spec.groups.len(),
        );
        for (gi, g) in spec.groups.iter().enumerate() {
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
                    clients.push(new_client(spec, g, gi as u32, seed)?);
                }
            }
        }
        let server = Server::new(
            ServerConfig::default(),
            FixedPayload {
                size: spec.coap.response_payload,
            },
        );
        let unfinished = order.len();
        Ok(Testbed {
            spec,
            now: 0,
            events: Agenda::new(LANES, 4 * order.len() + 64),
            processed: 0,
            packets: PacketPool::default(),
            links: [
                link(Dir::Up, n.uplink_bps, n.uplink_delay_ms),
                link(Dir::Down, n.downlink_bps, n.downlink_delay_ms),
            ],
            to_server: path(Dir::Up),
            to_router: path(Dir::Down),
            clients,
            udp_global,
            order,
            tcp,
            server,
            histograms: vec![Vec::new(); spec.groups.len()],
            unfinished,
            buf: [0; MAX_DATAGRAM],
            conservation: Conservation::default(),
            tap: None,
        })
    }

    /// Schedules `ev`; every kind but client timers is monotone in time and
    /// goes into its own FIFO lane.
    fn schedule(&mut self, at: Nanos, ev: Event) {
        match ev {
            Event::ClientTimer(_) | Event::TcpTimer(_) => self.events.push(at, ev),
            Event::TxDone(d) => self.events.push_lane(LANE_TX + d as usize, at, ev),
            Event::RouterFromServer(_) => self.events.push_lane(LANE_ROUTER, at, ev),
            Event::AtServer(_) => self.events.push_lane(LANE_SERVER, at, ev),
            Event::AtClient(_) => self.events.push_lane(LANE_CLIENT, at, ev),
        }
    }

    fn run(&mut self) {
        // Decision (testbed.md §1.3): all clients start at time 0, in index order.
        // Continuous TCP clients set up their connection first (transport-tcp.md
        // §2); then time 0 of the workload is when the last of them is ready.
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
        while self.unfinished > 0 {
            let Some((at, ev)) = self.events.pop() else {
                break;
            };
            self.now = at;
            self.processed += 1;
            match ev {
                Event::ClientTimer(c) => {
                    let c = c as usize;
                    if self.clients[c].timer_queued == Some(at) {
                        self.clients[c].timer_queued = None;
                        self.clients[c].coap.handle_timeout(at);
                        self.service(c);
                    }
                }
                Event::TxDone(d) => self.tx_done(if d == 0 { Dir::Up } else { Dir::Down }),
                Event::RouterFromServer(p) => self.enqueue(Dir::Down, p),
                Event::AtServer(p) => self.at_server(p),
                Event::AtClient(p) => self.at_client(p),
                Event::TcpTimer(ep) => self.tcp_timer(ep),
            }
        }
    }

    /// Starts every client's workload now, in index order.
    fn start_all(&mut self) {
        let now = self.now;
        for i in 0..self.order.len() {
            match self.order[i] {
                Slot::Udp(c) => {
                    self.start_next(c as usize, now);
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

    /// IP bytes of packet `p` on the wire.
    #[inline]
    fn ip_len(&self, p: PacketId) -> u64 {
        if p & TCP_PACKET == 0 {
            u64::from(self.packets.get(p).ip_len)
        } else {
            self.tcp_ip_len(p)
        }
    }

    #[cold]
    #[inline(never)]
    fn tcp_ip_len(&self, p: PacketId) -> u64 {
        self.tcp.ip_len(p & !TCP_PACKET)
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
                tap.tcp(self.now, self.tcp.seg_client(id), what);
            }
            self.conservation.sent += 1;
            self.enqueue(Dir::Up, id | TCP_PACKET);
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
                tap.tcp(self.now, self.tcp.seg_client(id), what);
            }
            self.conservation.sent += 1;
            let at = self.to_router.arrival(self.now);
            self.schedule(at, Event::RouterFromServer(id | TCP_PACKET));
        }
        down.clear();
        self.tcp.out_down = down;
        let mut timers = std::mem::take(&mut self.tcp.out_timers);
        for &(at, ep) in &timers {
            self.schedule(at, Event::TcpTimer(ep));
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

    /// A TCP endpoint's timer event.
    #[cold]
    #[inline(never)]
    fn tcp_timer(&mut self, ep: u32) {
        self.tcp.timer(self.now, ep);
        self.drain_tcp();
    }

    /// A TCP segment reached its endpoint (the server or its client).
    #[cold]
    #[inline(never)]
    fn tcp_arrival(&mut self, p: PacketId) {
        self.conservation.delivered += 1;
        let id = p & !TCP_PACKET;
        let to_server = self.tcp.to_server(id);
        if let Some(tap) = self.tap.as_mut() {
            let seg = self.tcp.seg(id);
            tap.tcp(
                self.now,
                self.tcp.seg_client(id),
                TcpTrace::Arrived { to_server, seg },
            );
        }
        let dup_bytes = self.tcp.deliver(self.now, id);
        let dir = if to_server { Dir::Up } else { Dir::Down };
        self.links[dir as usize].record.unnecessary_bytes += dup_bytes;
        self.drain_tcp();
    }

    /// A packet enters a bottleneck direction.
    fn enqueue(&mut self, dir: Dir, p: PacketId) {
        let size = self.ip_len(p);
        let link = &mut self.links[dir as usize];
        if link.sending.is_none() {
            self.start_tx(dir, p, size);
        } else if link.limit.is_some_and(|l| link.queued_bytes + size > l) {
            link.record.dropped_buffer += 1;
            self.conservation.dropped += 1;
            self.release(p);
        } else {
            link.queued_bytes += size;
            link.queue.push_back(p);
        }
    }

    /// Starts serialising packet `p` of `size` IP bytes.
    #[inline]
    fn start_tx(&mut self, dir: Dir, p: PacketId, size: u64) {
        let size = size as usize;
        let link = &mut self.links[dir as usize];
        let t = serialisation(size, link.rate_bps);
        link.sending = Some(p);
        link.busy += t;
        let at = self.now + t;
        self.schedule(at, Event::TxDone(dir as u8));
    }

    fn tx_done(&mut self, dir: Dir) {
        let p = self.links[dir as usize]
            .sending
            .take()
            .expect("a packet was being serialised");
        // TCP segments are never marked at sending: their receiver counts copies.
        let (ip_len, unnecessary) = if p & TCP_PACKET == 0 {
            let packet = self.packets.get(p);
            (u64::from(packet.ip_len), packet.unnecessary)
        } else {
            (self.tcp_ip_len(p), false)
        };
        let link = &mut self.links[dir as usize];
        link.record.packets += 1;
        link.record.bytes += ip_len;
        if unnecessary {
            link.record.unnecessary_bytes += ip_len;
        }
        if link.errors.loses(self.now) {
            link.record.dropped_error += 1;
            self.conservation.dropped += 1;
            self.release(p);
        } else {
            let at = self.now + link.delay;
            match dir {
                // The router forwards at once onto the path to the server; the
                // path's delay is drawn here, in the order packets reach the
                // router (the uplink is FIFO with a constant delay).
                Dir::Up => {
                    let at = self.to_server.arrival(at);
                    self.schedule(at, Event::AtServer(p));
                }
                Dir::Down => self.schedule(at, Event::AtClient(p)),
            }
        }
        let link = &mut self.links[dir as usize];
        if let Some(next) = link.queue.pop_front() {
            let size = self.ip_len(next);
            self.links[dir as usize].queued_bytes -= size;
            self.start_tx(dir, next, size);
        }
    }

    fn at_server(&mut self, p: PacketId) {
        if p & TCP_PACKET != 0 {
            return self.tcp_arrival(p);
        }
        self.conservation.delivered += 1;
        let packet = &self.packets.slots[p as usize];
        let (src, ip_len) = (packet.src, packet.ip_len);
        let out = self.server.handle_datagram(
            self.now,
            src,
            &packet.data[..packet.len as usize],
            &mut self.buf,
        );
        self.packets.release(p);
        if let ServerOutput::Reply { len, duplicate } = out {
            if duplicate {
                self.links[Dir::Up as usize].record.unnecessary_bytes += u64::from(ip_len);
            }
            if let Some(tap) = self.tap.as_mut() {
                let dst = self.udp_global[src as usize];
                tap.packet(self.now, SERVER, dst, &self.buf[..len]);
            }
            let reply = self.packets.alloc(SERVER, src, &self.buf[..len]);
            self.packets.slots[reply as usize].unnecessary = duplicate;
            self.conservation.sent += 1;
            let at = self.to_router.arrival(self.now);
            self.schedule(at, Event::RouterFromServer(reply));
        }
    }

    fn at_client(&mut self, p: PacketId) {
        if p & TCP_PACKET != 0 {
            return self.tcp_arrival(p);
        }
        self.conservation.delivered += 1;
        let packet = &self.packets.slots[p as usize];
        let c = packet.dst as usize;
        self.clients[c]
            .coap
            .handle_datagram(self.now, SERVER, &packet.data[..packet.len as usize]);
        self.packets.release(p);
        self.service(c);
    }

    /// Starts the client's next exchange (and a new batch if one is due).
    fn start_next(&mut self, c: usize, now: Nanos) {
        let spec = self.spec;
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
        let req = Request {
            method: Code::GET,
            path: &spec.coap.path,
            payload: &[],
            confirmable: true,
        };
        cl.coap
            .request(now, SERVER, &req)
            .expect("a stop-and-wait client always has room for its next request");
    }

    /// Drains a client's transmissions and events, and re-arms its timer.
    fn service(&mut self, c: usize) {
        while let Some(tx) = self.clients[c].coap.poll_transmit(&mut self.buf) {
            let cl = &mut self.clients[c];
            if cl.started.is_none() {
                cl.started = Some(self.now);
            }
            if tx.ordinal > 0 {
                cl.record.retransmissions += 1;
            }
            if let Some(tap) = self.tap.as_mut() {
                let src = self.udp_global[c];
                tap.packet(self.now, src, SERVER, &self.buf[..tx.len]);
            }
            let p = self.packets.alloc(c as u32, SERVER, &self.buf[..tx.len]);
            self.conservation.sent += 1;
            self.enqueue(Dir::Up, p);
        }
        let mut exchange_ended = false;
        while let Some(ev) = self.clients[c].coap.poll_event() {
            let cl = &mut self.clients[c];
            match ev {
                ClientEvent::Response {
                    retransmissions,
                    elapsed,
                    ..
                } => {
                    cl.record.completed += 1;
                    cl.record.rtt_sum += to_secs(elapsed);
                    let h = &mut self.histograms[cl.group as usize];
                    let n = retransmissions as usize;
                    if h.len() <= n {
                        h.resize(n + 1, 0);
                    }
                    h[n] += 1;
                    exchange_ended = true;
                }
                ClientEvent::Failed { .. } => {
                    cl.record.failed += 1;
                    exchange_ended = true;
                }
                ClientEvent::TimerExpired { timer, .. } => {
                    cl.record.expirations += 1;
                    cl.record.max_expired_timer = cl.record.max_expired_timer.max(timer);
                }
                ClientEvent::DuplicateResponse { .. } => cl.record.unnecessary += 1,
                _ => {}
            }
        }
        if exchange_ended {
            let cl = &mut self.clients[c];
            if cl.remaining == 0 {
                if !cl.finished {
                    cl.finished = true;
                    cl.record.fct = Some(to_secs(self.now - cl.started.unwrap_or(0)));
                    self.unfinished -= 1;
                }
            } else {
                self.start_next(c, self.now);
                return self.service(c);
            }
        }
        let deadline = self.clients[c].coap.poll_timeout();
        let cl = &mut self.clients[c];
        if let Some(t) = deadline.filter(|_| deadline != cl.timer_queued) {
            cl.timer_queued = deadline;
            let at = t.max(self.now);
            self.schedule(at, Event::ClientTimer(c as u32));
        }
    }

    fn finish(mut self) -> RunResult {
        // Count what is still in the network, independently of the counters.
        let mut in_flight = 0u64;
        for link in &self.links {
            in_flight += link.queue.len() as u64 + u64::from(link.sending.is_some());
        }
        for ev in self.events.pending() {
            if matches!(
                ev,
                Event::RouterFromServer(_) | Event::AtServer(_) | Event::AtClient(_)
            ) {
                in_flight += 1;
            }
        }
        self.conservation.in_flight = in_flight;
        assert!(
            self.conservation.holds(),
            "packet conservation violated: {:?}",
            self.conservation
        );
        let mut tcp_records = self.tcp.finish().into_iter();
        let mut clients = Vec::with_capacity(self.order.len());
        for slot in &self.order {
            match *slot {
                Slot::Udp(c) => {
                    let cl = &mut self.clients[c as usize];
                    cl.record.spurious_detected = cl
                        .coap
                        .algorithm(SERVER)
                        .map_or(0, |a| a.spurious_detected() as u32);
                    clients.push(std::mem::take(&mut cl.record));
                }
                Slot::Tcp(_) => clients.push(tcp_records.next().expect("one per TCP client")),
            }
        }
        for (h, t) in self.histograms.iter_mut().zip(&self.tcp.histograms) {
            if h.len() < t.len() {
                h.resize(t.len(), 0);
            }
            for (a, b) in h.iter_mut().zip(t) {
                *a += b;
            }
        }
        let [mut up, mut down] = [LinkRecord::default(), LinkRecord::default()];
        for (link, out) in self.links.iter().zip([&mut up, &mut down]) {
            *out = link.record.clone();
            out.busy = to_secs(link.busy);
        }
        RunResult {
            clients,
            histograms: self.histograms,
            uplink: up,
            downlink: down,
            duration: to_secs(self.now),
            events: self.processed,
            conservation: self.conservation,
        }
    }
}

fn new_client(spec: &RunSpec, g: &Group, group: u32, seed: u64) -> Result<SimClient, SpecError> {
    let mut rng = SimRng::new(seed);
    let coap_rng = SimRng::new(rng.next_u64());
    let first_mid = rng.next_u64() as u16;
    let config = ClientConfig {
        max_retransmit: spec.coap.max_retransmit,
        ..ClientConfig::default()
    };
    let coap = crate::client_factory::client(&g.algorithm, config, coap_rng, first_mid)?;
    Ok(SimClient {
        coap,
        group,
        kind: g.workload.kind,
        batch: g.workload.batch,
        remaining: g.workload.exchanges,
        batch_left: 0,
        rng,
        started: None,
        timer_queued: None,
        finished: false,
        record: ClientRecord {
            group,
            ..ClientRecord::default()
        },
    })
}
