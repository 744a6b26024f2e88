//! A real-time UDP relay that puts a network model between any CoAP clients
//! and any CoAP server: the constrained link of `docs/spec/testbed.md` §1
//! ([`coapcc_link::dumbbell`]), the IEEE 802.15.4 grid of `docs/spec/radio.md` §1
//! ([`coapcc_link::grid`]) or the Wi-Fi star of `docs/spec/radio.md` §2
//! ([`coapcc_link::star`]). The network is the simulator's own sans-IO model,
//! driven here on the wall clock: a datagram enters the model when the relay
//! receives it, and leaves when the model delivers it.
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
//! Each network says it in its hook (the crate's `Hook` trait, one file each under
//! `emulate/networks/`); [`EmulatedNetwork`] names the networks and
//! dispatches to their hooks in one place (`with_hook!`).
//!
//! - **Dumbbell**: a mapping is the client node numbered by its slot (slots
//!   are reused after a mapping closes); the server is
//!   [`dumbbell::SERVER`], behind the router.
//! - **Grid**: the server runs on the grid's server node
//!   ([`grid::Config::server`], node 3 by default). The `n`th client mapping
//!   the relay opens (counting from 0 since it started) attaches to
//!   `client_nodes[n mod len]` ([`client_node`]), where the client nodes are
//!   the list given in [`EmulatedNetwork::Grid`], or by default every node
//!   but the root (the border router) and the server, in node order
//!   ([`default_client_nodes`]): on the 6 × 6 grid the first client is node
//!   2, the second node 4, the 34th node 36, and the 35th node 2 again. A
//!   mapping that closed (idle or evicted) and opens again counts as a new
//!   client. Two mappings on one node share its MAC and its 6LoWPAN layer,
//!   as two applications on one mote would. The grid carries UDP only and
//!   sizes its frames from the 6LoWPAN encoding of the real CoAP message
//!   length; a datagram larger than eight fragments can carry
//!   ([`grid::sixlowpan::max_coap`]: 728 bytes with the default addressing)
//!   is refused and counted ([`DatagramCounts::refused_too_large`]).
//!
//! Time zero of the model is when the relay starts. A packet's arrival time is
//! taken when the relay receives it; the relay sleeps until the model's next
//! event is due and sends a packet on when the model delivers it, as
//! precisely as the tokio timer allows (1 ms resolution). Model time never
//! goes back: a datagram stamped earlier than an event the relay has already
//! handled (at most [`EmulatorOptions::early`] ahead of the clock) enters at
//! that event's time.

use std::collections::HashMap;
use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{anyhow, Result};
use coapcc_link::dumbbell::{self, LinkRecord};
use coapcc_link::grid;
use coapcc_link::star;
use coapcc_link::{Datagram, DropCause, Nanos, Network, NodeId, Output};
use tokio::net::UdpSocket;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::clock::Clock;
use crate::drive::{Driver, Fate};

/// UDP header bytes (the relay carries UDP datagrams).
const UDP_HEADER: u16 = 8;

/// The largest datagram the relay carries: the largest UDP payload over IPv4
/// (65 535 − 20 − 8). Larger ones (possible over IPv6) are refused and
/// counted ([`DatagramCounts::refused_too_large`]); none is ever cut.
pub const MAX_DATAGRAM: usize = 65_507;

/// The relay's receive buffer: larger than any UDP payload, so a datagram
/// is never read truncated.
const RELAY_BUFFER: usize = 65_536;

/// The network the relay runs.
#[derive(Clone, Debug, PartialEq)]
pub enum EmulatedNetwork {
    /// The constrained-link dumbbell (`docs/spec/testbed.md` §1).
    Dumbbell(dumbbell::Config),
    /// The IEEE 802.15.4 grid (`docs/spec/radio.md` §1).
    Grid {
        /// The grid.
        config: grid::Config,
        /// The nodes client mappings attach to, in the order they are given
        /// out (see the module docs); empty: every node but the root and the
        /// server, in node order.
        client_nodes: Vec<NodeId>,
    },
    /// The IEEE 802.11 star of the lwIP evaluation (`docs/spec/radio.md` §2): the
    /// server behind the access point's wired hop, the `n`th client on
    /// station `n mod stations + 1`.
    Star(star::Config),
}

