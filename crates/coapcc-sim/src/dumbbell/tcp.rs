//! CoAP over TCP in the constrained-link testbed (spec `docs/spec/transport-tcp-spec.md` §1–3,
//! `docs/spec/testbed-spec.md` §2–3): the clients' connections, the server's accepted
//! connections, and their workloads.
//!
//! Every client connection is a pair of sans-IO endpoints — a `coapcc-tcp`
//! [`AnySocket`] with an RFC 8323 [`CoapTcpConnection`] on top — one at the
//! client, one accepted by the single server node when the connection's SYN
//! reaches it. Both ends run the TCP profile the client's algorithm names
//! (`tcp`: `linux`; `tcp-lwip*`: lwIP and its variants). lwIP keeps one timer
//! grid per device ([`coapcc_tcp::lwip::TickClock`]): each client's starts
//! 250 ms after its first connect, the server's 250 ms after the first SYN
//! reaches it. The testbed ([`super::testbed`]) carries the segments this module
//! emits over the bottleneck (their size is [`Segment::wire_len`]) and hands
//! them back when they arrive; timers come back as events.
//!
//! Workloads (docs/spec/testbed-spec.md §2, docs/spec/transport-tcp-spec.md §2):
//! - **continuous**: one connection, set up before the measurement: every
//!   continuous TCP client connects at time 0 and exchanges CSMs (it holds the
//!   server's CSM and its own is acknowledged); when the last of them is done,
//!   the whole population starts its workload at once (the testbed's start
//!   barrier, [`TcpWorld::barrier`]). Timing starts at the first transmission of
//!   the segment carrying the first request.
//! - **random**: each batch opens a new connection, writes the CSM as soon as the
//!   handshake completes and the batch's first request right after it (Nagle
//!   holds the request until the CSM is acknowledged); after the batch's last
//!   response the connection is closed (FIN) and the next batch's connection is
//!   opened. Timing starts at the first SYN.
//!
//! The server application writes its CSM when the connection is accepted
//! (handshake complete at the server), then answers each request at once.
//!
//! Segments live in the world's [`SegmentPool`], refilled in place, so a warm
//! run does not allocate per packet.

use coapcc_link::rng::SimRng;
use coapcc_link::time::{to_secs, Nanos};
use coapcc_proto::message::Code;
use coapcc_proto::tcp::{
    CoapTcpConnection, ConnEvent, RefuseRequests, RequestHandler, TestbedHandler,
};
use coapcc_tcp::lwip::FIRST_TIMER_DELAY;
use coapcc_tcp::{AnySocket, Due, Flags, Segment, SocketConfig, TcpProfile, TcpState};
use coapcc_workload::metrics::ClientRecord;
use coapcc_workload::tcp_metrics::TcpRecord;
use coapcc_workload::WorkloadKind;

use crate::apps::segments::SegmentPool;

/// CoAP option number of Uri-Path (RFC 7252 §5.10).
const URI_PATH: u16 = 11;

/// Endpoint sides, as used in timer identifiers (`conn * 2 + side`).
const CLIENT: u32 = 0;
const SERVER: u32 = 1;

/// An application step of a TCP client or of the server, for traces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TcpNote {
    /// The client calls connect(): its SYN follows.
    Connect,
    /// The client's handshake completed; it writes its CSM.
    CsmWritten,
    /// The server accepted the connection; it writes its CSM.
    ServerCsmWritten,
    /// The client holds the server's CSM and its own CSM is acknowledged.
    CsmExchanged,
    /// The client wrote a request to its socket (Nagle may hold it).
    RequestWritten,
    /// The server read a request and wrote the response.
    RequestServed,
    /// The client read a response.
    Response,
    /// The client closes the connection (FIN after the queued data).
    Close,
    /// The client's connection was given up (retries exhausted or reset).
    Aborted,
}

