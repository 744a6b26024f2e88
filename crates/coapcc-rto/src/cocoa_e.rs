//! CoCoA-E (Balandina et al. 2013, as written in the pCoCoA paper; spec
//! `docs/spec/algorithms-spec.md` §3.5).
//!
//! Strong (K = 4) and weak (K = 1) estimators fed as in CoCoA (strong after no
//! retransmission, weak after 1–2), but with one gain per sample instead of
//! α and β: `γ_t = R / RTO` (the current overall RTO) and
//! `γ = γ_t if γ_t ≤ 0.5 else 1 - γ_t`; then
//! `RTT_x = (1-γ)·RTT_x + γ·R`, `RTTVAR_x = (1-γ)·RTTVAR_x + γ·|RTT_x - R|`
//! (with the *new* `RTT_x`: the paper's equation order, as everywhere in the
//! pCoCoA paper's algorithms), `RTO_x = RTT_x + K_x·RTTVAR_x`.
//! After a strong sample `RTO = RTO_strong`; after a weak one
//! `RTO = 0.5·RTO_weak + 0.5·RTO`. Dithering, backoff and aging as CoCoA+
//! (§3.3): the pCoCoA paper's Table I lists RTO aging for CoCoA-E.
//!
//! Decisions (`docs/decisions/algorithms-choices.md`): each estimator's first sample uses
//! the RFC 6298 rule (`RTT = R`, `RTTVAR = R/2`), as CoCoA; for `γ_t > 1`
//! (a sample above the RTO) the formula would give a negative gain, so
//! `γ = min(|1 - γ_t|, 0.5)`; aging is CoCoA+'s (on by default, parameter
//! `aging`), applied before `γ_t` is computed, so `γ_t` uses the aged RTO;
//! `cap` limits the initial RTO (the overall RTO is kept within [1 ms, cap] and
//! the dithered initial timer at most cap), backed-off timers are not capped.

use crate::cocoa::{clamp_rto, dither, SampleKind, COCOA_PARAMS, DITHER, INITIAL_RTO, MIN_RTO};
use crate::cocoa_plus::{age_at_measurement, age_at_start, CocoaPlus, CAP};
use crate::math::{abs, min};
use crate::rfc6298::usable_sample;
use crate::{Ack, AlgorithmParams, CongestionControl, ExchangeTimer, ParamError, Random};

/// CoCoA-E's per-sample gain for a sample `r` against the overall RTO `rto`.
pub fn gain(r: f64, rto: f64) -> f64 {
    let g = r / rto;
    if g <= 0.5 {
        g
    } else {
        min(abs(1.0 - g), 0.5)
    }
}

/// One CoCoA-E estimator (strong or weak).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdaptiveEstimator {
    /// Smoothed RTT (s).
    pub rtt: f64,
    /// RTT variation (s).
    pub rttvar: f64,
    /// Variance multiplier (4 strong, 1 weak).
    pub k: f64,
    /// Whether a first sample has been taken.
    pub seeded: bool,
}

impl AdaptiveEstimator {
    /// An estimator without samples.
    pub const fn new(k: f64) -> Self {
        AdaptiveEstimator {
            rtt: 0.0,
            rttvar: 0.0,
            k,
            seeded: false,
        }
    }

    /// Feeds sample `r` weighed against the overall `rto`; returns `RTO_x`.
    pub fn update(&mut self, r: f64, rto: f64) -> f64 {
        if self.seeded {
            let g = gain(r, rto);
            self.rtt = (1.0 - g) * self.rtt + g * r;
            self.rttvar = (1.0 - g) * self.rttvar + g * abs(self.rtt - r);
        } else {
            self.rtt = r;
            self.rttvar = r / 2.0;
            self.seeded = true;
        }
        self.estimate()
    }

    /// `RTT_x + K_x·RTTVAR_x`.
    pub fn estimate(&self) -> f64 {
        self.rtt + self.k * self.rttvar
    }
}

