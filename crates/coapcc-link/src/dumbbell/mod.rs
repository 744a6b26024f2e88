//! The constrained-link testbed of the Helsinki evaluations (spec `docs/spec/testbed-spec.md`
//! §1) as a sans-IO network:
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
//! A packet's size on the wire is its IPv4 size: 20 bytes of IPv4 header, the
//! transport header and the payload.
//!
//! Packets to [`SERVER`] take the uplink; every other destination is a client
//! behind the downlink. Internal events are all FIFO streams (each direction's
//! serialiser, the path to the router, arrivals at the server and at the
//! clients), so they live in the FIFO lanes of an [`Agenda`]: O(1) each way.
//!
//! Its parameters ([`Config`], [`Buffer`]) are in `config.rs`; this file is the
//! model itself.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use crate::agenda::Agenda;
use crate::errors::{ErrorDirections, ErrorProfile, ErrorReadAt, LinkErrors};
use crate::rng::{derive, SimRng, Stream};
use crate::time::{from_secs, round_nonneg, serialisation, to_secs, Nanos};
use crate::{Datagram, DropCause, Network, NodeId, Output, PacketId};

mod config;

pub use config::{Buffer, Config, Kind, MAX_DELAY_MS};

/// IPv4 header bytes.
pub const IPV4_HEADER: usize = 20;

/// The server's node id; every other id is a client.
pub const SERVER: NodeId = u32::MAX;

/// What crossed one direction of the bottleneck.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LinkRecord {
    /// Packets that finished serialisation.
    pub packets: u64,
    /// Their IP bytes.
    pub bytes: u64,
    /// Time the link spent serialising (s).
    pub busy: f64,
    /// IP bytes of copies that were unnecessary: request copies the server had
    /// already received, and the responses it sent to them.
    pub unnecessary_bytes: u64,
    /// Packets dropped at the router buffer (tail drop).
    pub dropped_buffer: u64,
    /// Packets lost to link errors.
    pub dropped_error: u64,
}

/// A direction of the bottleneck.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Clients → router → server.
    Up = 0,
    /// Server → router → clients.
    Down = 1,
}

/// A packet as the dumbbell keeps it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Pkt {
    id: PacketId,
    dst: NodeId,
    ip_len: u16,
    unnecessary: bool,
}

/// One direction of the bottleneck: buffer → serialiser → errors → delay.
struct Link {
    rate_bps: u64,
    delay: Nanos,
    limit: Option<u64>,
    queue: VecDeque<Pkt>,
    queued_bytes: u64,
    /// The packet being serialised.
    sending: Option<Pkt>,
    errors: LinkErrors,
    /// When the error process reads a packet's fate.
    read_at: ErrorReadAt,
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
enum Ev {
    /// The bottleneck finished serialising in this direction.
    TxDone(Direction),
    /// A packet reached the router from the server path.
    AtRouter(Pkt),
    /// A packet reached the server.
    AtServer(Pkt),
    /// A packet reached its client.
    AtClient(Pkt),
}

/// The dumbbell network (see the module docs).
pub struct Dumbbell {
    agenda: Agenda<Ev>,
    links: [Link; 2],
    to_server: Path,
    to_router: Path,
    processed: u64,
}

impl Dumbbell {
    /// The network of `cfg`; its random streams (error states, loss draws,
    /// path jitter, per direction) are derived from `seed`. `capacity` sizes
    /// the event lanes (grown on demand).
    pub fn new(cfg: &Config, seed: u64, capacity: usize) -> Self {
        let structure = &cfg.error_structure;
        let link = |dir: Direction, rate_bps, delay_ms: f64| {
            let (profile, state_dir) = match (structure.directions, dir) {
                (ErrorDirections::Independent, _) => (cfg.errors, dir),
                // One state sequence: both directions draw it from the
                // uplink's stream.
                (ErrorDirections::Shared, _) => (cfg.errors, Direction::Up),
                (ErrorDirections::UpOnly, Direction::Down)
                | (ErrorDirections::DownOnly, Direction::Up) => (ErrorProfile::None, dir),
                _ => (cfg.errors, dir),
            };
            Link {
                rate_bps,
                delay: from_secs(delay_ms / 1000.0),
                limit: cfg.buffer.limit(),
                queue: VecDeque::with_capacity(1024),
                queued_bytes: 0,
                sending: None,
                errors: LinkErrors::with_structure(
                    profile,
                    structure,
                    derive(seed, Stream::ErrorState, state_dir as u64),
                    derive(seed, Stream::ErrorLoss, dir as u64),
                ),
                read_at: structure.read_at,
                record: LinkRecord::default(),
                busy: 0,
            }
        };
        let path = |dir: Direction| Path {
            lo: from_secs(cfg.path_delay_ms[0] / 1000.0),
            hi: from_secs(cfg.path_delay_ms[1] / 1000.0),
            last_arrival: 0,
            rng: SimRng::new(derive(seed, Stream::PathJitter, dir as u64)),
        };
        Dumbbell {
            agenda: Agenda::new(LANES, capacity),
            links: [
                link(Direction::Up, cfg.uplink_bps, cfg.uplink_delay_ms),
                link(Direction::Down, cfg.downlink_bps, cfg.downlink_delay_ms),
            ],
            to_server: path(Direction::Up),
            to_router: path(Direction::Down),
            processed: 0,
        }
    }