/// A TCP happening shown to a [`super::Tap`].
#[derive(Debug)]
pub enum TcpTrace<'a> {
    /// An endpoint emitted a segment.
    Sent {
        /// Client → server (else server → client).
        from_client: bool,
        /// The segment.
        seg: &'a Segment,
    },
    /// A segment reached its endpoint.
    Arrived {
        /// At the server (else at the client).
        to_server: bool,
        /// The segment.
        seg: &'a Segment,
    },
    /// An application step.
    Note(TcpNote),
}

/// What the world notes about a segment in the network.
#[derive(Clone, Copy, Default)]
struct SegMeta {
    /// Its connection.
    conn: u32,
    /// The owning client (index among TCP clients).
    client: u32,
    /// It travels client → server.
    to_server: bool,
}

/// One end of a connection: the socket and the CoAP connection above it.
struct Endpoint {
    sock: AnySocket,
    app: CoapTcpConnection,
    /// The timer for which an event is queued.
    timer: Option<Due>,
    /// Length of this endpoint's CSM: its stream offsets `0..csm_len`.
    csm_len: u64,
}

impl Endpoint {
    fn new(sock: AnySocket, app: CoapTcpConnection) -> Self {
        let csm_len = app.output().len() as u64;
        Endpoint {
            sock,
            app,
            timer: None,
            csm_len,
        }
    }

    /// Writes the application's pending output into the socket; returns the
    /// byte count (the send buffer is far larger than anything queued).
    fn write(&mut self) -> u64 {
        let n = self.sock.send(self.app.output());
        debug_assert_eq!(n, self.app.output().len(), "send buffer full");
        self.app.consume_output(n);
        n as u64
    }

    /// Feeds every received byte to the application.
    fn read<H: RequestHandler>(&mut self, handler: &mut H) {
        let (a, b) = self.sock.recv_slices();
        let n = a.len() + b.len();
        if n == 0 {
            return;
        }
        self.app.handle_bytes(a, handler);
        self.app.handle_bytes(b, handler);
        self.sock.consume(n);
    }
}

/// A client connection and the server's side of it.
struct Conn {
    /// The owning client (index among TCP clients).
    client: u32,
    cl: Endpoint,
    /// Created when the SYN reaches the server.
    sv: Option<Endpoint>,
    cl_connected: bool,
    sv_accepted: bool,
    /// CSM exchange complete (continuous clients).
    ready: bool,
    abort_seen: bool,
}

/// The exchange in progress.
#[derive(Clone, Copy)]
struct Outstanding {
    /// Stream offset of the request's first byte.
    off: u64,
    /// First transmission of a segment carrying it.
    first_tx: Option<Nanos>,
    /// Segments sent carrying it.
    tx: u32,
}

/// A CoAP-over-TCP client and its workload.
struct TcpClient {
    global: u32,
    group: u32,
    kind: WorkloadKind,
    batch: [u32; 2],
    remaining: u32,
    batch_left: u32,
    rng: SimRng,
    conn: Option<u32>,
    /// Bytes written on the current connection.
    written: u64,
    req: Option<Outstanding>,
    started: Option<Nanos>,
    finished: bool,
    /// Continuous clients: the first connection's CSM exchange is done.
    warm: bool,
    /// Continuous clients: the workload may start.
    go: bool,
    /// lwIP: the client device's first TCP timer call.
    timer_origin: Option<Nanos>,
    record: ClientRecord,
    tcp: TcpRecord,
}

/// Every TCP client, connection and in-flight segment of a run.
pub(crate) struct TcpWorld {
    /// Per group: the socket configuration of its TCP profile (`None` for
    /// UDP groups).
    cfgs: Vec<Option<SocketConfig>>,
    /// Initial sequence number of every socket (the same in all profiles).
    isn: u32,
    /// lwIP: the server device's first TCP timer call.
    server_origin: Option<Nanos>,
    path: Vec<u8>,
    handler: TestbedHandler,
    segments: SegmentPool<SegMeta>,
    conns: Vec<Option<Box<Conn>>>,
    clients: Vec<TcpClient>,
    /// Per group: exchanges by retransmissions of the request's segment.
    pub(crate) histograms: Vec<Vec<u64>>,
    /// Segments emitted by clients, to put on the uplink in this order.
    pub(crate) out_up: Vec<u32>,
    /// Segments emitted by the server, to put on the path to the router.
    pub(crate) out_down: Vec<u32>,
    /// Timer events to schedule: (timer, endpoint id).
    pub(crate) out_timers: Vec<(Due, u32)>,
    /// Clients that finished since the testbed last looked.
    pub(crate) finished: usize,
    /// Continuous clients whose connection is not yet set up.
    pub(crate) warming: usize,
    /// Set when the last continuous client finished setting up: the testbed
    /// then starts every client's workload.
    pub(crate) barrier: bool,
    /// Whether to keep application notes for a tap.
    pub(crate) trace: bool,
    /// Notes since the testbed last looked: (time, global client, note).
    pub(crate) notes: Vec<(Nanos, u32, TcpNote)>,
}

