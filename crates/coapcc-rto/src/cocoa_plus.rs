//! CoCoA+ (Betzler et al. 2015, as described in the pCoCoA paper; spec
//! `algorithms.md` §3.3).
//!
//! Same estimators, weights and K values as CoCoA (§3.1, [`Estimate`]), with:
//! - the variable backoff factor chosen **once per exchange** from its initial
//!   timer `RTO_init` (`< 1 → 3`, `> 3 → 1.5`, else 2) and applied on every
//!   expiry ([`CocoaPlus::vbf`], [`CocoaPlus::backoff`]);
//! - aging: when a measurement arrives and the RTO is above the base RTO (2 s)
//!   and was not updated for more than 30 s, first `RTO = (2 + RTO)/2`; before an
//!   initial timer, an `RTO < 1` not updated for more than `16·RTO` is reset to 1;
//! - the cap (60 s) bounds the overall RTO and every timer.
//!
//! The initial timer is uniform in `[RTO, 1.5·RTO]` as in CoCoA, with the same
//! blind `k·2 s` for `k` parallel exchanges before any sample.
//!
//! [`CocoaPlus`] is public so that algorithms falling back to CoCoA+ behaviour
//! (pCoCoA without the TC echo, §4) can embed it, and reuse its VBF through
//! [`CocoaPlus::vbf`] / [`CocoaPlus::backoff`].

use crate::cocoa::{
    clamp_rto, dither, vbf, Estimate, SampleKind, COCOA_PARAMS, DITHER, INITIAL_RTO,
};
use crate::math::min;
use crate::rfc6298::usable_sample;
use crate::{Ack, AlgorithmParams, CongestionControl, ExchangeTimer, ParamError, Random};

/// Cap on the overall RTO, the initial timer and backed-off timers (s).
pub const CAP: f64 = 60.0;
/// An RTO above the base not updated for longer than this (s) is aged at the
/// next measurement.
pub const LONG_AGING_PERIOD: f64 = 30.0;

/// CoCoA+ for one destination (§3.3).
#[derive(Clone, Debug, PartialEq)]
pub struct CocoaPlus {
    /// Overall RTO and the strong / weak estimators (as CoCoA).
    pub est: Estimate,
    /// Aging on (spec default) or off.
    pub aging: bool,
    /// Cap (s, default 60; parameter `cap`).
    pub cap: f64,
    /// Base (initial) RTO (s, default 2; parameter `ack_timeout`).
    pub initial_rto: f64,
    /// Dithering factor (default 1.5; parameter `ack_random_factor`).
    pub dither: f64,
}

impl Default for CocoaPlus {
    fn default() -> Self {
        CocoaPlus {
            est: Estimate::new(INITIAL_RTO),
            aging: true,
            cap: CAP,
            initial_rto: INITIAL_RTO,
            dither: DITHER,
        }
    }
}

impl CocoaPlus {
    /// Builds from scenario parameters: `cap`, `aging`, `ack_timeout` (base
    /// RTO), `ack_random_factor` (dithering).
    pub fn from_params(name: &'static str, p: &AlgorithmParams) -> Result<Self, ParamError> {
        p.check(name, COCOA_PARAMS)?;
        let d = CocoaPlus::default();
        let cap = p.cap.unwrap_or(d.cap);
        let initial_rto = clamp_rto(p.ack_timeout.unwrap_or(d.initial_rto), cap);
        Ok(CocoaPlus {
            est: Estimate::new(initial_rto),
            aging: p.aging.unwrap_or(d.aging),
            cap,
            initial_rto,
            dither: p.ack_random_factor.unwrap_or(d.dither),
        })
    }

    /// The backoff factor of an exchange, chosen once from its initial timer
    /// `initial` (s): 3 below 1 s, 1.5 above 3 s, 2 otherwise.
    pub fn vbf(initial: f64) -> f64 {
        vbf(initial)
    }

    /// One expiry of an exchange whose first timer was `initial`: the timer
    /// `current` times the exchange's factor, at most `cap`.
    pub fn backoff(initial: f64, current: f64, cap: f64) -> f64 {
        min(current * Self::vbf(initial), cap)
    }

    /// Applies CoCoA+'s backoff to `ex` (counts the retransmission, sets
    /// `current`), with this destination's cap.
    pub fn expire_exchange(&self, ex: &mut ExchangeTimer) {
        ex.retransmissions = ex.retransmissions.saturating_add(1);
        ex.current = Self::backoff(ex.initial, ex.current, self.cap);
    }

