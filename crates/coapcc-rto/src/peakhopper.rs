//! Peak-Hopper (spec `docs/spec/algorithms-spec.md` §5), used as a CoAP RTO.
//!
//! On each strong sample R, with the previous sample `R_p`:
//! `Δ = |R − R_p| / R`, `B = min(max(2Δ, (1 − 1/24)·B), 1)`,
//! `RTO = max((1 − 1/24)·RTO, (1 + B)·max(R, R_p), max(R, R_p) + 2·0.05)`;
//! the first sample gives `RTO = 1.75·R`. Strong samples only, binary backoff,
//! initial timer dithered as in Default CoAP (uniform in `[RTO, 1.5·RTO]`),
//! RTO = ACK_TIMEOUT (2 s) before any sample.

use crate::default::{binary_expire, dithered_start};
use crate::fasor::estimator::sanitize;
use crate::math::{abs, max, min};
use crate::{Ack, AlgorithmParams, CongestionControl, ExchangeTimer, ParamError, Random};

/// Per-sample decay of the RTO and of the booster B.
pub const DECAY: f64 = 1.0 - 1.0 / 24.0;
/// The additive margin `2·0.05` over the larger of the last two samples (s).
pub const MARGIN: f64 = 2.0 * 0.05;

/// Peak-Hopper for one destination.
#[derive(Clone, Debug, PartialEq)]
pub struct PeakHopper {
    rto: f64,
    /// The booster B (0 until two samples were seen).
    boost: f64,
    /// The previous sample; 0 before any.
    prev: f64,
    ack_timeout: f64,
    ack_random_factor: f64,
    cap: f64,
}

impl Default for PeakHopper {
    fn default() -> Self {
        PeakHopper::with(2.0, 1.5, 60.0)
    }
}

impl PeakHopper {
    /// Builds with explicit ACK_TIMEOUT (RTO before any sample),
    /// ACK_RANDOM_FACTOR and cap.
    pub fn with(ack_timeout: f64, ack_random_factor: f64, cap: f64) -> Self {
        PeakHopper {
            rto: ack_timeout,
            boost: 0.0,
            prev: 0.0,
            ack_timeout,
            ack_random_factor,
            cap,
        }
    }

    /// Builds from scenario parameters (`cap`, `ack_timeout`, `ack_random_factor`).
    pub fn from_params(name: &'static str, p: &AlgorithmParams) -> Result<Self, ParamError> {
        p.check(name, &["cap", "ack_timeout", "ack_random_factor"])?;
        Ok(PeakHopper::with(
            p.ack_timeout.unwrap_or(2.0),
            p.ack_random_factor.unwrap_or(1.5),
            p.cap.unwrap_or(60.0),
        ))
    }

    /// The current RTO (undithered).
    pub fn rto(&self) -> f64 {
        self.rto
    }

    /// The booster B.
    pub fn boost(&self) -> f64 {
        self.boost
    }

    /// Feeds one sample (already sanitized).
    pub fn update(&mut self, r: f64) {
        if self.prev == 0.0 {
            self.rto = 1.75 * r;
        } else {
            let delta = abs(r - self.prev) / r;
            self.boost = min(max(2.0 * delta, DECAY * self.boost), 1.0);
            let peak = max(r, self.prev);
            self.rto = max(
                max(DECAY * self.rto, (1.0 + self.boost) * peak),
                peak + MARGIN,
            );
        }
        self.prev = r;
    }
}

impl CongestionControl for PeakHopper {
    fn start(&mut self, _now: f64, _outstanding: usize, rng: &mut dyn Random) -> ExchangeTimer {
        dithered_start(self.rto, self.ack_random_factor, self.cap, rng)
    }

    fn expire(&mut self, _now: f64, ex: &mut ExchangeTimer, _rng: &mut dyn Random) {
        binary_expire(ex, self.cap);
    }

    fn on_ack(&mut self, ex: &ExchangeTimer, ack: &Ack) {
        if ex.retransmissions == 0 {
            self.update(sanitize(ack.elapsed));
        }
    }

    fn reset(&mut self) {
        *self = PeakHopper::with(self.ack_timeout, self.ack_random_factor, self.cap);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{close, Scripted};

    fn ack(a: &mut PeakHopper, n: u8, e: f64) {
        crate::testutil::ack_after(a, n, e);
    }

    #[test]
    fn estimator_against_hand_computed_values() {
        let mut a = PeakHopper::default();
        ack(&mut a, 0, 0.4);
        assert!(close(a.rto(), 0.7) && close(a.boost(), 0.0));
        // 0.5: Δ = 0.2, B = 0.4; RTO = max(0.7·23/24, 1.4·0.5, 0.6) = 0.7.
        ack(&mut a, 0, 0.5);
        assert!(close(a.boost(), 0.4) && close(a.rto(), 0.7));
        // 0.2: Δ = 1.5, B = min(3, 1) = 1; RTO = max(0.67083, 2·0.5, 0.6) = 1.0.
        ack(&mut a, 0, 0.2);
        assert!(close(a.boost(), 1.0) && close(a.rto(), 1.0));
        // 0.2 again: Δ = 0, B = 23/24; RTO = max(23/24, (47/24)·0.2, 0.3) = 23/24.
        ack(&mut a, 0, 0.2);
        assert!(close(a.boost(), 23.0 / 24.0) && close(a.rto(), 23.0 / 24.0));
        // Steady 0.2 decays RTO by 23/24 per sample down to (1 + B)·0.2 or 0.3.
        for _ in 0..200 {
            ack(&mut a, 0, 0.2);
        }
        assert!(close(a.rto(), 0.3), "{}", a.rto());
    }

    #[test]
    fn ambiguous_samples_are_ignored() {
        let mut a = PeakHopper::default();
        ack(&mut a, 2, 0.4);
        assert_eq!(a, PeakHopper::default());
    }

    #[test]
    fn dithering_backoff_cap_reset() {
        let p = AlgorithmParams {
            cap: Some(5.0),
            ..Default::default()
        };
        let fresh = PeakHopper::from_params("peakhopper", &p).unwrap();
        let mut a = fresh.clone();
        assert!(close(
            a.start(0.0, 0, &mut Scripted::new(&[1.0])).initial,
            3.0
        ));
        ack(&mut a, 0, 0.4); // RTO 0.7 → [0.7, 1.05]
        let mut r = Scripted::new(&[0.0]);
        let mut ex = a.start(0.0, 0, &mut r);
        assert!(close(ex.initial, 0.7));
        for expect in [1.4, 2.8, 5.0, 5.0] {
            a.expire(0.0, &mut ex, &mut r);
            assert!(close(ex.current, expect));
        }
        a.reset();
        assert_eq!(a, fresh);
    }
}
