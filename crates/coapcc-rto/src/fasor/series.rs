//! FASOR's states, transitions and timer series (spec `docs/spec/algorithms-spec.md` §6.4) and
//! the development variants Slow and FastSlow (§6.5).
//!
//! A series is a function of the state the exchange started in, the dithered
//! FastRTO `F` and the slow value `S` (both snapshotted at exchange start) and
//! the transmission ordinal `i`; every value is capped. `S` is the dithered
//! SlowRTO, except in FAST_SLOW_FAST where it is the whole second timer,
//! `max(SlowRTO, 2·fastrto)` with the *undithered* fastrto ([`fsf_second`]):
//! the thesis's Listing 1 (§7.2) returns `MAX(slowrto, 2*fastrto)` there,
//! where `fastrto` is the estimator's value and only `fastrto_series_init()`
//! adds the dither.

use crate::math::{max, min};

/// Which series family (docs/spec/algorithms-spec.md §6.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Series {
    /// FASOR proper (§6.4): FAST → FAST_SLOW_FAST → SLOW_FAST.
    FastSlowFast,
    /// Two states: FAST → SLOW.
    Slow,
    /// FAST → FAST_SLOW → SLOW, backing off SlowRTO.
    FastSlow,
}

/// A destination's state. Which states occur depends on the [`Series`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum State {
    /// F, 2F, 4F, … (all series).
    Fast = 0,
    /// FASOR: F, max(S, 2·fastrto), 2F, 4F, … (fastrto undithered)
    FastSlowFast = 1,
    /// FASOR: S, F, 2F, 4F, …
    SlowFast = 2,
    /// FastSlow: F, S, 2S, 4S, …
    FastSlow = 3,
    /// Slow and FastSlow: S, 2S, 4S, …
    Slow = 4,
}

impl State {
    /// Decodes the snapshot kept in `ExchangeTimer::state` (unknown → `Fast`).
    pub fn from_u8(v: u8) -> State {
        match v {
            1 => State::FastSlowFast,
            2 => State::SlowFast,
            3 => State::FastSlow,
            4 => State::Slow,
            _ => State::Fast,
        }
    }

    /// The state after an acknowledgement that counts as ambiguous (a
    /// retransmitted exchange, or a detected spurious retransmission).
    pub fn after_ambiguous(self, series: Series) -> State {
        match (series, self) {
            (Series::FastSlowFast, State::Fast) => State::FastSlowFast,
            (Series::FastSlowFast, _) => State::SlowFast,
            (Series::Slow, _) => State::Slow,
            (Series::FastSlow, State::Fast) => State::FastSlow,
            (Series::FastSlow, _) => State::Slow,
        }
    }

    /// Whether the series of this state uses SlowRTO (so `S` must be drawn).
    pub fn uses_slow(self) -> bool {
        self != State::Fast
    }
}

/// `base · 2^k`, capped at `cap` (stops doubling once the cap is reached, so any
/// `k` is cheap and finite).
#[inline]
pub fn doubled(base: f64, k: u8, cap: f64) -> f64 {
    let mut v = base;
    for _ in 0..k {
        if v >= cap {
            break;
        }
        v *= 2.0;
    }
    min(v, cap)
}

/// FAST_SLOW_FAST's second timer (Listing 1, `fastslowfast_rtoseries`, case
/// 1): `MAX(slowrto, 2*fastrto)` from the dithered SlowRTO `slow` and the
/// undithered FastRTO `fast_rto`.
#[inline]
pub fn fsf_second(slow: f64, fast_rto: f64) -> f64 {
    max(slow, 2.0 * fast_rto)
}

