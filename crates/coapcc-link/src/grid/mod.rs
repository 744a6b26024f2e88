//! The low-power multi-hop grid of the pCoCoA evaluation (spec `docs/spec/radio-spec.md` §1,
//! `docs/spec/testbed-spec.md` §4) as a sans-IO network: 36 IEEE 802.15.4 nodes on a 6 × 6
//! grid, a unit-disk medium with hidden terminals, 6LoWPAN with
//! fragmentation, a static tree rooted at the border router, and one of two
//! MACs:
//!
//! - [`MacProfile::Contiki`]: Contiki 3.0's CSMA over nullrdc as Cooja runs it
//!   ([`contiki`]) — the MAC of the published runs;
//! - [`MacProfile::Ieee802154`]: IEEE 802.15.4 unslotted CSMA/CA as ns-3.37's
//!   lr-wpan implements it ([`ieee802154`]).
//!
//! A datagram handed to [`Network::send`] at its source node is compressed,
//! fragmented and queued at the MAC of each node on its path; every node
//! reassembles it (route-over) before routing it on. It is delivered when the
//! destination has reassembled it, or dropped — exactly once — at the hop
//! where completing it became impossible: a full MAC buffer, a fragment whose
//! last transmission went unacknowledged, a reassembly context that was
//! refused or discarded.
//!
//! Node ids in [`Datagram`]s and [`Output`]s are the paper's numbers, from 1.

pub mod contiki;
pub mod ieee802154;
pub mod layout;
pub mod medium;
mod reassembly;
pub mod sixlowpan;

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use crate::agenda::Agenda;
use crate::rng::{derive, SimRng, Stream};
use crate::time::{from_secs, Nanos};
use crate::{Datagram, DropCause, Network, NodeId, Output, PacketId};

use layout::{Routing, Topology};
use medium::Medium;
use reassembly::Contexts;
use sixlowpan::{Addressing, Hop, INITIAL_HOP_LIMIT};

/// The grid's parameters: the `[network]` table of a scenario with
/// `kind = "grid"`. Defaults are the pCoCoA paper's (Table II) and, where it
/// is silent, Contiki 3.0's and Cooja's (`docs/decisions/grid-choices.md`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// `kind = "grid"` in a scenario file.
    #[serde(skip_serializing)]
    pub kind: Kind,
    /// Rows of the default layout.
    pub rows: u32,
    /// Columns of the default layout.
    pub cols: u32,
    /// Distance between neighbours of the default layout (m).
    pub pitch_m: f64,
    /// Positions (m) of nodes 1, 2, …, replacing the default layout.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub positions: Option<Vec<[f64; 2]>>,
    /// The border router: the root of the routing tree.
    pub root: NodeId,
    /// The node the CoAP server runs on.
    pub server: NodeId,
    /// Reception range (m).
    pub reception_m: f64,
    /// Interference range (m).
    pub interference_m: f64,
    /// How packets travel the tree.
    pub routing: Routing,
    /// The MAC.
    pub mac: MacProfile,
    /// MAC buffer per node, in frames.
    pub queue: u32,
    /// Transmissions of a frame before the MAC gives up (1 + retries).
    pub transmissions: u32,
    /// Contiki: when a neighbour's next queued frame waits 125 ms.
    pub pacing: Pacing,
    /// Contiki: neighbours that can have frames queued at once
    /// (`CSMA_CONF_MAX_NEIGHBOR_QUEUES`).
    pub neighbour_queues: u32,
    /// Reassembly contexts per node.
    pub reassembly: Reassembly,
    /// A reassembly older than this is discarded (s).
    pub reassembly_timeout_s: f64,
    /// Link-layer addresses.
    pub addressing: Addressing,
    /// Whether data packets carry the 8-byte RPL hop-by-hop option.
    pub hop_by_hop: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            kind: Kind::Grid,
            rows: 6,
            cols: 6,
            pitch_m: 10.0,
            positions: None,
            root: 1,
            server: 3,
            reception_m: 10.0,
            interference_m: 20.0,
            routing: Routing::Storing,
            mac: MacProfile::Contiki,
            queue: 8,
            transmissions: 8,
            pacing: Pacing::AfterDrop,
            neighbour_queues: 2,
            reassembly: Reassembly::Single,
            reassembly_timeout_s: 8.0,
            addressing: Addressing::Extended,
            hop_by_hop: true,
        }
    }
}

