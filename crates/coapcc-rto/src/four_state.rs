//! 4-state-strong (Bhalerao et al. 2016, as summarised in the pCoCoA paper;
//! spec `algorithms.md` §3.6). **Approximate**: the source gives no constants.
//!
//! Each destination is in a state 1..4. Every retransmission raises the state
//! (at most 4); an exchange completed within its first timer lowers it (at
//! least 1). Each state has its own RFC 6298 estimator (K = 4), fed with the
//! unambiguous ("strong") samples taken in that state; the overall RTO is
//! `RTO = w_s·RTO_s + (1 - w_s)·RTO`.
//!
//! Decisions (`docs/decisions.md`): `w = (0.25, 0.5, 0.75, 1.0)` for
//! states 1..4 (spec); a strong sample feeds the estimator of the state the
//! destination is in when the acknowledgement arrives, and the state is lowered
//! afterwards; ambiguous samples are discarded; the backoff factor of an expiry
//! is that of the state *after* the retransmission raised it — CoCoA+'s
//! per-exchange VBF in states 1–2, ×2 in states 3–4; dithering `[RTO, 1.5·RTO]`,
//! blind `k·2 s` before any sample, and the 60 s cap as CoCoA+.

use crate::cocoa::{clamp_rto, dither, DITHER, INITIAL_RTO};
use crate::cocoa_plus::{CocoaPlus, CAP};
use crate::math::min;
use crate::rfc6298::{usable_sample, Rfc6298};
use crate::{Ack, AlgorithmParams, CongestionControl, ExchangeTimer, ParamError, Random};

/// Weight of the new per-state estimate in the overall RTO, states 1..4.
pub const WEIGHTS: [f64; 4] = [0.25, 0.5, 0.75, 1.0];
/// The highest state.
pub const MAX_STATE: u8 = 4;

/// 4-state-strong for one destination (§3.6).
#[derive(Clone, Debug, PartialEq)]
pub struct FourStateStrong {
    /// The current state, 1..=4.
    pub state: u8,
    /// One RFC 6298 estimator per state (index = state - 1).
    pub estimators: [Rfc6298; 4],
    /// The overall RTO (s).
    pub rto: f64,
    /// Cap on the RTO and every timer (s, default 60; parameter `cap`).
    pub cap: f64,
    /// Initial RTO (s, default 2; parameter `ack_timeout`).
    pub initial_rto: f64,
    /// Dithering factor (default 1.5; parameter `ack_random_factor`).
    pub dither: f64,
}

impl Default for FourStateStrong {
    fn default() -> Self {
        FourStateStrong {
            state: 1,
            estimators: [Rfc6298::new(4.0); 4],
            rto: INITIAL_RTO,
            cap: CAP,
            initial_rto: INITIAL_RTO,
            dither: DITHER,
        }
    }
}

impl FourStateStrong {
    /// Builds from scenario parameters: `cap`, `ack_timeout`, `ack_random_factor`.
    pub fn from_params(name: &'static str, p: &AlgorithmParams) -> Result<Self, ParamError> {
        p.check(name, &["cap", "ack_timeout", "ack_random_factor"])?;
        let d = FourStateStrong::default();
        let cap = p.cap.unwrap_or(d.cap);
        let initial_rto = clamp_rto(p.ack_timeout.unwrap_or(d.initial_rto), cap);
        Ok(FourStateStrong {
            rto: initial_rto,
            cap,
            initial_rto,
            dither: p.ack_random_factor.unwrap_or(d.dither),
            ..d
        })
    }

    /// The backoff factor in `state` for an exchange whose first timer was `initial`.
    pub fn factor(state: u8, initial: f64) -> f64 {
        if state <= 2 {
            CocoaPlus::vbf(initial)
        } else {
            2.0
        }
    }

    fn has_sample(&self) -> bool {
        self.estimators.iter().any(|e| e.is_seeded())
    }
}

impl CongestionControl for FourStateStrong {
    fn start(&mut self, _now: f64, outstanding: usize, rng: &mut dyn Random) -> ExchangeTimer {
        let base = if self.has_sample() || outstanding == 0 {
            self.rto
        } else {
            min(self.rto * (outstanding as f64 + 1.0), self.cap)
        };
        let t = min(dither(base, self.dither, rng), self.cap);
        ExchangeTimer {
            initial: t,
            current: t,
            state: self.state,
            ..ExchangeTimer::default()
        }
    }

    fn expire(&mut self, _now: f64, ex: &mut ExchangeTimer, _rng: &mut dyn Random) {
        self.state = min_u8(self.state + 1, MAX_STATE);
        ex.retransmissions = ex.retransmissions.saturating_add(1);
        ex.current = min(ex.current * Self::factor(self.state, ex.initial), self.cap);
    }

    fn on_ack(&mut self, ex: &ExchangeTimer, ack: &Ack) {
        if ex.retransmissions != 0 {
            return;
        }
        if usable_sample(ack.elapsed) {
            let i = usize::from(self.state - 1);
            let e = self.estimators[i].update(ack.elapsed);
            let w = WEIGHTS[i];
            self.rto = clamp_rto(w * e + (1.0 - w) * self.rto, self.cap);
        }
        self.state = if self.state > 1 { self.state - 1 } else { 1 };
    }