impl TcpWorld {
    /// An empty world: `mtu` sets the MSS, `profiles` holds each group's TCP
    /// profile (`None` for UDP groups) and sizes the histograms.
    pub(crate) fn new(
        mtu: usize,
        path: &str,
        payload_len: usize,
        profiles: &[Option<TcpProfile>],
    ) -> Self {
        let mtu = mtu.min(u16::MAX as usize) as u16;
        let cfgs: Vec<Option<SocketConfig>> =
            profiles.iter().map(|p| p.map(|p| p.config(mtu))).collect();
        let isn = cfgs.iter().flatten().next().map_or(0, SocketConfig::isn);
        debug_assert!(cfgs.iter().flatten().all(|c| c.isn() == isn));
        let groups = profiles.len();
        TcpWorld {
            cfgs,
            isn,
            server_origin: None,
            path: path.as_bytes().to_vec(),
            handler: TestbedHandler { payload_len },
            segments: SegmentPool::default(),
            conns: Vec::new(),
            clients: Vec::new(),
            histograms: vec![Vec::new(); groups],
            out_up: Vec::with_capacity(16),
            out_down: Vec::with_capacity(16),
            out_timers: Vec::with_capacity(16),
            finished: 0,
            warming: 0,
            barrier: false,
            trace: false,
            notes: Vec::new(),
        }
    }

    /// Adds a client; returns its index among TCP clients.
    pub(crate) fn add_client(
        &mut self,
        global: u32,
        group: u32,
        kind: WorkloadKind,
        batch: [u32; 2],
        exchanges: u32,
        rng: SimRng,
    ) -> u32 {
        self.clients.push(TcpClient {
            global,
            group,
            kind,
            batch,
            remaining: exchanges,
            batch_left: 0,
            rng,
            conn: None,
            written: 0,
            req: None,
            started: None,
            finished: false,
            warm: false,
            go: false,
            timer_origin: None,
            record: ClientRecord {
                group,
                ..ClientRecord::default()
            },
            tcp: TcpRecord::default(),
        });
        if kind == WorkloadKind::Continuous {
            self.warming += 1;
        }
        (self.clients.len() - 1) as u32
    }

    /// Whether client `c` is a continuous one (set up before the measurement).
    pub(crate) fn is_continuous(&self, c: u32) -> bool {
        self.clients[c as usize].kind == WorkloadKind::Continuous
    }

    /// The global index of the client owning a segment's connection.
    pub(crate) fn seg_client(&self, id: u32) -> u32 {
        self.clients[self.segments.get(id).meta.client as usize].global
    }

    /// The segment `id`.
    pub(crate) fn seg(&self, id: u32) -> &Segment {
        &self.segments.get(id).seg
    }

    /// Whether segment `id` travels client → server.
    pub(crate) fn to_server(&self, id: u32) -> bool {
        self.segments.get(id).meta.to_server
    }

    /// Returns segment `id` to the pool (dropped in the network).
    pub(crate) fn release(&mut self, id: u32) {
        self.segments.release(id);
    }

