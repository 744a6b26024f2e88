//! The pCoCoA evaluation (spec `testbed.md` §2–4, `radio.md` §1.7): CoAP
//! clients on the nodes of the 802.15.4 grid of [`coapcc_link::grid`], one
//! CoAP server, periodic clients and bursty interferers, and the paper's
//! metrics.
//!
//! - Every node but the border router and the server runs a client. After a
//!   warm-up (when the paper's RPL formed its tree; ours is static) each
//!   periodic client starts at a random offset in [0, T) and generates a
//!   Confirmable POST every T seconds. A client holds at most `app_buffer`
//!   requests, the one in flight included (Erbium's open transactions); a
//!   request that finds them all taken is dropped at the client. NSTART 1:
//!   the next held request is sent when the current one completes or fails.
//! - Bursty interferers alternate OFF and ON periods: after a random offset in
//!   [0, OFF) they send back to back for ON seconds, then stay silent for OFF
//!   seconds, and so on; they run their own algorithm (the paper: Default
//!   CoAP with ACK_TIMEOUT 1 s, ACK_RANDOM_FACTOR 1, MAX_RETRANSMIT 1).
//! - The server answers every request with a piggybacked 2.04 Changed.
//! - The run ends `duration` seconds after the warm-up; what is still in
//!   flight then is not counted.

use coapcc_link::agenda::Agenda;
use coapcc_link::grid::{self, FrameTrace, Grid, NodeRecord};
use coapcc_link::rng::{derive, SimRng, Stream};
use coapcc_link::time::{from_secs, to_secs, Nanos};
use coapcc_link::{Datagram, Network, Output, PacketId};
use coapcc_proto::client::{Client, ClientConfig, ClientEvent, Request};
use coapcc_proto::message::{Code, MessageView};
use coapcc_proto::server::{DenseIndex, Handler, Response, Server, ServerConfig, ServerOutput};
use coapcc_workload::metrics::Conservation;
use coapcc_workload::AlgorithmSpec;
use serde::{Deserialize, Serialize};

use crate::spec_error::SpecError;

/// Largest CoAP message a grid packet carries (marking included).
pub const MAX_MESSAGE: usize = 512;

/// CoAP settings of the grid (the pCoCoA paper, Table II).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GridCoap {
    /// Bytes of a request message (header, options, payload), before any
    /// marking an algorithm adds (the TC option of pCoCoA).
    pub request_size: usize,
    /// Uri-Path of the requests.
    pub path: String,
    /// Payload bytes of the server's 2.04 response.
    pub response_payload: usize,
    /// MAX_RETRANSMIT of the clients under test.
    pub max_retransmit: u8,
    /// Requests a client holds, the one in flight included.
    pub app_buffer: u32,
}

impl Default for GridCoap {
    fn default() -> Self {
        GridCoap {
            request_size: 95,
            path: "sense".into(),
            response_payload: 0,
            max_retransmit: 4,
            app_buffer: 4,
        }
    }
}

/// What the clients do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum GridWorkloadKind {
    /// Every client sends one request every `period_s`.
    #[default]
    Periodic,
    /// The `interferers` send in ON/OFF bursts; the others periodically.
    Bursty,
}

impl GridWorkloadKind {
    /// The name.
    pub fn name(self) -> &'static str {
        match self {
            GridWorkloadKind::Periodic => "periodic",
            GridWorkloadKind::Bursty => "bursty",
        }
    }
}

/// The grid's workload (spec `testbed.md` §2, §4).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GridWorkload {
    /// Periodic or bursty.
    pub kind: GridWorkloadKind,
    /// Request period of the periodic clients (s).
    pub period_s: f64,
    /// Time for the network to form before any client sends (s).
    pub warmup_s: f64,
    /// Traffic time after the warm-up (s).
    pub duration_s: f64,
    /// Bursty: the interfering nodes.
    pub interferers: Vec<u32>,
    /// Bursty: ON period (s).
    pub on_s: f64,
    /// Bursty: OFF period (s).
    pub off_s: f64,
    /// Bursty: the interferers' algorithm.
    pub interferer: AlgorithmSpec,
    /// Bursty: the interferers' MAX_RETRANSMIT.
    pub interferer_max_retransmit: u8,
    /// A node whose RTO and RTT samples are traced (none by default).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace_node: Option<u32>,
}

