//! Linux-RTO (spec `docs/spec/algorithms-spec.md` §5): the Linux TCP RTO estimator, in the
//! formulation of Betzler's model, used as a CoAP RTO.
//!
//! Strong (unambiguous) samples only. The initial timer of an exchange is
//! dithered as in Default CoAP, uniform in `[RTO, RTO·ACK_RANDOM_FACTOR]`, and
//! backed off by ×2 up to the cap. Before any sample RTO = ACK_TIMEOUT (2 s).

use crate::default::{binary_expire, dithered_start};
use crate::fasor::estimator::sanitize;
use crate::math::{abs, max};
use crate::{Ack, AlgorithmParams, CongestionControl, ExchangeTimer, ParamError, Random};

/// The floor of `mdev_max` (s): Linux's minimum RTO (200 ms) / 4.
pub const MDEV_MAX_FLOOR: f64 = 0.05;

/// The Linux estimator state (meaningless until `sampled`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LinuxEstimator {
    /// Smoothed RTT.
    pub srtt: f64,
    /// Mean deviation.
    pub mdev: f64,
    /// Largest `mdev` since the last sample (reset to the floor after each).
    pub mdev_max: f64,
    /// The variation the RTO uses.
    pub rttvar: f64,
    /// Whether any sample has been taken.
    pub sampled: bool,
}

impl LinuxEstimator {
    /// Feeds one sample (already sanitized); returns the new RTO.
    pub fn update(&mut self, r: f64) -> f64 {
        if !self.sampled {
            self.srtt = r;
            self.mdev = r / 2.0;
            self.mdev_max = max(self.mdev, MDEV_MAX_FLOOR);
            self.rttvar = self.mdev_max;
            self.sampled = true;
        } else {
            self.srtt += (r - self.srtt) / 8.0;
            let err = abs(r - self.srtt);
            self.mdev = if r < self.srtt - self.mdev {
                31.0 / 32.0 * self.mdev + err / 32.0
            } else {
                0.75 * self.mdev + 0.25 * err
            };
            if self.mdev > self.mdev_max {
                self.mdev_max = self.mdev;
                if self.mdev_max > self.rttvar {
                    self.rttvar = self.mdev_max;
                }
            }
            if self.mdev_max < self.rttvar {
                self.rttvar -= (self.rttvar - self.mdev_max) / 4.0;
            }
            self.mdev_max = MDEV_MAX_FLOOR;
        }
        self.srtt + 4.0 * self.rttvar
    }
}

/// Linux-RTO for one destination.
#[derive(Clone, Debug, PartialEq)]
pub struct LinuxRto {
    est: LinuxEstimator,
    rto: f64,
    ack_timeout: f64,
    ack_random_factor: f64,
    cap: f64,
}

impl Default for LinuxRto {
    fn default() -> Self {
        LinuxRto::with(2.0, 1.5, 60.0)
    }
}

impl LinuxRto {
    /// Builds with explicit ACK_TIMEOUT (the RTO before any sample),
    /// ACK_RANDOM_FACTOR and cap.
    pub fn with(ack_timeout: f64, ack_random_factor: f64, cap: f64) -> Self {
        LinuxRto {
            est: LinuxEstimator::default(),
            rto: ack_timeout,
            ack_timeout,
            ack_random_factor,
            cap,
        }
    }

    /// Builds from scenario parameters (`cap`, `ack_timeout`, `ack_random_factor`).
    pub fn from_params(name: &'static str, p: &AlgorithmParams) -> Result<Self, ParamError> {
        p.check(name, &["cap", "ack_timeout", "ack_random_factor"])?;
        Ok(LinuxRto::with(
            p.ack_timeout.unwrap_or(2.0),
            p.ack_random_factor.unwrap_or(1.5),
            p.cap.unwrap_or(60.0),
        ))
    }

    /// The current RTO (undithered).
    pub fn rto(&self) -> f64 {
        self.rto
    }

    /// The estimator.
    pub fn estimator(&self) -> &LinuxEstimator {
        &self.est
    }
}

impl CongestionControl for LinuxRto {
    fn start(&mut self, _now: f64, _outstanding: usize, rng: &mut dyn Random) -> ExchangeTimer {
        dithered_start(self.rto, self.ack_random_factor, self.cap, rng)
    }

    fn expire(&mut self, _now: f64, ex: &mut ExchangeTimer, _rng: &mut dyn Random) {
        binary_expire(ex, self.cap);
    }

    fn on_ack(&mut self, ex: &ExchangeTimer, ack: &Ack) {
        if ex.retransmissions == 0 {
            self.rto = self.est.update(sanitize(ack.elapsed));
        }
    }