    /// Lets continuous client `c` start its workload (after the barrier).
    pub(crate) fn go(&mut self, now: Nanos, c: u32) {
        self.clients[c as usize].go = true;
        let Some(id) = self.clients[c as usize].conn else {
            return self.open(now, c);
        };
        let Some(mut conn) = self.conns[id as usize].take() else {
            return;
        };
        let cl = &self.clients[c as usize];
        if conn.ready && cl.req.is_none() && cl.remaining > 0 {
            self.send_request(now, c, &mut conn);
        }
        self.flush(now, id, &mut conn, CLIENT);
        self.put_back(id, conn);
    }

    /// Starts client `c` at `now`: connects (continuous clients: the set-up
    /// before the measurement; random clients: the first batch).
    pub(crate) fn start(&mut self, now: Nanos, c: u32) {
        match self.clients[c as usize].kind {
            WorkloadKind::Continuous => self.open(now, c),
            WorkloadKind::Random => self.begin_batch(now, c),
            // `validate` refuses them with the tcp algorithms.
            WorkloadKind::Observe | WorkloadKind::Blockwise => {
                unreachable!("a CoAP-over-TCP client observing or transferring block-wise")
            }
        }
    }

    fn note(&mut self, now: Nanos, c: u32, n: TcpNote) {
        if self.trace {
            let g = self.clients[c as usize].global;
            self.notes.push((now, g, n));
        }
    }

    /// A new batch: its size, then its connection.
    fn begin_batch(&mut self, now: Nanos, c: u32) {
        let cl = &mut self.clients[c as usize];
        cl.batch_left = cl.rng.int_in(cl.batch[0], cl.batch[1]).min(cl.remaining);
        self.open(now, c);
    }

    /// The socket configuration of client `c`'s group.
    fn cfg_of(&self, c: u32) -> &SocketConfig {
        let group = self.clients[c as usize].group as usize;
        self.cfgs[group]
            .as_ref()
            .expect("TCP clients belong to TCP groups")
    }

    /// Opens a new connection for client `c`; its SYN leaves at once.
    fn open(&mut self, now: Nanos, c: u32) {
        let id = self.conns.len() as u32;
        let origin = *self.clients[c as usize]
            .timer_origin
            .get_or_insert(now + FIRST_TIMER_DELAY);
        let cfg = self.cfg_of(c).clone().with_timer_origin(origin);
        let conn = Box::new(Conn {
            client: c,
            cl: Endpoint::new(AnySocket::connect(now, cfg), CoapTcpConnection::initiator()),
            sv: None,
            cl_connected: false,
            sv_accepted: false,
            ready: false,
            abort_seen: false,
        });
        self.conns.push(None);
        let cl = &mut self.clients[c as usize];
        cl.conn = Some(id);
        cl.written = 0;
        cl.tcp.connections += 1;
        if cl.kind == WorkloadKind::Random && cl.started.is_none() {
            // Random clients: the FCT includes every connection set-up.
            cl.started = Some(now);
        }
        self.note(now, c, TcpNote::Connect);
        self.service_client(now, id, conn);
    }