impl Default for EmulatedNetwork {
    /// The testbed's dumbbell.
    fn default() -> Self {
        EmulatedNetwork::Dumbbell(dumbbell::Config::default())
    }
}

impl From<dumbbell::Config> for EmulatedNetwork {
    fn from(c: dumbbell::Config) -> Self {
        EmulatedNetwork::Dumbbell(c)
    }
}

impl From<grid::Config> for EmulatedNetwork {
    /// The grid with the default client nodes.
    fn from(config: grid::Config) -> Self {
        EmulatedNetwork::Grid {
            config,
            client_nodes: Vec::new(),
        }
    }
}

/// The one place that names every network: `$h` is the network's
/// [`Hook`] (its file under `networks/`), `$body` what to do with it.
macro_rules! with_hook {
    ($net:expr, $h:ident => $body:expr) => {
        match $net {
            EmulatedNetwork::Dumbbell(config) => {
                let $h = config;
                $body
            }
            EmulatedNetwork::Grid {
                config,
                client_nodes,
            } => {
                let $h = &networks::grid::GridHook {
                    config,
                    client_nodes,
                };
                $body
            }
            EmulatedNetwork::Star(config) => {
                let $h = config;
                $body
            }
        }
    };
}

/// Each network's emulator hook, one file each.
mod networks {
    pub(super) mod dumbbell;
    pub(super) mod grid;
    pub(super) mod star;
}

pub use networks::grid::{default_client_nodes, grid_client_nodes, GridNodeReport, GridReport};

/// What the emulators need of a network beyond its link model: its
/// parameters, where clients and the server attach, what it carries. One
/// implementation per network, in its file under `networks/`; the UDP relay
/// runs its [`Hook::Net`] (monomorphised, one loop per network) and the IP
/// mode the same model behind `dyn Network`.
pub(crate) trait Hook {
    /// The model the relay drives, with its attachment rule.
    type Net: Emulated + Send + 'static;
    /// The parameters, as reports show them.
    type Config: serde::Serialize;
    /// `dumbbell`, `grid`, …
    const KIND: &'static str;
    /// The parameters.
    fn config(&self) -> &Self::Config;
    /// What the relay would refuse to run; errors name the field.
    fn validate(&self) -> Result<(), String>;
    /// The nodes clients attach to, in the order they are given out; empty
    /// if the model does not tell clients apart.
    fn client_nodes(&self) -> Vec<NodeId>;
    /// The server's node.
    fn server_node(&self) -> NodeId;
    /// The model seeded with `seed` (the simulator's construction).
    fn model(&self, seed: u64) -> Result<Self::Net, String>;
    /// What the IP mode hands to the model of a real IPv4 packet.
    fn ip_carriage(&self) -> IpCarriage;
    /// The IP MTU of the IP mode's TUN devices.
    fn ip_mtu(&self) -> usize;
}

/// What a network carries of a real IPv4 packet in the IP mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IpCarriage {
    /// Any IPv4 packet, at its real size.
    AnyIpv4,
    /// Unfragmented UDP with a payload up to this many bytes, sized with an
    /// 8-byte transport header (the model compresses the rest).
    UdpUpTo(usize),
}

impl EmulatedNetwork {
    /// Checks what the relay would refuse to run; errors name the field and
    /// what was expected.
    pub fn validate(&self) -> Result<(), String> {
        with_hook!(self, h => h.validate())
    }

    /// The nodes clients attach to, in the order they are given out: the
    /// grid's client nodes ([`grid_client_nodes`]), the star's stations
    /// (1 to n); empty for the dumbbell, whose clients are not told apart
    /// by the model.
    pub fn client_nodes(&self) -> Vec<NodeId> {
        with_hook!(self, h => h.client_nodes())
    }