impl Default for GridWorkload {
    fn default() -> Self {
        GridWorkload {
            kind: GridWorkloadKind::Periodic,
            period_s: 10.0,
            warmup_s: 60.0,
            duration_s: 800.0,
            interferers: vec![2, 8, 15, 32, 34],
            on_s: 60.0,
            off_s: 120.0,
            interferer: AlgorithmSpec {
                ack_timeout: Some(1.0),
                ack_random_factor: Some(1.0),
                ..AlgorithmSpec::named("default")
            },
            interferer_max_retransmit: 1,
            trace_node: None,
        }
    }
}

/// One run on the grid: everything but the replication index.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GridRunSpec {
    /// The network.
    pub network: grid::Config,
    /// CoAP settings.
    pub coap: GridCoap,
    /// The workload.
    pub workload: GridWorkload,
    /// The algorithm of the clients (the periodic ones, in bursty runs).
    pub algorithm: AlgorithmSpec,
    /// The seed; each replication derives its own.
    pub seed: u64,
}

/// What a node is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The border router.
    Root,
    /// The CoAP server.
    Server,
    /// A client under test.
    Client,
    /// A bursty interferer.
    Interferer,
}

/// What one node did in one run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GridNodeResult {
    /// Its number.
    pub node: u32,
    /// Its role.
    pub role: Role,
    /// Requests its application generated.
    pub generated: u64,
    /// Requests dropped because its application buffer was full.
    pub app_drops: u64,
    /// Requests sent at least once.
    pub sent: u64,
    /// CoAP transmissions (originals and retransmissions).
    pub transmissions: u64,
    /// Exchanges that completed with a response.
    pub completed: u64,
    /// Exchanges abandoned.
    pub failed: u64,
    /// Transmissions of the exchanges that completed.
    pub completed_transmissions: u64,
    /// Acknowledgements (responses) received, duplicates included.
    pub acks: u64,
    /// Distinct requests of this node the server received.
    pub carried: u64,
    /// Sum of the RTT samples E of completed exchanges (s).
    pub rtt_sum: f64,
    /// Its MAC and 6LoWPAN counters.
    pub mac: NodeRecord,
}

/// One traced event of the trace node.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct TracePoint {
    /// Seconds since the start of the run.
    pub t: f64,
    /// `rto`: the first timer of an exchange; `backoff`: a later one;
    /// `rtt`: the RTT sample E of a completed exchange.
    pub kind: TraceKind,
    /// Seconds.
    pub value: f64,
    /// Retransmissions of the exchange so far.
    pub retransmissions: u8,
}

/// What a [`TracePoint`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TraceKind {
    /// The timer armed for an original transmission.
    Rto,
    /// A timer armed for a retransmission.
    Backoff,
    /// An RTT sample.
    Rtt,
}

/// The outcome of one replication on the grid.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GridRunResult {
    /// Per node, in node order.
    pub nodes: Vec<GridNodeResult>,
    /// Datagrams the network dropped, by cause.
    pub drops: grid::DropCounts,
    /// Frames put on the air, and receptions destroyed by overlaps.
    pub frames: u64,
    /// Receptions destroyed by overlaps.
    pub collisions: u64,
    /// The traffic window (s).
    pub duration: f64,
    /// Bytes of a request (before marking).
    pub request_size: usize,
    /// Events processed.
    pub events: u64,
    /// Datagrams handed to the network = delivered + dropped + in flight.
    pub conservation: Conservation,
    /// The trace node's RTO and RTT samples.
    pub trace: Vec<TracePoint>,
}

/// Sees every frame the grid puts on the air (e.g. to write a pcap).
pub trait GridTap {
    /// `coap` is the datagram's CoAP message (empty for acknowledgements).
    fn frame(&mut self, frame: &FrameTrace, coap: &[u8]);
}

