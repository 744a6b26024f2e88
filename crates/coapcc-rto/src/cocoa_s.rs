//! CoCoA-S (spec `algorithms.md` §3.4): CoCoA (§3.1) with the strong estimator
//! only — acknowledgements after retransmissions never change the RTO.
//! Everything else (dithering, VBF on the current timer, 32 s truncation, aging,
//! blind RTO) is [`Cocoa`]'s.

use crate::cocoa::Cocoa;
use crate::{Ack, AlgorithmParams, CongestionControl, ExchangeTimer, ParamError, Random};

/// CoCoA-S for one destination (§3.4).
#[derive(Clone, Debug, PartialEq)]
pub struct CocoaS(pub Cocoa);

impl Default for CocoaS {
    fn default() -> Self {
        CocoaS(Cocoa {
            weak_samples: false,
            ..Cocoa::default()
        })
    }
}

impl CocoaS {
    /// Builds from the parameters of CoCoA (`cap`, `aging`, `ack_timeout`,
    /// `ack_random_factor`).
    pub fn from_params(name: &'static str, p: &AlgorithmParams) -> Result<Self, ParamError> {
        Ok(CocoaS(Cocoa {
            weak_samples: false,
            ..Cocoa::from_params(name, p)?
        }))
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
        self.0.on_ack(ex, ack)
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
        let mut r = Scripted::new(&[0.0]);
        let mut e = a.start(0.0, 0, &mut r);
        a.expire(2.0, &mut e, &mut r);
        a.on_ack(&e, &ack(5.0, 5.0));
        assert!(close(a.0.est.rto, 2.0));
        assert!(!a.0.est.weak.is_seeded());
        assert_eq!(a.0.est.last_update, Some(0.0));
        let e = a.start(10.0, 0, &mut r);
        a.on_ack(&e, &ack(10.4, 0.4));
        assert!(close(a.0.est.rto, 1.6));
        // Backoff is CoCoA's: VBF on the current timer.
        let mut e = a.start(11.0, 0, &mut r);
        assert!(close(e.initial, 1.6));
        a.expire(12.6, &mut e, &mut r);
        a.expire(15.8, &mut e, &mut r);
        assert!(close(e.current, 4.8));
        a.reset();
        assert_eq!(a, CocoaS::default());
    }
}
