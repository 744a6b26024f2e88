//! CoCoA+ (Betzler et al. 2015, as described in the pCoCoA paper; spec
//! `docs/spec/algorithms-spec.md` §3.3).
//!
//! Same estimators, weights and K values as CoCoA (§3.1, [`Estimate`]), with:
//! - the estimators written in the pCoCoA paper's equation order: SRTT first,
//!   then RTTVAR against the updated SRTT ([`VarianceOrder::UpdatedSrtt`]);
//! - the variable backoff factor chosen **once per exchange** from its initial
//!   timer `RTO_init` (`< 1 → 3`, `> 3 → 1.5`, else 2) and applied on every
//!   expiry ([`CocoaPlus::vbf`], [`CocoaPlus::backoff`]);
//! - aging: when a measurement arrives and the RTO is above the base RTO (2 s)
//!   and was not updated for more than 30 s, first `RTO = (2 + RTO)/2`
//!   ([`age_at_measurement`]); before an initial timer, an `RTO < 1` not updated
//!   for more than `16·RTO` is reset to 1 ([`age_at_start`]);
//! - the cap (`cap`, 60 s) limits the **initial** RTO only: the overall RTO and
//!   the dithered initial timer `RTO_init`. Backed-off timers are not capped
//!   (the source reports 200–300 s waits); they only stop growing at the
//!   overflow guard [`BACKOFF_CEILING`] (10¹⁰ s), which MAX_RETRANSMIT = 20
//!   backoffs from a 60 s-capped initial timer never reach.
//!
//! The initial timer is uniform in `[RTO, 1.5·RTO]` as in CoCoA, with the same
//! blind `k·2 s` for `k` parallel exchanges before any sample.
//!
//! [`CocoaPlus`] is public so that algorithms falling back to CoCoA+ behaviour
//! (pCoCoA without the TC echo, §4) can embed it; CoCoA-E (§3.5) and
//! 4-state-strong (§3.6) reuse its backoff ([`CocoaPlus::backoff`], [`grow`])
//! and its aging rules.

use crate::cocoa::{
    clamp_rto, dither, vbf, Estimate, SampleKind, COCOA_PARAMS, DITHER, INITIAL_RTO,
};
use crate::math::{max, min};
use crate::rfc6298::{usable_sample, VarianceOrder};
use crate::{Ack, AlgorithmParams, CongestionControl, ExchangeTimer, ParamError, Random};

/// Default cap on the initial RTO (s): the overall RTO and the dithered
/// initial timer (parameter `cap`). Backed-off timers are not bounded by it.
pub const CAP: f64 = 60.0;
/// An RTO above the base not updated for longer than this (s) is aged at the
/// next measurement.
pub const LONG_AGING_PERIOD: f64 = 30.0;
/// An `RTO < 1` not updated for more than this many RTOs is reset to 1 s.
pub const SHORT_AGING_RTOS: f64 = 16.0;
/// Overflow guard on backed-off timers (s), not a cap of the algorithm: a
/// timer stops growing here. 10¹⁰ s lies above anything MAX_RETRANSMIT = 20
/// backoffs can reach from an initial timer ≤ 60 s (the largest is
/// `1·3^20 ≈ 3.49·10⁹` s, from an initial timer just below 1 s) and below
/// the ≈ 1.8·10¹⁰ s a `u64` count of nanoseconds can hold.
pub const BACKOFF_CEILING: f64 = 1.0e10;

/// One backoff step: `current·factor`, but never beyond [`BACKOFF_CEILING`]
/// (a timer already above it — only possible with a `cap` above it — is kept,
/// neither raised nor shortened). Finite and positive for any finite positive
/// `current` and `factor ≥ 1`.
pub fn grow(current: f64, factor: f64) -> f64 {
    min(current * factor, max(current, BACKOFF_CEILING))
}

/// CoCoA+'s aging at a measurement arriving at `now` (§3.3): an RTO above the
/// base RTO `base` that was last updated more than 30 s ago becomes
/// `(base + RTO)/2` before the measurement is used. Returns the aged RTO.
pub fn age_at_measurement(rto: f64, base: f64, last_update: Option<f64>, now: f64) -> f64 {
    match last_update {
        Some(t) if rto > base && now - t > LONG_AGING_PERIOD => (base + rto) / 2.0,
        _ => rto,
    }
}

/// CoCoA+'s aging before an initial timer at `now` (§3.3): an `RTO < 1` last
/// updated at `last_update`, more than `16·RTO` ago, is reset to 1 s, dated at
/// the instant that period ended. Returns the new `(RTO, last_update)`.
pub fn age_at_start(rto: f64, last_update: f64, now: f64) -> (f64, f64) {
    if rto < 1.0 && now - last_update > SHORT_AGING_RTOS * rto {
        (1.0, last_update + SHORT_AGING_RTOS * rto)
    } else {
        (rto, last_update)
    }
}