impl Config {
    /// The node positions: the explicit table, or the default layout.
    pub fn node_positions(&self) -> Vec<[f64; 2]> {
        self.positions
            .clone()
            .unwrap_or_else(|| Topology::grid_positions(self.rows, self.cols, self.pitch_m))
    }

    /// Number of nodes.
    pub fn nodes(&self) -> usize {
        self.positions.as_ref().map_or(
            (self.rows as usize).saturating_mul(self.cols as usize),
            Vec::len,
        )
    }

    /// Checks the parameters; errors name the field and what was expected.
    pub fn validate(&self) -> Result<Topology, String> {
        let n = self.nodes();
        if self.positions.is_none() && (self.rows == 0 || self.cols == 0) {
            return Err("network.rows, network.cols: expected at least 1 each".into());
        }
        if !(self.pitch_m > 0.0 && self.pitch_m.is_finite()) {
            return Err(format!(
                "network.pitch_m: expected a positive distance, found {}",
                self.pitch_m
            ));
        }
        if !(2..=4096).contains(&n) {
            return Err(format!(
                "network.rows, network.cols, network.positions: expected 2 to 4096 nodes, found {n}"
            ));
        }
        if let Some(p) = &self.positions {
            if let Some(i) = p.iter().position(|xy| !xy.iter().all(|v| v.is_finite())) {
                return Err(format!(
                    "network.positions[{i}]: expected finite coordinates"
                ));
            }
        }
        for (name, id) in [("root", self.root), ("server", self.server)] {
            if id == 0 || id as usize > n {
                return Err(format!(
                    "network.{name}: expected a node number from 1 to {n}, found {id}"
                ));
            }
        }
        if !(self.reception_m > 0.0
            && self.interference_m >= self.reception_m
            && self.interference_m.is_finite())
        {
            return Err(
                "network.reception_m, network.interference_m: expected 0 < reception ≤ interference"
                    .into(),
            );
        }
        if !(1..=64).contains(&self.queue) {
            return Err(format!(
                "network.queue: expected 1 to 64 frames, found {}",
                self.queue
            ));
        }
        if !(1..=32).contains(&self.transmissions) {
            return Err(format!(
                "network.transmissions: expected 1 to 32, found {}",
                self.transmissions
            ));
        }
        if !(1..=16).contains(&self.neighbour_queues) {
            return Err(format!(
                "network.neighbour_queues: expected 1 to 16, found {}",
                self.neighbour_queues
            ));
        }
        if !(self.reassembly_timeout_s > 0.0 && self.reassembly_timeout_s <= 3600.0) {
            return Err(format!(
                "network.reassembly_timeout_s: expected 0 < s ≤ 3600, found {}",
                self.reassembly_timeout_s
            ));
        }
        Topology::new(
            self.node_positions(),
            self.root as usize - 1,
            self.reception_m,
            self.interference_m,
            self.routing,
        )
        // The layout follows from these fields together.
        .map_err(|e| {
            format!(
                "network.pitch_m, network.positions, network.reception_m, network.root: {}",
                e.0
            )
        })
    }
}

/// The `kind` of a grid's `[network]` table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// The 802.15.4 grid.
    #[default]
    Grid,
}

/// Which MAC the nodes run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum MacProfile {
    /// Contiki 3.0's CSMA over nullrdc in Cooja (the published runs).
    #[default]
    Contiki,
    /// IEEE 802.15.4 unslotted CSMA/CA (ns-3.37's lr-wpan).
    Ieee802154,
}

/// Contiki: when the next frame queued for the same neighbour waits 125 ms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Pacing {
    /// Only after a frame was dropped (Contiki 3.0: after an acknowledged
    /// frame nullrdc sends the next one of the same list at once).
    #[default]
    AfterDrop,
    /// After every frame, acknowledged or dropped (the reading of the
    /// spec's hypothesis, `docs/spec/radio-spec.md` §1.3).
    AfterEveryFrame,
}

