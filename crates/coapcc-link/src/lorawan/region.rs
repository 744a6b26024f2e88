//! The EU868 region: channels, sub-bands and their duty cycles.
//!
//! From the LoRaWAN Regional Parameters (RP002, EU863-870) and ETSI EN 300
//! 220's sub-bands as LoRaWAN's literature names them (and as ns-3 `lorawan`
//! declares them in `helper/lorawan-mac-helper.cc`, `ApplyCommonEuConfigurations`):
//!
//! | sub-band | MHz | duty cycle | max. ERP | used for |
//! | --- | --- | ---: | ---: | --- |
//! | g1 | 868.0–868.6 | 1 % | 14 dBm | the three default uplink channels, RX1 |
//! | g2 | 868.7–869.2 | 0.1 % | 14 dBm | — |
//! | g3 | 869.4–869.65 | 10 % | 27 dBm | RX2 (869.525 MHz, SF12) |
//!
//! A transmitter that sent for t_air on a sub-band with duty cycle dc stays
//! off that sub-band for t_air·(1/dc − 1) after the end of the transmission
//! ([`DutyCycle`]).

use serde::{Deserialize, Serialize};

use super::airtime::Sf;
use crate::time::Nanos;

/// An EU868 sub-band with a duty-cycle limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum SubBand {
    /// 868.0–868.6 MHz, 1 %.
    G1,
    /// 868.7–869.2 MHz, 0.1 %.
    G2,
    /// 869.4–869.65 MHz, 10 %.
    G3,
}

impl SubBand {
    /// All three, by frequency.
    pub const ALL: [SubBand; 3] = [SubBand::G1, SubBand::G2, SubBand::G3];

    /// Its name: "g1", "g2" or "g3".
    pub fn name(self) -> &'static str {
        match self {
            SubBand::G1 => "g1",
            SubBand::G2 => "g2",
            SubBand::G3 => "g3",
        }
    }

    /// The sub-band named `name`; an error names it if there is none.
    pub fn named(name: &str) -> Result<SubBand, String> {
        SubBand::ALL
            .into_iter()
            .find(|b| b.name() == name)
            .ok_or_else(|| {
                format!("sub-band \"{name}\" does not exist in EU868: expected g1, g2 or g3")
            })
    }

    /// Its edges in Hz.
    pub fn range_hz(self) -> (u32, u32) {
        match self {
            SubBand::G1 => (868_000_000, 868_600_000),
            SubBand::G2 => (868_700_000, 869_200_000),
            SubBand::G3 => (869_400_000, 869_650_000),
        }
    }

    /// The sub-band holding the carrier `hz`; an error if none does.
    pub fn of_frequency(hz: u32) -> Result<SubBand, String> {
        SubBand::ALL
            .into_iter()
            .find(|b| {
                let (lo, hi) = b.range_hz();
                (lo..=hi).contains(&hz)
            })
            .ok_or_else(|| {
                format!(
                    "{} MHz is in no EU868 sub-band: expected 868.0–868.6 (g1), 868.7–869.2 (g2) \
                     or 869.4–869.65 (g3)",
                    f64::from(hz) / 1e6
                )
            })
    }

    /// The regulatory duty cycle: 1 %, 0.1 %, 10 %.
    pub fn default_duty_cycle(self) -> f64 {
        match self {
            SubBand::G1 => 0.01,
            SubBand::G2 => 0.001,
            SubBand::G3 => 0.1,
        }
    }

    /// The largest radiated power allowed (dBm); ns-3 `lorawan`'s gateway
    /// sends at it (`model/gateway-lorawan-mac.cc`, `GetTxPowerForChannel`).
    pub fn max_tx_power_dbm(self) -> f64 {
        match self {
            SubBand::G1 | SubBand::G2 => 14.0,
            SubBand::G3 => 27.0,
        }
    }

    /// Its position in per-sub-band tables.
    pub fn index(self) -> usize {
        self as usize
    }
}

impl TryFrom<String> for SubBand {
    type Error = String;
    fn try_from(name: String) -> Result<SubBand, String> {
        SubBand::named(&name)
    }
}

impl From<SubBand> for String {
    fn from(b: SubBand) -> String {
        b.name().to_string()
    }
}

/// A 125 kHz LoRa channel: its carrier and its sub-band.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Channel {
    /// Carrier (Hz).
    pub hz: u32,
    /// The sub-band that holds it.
    pub sub_band: SubBand,
}