/// CoCoA+ for one destination (§3.3).
#[derive(Clone, Debug, PartialEq)]
pub struct CocoaPlus {
    /// Overall RTO and the strong / weak estimators (as CoCoA).
    pub est: Estimate,
    /// Aging on (spec default) or off.
    pub aging: bool,
    /// Cap on the initial RTO (s, default 60; parameter `cap`): bounds the
    /// overall RTO and the dithered initial timer, not backed-off timers.
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
    /// Builds from scenario parameters: `cap` (of the initial RTO), `aging`,
    /// `ack_timeout` (base RTO), `ack_random_factor` (dithering).
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
    /// `current` times the exchange's factor, not capped (only the overflow
    /// guard [`BACKOFF_CEILING`] applies, see [`grow`]).
    pub fn backoff(initial: f64, current: f64) -> f64 {
        grow(current, Self::vbf(initial))
    }

    /// Applies CoCoA+'s backoff to `ex` (counts the retransmission, sets
    /// `current`).
    pub fn expire_exchange(&self, ex: &mut ExchangeTimer) {
        ex.retransmissions = ex.retransmissions.saturating_add(1);
        ex.current = Self::backoff(ex.initial, ex.current);
    }

    /// Aging before an initial timer: an `RTO < 1` not updated for more than
    /// `16·RTO` is reset to 1 s (at the instant that period ended).
    pub fn age_small(&mut self, now: f64) {
        let t = self.est.touch(now);
        if self.aging {
            let (rto, t) = age_at_start(self.est.rto, t, now);
            self.est.rto = rto;
            self.est.last_update = Some(t);
        }
    }