    /// A segment reached its endpoint. Returns its IP size if the receiver
    /// already had it (an unnecessary copy), else 0.
    pub(crate) fn deliver(&mut self, now: Nanos, sid: u32) -> u64 {
        let (id, to_server) = {
            let s = &self.segments.get(sid).meta;
            (s.conn, s.to_server)
        };
        let Some(mut conn) = self.conns[id as usize].take() else {
            // The connection is gone (fully closed): nobody listens.
            self.segments.release(sid);
            return 0;
        };
        let seg = &self.segments.get(sid).seg;
        let offset = |seq: u32, isn: u32| u64::from(seq.wrapping_sub(isn.wrapping_add(1)));
        let c = conn.client as usize;
        let mut dup = false;
        // lwIP answers a segment for which it has no connection any more
        // (`tcp_input`, `tcp_listen_input`: `tcp_rst`) with a RST; the linux
        // profile's sockets keep the testbed's earlier rule (discarded).
        let receiver_closed = if to_server {
            conn.sv
                .as_ref()
                .is_some_and(|sv| sv.sock.state() == TcpState::Closed)
        } else {
            conn.cl.sock.state() == TcpState::Closed
        };
        if receiver_closed
            && self.is_lwip(c as u32)
            && seg.flags.contains(Flags::ACK)
            && !seg.flags.contains(Flags::RST)
        {
            let (rst_seq, rst_ack) = (seg.ack, seg.seq.wrapping_add(seg.seq_len()));
            self.segments.release(sid);
            self.push_rst(id, conn.client, !to_server, rst_seq, rst_ack);
            self.put_back(id, conn);
            return 0;
        }
        if to_server {
            match conn.sv.as_mut() {
                None => {
                    let origin = *self.server_origin.get_or_insert(now + FIRST_TIMER_DELAY);
                    let group = self.clients[c].group as usize;
                    let cfg = self.cfgs[group]
                        .as_ref()
                        .expect("TCP clients belong to TCP groups")
                        .clone()
                        .with_timer_origin(origin);
                    if let Some(sock) = AnySocket::accept(now, cfg, seg) {
                        conn.sv = Some(Endpoint::new(sock, CoapTcpConnection::responder()));
                    }
                }
                Some(sv) => {
                    let before = sv.sock.stats().clone();
                    sv.sock.handle_segment(now, seg);
                    let after = sv.sock.stats();
                    let tcp = &mut self.clients[c].tcp;
                    if after.dup_data_segments > before.dup_data_segments {
                        dup = true;
                        if offset(seg.seq, self.isn) < conn.cl.csm_len {
                            tcp.unnecessary_csm += 1;
                        } else {
                            tcp.unnecessary_requests += 1;
                        }
                    }
                    if after.dup_syns > before.dup_syns {
                        dup = true;
                        tcp.unnecessary_syn += 1;
                    }
                }
            }
        } else {
            let before = conn.cl.sock.stats().clone();
            let rto = conn.cl.sock.rto();
            conn.cl.sock.handle_segment(now, seg);
            let after = conn.cl.sock.stats();
            // lwIP runs the ticks due at `now` before the segment: a timer
            // may expire here (never with the linux profile).
            let expired = after.rto_expirations - before.rto_expirations;
            if expired > 0 {
                let r = &mut self.clients[c].record;
                r.expirations += expired as u32;
                r.max_expired_timer = r.max_expired_timer.max(to_secs(rto));
            }
            let tcp = &mut self.clients[c].tcp;
            if after.dup_data_segments > before.dup_data_segments {
                dup = true;
                let csm = conn.sv.as_ref().map_or(0, |s| s.csm_len);
                if offset(seg.seq, self.isn) < csm {
                    tcp.unnecessary_csm += 1;
                } else {
                    tcp.unnecessary_responses += 1;
                }
            }
            if after.dup_synacks > before.dup_synacks {
                dup = true;
                tcp.unnecessary_synack += 1;
            }
        }
        let dup_bytes = if dup { seg.wire_len() as u64 } else { 0 };
        self.segments.release(sid);
        if to_server {
            self.service_server(now, id, conn);
        } else {
            self.service_client(now, id, conn);
        }
        dup_bytes
    }

    /// A timer event for endpoint `ep` (`conn * 2 + side`).
    pub(crate) fn timer(&mut self, now: Nanos, ep: u32) {
        let id = ep / 2;
        let Some(mut conn) = self.conns[id as usize].take() else {
            return;
        };
        let c = conn.client as usize;
        if ep % 2 == CLIENT {
            if conn.cl.timer.is_some_and(|t| t.at <= now) {
                conn.cl.timer = None;
                let (rto, n) = (conn.cl.sock.rto(), conn.cl.sock.stats().rto_expirations);
                conn.cl.sock.handle_timeout(now);
                let expired = conn.cl.sock.stats().rto_expirations - n;
                if expired > 0 {
                    let r = &mut self.clients[c].record;
                    r.expirations += expired as u32;
                    r.max_expired_timer = r.max_expired_timer.max(to_secs(rto));
                }
            }
            self.service_client(now, id, conn);
        } else {
            if let Some(sv) = conn.sv.as_mut() {
                if sv.timer.is_some_and(|t| t.at <= now) {
                    sv.timer = None;
                    sv.sock.handle_timeout(now);
                }
            }
            self.service_server(now, id, conn);
        }
    }