/// The three default uplink channels every EU868 device knows (RP002):
/// 868.1, 868.3 and 868.5 MHz, in g1. RX1 answers on the uplink's channel.
pub const UPLINK_CHANNELS: [Channel; 3] = [
    Channel {
        hz: 868_100_000,
        sub_band: SubBand::G1,
    },
    Channel {
        hz: 868_300_000,
        sub_band: SubBand::G1,
    },
    Channel {
        hz: 868_500_000,
        sub_band: SubBand::G1,
    },
];

/// RX2's default channel, 869.525 MHz in g3 (RP002).
pub const RX2_CHANNEL: Channel = Channel {
    hz: 869_525_000,
    sub_band: SubBand::G3,
};

/// RX2's default data rate, DR0 = SF12 (RP002).
pub const RX2_SF: Sf = Sf::SF12;

/// The duty cycle of each sub-band, as fractions: the `duty_cycle` table of
/// a LoRaWAN scenario. 1 switches a sub-band's limit off (no off-time).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DutyCycles {
    /// g1 (uplinks, RX1); default 0.01.
    pub g1: f64,
    /// g2; default 0.001.
    pub g2: f64,
    /// g3 (RX2); default 0.1.
    pub g3: f64,
}

impl Default for DutyCycles {
    fn default() -> Self {
        DutyCycles {
            g1: SubBand::G1.default_duty_cycle(),
            g2: SubBand::G2.default_duty_cycle(),
            g3: SubBand::G3.default_duty_cycle(),
        }
    }
}

impl DutyCycles {
    /// No limit on any sub-band (the pure-ALOHA cross-check).
    pub const OFF: DutyCycles = DutyCycles {
        g1: 1.0,
        g2: 1.0,
        g3: 1.0,
    };

    /// The duty cycle of `band`.
    pub fn of(&self, band: SubBand) -> f64 {
        match band {
            SubBand::G1 => self.g1,
            SubBand::G2 => self.g2,
            SubBand::G3 => self.g3,
        }
    }

    /// Checks that each is in (0, 1]; an error names the field, `prefix`
    /// being the table's path (e.g. "network.duty_cycle").
    pub fn validate(&self, prefix: &str) -> Result<(), String> {
        for band in SubBand::ALL {
            let dc = self.of(band);
            // `!(dc > 0.0)` also refuses NaN.
            if !(dc > 0.0 && dc <= 1.0) {
                return Err(format!(
                    "{prefix}.{}: a duty cycle is a fraction in (0, 1] (0.01 is 1 %), not {dc}",
                    band.name()
                ));
            }
        }
        Ok(())
    }
}

/// The off-time after a transmission of `airtime` on a sub-band with duty
/// cycle `dc`: airtime·(1/dc − 1), to the nearest nanosecond.
pub fn off_time(airtime: Nanos, dc: f64) -> Nanos {
    crate::time::round_nonneg(airtime as f64 / dc).saturating_sub(airtime)
}

/// One transmitter's duty-cycle state (a device or the gateway): when it may
/// next use each sub-band.
#[derive(Clone, Debug, PartialEq)]
pub struct DutyCycle {
    limits: DutyCycles,
    free_at: [Nanos; 3],
}

impl DutyCycle {
    /// A transmitter that has not sent yet, under `limits`.
    pub fn new(limits: DutyCycles) -> Self {
        DutyCycle {
            limits,
            free_at: [0; 3],
        }
    }

    /// When its off-time on `band` ends (0 before its first transmission).
    pub fn free_at(&self, band: SubBand) -> Nanos {
        self.free_at[band.index()]
    }

    /// The earliest time from `now` at which it may transmit on `band`.
    pub fn earliest(&self, band: SubBand, now: Nanos) -> Nanos {
        now.max(self.free_at(band))
    }

    /// Whether it may start a transmission on `band` at `at`.
    pub fn allows(&self, band: SubBand, at: Nanos) -> bool {
        at >= self.free_at(band)
    }