/// How many datagrams a node can reassemble at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Reassembly {
    /// One context, with Contiki 3.0's rules: an unfragmented frame or a
    /// first fragment from another sender discards the datagram being
    /// reassembled; other fragments that do not belong to it are dropped.
    #[default]
    Single,
    /// One context per (sender, tag): datagrams never disturb each other.
    PerSender,
}

/// What one node did (its MAC and its 6LoWPAN layer).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct NodeRecord {
    /// Data frames put on the air (every transmission of every frame).
    pub data_frames: u64,
    /// Acknowledgement frames sent.
    pub ack_frames: u64,
    /// Attempts deferred because the channel was busy (Contiki's
    /// `MAC_TX_COLLISION`: locked onto a frame, a frame waiting in the radio,
    /// or a foreign frame where the acknowledgement should be; 802.15.4: a
    /// busy clear-channel assessment).
    pub deferrals: u64,
    /// Frames dropped after their last unacknowledged transmission.
    pub mac_drops: u64,
    /// Frames dropped after too many busy channel assessments (802.15.4).
    pub channel_access_failures: u64,
    /// Datagrams refused by a full MAC buffer.
    pub overflows: u64,
    /// Received fragments dropped by reassembly, and datagrams being
    /// reassembled that were discarded.
    pub reassembly_drops: u64,
    /// Duplicate frames filtered (a retransmission whose acknowledgement had
    /// been lost).
    pub duplicates: u64,
    /// Datagrams this node forwarded.
    pub forwarded: u64,
    /// Time spent sending (s).
    pub airtime: f64,
}

/// Datagrams dropped in the grid, by cause.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DropCounts {
    /// A full MAC buffer.
    pub mac_queue: u64,
    /// A fragment whose last transmission went unacknowledged.
    pub mac_retries: u64,
    /// Channel-access failure (802.15.4).
    pub channel_access: u64,
    /// Reassembly refused or discarded it.
    pub reassembly: u64,
    /// 6LoWPAN stopped sending its fragments after an earlier buffer error.
    pub fragments_aborted: u64,
    /// Hop limit exhausted.
    pub hop_limit: u64,
}

impl DropCounts {
    fn count(&mut self, cause: DropCause) {
        match cause {
            DropCause::MacQueue => self.mac_queue += 1,
            DropCause::MacRetries => self.mac_retries += 1,
            DropCause::ChannelAccess => self.channel_access += 1,
            DropCause::Reassembly => self.reassembly += 1,
            DropCause::FragmentsAborted => self.fragments_aborted += 1,
            DropCause::HopLimit => self.hop_limit += 1,
            DropCause::Buffer
            | DropCause::LinkError
            | DropCause::PayloadTooLarge
            | DropCause::Collision
            | DropCause::BelowSensitivity
            | DropCause::GatewayBusy
            | DropCause::NoWindow
            | DropCause::DutyCycle => {}
        }
    }

    /// All of them.
    pub fn total(&self) -> u64 {
        self.mac_queue
            + self.mac_retries
            + self.channel_access
            + self.reassembly
            + self.fragments_aborted
            + self.hop_limit
    }
}

/// A frame on the air as a pcap writer needs it (when tracing is on).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameTrace {
    /// When the frame started.
    pub at: Nanos,
    /// The sequence number.
    pub dsn: u8,
    /// What it is.
    pub kind: TracedFrame,
}

/// The content of a traced frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TracedFrame {
    /// A data frame: fragment `index` of the datagram `packet` on `hop`.
    Data {
        /// The hop (its encoding).
        hop: Hop,
        /// Fragment index (0 for an unfragmented frame).
        index: u8,
        /// Fragment tag.
        tag: u16,
        /// The driver's handle of the datagram.
        packet: PacketId,
        /// Whether the datagram was still alive when the frame was queued.
        live: bool,
    },
    /// An acknowledgement.
    Ack,
}

/// Frame kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FrameKind {
    Data,
    Ack,
}