    /// The client application after any input on connection `id`, then its
    /// transmissions and timer.
    fn service_client(&mut self, now: Nanos, id: u32, mut conn: Box<Conn>) {
        let c = conn.client;
        let current = self.clients[c as usize].conn == Some(id);
        if current && !conn.cl_connected && conn.cl.sock.is_established() {
            conn.cl_connected = true;
            // RFC 8323 §5.3: the CSM is the first message on the connection.
            self.clients[c as usize].written += conn.cl.write();
            self.note(now, c, TcpNote::CsmWritten);
            // Flush, so that the request (if any) is a separate write.
            self.flush(now, id, &mut conn, CLIENT);
            if self.clients[c as usize].kind == WorkloadKind::Random {
                // The initiator does not wait for the peer's CSM (RFC 8323 §5.3).
                self.send_request(now, c, &mut conn);
            }
        }
        conn.cl.read(&mut RefuseRequests);
        while let Some(ev) = conn.cl.app.poll_event() {
            if let ConnEvent::Response { .. } = ev {
                if current && self.clients[c as usize].conn == Some(id) {
                    self.on_response(now, id, &mut conn);
                }
            }
        }
        let current = self.clients[c as usize].conn == Some(id);
        if current
            && !conn.ready
            && conn.cl_connected
            && conn.cl.app.peer_csm_seen()
            && conn.cl.sock.all_acked()
        {
            conn.ready = true;
            self.note(now, c, TcpNote::CsmExchanged);
            let cl = &mut self.clients[c as usize];
            if cl.kind == WorkloadKind::Continuous {
                if !cl.warm && !cl.go {
                    cl.warm = true;
                    self.warming = self.warming.saturating_sub(1);
                    if self.warming == 0 {
                        self.barrier = true;
                    }
                }
                let cl = &self.clients[c as usize];
                if cl.go && cl.req.is_none() && cl.remaining > 0 {
                    self.send_request(now, c, &mut conn);
                }
            }
        }
        if !conn.abort_seen && conn.cl.sock.abort_reason().is_some() {
            conn.abort_seen = true;
            self.on_abort(now, id, &mut conn);
        }
        self.flush(now, id, &mut conn, CLIENT);
        self.put_back(id, conn);
    }

    /// The server application after any input on connection `id`.
    fn service_server(&mut self, now: Nanos, id: u32, mut conn: Box<Conn>) {
        let c = conn.client;
        if let Some(sv) = conn.sv.as_mut() {
            let accepted = !conn.sv_accepted && sv.sock.is_established();
            if accepted {
                conn.sv_accepted = true;
                // The server writes its CSM as soon as it accepts.
                sv.write();
            }
            sv.read(&mut self.handler);
            let mut served = 0;
            while let Some(ev) = sv.app.poll_event() {
                served += u32::from(matches!(ev, ConnEvent::RequestServed { .. }));
            }
            sv.write();
            if sv.sock.recv_finished() && sv.sock.state() == TcpState::CloseWait {
                // The client closed: close our side too.
                sv.sock.close();
            }
            if accepted {
                self.note(now, c, TcpNote::ServerCsmWritten);
            }
            for _ in 0..served {
                self.note(now, c, TcpNote::RequestServed);
            }
            self.flush(now, id, &mut conn, SERVER);
        }
        self.put_back(id, conn);
    }

    /// Queues the client's next request on `conn`.
    fn send_request(&mut self, now: Nanos, c: u32, conn: &mut Conn) {
        let cl = &mut self.clients[c as usize];
        if cl.remaining == 0 {
            return;
        }
        cl.remaining -= 1;
        cl.batch_left = cl.batch_left.saturating_sub(1);
        conn.cl
            .app
            .send_request(Code::GET, &[], &[(URI_PATH, &self.path)], &[])
            .expect("a stop-and-wait client has one request outstanding, well within limits");
        let off = cl.written;
        cl.written += conn.cl.write();
        cl.req = Some(Outstanding {
            off,
            first_tx: None,
            tx: 0,
        });
        self.note(now, c, TcpNote::RequestWritten);
    }

