//! 4-state-strong (Bhalerao et al. 2016, as summarised in the pCoCoA paper;
//! spec `docs/spec/algorithms-spec.md` §3.6). **Approximate**: the source gives no constants.
//!
//! Each destination is in a state 1..4. Every retransmission raises the state
//! (at most 4); an exchange completed within its first timer lowers it (at
//! least 1). Each state has its own RFC 6298 estimator (K = 4), fed with the
//! samples taken in that state; the overall RTO is
//! `RTO = w_s·RTO_s + (1 - w_s)·RTO`.
//!
//! Decisions (`docs/decisions/algorithms-choices.md`): `w = (0.25, 0.5, 0.75, 1.0)` for
//! states 1..4 (spec); every acknowledgement gives a sample — the pCoCoA paper
//! (§VII.C): 4-state-strong "updates its estimators also when multiple
//! retransmissions occur" — `R = E` measured from the original transmission,
//! fed to the estimator of the state the destination is in when the
//! acknowledgement arrives (so samples after more retransmissions land in
//! higher states, with more weight); the state is lowered afterwards only if
//! the exchange had no retransmission; the estimators are written in the pCoCoA
//! paper's equation order (SRTT first, RTTVAR against the updated SRTT); the
//! backoff factor of an expiry is that of the state *after* the retransmission
//! raised it — CoCoA+'s per-exchange VBF in states 1–2, ×2 in states 3–4
//! (the spec's choice, kept: the pCoCoA paper §VII.A says "Each state has a
//! different VBF associated" but gives no factor for any state, so no four
//! distinct values can be taken from it; `docs/decisions/algorithms-choices.md`,
//! "Second audit", 7b);
//! CoCoA+'s aging (Table I of the pCoCoA paper lists aging for 4-state-strong),
//! dithering `[RTO, 1.5·RTO]` and blind `k·2 s` before any sample; `cap` (60 s)
//! limits the initial RTO only (overall RTO and dithered initial timer),
//! backed-off timers are not capped.

use crate::cocoa::{clamp_rto, dither, COCOA_PARAMS, DITHER, INITIAL_RTO};
use crate::cocoa_plus::{age_at_measurement, age_at_start, grow, CocoaPlus, CAP};
use crate::math::min;
use crate::rfc6298::{usable_sample, Rfc6298, VarianceOrder};
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

impl Default for FourStateStrong {
    fn default() -> Self {
        FourStateStrong {
            state: 1,
            estimators: [Rfc6298::new(4.0); 4],
            rto: INITIAL_RTO,
            last_update: None,
            aging: true,
            cap: CAP,
            initial_rto: INITIAL_RTO,
            dither: DITHER,
        }
    }
}