/// A frame (copied into receivers, so a sender may free its own).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Frame {
    kind: FrameKind,
    from: u16,
    to: u16,
    dsn: u8,
    /// MAC header + payload bytes (no FCS).
    len: u16,
    /// The datagram (slot, generation) and the hop it is on.
    dg: u32,
    gen: u32,
    hop: u16,
    /// Fragment index and count; fragment tag.
    frag: u8,
    frags: u8,
    tag: u16,
}

/// A datagram inside the grid.
#[derive(Clone, Copy, Debug)]
struct Dg {
    id: PacketId,
    src: u16,
    dst: u16,
    coap: u16,
    gen: u32,
    /// Hops completed.
    hop: u16,
    hop_limit: u8,
    climbed: bool,
    live: bool,
    /// Fragments of the current hop the receiver holds in a live context.
    got: u8,
}

/// Events of the grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ev {
    /// A node's frame ends.
    TxEnd(u16),
    /// A node's MAC step (stale unless the token matches).
    Mac(u16, u32),
    /// Contiki: a neighbour queue's transmit timer.
    Queue(u16, u8, u32),
}

/// Per-node state.
#[derive(Clone, Debug, Default)]
struct Node {
    /// The MAC's current step and its token (stale events carry another).
    step: Step,
    token: u32,
    /// Neighbour queues (Contiki) or the one FIFO (802.15.4: slot 0).
    queues: Vec<NeighbourQueue>,
    /// Contiki: queues whose timer fired while the node was busy.
    ready: VecDeque<u8>,
    /// Frames held by the MAC.
    pool_used: u32,
    /// Contiki's single receive buffer: a frame received and not yet read.
    pending: Option<Frame>,
    /// The data frame being acknowledged, and the acknowledgement frame.
    acking: Option<Frame>,
    ack_frame: u32,
    /// The next sequence number.
    dsn: u8,
    /// Last sequence number from each recent sender (most recent first).
    last_dsn: Vec<(u16, u8)>,
    /// Contiki 6LoWPAN's `last_tx_status` was an enqueue error.
    last_status_err: bool,
    /// The next fragment tag.
    tag: u16,
    contexts: Contexts,
    /// 802.15.4 CSMA/CA: backoffs so far, backoff exponent, retries.
    nb: u8,
    be: u8,
    retries: u8,
    record: NodeRecord,
    airtime: Nanos,
}

/// A queue of frames to one neighbour.
#[derive(Clone, Debug, Default)]
struct NeighbourQueue {
    active: bool,
    neighbour: u16,
    frames: VecDeque<u32>,
    transmissions: u8,
    collisions: u16,
    token: u32,
}

/// What a node's MAC is doing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Step {
    #[default]
    Idle,
    // Contiki (nullrdc's send of queue q's head frame; acknowledging)
    Turnaround(u8),
    OnAir(u8),
    AckWait(u8),
    Acking,
    AckOnAir,
    // 802.15.4
    Backoff,
    Cca,
    TxTurnaround,
    TxOnAir,
    TxAckWait,
    Ifs,
    AckTurnaround,
    AckSending,
    AckBack,
}

/// The grid network (see the module docs).
pub struct Grid {
    cfg: Config,
    topo: Topology,
    medium: Medium,
    nodes: Vec<Node>,
    frames: Vec<Frame>,
    free_frames: Vec<u32>,
    dgs: Vec<Dg>,
    free_dgs: Vec<u32>,
    live: u64,
    agenda: Agenda<Ev>,
    rngs: Vec<SimRng>,
    /// Outputs produced by the last event, not yet returned.
    outputs: VecDeque<Output>,
    last_event: Nanos,
    processed: u64,
    drops: DropCounts,
    timeout: Nanos,
    /// Frames on the air, when tracing (drained by the driver).
    pub trace: Option<Vec<FrameTrace>>,
    /// When tracing: each queued data frame's hop, datagram and liveness.
    traced: Vec<Option<(Hop, PacketId, bool)>>,
    scratch: Vec<(usize, medium::Reception)>,
}