/// Answers every POST or PUT with 2.04 Changed, every GET with 2.05 and
/// `payload` bytes (a sink, as the pCoCoA server).
struct Sink {
    payload: usize,
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

/// Checks that `spec` can run.
pub fn validate(spec: &GridRunSpec) -> Result<(), SpecError> {
    let topo = spec.network.validate().map_err(SpecError)?;
    let n = topo.len() as u32;
    let (root, server) = (spec.network.root, spec.network.server);
    if root == server {
        return Err(SpecError(
            "network.server: expected a node other than the root".into(),
        ));
    }
    let w = &spec.workload;
    let positive = |v: f64| v > 0.0 && v.is_finite() && v <= 1e7;
    if !positive(w.period_s) {
        return Err(SpecError(format!(
            "workload.period_s: expected a positive period up to 1e7 s, found {}",
            w.period_s
        )));
    }
    if !((0.0..=1e7).contains(&w.warmup_s) && positive(w.duration_s)) {
        return Err(SpecError(
            "workload.warmup_s, workload.duration_s: expected 0 ≤ warm-up, 0 < duration, both ≤ 1e7 s"
                .into(),
        ));
    }
    if w.kind == GridWorkloadKind::Bursty {
        if !positive(w.on_s) || !positive(w.off_s) {
            return Err(SpecError(
                "workload.on_s, workload.off_s: expected positive durations up to 1e7 s".into(),
            ));
        }
        for &i in &w.interferers {
            if i == 0 || i > n || i == root || i == server {
                return Err(SpecError(format!(
                    "workload.interferers: node {i} is not a client (nodes 1 to {n}, not the root {root} or the server {server})"
                )));
            }
        }
        check_algorithm(&w.interferer, "workload.interferer")?;
    }
    if let Some(t) = w.trace_node {
        if t == 0 || t > n || t == root || t == server {
            return Err(SpecError(format!(
                "workload.trace_node: node {t} is not a client"
            )));
        }
    }
    check_algorithm(&spec.algorithm, "algorithm")?;
    let c = &spec.coap;
    if c.app_buffer == 0 {
        return Err(SpecError("coap.app_buffer: expected at least 1".into()));
    }
    if c.path.len() > 64 {
        return Err(SpecError(
            "coap.path: expected at most 64 characters".into(),
        ));
    }
    let base = request_base(&c.path);
    let largest = grid::sixlowpan::max_coap(spec.network.addressing, spec.network.hop_by_hop)
        .min(MAX_MESSAGE - 16);
    if c.request_size < base || c.request_size > largest {
        return Err(SpecError(format!(
            "coap.request_size: expected {base} to {largest} bytes (a POST to `{}` with no payload is {base}), found {}",
            c.path, c.request_size
        )));
    }
    if c.response_payload > 64 {
        return Err(SpecError(
            "coap.response_payload: expected at most 64 bytes".into(),
        ));
    }
    Ok(())
}

fn check_algorithm(a: &AlgorithmSpec, field: &str) -> Result<(), SpecError> {
    if a.is_tcp() {
        return Err(SpecError(format!(
            "{field}: CoAP over TCP does not run on the grid (it has no TCP); use a CoAP algorithm"
        )));
    }
    a.check().map_err(|e| SpecError(format!("{field}: {e}")))
}

/// Bytes of a POST to `path` with no payload and no marking.
fn request_base(path: &str) -> usize {
    let mut c = probe_client();
    let req = Request {
        method: Code::POST,
        path,
        payload: &[],
        confirmable: true,
    };
    c.request(0, 0, &req).expect("a probe request encodes");
    let mut buf = [0u8; 1200];
    c.poll_transmit(&mut buf).expect("the probe is sent").len
}

fn probe_client() -> Client<u32, SimRng> {
    let factory = AlgorithmSpec::named("default")
        .factory()
        .expect("default CoAP exists");
    Client::new(ClientConfig::default(), factory, SimRng::new(0), 0)
}

/// The request payload that makes a request `size` bytes long: the base
/// message, a payload marker and the payload.
fn request_payload(coap: &GridCoap) -> Vec<u8> {
    let base = request_base(&coap.path);
    let n = coap.request_size.saturating_sub(base + 1);
    vec![b'p'; n]
}

/// Runs one replication of `spec`, stopping early with
/// an error (`cancelled after N events`) once `stop` is set.
pub fn run_stoppable(
    spec: &GridRunSpec,
    replication: u32,
    stop: &std::sync::atomic::AtomicBool,
) -> Result<GridRunResult, SpecError> {
    let mut w = World::new(spec, replication)?;
    w.stop = stop;
    w.run();
    crate::stop::check(stop, w.processed)?;
    Ok(w.finish())
}

/// Runs one replication of `spec`.
pub fn run(spec: &GridRunSpec, replication: u32) -> Result<GridRunResult, SpecError> {
    let mut w = World::new(spec, replication)?;
    w.run();
    Ok(w.finish())
}

/// Runs one replication, timing its event loop alone (for benchmarks).
pub fn run_timed(
    spec: &GridRunSpec,
    replication: u32,
) -> Result<(GridRunResult, std::time::Duration), SpecError> {
    let mut w = World::new(spec, replication)?;
    let t0 = std::time::Instant::now();
    w.run();
    let wall = t0.elapsed();
    Ok((w.finish(), wall))
}

/// Runs one replication, showing every frame on the air to `tap`.
pub fn run_with_tap(
    spec: &GridRunSpec,
    replication: u32,
    tap: &mut dyn GridTap,
) -> Result<GridRunResult, SpecError> {
    let mut w = World::new(spec, replication)?;
    w.net.trace = Some(Vec::new());
    w.packets.keep = true;
    w.tap = Some(tap);
    w.run();
    Ok(w.finish())
}

/// A datagram the endpoints sent: its ends and the CoAP bytes.
struct Packet {
    src: u16,
    len: u16,
    data: [u8; MAX_MESSAGE],
}

/// Packets in the network, recycled (kept, when tracing, so that a frame of
/// a dropped datagram can still be written).
#[derive(Default)]
struct Packets {
    slots: Vec<Packet>,
    free: Vec<PacketId>,
    keep: bool,
}

impl Packets {
    fn alloc(&mut self, src: u16, bytes: &[u8]) -> PacketId {
        let id = match self.free.pop() {
            Some(id) => id,
            None => {
                self.slots.push(Packet {
                    src: 0,
                    len: 0,
                    data: [0; MAX_MESSAGE],
                });
                (self.slots.len() - 1) as PacketId
            }
        };
        let p = &mut self.slots[id as usize];
        p.src = src;
        p.len = bytes.len() as u16;
        p.data[..bytes.len()].copy_from_slice(bytes);
        id
    }

