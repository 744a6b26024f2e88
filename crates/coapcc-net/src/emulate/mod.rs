//! A real-time UDP relay that puts a network model between any CoAP clients
//! and any CoAP server. The network is the simulator's own sans-IO model
//! (`coapcc_link`), driven here on the wall clock: a datagram enters the
//! model when the relay receives it, and leaves when the model delivers it.
//!
//! The relay listens on one socket for clients. The first datagram from a new
//! client address opens an upstream socket toward the server for that client
//! alone, so the server sees one distinct address per client, and its replies
//! are relayed back to that client's address. Mappings are bounded
//! ([`EmulatorOptions::max_clients`], least recently active evicted first)
//! and expire after [`EmulatorOptions::idle_timeout`]; packets held in flight
//! are bounded too: in number ([`EmulatorOptions::max_in_flight`]) and in
//! IP bytes per direction ([`EmulatorOptions::max_held_bytes`]), whatever
//! the model's own buffer.
//!
//! # Where clients and the server attach
//!
//! Each network says it in its hook, one file each under [`networks`]
//! (with its part of the report); [`EmulatedNetwork`] holds any of them.
//! The `n`th client mapping the relay opens (counting from 0 since it
//! started) is handed to the network's attachment rule, which gives its
//! node; a mapping that closed (idle or evicted) and opens again counts as
//! a new client. A datagram larger than the network carries is refused and
//! counted ([`DatagramCounts::refused_too_large`]).
//!
//! Time zero of the model is when the relay starts. A packet's arrival time is
//! taken when the relay receives it; the relay sleeps until the model's next
//! event is due and sends a packet on when the model delivers it, as
//! precisely as the tokio timer allows (1 ms resolution). Model time never
//! goes back: a datagram stamped earlier than an event the relay has already
//! handled (at most [`EmulatorOptions::early`] ahead of the clock) enters at
//! that event's time.

mod network;

/// Each network's emulator hook and its part of the report, one file each.
pub mod networks {
    pub mod dumbbell;
    pub mod grid;
    pub mod lorawan;
    pub mod star;
}

use std::collections::HashMap;
use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{anyhow, Result};
use coapcc_link::{Datagram, DropCause, Nanos, Network, NodeId, Output};
use tokio::net::UdpSocket;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::clock::Clock;
use crate::drive::{Driver, Fate};
use crate::ip::packet::IPV4_HEADER;

pub use network::{EmulatedNetwork, NetworkPart};
pub(crate) use network::{Hook, IpCarriage};

/// UDP header bytes (the relay carries UDP datagrams).
const UDP_HEADER: u16 = 8;

/// The largest datagram the relay carries: the largest UDP payload over IPv4
/// (65 535 − 20 − 8). Larger ones (possible over IPv6) are refused and
/// counted ([`DatagramCounts::refused_too_large`]); none is ever cut.
pub const MAX_DATAGRAM: usize = 65_507;

/// The relay's receive buffer: larger than any UDP payload, so a datagram
/// is never read truncated.
const RELAY_BUFFER: usize = 65_536;

/// The node the `ordinal`th client mapping (counting from 0) attaches to:
/// `nodes[ordinal mod nodes.len()]`. `nodes` must not be empty.
pub fn client_node(nodes: &[NodeId], ordinal: u64) -> NodeId {
    nodes[(ordinal % nodes.len() as u64) as usize]
}

/// How the relay is set up.
#[derive(Clone, Debug, PartialEq)]
pub struct EmulatorOptions {
    /// The network model.
    pub network: EmulatedNetwork,
    /// Seed of the model's random streams.
    pub seed: u64,
    /// Most client mappings at once.
    pub max_clients: usize,
    /// A mapping unused this long is closed.
    pub idle_timeout: Duration,
    /// Most packets held by the relay at once (inside the model, whose own
    /// buffers may be infinite); more are dropped and counted
    /// ([`DatagramCounts::refused_full`]; a network may count them as drops
    /// of its own too).
    pub max_in_flight: usize,
    /// Most IP bytes (UDP payload + 28) the relay holds per direction inside
    /// the model — queued, being sent or propagating; a datagram that would
    /// exceed it is refused and counted like [`Self::max_in_flight`]. The
    /// default, 4 MiB, is above the 1 410 000 B that stand for an infinite
    /// buffer in the evaluations: on their networks the model's buffer
    /// decides every drop, and an infinite buffer no longer holds whatever
    /// arrives (5000 datagrams of 64 KiB, 325 MB).
    pub max_held_bytes: u64,
    /// How much earlier than its departure time a packet may leave. The
    /// tokio timer fires at the first millisecond tick at or after its
    /// deadline (plus the wake-up), so without this a packet leaves about a
    /// millisecond late on average; 1 ms centres the error near zero
    /// (measured; see docs/decisions/emulator-choices.md, "Timer precision").
    pub early: Duration,
}