    /// Aging when a measurement arrives at `now`: an RTO above the base not
    /// updated for more than 30 s first becomes `(base + RTO)/2`.
    pub fn age_large(&mut self, now: f64) {
        if self.aging {
            self.est.rto =
                age_at_measurement(self.est.rto, self.initial_rto, self.est.last_update, now);
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
    /// CoCoA, in the paper's equation order) after aging; returns whether the
    /// overall RTO was updated.
    pub fn sample(&mut self, retransmissions: u8, ack: &Ack) -> bool {
        if !usable_sample(ack.elapsed) {
            return false;
        }
        let kind = SampleKind::of(retransmissions);
        if kind == SampleKind::None {
            return false;
        }
        self.age_large(ack.now);
        let order = VarianceOrder::UpdatedSrtt;
        if kind == SampleKind::Strong {
            self.est
                .strong_sample_in(ack.elapsed, ack.now, self.cap, order);
        } else {
            self.est
                .weak_sample_in(ack.elapsed, ack.now, self.cap, order);
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
    fn vbf_is_fixed_by_the_initial_timer_and_backoff_is_not_capped() {
        let mut a = off();
        // Initial 0.9 → ×3 throughout (CoCoA would switch to ×2 above 1 s):
        // 0.9·3 = 2.7, ·3 = 8.1, ·3 = 24.3, ·3 = 72.9, ·3 = 218.7.
        // This test used to expect 60, 60 for the last two: the 60 s cap
        // bounded every backed-off timer. The pCoCoA paper (§V.F) limits only
        // the initial RTO to 60 s and reports 200–300 s waits for CoCoA+, so
        // backed-off timers now grow past it (see `docs/decisions/algorithms-choices.md`,
        // "What `cap` means").
        assert!(all_close(
            &series(&mut a, 0.9, 5),
            &[0.9, 2.7, 8.1, 24.3, 72.9, 218.7, 0.0, 0.0]
        ));
        // Initial 2 → ×2 throughout, past 60: 2, 4, 8, 16, 32, 64, 128.
        assert!(all_close(
            &series(&mut a, 2.0, 6),
            &[2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 0.0]
        ));
        // Initial 3.5 → ×1.5: 3.5·1.5 = 5.25, ·1.5 = 7.875.
        assert!(all_close(
            &series(&mut a, 3.5, 2),
            &[3.5, 5.25, 7.875, 0.0, 0.0, 0.0, 0.0, 0.0]
        ));
        assert_eq!(CocoaPlus::vbf(1.0), 2.0);
        assert_eq!(CocoaPlus::vbf(3.0), 2.0);
        assert_eq!(CocoaPlus::vbf(0.5), 3.0);
        assert_eq!(CocoaPlus::vbf(3.5), 1.5);
        assert!(close(CocoaPlus::backoff(0.5, 10.0), 30.0));
        assert!(close(CocoaPlus::backoff(0.5, 50.0), 150.0));
    }

    #[test]
    fn the_cap_limits_the_initial_rto_only() {
        // cap 20 (of the initial RTO): an RTO of 40 gives an initial timer of
        // min(40·[1, 1.5], 20) = 20; the backoff then goes on past 20:
        // VBF(20) = 1.5 → 30, then 45, 67.5.
        let p = AlgorithmParams {
            cap: Some(20.0),
            aging: Some(false),
            ..Default::default()
        };
        let mut a = CocoaPlus::from_params("cocoa-plus", &p).unwrap();
        a.est.rto = 40.0;
        let mut r = Scripted::new(&[0.5]);
        let mut e = a.start(0.0, 0, &mut r);
        assert!(close(e.initial, 20.0));
        for expect in [30.0, 45.0, 67.5] {
            a.expire(0.0, &mut e, &mut r);
            assert!(close(e.current, expect), "{}", e.current);
        }
        // The overall RTO is kept within [1 ms, cap]: weak samples of 500 s
        // would drive it to 0.25·(500 + 250) + 0.75·RTO > 20.
        a.on_ack(&ex(1), &ack(1.0, 500.0));
        assert!(close(a.est.rto, 20.0));
    }

    #[test]
    fn backed_off_timers_stay_finite_at_the_overflow_guard() {
        // Twenty ×3 backoffs from 0.999 s (MAX_RETRANSMIT = 20 in the
        // evaluations): 0.999·3^20 = 0.999·3 486 784 401 = 3 483 297 616.599 s,
        // below the guard: it does not bind.
        let mut a = off();
        let mut r = Scripted::new(&[0.0]);
        a.est.rto = 0.999;
        let mut e = a.start(0.0, 0, &mut r);
        for _ in 0..20 {
            a.expire(0.0, &mut e, &mut r);
        }
        assert!(
            (e.current - 3_483_297_616.599).abs() < 1e-3,
            "{}",
            e.current
        );
        // Any number of further expiries (the counter saturates at 255) ends at
        // the guard: 3.48e9·3 > 1e10 → 1e10, then stays.
        for _ in 0..300 {
            a.expire(0.0, &mut e, &mut r);
        }
        assert_eq!(e.current, BACKOFF_CEILING);
        assert_eq!(e.retransmissions, 255);
        // A timer already above the guard (a cap above 1e10) is kept as it is.
        assert_eq!(grow(2.0e10, 1.5), 2.0e10);
        assert_eq!(grow(f64::MAX, 3.0), f64::MAX);
        assert!(close(grow(9.0e9, 1.5), 1.0e10));
    }

    #[test]
    fn the_variation_is_measured_against_the_updated_srtt() {
        // The pCoCoA paper's equation order (SRTT first). Hand computation:
        // strong 0.4 at t = 1: SRTT 0.4, RTTVAR 0.2, E_s = 0.4 + 4·0.2 = 1.2;
        //   RTO = 0.5·1.2 + 0.5·2 = 1.6.
        // strong 0.8 at t = 2: SRTT = 7/8·0.4 + 1/8·0.8 = 0.35 + 0.1 = 0.45;
        //   RTTVAR = 3/4·0.2 + 1/4·|0.45 − 0.8| = 0.15 + 0.0875 = 0.2375;
        //   E_s = 0.45 + 4·0.2375 = 1.4; RTO = 0.5·1.4 + 0.5·1.6 = 1.5.
        // (With the old SRTT: RTTVAR 0.25, E_s 1.45, RTO 1.525 — CoCoA's value.)
        let mut a = off();
        a.on_ack(&ex(0), &ack(1.0, 0.4));
        assert!(close(a.est.rto, 1.6));
        a.on_ack(&ex(0), &ack(2.0, 0.8));
        assert!(close(a.est.strong.srtt, 0.45));
        assert!(close(a.est.strong.rttvar, 0.2375));
        assert!(close(a.est.rto, 1.5));
        // The weak estimator too: first weak 4 (n = 1) at t = 3: E_w = 4 + 2 = 6,
        //   RTO = 0.25·6 + 0.75·1.5 = 2.625; weak 2 (n = 2) at t = 4:
        //   SRTT = 3.5 + 0.25 = 3.75; RTTVAR = 1.5 + 0.25·1.75 = 1.9375;
        //   E_w = 3.75 + 1.9375 = 5.6875; RTO = 1.421875 + 1.96875 = 3.390625.
        a.on_ack(&ex(1), &ack(3.0, 4.0));
        assert!(close(a.est.rto, 2.625));
        a.on_ack(&ex(2), &ack(4.0, 2.0));
        assert!(close(a.est.weak.rttvar, 1.9375));
        assert!(close(a.est.rto, 3.390625));
    }

    #[test]
    fn estimator_weights_and_k_are_those_of_cocoa() {
        // First samples are the same in either equation order, so these are
        // CoCoA's values.
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