    fn release(&mut self, id: PacketId) {
        if !self.keep {
            self.free.push(id);
        }
    }
}

/// Timer events of the endpoints and the workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Event {
    /// A client's CoAP retransmission deadline (stale if moved).
    CoapTimer(u16),
    /// A periodic client generates a request.
    Generate(u16),
    /// An interferer switches between ON and OFF.
    Switch(u16),
    /// The end of the run.
    End,
}

/// How a client sends.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Mode {
    Periodic,
    Interferer { on: bool },
}

struct SimClient {
    node: u16,
    coap: Client<u32, SimRng>,
    rng: SimRng,
    mode: Mode,
    held: u32,
    busy: bool,
    timer_queued: Option<Nanos>,
    record: GridNodeResult,
}

struct World<'a> {
    spec: &'a GridRunSpec,
    net: Grid,
    now: Nanos,
    end: Nanos,
    running: bool,
    events: Agenda<Event>,
    processed: u64,
    /// Set from outside to stop the run ([`crate::stop`]).
    stop: &'a std::sync::atomic::AtomicBool,
    packets: Packets,
    clients: Vec<SimClient>,
    /// Client slot of each node index.
    slot_of: Vec<Option<u16>>,
    server: Server<u32, Sink, DenseIndex>,
    server_node: u16,
    payload: Vec<u8>,
    buf: [u8; MAX_MESSAGE],
    roles: Vec<Role>,
    carried: Vec<u64>,
    conservation: Conservation,
    trace_slot: Option<u16>,
    trace: Vec<TracePoint>,
    tap: Option<&'a mut dyn GridTap>,
}