impl Grid {
    /// The grid of `cfg`; its random streams (MAC backoffs, sequence numbers)
    /// are derived from `seed`.
    pub fn new(cfg: &Config, seed: u64) -> Result<Self, String> {
        let topo = cfg.validate()?;
        let n = topo.len();
        let mut rngs: Vec<SimRng> = (0..n)
            .map(|i| SimRng::new(derive(seed, Stream::Mac, i as u64)))
            .collect();
        let queues = match cfg.mac {
            MacProfile::Contiki => cfg.neighbour_queues as usize,
            MacProfile::Ieee802154 => 1,
        };
        let nodes = (0..n)
            .map(|i| Node {
                queues: vec![NeighbourQueue::default(); queues],
                // Contiki 3.0 starts the sequence number at random_rand().
                dsn: rngs[i].next_u64() as u8,
                tag: rngs[i].next_u64() as u16,
                ..Node::default()
            })
            .collect();
        Ok(Grid {
            medium: Medium::new(n),
            nodes,
            frames: Vec::new(),
            free_frames: Vec::new(),
            dgs: Vec::new(),
            free_dgs: Vec::new(),
            live: 0,
            agenda: Agenda::new(0, 1024),
            rngs,
            outputs: VecDeque::new(),
            last_event: 0,
            processed: 0,
            drops: DropCounts::default(),
            timeout: from_secs(cfg.reassembly_timeout_s),
            trace: None,
            traced: Vec::new(),
            scratch: Vec::new(),
            cfg: cfg.clone(),
            topo,
        })
    }

    /// The topology (positions, tree, routes).
    pub fn topology(&self) -> &Topology {
        &self.topo
    }

    /// What node `id` did so far.
    pub fn node_record(&self, id: NodeId) -> NodeRecord {
        let node = &self.nodes[id as usize - 1];
        NodeRecord {
            airtime: crate::time::to_secs(node.airtime),
            ..node.record.clone()
        }
    }

    /// Datagrams dropped so far, by cause.
    pub fn drops(&self) -> DropCounts {
        self.drops
    }

    /// Frames started on the medium, and receptions destroyed by overlaps.
    pub fn medium_counts(&self) -> (u64, u64) {
        (self.medium.transmissions, self.medium.collisions)
    }

    // ---- frames and datagrams ------------------------------------------

    fn alloc_frame(&mut self, f: Frame) -> u32 {
        match self.free_frames.pop() {
            Some(id) => {
                self.frames[id as usize] = f;
                id
            }
            None => {
                self.frames.push(f);
                (self.frames.len() - 1) as u32
            }
        }
    }

    fn free_frame(&mut self, id: u32) {
        self.free_frames.push(id);
    }

    fn alloc_dg(&mut self, d: Datagram) -> u32 {
        let mut dg = Dg {
            id: d.id,
            src: (d.src - 1) as u16,
            dst: (d.dst - 1) as u16,
            coap: d.payload,
            gen: 0,
            hop: 0,
            hop_limit: INITIAL_HOP_LIMIT,
            climbed: false,
            live: true,
            got: 0,
        };
        self.live += 1;
        match self.free_dgs.pop() {
            Some(slot) => {
                dg.gen = self.dgs[slot as usize].gen.wrapping_add(1);
                self.dgs[slot as usize] = dg;
                slot
            }
            None => {
                self.dgs.push(dg);
                (self.dgs.len() - 1) as u32
            }
        }
    }

    /// Whether frame `f` belongs to a datagram still alive on that hop.
    fn instance_live(&self, f: &Frame) -> bool {
        let d = &self.dgs[f.dg as usize];
        d.live && d.gen == f.gen && d.hop == f.hop
    }

    /// The datagram of `f` can no longer be completed on its hop: it is
    /// dropped (once) with `cause`, counted at node `at`.
    fn kill(&mut self, f: &Frame, cause: DropCause) {
        if self.instance_live(f) {
            self.drop_dg(f.dg, cause);
        }
    }

    fn drop_dg(&mut self, slot: u32, cause: DropCause) {
        let d = &mut self.dgs[slot as usize];
        debug_assert!(d.live);
        d.live = false;
        self.live -= 1;
        self.drops.count(cause);
        self.outputs.push_back(Output::Dropped { id: d.id, cause });
        self.free_dgs.push(slot);
    }