impl Default for EmulatorOptions {
    fn default() -> Self {
        EmulatorOptions {
            network: EmulatedNetwork::default(),
            seed: 1,
            max_clients: 4096,
            idle_timeout: Duration::from_secs(300),
            max_in_flight: 100_000,
            max_held_bytes: crate::drive::DEFAULT_MAX_HELD_BYTES,
            early: Duration::from_millis(1),
        }
    }
}

/// Datagrams of one direction, as the relay saw them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DatagramCounts {
    /// Datagrams received for this direction (of an open mapping).
    pub received: u64,
    /// Their bytes (UDP payload: the CoAP messages).
    pub bytes: u64,
    /// Delivered by the model at the far end.
    pub delivered: u64,
    /// Dropped by the model (refused on entry or lost inside).
    pub dropped: u64,
    /// Not handed to the model: the relay held
    /// [`EmulatorOptions::max_in_flight`] packets already, or the datagram
    /// would have taken it past [`EmulatorOptions::max_held_bytes`].
    pub refused_full: u64,
    /// IP bytes of the datagrams refused that way.
    pub refused_full_bytes: u64,
    /// Not handed to the model: larger than the network carries (its hook
    /// says what it carries; never more than [`MAX_DATAGRAM`]).
    pub refused_too_large: u64,
    /// Delivered by the model after their mapping had closed (evicted or
    /// idle), so not sent on (counted in `delivered` too).
    pub closed: u64,
    /// IP bytes inside the model now (queued, being sent, propagating).
    pub held_bytes: u64,
    /// The most IP bytes inside the model at once.
    pub peak_held_bytes: u64,
}

impl DatagramCounts {
    /// Received but not (yet) delivered, dropped or refused: inside the model.
    pub fn in_flight(&self) -> u64 {
        self.received - self.delivered - self.dropped - self.refused_full - self.refused_too_large
    }
}

/// Counters of the relay.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EmulatorReport {
    /// Client mappings opened.
    pub clients_seen: u64,
    /// Mappings closed for idleness or to make room.
    pub mappings_closed: u64,
    /// Mappings open now.
    pub mappings_open: usize,
    /// Datagrams from clients to the server.
    pub upstream: DatagramCounts,
    /// Datagrams from the server to clients.
    pub downstream: DatagramCounts,
    /// What the network did, in its own type (see its file under
    /// [`networks`]); `None` until the relay first reports.
    pub network: Option<NetworkPart>,
}

impl EmulatorReport {
    /// The network's part of the report, if it is a `T`.
    pub fn network_part<T: std::any::Any>(&self) -> Option<&T> {
        self.network.as_ref()?.get()
    }
}

/// Shared view of a running relay's report.
#[derive(Debug, Default)]
pub struct EmulatorMonitor(Mutex<EmulatorReport>);

impl EmulatorMonitor {
    /// The latest report.
    pub fn report(&self) -> EmulatorReport {
        self.0.lock().expect("monitor lock").clone()
    }
}

/// What the relay needs of a network beyond [`Network`]: where clients and
/// the server attach, what it carries, and what it reports. The relay is
/// generic over it, so each network's loop is compiled on its own; each
/// network's [`Hook::Net`] implements it.
pub(crate) trait Emulated: Network {
    /// The server's node.
    fn server_node(&self) -> NodeId;
    /// The node of the `ordinal`th mapping opened (from 0), in slot `slot`.
    fn attach(&mut self, slot: usize, ordinal: u64) -> NodeId;
    /// The payload size a datagram of `len` bytes enters with; `None` if the
    /// network cannot carry it.
    fn payload(&self, len: usize) -> Option<u16>;
    /// A datagram was refused because the relay held too many packets.
    fn count_full(&mut self, up: bool);
    /// The network's counters, as its part of the report.
    fn report(&self) -> NetworkPart;
}

