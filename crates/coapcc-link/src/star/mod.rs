//! The 12-station Wi-Fi star of the lwIP evaluation (spec `docs/spec/radio-spec.md` §2,
//! `docs/spec/testbed-spec.md` §5) as a sans-IO network: stations around one IEEE 802.11
//! access point sharing one collision domain under DCF, and a 10 Mbit/s
//! wired hop from the access point to the server.
//!
//! ```text
//!  station 1 ┐
//!  station 2 ┼─ 802.11 DCF, 2 Mbit/s, one collision domain ─ AP ── 10 Mbit/s ── server
//!      …     ┘
//! ```
//!
//! **DCF** (the defaults of INET and ns-3 for 802.11b at 2 Mbit/s):
//! - Every node (stations and access point) has a FIFO of `queue` packets,
//!   the one being sent included; a packet that finds it full is dropped.
//! - A node with a frame to send and no backoff pending transmits at once if
//!   the medium has been idle for DIFS; otherwise it draws a backoff of
//!   U{0 … CW} slots. The counter goes down by one per idle slot, counted
//!   only after the medium has been idle for DIFS (EIFS after a frame the
//!   node could not decode, i.e. a collision it did not take part in), and
//!   is frozen while the medium is busy. At zero the node transmits; nodes
//!   whose counters reach zero at the same slot boundary collide.
//! - The receiver of an intact data frame answers SIFS later with an ACK.
//!   No ACK within the ACK timeout: CW ← min(2·CW + 1, CWmax), retry; after
//!   `retry_limit` retries the frame is dropped. Success or drop: CW ← CWmin
//!   and a new backoff (post-backoff), counted even with nothing to send.
//! - Airtime: PLCP preamble and header (192 µs) + MAC header, LLC/SNAP,
//!   the IP packet and FCS at the data rate. ACK: 192 µs + 14 bytes.
//!
//! Collisions can only start at the same instant: everyone hears everyone,
//! and sensing is immediate. The wired hop is a FIFO serialiser with no
//! buffer limit and no propagation delay.
//!
//! Node ids: stations 1 … n, the access point 0, the server [`SERVER`].
//!
//! Its parameters and the timings derived from them ([`Config`]) are in
//! `config.rs`; this file is the model itself.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use crate::agenda::Agenda;
use crate::rng::{derive, SimRng, Stream};
use crate::time::{serialisation, Nanos};
use crate::{Datagram, DropCause, Network, NodeId, Output, PacketId};

mod config;

pub use config::{Config, Kind};

/// The server's node id.
pub const SERVER: NodeId = u32::MAX;
/// The access point's node id.
pub const AP: NodeId = 0;
/// IPv4 header bytes.
pub const IPV4_HEADER: u16 = 20;
/// 802.11 MAC header (24), FCS (4) and LLC/SNAP (8) bytes around an IP
/// packet.
pub const MAC_OVERHEAD: u16 = 24 + 4 + 8;
/// ACK frame bytes.
pub const ACK_BYTES: usize = 14;

/// What the wireless part did.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StarRecord {
    /// Data frames put on the air (every attempt), stations and AP.
    pub data_frames: u64,
    /// Of those, frames that collided.
    pub collided_frames: u64,
    /// Collisions (transmission starts with two or more frames).
    pub collisions: u64,
    /// Retransmissions (attempts after the first).
    pub retries: u64,
    /// Frames dropped after the last retry.
    pub retry_drops: u64,
    /// Packets dropped at a full queue (stations and AP).
    pub queue_drops: u64,
    /// Data frames delivered (acknowledged).
    pub delivered_frames: u64,
    /// Time the medium was busy (s).
    pub busy: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Pkt {
    id: PacketId,
    dst: NodeId,
    ip_len: u16,
}

