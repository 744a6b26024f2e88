//! The RFC 6298 smoothed-RTT estimator (spec `docs/spec/algorithms-spec.md` §0.3), as used by the
//! CoCoA family (§3): one value per estimator (CoCoA's strong and weak ones,
//! 4-state-strong's four).
//!
//! First sample R: `SRTT = R`, `RTTVAR = R/2`. Later sample R, in one of two
//! equation orders ([`VarianceOrder`]):
//! - [`VarianceOrder::OldSrtt`] (RFC 6298 §2.3, docs/spec/algorithms-spec.md §0.3; CoCoA, CoCoA-FB,
//!   CoCoA-S): `RTTVAR = (1-β)·RTTVAR + β·|SRTT - R|` with the old SRTT, then
//!   `SRTT = (1-α)·SRTT + α·R`;
//! - [`VarianceOrder::UpdatedSrtt`] (the equation order of the pCoCoA paper,
//!   docs/spec/algorithms-spec.md §3.5, §4, §5; CoCoA+ and 4-state-strong): `SRTT = (1-α)·SRTT + α·R`
//!   first, then `RTTVAR = (1-β)·RTTVAR + β·|SRTT - R|` with the updated SRTT.
//!
//! The estimate is `SRTT + K·RTTVAR`. α = 1/8, β = 1/4. No clock-granularity
//! term and no 1 s floor.

use crate::math::abs;

/// Gain of the smoothed RTT (α).
pub const ALPHA: f64 = 1.0 / 8.0;
/// Gain of the RTT variation (β).
pub const BETA: f64 = 1.0 / 4.0;

/// Which smoothed RTT the variation term `|SRTT - R|` is measured against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarianceOrder {
    /// RFC 6298 §2.3: RTTVAR is updated first, against the SRTT *before* this
    /// sample (docs/spec/algorithms-spec.md §0.3). CoCoA (draft-ietf-core-cocoa-03) and its FB / S
    /// variants.
    OldSrtt,
    /// SRTT is updated first and RTTVAR is measured against the *updated* SRTT:
    /// the order in which the pCoCoA paper writes its estimators (docs/spec/algorithms-spec.md §3.5
    /// CoCoA-E, §4 pCoCoA, §5 Linux-RTO). CoCoA+ and 4-state-strong.
    UpdatedSrtt,
}

/// One RFC 6298 estimator with its own `K`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rfc6298 {
    /// Smoothed RTT (s); meaningless until [`Rfc6298::is_seeded`].
    pub srtt: f64,
    /// RTT variation (s); meaningless until [`Rfc6298::is_seeded`].
    pub rttvar: f64,
    /// The variance multiplier `K` (4 for RFC 6298 and CoCoA's strong estimator,
    /// 1 for CoCoA's weak one).
    pub k: f64,
    /// Whether a first sample has been taken.
    pub seeded: bool,
}

impl Rfc6298 {
    /// An estimator without samples.
    pub const fn new(k: f64) -> Self {
        Rfc6298 {
            srtt: 0.0,
            rttvar: 0.0,
            k,
            seeded: false,
        }
    }

    /// Whether a first sample has been taken.
    pub fn is_seeded(&self) -> bool {
        self.seeded
    }

    /// Feeds the sample `r` (s) in RFC 6298's order ([`VarianceOrder::OldSrtt`])
    /// and returns the new estimate `SRTT + K·RTTVAR`.
    pub fn update(&mut self, r: f64) -> f64 {
        self.update_in(r, VarianceOrder::OldSrtt)
    }

