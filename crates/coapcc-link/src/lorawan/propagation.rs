//! Path loss, receiver sensitivities and the spreading factor a device gets
//! by its distance to the gateway, with the defaults of the ns-3 `lorawan`
//! module (signetlabdei/lorawan; file names below are in that repository).
//!
//! - Path loss is log-distance, L(d) = L₀ + 10·n·log₁₀(d / d₀), and L₀ below
//!   d₀ (ns-3's `LogDistancePropagationLossModel`). Every example of the
//!   module (`examples/simple-network-example.cc`, `aloha-throughput.cc`,
//!   `complete-network-example.cc`, …) sets n = 3.76 and (d₀, L₀) = (1 m,
//!   7.7 dB), and no shadowing unless asked.
//! - Sensitivities per SF7..SF12 at 125 kHz: the gateway's from the SX1301
//!   datasheet (`model/gateway-lora-phy.cc`), the end device's from the
//!   SX1272 datasheet (`model/end-device-lora-phy.cc`). A frame received
//!   *below* the sensitivity is lost (`model/simple-gateway-lora-phy.cc`
//!   compares `rxPowerDbm < sensitivity`).
//! - Devices send at 14 dBm (`model/end-device-lorawan-mac.cc`, `m_txPower`).
//! - The SF allocation (`helper/lorawan-mac-helper.cc`,
//!   `SetSpreadingFactorsUp`) gives a device the smallest SF whose end-device
//!   sensitivity the power it receives from the gateway at 14 dBm strictly
//!   exceeds, and SF12 to a device out of range of every SF.

use serde::{Deserialize, Serialize};

use super::airtime::Sf;

/// Gateway sensitivity (dBm) per SF7..SF12, 125 kHz (SX1301;
/// `model/gateway-lora-phy.cc`, `GatewayLoraPhy::sensitivity`).
pub const GATEWAY_SENSITIVITY_DBM: [f64; 6] = [-130.0, -132.5, -135.0, -137.5, -140.0, -142.5];

/// End-device sensitivity (dBm) per SF7..SF12, 125 kHz (SX1272;
/// `model/end-device-lora-phy.cc`, `EndDeviceLoraPhy::sensitivity`).
pub const END_DEVICE_SENSITIVITY_DBM: [f64; 6] = [-124.0, -127.0, -130.0, -133.0, -135.0, -137.0];

/// A device's transmit power (dBm): ns-3 `lorawan`'s default
/// (`model/end-device-lorawan-mac.cc`), also the power its SF allocation
/// assumes (`helper/lorawan-mac-helper.cc`).
pub const DEVICE_TX_POWER_DBM: f64 = 14.0;

/// The gateway's sensitivity at `sf`.
pub fn gateway_sensitivity(sf: Sf) -> f64 {
    GATEWAY_SENSITIVITY_DBM[sf.index()]
}

/// An end device's sensitivity at `sf`.
pub fn end_device_sensitivity(sf: Sf) -> f64 {
    END_DEVICE_SENSITIVITY_DBM[sf.index()]
}

/// Log-distance path loss: the `path_loss` table of a LoRaWAN scenario.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PathLoss {
    /// Path-loss exponent n; default 3.76.
    pub exponent: f64,
    /// Reference distance d₀ (m); default 1.
    pub reference_distance_m: f64,
    /// Loss at the reference distance L₀ (dB); default 7.7.
    pub reference_loss_db: f64,
}

impl Default for PathLoss {
    fn default() -> Self {
        PathLoss {
            exponent: 3.76,
            reference_distance_m: 1.0,
            reference_loss_db: 7.7,
        }
    }
}

impl PathLoss {
    /// Checks the parameters; an error names the field, `prefix` being the
    /// table's path (e.g. "network.path_loss").
    pub fn validate(&self, prefix: &str) -> Result<(), String> {
        if !(self.exponent > 0.0 && self.exponent <= 10.0) {
            return Err(format!(
                "{prefix}.exponent: expected a path-loss exponent in (0, 10], not {}",
                self.exponent
            ));
        }
        if !(self.reference_distance_m > 0.0 && self.reference_distance_m <= 1e6) {
            return Err(format!(
                "{prefix}.reference_distance_m: expected a distance in (0, 1e6] m, not {}",
                self.reference_distance_m
            ));
        }
        if !self.reference_loss_db.is_finite() || self.reference_loss_db.abs() > 1e3 {
            return Err(format!(
                "{prefix}.reference_loss_db: expected a loss from -1000 to 1000 dB, not {}",
                self.reference_loss_db
            ));
        }
        Ok(())
    }