    fn reset(&mut self) {
        self.state = 1;
        self.estimators = [Rfc6298::new(4.0); 4];
        self.rto = self.initial_rto;
    }
}

fn min_u8(a: u8, b: u8) -> u8 {
    if a < b {
        a
    } else {
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cocoa::tests::ack;
    use crate::testutil::{close, Scripted};

    #[test]
    fn retransmissions_raise_and_clean_exchanges_lower_the_state() {
        let mut a = FourStateStrong::default();
        let mut r = Scripted::new(&[0.0]);
        let mut e = a.start(0.0, 0, &mut r);
        assert_eq!(e.state, 1);
        let mut states = [0u8; 5];
        for s in states.iter_mut() {
            a.expire(0.0, &mut e, &mut r);
            *s = a.state;
        }
        assert_eq!(states, [2, 3, 4, 4, 4]);
        // An ACK after retransmissions changes nothing.
        a.on_ack(&e, &ack(100.0, 50.0));
        assert_eq!(a.state, 4);
        assert!(close(a.rto, 2.0));
        let mut lowered = [0u8; 4];
        for s in lowered.iter_mut() {
            let e = a.start(0.0, 0, &mut r);
            a.on_ack(&e, &ack(1.0, 1.0));
            *s = a.state;
        }
        assert_eq!(lowered, [3, 2, 1, 1]);
    }

    #[test]
    fn series_uses_vbf_in_low_states_and_doubling_in_high_ones() {
        let mut a = FourStateStrong {
            rto: 0.9,
            ..FourStateStrong::default()
        };
        let mut r = Scripted::new(&[0.0]);
        let mut e = a.start(0.0, 0, &mut r);
        let mut s = [0.0; 6];
        for x in s.iter_mut() {
            a.expire(0.0, &mut e, &mut r);
            *x = e.current;
        }
        // State 2: ×3 (initial 0.9 < 1); states 3, 4: ×2; cap 60.
        let expect = [2.7, 5.4, 10.8, 21.6, 43.2, 60.0];
        for (x, y) in s.iter().zip(expect) {
            assert!(close(*x, y), "{x} vs {y}");
        }
        assert_eq!(FourStateStrong::factor(1, 3.5), 1.5);
        assert_eq!(FourStateStrong::factor(2, 2.0), 2.0);
        assert_eq!(FourStateStrong::factor(3, 0.5), 2.0);
    }

    #[test]
    fn each_state_has_its_estimator_and_weight() {
        let mut a = FourStateStrong::default();
        let mut r = Scripted::new(&[0.0]);
        // State 1: E_1 = 1 + 4·0.5 = 3; RTO = 0.25·3 + 0.75·2 = 2.25.
        let e = a.start(0.0, 0, &mut r);
        a.on_ack(&e, &ack(1.0, 1.0));
        assert!(close(a.rto, 2.25));
        assert_eq!(a.state, 1);
        // Two expiries of one exchange: state 3; its ACK (n = 2) is discarded.
        let mut e = a.start(2.0, 0, &mut r);
        a.expire(4.0, &mut e, &mut r);
        a.expire(8.0, &mut e, &mut r);
        a.on_ack(&e, &ack(9.0, 7.0));
        assert_eq!(a.state, 3);
        // A clean exchange in state 3: E_3 = 0.5 + 1 = 1.5; RTO = 0.75·1.5 + 0.25·2.25.
        let e = a.start(10.0, 0, &mut r);
        a.on_ack(&e, &ack(10.5, 0.5));
        assert!(close(a.rto, 1.125 + 0.5625));
        assert_eq!(a.state, 2);
        assert!(a.estimators[2].is_seeded());
        assert!(!a.estimators[1].is_seeded() && !a.estimators[3].is_seeded());
        assert!(close(a.estimators[0].srtt, 1.0));
    }

    #[test]
    fn state_four_takes_the_new_estimate_whole() {
        let mut a = FourStateStrong {
            state: 4,
            rto: 7.0,
            ..FourStateStrong::default()
        };
        let e = ExchangeTimer::default();
        a.on_ack(&e, &ack(1.0, 0.2));
        assert!(close(a.rto, 0.2 + 0.4));
        assert_eq!(a.state, 3);
    }

    #[test]
    fn parameters_reset_and_blind_rto() {
        let p = AlgorithmParams {
            cap: Some(10.0),
            ..Default::default()
        };
        let fresh = FourStateStrong::from_params("4-state-strong", &p).unwrap();
        let mut a = fresh.clone();
        let mut r = Scripted::new(&[1.0]);
        assert!(close(a.start(0.0, 3, &mut r).initial, 10.0));
        assert!(close(
            a.start(0.0, 1, &mut Scripted::new(&[0.0])).initial,
            4.0
        ));
        let mut e = a.start(0.0, 0, &mut r);
        a.expire(3.0, &mut e, &mut r);
        a.on_ack(&ExchangeTimer::default(), &ack(1.0, 1.0));
        assert_ne!(a, fresh);
        a.reset();
        assert_eq!(a, fresh);
        let p = AlgorithmParams {
            aging: Some(false),
            ..Default::default()
        };
        assert!(FourStateStrong::from_params("4-state-strong", &p).is_err());
    }
}
