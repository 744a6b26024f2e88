//! The star's parameters: the `[network]` table of a star scenario, the
//! 802.11 timings derived from them, and their checks.

use serde::{Deserialize, Serialize};

use super::{ACK_BYTES, MAC_OVERHEAD};
use crate::time::{serialisation, Nanos};

/// The star's parameters: the `[network]` table of a scenario with
/// `kind = "star"`. Defaults are `docs/spec/radio-spec.md` §2.2's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// `kind = "star"` in a scenario file.
    #[serde(skip_serializing)]
    pub kind: Kind,
    /// Stations.
    pub stations: u32,
    /// Data and ACK rate (bit/s).
    pub rate_bps: u64,
    /// Slot time (µs).
    pub slot_us: u64,
    /// SIFS (µs).
    pub sifs_us: u64,
    /// PLCP preamble and header (µs).
    pub plcp_us: u64,
    /// Smallest contention window (slots − 1).
    pub cw_min: u32,
    /// Largest contention window.
    pub cw_max: u32,
    /// Retransmissions of a frame before it is dropped.
    pub retry_limit: u32,
    /// Packets per node's queue, the one being sent included.
    pub queue: u32,
    /// Access point ↔ server rate (bit/s).
    pub wired_bps: u64,
    /// Bit-error rate of the channel: each bit of a data frame's MAC frame
    /// (header, LLC/SNAP, IP packet, FCS; not the PLCP preamble and header,
    /// sent at the robust 1 Mbit/s) is in error independently with this
    /// probability, and a frame with an error is not acknowledged. ACK
    /// frames are taken as error-free. 0 (the default): the lossless star
    /// of `docs/spec/radio-spec.md` §2; the lossy reading is in
    /// `docs/calibration.md`, "The lossy star".
    #[serde(skip_serializing_if = "is_zero")]
    pub bit_error_rate: f64,
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

/// The `kind` of a star's `[network]` table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// The Wi-Fi star.
    #[default]
    Star,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            kind: Kind::Star,
            stations: 12,
            rate_bps: 2_000_000,
            slot_us: 20,
            sifs_us: 10,
            plcp_us: 192,
            cw_min: 31,
            cw_max: 1023,
            retry_limit: 7,
            queue: 8,
            wired_bps: 10_000_000,
            bit_error_rate: 0.0,
        }
    }
}

impl Config {
    /// Checks the parameters; errors name the field and what was expected.
    pub fn validate(&self) -> Result<(), String> {
        let check = |ok: bool, what: &str| if ok { Ok(()) } else { Err(what.to_string()) };
        check(
            (1..=1000).contains(&self.stations),
            "network.stations: expected 1 to 1000",
        )?;
        check(
            self.rate_bps >= 1000 && self.wired_bps >= 1000,
            "network.rate_bps, network.wired_bps: expected at least 1000 bit/s",
        )?;
        // 10⁷ s, the bound of every duration, in microseconds.
        const MAX_US: u64 = 10_000_000_000_000;
        check(
            (1..=MAX_US).contains(&self.slot_us)
                && (1..=MAX_US).contains(&self.sifs_us)
                && self.sifs_us < self.slot_us * 100,
            "network.slot_us, network.sifs_us: expected positive times up to 1e13 µs (1e7 s), \
             SIFS below 100 slots",
        )?;
        check(
            self.plcp_us <= MAX_US,
            "network.plcp_us: expected at most 1e13 µs (1e7 s)",
        )?;
        check(
            self.cw_min >= 1 && self.cw_max >= self.cw_min && self.cw_max <= 65_535,
            "network.cw_min, network.cw_max: expected 1 ≤ cw_min ≤ cw_max ≤ 65535",
        )?;
        check(
            self.retry_limit <= 64,
            "network.retry_limit: expected at most 64",
        )?;
        check(
            (1..=4096).contains(&self.queue),
            "network.queue: expected 1 to 4096 packets",
        )?;
        check(
            (0.0..=0.01).contains(&self.bit_error_rate),
            "network.bit_error_rate: expected a probability from 0 to 0.01",
        )
    }

    /// The probability that a data frame carrying an IP packet of `ip_len`
    /// bytes has a bit error: 1 − (1 − BER)^(8·(ip_len + MAC overhead)).
    pub fn frame_error(&self, ip_len: u16) -> f64 {
        let bits = 8.0 * f64::from(ip_len + MAC_OVERHEAD);
        1.0 - (1.0 - self.bit_error_rate).powf(bits)
    }

    /// DIFS = SIFS + 2 slots.
    pub fn difs(&self) -> Nanos {
        (self.sifs_us + 2 * self.slot_us) * 1_000
    }

    /// Slot time.
    pub fn slot(&self) -> Nanos {
        self.slot_us * 1_000
    }

    /// SIFS.
    pub fn sifs(&self) -> Nanos {
        self.sifs_us * 1_000
    }

    /// Airtime of a data frame carrying an IP packet of `ip_len` bytes.
    pub fn data_airtime(&self, ip_len: u16) -> Nanos {
        self.plcp_us * 1_000 + serialisation(usize::from(ip_len + MAC_OVERHEAD), self.rate_bps)
    }

    /// Airtime of an ACK.
    pub fn ack_airtime(&self) -> Nanos {
        self.plcp_us * 1_000 + serialisation(ACK_BYTES, self.rate_bps)
    }

    /// EIFS = SIFS + DIFS + ACK airtime.
    pub fn eifs(&self) -> Nanos {
        self.sifs() + self.difs() + self.ack_airtime()
    }

    /// How long a sender waits for its ACK after its frame: SIFS + slot + ACK.
    pub fn ack_timeout(&self) -> Nanos {
        self.sifs() + self.slot() + self.ack_airtime()
    }
}