    /// The server's node: the dumbbell's and the star's [`dumbbell::SERVER`]
    /// / [`star::SERVER`], the grid's server node.
    pub fn server_node(&self) -> NodeId {
        with_hook!(self, h => h.server_node())
    }

    /// `dumbbell`, `grid` or `star`.
    pub fn kind(&self) -> &'static str {
        fn kind<H: Hook>(_: &H) -> &'static str {
            H::KIND
        }
        with_hook!(self, h => kind(h))
    }

    /// The network's parameters as JSON (its `Config`, without the kind).
    pub fn config_json(&self) -> serde_json::Value {
        with_hook!(self, h => serde_json::to_value(h.config()).unwrap_or(serde_json::Value::Null))
    }

    /// The model seeded with `seed` behind `dyn Network`, for the IP mode
    /// (checked first).
    pub(crate) fn dyn_model(&self, seed: u64) -> Result<Box<dyn Network + Send>> {
        self.validate().map_err(|e| anyhow!(e))?;
        with_hook!(self, h => Ok(Box::new(h.model(seed).map_err(|e| anyhow!(e))?)))
    }

    /// What the IP mode hands to the model of a real IPv4 packet.
    pub(crate) fn ip_carriage(&self) -> IpCarriage {
        with_hook!(self, h => h.ip_carriage())
    }

    /// The IP MTU of the IP mode's TUN devices.
    pub(crate) fn ip_mtu(&self) -> usize {
        with_hook!(self, h => h.ip_mtu())
    }
}

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
    /// Seed of the model's random streams (dumbbell: error processes and
    /// path jitter; grid: MAC backoffs and sequence numbers).
    pub seed: u64,
    /// Most client mappings at once.
    pub max_clients: usize,
    /// A mapping unused this long is closed.
    pub idle_timeout: Duration,
    /// Most packets held by the relay at once (inside the model, whose own
    /// buffers may be infinite); more are dropped and counted
    /// ([`DatagramCounts::refused_full`]; on the dumbbell also as buffer
    /// drops of their direction).
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
    /// Not handed to the model: larger than the network carries (the grid's
    /// eight 6LoWPAN fragments, or [`MAX_DATAGRAM`]).
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
    /// Dumbbell: the clients → server direction of the bottleneck (zero on
    /// the grid).
    pub uplink: LinkRecord,
    /// Dumbbell: the server → clients direction (zero on the grid).
    pub downlink: LinkRecord,
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
    /// Grid: its nodes, drops and medium (`None` on the dumbbell).
    pub grid: Option<GridReport>,
    /// Star: what its wireless part did (`None` on the other networks).
    pub star: Option<star::StarRecord>,
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
    /// Writes the network's counters into `report`.
    fn publish(&self, report: &mut EmulatorReport);
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
        let ip_bytes = (dumbbell::IPV4_HEADER + usize::from(UDP_HEADER) + data.len()) as u64;
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
        self.driver.net.publish(&mut self.report);
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
    stop: impl Future<Output = ()>,
) -> Result<EmulatorReport> {
    check(&opts)?;
    with_hook!(&opts.network, h => {
        let net = h.model(opts.seed).map_err(|e| anyhow!(e))?;
        Ok(relay(net, listen, server, opts, monitor, stop).await)
    })
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
    with_hook!(&opts.network, h => {
        let net = h.model(opts.seed).map_err(|e| anyhow!(e))?;
        spawn_relay(net, listen, server, opts)
    })
}