    /// Feeds the sample `r` (s) with the given equation order and returns the
    /// new estimate `SRTT + K·RTTVAR`. The first sample is the same in both.
    pub fn update_in(&mut self, r: f64, order: VarianceOrder) -> f64 {
        if self.seeded {
            match order {
                VarianceOrder::OldSrtt => {
                    self.rttvar = (1.0 - BETA) * self.rttvar + BETA * abs(self.srtt - r);
                    self.srtt = (1.0 - ALPHA) * self.srtt + ALPHA * r;
                }
                VarianceOrder::UpdatedSrtt => {
                    self.srtt = (1.0 - ALPHA) * self.srtt + ALPHA * r;
                    self.rttvar = (1.0 - BETA) * self.rttvar + BETA * abs(self.srtt - r);
                }
            }
        } else {
            self.srtt = r;
            self.rttvar = r / 2.0;
            self.seeded = true;
        }
        self.estimate()
    }

    /// The current estimate `SRTT + K·RTTVAR` (0 before any sample).
    pub fn estimate(&self) -> f64 {
        self.srtt + self.k * self.rttvar
    }
}

/// Whether an acknowledgement's elapsed time can be used as an RTT sample:
/// finite and not negative. Anything else (a caller's clock glitch) is ignored.
pub fn usable_sample(r: f64) -> bool {
    r.is_finite() && r >= 0.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::close;

    #[test]
    fn first_sample_seeds_srtt_and_half_variation() {
        let mut e = Rfc6298::new(4.0);
        assert!(!e.is_seeded());
        assert!(close(e.update(2.0), 2.0 + 4.0 * 1.0));
        assert!(e.is_seeded());
        assert!(close(e.srtt, 2.0) && close(e.rttvar, 1.0));
    }

    #[test]
    fn later_samples_use_the_old_srtt_for_the_variation() {
        let mut e = Rfc6298::new(4.0);
        e.update(2.0);
        // RTTVAR = 0.75·1 + 0.25·|2 - 4| = 1.25; SRTT = 0.875·2 + 0.125·4 = 2.25.
        let rto = e.update(4.0);
        assert!(close(e.rttvar, 1.25));
        assert!(close(e.srtt, 2.25));
        assert!(close(rto, 2.25 + 5.0));
        // A sample below SRTT: |2.25 - 1| = 1.25 → RTTVAR = 0.9375 + 0.3125 = 1.25;
        // SRTT = 0.875·2.25 + 0.125 = 2.09375.
        e.update(1.0);
        assert!(close(e.rttvar, 1.25));
        assert!(close(e.srtt, 2.09375));
    }

    #[test]
    fn the_paper_order_measures_the_variation_against_the_updated_srtt() {
        let mut old = Rfc6298::new(4.0);
        let mut new = Rfc6298::new(4.0);
        // First sample: identical in both orders (SRTT 2, RTTVAR 1).
        assert!(close(new.update_in(2.0, VarianceOrder::UpdatedSrtt), 6.0));
        old.update_in(2.0, VarianceOrder::OldSrtt);
        assert_eq!(old, new);
        // Sample 4, SRTT first: SRTT = 0.875·2 + 0.125·4 = 2.25;
        // RTTVAR = 0.75·1 + 0.25·|2.25 - 4| = 0.75 + 0.4375 = 1.1875;
        // estimate = 2.25 + 4·1.1875 = 7.0.
        // (RFC 6298 order: RTTVAR = 0.75 + 0.25·|2 - 4| = 1.25, estimate 7.25.)
        assert!(close(new.update_in(4.0, VarianceOrder::UpdatedSrtt), 7.0));
        assert!(close(new.srtt, 2.25) && close(new.rttvar, 1.1875));
        assert!(close(old.update_in(4.0, VarianceOrder::OldSrtt), 7.25));
    }

    #[test]
    fn k_scales_only_the_variation() {
        let mut weak = Rfc6298::new(1.0);
        assert!(close(weak.update(2.0), 3.0));
        assert!(close(weak.update(2.0), 2.0 + 0.75));
    }

    #[test]
    fn unusable_samples() {
        assert!(usable_sample(0.0) && usable_sample(3.5));
        assert!(!usable_sample(-0.1) && !usable_sample(f64::NAN) && !usable_sample(f64::INFINITY));
    }
}
