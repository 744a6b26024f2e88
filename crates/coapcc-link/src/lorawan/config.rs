//! The LoRaWAN network's parameters: the `[network]` table of a scenario
//! with `kind = "lorawan"`, the times derived from them, the frame sizes of
//! a datagram, and their checks.

use std::fmt;

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::airtime::{phy_payload, Sf};
use super::gateway::RECEPTION_PATHS;
use super::interference::Capture;
use super::propagation::PathLoss;
use super::region::{DutyCycles, UPLINK_CHANNELS};
use crate::time::{Nanos, SECOND};
use crate::Datagram;

/// The most devices one gateway may have. The model has one gateway, whose
/// reception paths and three uplink channels are saturated far below this
/// (a few thousand devices sending every few minutes already lose most
/// frames); larger deployments need several gateways, which the model does
/// not have. It also bounds a run's memory (a few hundred bytes per device).
pub const MAX_DEVICES: u32 = 100_000;

/// The largest SCHC residue of the IPv6 and UDP headers: the uncompressed
/// headers themselves (40 + 8 bytes).
pub const MAX_SCHC_RESIDUE: u16 = 48;

/// 10⁷ s, the bound of every duration, in microseconds.
const MAX_US: u64 = 10_000_000_000_000;

/// The LoRaWAN network's parameters: the `[network]` table of a scenario
/// with `kind = "lorawan"`. Each default names its source.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// `kind = "lorawan"` in a scenario file.
    #[serde(skip_serializing)]
    pub kind: Kind,
    /// End devices around the one gateway, 1 to [`MAX_DEVICES`]; default 200
    /// (ns-3 `lorawan`, `examples/complete-network-example.cc`).
    pub devices: u32,
    /// Radius (m) of the disc around the gateway the devices are placed in,
    /// uniformly by area; default 6400 (same example).
    pub radius_m: f64,
    /// How devices get their spreading factor: `"distance"` (the smallest
    /// SF whose end-device sensitivity the gateway's signal clears, ns-3's
    /// `SetSpreadingFactorsUp`; the default) or a fixed SF, 7 to 12.
    pub spreading_factor: SfAllocation,
    /// Log-distance path loss; ns-3 `lorawan`'s defaults.
    pub path_loss: PathLoss,
    /// Duty cycle of each EU868 sub-band; the regulation's (1 %, 0.1 %,
    /// 10 %).
    pub duty_cycle: DutyCycles,
    /// Capture effect and inter-SF isolation (Goursaud, ns-3's default) or
    /// none (`"off"`).
    pub capture: Capture,
    /// The gateway's reception paths; default 8 (an SX1301's, ns-3's).
    pub reception_paths: u32,
    /// Uplink channels the devices pick from at random, the first of
    /// 868.1, 868.3 and 868.5 MHz: 1 to 3; default 3 (RP002's default
    /// channels). 1 puts every uplink on 868.1 MHz (LoRaSim's single channel).
    pub uplink_channels: u8,
    /// One-way delay (µs) between the gateway (with the network server) and
    /// the CoAP server; default 10 000 (10 ms, a wired backhaul: an
    /// assumption of this model, not a published figure).
    pub backhaul_us: u64,
    /// RX1 opens this many seconds after the end of an uplink; default 1
    /// (LoRaWAN 1.0.x RECEIVE_DELAY1). 1 to 15 (the range of
    /// RXTimingSetupReq).
    pub rx1_delay_s: u64,
    /// RX2 opens this many seconds after the end of an uplink; default 2
    /// (RECEIVE_DELAY2). After RX1, at most 16.
    pub rx2_delay_s: u64,
    /// Frames a device holds while it may not transmit (duty-cycle off-time,
    /// class-A windows), not counting the one on the air; default 1. A frame
    /// that finds them full is dropped (`MacQueue`).
    pub device_queue: u32,
    /// Downlinks the network server holds per device for the device's next
    /// uplink, when they miss the windows of its last one; default 4, 0 to
    /// 64. A downlink that finds them full is dropped with the reason it
    /// missed the windows (`NoWindow`, `GatewayBusy` or `DutyCycle`).
    pub held_downlinks: u32,
    /// A held downlink is given up this many seconds after it reached the
    /// network server; default 247 (CoAP's EXCHANGE_LIFETIME, RFC 7252
    /// §4.8.2: no endpoint expects the message any longer).
    pub downlink_ttl_s: u64,
    /// Bytes the SCHC compression leaves of the IPv6 and UDP headers (the
    /// rule ID rides in FPort, RFC 9011; with every IPv6 and UDP field
    /// elided or computed the residue is 0 or 1 byte); default 1. 0 to
    /// [`MAX_SCHC_RESIDUE`].
    pub schc_residue: u16,
}