    /// Records a transmission on `band` from `start` lasting `airtime`;
    /// returns when its off-time ends: start + airtime + airtime·(1/dc − 1).
    /// `start` must be allowed ([`DutyCycle::allows`]).
    pub fn record(&mut self, band: SubBand, start: Nanos, airtime: Nanos) -> Nanos {
        debug_assert!(
            self.allows(band, start),
            "a transmission on {} at {start} ns breaks its duty cycle (free at {} ns)",
            band.name(),
            self.free_at(band)
        );
        let free = start + airtime + off_time(airtime, self.limits.of(band));
        self.free_at[band.index()] = free;
        free
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::SECOND;

    #[test]
    fn channels_lie_in_their_sub_bands() {
        for ch in UPLINK_CHANNELS.iter().chain([&RX2_CHANNEL]) {
            assert_eq!(SubBand::of_frequency(ch.hz), Ok(ch.sub_band));
        }
        assert_eq!(SubBand::of_frequency(868_100_000), Ok(SubBand::G1));
        assert_eq!(SubBand::of_frequency(869_525_000), Ok(SubBand::G3));
        let e = SubBand::of_frequency(868_650_000).unwrap_err();
        assert!(e.contains("868.65 MHz"), "{e}");
        assert_eq!(RX2_SF, Sf::SF12);
    }

    #[test]
    fn sub_bands_by_name() {
        assert_eq!(SubBand::named("g3"), Ok(SubBand::G3));
        let e = SubBand::named("g4").unwrap_err();
        assert!(e.contains("\"g4\"") && e.contains("g1, g2 or g3"), "{e}");
        assert_eq!(SubBand::G3.max_tx_power_dbm(), 27.0);
        assert_eq!(SubBand::G1.max_tx_power_dbm(), 14.0);
    }

    #[test]
    fn duty_cycle_checks_name_the_field() {
        assert_eq!(DutyCycles::default().validate("network.duty_cycle"), Ok(()));
        assert_eq!(DutyCycles::OFF.validate("network.duty_cycle"), Ok(()));
        for bad in [0.0, -0.01, 1.01, f64::NAN] {
            let dc = DutyCycles {
                g3: bad,
                ..DutyCycles::default()
            };
            let e = dc.validate("network.duty_cycle").unwrap_err();
            assert!(
                e.starts_with("network.duty_cycle.g3:") && e.contains("(0, 1]"),
                "{e}"
            );
        }
    }

    #[test]
    fn off_times_by_hand() {
        // 1 %: 102.656 ms on air → 99 × 102.656 = 10 162.944 ms off.
        assert_eq!(off_time(102_656_000, 0.01), 10_162_944_000);
        // 10 %: 1155.072 ms on air (SF12, RX2) → 9 × 1155.072 = 10 395.648 ms off.
        assert_eq!(off_time(1_155_072_000, 0.1), 10_395_648_000);
        // 100 %: none.
        assert_eq!(off_time(1_155_072_000, 1.0), 0);
    }

    #[test]
    fn a_transmitter_waits_out_its_off_time_per_sub_band() {
        let mut dc = DutyCycle::new(DutyCycles::default());
        assert_eq!(dc.earliest(SubBand::G1, 5 * SECOND), 5 * SECOND);
        // SF7, 51 bytes at t = 1 s: ends at 1.102656 s, off until
        // 1.102656 + 10.162944 = 11.2656 s (= 1 s + 100 × airtime).
        let free = dc.record(SubBand::G1, SECOND, 102_656_000);
        assert_eq!(free, 11_265_600_000);
        assert!(!dc.allows(SubBand::G1, 11_265_599_999));
        assert!(dc.allows(SubBand::G1, 11_265_600_000));
        assert_eq!(dc.earliest(SubBand::G1, 2 * SECOND), 11_265_600_000);
        assert_eq!(dc.earliest(SubBand::G1, 20 * SECOND), 20 * SECOND);
        // g3 is untouched.
        assert!(dc.allows(SubBand::G3, 2 * SECOND));
        // Without limits a transmitter may send again once it has finished.
        let mut off = DutyCycle::new(DutyCycles::OFF);
        assert_eq!(off.record(SubBand::G1, SECOND, 102_656_000), 1_102_656_000);
    }

    #[test]
    fn scenario_values_convert_through_the_checks() {
        // Serde reads a sub-band and a spreading factor through these.
        assert_eq!(SubBand::try_from("g1".to_string()), Ok(SubBand::G1));
        assert!(SubBand::try_from("G1".to_string()).is_err());
        assert_eq!(String::from(SubBand::G3), "g3");
        assert_eq!(Sf::try_from(9u8), Ok(Sf::SF9));
        assert!(Sf::try_from(13u8).unwrap_err().contains("13"));
    }
}
