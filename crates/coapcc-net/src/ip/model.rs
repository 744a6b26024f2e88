//! The network model between the two namespaces: the simulator's own
//! (`coapcc_link`), chosen by [`EmulatedNetwork`], and what each one
//! carries of a real IPv4 packet.

use anyhow::{anyhow, Result};
use coapcc_link::dumbbell::Dumbbell;
use coapcc_link::grid::{self, Grid};
use coapcc_link::star::Star;
use coapcc_link::{Datagram, DropCause, Nanos, Network, NodeId, Output};

use super::packet::{Ipv4Info, IPV4_HEADER, PROTO_UDP};
use crate::emulate::EmulatedNetwork;

/// One of the three models.
pub(crate) enum IpModel {
    Dumbbell(Box<Dumbbell>),
    Grid {
        grid: Box<Grid>,
        /// Largest CoAP message (UDP payload) eight fragments carry.
        max_payload: usize,
    },
    Star(Box<Star>),
}

impl IpModel {
    /// The model of `net` seeded with `seed` (the same construction as the
    /// UDP relay's and the simulator's).
    pub(crate) fn new(net: &EmulatedNetwork, seed: u64) -> Result<IpModel> {
        net.validate().map_err(|e| anyhow!(e))?;
        Ok(match net {
            EmulatedNetwork::Dumbbell(c) => {
                IpModel::Dumbbell(Box::new(Dumbbell::new(c, seed, 1024)))
            }
            EmulatedNetwork::Grid { config, .. } => IpModel::Grid {
                grid: Box::new(Grid::new(config, seed).map_err(|e| anyhow!(e))?),
                max_payload: grid::sixlowpan::max_coap(config.addressing, config.hop_by_hop),
            },
            EmulatedNetwork::Star(c) => {
                IpModel::Star(Box::new(Star::new(c, seed).map_err(|e| anyhow!(e))?))
            }
        })
    }

    /// The transport header and payload sizes `p` enters the model with, or
    /// why the model cannot carry it (a reason of [`super::RelayReport`]'s
    /// `refused` counts).
    ///
    /// Dumbbell and star: any IPv4 packet; its size in the model is its real
    /// IPv4 size (the model adds 20 header bytes; IP options are counted in
    /// the transport header so the total stays exact). Grid: unfragmented
    /// UDP whose payload (the CoAP message) fits eight 6LoWPAN fragments;
    /// the grid sizes its frames from the compressed 6LoWPAN encoding of
    /// that payload.
    pub(crate) fn sizes(&self, p: &Ipv4Info) -> Result<(u16, u16), &'static str> {
        let options = p.header_len - IPV4_HEADER;
        match self {
            IpModel::Dumbbell(_) | IpModel::Star(_) => {
                Ok(((options + p.transport_header) as u16, p.payload() as u16))
            }
            IpModel::Grid { max_payload, .. } => {
                if p.proto != PROTO_UDP {
                    return Err("not_udp");
                }
                if p.fragment {
                    return Err("fragment");
                }
                if p.payload() > *max_payload {
                    return Err("too_large");
                }
                Ok((8, p.payload() as u16))
            }
        }
    }
}

impl Network for IpModel {
    fn send(&mut self, now: Nanos, d: Datagram) -> Result<(), DropCause> {
        match self {
            IpModel::Dumbbell(n) => n.send(now, d),
            IpModel::Grid { grid, .. } => grid.send(now, d),
            IpModel::Star(n) => n.send(now, d),
        }
    }

    fn next_wakeup(&self) -> Option<Nanos> {
        match self {
            IpModel::Dumbbell(n) => n.next_wakeup(),
            IpModel::Grid { grid, .. } => grid.next_wakeup(),
            IpModel::Star(n) => n.next_wakeup(),
        }
    }