    /// A fragment the sender gave up on: the datagram dies unless the
    /// receiver already holds that fragment.
    fn fragment_lost(&mut self, f: &Frame, cause: DropCause) {
        if self.instance_live(f) && self.dgs[f.dg as usize].got & (1 << f.frag) == 0 {
            self.drop_dg(f.dg, cause);
        }
    }

    // ---- 6LoWPAN: sending a datagram over its next hop ----------------

    /// Compresses, fragments and queues datagram `slot` at node `at`.
    fn route_out(&mut self, now: Nanos, at: usize, slot: u32) {
        let d = self.dgs[slot as usize];
        let (next, climbed) = self.topo.next_hop(at, usize::from(d.dst), d.climbed);
        self.dgs[slot as usize].climbed = climbed;
        let hop = Hop {
            from: layout::node_id(at),
            to: layout::node_id(next),
            src: layout::node_id(usize::from(d.src)),
            dst: layout::node_id(usize::from(d.dst)),
            hop_limit: d.hop_limit,
            addressing: self.cfg.addressing,
            hbh: self.cfg.hop_by_hop,
            rank: 256 * (self.topo.depth[at] as u16 + 1),
            down: self.topo.parent[at] != Some(next),
        };
        let plan = sixlowpan::plan(&hop, usize::from(d.coap));
        let frags = plan.frames;
        let node = &mut self.nodes[at];
        let tag = if frags > 1 {
            node.tag = node.tag.wrapping_add(1);
            node.tag
        } else {
            0
        };
        if self.cfg.mac == MacProfile::Contiki && frags > 1 {
            // Contiki 3.0 refuses a fragmented datagram unless the pool has
            // room for its estimated fragments and one more.
            let estimated = u32::from(plan.datagram_size) / (sixlowpan::MAX_FRAME as u32 - 5) + 1;
            let free = self.cfg.queue - node.pool_used;
            if free < estimated + 1 {
                node.record.overflows += 1;
                self.drop_dg(slot, DropCause::MacQueue);
                return;
            }
        }
        for k in 0..frags {
            let node = &mut self.nodes[at];
            let dsn = node.dsn;
            node.dsn = node.dsn.wrapping_add(1);
            let frame = Frame {
                kind: FrameKind::Data,
                from: at as u16,
                to: next as u16,
                dsn,
                len: plan.sizes[usize::from(k)],
                dg: slot,
                gen: d.gen,
                hop: d.hop,
                frag: k,
                frags,
                tag,
            };
            let fid = self.alloc_frame(frame);
            self.trace_queued(fid, hop);
            let accepted = match self.cfg.mac {
                MacProfile::Contiki => self.contiki_enqueue(now, at, fid, frags > 1),
                MacProfile::Ieee802154 => self.ieee_enqueue(now, at, fid),
            };
            if !accepted {
                self.free_frame(fid);
                self.nodes[at].record.overflows += 1;
                if self.cfg.mac == MacProfile::Contiki {
                    self.nodes[at].last_status_err = true;
                }
                if self.dgs[slot as usize].live && self.dgs[slot as usize].gen == d.gen {
                    self.drop_dg(slot, DropCause::MacQueue);
                }
                return;
            }
            if self.cfg.mac == MacProfile::Contiki
                && k + 1 < frags
                && self.nodes[at].last_status_err
            {
                // sicslowpan stops sending fragments when the last status it
                // heard from the MAC was an error, however old.
                if self.dgs[slot as usize].live && self.dgs[slot as usize].gen == d.gen {
                    self.drop_dg(slot, DropCause::FragmentsAborted);
                }
                return;
            }
        }
    }

    /// Remembers, when tracing, how frame `fid` is encoded.
    fn trace_queued(&mut self, fid: u32, hop: Hop) {
        if self.trace.is_some() {
            let f = self.frames[fid as usize];
            let packet = self.dgs[f.dg as usize].id;
            let live = self.instance_live(&f);
            if self.traced.len() < self.frames.len() {
                self.traced.resize(self.frames.len(), None);
            }
            self.traced[fid as usize] = Some((hop, packet, live));
        }
    }