/// A node of the wireless part (index 0 = AP, i = station i).
#[derive(Clone, Debug, Default)]
struct Node {
    queue: VecDeque<Pkt>,
    /// Backoff slots left, if a backoff is pending.
    backoff: Option<u32>,
    cw: u32,
    retries: u32,
    /// The node counts slots from this time on (set after it stops
    /// transmitting, waiting for an ACK, or hearing a collision).
    ready_at: Nanos,
    /// Whether the node's IFS is EIFS (it heard a corrupted frame).
    eifs: bool,
    /// Transmitting or waiting for its ACK.
    busy: bool,
    rng: Option<SimRng>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ev {
    /// The earliest backoff expires (stale unless the token matches).
    Access(u32),
    /// The frames on the air end.
    AirEnd,
    /// The ACK of the transmission ends.
    AckEnd,
    /// Colliding senders give up waiting for their ACK.
    AckTimeout,
    /// A packet leaves the wired hop toward the server.
    AtServer(Pkt),
    /// A packet from the server reaches the AP.
    AtAp(Pkt),
}

/// The star network (see the module docs).
pub struct Star {
    cfg: Config,
    nodes: Vec<Node>,
    agenda: Agenda<Ev>,
    token: u32,
    /// Medium: busy until `busy_until`; idle since `idle_since`.
    busy_until: Nanos,
    idle_since: Nanos,
    /// The senders of the frames on the air.
    on_air: Vec<usize>,
    /// Wired hop: when each direction's serialiser is free.
    up_free: Nanos,
    down_free: Nanos,
    processed: u64,
    in_flight: u64,
    /// Outputs of the last event beyond the one returned.
    pending: VecDeque<Output>,
    last_event: Nanos,
    record: StarRecord,
    busy_total: Nanos,
    difs: Nanos,
    slot: Nanos,
    /// Bit-error draws of a lossy channel (`None`: lossless).
    channel: Option<SimRng>,
    /// Data frames alone on the air that a bit error spoiled.
    corrupted: u64,
}

impl Star {
    /// The star of `cfg`; backoff draws come from streams derived from `seed`.
    pub fn new(cfg: &Config, seed: u64) -> Result<Self, String> {
        cfg.validate()?;
        let n = cfg.stations as usize + 1;
        let nodes = (0..n)
            .map(|i| Node {
                cw: cfg.cw_min,
                rng: Some(SimRng::new(derive(seed, Stream::Mac, i as u64))),
                ..Node::default()
            })
            .collect();
        Ok(Star {
            nodes,
            agenda: Agenda::new(2, 256),
            token: 0,
            busy_until: 0,
            idle_since: 0,
            on_air: Vec::new(),
            up_free: 0,
            down_free: 0,
            processed: 0,
            in_flight: 0,
            pending: VecDeque::new(),
            last_event: 0,
            record: StarRecord::default(),
            busy_total: 0,
            difs: cfg.difs(),
            slot: cfg.slot(),
            channel: (cfg.bit_error_rate > 0.0)
                .then(|| SimRng::new(derive(seed, Stream::Channel, 0))),
            corrupted: 0,
            cfg: cfg.clone(),
        })
    }

    /// What the wireless part did so far.
    pub fn record(&self) -> StarRecord {
        StarRecord {
            busy: crate::time::to_secs(self.busy_total),
            ..self.record.clone()
        }
    }

    /// Data frames alone on the air that a bit error spoiled so far (a
    /// lossy channel's; each is also an attempt in [`StarRecord::retries`]
    /// or [`StarRecord::retry_drops`] once retried or dropped).
    pub fn corrupted_frames(&self) -> u64 {
        self.corrupted
    }

    fn medium_idle(&self, now: Nanos) -> bool {
        self.on_air.is_empty() && now >= self.busy_until
    }

    /// When node `i` starts counting slots.
    fn count_start(&self, i: usize) -> Nanos {
        let node = &self.nodes[i];
        let ifs = if node.eifs {
            self.cfg.eifs()
        } else {
            self.difs
        };
        (self.idle_since + ifs).max(node.ready_at)
    }

    /// Draws a backoff for node `i` from its current CW.
    fn draw(&mut self, i: usize) {
        let node = &mut self.nodes[i];
        let cw = node.cw;
        let k = node.rng.as_mut().expect("seeded").int_in(0, cw);
        node.backoff = Some(k);
    }

    /// Re-plans the next channel access: the earliest backoff expiry among
    /// nodes not busy, while the medium is idle.
    fn schedule_access(&mut self, now: Nanos) {
        self.token = self.token.wrapping_add(1);
        if !self.medium_idle(now) {
            return;
        }
        let mut best: Option<Nanos> = None;
        for i in 0..self.nodes.len() {
            let node = &self.nodes[i];
            if node.busy {
                continue;
            }
            if let Some(b) = node.backoff {
                let at = self.count_start(i) + u64::from(b) * self.slot;
                best = Some(best.map_or(at, |x: Nanos| x.min(at)));
            }
        }
        if let Some(at) = best {
            self.agenda.push(at.max(now), Ev::Access(self.token));
        }
    }

    /// Slots node `i` has counted down by `now` (whole idle slots since it
    /// started counting).
    fn counted(&self, i: usize, now: Nanos) -> u32 {
        let start = self.count_start(i);
        if now <= start {
            0
        } else {
            ((now - start) / self.slot) as u32
        }
    }