/// A link model with what an emulator adds to it (`rule`: where clients
/// attach, what it carries); it drives as the link model does.
pub(crate) struct Attached<L: ?Sized, R> {
    pub(crate) rule: R,
    pub(crate) link: Box<L>,
}

impl<L: Network + ?Sized, R> Network for Attached<L, R> {
    fn send(&mut self, now: Nanos, d: Datagram) -> Result<(), DropCause> {
        self.link.send(now, d)
    }

    fn next_wakeup(&self) -> Option<Nanos> {
        self.link.next_wakeup()
    }

    fn poll(&mut self, until: Nanos) -> Option<(Nanos, Option<Output>)> {
        self.link.poll(until)
    }

    fn in_flight(&self) -> u64 {
        self.link.in_flight()
    }

    fn events(&self) -> u64 {
        self.link.events()
    }
}

/// What the relay refuses to start with: an invalid network
/// ([`EmulatedNetwork::validate`]) or a zero bound.
fn check(opts: &EmulatorOptions) -> Result<()> {
    opts.network.validate().map_err(|e| anyhow!(e))?;
    if opts.max_clients == 0 || opts.max_in_flight == 0 || opts.max_held_bytes == 0 {
        return Err(anyhow!(
            "max_clients, max_in_flight, max_held_bytes: expected at least 1, found {}, {} and {}",
            opts.max_clients,
            opts.max_in_flight,
            opts.max_held_bytes
        ));
    }
    Ok(())
}

/// A datagram inside the model: its bytes, direction and the mapping it
/// belongs to.
struct Held {
    /// The client mapping (slot and generation) it came from or goes to.
    slot: usize,
    gen: u64,
    /// Toward the server.
    up: bool,
    data: Vec<u8>,
}

/// One client mapping.
struct Mapping {
    client: SocketAddr,
    gen: u64,
    /// The node it is attached to.
    node: NodeId,
    upstream: Arc<UdpSocket>,
    reader: JoinHandle<()>,
    last_active: Instant,
}

/// A datagram from the server, with its mapping and arrival instant.
type FromServer = (usize, u64, Vec<u8>, Instant);

struct Relay<N> {
    opts: EmulatorOptions,
    server: SocketAddr,
    clock: Clock,
    /// The model and the datagrams inside it.
    driver: Driver<N, Held>,
    slots: Vec<Option<Mapping>>,
    by_client: HashMap<SocketAddr, usize>,
    next_gen: u64,
    report: EmulatorReport,
    from_server: mpsc::Sender<FromServer>,
    early: Nanos,
}

impl<N: Emulated> Relay<N> {
    /// Hands a datagram of mapping `slot` to the model at `at` (or at the
    /// model's clock if that is later).
    fn offer(&mut self, at: Nanos, slot: usize, gen: u64, up: bool, data: &[u8]) {
        let counts = if up {
            &mut self.report.upstream
        } else {
            &mut self.report.downstream
        };
        counts.received += 1;
        counts.bytes += data.len() as u64;
        let Some(payload) = self.driver.net.payload(data.len()) else {
            counts.refused_too_large += 1;
            return;
        };
        // the datagram's size on the wire, as the model counts it
        let ip_bytes = (IPV4_HEADER + usize::from(UDP_HEADER) + data.len()) as u64;
        if self.driver.held() >= self.opts.max_in_flight || !self.driver.admits(up, ip_bytes) {
            counts.refused_full += 1;
            counts.refused_full_bytes += ip_bytes;
            self.driver.net.count_full(up);
            return;
        }
        let node = self.slots[slot].as_ref().expect("open mapping").node;
        let server = self.driver.net.server_node();
        let ends = if up { (node, server) } else { (server, node) };
        let held = Held {
            slot,
            gen,
            up,
            data: data.to_vec(),
        };
        if self
            .driver
            .send(at, ends, (UDP_HEADER, payload), (up, ip_bytes), held)
            .is_err()
        {
            counts.dropped += 1;
        }
    }

    /// Handles every model event due by `until`, sending delivered datagrams.
    async fn advance(&mut self, until: Nanos, listen: &UdpSocket) {
        while let Some((_, fate)) = self.driver.poll(until) {
            match fate {
                Fate::Delivered(h) => {
                    if h.up {
                        self.report.upstream.delivered += 1;
                    } else {
                        self.report.downstream.delivered += 1;
                    }
                    let Some(m) = self.slots[h.slot].as_ref().filter(|m| m.gen == h.gen) else {
                        if h.up {
                            self.report.upstream.closed += 1;
                        } else {
                            self.report.downstream.closed += 1;
                        }
                        continue;
                    };
                    if h.up {
                        let _ = m.upstream.send(&h.data).await;
                    } else {
                        let _ = listen.send_to(&h.data, m.client).await;
                    }
                }
                Fate::Dropped(_, h) => {
                    if h.up {
                        self.report.upstream.dropped += 1;
                    } else {
                        self.report.downstream.dropped += 1;
                    }
                }
            }
        }
    }