    // ---- the medium ------------------------------------------------------

    /// Node `n` puts frame `fid` on the air now.
    fn transmit(&mut self, now: Nanos, n: usize, fid: u32) {
        let f = self.frames[fid as usize];

        let airtime = self.airtime(f.kind, f.len);
        self.medium.start(&self.topo, now, n, fid);
        let node = &mut self.nodes[n];
        node.airtime += airtime;
        match f.kind {
            FrameKind::Data => node.record.data_frames += 1,
            FrameKind::Ack => node.record.ack_frames += 1,
        }
        if let Some(trace) = self.trace.as_mut() {
            let kind = match (f.kind, self.traced.get(fid as usize).copied().flatten()) {
                (FrameKind::Data, Some((hop, packet, live))) => TracedFrame::Data {
                    hop,
                    index: f.frag,
                    tag: f.tag,
                    packet,
                    live,
                },
                _ => TracedFrame::Ack,
            };
            trace.push(FrameTrace {
                at: now,
                dsn: f.dsn,
                kind,
            });
        }
        self.agenda.push(now + airtime, Ev::TxEnd(n as u16));
    }

    /// Time on air of a frame of `len` bytes (MAC header + payload).
    fn airtime(&self, kind: FrameKind, len: u16) -> Nanos {
        let len = match kind {
            FrameKind::Data => u64::from(len),
            FrameKind::Ack => sixlowpan::ACK_FRAME as u64,
        };
        match self.cfg.mac {
            // Cooja: 32 µs per byte of MAC header and payload, no FCS or PHY
            // header.
            MacProfile::Contiki => len * 32_000,
            // 16 µs symbols, 2 per byte, SHR + PHR 12 symbols, FCS counted.
            MacProfile::Ieee802154 => (12 + 2 * (len + sixlowpan::FCS as u64)) * 16_000,
        }
    }

    /// Node `n`'s frame ends: receivers get it, then `n`'s MAC goes on.
    fn tx_end(&mut self, now: Nanos, n: usize) {
        let mut got = std::mem::take(&mut self.scratch);
        got.clear();
        let fid = self.medium.end(&self.topo, n, |r, rx| got.push((r, rx)));
        let f = self.frames[fid as usize];

        // the sender first (its radio is back before any answer can start)
        match self.cfg.mac {
            MacProfile::Contiki => self.contiki_tx_end(now, n, fid),
            MacProfile::Ieee802154 => self.ieee_tx_end(now, n, fid),
        }
        for &(r, rx) in &got {
            if rx.intact {
                match self.cfg.mac {
                    MacProfile::Contiki => self.contiki_received(now, r, f),
                    MacProfile::Ieee802154 => self.ieee_received(now, r, f),
                }
            }
        }
        self.scratch = got;
    }

    // ---- 6LoWPAN: receiving ---------------------------------------------

    /// A data frame for node `r`, past the MAC's duplicate filter.
    fn sixlowpan_input(&mut self, now: Nanos, r: usize, f: Frame) {
        let outcome = match self.cfg.reassembly {
            Reassembly::Single => self.nodes[r].contexts.single(now, self.timeout, &f),
            Reassembly::PerSender => self.nodes[r].contexts.per_sender(now, self.timeout, &f),
        };
        let mut discarded = std::mem::take(&mut self.nodes[r].contexts.discarded);
        for d in discarded.drain(..) {
            self.nodes[r].record.reassembly_drops += 1;
            self.kill(&d, DropCause::Reassembly);
        }
        self.nodes[r].contexts.discarded = discarded;
        if outcome.refused {
            self.nodes[r].record.reassembly_drops += 1;
            self.kill(&f, DropCause::Reassembly);
            return;
        }
        if self.instance_live(&f) {
            self.dgs[f.dg as usize].got |= 1 << f.frag;
        }
        if outcome.complete && self.instance_live(&f) {
            self.arrived(now, r, f.dg);
        }
    }

