//! The IP mode's addresses (IPv4 on every network; see docs/real-network.md,
//! "IP mode"):
//!
//! - the server namespace: [`Addressing::server`], 10.0.0.1;
//! - the client namespace: its primary address [`Addressing::client`],
//!   10.0.0.2, and on the grid and the star one address per client node,
//!   `10.1.H.L` for node `N = 256·H + L` ([`Addressing::node_addr`]).
//!
//! Both namespaces reach each other only over their TUN device (`cc0`).
//! A packet from (or to) a per-node address is the model's traffic of that
//! node; one from (or to) the primary address belongs to a flow,
//! (protocol, client port), and the `n`th flow seen (from 0) is the `n`th
//! client node (wrapping around; [`crate::emulate::client_node`]), as the
//! UDP relay gives out nodes to client mappings. The dumbbell does not tell
//! clients apart: flow `n` is client node `n` there.

use std::net::Ipv4Addr;

use coapcc_link::NodeId;

/// The addresses of one emulation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Addressing {
    /// The server namespace's address.
    pub server: Ipv4Addr,
    /// The client namespace's primary address.
    pub client: Ipv4Addr,
}

impl Default for Addressing {
    fn default() -> Self {
        Addressing {
            server: Ipv4Addr::new(10, 0, 0, 1),
            client: Ipv4Addr::new(10, 0, 0, 2),
        }
    }
}

/// The first two octets of the per-node addresses.
const NODE_PREFIX: [u8; 2] = [10, 1];

impl Addressing {
    /// The address of client node `node` (1 to 65 535): `10.1.H.L`.
    pub fn node_addr(&self, node: NodeId) -> Option<Ipv4Addr> {
        (1..=0xffff).contains(&node).then(|| {
            Ipv4Addr::new(
                NODE_PREFIX[0],
                NODE_PREFIX[1],
                (node >> 8) as u8,
                node as u8,
            )
        })
    }

    /// The node whose address `addr` is, if it is a per-node address.
    pub fn node_of(&self, addr: Ipv4Addr) -> Option<NodeId> {
        let o = addr.octets();
        let node = NodeId::from(o[2]) << 8 | NodeId::from(o[3]);
        (o[..2] == NODE_PREFIX && node != 0).then_some(node)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_addresses_round_trip() {
        let a = Addressing::default();
        assert_eq!(a.node_addr(36), Some(Ipv4Addr::new(10, 1, 0, 36)));
        assert_eq!(a.node_addr(300), Some(Ipv4Addr::new(10, 1, 1, 44)));
        assert_eq!(a.node_addr(0), None);
        for n in [1, 255, 256, 65_535] {
            assert_eq!(a.node_of(a.node_addr(n).unwrap()), Some(n));
        }
        assert_eq!(a.node_of(a.client), None);
        assert_eq!(a.node_of(Ipv4Addr::new(10, 1, 0, 0)), None);
    }
}