    /// The mapping of `client`, opened if new.
    async fn mapping(&mut self, client: SocketAddr, now: Instant) -> Result<usize> {
        if let Some(&slot) = self.by_client.get(&client) {
            let m = self.slots[slot].as_mut().expect("mapped slot is open");
            m.last_active = now;
            return Ok(slot);
        }
        if self.by_client.len() >= self.opts.max_clients {
            let oldest = self
                .slots
                .iter()
                .enumerate()
                .filter_map(|(i, m)| m.as_ref().map(|m| (m.last_active, i)))
                .min()
                .map(|(_, i)| i)
                .expect("at least one mapping");
            self.close(oldest);
        }
        let local: SocketAddr = match self.server.ip() {
            IpAddr::V4(a) if a.is_loopback() => (Ipv4Addr::LOCALHOST, 0).into(),
            IpAddr::V4(_) => (Ipv4Addr::UNSPECIFIED, 0).into(),
            IpAddr::V6(a) if a.is_loopback() => (Ipv6Addr::LOCALHOST, 0).into(),
            IpAddr::V6(_) => (Ipv6Addr::UNSPECIFIED, 0).into(),
        };
        let upstream = UdpSocket::bind(local).await?;
        upstream.connect(self.server).await?;
        let upstream = Arc::new(upstream);
        let slot = match self.slots.iter().position(Option::is_none) {
            Some(i) => i,
            None => {
                self.slots.push(None);
                self.slots.len() - 1
            }
        };
        self.next_gen += 1;
        let gen = self.next_gen;
        let (sock, tx) = (upstream.clone(), self.from_server.clone());
        let reader = tokio::spawn(async move {
            // the buffer exists only while a datagram is read, so an idle
            // mapping holds none
            loop {
                if sock.readable().await.is_err() {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
                let mut buf = vec![0u8; RELAY_BUFFER];
                match sock.try_recv(&mut buf) {
                    Ok(n) => {
                        let at = Instant::now();
                        buf.truncate(n);
                        buf.shrink_to_fit();
                        if tx.send((slot, gen, buf, at)).await.is_err() {
                            return;
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                    // ICMP port unreachable while the server is down: keep going
                    Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
                }
            }
        });
        let node = self.driver.net.attach(slot, self.report.clients_seen);
        self.slots[slot] = Some(Mapping {
            client,
            gen,
            node,
            upstream,
            reader,
            last_active: now,
        });
        self.by_client.insert(client, slot);
        self.report.clients_seen += 1;
        Ok(slot)
    }

    fn close(&mut self, slot: usize) {
        if let Some(m) = self.slots[slot].take() {
            m.reader.abort();
            self.by_client.remove(&m.client);
            self.report.mappings_closed += 1;
        }
    }

    fn close_idle(&mut self, now: Instant) {
        for i in 0..self.slots.len() {
            let idle = self.slots[i]
                .as_ref()
                .is_some_and(|m| now.duration_since(m.last_active) >= self.opts.idle_timeout);
            if idle {
                self.close(i);
            }
        }
    }

    /// A datagram from a client, received at `at`.
    async fn on_client_datagram(
        &mut self,
        client: SocketAddr,
        data: &[u8],
        at: Instant,
        listen: &UdpSocket,
    ) {
        let Ok(slot) = self.mapping(client, at).await else {
            return;
        };
        let gen = self.slots[slot].as_ref().expect("open").gen;
        let t = self.clock.since(at);
        self.advance(t, listen).await;
        self.offer(t, slot, gen, true, data);
    }

    /// A datagram from the server for mapping `slot`, received at `at`.
    async fn on_server_datagram(
        &mut self,
        slot: usize,
        gen: u64,
        data: &[u8],
        at: Instant,
        listen: &UdpSocket,
    ) {
        match self.slots.get_mut(slot).and_then(Option::as_mut) {
            Some(m) if m.gen == gen => m.last_active = m.last_active.max(at),
            _ => return,
        }
        let t = self.clock.since(at);
        self.advance(t, listen).await;
        self.offer(t, slot, gen, false, data);
    }

    fn publish(&mut self, monitor: &EmulatorMonitor) {
        self.report.network = Some(self.driver.net.report());
        for (up, c) in [
            (true, &mut self.report.upstream),
            (false, &mut self.report.downstream),
        ] {
            c.held_bytes = self.driver.held_bytes(up);
            c.peak_held_bytes = self.driver.peak_held_bytes(up);
        }
        self.report.mappings_open = self.by_client.len();
        *monitor.0.lock().expect("monitor lock") = self.report.clone();
    }
}

/// Relays between clients reaching `listen` and `server` until `stop`
/// completes; returns the final report. Fails at once if the options are
/// invalid ([`EmulatedNetwork::validate`]).
pub async fn run(
    listen: UdpSocket,
    server: SocketAddr,
    opts: EmulatorOptions,
    monitor: Arc<EmulatorMonitor>,
    stop: impl Future<Output = ()> + Send,
) -> Result<EmulatorReport> {
    check(&opts)?;
    let net = opts.network.relaying(opts.seed)?;
    Ok(net
        .relay(listen, server, opts, monitor, Box::pin(stop))
        .await)
}

/// A future the relay runs until (its stop signal).
type Stop<'a> = Pin<Box<dyn Future<Output = ()> + Send + 'a>>;

/// A running relay's loop, giving its final report.
type Running<'a> = Pin<Box<dyn Future<Output = EmulatorReport> + Send + 'a>>;

/// A network's model, built, with the relay's loop compiled for it
/// ([`relay`] on the model's own type): what [`EmulatedNetwork`] gives the
/// relay, through one virtual call at its start.
pub(crate) trait Relaying: Send {
    /// The relay's loop on this model until `stop` completes.
    fn relay<'a>(
        self: Box<Self>,
        listen: UdpSocket,
        server: SocketAddr,
        opts: EmulatorOptions,
        monitor: Arc<EmulatorMonitor>,
        stop: Stop<'a>,
    ) -> Running<'a>;
}

impl<N: Emulated + Send + 'static> Relaying for N {
    fn relay<'a>(
        self: Box<Self>,
        listen: UdpSocket,
        server: SocketAddr,
        opts: EmulatorOptions,
        monitor: Arc<EmulatorMonitor>,
        stop: Stop<'a>,
    ) -> Running<'a> {
        Box::pin(relay(*self, listen, server, opts, monitor, stop))
    }
}