    /// Datagram `slot` has been reassembled at node `r`.
    fn arrived(&mut self, now: Nanos, r: usize, slot: u32) {
        let d = &mut self.dgs[slot as usize];
        d.hop += 1;
        d.got = 0;
        if usize::from(d.dst) == r {
            let id = d.id;
            d.live = false;
            self.live -= 1;
            self.free_dgs.push(slot);
            self.outputs.push_back(Output::Delivered {
                id,
                node: layout::node_id(r),
            });
            return;
        }
        if d.hop_limit <= 1 {
            self.drop_dg(slot, DropCause::HopLimit);
            return;
        }
        d.hop_limit -= 1;
        self.nodes[r].record.forwarded += 1;
        self.route_out(now, r, slot);
    }

    /// Whether `f` repeats the last frame from its sender (Contiki 3.0 keeps
    /// the last sequence number of its 16 most recent senders); records it
    /// otherwise.
    fn duplicate(&mut self, r: usize, f: &Frame) -> bool {
        let seen = &mut self.nodes[r].last_dsn;
        match seen.iter().position(|&(s, _)| s == f.from) {
            Some(i) => {
                let (_, dsn) = seen.remove(i);
                seen.insert(0, (f.from, f.dsn));
                if dsn == f.dsn {
                    self.nodes[r].record.duplicates += 1;
                    return true;
                }
                false
            }
            None => {
                seen.insert(0, (f.from, f.dsn));
                seen.truncate(16);
                false
            }
        }
    }

    /// Schedules node `n`'s next MAC step at `at`, superseding any other.
    fn step_at(&mut self, n: usize, step: Step, at: Nanos) {
        let node = &mut self.nodes[n];
        node.step = step;
        node.token = node.token.wrapping_add(1);
        self.agenda.push(at, Ev::Mac(n as u16, node.token));
    }

    /// Cancels node `n`'s pending MAC step, if any.
    fn cancel_step(&mut self, n: usize) {
        let node = &mut self.nodes[n];
        node.token = node.token.wrapping_add(1);
    }
}

impl Network for Grid {
    fn send(&mut self, now: Nanos, d: Datagram) -> Result<(), DropCause> {
        let n = self.topo.len() as NodeId;
        assert!(
            (1..=n).contains(&d.src) && (1..=n).contains(&d.dst) && d.src != d.dst,
            "a grid datagram goes between two distinct nodes 1..={n}"
        );
        debug_assert_eq!(usize::from(d.transport_header), sixlowpan::UDP_HEADER);
        self.last_event = self.last_event.max(now);
        let before = self.outputs.len();
        let slot = self.alloc_dg(d);
        self.route_out(now, d.src as usize - 1, slot);
        // At its source a datagram can only be refused; that is reported
        // here, not polled.
        if self.outputs.len() > before {
            match self.outputs.pop_back() {
                Some(Output::Dropped { id, cause }) if id == d.id => return Err(cause),
                other => unreachable!("a send produced {other:?}"),
            }
        }
        Ok(())
    }

    fn next_wakeup(&self) -> Option<Nanos> {
        if self.outputs.is_empty() {
            self.agenda.peek_time()
        } else {
            Some(self.last_event)
        }
    }

    fn poll(&mut self, until: Nanos) -> Option<(Nanos, Option<Output>)> {
        if let Some(out) = self.outputs.pop_front() {
            return Some((self.last_event, Some(out)));
        }
        let (now, ev) = self.agenda.pop_due(until)?;
        self.processed += 1;
        self.last_event = now;
        match ev {
            Ev::TxEnd(n) => self.tx_end(now, usize::from(n)),
            Ev::Mac(n, token) => {
                let n = usize::from(n);
                if self.nodes[n].token == token {
                    match self.cfg.mac {
                        MacProfile::Contiki => self.contiki_step(now, n),
                        MacProfile::Ieee802154 => self.ieee_step(now, n),
                    }
                }
            }
            Ev::Queue(n, q, token) => {
                let (n, q) = (usize::from(n), usize::from(q));
                if self.nodes[n].queues[q].token == token {
                    self.contiki_ready(now, n, q);
                }
            }
        }
        Some((now, self.outputs.pop_front()))
    }

    fn in_flight(&self) -> u64 {
        self.live
    }

    fn events(&self) -> u64 {
        self.processed
    }
}