impl<'a> World<'a> {
    fn new(spec: &'a GridRunSpec, replication: u32) -> Result<Self, SpecError> {
        validate(spec)?;
        let seed = derive(spec.seed, Stream::Replication, u64::from(replication));
        let net = Grid::new(&spec.network, seed).map_err(SpecError)?;
        let n = net.topology().len();
        let w = &spec.workload;
        let root = spec.network.root as usize - 1;
        let server_node = spec.network.server as usize - 1;
        let mut roles = vec![Role::Client; n];
        roles[root] = Role::Root;
        roles[server_node] = Role::Server;
        if w.kind == GridWorkloadKind::Bursty {
            for &i in &w.interferers {
                roles[i as usize - 1] = Role::Interferer;
            }
        }
        let mut clients = Vec::new();
        let mut slot_of = vec![None; n];
        for (i, role) in roles.iter().enumerate() {
            let (alg, max_retransmit, mode) = match role {
                Role::Client => (&spec.algorithm, spec.coap.max_retransmit, Mode::Periodic),
                Role::Interferer => (
                    &w.interferer,
                    w.interferer_max_retransmit,
                    Mode::Interferer { on: false },
                ),
                _ => continue,
            };
            let mut rng = SimRng::new(derive(seed, Stream::Client, i as u64));
            let coap_rng = SimRng::new(rng.next_u64());
            let first_mid = rng.next_u64() as u16;
            let config = ClientConfig {
                max_retransmit,
                max_message_size: MAX_MESSAGE,
                ..ClientConfig::default()
            };
            let factory = alg.factory().map_err(SpecError)?;
            slot_of[i] = Some(clients.len() as u16);
            clients.push(SimClient {
                node: i as u16,
                coap: Client::new(config, factory, coap_rng, first_mid),
                rng: SimRng::new(derive(seed, Stream::Workload, i as u64)),
                mode,
                held: 0,
                busy: false,
                timer_queued: None,
                record: node_result(i, *role),
            });
        }
        // Peers are node numbers (1..=n): a record each.
        let server = Server::with_index(
            ServerConfig::default(),
            Sink {
                payload: spec.coap.response_payload,
            },
            DenseIndex::with_peers(n + 1),
        );
        let trace_slot = w.trace_node.and_then(|t| slot_of[t as usize - 1]);
        let end = from_secs(w.warmup_s + w.duration_s);
        Ok(World {
            spec,
            net,
            now: 0,
            end,
            running: true,
            events: Agenda::new(0, 4 * n + 16),
            processed: 0,
            stop: &crate::stop::NEVER,
            packets: Packets::default(),
            clients,
            slot_of,
            server,
            server_node: server_node as u16,
            payload: request_payload(&spec.coap),
            buf: [0; MAX_MESSAGE],
            carried: vec![0; n],
            roles,
            conservation: Conservation::default(),
            trace_slot,
            trace: Vec::new(),
            tap: None,
        })
    }

    fn run(&mut self) {
        let w = &self.spec.workload;
        let warmup = from_secs(w.warmup_s);
        for c in 0..self.clients.len() {
            let cl = &mut self.clients[c];
            let (period, ev) = match cl.mode {
                Mode::Periodic => (w.period_s, Event::Generate(c as u16)),
                Mode::Interferer { .. } => (w.off_s, Event::Switch(c as u16)),
            };
            let offset = from_secs(period * cl.rng.uniform());
            self.events.push(warmup + offset, ev);
        }
        self.events.push(self.end, Event::End);
        while self.running {
            let net_at = self.net.next_wakeup();
            let timer_at = self.events.peek_time();
            if net_at.is_some_and(|n| timer_at.is_none_or(|t| n <= t)) {
                let (at, out) = self.net.poll(Nanos::MAX).expect("a network event is due");
                self.now = at;
                self.drain_trace();
                match out {
                    Some(Output::Delivered { id, node }) => self.delivered(id, node),
                    Some(Output::Dropped { id, .. }) => {
                        self.conservation.dropped += 1;
                        self.packets.release(id);
                    }
                    None => {}
                }
                continue;
            }
            let Some((at, ev)) = self.events.pop() else {
                break;
            };
            self.now = at;
            self.processed += 1;
            if crate::stop::due(self.processed, self.stop) {
                break;
            }
            match ev {
                Event::CoapTimer(c) => {
                    let c = usize::from(c);
                    if self.clients[c].timer_queued == Some(at) {
                        self.clients[c].timer_queued = None;
                        self.clients[c].coap.handle_timeout(at);
                        self.service(c);
                    }
                }
                Event::Generate(c) => self.generate(usize::from(c)),
                Event::Switch(c) => self.switch(usize::from(c)),
                Event::End => self.running = false,
            }
        }
    }