    /// A response arrived on the client's current connection.
    fn on_response(&mut self, now: Nanos, id: u32, conn: &mut Conn) {
        let c = conn.client;
        self.note(now, c, TcpNote::Response);
        let cl = &mut self.clients[c as usize];
        let Some(req) = cl.req.take() else {
            return;
        };
        cl.record.completed += 1;
        cl.record.rtt_sum += to_secs(now - req.first_tx.unwrap_or(now));
        let h = &mut self.histograms[cl.group as usize];
        let n = req.tx.saturating_sub(1) as usize;
        if h.len() <= n {
            h.resize(n + 1, 0);
        }
        h[n] += 1;
        self.after_exchange(now, id, conn);
    }

    /// The exchange ended (answered or failed): next request, next batch, or done.
    fn after_exchange(&mut self, now: Nanos, id: u32, conn: &mut Conn) {
        let c = conn.client;
        let cl = &mut self.clients[c as usize];
        let random = cl.kind == WorkloadKind::Random;
        let alive = !conn.abort_seen && cl.conn == Some(id);
        if cl.remaining == 0 {
            if !cl.finished {
                cl.finished = true;
                cl.record.fct = Some(to_secs(now - cl.started.unwrap_or(0)));
                self.finished += 1;
            }
            if random && alive {
                self.close(now, id, conn);
            }
        } else if random && cl.batch_left == 0 {
            if alive {
                self.close(now, id, conn);
            }
            self.begin_batch(now, c);
        } else if alive {
            self.send_request(now, c, conn);
        } else {
            self.open(now, c);
        }
    }

    /// The client closes `conn` (FIN after the queued data); the FIN leaves
    /// before anything the client does next.
    fn close(&mut self, now: Nanos, id: u32, conn: &mut Conn) {
        let c = conn.client;
        conn.cl.sock.close();
        self.note(now, c, TcpNote::Close);
        let cl = &mut self.clients[c as usize];
        if cl.conn == Some(id) {
            cl.conn = None;
        }
        self.flush(now, id, conn, CLIENT);
    }

    /// The client's connection was given up: the exchange in progress fails and
    /// the client carries on with a new connection.
    fn on_abort(&mut self, now: Nanos, id: u32, conn: &mut Conn) {
        let c = conn.client;
        self.note(now, c, TcpNote::Aborted);
        let cl = &mut self.clients[c as usize];
        cl.tcp.aborted += 1;
        if cl.conn != Some(id) {
            return;
        }
        cl.conn = None;
        if cl.req.take().is_some() {
            cl.record.failed += 1;
            self.after_exchange(now, id, conn);
        } else if cl.remaining > 0 {
            self.open(now, c);
        }
    }

    /// Whether client `c` runs an lwIP profile.
    fn is_lwip(&self, c: u32) -> bool {
        self.cfg_of(c).is_lwip()
    }

    /// Sends the RST of a stack that has no connection for a segment it
    /// received (lwIP's `tcp_rst`: sequence number the segment's ACK, ACK its
    /// sequence number plus its length).
    fn push_rst(&mut self, id: u32, client: u32, to_server: bool, seq: u32, ack: u32) {
        let sid = self.segments.take();
        let slot = self.segments.get_mut(sid);
        slot.seg.clear();
        slot.seg.seq = seq;
        slot.seg.ack = ack;
        slot.seg.flags = Flags::RST | Flags::ACK;
        slot.meta = SegMeta {
            conn: id,
            client,
            to_server,
        };
        if to_server {
            self.out_up.push(sid);
        } else {
            self.out_down.push(sid);
        }
    }