/// [`spawn`] with the model built.
fn spawn_relay<N: Emulated + Send + 'static>(
    net: N,
    listen: SocketAddr,
    server: SocketAddr,
    opts: EmulatorOptions,
) -> Result<EmulatorHandle> {
    let monitor = Arc::new(EmulatorMonitor::default());
    let m = monitor.clone();
    let (addr, task) = crate::background::spawn_on_udp(
        listen,
        "coapcc-emulate",
        move |socket, stop| async move {
            relay(net, socket, server, opts, m, async {
                let _ = stop.await;
            })
            .await
        },
    )?;
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

/// What the relay tests share: a relay running in the background, and a
/// dumbbell whose only cost is its propagation delays.
#[cfg(test)]
mod test_relay {
    use super::*;
    use coapcc_link::dumbbell::Buffer;

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

    /// 1 Gbit/s both ways, an infinite buffer, no path jitter: a datagram
    /// takes its direction's delay (ms) and microseconds of serialisation.
    pub(super) fn fast_dumbbell(uplink_delay_ms: f64, downlink_delay_ms: f64) -> dumbbell::Config {
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
}

#[cfg(test)]
mod tests {
    use super::test_relay::{fast_dumbbell, TestRelay};
    use super::*;

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
        assert_eq!((report.uplink.packets, report.downlink.packets), (6, 6));
        assert_eq!(report.uplink.bytes, 6 * 38);
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

#[cfg(test)]
mod grid_tests {
    use super::test_relay::TestRelay;
    use super::*;

    /// The attachment rule on the 6 × 6 grid: every node but the root (1) and
    /// the server (3), in node order, wrapping around after the 34th client.
    #[test]
    fn clients_take_the_client_nodes_in_order_and_wrap_around() {
        let cfg = grid::Config::default();
        let nodes = default_client_nodes(&cfg);
        assert_eq!(nodes.len(), 34);
        assert_eq!(&nodes[..4], &[2, 4, 5, 6]);
        assert_eq!(nodes[33], 36);
        let attached: Vec<NodeId> = (0..36).map(|i| client_node(&nodes, i)).collect();
        assert_eq!(&attached[..3], &[2, 4, 5]);
        assert_eq!(attached[33], 36, "the 34th client is on node 36");
        assert_eq!(&attached[34..], &[2, 4], "the 35th wraps around to node 2");

        // another root and server
        let cfg = grid::Config {
            root: 36,
            server: 1,
            ..grid::Config::default()
        };
        let nodes = default_client_nodes(&cfg);
        assert_eq!((nodes[0], nodes[33]), (2, 35));

        // an explicit list is taken as given, in its order
        let cfg = grid::Config::default();
        assert_eq!(grid_client_nodes(&cfg, &[36, 2]).unwrap(), vec![36, 2]);
        assert_eq!(client_node(&[36, 2], 2), 36);
        let err = |given: &[NodeId]| grid_client_nodes(&cfg, given).unwrap_err();
        assert!(err(&[3]).contains("server"), "{}", err(&[3]));
        assert!(err(&[37]).contains("1 to 36"), "{}", err(&[37]));
        assert!(err(&[0]).contains("1 to 36"));
        assert!(err(&[5, 5]).contains("twice"));

        // two nodes, both taken: no room for clients
        let cfg = grid::Config {
            rows: 1,
            cols: 2,
            root: 1,
            server: 2,
            ..grid::Config::default()
        };
        let e = EmulatedNetwork::from(cfg).validate().unwrap_err();
        assert!(e.starts_with("client_nodes: the grid has no node"), "{e}");
    }

    /// An echo server.
    async fn echo_server() -> SocketAddr {
        let s = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let addr = s.local_addr().unwrap();
        tokio::spawn(async move {
            let mut buf = [0u8; 1500];
            while let Ok((n, from)) = s.recv_from(&mut buf).await {
                let _ = s.send_to(&buf[..n], from).await;
            }
        });
        addr
    }

    /// Through the grid: three clients on the two listed nodes (the third
    /// wraps around to the first), each datagram echoed back; a datagram
    /// larger than the grid carries is refused and counted, not relayed, and
    /// one that needs four fragments per hop gets through.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn grid_relay_attaches_wraps_and_refuses_oversized_datagrams() {
        let server = echo_server().await;
        let relay = TestRelay::start(
            server,
            EmulatorOptions {
                network: EmulatedNetwork::Grid {
                    config: grid::Config::default(),
                    client_nodes: vec![4, 36],
                },
                ..EmulatorOptions::default()
            },
        )
        .await;
        let relay_addr = relay.addr;
        let max = grid::sixlowpan::max_coap(Default::default(), true);
        assert_eq!(max, 728);
        for _ in 0..3 {
            let c = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let mut buf = [0u8; 1500];
            c.send_to(&[7; 40], relay_addr).await.unwrap();
            let (n, _) = tokio::time::timeout(Duration::from_secs(2), c.recv_from(&mut buf))
                .await
                .unwrap()
                .unwrap();
            assert_eq!(&buf[..n], &[7; 40]);
        }
        let c = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        c.send_to(&vec![1; max + 1], relay_addr).await.unwrap();
        c.send_to(&[2; 300], relay_addr).await.unwrap();
        let mut buf = [0u8; 1500];
        let (n, _) = tokio::time::timeout(Duration::from_secs(3), c.recv_from(&mut buf))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(&buf[..n], &[2; 300], "a fragmented datagram got through");
        let r = relay.stop().await;
        let g = r.grid.as_ref().expect("a grid report");
        let clients: Vec<(NodeId, u64)> = g
            .nodes
            .iter()
            .filter(|n| n.clients > 0)
            .map(|n| (n.node, n.clients))
            .collect();
        assert_eq!(clients, vec![(4, 2), (36, 2)]);
        assert_eq!(r.clients_seen, 4);
        assert_eq!(r.upstream.received, 5);
        assert_eq!(r.upstream.refused_too_large, 1);
        assert_eq!((r.upstream.delivered, r.downstream.delivered), (4, 4));
        assert_eq!(r.upstream.bytes, 3 * 40 + (max + 1 + 300) as u64);
        assert_eq!((r.uplink.packets, r.downlink.packets), (0, 0));
        let t = g.totals();
        assert_eq!(g.frames_on_air, t.data_frames + t.ack_frames);
        assert!(t.data_frames >= 8, "{t:?}");
        assert_eq!(g.drops.total(), 0);
    }
}

#[cfg(test)]
mod star_tests {
    use super::test_relay::TestRelay;
    use super::*;

    /// Through the Wi-Fi star with two stations: three clients (the third
    /// back on station 1), each datagram echoed back through the DCF and the
    /// wired hop.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn star_relay_carries_datagrams_both_ways() {
        let s = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let server = s.local_addr().unwrap();
        tokio::spawn(async move {
            let mut buf = [0u8; 1500];
            while let Ok((n, from)) = s.recv_from(&mut buf).await {
                let _ = s.send_to(&buf[..n], from).await;
            }
        });
        let net = EmulatedNetwork::Star(star::Config {
            stations: 2,
            ..star::Config::default()
        });
        assert_eq!(net.client_nodes(), vec![1, 2]);
        assert_eq!(net.kind(), "star");
        let relay = TestRelay::start(
            server,
            EmulatorOptions {
                network: net,
                ..EmulatorOptions::default()
            },
        )
        .await;
        for i in 0..3u8 {
            let c = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let mut buf = [0u8; 1500];
            c.send_to(&[i; 1200], relay.addr).await.unwrap();
            let (n, _) = tokio::time::timeout(Duration::from_secs(2), c.recv_from(&mut buf))
                .await
                .unwrap()
                .unwrap();
            assert_eq!(&buf[..n], &[i; 1200][..]);
        }
        let r = relay.stop().await;
        assert_eq!(r.clients_seen, 3);
        assert_eq!((r.upstream.delivered, r.downstream.delivered), (3, 3));
        assert_eq!(r.upstream.dropped + r.downstream.dropped, 0);
        let s = r.star.expect("a star report");
        assert!(s.delivered_frames >= 6, "{s:?}");
    }
}
