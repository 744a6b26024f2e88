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

use std::collections::VecDeque;

use coapcc_proto::client::{Client, ClientConfig, ClientEvent, Request};
use coapcc_proto::message::Code;
use coapcc_proto::server::{FixedPayload, Server, ServerConfig, ServerOutput};

use crate::agenda::Agenda;
use crate::config::{Group, RunSpec, WorkloadKind};
use crate::link_errors::LinkErrors;
use crate::metrics::{ClientRecord, Conservation, LinkRecord, RunResult};
use crate::rng::{derive, SimRng, Stream};
use crate::time::{from_secs, serialisation, to_secs, Nanos};

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

type PacketId = u32;

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
        let d = self.lo + ((self.hi - self.lo) as f64 * self.rng.uniform()).round() as Nanos;
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
    let largest = IPV4_HEADER + UDP_HEADER + 4 + 8 + 1 + spec.coap.response_payload + 8;
    if largest > n.mtu {
        return Err(SpecError(format!(
            "coap.response_payload: {} bytes do not fit the {}-byte MTU with headers",
            spec.coap.response_payload, n.mtu
        )));
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
    clients: Vec<SimClient>,
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
        for (gi, g) in spec.groups.iter().enumerate() {
            for _ in 0..g.clients {
                let index = clients.len() as u64;
                clients.push(new_client(
                    spec,
                    g,
                    gi as u32,
                    derive(seed, Stream::Client, index),
                )?);
            }
        }
        let server = Server::new(
            ServerConfig::default(),
            FixedPayload {
                size: spec.coap.response_payload,
            },
        );
        let unfinished = clients.len();
        Ok(Testbed {
            spec,
            now: 0,
            events: Agenda::new(LANES, 4 * clients.len() + 64),
            processed: 0,
            packets: PacketPool::default(),
            links: [
                link(Dir::Up, n.uplink_bps, n.uplink_delay_ms),
                link(Dir::Down, n.downlink_bps, n.downlink_delay_ms),
            ],
            to_server: path(Dir::Up),
            to_router: path(Dir::Down),
            clients,
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
            Event::ClientTimer(_) => self.events.push(at, ev),
            Event::TxDone(d) => self.events.push_lane(LANE_TX + d as usize, at, ev),
            Event::RouterFromServer(_) => self.events.push_lane(LANE_ROUTER, at, ev),
            Event::AtServer(_) => self.events.push_lane(LANE_SERVER, at, ev),
            Event::AtClient(_) => self.events.push_lane(LANE_CLIENT, at, ev),
        }
    }

    fn run(&mut self) {
        // Decision (testbed.md §1.3): all clients start at time 0, in index order.
        for c in 0..self.clients.len() {
            self.start_next(c, 0);
            self.service(c);
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
            }
        }
    }

    /// A packet enters a bottleneck direction.
    fn enqueue(&mut self, dir: Dir, p: PacketId) {
        let size = u64::from(self.packets.get(p).ip_len);
        let link = &mut self.links[dir as usize];
        if link.sending.is_none() {
            self.start_tx(dir, p);
        } else if link.limit.is_some_and(|l| link.queued_bytes + size > l) {
            link.record.dropped_buffer += 1;
            self.conservation.dropped += 1;
            self.packets.release(p);
        } else {
            link.queued_bytes += size;
            link.queue.push_back(p);
        }
    }

    fn start_tx(&mut self, dir: Dir, p: PacketId) {
        let size = self.packets.get(p).ip_len as usize;
        let link = &mut self.links[dir as usize];
        let t = serialisation(size, link.rate_bps);
        link.sending = Some(p);
        link.busy += t;
        let at = self.now + t;
        self.schedule(at, Event::TxDone(dir as u8));
    }

    fn tx_done(&mut self, dir: Dir) {
        let link = &mut self.links[dir as usize];
        let p = link.sending.take().expect("a packet was being serialised");
        let packet = self.packets.get(p);
        link.record.packets += 1;
        link.record.bytes += u64::from(packet.ip_len);
        if packet.unnecessary {
            link.record.unnecessary_bytes += u64::from(packet.ip_len);
        }
        if link.errors.loses(self.now) {
            link.record.dropped_error += 1;
            self.conservation.dropped += 1;
            self.packets.release(p);
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
            link.queued_bytes -= u64::from(self.packets.get(next).ip_len);
            self.start_tx(dir, next);
        }
    }

    fn at_server(&mut self, p: PacketId) {
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
                tap.packet(self.now, SERVER, src, &self.buf[..len]);
            }
            let reply = self.packets.alloc(SERVER, src, &self.buf[..len]);
            self.packets.slots[reply as usize].unnecessary = duplicate;
            self.conservation.sent += 1;
            let at = self.to_router.arrival(self.now);
            self.schedule(at, Event::RouterFromServer(reply));
        }
    }

    fn at_client(&mut self, p: PacketId) {
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
        loop {
            let Some(tx) = self.clients[c].coap.poll_transmit(&mut self.buf) else {
                break;
            };
            let cl = &mut self.clients[c];
            if cl.started.is_none() {
                cl.started = Some(self.now);
            }
            if tx.ordinal > 0 {
                cl.record.retransmissions += 1;
            }
            if let Some(tap) = self.tap.as_mut() {
                tap.packet(self.now, c as u32, SERVER, &self.buf[..tx.len]);
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
        if deadline.is_some() && deadline != cl.timer_queued {
            cl.timer_queued = deadline;
            let at = deadline.unwrap().max(self.now);
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
        let mut clients = Vec::with_capacity(self.clients.len());
        for cl in &mut self.clients {
            cl.record.spurious_detected = cl
                .coap
                .algorithm(SERVER)
                .map_or(0, |a| a.spurious_detected() as u32);
            clients.push(std::mem::take(&mut cl.record));
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
