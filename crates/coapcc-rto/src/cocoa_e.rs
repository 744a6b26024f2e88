//! CoCoA-E (Balandina et al. 2013, as written in the pCoCoA paper; spec
//! `algorithms.md` §3.5).
//!
//! Strong (K = 4) and weak (K = 1) estimators fed as in CoCoA (strong after no
//! retransmission, weak after 1–2), but with one gain per sample instead of
//! α and β: `γ_t = R / RTO` (the current overall RTO) and
//! `γ = γ_t if γ_t ≤ 0.5 else 1 - γ_t`; then
//! `RTT_x = (1-γ)·RTT_x + γ·R`, `RTTVAR_x = (1-γ)·RTTVAR_x + γ·|RTT_x - R|`
//! (with the *new* `RTT_x`), `RTO_x = RTT_x + K_x·RTTVAR_x`.
//! After a strong sample `RTO = RTO_strong`; after a weak one
//! `RTO = 0.5·RTO_weak + 0.5·RTO`. Dithering and backoff as CoCoA+ (§3.3).
//!
//! Decisions (`docs/decisions.md`): each estimator's first sample uses
//! the RFC 6298 rule (`RTT = R`, `RTTVAR = R/2`), as CoCoA; for `γ_t > 1`
//! (a sample above the RTO) the formula would give a negative gain, so
//! `γ = min(|1 - γ_t|, 0.5)`; no aging (the source describes none); the overall
//! RTO is kept within [1 ms, cap].

use crate::cocoa::{clamp_rto, dither, SampleKind, DITHER, INITIAL_RTO, MIN_RTO};
use crate::cocoa_plus::{CocoaPlus, CAP};
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
    /// Cap on the RTO and every timer (s, default 60; parameter `cap`).
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
            cap: CAP,
            initial_rto: INITIAL_RTO,
            dither: DITHER,
        }
    }
}

impl CocoaE {
    /// Builds from scenario parameters: `cap`, `ack_timeout`, `ack_random_factor`.
    pub fn from_params(name: &'static str, p: &AlgorithmParams) -> Result<Self, ParamError> {
        p.check(name, &["cap", "ack_timeout", "ack_random_factor"])?;
        let d = CocoaE::default();
        let cap = p.cap.unwrap_or(d.cap);
        let initial_rto = clamp_rto(p.ack_timeout.unwrap_or(d.initial_rto), cap);
        Ok(CocoaE {
            rto: initial_rto,
            cap,
            initial_rto,
            dither: p.ack_random_factor.unwrap_or(d.dither),
            ..d
        })
    }
}

impl CongestionControl for CocoaE {
    fn start(&mut self, _now: f64, outstanding: usize, rng: &mut dyn Random) -> ExchangeTimer {
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
        ex.current = CocoaPlus::backoff(ex.initial, ex.current, self.cap);
    }

    fn on_ack(&mut self, ex: &ExchangeTimer, ack: &Ack) {
        let r = ack.elapsed;
        if !usable_sample(r) {
            return;
        }
        let rto = match SampleKind::of(ex.retransmissions) {
            SampleKind::Strong => self.strong.update(r, self.rto),
            SampleKind::Weak => 0.5 * self.weak.update(r, self.rto) + 0.5 * self.rto,
            SampleKind::None => return,
        };
        self.rto = clamp_rto(rto, self.cap);
        debug_assert!(self.rto >= MIN_RTO);
    }

    fn reset(&mut self) {
        *self = CocoaE {
            rto: self.initial_rto,
            strong: AdaptiveEstimator::new(4.0),
            weak: AdaptiveEstimator::new(1.0),
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
        assert!(close(gain(0.6, 3.0), 0.2));
        assert!(close(gain(1.5, 3.0), 0.5));
        assert!(close(gain(2.4, 3.0), 0.2));
        assert!(close(gain(3.0, 3.0), 0.0));
        // Above the RTO: mirrored, at most 0.5.
        assert!(close(gain(3.3, 3.0), 0.1));
        assert!(close(gain(4.5, 3.0), 0.5));
        assert!(close(gain(6.0, 2.0), 0.5));
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
        for expect in [1.8, 5.4, 16.2, 48.6, 60.0] {
            a.expire(0.0, &mut e, &mut r);
            assert!(close(e.current, expect));
        }
        // Blind k·RTO before any sample.
        a.rto = 2.0;
        assert!(close(
            a.start(0.0, 1, &mut Scripted::new(&[0.0])).initial,
            4.0
        ));
    }

    #[test]
    fn parameters_and_reset() {
        let p = AlgorithmParams {
            aging: Some(true),
            ..Default::default()
        };
        assert_eq!(
            CocoaE::from_params("cocoa-e", &p).unwrap_err().field,
            "aging"
        );
        let p = AlgorithmParams {
            cap: Some(30.0),
            ack_timeout: Some(1.0),
            ..Default::default()
        };
        let fresh = CocoaE::from_params("cocoa-e", &p).unwrap();
        assert!(close(fresh.rto, 1.0));
        let mut a = fresh.clone();
        a.on_ack(&ex(0), &ack(1.0, 0.5));
        a.on_ack(&ex(1), &ack(2.0, 0.5));
        assert_ne!(a, fresh);
        a.reset();
        assert_eq!(a, fresh);
    }
}