    /// The loss (dB) over `distance_m`; L₀ at and below d₀.
    pub fn loss_db(&self, distance_m: f64) -> f64 {
        if distance_m <= self.reference_distance_m {
            return self.reference_loss_db;
        }
        self.reference_loss_db
            + 10.0 * self.exponent * (distance_m / self.reference_distance_m).log10()
    }

    /// The power (dBm) received over `distance_m` from a transmitter at
    /// `tx_dbm`.
    pub fn rx_power_dbm(&self, tx_dbm: f64, distance_m: f64) -> f64 {
        tx_dbm - self.loss_db(distance_m)
    }

    /// The spreading factor of a device at `distance_m` from its gateway
    /// (ns-3 `lorawan`'s allocation; see the module docs).
    pub fn allocate_sf(&self, distance_m: f64) -> Allocation {
        let rx = self.rx_power_dbm(DEVICE_TX_POWER_DBM, distance_m);
        match Sf::ALL
            .into_iter()
            .find(|&sf| rx > end_device_sensitivity(sf))
        {
            Some(sf) => Allocation { sf, in_range: true },
            None => Allocation {
                sf: Sf::SF12,
                in_range: false,
            },
        }
    }
}

/// The outcome of the SF allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Allocation {
    /// The spreading factor given.
    pub sf: Sf,
    /// False: no SF's sensitivity is cleared, and the device got SF12
    /// anyway (as ns-3 does); its frames will mostly be lost.
    pub in_range: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn log_distance_loss_by_hand() {
        let pl = PathLoss::default();
        // d ≤ 1 m: L₀.
        assert_eq!(pl.loss_db(0.5), 7.7);
        assert_eq!(pl.loss_db(1.0), 7.7);
        // 1 km: 7.7 + 37.6 · 3 = 120.5 dB; 14 dBm arrive as −106.5 dBm.
        assert!(close(pl.loss_db(1000.0), 120.5));
        assert!(close(pl.rx_power_dbm(14.0, 1000.0), -106.5));
        // 10 km: 7.7 + 37.6 · 4 = 158.1 dB.
        assert!(close(pl.loss_db(10_000.0), 158.1));
    }

    #[test]
    fn spreading_factor_by_distance() {
        let pl = PathLoss::default();
        // SF7 while 14 − 7.7 − 37.6·log₁₀ d > −124, i.e. d < 10^(130.3/37.6)
        // = 10^3.46543 ≈ 2920.3 m.
        assert_eq!(pl.allocate_sf(1000.0).sf, Sf::SF7);
        assert_eq!(pl.allocate_sf(2900.0).sf, Sf::SF7);
        // 3 km: loss 7.7 + 37.6 · 3.47712 = 138.44 dB, −124.44 dBm > −127: SF8.
        assert_eq!(pl.allocate_sf(3000.0).sf, Sf::SF8);
        // SF12's edge: −137 dBm at d = 10^(143.3/37.6) = 10^3.81117 ≈ 6473.7 m.
        // SF11's: −135 dBm at 10^(141.3/37.6) = 10^3.75798 ≈ 5728.0 m.
        assert_eq!(pl.allocate_sf(5700.0).sf, Sf::SF11);
        let a = pl.allocate_sf(6400.0);
        assert_eq!((a.sf, a.in_range), (Sf::SF12, true));
        // Beyond: SF12, out of range.
        let a = pl.allocate_sf(7000.0);
        assert_eq!((a.sf, a.in_range), (Sf::SF12, false));
    }

    #[test]
    fn sensitivities_per_sf() {
        assert_eq!(gateway_sensitivity(Sf::SF7), -130.0);
        assert_eq!(gateway_sensitivity(Sf::SF12), -142.5);
        assert_eq!(end_device_sensitivity(Sf::SF10), -133.0);
    }

    #[test]
    fn path_loss_checks_name_the_field() {
        assert_eq!(PathLoss::default().validate("network.path_loss"), Ok(()));
        let e = PathLoss {
            exponent: 0.0,
            ..PathLoss::default()
        }
        .validate("network.path_loss")
        .unwrap_err();
        assert!(e.starts_with("network.path_loss.exponent:"), "{e}");
        let e = PathLoss {
            reference_distance_m: f64::NAN,
            ..PathLoss::default()
        }
        .validate("network.path_loss")
        .unwrap_err();
        assert!(
            e.starts_with("network.path_loss.reference_distance_m:"),
            "{e}"
        );
    }
}