    /// A periodic client's tick: a new request, held or dropped.
    fn generate(&mut self, c: usize) {
        let period = from_secs(self.spec.workload.period_s);
        let cl = &mut self.clients[c];
        cl.record.generated += 1;
        if cl.held >= self.spec.coap.app_buffer {
            cl.record.app_drops += 1;
        } else {
            cl.held += 1;
            if !cl.busy {
                self.send_next(c);
            }
        }
        self.events
            .push(self.now + period, Event::Generate(c as u16));
    }

    /// An interferer switches: ON sends back to back, OFF stops.
    fn switch(&mut self, c: usize) {
        let w = &self.spec.workload;
        let cl = &mut self.clients[c];
        let Mode::Interferer { on } = cl.mode else {
            unreachable!("only interferers switch")
        };
        cl.mode = Mode::Interferer { on: !on };
        let next = if on { w.off_s } else { w.on_s };
        self.events
            .push(self.now + from_secs(next), Event::Switch(c as u16));
        if !on {
            let cl = &mut self.clients[c];
            cl.record.generated += 1;
            cl.held = 1;
            if !cl.busy {
                self.send_next(c);
            }
        }
    }

    /// Starts the client's next held request.
    fn send_next(&mut self, c: usize) {
        let cl = &mut self.clients[c];
        debug_assert!(!cl.busy && cl.held > 0);
        cl.busy = true;
        let req = Request {
            method: Code::POST,
            path: &self.spec.coap.path,
            payload: &self.payload,
            confirmable: true,
        };
        cl.coap
            .request(self.now, u32::from(self.server_node), &req)
            .expect("a client with NSTART 1 has room for its next request");
        self.service(c);
    }

    /// Drains a client's transmissions and events, and re-arms its timer.
    fn service(&mut self, c: usize) {
        let server = u32::from(self.server_node);
        while let Some(tx) = self.clients[c].coap.poll_transmit(&mut self.buf) {
            let cl = &mut self.clients[c];
            cl.record.transmissions += 1;
            if tx.ordinal == 0 {
                cl.record.sent += 1;
            }
            let node = cl.node;
            let id = self.packets.alloc(node, &self.buf[..tx.len]);
            self.send(id, node, server as u16, tx.len);
        }
        let mut ended = false;
        while let Some(ev) = self.clients[c].coap.poll_event() {
            let traced = self.trace_slot == Some(c as u16);
            let t = to_secs(self.now);
            let cl = &mut self.clients[c];
            match ev {
                ClientEvent::Response {
                    retransmissions,
                    elapsed,
                    ..
                } => {
                    cl.record.completed += 1;
                    cl.record.acks += 1;
                    cl.record.completed_transmissions += 1 + u64::from(retransmissions);
                    cl.record.rtt_sum += to_secs(elapsed);
                    if traced {
                        self.trace.push(TracePoint {
                            t,
                            kind: TraceKind::Rtt,
                            value: to_secs(elapsed),
                            retransmissions,
                        });
                    }
                    ended = true;
                }
                ClientEvent::Failed { .. } => {
                    cl.record.failed += 1;
                    ended = true;
                }
                ClientEvent::DuplicateResponse { .. } => cl.record.acks += 1,
                ClientEvent::TimerArmed { ordinal, timer, .. } if traced => {
                    self.trace.push(TracePoint {
                        t,
                        kind: if ordinal == 0 {
                            TraceKind::Rto
                        } else {
                            TraceKind::Backoff
                        },
                        value: timer,
                        retransmissions: ordinal,
                    });
                }
                _ => {}
            }
        }
        if ended {
            let cl = &mut self.clients[c];
            cl.busy = false;
            cl.held -= 1;
            if let Mode::Interferer { on } = cl.mode {
                // back to back while ON
                cl.held = u32::from(on);
                if on {
                    cl.record.generated += 1;
                }
            }
            if cl.held > 0 {
                return self.send_next(c);
            }
        }
        let deadline = self.clients[c].coap.poll_timeout();
        let cl = &mut self.clients[c];
        if let Some(t) = deadline.filter(|_| deadline != cl.timer_queued) {
            cl.timer_queued = deadline;
            self.events
                .push(t.max(self.now), Event::CoapTimer(c as u16));
        }
    }