impl FourStateStrong {
    /// Builds from scenario parameters: `cap`, `aging`, `ack_timeout`,
    /// `ack_random_factor`.
    pub fn from_params(name: &'static str, p: &AlgorithmParams) -> Result<Self, ParamError> {
        p.check(name, COCOA_PARAMS)?;
        let d = FourStateStrong::default();
        let cap = p.cap.unwrap_or(d.cap);
        let initial_rto = clamp_rto(p.ack_timeout.unwrap_or(d.initial_rto), cap);
        Ok(FourStateStrong {
            rto: initial_rto,
            aging: p.aging.unwrap_or(d.aging),
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
    fn start(&mut self, now: f64, outstanding: usize, rng: &mut dyn Random) -> ExchangeTimer {
        let t = *self.last_update.get_or_insert(now);
        if self.aging {
            let (rto, t) = age_at_start(self.rto, t, now);
            self.rto = rto;
            self.last_update = Some(t);
        }
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
        ex.current = grow(ex.current, Self::factor(self.state, ex.initial));
    }

    fn on_ack(&mut self, ex: &ExchangeTimer, ack: &Ack) {
        if usable_sample(ack.elapsed) {
            if self.aging {
                self.rto =
                    age_at_measurement(self.rto, self.initial_rto, self.last_update, ack.now);
            }
            let i = usize::from(self.state - 1);
            let e = self.estimators[i].update_in(ack.elapsed, VarianceOrder::UpdatedSrtt);
            let w = WEIGHTS[i];
            self.rto = clamp_rto(w * e + (1.0 - w) * self.rto, self.cap);
            self.last_update = Some(ack.now);
        }
        if ex.retransmissions == 0 {
            self.state = if self.state > 1 { self.state - 1 } else { 1 };
        }
    }

    fn reset(&mut self) {
        self.state = 1;
        self.estimators = [Rfc6298::new(4.0); 4];
        self.rto = self.initial_rto;
        self.last_update = None;
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
        // An ACK after retransmissions does not lower the state. It used to
        // change nothing at all; now it is a sample (pCoCoA paper §VII.C):
        // state 4's first sample 50: E_4 = 50 + 4·25 = 150, w = 1 → RTO 150,
        // kept at the 60 s cap of the initial RTO.
        a.on_ack(&e, &ack(100.0, 50.0));
        assert_eq!(a.state, 4);
        assert!(close(a.rto, 60.0));
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
        // State 2: ×3 (initial 0.9 < 1) → 2.7; states 3, 4: ×2 → 5.4, 10.8,
        // 21.6, 43.2, 86.4. The last value used to be 60 (every timer capped);
        // only the initial RTO is capped now (pCoCoA paper §V.F).
        let expect = [2.7, 5.4, 10.8, 21.6, 43.2, 86.4];
        for (x, y) in s.iter().zip(expect) {
            assert!(close(*x, y), "{x} vs {y}");
        }
        assert_eq!(FourStateStrong::factor(1, 3.5), 1.5);
        assert_eq!(FourStateStrong::factor(2, 2.0), 2.0);
        assert_eq!(FourStateStrong::factor(3, 0.5), 2.0);
    }

    #[test]
    fn every_ack_feeds_the_estimator_of_the_current_state() {
        // The pCoCoA paper (§VII.C): 4-state-strong "updates its estimators also
        // when multiple retransmissions occur". This test used to check that an
        // ACK after retransmissions was discarded. Hand computation (K = 4,
        // w = 0.25, 0.5, 0.75, 1 for states 1..4; SRTT updated first):
        let mut a = FourStateStrong::default();
        let mut r = Scripted::new(&[0.0]);
        // a) state 1, E = 1, n = 0: E_1 = 1 + 4·0.5 = 3;
        //    RTO = 0.25·3 + 0.75·2 = 2.25; state stays 1.
        let e = a.start(0.0, 0, &mut r);
        a.on_ack(&e, &ack(1.0, 1.0));
        assert!(close(a.rto, 2.25));
        assert_eq!(a.state, 1);
        // b) two expiries → state 3; E = 7, n = 2 (measured from the original):
        //    E_3 = 7 + 4·3.5 = 21; RTO = 0.75·21 + 0.25·2.25 = 16.3125;
        //    the state is not lowered.
        let mut e = a.start(2.0, 0, &mut r);
        a.expire(4.0, &mut e, &mut r);
        a.expire(8.0, &mut e, &mut r);
        a.on_ack(&e, &ack(9.0, 7.0));
        assert!(close(a.rto, 16.3125));
        assert_eq!(a.state, 3);
        // c) three expiries → state 4; E = 14, n = 3 (CoCoA+ would take no
        //    sample): E_4 = 14 + 4·7 = 42; RTO = 1·42 = 42.
        let mut e = a.start(10.0, 0, &mut r);
        for t in [11.0, 13.0, 17.0] {
            a.expire(t, &mut e, &mut r);
        }
        a.on_ack(&e, &ack(24.0, 14.0));
        assert!(close(a.rto, 42.0));
        assert_eq!(a.state, 4);
        // d) clean exchange in state 4, E = 3: SRTT = 7/8·14 + 1/8·3 = 12.625;
        //    RTTVAR = 3/4·7 + 1/4·|12.625 − 3| = 5.25 + 2.40625 = 7.65625;
        //    E_4 = 12.625 + 4·7.65625 = 43.25 = RTO; then state 3.
        //    (Against the old SRTT: RTTVAR = 5.25 + 0.25·11 = 8, E_4 = 44.625.)
        let e = a.start(25.0, 0, &mut r);
        a.on_ack(&e, &ack(28.0, 3.0));
        assert!(close(a.estimators[3].rttvar, 7.65625));
        assert!(close(a.rto, 43.25));
        assert_eq!(a.state, 3);
        assert!(a.estimators[0].is_seeded() && a.estimators[2].is_seeded());
        assert!(!a.estimators[1].is_seeded());
        assert!(close(a.estimators[2].srtt, 7.0));
    }

    #[test]
    fn aging_as_cocoa_plus() {
        // Table I of the pCoCoA paper lists aging for 4-state-strong; the rules
        // are CoCoA+'s. Two expiries → state 3; E = 5 (n = 2) at t = 5:
        // E_3 = 5 + 4·2.5 = 15; RTO = 0.75·15 + 0.25·2 = 11.75.
        let mut a = FourStateStrong::default();
        let mut r = Scripted::new(&[0.0]);
        let mut e = a.start(0.0, 0, &mut r);
        a.expire(1.0, &mut e, &mut r);
        a.expire(3.0, &mut e, &mut r);
        a.on_ack(&e, &ack(5.0, 5.0));
        assert!(close(a.rto, 11.75));
        assert_eq!(a.last_update, Some(5.0));
        let mut off = FourStateStrong {
            aging: false,
            ..a.clone()
        };
        // A clean exchange answered at t = 41 (36 s > 30 s, RTO > 2): first
        // RTO = (2 + 11.75)/2 = 6.875; state 3's second sample 1:
        // SRTT = 7/8·5 + 1/8·1 = 4.5; RTTVAR = 3/4·2.5 + 1/4·|4.5 − 1| = 2.75;
        // E_3 = 4.5 + 11 = 15.5; RTO = 0.75·15.5 + 0.25·6.875 = 13.34375.
        // Without aging: 11.625 + 0.25·11.75 = 14.5625.
        for x in [&mut a, &mut off] {
            let e = x.start(40.0, 0, &mut r);
            x.on_ack(&e, &ack(41.0, 1.0));
            assert_eq!(x.state, 2);
        }
        assert!(close(a.rto, 13.34375), "{}", a.rto);
        assert!(close(off.rto, 14.5625), "{}", off.rto);
        // A small RTO: state 4, E = 0.1: E_4 = 0.1 + 4·0.05 = 0.3 = RTO at t = 1.
        // 16·0.3 = 4.8 s: at t = 5.5 nothing; at t = 6 RTO → 1, dated 5.8.
        let mut b = FourStateStrong {
            state: 4,
            ..FourStateStrong::default()
        };
        b.on_ack(&ExchangeTimer::default(), &ack(1.0, 0.1));
        assert!(close(b.rto, 0.3));
        assert!(close(b.start(5.5, 0, &mut r).initial, 0.3));
        assert!(close(b.start(6.0, 0, &mut r).initial, 1.0));
        assert!(close(b.last_update.unwrap(), 5.8));
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
        // `aging` used to be rejected; Table I of the pCoCoA paper lists aging
        // for 4-state-strong, so it is a parameter now (default on).
        let p = AlgorithmParams {
            aging: Some(false),
            ..Default::default()
        };
        assert!(
            !FourStateStrong::from_params("4-state-strong", &p)
                .unwrap()
                .aging
        );
        assert!(FourStateStrong::default().aging);
        let p = AlgorithmParams {
            slowrto_factor: Some(1.5),
            ..Default::default()
        };
        assert!(FourStateStrong::from_params("4-state-strong", &p).is_err());
    }
}