/// The `kind` of a LoRaWAN network's `[network]` table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// LoRaWAN class A, EU868.
    #[default]
    Lorawan,
}

/// How the devices get their spreading factors.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SfAllocation {
    /// By distance to the gateway (`"distance"`).
    #[default]
    Distance,
    /// Every device at this SF (a number, 7 to 12).
    Fixed(Sf),
}

impl Serialize for SfAllocation {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            SfAllocation::Distance => s.serialize_str("distance"),
            SfAllocation::Fixed(sf) => s.serialize_u8(sf.get()),
        }
    }
}

impl<'de> Deserialize<'de> for SfAllocation {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(SfAllocationVisitor)
    }
}

/// Reads `"distance"` or a spreading factor.
struct SfAllocationVisitor;

impl SfAllocationVisitor {
    fn fixed<E: de::Error>(sf: i64) -> Result<SfAllocation, E> {
        u8::try_from(sf)
            .map_err(|_| {
                format!("spreading factor {sf} does not exist in LoRaWAN: expected 7 to 12")
            })
            .and_then(Sf::new)
            .map(SfAllocation::Fixed)
            .map_err(E::custom)
    }
}

impl Visitor<'_> for SfAllocationVisitor {
    type Value = SfAllocation;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("\"distance\" or a spreading factor from 7 to 12")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<SfAllocation, E> {
        if v == "distance" {
            Ok(SfAllocation::Distance)
        } else {
            Err(E::custom(format!(
                "spreading_factor \"{v}\": expected \"distance\" or a spreading factor from 7 to 12"
            )))
        }
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<SfAllocation, E> {
        Self::fixed(v)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<SfAllocation, E> {
        Self::fixed(i64::try_from(v).unwrap_or(i64::MAX))
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            kind: Kind::Lorawan,
            devices: 200,
            radius_m: 6400.0,
            spreading_factor: SfAllocation::Distance,
            path_loss: PathLoss::default(),
            duty_cycle: DutyCycles::default(),
            capture: Capture::Goursaud,
            reception_paths: RECEPTION_PATHS as u32,
            uplink_channels: UPLINK_CHANNELS.len() as u8,
            backhaul_us: 10_000,
            rx1_delay_s: 1,
            rx2_delay_s: 2,
            device_queue: 1,
            held_downlinks: 4,
            downlink_ttl_s: 247,
            schc_residue: 1,
        }
    }
}