    /// What crossed direction `dir` so far (`busy` in seconds).
    pub fn record(&self, dir: Direction) -> LinkRecord {
        let link = &self.links[dir as usize];
        LinkRecord {
            busy: to_secs(link.busy),
            ..link.record.clone()
        }
    }

    /// Counts `bytes` that crossed direction `dir` as unnecessary, when only
    /// the receiver can tell (a duplicate request reaching the server, a TCP
    /// segment its receiver already had).
    pub fn count_unnecessary(&mut self, dir: Direction, bytes: u64) {
        self.links[dir as usize].record.unnecessary_bytes += bytes;
    }

    /// Counts a packet the driver dropped in front of direction `dir` for a
    /// reason of its own (e.g. a real-time relay's bound on held packets).
    pub fn count_overflow(&mut self, dir: Direction) {
        self.links[dir as usize].record.dropped_buffer += 1;
    }

    /// Bytes waiting (not being serialised) in direction `dir`.
    pub fn waiting_bytes(&self, dir: Direction) -> u64 {
        self.links[dir as usize].queued_bytes
    }

    /// A packet enters bottleneck direction `dir` at `now`.
    fn enqueue(&mut self, now: Nanos, dir: Direction, p: Pkt) -> Result<(), DropCause> {
        let size = u64::from(p.ip_len);
        let link = &mut self.links[dir as usize];
        if link.read_at == ErrorReadAt::Arrival && link.errors.loses_sized(now, size) {
            link.record.dropped_error += 1;
            return Err(DropCause::LinkError);
        }
        if link.sending.is_none() {
            self.start_tx(now, dir, p);
        } else if link.limit.is_some_and(|l| link.queued_bytes + size > l) {
            link.record.dropped_buffer += 1;
            return Err(DropCause::Buffer);
        } else {
            link.queued_bytes += size;
            link.queue.push_back(p);
        }
        Ok(())
    }

    /// Starts serialising `p` in direction `dir`.
    #[inline]
    fn start_tx(&mut self, now: Nanos, dir: Direction, p: Pkt) {
        let link = &mut self.links[dir as usize];
        let t = serialisation(usize::from(p.ip_len), link.rate_bps);
        link.sending = Some(p);
        link.busy += t;
        self.agenda
            .push_lane(LANE_TX + dir as usize, now + t, Ev::TxDone(dir));
    }

    /// Serialisation in direction `dir` ended at `now`: the link-error model
    /// decides the packet's fate, then the next waiting packet starts.
    fn tx_done(&mut self, now: Nanos, dir: Direction) -> Option<Output> {
        let link = &mut self.links[dir as usize];
        let p = link.sending.take().expect("a packet was being serialised");
        let ip_len = u64::from(p.ip_len);
        link.record.packets += 1;
        link.record.bytes += ip_len;
        if p.unnecessary {
            link.record.unnecessary_bytes += ip_len;
        }
        let lost = match link.read_at {
            ErrorReadAt::End => link.errors.loses_sized(now, ip_len),
            ErrorReadAt::Start => {
                let began = now - serialisation(usize::from(p.ip_len), link.rate_bps);
                link.errors.loses_sized(began, ip_len)
            }
            ErrorReadAt::Arrival => false,
        };
        let out = if lost {
            link.record.dropped_error += 1;
            Some(Output::Dropped {
                id: p.id,
                cause: DropCause::LinkError,
            })
        } else {
            let at = now + link.delay;
            match dir {
                // The router forwards at once onto the path to the server; the
                // path's delay is drawn here, in the order packets reach the
                // router (the uplink is FIFO with a constant delay).
                Direction::Up => {
                    let at = self.to_server.arrival(at);
                    self.agenda.push_lane(LANE_SERVER, at, Ev::AtServer(p));
                }
                Direction::Down => self.agenda.push_lane(LANE_CLIENT, at, Ev::AtClient(p)),
            }
            None
        };
        let link = &mut self.links[dir as usize];
        if let Some(next) = link.queue.pop_front() {
            link.queued_bytes -= u64::from(next.ip_len);
            self.start_tx(now, dir, next);
        }
        out
    }
}

impl Network for Dumbbell {
    fn send(&mut self, now: Nanos, d: Datagram) -> Result<(), DropCause> {
        let p = Pkt {
            id: d.id,
            dst: d.dst,
            ip_len: (IPV4_HEADER as u16) + d.transport_header + d.payload,
            unnecessary: d.unnecessary,
        };
        if d.dst == SERVER {
            self.enqueue(now, Direction::Up, p)
        } else {
            let at = self.to_router.arrival(now);
            self.agenda.push_lane(LANE_ROUTER, at, Ev::AtRouter(p));
            Ok(())
        }
    }