    /// Aging before an initial timer: an `RTO < 1` not updated for more than
    /// `16·RTO` is reset to 1 s (at the instant that period ended).
    pub fn age_small(&mut self, now: f64) {
        let t = self.est.touch(now);
        let rto = self.est.rto;
        if self.aging && rto < 1.0 && now - t > 16.0 * rto {
            self.est.rto = 1.0;
            self.est.last_update = Some(t + 16.0 * rto);
        }
    }

    /// Aging when a measurement arrives at `now`: an RTO above the base not
    /// updated for more than 30 s first becomes `(base + RTO)/2`.
    pub fn age_large(&mut self, now: f64) {
        if !self.aging || self.est.rto <= self.initial_rto {
            return;
        }
        if let Some(t) = self.est.last_update {
            if now - t > LONG_AGING_PERIOD {
                self.est.rto = (self.initial_rto + self.est.rto) / 2.0;
            }
        }
    }

    /// The first timer of a new exchange: aging, then `[RTO, 1.5·RTO]` (blind
    /// `k·RTO` before any sample), at most the cap.
    pub fn initial_timer(&mut self, now: f64, outstanding: usize, rng: &mut dyn Random) -> f64 {
        self.age_small(now);
        let base = self.est.base_rto(outstanding, self.cap);
        min(dither(base, self.dither, rng), self.cap)
    }

    /// Feeds the estimators (strong for no retransmission, weak for 1–2, as
    /// CoCoA) after aging; returns whether the overall RTO was updated.
    pub fn sample(&mut self, retransmissions: u8, ack: &Ack) -> bool {
        if !usable_sample(ack.elapsed) {
            return false;
        }
        let kind = SampleKind::of(retransmissions);
        if kind == SampleKind::None {
            return false;
        }
        self.age_large(ack.now);
        if kind == SampleKind::Strong {
            self.est.strong_sample(ack.elapsed, ack.now, self.cap);
        } else {
            self.est.weak_sample(ack.elapsed, ack.now, self.cap);
        }
        true
    }
}

impl CongestionControl for CocoaPlus {
    fn start(&mut self, now: f64, outstanding: usize, rng: &mut dyn Random) -> ExchangeTimer {
        let t = self.initial_timer(now, outstanding, rng);
        ExchangeTimer {
            initial: t,
            current: t,
            ..ExchangeTimer::default()
        }
    }

    fn expire(&mut self, _now: f64, ex: &mut ExchangeTimer, _rng: &mut dyn Random) {
        self.expire_exchange(ex);
    }

    fn on_ack(&mut self, ex: &ExchangeTimer, ack: &Ack) {
        self.sample(ex.retransmissions, ack);
    }

    fn reset(&mut self) {
        self.est = Estimate::new(self.initial_rto);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cocoa::tests::ack;
    use crate::testutil::{close, Scripted};

    fn off() -> CocoaPlus {
        CocoaPlus {
            aging: false,
            ..CocoaPlus::default()
        }
    }

    fn ex(n: u8) -> ExchangeTimer {
        ExchangeTimer {
            retransmissions: n,
            ..ExchangeTimer::default()
        }
    }

    fn series(a: &mut CocoaPlus, rto: f64, n: usize) -> [f64; 8] {
        a.est.rto = rto;
        let mut r = Scripted::new(&[0.0]);
        let mut e = a.start(0.0, 0, &mut r);
        let mut s = [0.0; 8];
        s[0] = e.current;
        for slot in s.iter_mut().skip(1).take(n) {
            a.expire(0.0, &mut e, &mut r);
            *slot = e.current;
        }
        assert_eq!(e.retransmissions as usize, n);
        s
    }

    fn all_close(a: &[f64], b: &[f64]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| close(*x, *y))
    }

    #[test]
    fn vbf_is_fixed_by_the_initial_timer() {
        let mut a = off();
        // Initial 0.9 → ×3 throughout (CoCoA would switch to ×2 above 1 s).
        assert!(all_close(
            &series(&mut a, 0.9, 5),
            &[0.9, 2.7, 8.1, 24.3, 60.0, 60.0, 0.0, 0.0]
        ));
        // Initial 2 → ×2 throughout, capped at 60.
        assert!(all_close(
            &series(&mut a, 2.0, 6),
            &[2.0, 4.0, 8.0, 16.0, 32.0, 60.0, 60.0, 0.0]
        ));
        // Initial 3.5 → ×1.5.
        assert!(all_close(
            &series(&mut a, 3.5, 2),
            &[3.5, 5.25, 7.875, 0.0, 0.0, 0.0, 0.0, 0.0]
        ));
        assert_eq!(CocoaPlus::vbf(1.0), 2.0);
        assert_eq!(CocoaPlus::vbf(3.0), 2.0);
        assert_eq!(CocoaPlus::vbf(0.5), 3.0);
        assert_eq!(CocoaPlus::vbf(3.5), 1.5);
        assert!(close(CocoaPlus::backoff(0.5, 10.0, 60.0), 30.0));
    }