/// The relay's loop on network `net`.
async fn relay<N: Emulated>(
    net: N,
    listen: UdpSocket,
    server: SocketAddr,
    opts: EmulatorOptions,
    monitor: Arc<EmulatorMonitor>,
    stop: impl Future<Output = ()>,
) -> EmulatorReport {
    let (tx, mut rx) = mpsc::channel::<FromServer>(4096);
    let opts_early = opts.early.as_nanos() as Nanos;
    let mut relay = Relay {
        driver: Driver::new(net, opts.max_held_bytes),
        opts,
        server,
        clock: Clock::start(),
        slots: Vec::new(),
        by_client: HashMap::new(),
        next_gen: 0,
        report: EmulatorReport::default(),
        from_server: tx,
        early: opts_early,
    };
    let mut buf = vec![0u8; RELAY_BUFFER];
    let mut sweep = tokio::time::interval(Duration::from_secs(1));
    tokio::pin!(stop);
    loop {
        let wake = relay
            .driver
            .net
            .next_wakeup()
            .map(|t| relay.clock.instant(t.saturating_sub(relay.early)));
        tokio::select! {
            biased;
            _ = &mut stop => break,
            _ = tokio::time::sleep_until(wake.unwrap_or_else(Instant::now)), if wake.is_some() => {}
            r = listen.recv_from(&mut buf) => {
                let at = Instant::now();
                if let Ok((n, from)) = r {
                    relay.on_client_datagram(from, &buf[..n], at, &listen).await;
                }
            }
            Some((slot, gen, data, at)) = rx.recv() => {
                relay.on_server_datagram(slot, gen, &data, at, &listen).await;
            }
            _ = sweep.tick() => {
                relay.close_idle(Instant::now());
                relay.publish(&monitor);
            }
        }
        let until = relay.clock.now() + relay.early;
        relay.advance(until, &listen).await;
    }
    for i in 0..relay.slots.len() {
        if let Some(m) = relay.slots[i].take() {
            m.reader.abort();
        }
    }
    relay.by_client.clear();
    relay.publish(&monitor);
    relay.report
}

