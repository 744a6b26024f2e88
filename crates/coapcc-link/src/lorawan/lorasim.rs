//! LoRaSim's experiment 4 on this model: the cross-check of *Do LoRa
//! Low-Power Wide-Area Networks Scale?* (Bor, Roedig, Voigt, Alonso, MSWiM
//! 2016), whose simulator LoRaSim runs unconfirmed uplinks only.
//!
//! Experiment 4 puts every device at LoRaWAN's slowest setting (SF12,
//! 125 kHz, CR 4/5) on one frequency, each sending a 20-byte PHY payload
//! after an exponentially distributed wait (mean `mean_interval_s`) that
//! starts when its previous frame ends; with LoRaSim's simple collision
//! rule (any overlap on the same frequency and SF destroys both frames) and
//! no duty cycle. The same settings here: [`Config`] with one uplink
//! channel, SF12 for all, [`Capture::Off`], the duty cycles off, devices
//! within 100 m (all in range), no SCHC residue and 7 bytes of payload
//! (13 + 7 = 20). What differs is the model's own: a class-A device waits
//! for its two receive windows (about 2.26 s) before it may send again, so
//! a frame drawn inside them is sent late (1 time in about 440 at a mean of
//! 1000 s).
//!
//! [`run`] reports the data extraction rate (DER: frames received over
//! frames sent), LoRaSim's measure; `coapcc bench --network lorawan` prints
//! it beside LoRaSim's own run when given LoRaSim's script.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::{Capture, Config, DutyCycles, Lorawan, SfAllocation};
use crate::lorawan::airtime::Sf;
use crate::rng::{derive, SimRng, Stream};
use crate::{Datagram, Network, Output};

/// LoRaSim's payload: 20 PHY bytes, 13 of LoRaWAN overhead.
pub const PAYLOAD: u16 = 7;

/// One LoRaSim experiment-4 setting.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Experiment {
    /// Devices.
    pub devices: u32,
    /// Mean of the exponential wait between a frame's end and the next (s).
    pub mean_interval_s: f64,
    /// Simulated time (s).
    pub duration_s: f64,
}

/// What a run gave.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Outcome {
    /// Frames sent.
    pub sent: u64,
    /// Frames received at the gateway (delivered to the server).
    pub received: u64,
    /// Events the model handled.
    pub events: u64,
}

impl Outcome {
    /// The data extraction rate, `received / sent`.
    pub fn der(&self) -> f64 {
        self.received as f64 / self.sent.max(1) as f64
    }
}

/// The model's settings for LoRaSim's experiment 4 with `devices`.
pub fn config(devices: u32) -> Config {
    Config {
        devices,
        radius_m: 100.0,
        spreading_factor: SfAllocation::Fixed(Sf::SF12),
        duty_cycle: DutyCycles::OFF,
        capture: Capture::Off,
        uplink_channels: 1,
        schc_residue: 0,
        ..Config::default()
    }
}

/// Pure ALOHA's success probability for `e`: the offered load of a device
/// is `airtime / (mean + airtime)`, `G` the devices' sum, and a frame
/// survives with `e^(−2G)`.
pub fn aloha(e: &Experiment) -> f64 {
    let airtime = airtime_s();
    let g = f64::from(e.devices) * airtime / (e.mean_interval_s + airtime);
    (-2.0 * g).exp()
}

/// The frame's time on air (s): 20 bytes at SF12, 125 kHz, CR 4/5.
pub fn airtime_s() -> f64 {
    use crate::lorawan::airtime::{phy_payload, Modulation};
    let ns = Modulation::lorawan(Sf::SF12).time_on_air(phy_payload(usize::from(PAYLOAD)));
    ns as f64 / 1e9
}

/// Runs `e` on the model with `seed`. Frames still in flight at the end
/// are not counted as sent (LoRaSim counts a frame when it starts; the
/// difference is a handful of frames).
pub fn run(e: &Experiment, seed: u64) -> Result<Outcome, String> {
    let cfg = config(e.devices);
    let mut net = Lorawan::new(&cfg, seed)?;
    let server = net.server();
    let end = (e.duration_s * 1e9) as u64;
    let airtime = (airtime_s() * 1e9) as u64;
    let mut draws: Vec<SimRng> = (0..e.devices)
        .map(|i| SimRng::new(derive(seed, Stream::Workload, u64::from(i))))
        .collect();
    let mut wait = |i: u32| -> u64 {
        let u = draws[i as usize].uniform();
        (-(1.0 - u).ln() * e.mean_interval_s * 1e9) as u64
    };
    let mut next: BinaryHeap<Reverse<(u64, u32)>> =
        (0..e.devices).map(|i| Reverse((wait(i), i))).collect();
    let mut out = Outcome::default();
    let mut id = 0u32;
    loop {
        let send_at = next.peek().map(|Reverse((t, _))| *t).filter(|&t| t < end);
        let wake = net.next_wakeup().filter(|&t| t < end);
        match (send_at, wake) {
            (Some(t), w) if w.is_none_or(|w| t < w) => {
                let Reverse((_, dev)) = next.pop().expect("peeked");
                let d = Datagram {
                    id,
                    src: dev,
                    dst: server,
                    transport_header: 8,
                    payload: PAYLOAD,
                    unnecessary: false,
                };
                id = id.wrapping_add(1);
                out.sent += 1;
                // A device's queue is full only if its last frame waits: not
                // counted as received, as a LoRaSim frame never is then.
                let _ = net.send(t, d);
                next.push(Reverse((t + airtime + wait(dev), dev)));
            }
            (_, Some(w)) => {
                if let Some((_, Some(Output::Delivered { .. }))) = net.poll(w) {
                    out.received += 1;
                }
            }
            _ => break,
        }
    }
    // Frames still on the air at the end: neither received nor lost yet.
    out.sent -= net.in_flight();
    out.events = net.events();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_frame_is_lorasims_1318_912_ms() {
        // 20 bytes at SF12/125 kHz/CR 4/5, low-data-rate optimisation on:
        // 8 + ceil((160 − 48 + 28 + 16) / 40)·5 = 28 payload symbols and
        // 12.25 of preamble, 40.25 × 32.768 ms.
        assert!((airtime_s() - 1.318912).abs() < 1e-12);
    }

    /// The model on experiment 4 follows pure ALOHA (LoRaSim's own runs,
    /// in docs/lorawan.md, do too), within 0.02 of e^(−2G).
    #[test]
    fn experiment_4_follows_pure_aloha() {
        for devices in [100, 500] {
            let e = Experiment {
                devices,
                mean_interval_s: 1000.0,
                duration_s: 50_000.0,
            };
            let o = run(&e, 7).unwrap();
            assert!(o.sent > u64::from(devices) * 45, "{o:?}");
            assert!(
                (o.der() - aloha(&e)).abs() < 0.02,
                "{devices}: {o:?} {}",
                aloha(&e)
            );
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_run() {
        let e = Experiment {
            devices: 50,
            mean_interval_s: 200.0,
            duration_s: 5_000.0,
        };
        assert_eq!(run(&e, 3).unwrap(), run(&e, 3).unwrap());
        assert_ne!(run(&e, 3).unwrap(), run(&e, 4).unwrap());
    }
}