    /// Backoffs expire at `now`: the nodes at zero with a frame transmit
    /// (together: a collision); a post-backoff with nothing to send just
    /// ends.
    fn access(&mut self, now: Nanos) {
        let mut senders = std::mem::take(&mut self.on_air);
        senders.clear();
        for i in 0..self.nodes.len() {
            if self.nodes[i].busy {
                continue;
            }
            let Some(b) = self.nodes[i].backoff else {
                continue;
            };
            if b <= self.counted(i, now) {
                if self.nodes[i].queue.is_empty() {
                    self.nodes[i].backoff = None;
                } else {
                    senders.push(i);
                }
            }
        }
        self.on_air = senders;
        if self.on_air.is_empty() {
            self.schedule_access(now);
            return;
        }
        self.transmit(now);
    }

    /// The nodes in `on_air` start their head frames now.
    fn transmit(&mut self, now: Nanos) {
        let mut end = now;
        for k in 0..self.on_air.len() {
            let i = self.on_air[k];
            let node = &mut self.nodes[i];
            node.backoff = None;
            node.busy = true;
            node.eifs = false;
            let p = *node.queue.front().expect("a sender has a frame");
            if node.retries > 0 {
                self.record.retries += 1;
            }
            self.record.data_frames += 1;
            end = end.max(now + self.cfg.data_airtime(p.ip_len));
        }
        // every other node freezes its counter
        for i in 0..self.nodes.len() {
            if !self.nodes[i].busy {
                if let Some(b) = self.nodes[i].backoff {
                    let counted = self.counted(i, now);
                    debug_assert!(counted < b, "a node at zero would have sent");
                    self.nodes[i].backoff = Some(b.saturating_sub(counted));
                }
            }
        }
        if self.on_air.len() > 1 {
            self.record.collisions += 1;
            self.record.collided_frames += self.on_air.len() as u64;
        }
        self.busy_until = end;
        self.busy_total += end - now;
        self.token = self.token.wrapping_add(1);
        self.agenda.push(end, Ev::AirEnd);
    }

    /// The frames on the air end at `now`.
    fn air_end(&mut self, now: Nanos) -> Option<Output> {
        if self.on_air.len() == 1 && self.channel.is_some() {
            let i = self.on_air[0];
            let len = self.nodes[i].queue.front().expect("the frame sent").ip_len;
            let p = self.cfg.frame_error(len);
            let rng = self.channel.as_mut().expect("lossy");
            if rng.uniform() < p {
                // spoiled: nobody decodes it, no ACK comes
                self.corrupted += 1;
                return self.unacknowledged(now);
            }
        }
        if self.on_air.len() == 1 {
            // intact: the receiver answers SIFS later
            let ack_end = now + self.cfg.sifs() + self.cfg.ack_airtime();
            self.busy_until = ack_end;
            self.busy_total += self.cfg.ack_airtime();
            self.agenda.push(ack_end, Ev::AckEnd);
            return None;
        }
        // a collision: bystanders use EIFS, senders wait for ACKs that
        // never come
        self.unacknowledged(now)
    }

    /// The frames on the air ended at `now` and none can be decoded (a
    /// collision, or a frame spoiled by bit errors): bystanders use EIFS,
    /// the senders wait for ACKs that never come.
    fn unacknowledged(&mut self, now: Nanos) -> Option<Output> {
        self.idle_since = now;
        let timeout = now + self.cfg.ack_timeout();
        for i in 0..self.nodes.len() {
            let sending = self.on_air.contains(&i);
            let node = &mut self.nodes[i];
            if sending {
                node.ready_at = timeout;
            } else {
                node.eifs = true;
            }
        }
        self.agenda.push(timeout, Ev::AckTimeout);
        self.schedule_access(now);
        None
    }

    /// The ACK of the lone frame ends: it was delivered.
    fn ack_end(&mut self, now: Nanos) -> Option<Output> {
        let i = self.on_air.pop().expect("one sender");
        self.idle_since = now;
        for node in &mut self.nodes {
            node.eifs = false;
        }
        let node = &mut self.nodes[i];
        let p = node.queue.pop_front().expect("the frame sent");
        node.busy = false;
        node.retries = 0;
        node.cw = self.cfg.cw_min;
        node.ready_at = now;
        self.draw(i);
        self.record.delivered_frames += 1;
        let out = if i == AP as usize {
            // to a station
            self.in_flight -= 1;
            Some(Output::Delivered {
                id: p.id,
                node: p.dst,
            })
        } else {
            // onto the wire toward the server
            let start = now.max(self.up_free);
            let done = start + serialisation(usize::from(p.ip_len), self.cfg.wired_bps);
            self.up_free = done;
            self.agenda.push_lane(0, done, Ev::AtServer(p));
            None
        };
        self.schedule_access(now);
        out
    }

