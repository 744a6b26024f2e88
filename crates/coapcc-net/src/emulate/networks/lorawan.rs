//! The LoRaWAN network's emulator hook (its [`lorawan::Config`]) and its
//! part of the report (the model's own [`lorawan::LorawanRecord`]: frames,
//! air time, duty-cycle waiting, losses by cause).
//!
//! The server is behind the gateway's backhaul (node `devices`); the `n`th
//! client mapping (counting from 0) is device `n mod devices`. It carries a
//! datagram up to the largest LoRaWAN payload, at SF7, less the SCHC
//! residue; the model refuses, per device, what that device's spreading
//! factor cannot carry (`payload_too_large`). The IP mode carries UDP up to
//! the same size (the model stands for SCHC's compression of the IP and UDP
//! headers).

use coapcc_link::lorawan::{self, airtime, Lorawan, Sf};
use coapcc_link::NodeId;

use crate::emulate::{Attached, Emulated, EmulatedNetwork, Hook, IpCarriage, NetworkPart};

/// The LoRaWAN network with the relay's attachment rule: the `n`th mapping
/// on device `n mod devices`.
pub(crate) struct LorawanRule {
    devices: u32,
    max_payload: usize,
}

/// The LoRaWAN network the relay drives.
pub(crate) type LorawanNet = Attached<Lorawan, LorawanRule>;

impl Emulated for LorawanNet {
    fn server_node(&self) -> NodeId {
        self.link.server()
    }

    fn attach(&mut self, _slot: usize, ordinal: u64) -> NodeId {
        (ordinal % u64::from(self.rule.devices)) as NodeId
    }

    fn payload(&self, len: usize) -> Option<u16> {
        (len <= self.rule.max_payload).then_some(len as u16)
    }

    fn count_full(&mut self, _up: bool) {}

    fn report(&self) -> NetworkPart {
        NetworkPart::new(self.link.record())
    }
}

/// The largest CoAP message any device can carry: SF7's LoRaWAN payload
/// less the SCHC residue.
fn max_payload(config: &lorawan::Config) -> usize {
    airtime::max_frm_payload(Sf::SF7).saturating_sub(usize::from(config.schc_residue))
}

impl Hook for lorawan::Config {
    type Net = LorawanNet;
    type Config = lorawan::Config;
    const KIND: &'static str = "lorawan";

    fn config(&self) -> &lorawan::Config {
        self
    }

    fn validate(&self) -> Result<(), String> {
        lorawan::Config::validate(self)
    }

    /// Its devices, 0 to n − 1.
    fn client_nodes(&self) -> Vec<NodeId> {
        (0..self.devices).collect()
    }

    fn server_node(&self) -> NodeId {
        self.devices
    }

    fn model(&self, seed: u64) -> Result<LorawanNet, String> {
        Ok(Attached {
            link: Box::new(Lorawan::new(self, seed)?),
            rule: LorawanRule {
                devices: self.devices,
                max_payload: max_payload(self),
            },
        })
    }

    fn ip_carriage(&self) -> IpCarriage {
        IpCarriage::UdpUpTo(max_payload(self))
    }

    /// The largest unfragmented UDP datagram the devices carry (20 + 8 +
    /// the largest payload), so the kernel fragments anything larger and the
    /// relay refuses the fragments.
    fn ip_mtu(&self) -> usize {
        28 + max_payload(self)
    }
}

impl From<lorawan::Config> for EmulatedNetwork {
    fn from(c: lorawan::Config) -> Self {
        EmulatedNetwork::new(c)
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use tokio::net::UdpSocket;

    use super::*;
    use crate::emulate::test_relay::TestRelay;
    use crate::emulate::EmulatorOptions;

    /// Through LoRaWAN with two devices near the gateway: two clients, each
    /// datagram echoed back in its device's RX1 window, one second after
    /// the uplink ends, so no echo comes back in less than a second.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn lorawan_relay_answers_in_the_receive_window() {
        let s = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let server = s.local_addr().unwrap();
        tokio::spawn(async move {
            let mut buf = [0u8; 512];
            while let Ok((n, from)) = s.recv_from(&mut buf).await {
                let _ = s.send_to(&buf[..n], from).await;
            }
        });
        let config = lorawan::Config {
            devices: 2,
            radius_m: 100.0,
            ..lorawan::Config::default()
        };
        let net = EmulatedNetwork::from(config);
        assert_eq!(net.client_nodes(), vec![0, 1]);
        assert_eq!(net.server_node(), 2);
        assert_eq!(net.kind(), "lorawan");
        let relay = TestRelay::start(
            server,
            EmulatorOptions {
                network: net,
                ..EmulatorOptions::default()
            },
        )
        .await;
        for i in 0..2u8 {
            let c = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let mut buf = [0u8; 512];
            let sent = Instant::now();
            c.send_to(&[i; 20], relay.addr).await.unwrap();
            let (n, _) = tokio::time::timeout(Duration::from_secs(5), c.recv_from(&mut buf))
                .await
                .unwrap()
                .unwrap();
            assert_eq!(&buf[..n], &[i; 20][..]);
            assert!(
                sent.elapsed() >= Duration::from_secs(1),
                "{:?}",
                sent.elapsed()
            );
        }
        let r = relay.stop().await;
        assert_eq!(r.clients_seen, 2);
        assert_eq!((r.upstream.delivered, r.downstream.delivered), (2, 2));
        let part = r
            .network_part::<lorawan::LorawanRecord>()
            .expect("a LoRaWAN report");
        assert_eq!(part.uplink_frames, 2, "{part:?}");
    }

    #[test]
    fn too_large_a_datagram_is_refused_and_bad_parameters_are_named() {
        let config = lorawan::Config::default();
        let net = config.model(1).unwrap();
        assert_eq!(net.payload(221), Some(221));
        assert_eq!(net.payload(222), None);
        let bad = lorawan::Config {
            devices: 0,
            ..lorawan::Config::default()
        };
        assert!(Hook::validate(&bad).unwrap_err().contains("devices"));
    }
}