/// A relay running on its own thread.
pub struct EmulatorHandle {
    addr: SocketAddr,
    monitor: Arc<EmulatorMonitor>,
    task: crate::background::Background<EmulatorReport>,
}

/// Checks `opts`, binds `listen` and relays to `server` on a thread of its
/// own until the handle is stopped (or dropped).
pub fn spawn(
    listen: SocketAddr,
    server: SocketAddr,
    opts: EmulatorOptions,
) -> Result<EmulatorHandle> {
    check(&opts)?;
    let net = opts.network.relaying(opts.seed)?;
    let monitor = Arc::new(EmulatorMonitor::default());
    let m = monitor.clone();
    let (addr, task) =
        crate::background::spawn_on_udp(listen, "coapcc-emulate", move |socket, stop| {
            net.relay(
                socket,
                server,
                opts,
                m,
                Box::pin(async {
                    let _ = stop.await;
                }),
            )
        })?;
    Ok(EmulatorHandle {
        addr,
        monitor,
        task,
    })
}

impl EmulatorHandle {
    /// The address clients send to.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The latest report (refreshed every second while running).
    pub fn report(&self) -> EmulatorReport {
        self.monitor.report()
    }

    /// Stops the relay and returns its final report.
    pub fn stop(mut self) -> EmulatorReport {
        self.task.shutdown().unwrap_or_default()
    }
}

/// What the relay tests share: a relay running in the background.
#[cfg(test)]
mod test_relay {
    use super::*;

    /// A relay between `127.0.0.1:addr` and a server, stopped by [`Self::stop`].
    pub(super) struct TestRelay {
        pub addr: SocketAddr,
        stop: tokio::sync::oneshot::Sender<()>,
        task: tokio::task::JoinHandle<Result<EmulatorReport>>,
    }

    impl TestRelay {
        pub async fn start(server: SocketAddr, opts: EmulatorOptions) -> Self {
            let listen = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let addr = listen.local_addr().unwrap();
            let (stop, stop_rx) = tokio::sync::oneshot::channel::<()>();
            let monitor = Arc::new(EmulatorMonitor::default());
            let task = tokio::spawn(run(listen, server, opts, monitor, async {
                let _ = stop_rx.await;
            }));
            TestRelay { addr, stop, task }
        }

        /// Stops the relay and returns its final report.
        pub async fn stop(self) -> EmulatorReport {
            self.stop.send(()).unwrap();
            self.task.await.unwrap().unwrap()
        }
    }
}

#[cfg(test)]
mod tests {
    use coapcc_link::dumbbell::{self, Buffer};

    use super::networks::dumbbell::DumbbellReport;
    use super::test_relay::TestRelay;
    use super::*;

    /// 1 Gbit/s both ways, an infinite buffer, no path jitter: a datagram
    /// takes its direction's delay (ms) and microseconds of serialisation.
    fn fast_dumbbell(uplink_delay_ms: f64, downlink_delay_ms: f64) -> dumbbell::Config {
        dumbbell::Config {
            uplink_bps: 1_000_000_000,
            downlink_bps: 1_000_000_000,
            uplink_delay_ms,
            downlink_delay_ms,
            path_delay_ms: [0.0, 0.0],
            buffer: Buffer::Infinite,
            ..dumbbell::Config::default()
        }
    }

    /// An echo server that reports the source address of each datagram.
    async fn echo_server() -> (SocketAddr, mpsc::Receiver<SocketAddr>) {
        let s = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let addr = s.local_addr().unwrap();
        let (tx, rx) = mpsc::channel(64);
        tokio::spawn(async move {
            let mut buf = vec![0u8; 65_536];
            while let Ok((n, from)) = s.recv_from(&mut buf).await {
                let _ = tx.send(from).await;
                let _ = s.send_to(&buf[..n], from).await;
            }
        });
        (addr, rx)
    }

