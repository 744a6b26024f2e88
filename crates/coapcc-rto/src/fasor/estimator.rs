//! FASOR's FastRTO estimator (spec `docs/spec/algorithms-spec.md` §6.1) and its dither (§6.2).
//!
//! RFC 6298 (α = 1/8, β = 1/4, K = 4) fed with unambiguous samples only (and,
//! for FASOR+Token/Option, with precise echoed samples), no clock-granularity
//! term, no 1 s floor, initial value 2 s. The first sample follows one of three
//! rules ([`FirstSample`]).

use crate::math::abs;
use crate::{FirstSample, Random};

/// FastRTO before any sample (s).
pub const INITIAL_FAST_RTO: f64 = 2.0;

/// The SRTT the dither uses before any sample (§6.2): 2/3 s, so that the very
/// first timer lies in `[2 + 1/6, 2 + 2/3]`.
pub const UNSAMPLED_SRTT: f64 = 2.0 / 3.0;

/// The smallest RTT sample accepted (s). No real path is this fast; clamping
/// keeps a zero or negative sample (a clock that did not advance) from producing
/// a zero timer.
pub const MIN_SAMPLE: f64 = 1e-6;

/// The largest RTT sample accepted (s); keeps arithmetic finite. Timers are
/// capped far below this anyway.
pub const MAX_SAMPLE: f64 = 1e9;

/// Clamps a measured sample into `[MIN_SAMPLE, MAX_SAMPLE]` (NaN → `MIN_SAMPLE`).
#[inline]
pub fn sanitize(r: f64) -> f64 {
    if r >= MIN_SAMPLE {
        if r <= MAX_SAMPLE {
            r
        } else {
            MAX_SAMPLE
        }
    } else {
        MIN_SAMPLE
    }
}

/// RFC 6298 state of FastRTO.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FastRto {
    /// Smoothed RTT (meaningless until `sampled`).
    pub srtt: f64,
    /// RTT variation (meaningless until `sampled`).
    pub rttvar: f64,
    /// The current FastRTO (s).
    pub rto: f64,
    /// Whether any sample has been taken.
    pub sampled: bool,
}

impl Default for FastRto {
    fn default() -> Self {
        FastRto::new()
    }
}

impl FastRto {
    /// The estimator of an unknown destination: FastRTO = 2 s.
    pub const fn new() -> Self {
        FastRto {
            srtt: 0.0,
            rttvar: 0.0,
            rto: INITIAL_FAST_RTO,
            sampled: false,
        }
    }

    /// Feeds one RTT sample `r` (already sanitized).
    pub fn update(&mut self, r: f64, first: FirstSample) {
        if !self.sampled {
            let (rttvar, k) = match first {
                FirstSample::Draft => (r / 8.0, 4.0),
                FirstSample::Pseudocode => (r / 2.0, 1.0),
                FirstSample::InitK4 => (r / 2.0, 4.0),
            };
            self.srtt = r;
            self.rttvar = rttvar;
            self.rto = r + k * rttvar;
            self.sampled = true;
        } else {
            self.rttvar = 0.75 * self.rttvar + 0.25 * abs(self.srtt - r);
            self.srtt = 0.875 * self.srtt + 0.125 * r;
            self.rto = self.srtt + 4.0 * self.rttvar;
        }
    }

    /// The SRTT the dither is based on (2/3 before any sample).
    pub fn dither_srtt(&self) -> f64 {
        if self.sampled {
            self.srtt
        } else {
            UNSAMPLED_SRTT
        }
    }

    /// One additive dither draw, uniform in `[SRTT/4, SRTT]` (§6.2).
    pub fn dither(&self, rng: &mut dyn Random) -> f64 {
        let s = self.dither_srtt();
        rng.uniform_in(s / 4.0, s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{close, Scripted};

    #[test]
    fn first_sample_rules() {
        let mut d = FastRto::new();
        d.update(0.4, FirstSample::Draft);
        assert!(close(d.srtt, 0.4) && close(d.rttvar, 0.05) && close(d.rto, 0.6));

        let mut p = FastRto::new();
        p.update(0.4, FirstSample::Pseudocode);
        assert!(close(p.srtt, 0.4) && close(p.rttvar, 0.2) && close(p.rto, 0.6));

        let mut k = FastRto::new();
        k.update(0.4, FirstSample::InitK4);
        assert!(close(k.srtt, 0.4) && close(k.rttvar, 0.2) && close(k.rto, 1.2));
    }

    #[test]
    fn later_samples_are_plain_rfc6298_with_k4() {
        // Draft first sample 0.4 → SRTT 0.4, RTTVAR 0.05.
        // Second 0.8: RTTVAR = 0.75·0.05 + 0.25·0.4 = 0.1375;
        // SRTT = 0.875·0.4 + 0.125·0.8 = 0.45; RTO = 0.45 + 0.55 = 1.0.
        let mut d = FastRto::new();
        d.update(0.4, FirstSample::Draft);
        d.update(0.8, FirstSample::Draft);
        assert!(close(d.rttvar, 0.1375) && close(d.srtt, 0.45) && close(d.rto, 1.0));

        // The pseudocode rule keeps RTTVAR = R/2 after the first sample, and the
        // second sample uses K = 4: RTTVAR = 0.75·0.2 + 0.1 = 0.25; RTO = 0.45 + 1.
        let mut p = FastRto::new();
        p.update(0.4, FirstSample::Pseudocode);
        p.update(0.8, FirstSample::Pseudocode);
        assert!(close(p.rttvar, 0.25) && close(p.srtt, 0.45) && close(p.rto, 1.45));
    }

    #[test]
    fn dither_bounds_before_and_after_samples() {
        let d = FastRto::new();
        let lo = d.dither(&mut Scripted::new(&[0.0]));
        let hi = d.dither(&mut Scripted::new(&[1.0]));
        assert!(close(INITIAL_FAST_RTO + lo, 2.0 + 1.0 / 6.0));
        assert!(close(INITIAL_FAST_RTO + hi, 2.0 + 2.0 / 3.0));
        let mut s = FastRto::new();
        s.update(0.4, FirstSample::Draft);
        assert!(close(s.dither(&mut Scripted::new(&[0.0])), 0.1));
        assert!(close(s.dither(&mut Scripted::new(&[0.5])), 0.25));
    }

    #[test]
    fn samples_are_clamped() {
        assert_eq!(sanitize(0.0), MIN_SAMPLE);
        assert_eq!(sanitize(-3.0), MIN_SAMPLE);
        assert_eq!(sanitize(f64::NAN), MIN_SAMPLE);
        assert_eq!(sanitize(f64::INFINITY), MAX_SAMPLE);
        assert_eq!(sanitize(0.25), 0.25);
    }
}
