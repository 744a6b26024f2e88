//! Cross-check: with the capture effect off (and no duty cycle), frames of
//! one length on one channel and SF, starting as a Poisson process of
//! offered load G (frames per frame time), are received with probability
//! e^(−2G), the pure-ALOHA vulnerability window of two frame times; the
//! throughput is S = G·e^(−2G).

use super::airtime::{phy_payload, Modulation, Sf};
use super::interference::{fate, Capture, Fate, Transmission};
use super::region::UPLINK_CHANNELS;
use crate::rng::SimRng;
use crate::time::Nanos;

/// Frames drawn per load.
const FRAMES: usize = 200_000;

/// The fraction of `FRAMES` Poisson frames at `sf` (51 application bytes)
/// and offered load `g` that [`fate`] lets through without capture.
fn success_ratio(sf: Sf, g: f64, seed: u64) -> f64 {
    let airtime: Nanos = Modulation::lorawan(sf).time_on_air(phy_payload(51));
    let mean_gap = airtime as f64 / g;
    let mut rng = SimRng::new(seed);
    let mut t = 0.0f64;
    let frames: Vec<Transmission> = (0..FRAMES)
        .map(|_| {
            t += -(1.0 - rng.uniform()).ln() * mean_gap;
            let start = t as Nanos;
            Transmission {
                start,
                end: start + airtime,
                hz: UPLINK_CHANNELS[0].hz,
                sf,
                rx_dbm: -100.0,
            }
        })
        .collect();
    let received = (0..frames.len())
        .filter(|&i| {
            // Frames start in order, so those that can overlap frame i are
            // its neighbours starting less than one frame time away.
            let s = frames[i].start;
            let lo = frames[..i].partition_point(|f| f.start + airtime <= s);
            let hi = i + 1 + frames[i + 1..].partition_point(|f| f.start < s + airtime);
            let others = frames[lo..i].iter().chain(&frames[i + 1..hi]);
            fate(&frames[i], others, Capture::Off, -130.0) == Fate::Received
        })
        .count();
    received as f64 / FRAMES as f64
}

#[test]
fn pure_aloha_without_capture() {
    for (sf, seed) in [(Sf::SF7, 7), (Sf::SF12, 12)] {
        for g in [0.1, 0.5, 1.0] {
            let measured = success_ratio(sf, g, seed);
            let expected = (-2.0 * g).exp();
            let rel = (measured - expected).abs() / expected;
            assert!(
                rel < 0.02,
                "{sf}, G = {g}: success {measured:.5}, e^(-2G) = {expected:.5}, off by {:.2} %",
                rel * 100.0
            );
            // Throughput S = G·e^(−2G), within the same bound.
            let s = g * measured;
            assert!((s - g * expected).abs() / (g * expected) < 0.02);
        }
    }
}