    /// Drains an endpoint's transmissions into pooled segments.
    fn flush(&mut self, now: Nanos, id: u32, conn: &mut Conn, side: u32) {
        let client = conn.client;
        let ep = match side {
            CLIENT => &mut conn.cl,
            _ => match conn.sv.as_mut() {
                Some(sv) => sv,
                None => return,
            },
        };
        let meta = SegMeta {
            conn: id,
            client,
            to_server: side == CLIENT,
        };
        while let Some(sid) = self
            .segments
            .fill(meta, |seg| ep.sock.poll_transmit_into(now, seg))
        {
            let slot = self.segments.get(sid);
            if side == CLIENT {
                let cl = &mut self.clients[client as usize];
                let len = slot.seg.payload.len() as u64;
                if let (Some(req), true) = (cl.req.as_mut(), len > 0 && cl.conn == Some(id)) {
                    let off = u64::from(slot.seg.seq.wrapping_sub(self.isn.wrapping_add(1)));
                    if off <= req.off && req.off < off + len {
                        req.tx += 1;
                        req.first_tx.get_or_insert(now);
                        if cl.started.is_none() {
                            // Continuous clients: timing starts here.
                            cl.started = Some(now);
                        }
                    }
                }
                self.out_up.push(sid);
            } else {
                self.out_down.push(sid);
            }
        }
        // A timer re-armed into its bucket keeps its place: no new event.
        let due = ep.sock.poll_timer();
        if due != ep.timer {
            ep.timer = due;
            if let Some(t) = due {
                let at = t.at.max(now);
                self.out_timers.push((Due { at, ..t }, id * 2 + side));
            }
        }
    }

    /// Stores `conn` again, or retires it once both ends are closed.
    fn put_back(&mut self, id: u32, conn: Box<Conn>) {
        let closed = |s: &AnySocket| s.state() == TcpState::Closed;
        if closed(&conn.cl.sock) && conn.sv.as_ref().is_none_or(|s| closed(&s.sock)) {
            let c = conn.client;
            if self.clients[c as usize].conn == Some(id) {
                self.clients[c as usize].conn = None;
            }
            self.absorb(&conn);
            // The slot stays empty: late segments for it are discarded.
            self.conns[id as usize] = None;
        } else {
            self.conns[id as usize] = Some(conn);
        }
    }

    /// Adds a connection's socket counters to its client's records.
    fn absorb(&mut self, conn: &Conn) {
        let cl = &mut self.clients[conn.client as usize];
        let s = conn.cl.sock.stats();
        cl.record.retransmissions += (s.retransmitted_segments + s.syn_retransmissions) as u32;
        cl.tcp.syn_retransmissions += s.syn_retransmissions as u32;
        cl.tcp.client_retransmitted_segments += s.retransmitted_segments as u32;
        cl.tcp.fast_retransmits += s.fast_retransmits as u32;
        cl.tcp.loss_probes += s.loss_probes as u32;
        cl.tcp.spurious_rtos += s.spurious_rtos as u32;
        cl.tcp.dsacks_received += s.dsacks_received as u32;
        if let Some(sv) = &conn.sv {
            let s = sv.sock.stats();
            cl.tcp.synack_retransmissions += s.synack_retransmissions as u32;
            cl.tcp.server_retransmitted_segments += s.retransmitted_segments as u32;
            cl.tcp.server_rto_expirations += s.rto_expirations as u32;
            cl.tcp.fast_retransmits += s.fast_retransmits as u32;
            cl.tcp.loss_probes += s.loss_probes as u32;
            cl.tcp.spurious_rtos += s.spurious_rtos as u32;
            cl.tcp.dsacks_received += s.dsacks_received as u32;
        }
    }

    /// The records of every TCP client, in TCP-client order, with the counters
    /// of connections still open added.
    pub(crate) fn finish(&mut self) -> Vec<ClientRecord> {
        let conns = std::mem::take(&mut self.conns);
        for conn in conns.iter().flatten() {
            self.absorb(conn);
        }
        self.clients
            .iter_mut()
            .map(|cl| {
                let mut r = std::mem::take(&mut cl.record);
                r.unnecessary = cl.tcp.unnecessary();
                r.tcp = Some(Box::new(std::mem::take(&mut cl.tcp)));
                r
            })
            .collect()
    }
}
