//! The star's emulator hook: the server behind the access point's wired hop
//! ([`star::SERVER`]), the `n`th client mapping on station
//! `n mod stations + 1`. It carries any datagram up to [`MAX_DATAGRAM`]; the
//! IP mode any IPv4 packet at its real size, over a 1500-byte MTU.

use coapcc_link::star::{self, Star};
use coapcc_link::NodeId;

use crate::emulate::{Attached, Emulated, EmulatorReport, Hook, IpCarriage, MAX_DATAGRAM};

/// The star with the relay's attachment rule: the `n`th mapping on station
/// `n mod stations + 1`.
pub(crate) struct StarRule {
    stations: u32,
}

/// The star the relay drives.
pub(crate) type StarNet = Attached<Star, StarRule>;

impl Emulated for StarNet {
    fn server_node(&self) -> NodeId {
        star::SERVER
    }

    fn attach(&mut self, _slot: usize, ordinal: u64) -> NodeId {
        (ordinal % u64::from(self.rule.stations)) as NodeId + 1
    }

    fn payload(&self, len: usize) -> Option<u16> {
        (len <= MAX_DATAGRAM).then_some(len as u16)
    }

    fn count_full(&mut self, _up: bool) {}

    fn publish(&self, report: &mut EmulatorReport) {
        report.star = Some(self.link.record());
    }
}

impl Hook for star::Config {
    type Net = StarNet;
    type Config = star::Config;
    const KIND: &'static str = "star";

    fn config(&self) -> &star::Config {
        self
    }

    fn validate(&self) -> Result<(), String> {
        star::Config::validate(self)
    }

    /// Its stations, 1 to n.
    fn client_nodes(&self) -> Vec<NodeId> {
        (1..=self.stations).collect()
    }

    fn server_node(&self) -> NodeId {
        star::SERVER
    }

    fn model(&self, seed: u64) -> Result<StarNet, String> {
        Ok(Attached {
            link: Box::new(Star::new(self, seed)?),
            rule: StarRule {
                stations: self.stations,
            },
        })
    }

    fn ip_carriage(&self) -> IpCarriage {
        IpCarriage::AnyIpv4
    }

    /// Ethernet's and 802.11's MSDU.
    fn ip_mtu(&self) -> usize {
        1500
    }
}