    fn poll(&mut self, until: Nanos) -> Option<(Nanos, Option<Output>)> {
        match self {
            IpModel::Dumbbell(n) => n.poll(until),
            IpModel::Grid { grid, .. } => grid.poll(until),
            IpModel::Star(n) => n.poll(until),
        }
    }

    fn in_flight(&self) -> u64 {
        match self {
            IpModel::Dumbbell(n) => n.in_flight(),
            IpModel::Grid { grid, .. } => grid.in_flight(),
            IpModel::Star(n) => n.in_flight(),
        }
    }

    fn events(&self) -> u64 {
        match self {
            IpModel::Dumbbell(n) => n.events(),
            IpModel::Grid { grid, .. } => grid.events(),
            IpModel::Star(n) => n.events(),
        }
    }
}

/// A drop cause's name in reports and logs.
pub fn cause_name(c: DropCause) -> &'static str {
    match c {
        DropCause::Buffer => "buffer",
        DropCause::LinkError => "link_error",
        DropCause::MacQueue => "mac_queue",
        DropCause::MacRetries => "mac_retries",
        DropCause::ChannelAccess => "channel_access",
        DropCause::Reassembly => "reassembly",
        DropCause::FragmentsAborted => "fragments_aborted",
        DropCause::HopLimit => "hop_limit",
    }
}

/// Ensures `NodeId` stays what the addressing assumes.
const _: () = assert!(std::mem::size_of::<NodeId>() == 4);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ip::packet::{PROTO_ICMP, PROTO_TCP};
    use std::net::Ipv4Addr;

    fn packet(proto: u8, header_len: usize, transport_header: usize, payload: usize) -> Ipv4Info {
        Ipv4Info {
            src: Ipv4Addr::new(10, 0, 0, 2),
            dst: Ipv4Addr::new(10, 0, 0, 1),
            proto,
            total_len: header_len + transport_header + payload,
            header_len,
            transport_header,
            ports: (5000, 5683),
            fragment: false,
        }
    }

    /// The dumbbell and the star take any IPv4 packet at its real size (IP
    /// options folded into the transport header); the grid takes
    /// unfragmented UDP whose payload fits eight fragments, and names why it
    /// refuses the rest.
    #[test]
    fn what_each_model_carries_and_at_what_size() {
        for net in [
            EmulatedNetwork::default(),
            EmulatedNetwork::Star(coapcc_link::star::Config::default()),
        ] {
            let m = IpModel::new(&net, 1).unwrap();
            assert_eq!(m.sizes(&packet(PROTO_TCP, 20, 32, 9)), Ok((32, 9)));
            assert_eq!(m.sizes(&packet(PROTO_TCP, 24, 20, 0)), Ok((24, 0)));
            assert_eq!(m.sizes(&packet(PROTO_ICMP, 20, 8, 56)), Ok((8, 56)));
            let mut frag = packet(PROTO_UDP, 20, 0, 1480);
            frag.fragment = true;
            assert_eq!(m.sizes(&frag), Ok((0, 1480)));
        }
        let grid = EmulatedNetwork::from(grid::Config::default());
        let m = IpModel::new(&grid, 1).unwrap();
        assert_eq!(m.sizes(&packet(PROTO_UDP, 20, 8, 728)), Ok((8, 728)));
        assert_eq!(m.sizes(&packet(PROTO_UDP, 20, 8, 729)), Err("too_large"));
        assert_eq!(m.sizes(&packet(PROTO_TCP, 20, 20, 5)), Err("not_udp"));
        assert_eq!(m.sizes(&packet(PROTO_ICMP, 20, 8, 56)), Err("not_udp"));
        let mut frag = packet(PROTO_UDP, 20, 8, 100);
        frag.fragment = true;
        assert_eq!(m.sizes(&frag), Err("fragment"));
        assert_eq!(crate::ip::mtu_of(&grid), 756);
        assert_eq!(crate::ip::mtu_of(&EmulatedNetwork::default()), 296);
    }
}