    #[test]
    fn estimators_are_those_of_cocoa() {
        let mut a = off();
        a.on_ack(&ex(0), &ack(1.0, 0.4));
        assert!(close(a.est.rto, 1.6));
        a.on_ack(&ex(2), &ack(5.0, 4.0));
        // E_w = 6; 0.25·6 + 0.75·1.6 = 2.7.
        assert!(close(a.est.rto, 2.7));
        a.on_ack(&ex(3), &ack(9.0, 4.0));
        assert!(close(a.est.rto, 2.7));
        assert_eq!(a.est.last_update, Some(5.0));
    }

    #[test]
    fn a_large_rto_ages_at_the_next_measurement_after_30_s() {
        let mut a = CocoaPlus::default();
        a.est.set(5.0, 0.0, CAP);
        let mut b = a.clone();
        // At 31 s: (2 + 5)/2 = 3.5, then the strong sample 1 (E_s = 3): 3.25.
        a.on_ack(&ex(0), &ack(31.0, 1.0));
        assert!(close(a.est.rto, 3.25));
        // At exactly 30 s nothing ages: 0.5·3 + 0.5·5 = 4.
        b.on_ack(&ex(0), &ack(30.0, 1.0));
        assert!(close(b.est.rto, 4.0));
        // Switched off: no aging.
        let mut c = CocoaPlus {
            aging: false,
            ..CocoaPlus::default()
        };
        c.est.set(5.0, 0.0, CAP);
        c.on_ack(&ex(0), &ack(31.0, 1.0));
        assert!(close(c.est.rto, 4.0));
        // No measurement (n ≥ 3): no aging either.
        let mut d = CocoaPlus::default();
        d.est.set(5.0, 0.0, CAP);
        d.on_ack(&ex(3), &ack(100.0, 50.0));
        assert!(close(d.est.rto, 5.0));
        // Not above the base: no aging (2 stays 2 before the sample).
        let mut e = CocoaPlus::default();
        e.est.set(2.0, 0.0, CAP);
        e.on_ack(&ex(0), &ack(100.0, 1.0));
        assert!(close(e.est.rto, 2.5));
    }

    #[test]
    fn a_small_rto_is_reset_to_one_before_the_initial_timer() {
        let mut a = CocoaPlus::default();
        a.est.set(0.5, 0.0, CAP);
        let mut r = Scripted::new(&[0.0]);
        assert!(close(a.start(8.0, 0, &mut r).initial, 0.5));
        assert!(close(a.start(8.1, 0, &mut r).initial, 1.0));
        assert_eq!(a.est.last_update, Some(8.0));
        // Large RTOs are not aged at start.
        a.est.set(10.0, 0.0, CAP);
        assert!(close(a.start(1000.0, 0, &mut r).initial, 10.0));
    }

    #[test]
    fn caps_bound_rto_and_initial_timer() {
        let mut a = off();
        for i in 0..40 {
            a.on_ack(&ex(1), &ack(i as f64, 500.0));
        }
        assert!(close(a.est.rto, CAP));
        let mut r = Scripted::new(&[1.0]);
        assert!(close(a.start(100.0, 0, &mut r).initial, CAP));
        let p = AlgorithmParams {
            cap: Some(20.0),
            ..Default::default()
        };
        let mut b = CocoaPlus::from_params("cocoa-plus", &p).unwrap();
        assert!(close(b.start(0.0, 20, &mut r).initial, 20.0));
    }

    #[test]
    fn dithering_and_blind_rto() {
        let mut a = off();
        assert!(close(
            a.start(0.0, 0, &mut Scripted::new(&[1.0])).initial,
            3.0
        ));
        assert!(close(
            a.start(0.0, 2, &mut Scripted::new(&[0.0])).initial,
            6.0
        ));
    }

    #[test]
    fn reset_equals_fresh() {
        let fresh = CocoaPlus::from_params("cocoa-plus", &AlgorithmParams::default()).unwrap();
        assert_eq!(fresh, CocoaPlus::default());
        let mut a = fresh.clone();
        let mut r = Scripted::new(&[0.2]);
        let mut e = a.start(3.0, 0, &mut r);
        a.expire(6.0, &mut e, &mut r);
        a.on_ack(&e, &ack(7.0, 4.0));
        assert_ne!(a, fresh);
        a.reset();
        assert_eq!(a, fresh);
    }
}
