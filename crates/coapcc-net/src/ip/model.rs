//! The network model between the two namespaces: the simulator's own
//! (`coapcc_link`), chosen by [`EmulatedNetwork`], and what each one
//! carries of a real IPv4 packet.

use anyhow::Result;
use coapcc_link::{DropCause, Network, NodeId};

use super::packet::{Ipv4Info, IPV4_HEADER, PROTO_UDP};
use crate::emulate::{Attached, EmulatedNetwork, IpCarriage};
#[cfg(test)]
use coapcc_link::grid;

/// The network's model behind `dyn Network`, with what it carries of an
/// IPv4 packet (its hook's [`IpCarriage`]).
pub(crate) type IpModel = Attached<dyn Network + Send, IpCarriage>;

impl IpModel {
    /// The model of `net` seeded with `seed` (the same construction as the
    /// UDP relay's and the simulator's).
    pub(crate) fn new(net: &EmulatedNetwork, seed: u64) -> Result<IpModel> {
        Ok(Attached {
            link: net.dyn_model(seed)?,
            rule: net.ip_carriage(),
        })
    }

    /// The transport header and payload sizes `p` enters the model with, or
    /// why the model cannot carry it (a reason of [`super::RelayReport`]'s
    /// `refused` counts).
    ///
    /// Dumbbell and star ([`IpCarriage::AnyIpv4`]): any IPv4 packet; its
    /// size in the model is its real IPv4 size (the model adds 20 header
    /// bytes; IP options are counted in the transport header so the total
    /// stays exact). Grid ([`IpCarriage::UdpUpTo`]): unfragmented UDP whose
    /// payload (the CoAP message) fits eight 6LoWPAN fragments; the grid
    /// sizes its frames from the compressed 6LoWPAN encoding of that
    /// payload.
    pub(crate) fn sizes(&self, p: &Ipv4Info) -> Result<(u16, u16), &'static str> {
        let options = p.header_len - IPV4_HEADER;
        match self.rule {
            IpCarriage::AnyIpv4 => Ok(((options + p.transport_header) as u16, p.payload() as u16)),
            IpCarriage::UdpUpTo(max_payload) => {
                if p.proto != PROTO_UDP {
                    return Err("not_udp");
                }
                if p.fragment {
                    return Err("fragment");
                }
                if p.payload() > max_payload {
                    return Err("too_large");
                }
                Ok((8, p.payload() as u16))
            }
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
        DropCause::PayloadTooLarge => "payload_too_large",
        DropCause::Collision => "collision",
        DropCause::BelowSensitivity => "below_sensitivity",
        DropCause::GatewayBusy => "gateway_busy",
        DropCause::NoWindow => "no_window",
        DropCause::DutyCycle => "duty_cycle",
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
            coapcc_link::star::Config::default().into(),
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