/// The timer armed before transmission `i` (0 = original) of an exchange that
/// started in `state` with dithered FastRTO `f` and slow value `s` (the
/// dithered SlowRTO; in FAST_SLOW_FAST the second timer, [`fsf_second`]).
pub fn timer(state: State, i: u8, f: f64, s: f64, cap: f64) -> f64 {
    match (state, i) {
        (State::Fast, _) => doubled(f, i, cap),
        (State::FastSlowFast, 0) => min(f, cap),
        (State::FastSlowFast, 1) => min(s, cap),
        (State::FastSlowFast, _) => doubled(f, i - 1, cap),
        (State::SlowFast, 0) => min(s, cap),
        (State::SlowFast, _) => doubled(f, i - 1, cap),
        (State::FastSlow, 0) => min(f, cap),
        (State::FastSlow, _) => doubled(s, i - 1, cap),
        (State::Slow, _) => doubled(s, i, cap),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(state: State, f: f64, s: f64) -> [f64; 6] {
        let mut out = [0.0; 6];
        for (i, o) in out.iter_mut().enumerate() {
            *o = timer(state, i as u8, f, s, 60.0);
        }
        out
    }

    #[test]
    fn fasor_table_rows() {
        // F = 1.5, S = 4.5.
        assert_eq!(
            series(State::Fast, 1.5, 4.5),
            [1.5, 3.0, 6.0, 12.0, 24.0, 48.0]
        );
        assert_eq!(
            series(State::SlowFast, 1.5, 4.5),
            [4.5, 1.5, 3.0, 6.0, 12.0, 24.0]
        );
        // FAST_SLOW_FAST by hand from the thesis (§7.1.2 and Listing 1, §7.2):
        // first unambiguous sample R = 0.8: SRTT = 0.8, RTTVAR = R/2K = 0.1
        // (K = 4), fastrto = 0.8 + 4·0.1 = 1.2 (= 1.5·R). The series start
        // adds a dither from [SRTT/4, SRTT] = [0.2, 0.8]; a draw of 0.3 gives
        // F = 1.5. An ambiguous sample E = 2.5 gives slowrto = 1.5·2.5 = 3.75,
        // with its dither of 0.75 armed as 4.5. `fastslowfast_rtoseries`:
        //   case 0: fastrto_series_init() = F = 1.5;
        //   case 1: MAX(slowrto, 2*fastrto) = MAX(4.5, 2.4) = 4.5;
        //   then backoff_series_timer *= 2 from F: 3, 6, 12, 24.
        assert_eq!(fsf_second(4.5, 1.2), 4.5);
        assert_eq!(
            series(State::FastSlowFast, 1.5, 4.5),
            [1.5, 4.5, 3.0, 6.0, 12.0, 24.0]
        );
        // A short ambiguous sample E = 1.0: slowrto = 1.5, dithered by 0.5 to
        // 2.0; case 1 is MAX(2.0, 2·1.2 = 2.4) = 2.4 — twice the undithered
        // fastrto, not 2F = 3.0; the backoff still doubles F: 3, 6, 12, 24.
        assert_eq!(fsf_second(2.0, 1.2), 2.4);
        assert_eq!(
            series(State::FastSlowFast, 1.5, 2.4),
            [1.5, 2.4, 3.0, 6.0, 12.0, 24.0]
        );
        // The same samples under the other first-sample readings: Listing 1's
        // "initial K = 1" with RTTVAR = R/2 = 0.4 gives 0.8 + 1·0.4 = 1.2
        // again, so the rows above; plain RFC 6298 ("initk4") gives
        // 0.8 + 4·0.4 = 2.4, F = 2.4 + 0.3 = 2.7, case 1 MAX(4.5, 4.8) = 4.8,
        // then 5.4, 10.8, 21.6, 43.2.
        assert_eq!(fsf_second(4.5, 2.4), 4.8);
        assert_eq!(
            series(State::FastSlowFast, 2.7, 4.8),
            [2.7, 4.8, 5.4, 10.8, 21.6, 43.2]
        );
    }

    #[test]
    fn development_variant_rows() {
        assert_eq!(
            series(State::Slow, 1.5, 4.5),
            [4.5, 9.0, 18.0, 36.0, 60.0, 60.0]
        );
        assert_eq!(
            series(State::FastSlow, 1.5, 4.5),
            [1.5, 4.5, 9.0, 18.0, 36.0, 60.0]
        );
    }

    #[test]
    fn every_value_is_capped() {
        assert_eq!(series(State::Fast, 70.0, 1.0), [60.0; 6]);
        assert_eq!(series(State::SlowFast, 1.0, 80.0)[0], 60.0);
        assert_eq!(series(State::FastSlowFast, 1.0, 80.0)[1], 60.0);
        assert_eq!(timer(State::Fast, 255, 1.0, 1.0, 60.0), 60.0);
        assert_eq!(timer(State::Slow, 255, 1e-6, 1e-6, 60.0), 60.0);
        assert_eq!(timer(State::Fast, 3, 1.0, 1.0, 5.0), 5.0);
    }

    #[test]
    fn transitions() {
        use State::*;
        let fsf = Series::FastSlowFast;
        assert_eq!(Fast.after_ambiguous(fsf), FastSlowFast);
        assert_eq!(FastSlowFast.after_ambiguous(fsf), SlowFast);
        assert_eq!(SlowFast.after_ambiguous(fsf), SlowFast);
        assert_eq!(Fast.after_ambiguous(Series::Slow), Slow);
        assert_eq!(Slow.after_ambiguous(Series::Slow), Slow);
        assert_eq!(Fast.after_ambiguous(Series::FastSlow), FastSlow);
        assert_eq!(FastSlow.after_ambiguous(Series::FastSlow), Slow);
        assert_eq!(Slow.after_ambiguous(Series::FastSlow), Slow);
    }

    #[test]
    fn snapshot_round_trip() {
        for s in [
            State::Fast,
            State::FastSlowFast,
            State::SlowFast,
            State::FastSlow,
            State::Slow,
        ] {
            assert_eq!(State::from_u8(s as u8), s);
        }
        assert_eq!(State::from_u8(200), State::Fast);
    }
}