/// CoCoA-E for one destination (§3.5).
#[derive(Clone, Debug, PartialEq)]
pub struct CocoaE {
    /// The overall RTO (s).
    pub rto: f64,
    /// Strong estimator (K = 4).
    pub strong: AdaptiveEstimator,
    /// Weak estimator (K = 1).
    pub weak: AdaptiveEstimator,
    /// When the overall RTO last changed (sample or aging step); `None` until
    /// the destination is first used.
    pub last_update: Option<f64>,
    /// CoCoA+ aging on (default) or off (parameter `aging`).
    pub aging: bool,
    /// Cap on the initial RTO (s, default 60; parameter `cap`): the overall RTO
    /// and the dithered initial timer, not backed-off timers.
    pub cap: f64,
    /// Initial RTO (s, default 2; parameter `ack_timeout`).
    pub initial_rto: f64,
    /// Dithering factor (default 1.5; parameter `ack_random_factor`).
    pub dither: f64,
}

impl Default for CocoaE {
    fn default() -> Self {
        CocoaE {
            rto: INITIAL_RTO,
            strong: AdaptiveEstimator::new(4.0),
            weak: AdaptiveEstimator::new(1.0),
            last_update: None,
            aging: true,
            cap: CAP,
            initial_rto: INITIAL_RTO,
            dither: DITHER,
        }
    }
}

impl CocoaE {
    /// Builds from scenario parameters: `cap`, `aging`, `ack_timeout`,
    /// `ack_random_factor`.
    pub fn from_params(name: &'static str, p: &AlgorithmParams) -> Result<Self, ParamError> {
        p.check(name, COCOA_PARAMS)?;
        let d = CocoaE::default();
        let cap = p.cap.unwrap_or(d.cap);
        let initial_rto = clamp_rto(p.ack_timeout.unwrap_or(d.initial_rto), cap);
        Ok(CocoaE {
            rto: initial_rto,
            aging: p.aging.unwrap_or(d.aging),
            cap,
            initial_rto,
            dither: p.ack_random_factor.unwrap_or(d.dither),
            ..d
        })
    }

    /// CoCoA+'s aging before an initial timer (`RTO < 1` unchanged for more
    /// than `16·RTO` → 1 s); starts the aging clock at the first use.
    fn age_before_start(&mut self, now: f64) {
        let t = *self.last_update.get_or_insert(now);
        if self.aging {
            let (rto, t) = age_at_start(self.rto, t, now);
            self.rto = rto;
            self.last_update = Some(t);
        }
    }
}

impl CongestionControl for CocoaE {
    fn start(&mut self, now: f64, outstanding: usize, rng: &mut dyn Random) -> ExchangeTimer {
        self.age_before_start(now);
        let base = if self.strong.seeded || self.weak.seeded || outstanding == 0 {
            self.rto
        } else {
            min(self.rto * (outstanding as f64 + 1.0), self.cap)
        };
        let t = min(dither(base, self.dither, rng), self.cap);
        ExchangeTimer {
            initial: t,
            current: t,
            ..ExchangeTimer::default()
        }
    }

    fn expire(&mut self, _now: f64, ex: &mut ExchangeTimer, _rng: &mut dyn Random) {
        ex.retransmissions = ex.retransmissions.saturating_add(1);
        ex.current = CocoaPlus::backoff(ex.initial, ex.current);
    }

    fn on_ack(&mut self, ex: &ExchangeTimer, ack: &Ack) {
        let r = ack.elapsed;
        if !usable_sample(r) {
            return;
        }
        let kind = SampleKind::of(ex.retransmissions);
        if kind == SampleKind::None {
            return;
        }
        if self.aging {
            self.rto = age_at_measurement(self.rto, self.initial_rto, self.last_update, ack.now);
        }
        let rto = if kind == SampleKind::Strong {
            self.strong.update(r, self.rto)
        } else {
            0.5 * self.weak.update(r, self.rto) + 0.5 * self.rto
        };
        self.rto = clamp_rto(rto, self.cap);
        self.last_update = Some(ack.now);
        debug_assert!(self.rto >= MIN_RTO);
    }

