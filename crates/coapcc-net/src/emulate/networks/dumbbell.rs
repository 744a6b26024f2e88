//! The dumbbell's emulator hook and its part of the report
//! ([`DumbbellReport`]: what each direction of its bottleneck did).
//!
//! A client mapping is the model's client node numbered by its slot (slots
//! are reused after a mapping closes); the server is [`dumbbell::SERVER`],
//! behind the router. The relay carries any datagram up to [`MAX_DATAGRAM`]
//! whatever the MTU; the IP mode any IPv4 packet at its real size. A datagram
//! the relay refuses for want of room also counts as a buffer drop of its
//! direction. It is the network [`EmulatedNetwork`] holds by default.

use coapcc_link::dumbbell::{self, Direction, Dumbbell, LinkRecord};
use coapcc_link::NodeId;

use crate::emulate::{Emulated, EmulatedNetwork, Hook, IpCarriage, NetworkPart, MAX_DATAGRAM};

/// What the dumbbell did: each direction of its bottleneck.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DumbbellReport {
    /// The clients → server direction.
    pub uplink: LinkRecord,
    /// The server → clients direction.
    pub downlink: LinkRecord,
}

impl Emulated for Dumbbell {
    fn server_node(&self) -> NodeId {
        dumbbell::SERVER
    }

    fn attach(&mut self, slot: usize, _ordinal: u64) -> NodeId {
        slot as NodeId
    }

    fn payload(&self, len: usize) -> Option<u16> {
        // relayed whole whatever the MTU, up to the largest IPv4 UDP payload
        (len <= MAX_DATAGRAM).then_some(len as u16)
    }

    fn count_full(&mut self, up: bool) {
        self.count_overflow(if up { Direction::Up } else { Direction::Down });
    }

    fn report(&self) -> NetworkPart {
        NetworkPart::new(DumbbellReport {
            uplink: self.record(Direction::Up),
            downlink: self.record(Direction::Down),
        })
    }
}

impl Hook for dumbbell::Config {
    type Net = Dumbbell;
    type Config = dumbbell::Config;
    const KIND: &'static str = "dumbbell";

    fn config(&self) -> &dumbbell::Config {
        self
    }

    fn validate(&self) -> Result<(), String> {
        for (field, bps) in [
            ("uplink_bps", self.uplink_bps),
            ("downlink_bps", self.downlink_bps),
        ] {
            if bps == 0 {
                return Err(format!(
                    "network.{field}: expected a rate greater than 0 bit/s"
                ));
            }
        }
        self.validate_delays()
    }

    /// None: the model does not tell the dumbbell's clients apart.
    fn client_nodes(&self) -> Vec<NodeId> {
        Vec::new()
    }

    fn server_node(&self) -> NodeId {
        dumbbell::SERVER
    }

    fn model(&self, seed: u64) -> Result<Dumbbell, String> {
        Ok(Dumbbell::new(self, seed, 1024))
    }

    fn ip_carriage(&self) -> IpCarriage {
        IpCarriage::AnyIpv4
    }

    /// Its `mtu` (296 by default).
    fn ip_mtu(&self) -> usize {
        self.mtu
    }
}

impl From<dumbbell::Config> for EmulatedNetwork {
    fn from(c: dumbbell::Config) -> Self {
        EmulatedNetwork::new(c)
    }
}

impl Default for EmulatedNetwork {
    /// The testbed's dumbbell.
    fn default() -> Self {
        dumbbell::Config::default().into()
    }
}
