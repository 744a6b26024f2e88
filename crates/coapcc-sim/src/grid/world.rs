//! The grid's world: the clients, interferers and server on the nodes of
//! the 802.15.4 grid, their workload and records; the event loop
//! ([`crate::event_loop`]) hands it the network's events and the timers.
//!
//! Its endpoints are the shared applications of [`crate::apps`]: a CoAP
//! client endpoint on every client and interferer node, the CoAP server
//! with the sink handler on the server node, and the packet pool their
//! datagrams travel in (addressed by node index).

use coapcc_link::agenda::Agenda;
use coapcc_link::grid::{self, FrameTrace, Grid};
use coapcc_link::rng::{derive, SimRng, Stream};
use coapcc_link::time::{from_secs, to_secs, Nanos};
use coapcc_link::{Datagram, NodeId, PacketId};
use coapcc_proto::client::{ClientConfig, ClientEvent, EncodedRequest, Request};
use coapcc_proto::message::Code;

use super::config::{request_payload, validate, RunSpec, WorkloadKind, MAX_MESSAGE};
use super::result::{node_result, NodeResult, Role, RunResult, TraceKind, TracePoint};
use crate::apps::coap_client::{self, CoapClient};
use crate::apps::coap_server::{CoapServer, Sink};
use crate::apps::packets::PacketPool;
use crate::event_loop::{Core, World as EventWorld};
use crate::spec_error::SpecError;

/// Sees every frame the grid puts on the air (e.g. to write a pcap).
pub trait Tap {
    /// `coap` is the datagram's CoAP message (empty for acknowledgements).
    fn frame(&mut self, frame: &FrameTrace, coap: &[u8]);
}

/// Timer events of the endpoints and the workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
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
    coap: CoapClient,
    rng: SimRng,
    mode: Mode,
    held: u32,
    busy: bool,
    timer_queued: Option<Nanos>,
    record: NodeResult,
}

/// One replication on the grid in progress.
pub struct World<'a> {
    spec: &'a RunSpec,
    /// The network, the timers, the clock.
    core: Core<Grid, Event>,
    end: Nanos,
    running: bool,
    /// The datagrams in flight; their addresses are node indices.
    packets: PacketPool,
    clients: Vec<SimClient>,
    /// Client slot of each node index.
    slot_of: Vec<Option<u16>>,
    server: CoapServer<Sink>,
    server_node: u16,
    /// The POST every client sends, its options and payload encoded once
    /// (`docs/decisions/performance-choices.md`, "Work per event").
    request: EncodedRequest,
    buf: [u8; MAX_MESSAGE],
    roles: Vec<Role>,
    carried: Vec<u64>,
    trace_slot: Option<u16>,
    trace: Vec<TracePoint>,
    tap: Option<&'a mut dyn Tap>,
}

impl<'a> World<'a> {
    /// Replication `replication` of `spec`, before time 0.
    pub(super) fn new(spec: &'a RunSpec, replication: u32) -> Result<Self, SpecError> {
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
        if w.kind == WorkloadKind::Bursty {
            for &i in &w.interferers {
                roles[i as usize - 1] = Role::Interferer;
            }
        }
        let config = |max_retransmit| ClientConfig {
            max_retransmit,
            max_message_size: MAX_MESSAGE,
            ..ClientConfig::default()
        };
        let periodic = coap_client::settings(&spec.algorithm, config(spec.coap.max_retransmit))?;
        let interferer = if w.kind == WorkloadKind::Bursty {
            let config = config(w.interferer_max_retransmit);
            Some(coap_client::settings(&w.interferer, config)?)
        } else {
            None
        };
        let mut clients = Vec::new();
        let mut slot_of = vec![None; n];
        for (i, role) in roles.iter().enumerate() {
            let (settings, mode) = match (role, &interferer) {
                (Role::Client, _) => (&periodic, Mode::Periodic),
                (Role::Interferer, Some(s)) => (s, Mode::Interferer { on: false }),
                _ => continue,
            };
            let mut rng = SimRng::new(derive(seed, Stream::Client, i as u64));
            slot_of[i] = Some(clients.len() as u16);
            clients.push(SimClient {
                node: i as u16,
                coap: coap_client::endpoint(settings, &mut rng),
                rng: SimRng::new(derive(seed, Stream::Workload, i as u64)),
                mode,
                held: 0,
                busy: false,
                timer_queued: None,
                record: node_result(i, *role),
            });
        }
        // Peers are node indices: a record each.
        let server = CoapServer::new(
            server_node as u32,
            Sink {
                payload: spec.coap.response_payload,
            },
            n + 1,
            MAX_MESSAGE,
        );
        let trace_slot = w.trace_node.and_then(|t| slot_of[t as usize - 1]);
        let end = from_secs(w.warmup_s + w.duration_s);
        let payload = request_payload(&spec.coap);
        let request = EncodedRequest::new(
            &Request {
                method: Code::POST,
                path: &spec.coap.path,
                payload: &payload,
                confirmable: true,
            },
            MAX_MESSAGE,
        )
        .expect("a validated request encodes");
        Ok(World {
            spec,
            core: Core::new(net, Agenda::new(0, 4 * n + 16)),
            end,
            running: true,
            packets: PacketPool::default(),
            clients,
            slot_of,
            server,
            server_node: server_node as u16,
            request,
            buf: [0; MAX_MESSAGE],
            carried: vec![0; n],
            roles,
            trace_slot,
            trace: Vec::new(),
            tap: None,
        })
    }