    fn reset(&mut self) {
        *self = LinuxRto::with(self.ack_timeout, self.ack_random_factor, self.cap);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{close, Scripted};

    fn ack(a: &mut LinuxRto, n: u8, e: f64) {
        crate::testutil::ack_after(a, n, e);
    }

    #[test]
    fn estimator_against_hand_computed_values() {
        let mut a = LinuxRto::default();
        // First 0.4: SRTT 0.4, mdev 0.2, mdev_max = RTTVAR = 0.2, RTO 1.2.
        ack(&mut a, 0, 0.4);
        assert!(close(a.rto(), 1.2));
        assert!(close(a.estimator().mdev_max, 0.2));
        // 0.6: SRTT 0.425; mdev = 0.75·0.2 + 0.25·0.175 = 0.19375 (≤ mdev_max 0.2,
        // RTTVAR stays 0.2); mdev_max → 0.05; RTO = 0.425 + 0.8 = 1.225.
        ack(&mut a, 0, 0.6);
        let e = *a.estimator();
        assert!(close(e.srtt, 0.425) && close(e.mdev, 0.19375) && close(e.rttvar, 0.2));
        assert!(close(e.mdev_max, 0.05));
        assert!(close(a.rto(), 1.225));
        // 0.4: SRTT 0.421875; mdev = 0.75·0.19375 + 0.25·0.021875 = 0.15078125
        // > mdev_max → mdev_max = 0.15078125 < RTTVAR, so RTTVAR decays by a
        // quarter of the gap: 0.2 − 0.0123046875 = 0.1876953125.
        // RTO = 0.421875 + 4·0.1876953125 = 1.17265625.
        ack(&mut a, 0, 0.4);
        let e = *a.estimator();
        assert!(close(e.srtt, 0.421875) && close(e.mdev, 0.15078125));
        assert!(close(e.rttvar, 0.1876953125));
        assert!(close(a.rto(), 1.17265625));
        // 0.1 (below SRTT − mdev): SRTT = 0.381640625; the 1/32 gain:
        // mdev = 31/32·0.15078125 + |0.1 − 0.381640625|/32 = 0.154870605…
        // > 0.05 → mdev_max = mdev; RTTVAR decays: 0.1876953125 −
        // (0.1876953125 − 0.1548706054688)/4 = 0.1794891357422.
        ack(&mut a, 0, 0.1);
        let e = *a.estimator();
        assert!(close(e.srtt, 0.381640625));
        assert!(close(e.mdev, 31.0 / 32.0 * 0.15078125 + 0.281640625 / 32.0));
        assert!(close(e.rttvar, 0.1794891357421875), "{}", e.rttvar);
        assert!(close(a.rto(), 0.381640625 + 4.0 * 0.1794891357421875));
    }

    #[test]
    fn a_spike_raises_rttvar_to_mdev() {
        let mut a = LinuxRto::default();
        ack(&mut a, 0, 0.4);
        // 2.4: SRTT = 0.65; mdev = 0.75·0.2 + 0.25·1.75 = 0.5875 > mdev_max 0.2 →
        // mdev_max = RTTVAR = 0.5875 (no decay); RTO = 0.65 + 2.35 = 3.0.
        ack(&mut a, 0, 2.4);
        assert!(close(a.estimator().rttvar, 0.5875));
        assert!(close(a.rto(), 3.0));
    }

    #[test]
    fn first_sample_floor_of_mdev_max() {
        let mut a = LinuxRto::default();
        ack(&mut a, 0, 0.02); // mdev 0.01 → mdev_max = RTTVAR = 0.05
        assert!(close(a.rto(), 0.02 + 0.2));
    }

    #[test]
    fn ambiguous_samples_are_ignored() {
        let mut a = LinuxRto::default();
        ack(&mut a, 1, 0.4);
        ack(&mut a, 5, 9.0);
        assert_eq!(a, LinuxRto::default());
    }

    #[test]
    fn dithering_and_backoff_as_default() {
        let mut a = LinuxRto::default();
        assert!(close(
            a.start(0.0, 0, &mut Scripted::new(&[0.0])).initial,
            2.0
        ));
        assert!(close(
            a.start(0.0, 0, &mut Scripted::new(&[1.0])).initial,
            3.0
        ));
        ack(&mut a, 0, 0.4); // RTO 1.2 → [1.2, 1.8]
        let mut r = Scripted::new(&[0.5]);
        let mut ex = a.start(0.0, 0, &mut r);
        assert!(close(ex.initial, 1.5));
        let mut s = [0.0; 7];
        for v in s.iter_mut() {
            a.expire(0.0, &mut ex, &mut r);
            *v = ex.current;
        }
        for (v, e) in s.iter().zip([3.0, 6.0, 12.0, 24.0, 48.0, 60.0, 60.0]) {
            assert!(close(*v, e), "{s:?}");
        }
    }

    #[test]
    fn reset_and_params() {
        let p = AlgorithmParams {
            cap: Some(10.0),
            ack_timeout: Some(1.0),
            ..Default::default()
        };
        let fresh = LinuxRto::from_params("linux-rto", &p).unwrap();
        let mut a = fresh.clone();
        ack(&mut a, 0, 0.4);
        assert_ne!(a, fresh);
        a.reset();
        assert_eq!(a, fresh);
        assert!(close(
            a.start(0.0, 0, &mut Scripted::new(&[0.0])).initial,
            1.0
        ));
        let bad = AlgorithmParams {
            first_sample: Some(crate::FirstSample::InitK4),
            ..Default::default()
        };
        assert!(LinuxRto::from_params("linux-rto", &bad).is_err());
    }
}
