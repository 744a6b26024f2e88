//! The IEEE 802.15.4 grid's emulator hook ([`EmulatedGrid`]) and its part
//! of the report ([`GridReport`]: its nodes, drops and medium).
//!
//! The server runs on the grid's server node ([`grid::Config::server`],
//! node 3 by default). The `n`th client mapping the relay opens (counting
//! from 0 since it started) attaches to `client_nodes[n mod len]`
//! ([`client_node`]), where the client nodes are the list given in
//! [`EmulatedGrid`] (`client_nodes`), or by default every node but the root
//! (the border router) and the server, in node order
//! ([`default_client_nodes`]): on the 6 × 6 grid the first client is node 2,
//! the second node 4, the 34th node 36, and the 35th node 2 again. Two
//! mappings on one node share its MAC and its 6LoWPAN layer, as two
//! applications on one mote would. The grid carries UDP only and sizes its
//! frames from the 6LoWPAN encoding of the real CoAP message length; a
//! datagram larger than eight fragments can carry
//! ([`grid::sixlowpan::max_coap`]: 728 bytes with the default addressing) is
//! refused and counted
//! ([`DatagramCounts::refused_too_large`](crate::emulate::DatagramCounts::refused_too_large)).

use coapcc_link::grid::{self, DropCounts, Grid, NodeRecord};
use coapcc_link::NodeId;

use crate::emulate::{
    client_node, Attached, Emulated, EmulatedNetwork, Hook, IpCarriage, NetworkPart,
};

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

    fn report(&self) -> NetworkPart {
        let nodes = self.rule.clients.iter().enumerate().map(|(i, &clients)| {
            let node = i as NodeId + 1;
            GridNodeReport {
                node,
                clients,
                record: self.link.node_record(node),
            }
        });
        let (frames_on_air, collisions) = self.link.medium_counts();
        NetworkPart::new(GridReport {
            nodes: nodes.collect(),
            drops: self.link.drops(),
            frames_on_air,
            collisions,
        })
    }
}

/// The grid an emulator runs: its parameters and the nodes clients attach to.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EmulatedGrid {
    /// The grid.
    pub config: grid::Config,
    /// The nodes client mappings attach to, in the order they are given out
    /// (see the module docs); empty: every node but the root and the server,
    /// in node order.
    pub client_nodes: Vec<NodeId>,
}

impl From<EmulatedGrid> for EmulatedNetwork {
    fn from(g: EmulatedGrid) -> Self {
        EmulatedNetwork::new(g)
    }
}

impl From<grid::Config> for EmulatedNetwork {
    /// The grid with the default client nodes.
    fn from(config: grid::Config) -> Self {
        EmulatedGrid {
            config,
            client_nodes: Vec::new(),
        }
        .into()
    }
}

impl Hook for EmulatedGrid {
    type Net = GridNet;
    type Config = grid::Config;
    const KIND: &'static str = "grid";

    fn config(&self) -> &grid::Config {
        &self.config
    }

    fn validate(&self) -> Result<(), String> {
        self.config.validate()?;
        grid_client_nodes(&self.config, &self.client_nodes)
            .map(|_| ())
            .map_err(|e| format!("client_nodes: {e}"))
    }

    fn client_nodes(&self) -> Vec<NodeId> {
        grid_client_nodes(&self.config, &self.client_nodes).unwrap_or_default()
    }

    fn server_node(&self) -> NodeId {
        self.config.server
    }

    fn model(&self, seed: u64) -> Result<GridNet, String> {
        grid_net(&self.config, &self.client_nodes, seed)
    }

    /// Unfragmented UDP whose payload (the CoAP message) fits eight
    /// 6LoWPAN fragments; the grid sizes its frames from the compressed
    /// encoding of that payload.
    fn ip_carriage(&self) -> IpCarriage {
        IpCarriage::UdpUpTo(max_payload(&self.config))
    }

    /// The largest unfragmented UDP datagram, 20 + 8 + the largest CoAP
    /// message eight 6LoWPAN fragments carry (756 by default), so the kernel
    /// fragments anything larger and the relay refuses the fragments.
    fn ip_mtu(&self) -> usize {
        28 + max_payload(&self.config)
    }
}

/// The largest CoAP message (UDP payload) eight fragments carry.
fn max_payload(config: &grid::Config) -> usize {
    grid::sixlowpan::max_coap(config.addressing, config.hop_by_hop)
}

#[cfg(test)]
mod tests {
    use std::net::SocketAddr;
    use std::time::Duration;

    use tokio::net::UdpSocket;

    use super::*;
    use crate::emulate::networks::dumbbell::DumbbellReport;
    use crate::emulate::test_relay::TestRelay;
    use crate::emulate::EmulatorOptions;

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
                network: EmulatedGrid {
                    config: grid::Config::default(),
                    client_nodes: vec![4, 36],
                }
                .into(),
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
        let g = r.network_part::<GridReport>().expect("a grid report");
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
        assert!(
            r.network_part::<DumbbellReport>().is_none(),
            "no dumbbell links"
        );
        let t = g.totals();
        assert_eq!(g.frames_on_air, t.data_frames + t.ack_frames);
        assert!(t.data_frames >= 8, "{t:?}");
        assert_eq!(g.drops.total(), 0);
    }
}