    /// Shows every frame on the air to `tap`.
    pub(super) fn attach(&mut self, tap: &'a mut dyn Tap) {
        self.core.net.trace = Some(Vec::new());
        // A frame of a datagram already delivered or dropped can still be
        // written.
        self.packets.keep_all();
        self.tap = Some(tap);
    }

    /// Time 0: every client's first event, after the warm-up, and the end.
    fn schedule_start(&mut self) {
        let w = &self.spec.workload;
        let warmup = from_secs(w.warmup_s);
        for c in 0..self.clients.len() {
            let cl = &mut self.clients[c];
            let (period, ev) = match cl.mode {
                Mode::Periodic => (w.period_s, Event::Generate(c as u16)),
                Mode::Interferer { .. } => (w.off_s, Event::Switch(c as u16)),
            };
            let offset = from_secs(period * cl.rng.uniform());
            self.core.agenda.push(warmup + offset, ev);
        }
        self.core.agenda.push(self.end, Event::End);
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
        self.core
            .agenda
            .push(self.core.now + period, Event::Generate(c as u16));
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
        self.core
            .agenda
            .push(self.core.now + from_secs(next), Event::Switch(c as u16));
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
        cl.coap
            .request_encoded(self.core.now, u32::from(self.server_node), &self.request)
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
            let id = self
                .packets
                .alloc(u32::from(node), server, &self.buf[..tx.len]);
            self.send(id, node, server as u16, tx.len);
        }
        let mut ended = false;
        while let Some(ev) = self.clients[c].coap.poll_event() {
            let traced = self.trace_slot == Some(c as u16);
            let t = to_secs(self.core.now);
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
            self.core
                .agenda
                .push(t.max(self.core.now), Event::CoapTimer(c as u16));
        }
    }

    /// Hands packet `id` (CoAP bytes `len`) from node `src` to `dst` (indices).
    fn send(&mut self, id: PacketId, src: u16, dst: u16, len: usize) {
        let d = Datagram {
            id,
            src: u32::from(src) + 1,
            dst: u32::from(dst) + 1,
            transport_header: grid::sixlowpan::UDP_HEADER as u16,
            payload: len as u16,
            unnecessary: false,
        };
        if !self.core.send(d) {
            self.packets.release(id);
        }
        self.drain_trace();
    }

    /// A datagram reached node `node` (a number).
    fn delivered(&mut self, id: PacketId, node: u32) {
        let index = node as usize - 1;
        if index == usize::from(self.server_node) {
            self.answer(id);
        } else if let Some(c) = self.slot_of[index] {
            let c = usize::from(c);
            let data = self.packets.get(id).data;
            self.clients[c]
                .coap
                .handle_datagram(self.core.now, u32::from(self.server_node), data);
            self.packets.release(id);
            self.service(c);
        } else {
            self.packets.release(id);
        }
    }

    /// The server answers request `id` (which it releases).
    fn answer(&mut self, id: PacketId) {
        let Some(reply) = self.server.answer(self.core.now, &mut self.packets, id) else {
            return;
        };
        let src = reply.to as u16;
        if !reply.duplicate {
            self.carried[usize::from(src)] += 1;
        }
        self.send(reply.packet, self.server_node, src, reply.len);
    }

    /// Shows the frames the network put on the air to the tap, if any.
    #[inline]
    fn drain_trace(&mut self) {
        if self.tap.is_some() {
            self.write_trace();
        }
    }

    /// Shows the frames the network put on the air to the tap.
    #[cold]
    #[inline(never)]
    fn write_trace(&mut self) {
        let Some(tap) = self.tap.as_mut() else {
            return;
        };
        let Some(frames) = self.core.net.trace.as_mut() else {
            return;
        };
        for f in frames.drain(..) {
            let coap = match f.kind {
                grid::TracedFrame::Data { packet, .. } => self.packets.get(packet).data,
                grid::TracedFrame::Ack => &[][..],
            };
            tap.frame(&f, coap);
        }
    }

    fn finish_run(mut self, processed: u64) -> RunResult {
        let conservation = self.core.conservation();
        let mut nodes: Vec<NodeResult> = (0..self.roles.len())
            .map(|i| node_result(i, self.roles[i]))
            .collect();
        for cl in self.clients.drain(..) {
            let i = usize::from(cl.node);
            nodes[i] = cl.record;
        }
        for (i, n) in nodes.iter_mut().enumerate() {
            n.carried = self.carried[i];
            n.mac = self.core.net.node_record(i as u32 + 1);
        }
        let (frames, collisions) = self.core.net.medium_counts();
        RunResult {
            nodes,
            drops: self.core.net.drops(),
            frames,
            collisions,
            duration: self.spec.workload.duration_s,
            request_size: self.spec.coap.request_size,
            events: self.core.events(processed),
            conservation,
            trace: self.trace,
        }
    }
}

impl<'a> EventWorld for World<'a> {
    type Net = Grid;
    type Timer = Event;
    type Result = RunResult;

    fn start(&mut self) {
        self.schedule_start();
    }

    #[inline]
    fn core(&mut self) -> &mut Core<Grid, Event> {
        &mut self.core
    }

    #[inline]
    fn done(&self) -> bool {
        !self.running
    }

    #[inline]
    fn on_network_event(&mut self) {
        self.drain_trace();
    }

    #[inline]
    fn on_delivered(&mut self, id: PacketId, node: NodeId) {
        self.delivered(id, node);
    }

    #[inline]
    fn on_dropped(&mut self, id: PacketId) {
        self.packets.release(id);
    }

    #[inline]
    fn on_timer(&mut self, at: Nanos, timer: Event) {
        match timer {
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

    fn finish(self, processed: u64) -> RunResult {
        self.finish_run(processed)
    }
}