impl Config {
    /// Checks the parameters; errors name the field and what was expected.
    pub fn validate(&self) -> Result<(), String> {
        let check = |ok: bool, what: String| if ok { Ok(()) } else { Err(what) };
        check(
            (1..=MAX_DEVICES).contains(&self.devices),
            format!(
                "network.devices: expected 1 to {MAX_DEVICES}, not {}: the model has one gateway, \
                 whose 8 reception paths and 3 uplink channels are saturated far below that \
                 (several gateways would be needed, which the model does not have)",
                self.devices
            ),
        )?;
        check(
            self.radius_m.is_finite() && self.radius_m > 0.0 && self.radius_m <= 1e6,
            format!(
                "network.radius_m: expected a radius in (0, 1e6] m, not {}",
                self.radius_m
            ),
        )?;
        self.path_loss.validate("network.path_loss")?;
        self.duty_cycle.validate("network.duty_cycle")?;
        check(
            (1..=64).contains(&self.reception_paths),
            format!(
                "network.reception_paths: expected 1 to 64 (an SX1301 has 8), not {}",
                self.reception_paths
            ),
        )?;
        check(
            (1..=UPLINK_CHANNELS.len() as u8).contains(&self.uplink_channels),
            format!(
                "network.uplink_channels: expected 1 to 3 (868.1, 868.3, 868.5 MHz), not {}",
                self.uplink_channels
            ),
        )?;
        check(
            self.backhaul_us <= MAX_US,
            format!(
                "network.backhaul_us: expected at most 1e13 µs (1e7 s), not {}",
                self.backhaul_us
            ),
        )?;
        check(
            (1..=15).contains(&self.rx1_delay_s),
            format!(
                "network.rx1_delay_s: expected 1 to 15 s (LoRaWAN's RXTimingSetupReq), not {}",
                self.rx1_delay_s
            ),
        )?;
        check(
            self.rx2_delay_s > self.rx1_delay_s && self.rx2_delay_s <= 16,
            format!(
                "network.rx2_delay_s: expected after rx1_delay_s ({} s) and at most 16 s, not {}",
                self.rx1_delay_s, self.rx2_delay_s
            ),
        )?;
        check(
            (1..=64).contains(&self.device_queue),
            format!(
                "network.device_queue: expected 1 to 64 frames, not {}",
                self.device_queue
            ),
        )?;
        check(
            self.held_downlinks <= 64,
            format!(
                "network.held_downlinks: expected 0 to 64 per device, not {}",
                self.held_downlinks
            ),
        )?;
        check(
            (1..=MAX_US / 1_000_000).contains(&self.downlink_ttl_s),
            format!(
                "network.downlink_ttl_s: expected 1 to 1e7 s, not {}",
                self.downlink_ttl_s
            ),
        )?;
        check(
            self.schc_residue <= MAX_SCHC_RESIDUE,
            format!(
                "network.schc_residue: expected 0 to {MAX_SCHC_RESIDUE} bytes (the uncompressed \
                 IPv6 and UDP headers), not {}",
                self.schc_residue
            ),
        )
    }

    /// The bytes SCHC leaves of `d`'s IPv6 and UDP headers: the configured
    /// [`Config::schc_residue`], whatever the datagram (a stand-in for a
    /// real compressor's measured residue).
    pub fn schc_residue_bytes(&self, _d: &Datagram) -> u16 {
        self.schc_residue
    }

    /// The FRMPayload carrying `d`: its CoAP message and the SCHC residue
    /// (the rule ID being FPort).
    pub fn frm_payload(&self, d: &Datagram) -> usize {
        usize::from(d.payload) + usize::from(self.schc_residue_bytes(d))
    }

    /// The LoRa PHY payload carrying `d`: the FRMPayload and LoRaWAN's 13
    /// bytes (MHDR 1, FHDR 7, FPort 1, MIC 4).
    pub fn phy_payload(&self, d: &Datagram) -> usize {
        phy_payload(self.frm_payload(d))
    }

    /// The backhaul's one-way delay.
    pub fn backhaul(&self) -> Nanos {
        self.backhaul_us * 1_000
    }

    /// RX1's and RX2's delays after an uplink's end.
    pub fn rx_delays(&self) -> [Nanos; 2] {
        [self.rx1_delay_s * SECOND, self.rx2_delay_s * SECOND]
    }

