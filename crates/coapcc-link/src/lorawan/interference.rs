//! Whether a LoRa reception survives the transmissions that overlap it, as
//! ns-3 `lorawan`'s interference helper decides it
//! (`model/lora-interference-helper.cc`, `IsDestroyedByInterference`):
//!
//! 1. a frame that arrives below the receiver's sensitivity at its SF is
//!    lost (`model/simple-gateway-lora-phy.cc`: strictly below);
//! 2. only transmissions on the same carrier interfere (no inter-channel
//!    interference);
//! 3. the interferers' energy over their overlap with the wanted frame is
//!    summed per spreading factor; for each SF, SF7 first, the wanted frame's
//!    whole energy (power × duration) must exceed that sum by the isolation
//!    the table asks for the pair (wanted SF, interferer SF) in dB, or the
//!    frame is lost to that SF.
//!
//! The table ([`GOURSAUD_ISOLATION_DB`]) is the co-channel rejection of
//! A. Goursaud and J.-M. Gorce, *Dedicated networks for IoT: PHY/MAC state
//! of the art and challenges* (EAI Endorsed Transactions on IoT, 2015),
//! with its signs inverted to read as the signal-to-interference ratio a
//! frame needs, as ns-3 keeps it (`collisionSnirGoursaud`): 6 dB against
//! its own SF (the capture threshold), −16 to −36 dB against the others.
//! [`Capture::Off`] is ns-3's `collisionSnirAloha`: any overlap with the
//! same SF destroys the frame, other SFs never do.

use serde::{Deserialize, Serialize};

use super::airtime::Sf;
use crate::time::Nanos;

/// Signal-to-interference ratio (dB) a frame at the row's SF needs to
/// survive the summed interference of the column's SF, SF7..SF12 (Goursaud
/// and Gorce's table as ns-3 `lorawan` holds it,
/// `model/lora-interference-helper.cc`, `collisionSnirGoursaud`).
pub const GOURSAUD_ISOLATION_DB: [[f64; 6]; 6] = [
    // SF7   SF8    SF9    SF10   SF11   SF12 (interferer)
    [6.0, -16.0, -18.0, -19.0, -19.0, -20.0], // SF7 wanted
    [-24.0, 6.0, -20.0, -22.0, -22.0, -22.0], // SF8
    [-27.0, -27.0, 6.0, -23.0, -25.0, -25.0], // SF9
    [-30.0, -30.0, -30.0, 6.0, -26.0, -28.0], // SF10
    [-33.0, -33.0, -33.0, -33.0, 6.0, -29.0], // SF11
    [-36.0, -36.0, -36.0, -36.0, -36.0, 6.0], // SF12
];

/// How frames that overlap in time and channel treat each other.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Capture {
    /// The capture effect and inter-SF isolation of
    /// [`GOURSAUD_ISOLATION_DB`] (ns-3 `lorawan`'s default).
    #[default]
    Goursaud,
    /// No capture: any same-channel, same-SF overlap destroys the frame;
    /// other SFs do not interfere (pure ALOHA per SF).
    Off,
}

/// One frame on the air as a receiver hears it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Transmission {
    /// When its first symbol arrives.
    pub start: Nanos,
    /// When its last symbol has arrived (start + time on air).
    pub end: Nanos,
    /// Carrier (Hz).
    pub hz: u32,
    /// Spreading factor.
    pub sf: Sf,
    /// Power received (dBm).
    pub rx_dbm: f64,
}

impl Transmission {
    /// How long it overlaps `other` (0 if they do not).
    pub fn overlap(&self, other: &Transmission) -> Nanos {
        self.end
            .min(other.end)
            .saturating_sub(self.start.max(other.start))
    }
}

/// What became of a reception.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    /// Received intact.
    Received,
    /// Below the receiver's sensitivity at its SF.
    BelowSensitivity,
    /// Destroyed by the interference of frames at this SF.
    Interference(Sf),
}

/// dBm → mW.
fn milliwatts(dbm: f64) -> f64 {
    10f64.powf(dbm / 10.0)
}