    /// Colliding senders give up on their ACKs: retry or drop.
    fn ack_timeout(&mut self, now: Nanos) -> Option<Output> {
        let senders = std::mem::take(&mut self.on_air);
        let mut out = None;
        for &i in &senders {
            let node = &mut self.nodes[i];
            node.busy = false;
            node.retries += 1;
            if node.retries > self.cfg.retry_limit {
                let p = node.queue.pop_front().expect("the frame sent");
                node.retries = 0;
                node.cw = self.cfg.cw_min;
                self.record.retry_drops += 1;
                self.in_flight -= 1;
                // at most one drop per event is reported; others queue
                if out.is_none() {
                    out = Some(Output::Dropped {
                        id: p.id,
                        cause: DropCause::MacRetries,
                    });
                } else {
                    self.pending.push_back(Output::Dropped {
                        id: p.id,
                        cause: DropCause::MacRetries,
                    });
                }
            } else {
                node.cw = (2 * node.cw + 1).min(self.cfg.cw_max);
            }
            self.draw(i);
        }
        self.on_air = senders;
        self.on_air.clear();
        self.schedule_access(now);
        out
    }

    /// Packet `p` joins node `i`'s queue at `now`.
    fn enqueue(&mut self, now: Nanos, i: usize, p: Pkt) -> Result<(), DropCause> {
        let node = &mut self.nodes[i];
        if node.queue.len() >= self.cfg.queue as usize {
            self.record.queue_drops += 1;
            return Err(DropCause::MacQueue);
        }
        node.queue.push_back(p);
        if node.queue.len() == 1 && !node.busy && node.backoff.is_none() {
            if self.medium_idle(now) && now >= self.count_start(i) {
                // idle for DIFS already: it goes at once (with any node
                // whose backoff ends now)
                self.nodes[i].backoff = Some(0);
                self.access(now);
                return Ok(());
            }
            self.draw(i);
        }
        self.schedule_access(now);
        Ok(())
    }
}

impl Network for Star {
    fn send(&mut self, now: Nanos, d: Datagram) -> Result<(), DropCause> {
        let p = Pkt {
            id: d.id,
            dst: d.dst,
            ip_len: IPV4_HEADER + d.transport_header + d.payload,
        };
        if d.src == SERVER {
            assert!(
                (1..=self.cfg.stations).contains(&d.dst),
                "the server sends to stations 1..={}",
                self.cfg.stations
            );
            let start = now.max(self.down_free);
            let done = start + serialisation(usize::from(p.ip_len), self.cfg.wired_bps);
            self.down_free = done;
            self.agenda.push_lane(1, done, Ev::AtAp(p));
            self.in_flight += 1;
            return Ok(());
        }
        assert!(
            d.dst == SERVER && (1..=self.cfg.stations).contains(&d.src),
            "stations send to the server"
        );
        self.enqueue(now, d.src as usize, p)?;
        self.in_flight += 1;
        Ok(())
    }

    fn next_wakeup(&self) -> Option<Nanos> {
        if self.pending.is_empty() {
            self.agenda.peek_time()
        } else {
            Some(self.last_event)
        }
    }

    fn poll(&mut self, until: Nanos) -> Option<(Nanos, Option<Output>)> {
        if let Some(o) = self.pending.pop_front() {
            return Some((self.last_event, Some(o)));
        }
        let (now, ev) = self.agenda.pop_due(until)?;
        self.processed += 1;
        self.last_event = now;
        let out = match ev {
            Ev::Access(t) if t == self.token => {
                self.access(now);
                None
            }
            Ev::Access(_) => None,
            Ev::AirEnd => self.air_end(now),
            Ev::AckEnd => self.ack_end(now),
            Ev::AckTimeout => self.ack_timeout(now),
            Ev::AtServer(p) => {
                self.in_flight -= 1;
                Some(Output::Delivered {
                    id: p.id,
                    node: SERVER,
                })
            }
            Ev::AtAp(p) => self.enqueue(now, AP as usize, p).err().map(|cause| {
                self.in_flight -= 1;
                Output::Dropped { id: p.id, cause }
            }),
        };
        Some((now, out))
    }

    fn in_flight(&self) -> u64 {
        self.in_flight
    }

    fn events(&self) -> u64 {
        self.processed
    }
}