    /// How long the network server holds a downlink at most.
    pub fn downlink_ttl(&self) -> Nanos {
        self.downlink_ttl_s * SECOND
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::de::value::{Error, StrDeserializer, U64Deserializer};
    use serde::de::IntoDeserializer;

    fn error(c: Config) -> String {
        c.validate().unwrap_err()
    }

    #[test]
    fn defaults_are_valid() {
        assert_eq!(Config::default().validate(), Ok(()));
    }

    #[test]
    fn errors_name_the_field() {
        let e = error(Config {
            devices: 0,
            ..Config::default()
        });
        assert!(e.starts_with("network.devices:"), "{e}");
        let e = error(Config {
            devices: MAX_DEVICES + 1,
            ..Config::default()
        });
        assert!(
            e.starts_with("network.devices:") && e.contains("100000") && e.contains("one gateway"),
            "{e}"
        );
        for r in [0.0, -5.0, f64::NAN, f64::INFINITY] {
            let e = error(Config {
                radius_m: r,
                ..Config::default()
            });
            assert!(e.starts_with("network.radius_m:"), "{e}");
        }
        let e = error(Config {
            duty_cycle: DutyCycles {
                g1: 1.5,
                ..DutyCycles::default()
            },
            ..Config::default()
        });
        assert!(e.starts_with("network.duty_cycle.g1:"), "{e}");
        let e = error(Config {
            duty_cycle: DutyCycles {
                g3: 0.0,
                ..DutyCycles::default()
            },
            ..Config::default()
        });
        assert!(e.starts_with("network.duty_cycle.g3:"), "{e}");
        let e = error(Config {
            path_loss: PathLoss {
                exponent: -1.0,
                ..PathLoss::default()
            },
            ..Config::default()
        });
        assert!(e.starts_with("network.path_loss.exponent:"), "{e}");
        let cases: [(Config, &str); 8] = [
            (
                Config {
                    reception_paths: 0,
                    ..Config::default()
                },
                "network.reception_paths:",
            ),
            (
                Config {
                    uplink_channels: 4,
                    ..Config::default()
                },
                "network.uplink_channels:",
            ),
            (
                Config {
                    rx1_delay_s: 0,
                    ..Config::default()
                },
                "network.rx1_delay_s:",
            ),
            (
                Config {
                    rx2_delay_s: 1,
                    ..Config::default()
                },
                "network.rx2_delay_s:",
            ),
            (
                Config {
                    device_queue: 0,
                    ..Config::default()
                },
                "network.device_queue:",
            ),
            (
                Config {
                    held_downlinks: 65,
                    ..Config::default()
                },
                "network.held_downlinks:",
            ),
            (
                Config {
                    downlink_ttl_s: 0,
                    ..Config::default()
                },
                "network.downlink_ttl_s:",
            ),
            (
                Config {
                    schc_residue: 49,
                    ..Config::default()
                },
                "network.schc_residue:",
            ),
        ];
        for (c, field) in cases {
            let e = error(c);
            assert!(e.starts_with(field), "{e}");
        }
    }

    #[test]
    fn spreading_factor_reads_distance_or_7_to_12() {
        let s: StrDeserializer<Error> = "distance".into_deserializer();
        assert_eq!(SfAllocation::deserialize(s), Ok(SfAllocation::Distance));
        let n: U64Deserializer<Error> = 9u64.into_deserializer();
        assert_eq!(
            SfAllocation::deserialize(n),
            Ok(SfAllocation::Fixed(Sf::SF9))
        );
        for bad in [6u64, 13, 300] {
            let n: U64Deserializer<Error> = bad.into_deserializer();
            let e = SfAllocation::deserialize(n).unwrap_err().to_string();
            assert!(e.contains(&bad.to_string()) && e.contains("7 to 12"), "{e}");
        }
        let s: StrDeserializer<Error> = "nearest".into_deserializer();
        let e = SfAllocation::deserialize(s).unwrap_err().to_string();
        assert!(
            e.contains("spreading_factor") && e.contains("\"nearest\""),
            "{e}"
        );
    }

    #[test]
    fn frame_sizes_of_a_datagram() {
        let d = Datagram {
            id: 0,
            src: 0,
            dst: 1,
            transport_header: 8,
            payload: 20,
            unnecessary: false,
        };
        let c = Config::default();
        // The UDP header is compressed away: 20 + 1 residue, + 13.
        assert_eq!(c.schc_residue_bytes(&d), 1);
        assert_eq!(c.frm_payload(&d), 21);
        assert_eq!(c.phy_payload(&d), 34);
        assert_eq!(c.rx_delays(), [SECOND, 2 * SECOND]);
        assert_eq!(c.backhaul(), 10_000_000);
    }
}