/// The fate of `wanted` at a receiver with `sensitivity_dbm` at its SF,
/// given `others`: every other frame the receiver hears (those on other
/// carriers or not overlapping are ignored; `wanted` itself must not be
/// among them).
pub fn fate<'a>(
    wanted: &Transmission,
    others: impl IntoIterator<Item = &'a Transmission>,
    capture: Capture,
    sensitivity_dbm: f64,
) -> Fate {
    if wanted.rx_dbm < sensitivity_dbm {
        return Fate::BelowSensitivity;
    }
    // Interference energy per interferer SF, in mW·ns.
    let mut energy = [0.0f64; 6];
    for other in others {
        let overlap = wanted.overlap(other);
        if other.hz == wanted.hz && overlap > 0 {
            energy[other.sf.index()] += overlap as f64 * milliwatts(other.rx_dbm);
        }
    }
    let signal = (wanted.end - wanted.start) as f64 * milliwatts(wanted.rx_dbm);
    for sf in Sf::ALL {
        let e = energy[sf.index()];
        if e == 0.0 {
            continue;
        }
        let lost = match capture {
            Capture::Off => sf == wanted.sf,
            Capture::Goursaud => {
                let sir_db = 10.0 * (signal / e).log10();
                sir_db < GOURSAUD_ISOLATION_DB[wanted.sf.index()][sf.index()]
            }
        };
        if lost {
            return Fate::Interference(sf);
        }
    }
    Fate::Received
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;
    const CH: u32 = 868_100_000;

    fn tx(start_ms: u64, len_ms: u64, sf: Sf, rx_dbm: f64) -> Transmission {
        Transmission {
            start: start_ms * MS,
            end: (start_ms + len_ms) * MS,
            hz: CH,
            sf,
            rx_dbm,
        }
    }

    fn goursaud(wanted: &Transmission, others: &[Transmission]) -> Fate {
        fate(wanted, others, Capture::Goursaud, -130.0)
    }

    #[test]
    fn alone_or_below_sensitivity() {
        let w = tx(0, 100, Sf::SF7, -129.0);
        assert_eq!(goursaud(&w, &[]), Fate::Received);
        // Exactly at the sensitivity still received; below lost.
        assert_eq!(fate(&w, &[], Capture::Goursaud, -129.0), Fate::Received);
        assert_eq!(
            fate(&w, &[], Capture::Goursaud, -128.9),
            Fate::BelowSensitivity
        );
    }

    #[test]
    fn co_sf_capture_needs_six_db() {
        let w = tx(0, 100, Sf::SF7, -100.0);
        // Full overlap, 7 dB weaker: survives; 5 dB weaker: lost.
        assert_eq!(goursaud(&w, &[tx(0, 100, Sf::SF7, -107.0)]), Fate::Received);
        assert_eq!(
            goursaud(&w, &[tx(0, 100, Sf::SF7, -105.0)]),
            Fate::Interference(Sf::SF7)
        );
        // Equal power over 20 % of the frame: 10·log₁₀(1/0.2) = 6.99 dB ≥ 6,
        // survives; over 30 %: 5.23 dB < 6, lost.
        assert_eq!(
            goursaud(&w, &[tx(80, 100, Sf::SF7, -100.0)]),
            Fate::Received
        );
        assert_eq!(
            goursaud(&w, &[tx(70, 100, Sf::SF7, -100.0)]),
            Fate::Interference(Sf::SF7)
        );
        // Two interferers, each 8 dB weaker over the whole frame, sum to
        // 10·log₁₀(2) = 3.01 dB more: 4.99 dB < 6, lost.
        let two = [tx(0, 100, Sf::SF7, -108.0), tx(0, 100, Sf::SF7, -108.0)];
        assert_eq!(goursaud(&w, &two), Fate::Interference(Sf::SF7));
        assert_eq!(goursaud(&w, &two[..1]), Fate::Received);
    }

    #[test]
    fn other_channels_and_touching_frames_do_not_interfere() {
        let w = tx(0, 100, Sf::SF7, -100.0);
        let mut strong = tx(0, 100, Sf::SF7, -60.0);
        strong.hz = 868_300_000;
        assert_eq!(goursaud(&w, &[strong]), Fate::Received);
        // Back to back: no overlap.
        assert_eq!(
            goursaud(
                &w,
                &[tx(100, 100, Sf::SF7, -60.0), tx(0, 0, Sf::SF7, -60.0)]
            ),
            Fate::Received
        );
    }

    #[test]
    fn inter_sf_isolation_from_the_table() {
        // Wanted SF12 at −130 dBm under a whole-frame SF7 interferer:
        // needs SIR ≥ −36 dB. At −100 dBm (−30 dB) survives; at −90 (−40) lost.
        let w = tx(0, 1000, Sf::SF12, -130.0);
        assert_eq!(
            goursaud(&w, &[tx(0, 1000, Sf::SF7, -100.0)]),
            Fate::Received
        );
        assert_eq!(
            goursaud(&w, &[tx(0, 1000, Sf::SF7, -90.0)]),
            Fate::Interference(Sf::SF7)
        );
        // Wanted SF7 at −120 dBm inside an SF12 frame: needs ≥ −20 dB.
        // At −101 dBm (−19 dB) survives; at −99 (−21 dB) lost.
        let w = tx(100, 100, Sf::SF7, -120.0);
        assert_eq!(
            goursaud(&w, &[tx(0, 1000, Sf::SF12, -101.0)]),
            Fate::Received
        );
        assert_eq!(
            goursaud(&w, &[tx(0, 1000, Sf::SF12, -99.0)]),
            Fate::Interference(Sf::SF12)
        );
        // The table's diagonal is the 6 dB capture threshold.
        for sf in Sf::ALL {
            assert_eq!(GOURSAUD_ISOLATION_DB[sf.index()][sf.index()], 6.0);
        }
    }

    #[test]
    fn without_capture_any_same_sf_overlap_destroys() {
        let w = tx(0, 100, Sf::SF7, -80.0);
        let weak = tx(99, 100, Sf::SF7, -125.0);
        assert_eq!(goursaud(&w, &[weak]), Fate::Received);
        assert_eq!(
            fate(&w, &[weak], Capture::Off, -130.0),
            Fate::Interference(Sf::SF7)
        );
        // Other SFs never interfere without capture.
        let strong_other = tx(0, 100, Sf::SF8, -40.0);
        assert_eq!(
            fate(&w, &[strong_other], Capture::Off, -130.0),
            Fate::Received
        );
    }
}