    #[inline]
    fn next_wakeup(&self) -> Option<Nanos> {
        self.agenda.peek_time()
    }

    #[inline]
    fn poll(&mut self, until: Nanos) -> Option<(Nanos, Option<Output>)> {
        let (now, ev) = self.agenda.pop_due(until)?;
        self.processed += 1;
        let out = match ev {
            Ev::TxDone(dir) => self.tx_done(now, dir),
            Ev::AtRouter(p) => self
                .enqueue(now, Direction::Down, p)
                .err()
                .map(|cause| Output::Dropped { id: p.id, cause }),
            Ev::AtServer(p) => Some(Output::Delivered {
                id: p.id,
                node: SERVER,
            }),
            Ev::AtClient(p) => Some(Output::Delivered {
                id: p.id,
                node: p.dst,
            }),
        };
        Some((now, out))
    }

    fn in_flight(&self) -> u64 {
        let queued: u64 = self
            .links
            .iter()
            .map(|l| l.queue.len() as u64 + u64::from(l.sending.is_some()))
            .sum();
        let moving = self
            .agenda
            .pending()
            .filter(|e| !matches!(e, Ev::TxDone(_)))
            .count() as u64;
        queued + moving
    }

    fn events(&self) -> u64 {
        self.processed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::errors::{ErrorProfile, ErrorStructure};

    const MS: Nanos = 1_000_000;

    fn net(buffer: Buffer) -> Config {
        Config {
            buffer,
            ..Config::default()
        }
    }

    /// A UDP datagram of `coap` bytes from client 0 to the server (or back).
    fn udp(id: PacketId, coap: u16, up: bool) -> Datagram {
        Datagram {
            id,
            src: if up { 0 } else { SERVER },
            dst: if up { SERVER } else { 0 },
            transport_header: 8,
            payload: coap,
            unnecessary: false,
        }
    }

    /// Runs the network until nothing is left; returns (time, output) pairs.
    fn drain(n: &mut Dumbbell) -> Vec<(Nanos, Output)> {
        let mut out = Vec::new();
        while let Some(t) = n.next_wakeup() {
            if let (at, Some(o)) = n.poll(t).expect("due") {
                out.push((at, o));
            }
        }
        out
    }

    /// 60 kbit/s moves 7500 B/s: a 38-byte request (IPv4 20 + UDP 8 + CoAP
    /// 10) takes 38/7500 s = 5.0667 ms, plus 200 ms of propagation, plus the
    /// path's 10 ms (path delay fixed at [10, 10]).
    #[test]
    fn one_packet_hand_computed() {
        let cfg = Config {
            path_delay_ms: [10.0, 10.0],
            ..net(Buffer::Infinite)
        };
        let mut n = Dumbbell::new(&cfg, 1, 16);
        n.send(0, udp(7, 10, true)).unwrap();
        n.send(MS, udp(8, 10, true)).unwrap();
        assert_eq!(n.in_flight(), 2);
        let out = drain(&mut n);
        let server = Output::Delivered {
            id: 7,
            node: SERVER,
        };
        assert_eq!(out[0], (5_066_667 + 200 * MS + 10 * MS, server));
        // the second waits for the first, then takes its own 5.0667 ms
        assert_eq!(out[1].0, 2 * 5_066_667 + 210 * MS);
        let r = n.record(Direction::Up);
        assert_eq!((r.packets, r.bytes), (2, 76));
        assert!((r.busy - 2.0 * 0.005066667).abs() < 1e-9);
        assert_eq!(n.in_flight(), 0);
        // 2 × (serialisation done, arrival)
        assert_eq!(n.events(), 4);
    }

    /// Downlink: 93 bytes (a 65-byte CoAP response) at 30 kbit/s take 24.8 ms;
    /// path 10 ms to the router, then 24.8 ms, then 400 ms.
    #[test]
    fn a_response_crosses_the_path_then_the_downlink() {
        let cfg = Config {
            path_delay_ms: [10.0, 10.0],
            ..net(Buffer::Infinite)
        };
        let mut n = Dumbbell::new(&cfg, 1, 16);
        n.send(0, udp(3, 65, false)).unwrap();
        let out = drain(&mut n);
        assert_eq!(
            out,
            [(
                10 * MS + 24_800_000 + 400 * MS,
                Output::Delivered { id: 3, node: 0 }
            )]
        );
        assert_eq!(n.record(Direction::Down).bytes, 93);
    }

    /// Buffer 100 B: the packet being serialised does not count; two 38-byte
    /// packets wait (76 B); a third would make 114 > 100 and is dropped.
    #[test]
    fn tail_drop_counts_waiting_bytes_only() {
        let mut n = Dumbbell::new(&net(Buffer::Bytes(100)), 1, 16);
        for id in 0..3 {
            n.send(0, udp(id, 10, true)).unwrap();
        }
        assert_eq!(n.waiting_bytes(Direction::Up), 76);
        assert_eq!(n.send(0, udp(3, 10, true)), Err(DropCause::Buffer));
        assert_eq!(n.record(Direction::Up).dropped_buffer, 1);
        assert_eq!(n.in_flight(), 3);
        // once the first is serialised, the second starts and frees 38 B
        let (t, out) = n.poll(u64::MAX).unwrap();
        assert_eq!((t, out), (5_066_667, None));
        assert_eq!(n.waiting_bytes(Direction::Up), 38);
        assert!(n.send(t, udp(4, 10, true)).is_ok());
    }

    #[test]
    fn path_keeps_order_within_its_bounds() {
        let cfg = Config::default();
        let mut n = Dumbbell::new(&cfg, 3, 16);
        let mut last = 0;
        for i in 0..1000u64 {
            let now = i * MS / 10;
            let a = n.to_server.arrival(now);
            assert!(a >= last && a >= now + 10 * MS && a <= now.max(last) + 20 * MS);
            last = a;
        }
    }

    /// Conservation under the high error profile and a small buffer: every
    /// packet offered is delivered or dropped exactly once, and the error
    /// losses are about the profile's average.
    #[test]
    fn packets_are_conserved_under_errors() {
        let cfg = Config {
            errors: ErrorProfile::High,
            ..net(Buffer::Bytes(2500))
        };
        let mut n = Dumbbell::new(&cfg, 9, 16);
        let total = 20_000u32;
        let (mut delivered, mut dropped) = (0u32, 0u32);
        let mut seen = vec![false; total as usize];
        for i in 0..total {
            // one 38-byte packet every 20 ms each way: never queued up
            let now = u64::from(i) * 20 * MS;
            while let Some(t) = n.next_wakeup().filter(|&t| t <= now) {
                if let (_, Some(o)) = n.poll(t).unwrap() {
                    let id = match o {
                        Output::Delivered { id, .. } => {
                            delivered += 1;
                            id
                        }
                        Output::Dropped { id, .. } => {
                            dropped += 1;
                            id
                        }
                    };
                    assert!(!seen[id as usize], "packet {id} reported twice");
                    seen[id as usize] = true;
                }
            }
            n.send(now, udp(i, 10, i % 2 == 0)).unwrap();
        }
        let left = drain(&mut n).len() as u32;
        assert_eq!(delivered + dropped + left, total);
        let rate = f64::from(dropped) / f64::from(total);
        assert!(
            (rate - ErrorProfile::High.average_loss()).abs() < 0.03,
            "{rate}"
        );
    }

    /// Offers one 38-byte packet every 20 ms each way (never queued) for
    /// 400 s under `structure` and the high profile; returns the packets
    /// lost per direction (up, down), each direction's serialised packets,
    /// and checks conservation.
    fn lost_per_direction(structure: ErrorStructure) -> ([u32; 2], [u64; 2]) {
        let cfg = Config {
            errors: ErrorProfile::High,
            error_structure: structure,
            ..net(Buffer::Bytes(2500))
        };
        let mut n = Dumbbell::new(&cfg, 9, 16);
        let total = 20_000u32;
        let mut lost = [0u32; 2];
        let mut offered = 0u32;
        let mut settled = 0u32;
        let count = |o: Output, lost: &mut [u32; 2], settled: &mut u32| {
            *settled += 1;
            if let Output::Dropped { id, cause } = o {
                assert_eq!(cause, DropCause::LinkError);
                lost[(id % 2 == 1) as usize] += 1;
            }
        };
        for i in 0..total {
            let now = u64::from(i) * 20 * MS;
            while let Some(t) = n.next_wakeup().filter(|&t| t <= now) {
                if let (_, Some(o)) = n.poll(t).unwrap() {
                    count(o, &mut lost, &mut settled);
                }
            }
            offered += 1;
            // even ids up, odd ids down
            if let Err(cause) = n.send(now, udp(i, 10, i % 2 == 0)) {
                assert_eq!(cause, DropCause::LinkError);
                lost[(i % 2 == 1) as usize] += 1;
                settled += 1;
            }
        }
        for (_, o) in drain(&mut n) {
            count(o, &mut lost, &mut settled);
        }
        assert_eq!(settled, offered, "every packet settled once");
        let serialised = [
            n.record(Direction::Up).packets,
            n.record(Direction::Down).packets,
        ];
        (lost, serialised)
    }

    /// Each property of [`ErrorStructure`] does what it says: one-way
    /// processes lose nothing the other way; a loss read on arrival takes no
    /// link time (every serialised packet arrives); the other readings keep
    /// the profile's average (≈ 18 %, 10 000 packets each way: a binomial
    /// standard deviation of 0.4 points, so 3 points is far outside chance
    /// but well inside the bursts' extra variance).
    #[test]
    fn error_structure_properties() {
        use crate::errors::{ErrorStart, ErrorUnit, Truncation};
        let avg = ErrorProfile::High.average_loss();
        let near = |lost: u32| (f64::from(lost) / 10_000.0 - avg).abs() < 0.03;
        let (lost, _) = lost_per_direction(ErrorStructure {
            directions: ErrorDirections::UpOnly,
            ..ErrorStructure::default()
        });
        assert!(near(lost[0]) && lost[1] == 0, "{lost:?}");
        let (lost, _) = lost_per_direction(ErrorStructure {
            directions: ErrorDirections::DownOnly,
            ..ErrorStructure::default()
        });
        assert!(lost[0] == 0 && near(lost[1]), "{lost:?}");
        let (lost, serialised) = lost_per_direction(ErrorStructure {
            read_at: ErrorReadAt::Arrival,
            ..ErrorStructure::default()
        });
        assert!(near(lost[0]) && near(lost[1]), "{lost:?}");
        assert_eq!(
            serialised,
            [10_000 - u64::from(lost[0]), 10_000 - u64::from(lost[1])]
        );
        for structure in [
            ErrorStructure::default(),
            ErrorStructure {
                directions: ErrorDirections::Shared,
                ..ErrorStructure::default()
            },
            ErrorStructure {
                read_at: ErrorReadAt::Start,
                ..ErrorStructure::default()
            },
            ErrorStructure {
                start: ErrorStart::Stationary,
                ..ErrorStructure::default()
            },
            ErrorStructure {
                truncation: Truncation::Redraw,
                ..ErrorStructure::default()
            },
            // 38-byte packets under the per-byte unit lose less:
            // 1 − (1 − p)^(38/65) in each state; checked in `errors`.
            ErrorStructure {
                unit: ErrorUnit::Packet,
                ..ErrorStructure::default()
            },
        ] {
            let (lost, serialised) = lost_per_direction(structure);
            assert!(near(lost[0]) && near(lost[1]), "{structure:?}: {lost:?}");
            assert_eq!(serialised, [10_000, 10_000]);
        }
    }

    /// Shared directions: at every instant both directions are in the same
    /// state (one state sequence); independent ones differ somewhere.
    #[test]
    fn shared_directions_share_the_state() {
        let cfg = |directions| Config {
            errors: ErrorProfile::High,
            error_structure: ErrorStructure {
                directions,
                ..ErrorStructure::default()
            },
            ..Config::default()
        };
        let same = |directions| {
            let mut n = Dumbbell::new(&cfg(directions), 3, 16);
            (1..10_000u64).all(|i| {
                let t = i * 10 * MS;
                let [up, down] = &mut n.links;
                up.errors.is_bad(t) == down.errors.is_bad(t)
            })
        };
        assert!(same(ErrorDirections::Shared));
        assert!(!same(ErrorDirections::Independent));
    }

    #[test]
    fn scaling_divides_delays_and_multiplies_rates() {
        let s = Config::default().scaled(10.0);
        assert_eq!((s.uplink_bps, s.downlink_bps), (600_000, 300_000));
        assert_eq!((s.uplink_delay_ms, s.downlink_delay_ms), (20.0, 40.0));
        assert_eq!(s.path_delay_ms, [1.0, 2.0]);
        assert_eq!(s.buffer, Buffer::Infinite);
    }
}