    fn reset(&mut self) {
        *self = CocoaE {
            rto: self.initial_rto,
            strong: AdaptiveEstimator::new(4.0),
            weak: AdaptiveEstimator::new(1.0),
            last_update: None,
            ..self.clone()
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cocoa::tests::ack;
    use crate::testutil::{close, Scripted};

    fn ex(n: u8) -> ExchangeTimer {
        ExchangeTimer {
            retransmissions: n,
            ..ExchangeTimer::default()
        }
    }

    #[test]
    fn gain_follows_the_ratio_to_the_rto() {
        // Eq. 12: γ_t = R/RTO; eq. 13: γ = γ_t if γ_t ≤ 0.5, else 1 − γ_t.
        // R = 0.6, RTO = 3: γ_t = 0.2 ≤ 0.5 → γ = 0.2.
        assert!(close(gain(0.6, 3.0), 0.2));
        // R = 1.5: γ_t = 0.5, still "≤ 0.5" → 0.5.
        assert!(close(gain(1.5, 3.0), 0.5));
        // R = 2.4: γ_t = 0.8 → 1 − 0.8 = 0.2.
        assert!(close(gain(2.4, 3.0), 0.2));
        // R = RTO: γ_t = 1 → 0 (the sample is not taken in).
        assert!(close(gain(3.0, 3.0), 0.0));
        // Above the RTO eq. 13 turns negative (3.3/3 = 1.1 → −0.1); the
        // decision (module doc) takes |1 − γ_t|, at most 0.5:
        // 1.1 → 0.1; 4.5/3 = 1.5 → 0.5; 6/2 = 3 → |−2| → 0.5.
        assert!(close(gain(3.3, 3.0), 0.1));
        assert!(close(gain(4.5, 3.0), 0.5));
        assert!(close(gain(6.0, 2.0), 0.5));
        // Through the strong estimator: first sample 1.0 (RFC 6298 rule):
        // RTT 1, RTTVAR 0.5, RTO_strong = 1 + 4·0.5 = 3 = RTO (eq. 17a).
        // Sample 2.4 against RTO 3: γ = 0.2 (above);
        // eq. 14: RTT = 0.8·1 + 0.2·2.4 = 1.28;
        // eq. 15 (with the new RTT): RTTVAR = 0.8·0.5 + 0.2·|1.28 − 2.4|
        //   = 0.4 + 0.224 = 0.624;
        // eq. 16: RTO_strong = 1.28 + 4·0.624 = 3.776 = RTO (eq. 17a).
        let mut a = CocoaE {
            aging: false,
            ..CocoaE::default()
        };
        a.on_ack(&ex(0), &ack(1.0, 1.0));
        assert!(close(a.rto, 3.0));
        a.on_ack(&ex(0), &ack(4.0, 2.4));
        assert!(close(a.strong.rtt, 1.28) && close(a.strong.rttvar, 0.624));
        assert!(close(a.rto, 3.776), "{}", a.rto);
    }

    #[test]
    fn strong_samples_set_the_rto() {
        let mut a = CocoaE::default();
        a.on_ack(&ex(0), &ack(1.0, 1.0));
        // First: RTT 1, RTTVAR 0.5 → RTO_s = 3 = RTO.
        assert!(close(a.rto, 3.0));
        a.on_ack(&ex(0), &ack(2.0, 0.6));
        // γ = 0.2: RTT = 0.92; RTTVAR = 0.4 + 0.2·0.32 = 0.464; RTO = 0.92 + 1.856.
        assert!(close(a.strong.rtt, 0.92));
        assert!(close(a.strong.rttvar, 0.464));
        assert!(close(a.rto, 2.776));
        a.on_ack(&ex(0), &ack(3.0, 2.082));
        // γ_t = 0.75 → γ = 0.25: RTT = 0.69 + 0.5205 = 1.2105;
        // RTTVAR = 0.348 + 0.25·0.8715 = 0.565875; RTO = 1.2105 + 2.2635.
        assert!(close(a.strong.rtt, 1.2105));
        assert!(close(a.strong.rttvar, 0.565875));
        assert!(close(a.rto, 3.474));
    }

    #[test]
    fn weak_samples_are_blended_half_and_half() {
        let mut a = CocoaE::default();
        a.on_ack(&ex(1), &ack(5.0, 4.0));
        // RTO_w = 4 + 2 = 6; RTO = 3 + 1 = 4.
        assert!(close(a.rto, 4.0));
        a.on_ack(&ex(2), &ack(9.0, 2.0));
        // γ_t = 0.5 → γ = 0.5: RTT = 3, RTTVAR = 1 + 0.5 = 1.5, RTO_w = 4.5; RTO = 4.25.
        assert!(close(a.weak.rtt, 3.0));
        assert!(close(a.weak.rttvar, 1.5));
        assert!(close(a.rto, 4.25));
        a.on_ack(&ex(3), &ack(20.0, 10.0));
        assert!(close(a.rto, 4.25));
        assert!(!a.strong.seeded);
    }

    #[test]
    fn backoff_and_dithering_as_cocoa_plus() {
        let mut a = CocoaE::default();
        let mut r = Scripted::new(&[1.0]);
        let mut e = a.start(0.0, 0, &mut r);
        assert!(close(e.initial, 3.0));
        a.expire(3.0, &mut e, &mut r);
        a.expire(9.0, &mut e, &mut r);
        assert!(close(e.current, 12.0));
        a.rto = 0.6;
        let mut e = a.start(0.0, 0, &mut Scripted::new(&[0.0]));
        // Initial 0.6 < 1 → ×3 on every expiry: 1.8, 5.4, 16.2, 48.6, 145.8.
        // The last value used to be 60 (every timer capped); only the initial
        // RTO is capped now (pCoCoA paper §V.F, `docs/decisions/algorithms-choices.md`,
        // "What `cap` means").
        for expect in [1.8, 5.4, 16.2, 48.6, 145.8] {
            a.expire(0.0, &mut e, &mut r);
            assert!(close(e.current, expect), "{}", e.current);
        }
        // Blind k·RTO before any sample.
        a.rto = 2.0;
        assert!(close(
            a.start(0.0, 1, &mut Scripted::new(&[0.0])).initial,
            4.0
        ));
    }

    #[test]
    fn aging_at_a_measurement_comes_before_the_gain() {
        // Table I of the pCoCoA paper lists RTO aging for CoCoA-E; the rules
        // are CoCoA+'s. Hand computation:
        // weak 4 (n = 1) at t = 5: RTO_w = 4 + 1·2 = 6; RTO = 0.5·6 + 0.5·2 = 4.
        // weak 2 (n = 1) at t = 40, 35 s > 30 s after the last update and
        //   RTO 4 > 2: first RTO = (2 + 4)/2 = 3. Then γ_t = 2/3 > 0.5 →
        //   γ = 1/3: RTT = 2/3·4 + 1/3·2 = 10/3;
        //   RTTVAR = 2/3·2 + 1/3·|10/3 − 2| = 4/3 + 4/9 = 16/9;
        //   RTO_w = 10/3 + 16/9 = 46/9; RTO = 0.5·46/9 + 0.5·3 = 73/18.
        // Without aging: γ_t = 2/4 = 0.5 = γ; RTT = 3; RTTVAR = 1 + 0.5 = 1.5;
        //   RTO_w = 4.5; RTO = 0.5·4.5 + 0.5·4 = 4.25.
        let mut a = CocoaE::default();
        let mut b = CocoaE {
            aging: false,
            ..CocoaE::default()
        };
        for x in [&mut a, &mut b] {
            x.on_ack(&ex(1), &ack(5.0, 4.0));
            assert!(close(x.rto, 4.0));
            assert_eq!(x.last_update, Some(5.0));
            x.on_ack(&ex(1), &ack(40.0, 2.0));
        }
        assert!(close(a.weak.rtt, 10.0 / 3.0));
        assert!(close(a.weak.rttvar, 16.0 / 9.0));
        assert!(close(a.rto, 73.0 / 18.0), "{}", a.rto);
        assert!(close(b.rto, 4.25));
        // At exactly 30 s: no aging ("more than").
        let mut c = CocoaE::default();
        c.on_ack(&ex(1), &ack(5.0, 4.0));
        c.on_ack(&ex(1), &ack(35.0, 2.0));
        assert!(close(c.rto, 4.25));
        // No measurement (n ≥ 3): no aging, RTO and clock unchanged.
        let mut d = CocoaE::default();
        d.on_ack(&ex(1), &ack(5.0, 4.0));
        d.on_ack(&ex(3), &ack(100.0, 2.0));
        assert!(close(d.rto, 4.0));
        assert_eq!(d.last_update, Some(5.0));
    }

    #[test]
    fn a_small_rto_is_reset_to_one_before_the_initial_timer() {
        // Strong 0.2 at t = 1: RTT 0.2, RTTVAR 0.1, RTO = 0.2 + 4·0.1 = 0.6.
        // 16·0.6 = 9.6 s: at t = 10 (9 s) nothing; at t = 11 (10 s) RTO → 1,
        // dated 1 + 9.6 = 10.6.
        let mut a = CocoaE::default();
        a.on_ack(&ex(0), &ack(1.0, 0.2));
        assert!(close(a.rto, 0.6));
        let mut r = Scripted::new(&[0.0]);
        assert!(close(a.start(10.0, 0, &mut r).initial, 0.6));
        assert!(close(a.start(11.0, 0, &mut r).initial, 1.0));
        assert!(close(a.last_update.unwrap(), 10.6));
        // Switched off: stays.
        let mut b = CocoaE {
            aging: false,
            ..CocoaE::default()
        };
        b.on_ack(&ex(0), &ack(1.0, 0.2));
        assert!(close(b.start(11.0, 0, &mut r).initial, 0.6));
    }

    #[test]
    fn the_cap_limits_the_initial_rto_only() {
        // cap 10: a weak 30 s sample gives RTO_w = 30 + 15 = 45,
        // RTO = min(0.5·45 + 0.5·2, 10) = 10; the initial timer
        // min(10·1.5, 10) = 10; VBF(10) = 1.5 → 15, 22.5 (above the cap).
        let p = AlgorithmParams {
            cap: Some(10.0),
            ..Default::default()
        };
        let mut a = CocoaE::from_params("cocoa-e", &p).unwrap();
        a.on_ack(&ex(1), &ack(31.0, 30.0));
        assert!(close(a.rto, 10.0));
        let mut r = Scripted::new(&[1.0]);
        let mut e = a.start(32.0, 0, &mut r);
        assert!(close(e.initial, 10.0));
        a.expire(42.0, &mut e, &mut r);
        assert!(close(e.current, 15.0));
        a.expire(57.0, &mut e, &mut r);
        assert!(close(e.current, 22.5));
    }

    #[test]
    fn parameters_and_reset() {
        // `aging` used to be rejected (no aging); Table I of the pCoCoA paper
        // lists aging for CoCoA-E, so it is now a parameter, on by default.
        let p = AlgorithmParams {
            aging: Some(false),
            ..Default::default()
        };
        assert!(!CocoaE::from_params("cocoa-e", &p).unwrap().aging);
        assert!(
            CocoaE::from_params("cocoa-e", &AlgorithmParams::default())
                .unwrap()
                .aging
        );
        let p = AlgorithmParams {
            first_sample: Some(crate::FirstSample::Draft),
            ..Default::default()
        };
        assert_eq!(
            CocoaE::from_params("cocoa-e", &p).unwrap_err().field,
            "first_sample"
        );
        let p = AlgorithmParams {
            cap: Some(30.0),
            ack_timeout: Some(1.0),
            ..Default::default()
        };
        let fresh = CocoaE::from_params("cocoa-e", &p).unwrap();
        assert!(close(fresh.rto, 1.0));
        let mut a = fresh.clone();
        a.start(0.0, 0, &mut Scripted::new(&[0.0]));
        a.on_ack(&ex(0), &ack(1.0, 0.5));
        a.on_ack(&ex(1), &ack(2.0, 0.5));
        assert_ne!(a, fresh);
        a.reset();
        assert_eq!(a, fresh);
    }
}
