//! The grid's emulator hook: the server runs on the grid's server node
//! ([`grid::Config::server`]); the `n`th client mapping attaches to
//! `client_nodes[n mod len]` ([`client_node`]), where the client nodes are
//! the list given in [`EmulatedNetwork::Grid`](crate::emulate::EmulatedNetwork::Grid),
//! or by default every node but the root and the server
//! ([`default_client_nodes`]). It carries unfragmented UDP whose payload
//! fits eight 6LoWPAN fragments ([`grid::sixlowpan::max_coap`]).

use coapcc_link::grid::{self, DropCounts, Grid, NodeRecord};
use coapcc_link::NodeId;

use crate::emulate::{client_node, Attached, Emulated, EmulatorReport, Hook, IpCarriage};

/// The grid's default client nodes: every node but the root and the server,
/// in node order.
pub fn default_client_nodes(config: &grid::Config) -> Vec<NodeId> {
    (1..=config.nodes() as NodeId)
        .filter(|&n| n != config.root && n != config.server)
        .collect()
}

/// The client nodes of `config`: `given` if not empty (checked: node numbers
/// of the grid, distinct, not the server), else [`default_client_nodes`].
/// Errors say what is wrong without naming a field.
pub fn grid_client_nodes(config: &grid::Config, given: &[NodeId]) -> Result<Vec<NodeId>, String> {
    let n = config.nodes() as NodeId;
    if given.is_empty() {
        let nodes = default_client_nodes(config);
        if nodes.is_empty() {
            return Err(format!(
                "the grid has no node other than its root ({}) and server ({}) for clients",
                config.root, config.server
            ));
        }
        return Ok(nodes);
    }
    for (i, &node) in given.iter().enumerate() {
        if node == 0 || node > n {
            return Err(format!("expected node numbers from 1 to {n}, found {node}"));
        }
        if node == config.server {
            return Err(format!(
                "node {node} is the server's node; expected client nodes other than it"
            ));
        }
        if given[..i].contains(&node) {
            return Err(format!(
                "node {node} is listed twice; expected distinct nodes"
            ));
        }
    }
    Ok(given.to_vec())
}

/// One grid node in the relay's report.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GridNodeReport {
    /// The node's number (from 1).
    pub node: NodeId,
    /// Client mappings attached to it so far.
    pub clients: u64,
    /// What its MAC and 6LoWPAN layer did.
    pub record: NodeRecord,
}

/// What the grid did (see [`Grid`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GridReport {
    /// Every node, from node 1.
    pub nodes: Vec<GridNodeReport>,
    /// Datagrams dropped inside the grid, by cause.
    pub drops: DropCounts,
    /// Frames started on the medium (data and acknowledgements).
    pub frames_on_air: u64,
    /// Receptions destroyed by overlapping frames.
    pub collisions: u64,
}

impl GridReport {
    /// The sum of every node's record.
    pub fn totals(&self) -> NodeRecord {
        let mut t = NodeRecord::default();
        for n in &self.nodes {
            let r = &n.record;
            t.data_frames += r.data_frames;
            t.ack_frames += r.ack_frames;
            t.deferrals += r.deferrals;
            t.mac_drops += r.mac_drops;
            t.channel_access_failures += r.channel_access_failures;
            t.overflows += r.overflows;
            t.reassembly_drops += r.reassembly_drops;
            t.duplicates += r.duplicates;
            t.forwarded += r.forwarded;
            t.airtime += r.airtime;
        }
        t
    }

    /// The report of node `id` (from 1), if the grid has it.
    pub fn node(&self, id: NodeId) -> Option<&GridNodeReport> {
        self.nodes.get((id as usize).checked_sub(1)?)
    }
}

/// The grid with the relay's attachment rule.
pub(crate) struct GridRule {
    server: NodeId,
    /// Client nodes, in the order they are given out.
    nodes: Vec<NodeId>,
    /// Mappings attached so far, per node (index = node − 1).
    clients: Vec<u64>,
    /// Largest CoAP message the grid carries.
    max_payload: usize,
}

/// The grid the relay drives.
pub(crate) type GridNet = Attached<Grid, GridRule>;

/// The grid of `config` seeded with `seed`, its clients on `given` (or the
/// default client nodes).
fn grid_net(config: &grid::Config, given: &[NodeId], seed: u64) -> Result<GridNet, String> {
    let grid = Grid::new(config, seed)?;
    let nodes = grid_client_nodes(config, given).map_err(|e| format!("client_nodes: {e}"))?;
    Ok(Attached {
        link: Box::new(grid),
        rule: GridRule {
            server: config.server,
            nodes,
            clients: vec![0; config.nodes()],
            max_payload: max_payload(config),
        },
    })
}

impl Emulated for GridNet {
    fn server_node(&self) -> NodeId {
        self.rule.server
    }

    fn attach(&mut self, _slot: usize, ordinal: u64) -> NodeId {
        let node = client_node(&self.rule.nodes, ordinal);
        self.rule.clients[node as usize - 1] += 1;
        node
    }

    fn payload(&self, len: usize) -> Option<u16> {
        (len <= self.rule.max_payload).then_some(len as u16)
    }

    fn count_full(&mut self, _up: bool) {}

    fn publish(&self, report: &mut EmulatorReport) {
        let g = report.grid.get_or_insert_with(GridReport::default);
        g.nodes.clear();
        g.nodes
            .extend(self.rule.clients.iter().enumerate().map(|(i, &clients)| {
                let node = i as NodeId + 1;
                GridNodeReport {
                    node,
                    clients,
                    record: self.link.node_record(node),
                }
            }));
        g.drops = self.link.drops();
        (g.frames_on_air, g.collisions) = self.link.medium_counts();
    }
}

/// The grid variant's fields, as the hook sees them.
pub(crate) struct GridHook<'a> {
    pub config: &'a grid::Config,
    pub client_nodes: &'a [NodeId],
}

impl Hook for GridHook<'_> {
    type Net = GridNet;
    type Config = grid::Config;
    const KIND: &'static str = "grid";

    fn config(&self) -> &grid::Config {
        self.config
    }

    fn validate(&self) -> Result<(), String> {
        self.config.validate()?;
        grid_client_nodes(self.config, self.client_nodes)
            .map(|_| ())
            .map_err(|e| format!("client_nodes: {e}"))
    }

    fn client_nodes(&self) -> Vec<NodeId> {
        grid_client_nodes(self.config, self.client_nodes).unwrap_or_default()
    }

    fn server_node(&self) -> NodeId {
        self.config.server
    }

    fn model(&self, seed: u64) -> Result<GridNet, String> {
        grid_net(self.config, self.client_nodes, seed)
    }

    /// Unfragmented UDP whose payload (the CoAP message) fits eight
    /// 6LoWPAN fragments; the grid sizes its frames from the compressed
    /// encoding of that payload.
    fn ip_carriage(&self) -> IpCarriage {
        IpCarriage::UdpUpTo(max_payload(self.config))
    }

    /// The largest unfragmented UDP datagram, 20 + 8 + the largest CoAP
    /// message eight 6LoWPAN fragments carry (756 by default), so the kernel
    /// fragments anything larger and the relay refuses the fragments.
    fn ip_mtu(&self) -> usize {
        28 + max_payload(self.config)
    }
}

/// The largest CoAP message (UDP payload) eight fragments carry.
fn max_payload(config: &grid::Config) -> usize {
    grid::sixlowpan::max_coap(config.addressing, config.hop_by_hop)
}