    /// Fast links, 30 ms up and 50 ms down, no path delay: a datagram's round
    /// trip through the relay is 80 ms (plus microseconds of serialisation);
    /// each client gets its own upstream address; with room for one mapping,
    /// a second client evicts the first.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn delays_and_maps_clients() {
        let (server, mut sources) = echo_server().await;
        let net = fast_dumbbell(30.0, 50.0);
        let relay = TestRelay::start(
            server,
            EmulatorOptions {
                network: net.into(),
                max_clients: 1,
                ..EmulatorOptions::default()
            },
        )
        .await;
        let relay_addr = relay.addr;
        let mut upstream = Vec::new();
        for _ in 0..2 {
            let c = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let mut buf = [0u8; 64];
            for i in 0..3u8 {
                let t0 = Instant::now();
                c.send_to(&[i; 10], relay_addr).await.unwrap();
                let (n, _) = tokio::time::timeout(Duration::from_secs(2), c.recv_from(&mut buf))
                    .await
                    .unwrap()
                    .unwrap();
                let ms = t0.elapsed().as_secs_f64() * 1e3;
                assert_eq!(&buf[..n], &[i; 10]);
                // each direction may leave up to `early` (1 ms) before its
                // time; lateness is the machine's scheduling, not the
                // emulator's, so the upper bound only tells one application
                // of each delay from two: a second 30 ms uplink delay would
                // make it 110 ms
                assert!((78.0..110.0).contains(&ms), "round trip {ms} ms");
                upstream.push(sources.recv().await.unwrap());
            }
        }
        assert!(upstream[..3].iter().all(|a| *a == upstream[0]));
        assert!(upstream[3..].iter().all(|a| *a == upstream[3]));
        assert_ne!(upstream[0], upstream[3], "one upstream socket per client");
        let report = relay.stop().await;
        assert_eq!(report.clients_seen, 2);
        assert_eq!(report.mappings_closed, 1);
        let link = report.network_part::<DumbbellReport>().expect("its links");
        assert_eq!((link.uplink.packets, link.downlink.packets), (6, 6));
        assert_eq!(link.uplink.bytes, 6 * 38);
    }

    /// With room for one mapping, a second client evicts the first while the
    /// first one's datagram is inside the model: it is delivered to nobody
    /// and counted as such.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn replies_of_evicted_mappings_are_counted() {
        let (server, _sources) = echo_server().await;
        let net = fast_dumbbell(50.0, 50.0);
        let relay = TestRelay::start(
            server,
            EmulatorOptions {
                network: net.into(),
                max_clients: 1,
                ..EmulatorOptions::default()
            },
        )
        .await;
        let relay_addr = relay.addr;
        let a = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let b = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        a.send_to(&[1; 10], relay_addr).await.unwrap();
        tokio::time::sleep(Duration::from_millis(10)).await;
        b.send_to(&[2; 10], relay_addr).await.unwrap();
        let mut buf = [0u8; 64];
        let (n, _) = tokio::time::timeout(Duration::from_secs(2), b.recv_from(&mut buf))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(&buf[..n], &[2; 10]);
        tokio::time::sleep(Duration::from_millis(100)).await;
        let r = relay.stop().await;
        assert_eq!(r.mappings_closed, 1);
        assert_eq!(r.upstream.closed, 1, "{r:?}");
        assert_eq!(r.upstream.delivered, 2);
        assert_eq!(r.downstream.delivered, 1);
    }

    /// Datagrams above 1500 bytes, up to the largest UDP payload over IPv4
    /// (65 507 bytes), cross the dumbbell whole in both directions.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn large_datagrams_are_relayed_whole_both_ways() {
        let (server, _sources) = echo_server().await;
        let net = fast_dumbbell(1.0, 1.0);
        let relay = TestRelay::start(
            server,
            EmulatorOptions {
                network: net.into(),
                ..EmulatorOptions::default()
            },
        )
        .await;
        let relay_addr = relay.addr;
        let c = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let mut buf = vec![0u8; 70_000];
        for len in [1501usize, 9000, MAX_DATAGRAM] {
            let sent: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
            c.send_to(&sent, relay_addr).await.unwrap();
            let (n, _) = tokio::time::timeout(Duration::from_secs(3), c.recv_from(&mut buf))
                .await
                .expect("echoed")
                .unwrap();
            assert_eq!(n, len, "a {len}-byte datagram came back with {n} bytes");
            assert_eq!(&buf[..n], &sent[..]);
        }
        let r = relay.stop().await;
        assert_eq!((r.upstream.delivered, r.downstream.delivered), (3, 3));
        assert_eq!(r.upstream.bytes, (1501 + 9000 + MAX_DATAGRAM) as u64);
        assert_eq!(r.downstream.bytes, r.upstream.bytes);
    }
}
