//! CoCoA-S (spec `docs/spec/algorithms-spec.md` §3.4): CoCoA with the strong estimator only —
//! acknowledgements after retransmissions never change the RTO.
//!
//! Built on CoCoA+ ([`CocoaPlus`], §3.3), not on draft-03 CoCoA: Table I of
//! the pCoCoA paper lists CoCoA-S as "derived from CoCoA", and that paper's
//! "CoCoA" is CoCoA+ (§II: "In this work we consider its last revision,
//! CoCoA+"; §VII calls 4-state-strong and CoCoA-E, listed in the same column
//! as derived from CoCoA, "algorithms derived from CoCoA+"). So dithering,
//! the per-exchange VBF, aging, the initial-RTO cap and the blind RTO are
//! CoCoA+'s (`docs/decisions/algorithms-choices.md`, "Second audit", "7a. CoCoA-S is
//! derived from CoCoA+").

use crate::cocoa_plus::CocoaPlus;
use crate::{Ack, AlgorithmParams, CongestionControl, ExchangeTimer, ParamError, Random};

/// CoCoA-S for one destination (§3.4).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CocoaS(pub CocoaPlus);

impl CocoaS {
    /// Builds from the parameters of CoCoA+ (`cap`, `aging`, `ack_timeout`,
    /// `ack_random_factor`).
    pub fn from_params(name: &'static str, p: &AlgorithmParams) -> Result<Self, ParamError> {
        Ok(CocoaS(CocoaPlus::from_params(name, p)?))
    }
}

impl CongestionControl for CocoaS {
    fn start(&mut self, now: f64, outstanding: usize, rng: &mut dyn Random) -> ExchangeTimer {
        self.0.start(now, outstanding, rng)
    }
    fn expire(&mut self, now: f64, ex: &mut ExchangeTimer, rng: &mut dyn Random) {
        self.0.expire(now, ex, rng)
    }
    fn on_ack(&mut self, ex: &ExchangeTimer, ack: &Ack) {
        // Strong samples only: an exchange without retransmission.
        if ex.retransmissions == 0 {
            self.0.on_ack(ex, ack)
        }
    }
    fn reset(&mut self) {
        self.0.reset()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cocoa::tests::ack;
    use crate::testutil::{close, Scripted};

    #[test]
    fn weak_samples_are_ignored_strong_ones_taken() {
        let mut a = CocoaS::from_params("cocoa-s", &AlgorithmParams::default()).unwrap();
        assert_eq!(a, CocoaS::default());
        // Unknown destination, U = 0: 2 s; one expiry (VBF(2) = 2): 4 s; the
        // answer after one retransmission (E = 5) would be a weak sample:
        // ignored, RTO still 2, never updated.
        let mut r = Scripted::new(&[0.0]);
        let mut e = a.start(0.0, 0, &mut r);
        a.expire(2.0, &mut e, &mut r);
        assert!(close(e.current, 4.0));
        a.on_ack(&e, &ack(5.0, 5.0));
        assert!(close(a.0.est.rto, 2.0));
        assert!(!a.0.est.weak.is_seeded());
        assert_eq!(a.0.est.last_update, Some(0.0));
        // A strong sample 0.4 (eq. 1): RTT 0.4, RTTVAR 0.2, RTO_strong =
        // 0.4 + 4·0.2 = 1.2 (eq. 4); RTO = 0.5·1.2 + 0.5·2 = 1.6 (eq. 5).
        let e = a.start(10.0, 0, &mut r);
        a.on_ack(&e, &ack(10.4, 0.4));
        assert!(close(a.0.est.rto, 1.6));
        // Backoff is CoCoA+'s (eq. 6): VBF(RTO_init = 1.6) = 2 on every
        // expiry: 1.6, 3.2, 6.4 (draft-03 CoCoA would take ×1.5 above 3 s:
        // 4.8).
        let mut e = a.start(11.0, 0, &mut r);
        assert!(close(e.initial, 1.6));
        a.expire(12.6, &mut e, &mut r);
        assert!(close(e.current, 3.2));
        a.expire(15.8, &mut e, &mut r);
        assert!(close(e.current, 6.4));
        // Initial RTO capped at 60 s as CoCoA+'s: a strong sample of 200 s
        // (eq. 2-3, RTTVAR against the updated RTT): RTT = 0.35 + 25 = 25.35,
        // RTTVAR = 0.15 + |25.35 − 200|/4 = 43.8125, RTO_strong = 25.35 +
        // 175.25 = 200.6; RTO = 100.3 + 0.8 = 101.1 → 60.
        let e = a.start(30.0, 0, &mut r);
        a.on_ack(&e, &ack(230.0, 200.0));
        assert!(close(a.0.est.rto, 60.0));
        a.reset();
        assert_eq!(a, CocoaS::default());
    }
}
