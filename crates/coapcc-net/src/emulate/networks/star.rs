//! The IEEE 802.11 star's emulator hook (its [`star::Config`]) and its part
//! of the report (the star's own [`star::StarRecord`]: what its wireless part
//! did).
//!
//! The server is behind the access point's wired hop ([`star::SERVER`]); the
//! `n`th client mapping (counting from 0) is on station `n mod stations + 1`.
//! It carries any datagram up to [`MAX_DATAGRAM`]; the IP mode any IPv4
//! packet at its real size, over a 1500-byte MTU.

use coapcc_link::star::{self, Star};
use coapcc_link::NodeId;

use crate::emulate::{
    Attached, Emulated, EmulatedNetwork, Hook, IpCarriage, NetworkPart, MAX_DATAGRAM,
};

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

    fn report(&self) -> NetworkPart {
        NetworkPart::new(self.link.record())
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

impl From<star::Config> for EmulatedNetwork {
    fn from(c: star::Config) -> Self {
        EmulatedNetwork::new(c)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::net::UdpSocket;

    use super::*;
    use crate::emulate::test_relay::TestRelay;
    use crate::emulate::EmulatorOptions;

    /// Through the Wi-Fi star with two stations: three clients (the third
    /// back on station 1), each datagram echoed back through the DCF and the
    /// wired hop.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn star_relay_carries_datagrams_both_ways() {
        let s = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let server = s.local_addr().unwrap();
        tokio::spawn(async move {
            let mut buf = [0u8; 1500];
            while let Ok((n, from)) = s.recv_from(&mut buf).await {
                let _ = s.send_to(&buf[..n], from).await;
            }
        });
        let net = EmulatedNetwork::from(star::Config {
            stations: 2,
            ..star::Config::default()
        });
        assert_eq!(net.client_nodes(), vec![1, 2]);
        assert_eq!(net.kind(), "star");
        let relay = TestRelay::start(
            server,
            EmulatorOptions {
                network: net,
                ..EmulatorOptions::default()
            },
        )
        .await;
        for i in 0..3u8 {
            let c = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let mut buf = [0u8; 1500];
            c.send_to(&[i; 1200], relay.addr).await.unwrap();
            let (n, _) = tokio::time::timeout(Duration::from_secs(2), c.recv_from(&mut buf))
                .await
                .unwrap()
                .unwrap();
            assert_eq!(&buf[..n], &[i; 1200][..]);
        }
        let r = relay.stop().await;
        assert_eq!(r.clients_seen, 3);
        assert_eq!((r.upstream.delivered, r.downstream.delivered), (3, 3));
        assert_eq!(r.upstream.dropped + r.downstream.dropped, 0);
        let s = r.network_part::<star::StarRecord>().expect("a star report");
        assert!(s.delivered_frames >= 6, "{s:?}");
    }
}