    /// Hands packet `id` (CoAP bytes `len`) from node `src` to `dst` (indices).
    fn send(&mut self, id: PacketId, src: u16, dst: u16, len: usize) {
        self.conservation.sent += 1;
        let d = Datagram {
            id,
            src: u32::from(src) + 1,
            dst: u32::from(dst) + 1,
            transport_header: grid::sixlowpan::UDP_HEADER as u16,
            payload: len as u16,
            unnecessary: false,
        };
        if self.net.send(self.now, d).is_err() {
            self.conservation.dropped += 1;
            self.packets.release(id);
        }
        self.drain_trace();
    }

    /// A datagram reached node `node` (a number).
    fn delivered(&mut self, id: PacketId, node: u32) {
        self.conservation.delivered += 1;
        let index = node as usize - 1;
        if index == usize::from(self.server_node) {
            let p = &self.packets.slots[id as usize];
            let src = p.src;
            let out = self.server.handle_datagram(
                self.now,
                u32::from(src),
                &p.data[..usize::from(p.len)],
                &mut self.buf,
            );
            self.packets.release(id);
            if let ServerOutput::Reply { len, duplicate } = out {
                if !duplicate {
                    self.carried[usize::from(src)] += 1;
                }
                let reply = self.packets.alloc(self.server_node, &self.buf[..len]);
                self.send(reply, self.server_node, src, len);
            }
        } else if let Some(c) = self.slot_of[index] {
            let p = &self.packets.slots[id as usize];
            let c = usize::from(c);
            self.clients[c].coap.handle_datagram(
                self.now,
                u32::from(self.server_node),
                &p.data[..usize::from(p.len)],
            );
            self.packets.release(id);
            self.service(c);
        } else {
            self.packets.release(id);
        }
    }

    /// Shows the frames the network put on the air to the tap.
    fn drain_trace(&mut self) {
        let Some(tap) = self.tap.as_mut() else {
            return;
        };
        let Some(frames) = self.net.trace.as_mut() else {
            return;
        };
        for f in frames.drain(..) {
            let coap = match f.kind {
                grid::TracedFrame::Data { packet, .. } => {
                    let p = &self.packets.slots[packet as usize];
                    &p.data[..usize::from(p.len)]
                }
                grid::TracedFrame::Ack => &[][..],
            };
            tap.frame(&f, coap);
        }
    }

    fn finish(mut self) -> GridRunResult {
        self.conservation.in_flight = self.net.in_flight();
        assert!(
            self.conservation.holds(),
            "packet conservation violated on the grid: {:?}",
            self.conservation
        );
        let mut nodes: Vec<GridNodeResult> = (0..self.roles.len())
            .map(|i| node_result(i, self.roles[i]))
            .collect();
        for cl in self.clients.drain(..) {
            let i = usize::from(cl.node);
            nodes[i] = cl.record;
        }
        for (i, n) in nodes.iter_mut().enumerate() {
            n.carried = self.carried[i];
            n.mac = self.net.node_record(i as u32 + 1);
        }
        let (frames, collisions) = self.net.medium_counts();
        GridRunResult {
            nodes,
            drops: self.net.drops(),
            frames,
            collisions,
            duration: self.spec.workload.duration_s,
            request_size: self.spec.coap.request_size,
            events: self.processed + self.net.events(),
            conservation: self.conservation,
            trace: self.trace,
        }
    }
}

fn node_result(index: usize, role: Role) -> GridNodeResult {
    GridNodeResult {
        node: index as u32 + 1,
        role,
        generated: 0,
        app_drops: 0,
        sent: 0,
        transmissions: 0,
        completed: 0,
        failed: 0,
        completed_transmissions: 0,
        acks: 0,
        carried: 0,
        rtt_sum: 0.0,
        mac: NodeRecord::default(),
    }
}
