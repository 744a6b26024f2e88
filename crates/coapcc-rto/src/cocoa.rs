//! CoCoA, draft-ietf-core-cocoa-03 (spec `docs/spec/algorithms-spec.md` §3.1), and the pieces the
//! rest of the CoCoA family (§3.2–§3.6) shares: the overall RTO fed by a strong
//! and a weak RFC 6298 estimator ([`Estimate`]), the variable backoff factor
//! ([`vbf`]) and the 32 s truncation ([`truncated_backoff`]).
//!
//! Per destination: the overall `RTO` (initially 2 s), the strong estimator
//! (K = 4) and the weak one (K = 1), and the time of the last RTO change.
//! - ACK after `n = 0` retransmissions: strong sample `R = E`,
//!   `RTO = 0.5·E_s + 0.5·RTO`;
//! - `n = 1, 2`: weak sample `R = E` (from the original transmission),
//!   `RTO = 0.25·E_w + 0.75·RTO`;
//! - `n ≥ 3`: nothing.
//!
//! Initial timer uniform in `[RTO, 1.5·RTO]`; on each expiry the *current* timer
//! `T` is multiplied by 3 (`T < 1`), 2 (`1 ≤ T ≤ 3`) or 1.5 (`T > 3`) and
//! truncated at 32 s (a timer already above 32 s is kept, or with
//! `above_truncation = "truncate"` cut to 32 s: [`truncated_backoff`]). Aging (on by default) is applied lazily before each
//! initial timer, for all the time elapsed since the last update. Before any
//! sample, `k` exchanges in parallel (NSTART > 1) each use `k·2 s`.
//!
//! Decisions (see `docs/decisions/algorithms-choices.md`): the overall RTO has no upper bound —
//! the thesis (§3.3): "The RTO estimator can have values larger than 32
//! seconds and that is not limited by the specification nor by the
//! implementation used in the tests" — only the backed-off timer is truncated
//! (at 32 s); it is kept above [`MIN_RTO`] (1 ms) so that zero-length samples
//! never give a zero timer; unusable elapsed times (negative, NaN, infinite)
//! are ignored. [`MAX_RTO`] bounds only the blind `k·2 s` of parallel
//! exchanges before any sample.

use crate::math::{max, min};
use crate::params::{AboveTruncation, AlgorithmParams};
use crate::rfc6298::{usable_sample, Rfc6298, VarianceOrder};
use crate::{Ack, CongestionControl, ExchangeTimer, ParamError, Random};

/// Initial overall RTO for an unknown destination (ACK_TIMEOUT, s).
pub const INITIAL_RTO: f64 = 2.0;
/// The initial timer is uniform in `[RTO, DITHER·RTO]` (ACK_RANDOM_FACTOR).
pub const DITHER: f64 = 1.5;
/// Backed-off timers are truncated here (s).
pub const TRUNCATION: f64 = 32.0;
/// Upper bound (s) on the blind `k·RTO` of `k` parallel exchanges before any
/// sample, and on a configured initial RTO (`ack_timeout`). CoCoA's overall RTO
/// itself is not bounded (thesis §3.3); CoCoA+ and its descendants cap theirs
/// with their own `cap`.
pub const MAX_RTO: f64 = 60.0;
/// No upper bound: what CoCoA (draft-03) passes as the overall RTO's maximum.
pub const UNBOUNDED: f64 = f64::INFINITY;
/// Lower bound on the overall RTO (s), so that a run of zero-length samples can
/// never produce a zero timer.
pub const MIN_RTO: f64 = 0.001;

/// Weight of the strong estimate in the overall RTO.
pub const STRONG_WEIGHT: f64 = 0.5;
/// Weight of the weak estimate in the overall RTO.
pub const WEAK_WEIGHT: f64 = 0.25;
/// Weak samples are taken only up to this many retransmissions.
pub const MAX_WEAK_RETRANSMISSIONS: u8 = 2;

/// The variable backoff factor for a timer value `t` (s): 3 below 1 s, 2 from
/// 1 s to 3 s inclusive, 1.5 above 3 s. CoCoA applies it to the current timer;
/// CoCoA+ to the exchange's initial timer.
pub fn vbf(t: f64) -> f64 {
    if t < 1.0 {
        3.0
    } else if t <= 3.0 {
        2.0
    } else {
        1.5
    }
}

/// One CoCoA backoff step: `t·vbf(t)`, truncated at `limit`.
///
/// The draft's whole rule is one sentence (draft-ietf-core-cocoa, "Modifications
/// to the algorithm of RFC 6298"): "The binary exponential backoff is
/// truncated at 32 seconds." It does not say what happens to a timer that is
/// already above 32 s — possible because the overall RTO, and so the initial
/// timer, has no upper bound (thesis §3.3). `above` picks the reading:
/// - [`AboveTruncation::Keep`] (default): `max(t, min(t·vbf(t), limit))`, such
///   a timer stays as it is (not increased further, nor shortened);
/// - [`AboveTruncation::Truncate`]: `min(t·vbf(t), limit)`, every backed-off
///   timer is truncated, so such a timer is cut to `limit`.
///
/// Both agree whenever `t ≤ limit`.
pub fn truncated_backoff(t: f64, limit: f64, above: AboveTruncation) -> f64 {
    match above {
        AboveTruncation::Keep => max(t, min(t * vbf(t), limit)),
        AboveTruncation::Truncate => min(t * vbf(t), limit),
    }
}

/// Clamps an overall RTO into `[MIN_RTO, max_rto]`.
pub fn clamp_rto(rto: f64, max_rto: f64) -> f64 {
    min(max(rto, MIN_RTO), max_rto)
}

/// A uniform draw from `[base, factor·base]`.
pub fn dither(base: f64, factor: f64, rng: &mut dyn Random) -> f64 {
    rng.uniform_in(base, base * factor)
}

/// What an acknowledgement after `n` retransmissions teaches CoCoA (§3.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SampleKind {
    /// `n = 0`: unambiguous.
    Strong,
    /// `1 ≤ n ≤ 2`: ambiguous, measured from the original transmission.
    Weak,
    /// `n ≥ 3`: no sample.
    None,
}

impl SampleKind {
    /// Classifies an acknowledgement by its retransmission count.
    pub fn of(retransmissions: u8) -> Self {
        match retransmissions {
            0 => SampleKind::Strong,
            n if n <= MAX_WEAK_RETRANSMISSIONS => SampleKind::Weak,
            _ => SampleKind::None,
        }
    }
}

/// The overall RTO of the CoCoA family with its strong (K = 4) and weak (K = 1)
/// estimators (§3.1, reused by §3.2–§3.4).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    /// The overall RTO (s).
    pub rto: f64,
    /// Strong estimator (K = 4).
    pub strong: Rfc6298,
    /// Weak estimator (K = 1).
    pub weak: Rfc6298,
    /// When the overall RTO last changed (sample or aging step); `None` until
    /// the destination is first used.
    pub last_update: Option<f64>,
}

impl Estimate {
    /// The state for an unknown destination, with the given initial RTO.
    pub const fn new(initial_rto: f64) -> Self {
        Estimate {
            rto: initial_rto,
            strong: Rfc6298::new(4.0),
            weak: Rfc6298::new(1.0),
            last_update: None,
        }
    }

    /// Whether any (strong or weak) sample has been taken.
    pub fn has_sample(&self) -> bool {
        self.strong.is_seeded() || self.weak.is_seeded()
    }

    /// The RTO a new exchange starts from: the overall RTO, or before any
    /// sample with `outstanding` other exchanges in flight the blind
    /// `k·RTO` for `k = outstanding + 1` parallel exchanges (at most `max_rto`).
    pub fn base_rto(&self, outstanding: usize, max_rto: f64) -> f64 {
        if self.has_sample() || outstanding == 0 {
            self.rto
        } else {
            min(self.rto * (outstanding as f64 + 1.0), max_rto)
        }
    }

    /// Strong sample `r` at `now`: `RTO = 0.5·E_s + 0.5·RTO`, the strong
    /// estimator updated in RFC 6298's order (CoCoA, docs/spec/algorithms-spec.md §0.3).
    pub fn strong_sample(&mut self, r: f64, now: f64, max_rto: f64) {
        self.strong_sample_in(r, now, max_rto, VarianceOrder::OldSrtt);
    }

    /// Weak sample `r` at `now`: `RTO = 0.25·E_w + 0.75·RTO`, the weak
    /// estimator updated in RFC 6298's order (CoCoA, docs/spec/algorithms-spec.md §0.3).
    pub fn weak_sample(&mut self, r: f64, now: f64, max_rto: f64) {
        self.weak_sample_in(r, now, max_rto, VarianceOrder::OldSrtt);
    }

    /// [`Estimate::strong_sample`] with the estimator's equation order given
    /// (CoCoA+ uses [`VarianceOrder::UpdatedSrtt`]).
    pub fn strong_sample_in(&mut self, r: f64, now: f64, max_rto: f64, order: VarianceOrder) {
        let e_s = self.strong.update_in(r, order);
        self.set(
            STRONG_WEIGHT * e_s + (1.0 - STRONG_WEIGHT) * self.rto,
            now,
            max_rto,
        );
    }

    /// [`Estimate::weak_sample`] with the estimator's equation order given.
    pub fn weak_sample_in(&mut self, r: f64, now: f64, max_rto: f64, order: VarianceOrder) {
        let e_w = self.weak.update_in(r, order);
        self.set(
            WEAK_WEIGHT * e_w + (1.0 - WEAK_WEIGHT) * self.rto,
            now,
            max_rto,
        );
    }

    /// Sets the overall RTO (clamped) and refreshes `last_update`.
    pub fn set(&mut self, rto: f64, now: f64, max_rto: f64) {
        self.rto = clamp_rto(rto, max_rto);
        self.last_update = Some(now);
    }

    /// Starts the aging clock at `now` if the destination was never used.
    /// Returns the time of the last update.
    pub fn touch(&mut self, now: f64) -> f64 {
        *self.last_update.get_or_insert(now)
    }
}

/// CoCoA (draft-ietf-core-cocoa-03) for one destination (§3.1).
#[derive(Clone, Debug, PartialEq)]
pub struct Cocoa {
    /// Overall RTO and estimators.
    pub est: Estimate,
    /// Aging on (spec default) or off (the published evaluations).
    pub aging: bool,
    /// Whether weak samples are used (off only for CoCoA-S, §3.4).
    pub weak_samples: bool,
    /// Backoff truncation (s, default 32; parameter `cap`).
    pub truncation: f64,
    /// What the backoff does with a timer above the truncation (default
    /// keep; parameter `above_truncation`).
    pub above_truncation: AboveTruncation,
    /// Initial overall RTO (s, default 2; parameter `ack_timeout`).
    pub initial_rto: f64,
    /// Dithering factor (default 1.5; parameter `ack_random_factor`).
    pub dither: f64,
}

impl Default for Cocoa {
    fn default() -> Self {
        Cocoa {
            est: Estimate::new(INITIAL_RTO),
            aging: true,
            weak_samples: true,
            truncation: TRUNCATION,
            above_truncation: AboveTruncation::Keep,
            initial_rto: INITIAL_RTO,
            dither: DITHER,
        }
    }
}

/// The scenario parameters every algorithm of the CoCoA family accepts.
pub const COCOA_PARAMS: &[&str] = &["cap", "aging", "ack_timeout", "ack_random_factor"];

/// The scenario parameters of CoCoA and CoCoA-FB1/FB2, the algorithms that back
/// off with [`truncated_backoff`]: [`COCOA_PARAMS`] and `above_truncation`.
pub const TRUNCATING_PARAMS: &[&str] = &[
    "cap",
    "aging",
    "ack_timeout",
    "ack_random_factor",
    "above_truncation",
];

impl Cocoa {
    /// Builds from scenario parameters: `cap` (backoff truncation), `aging`,
    /// `ack_timeout` (initial RTO), `ack_random_factor` (dithering),
    /// `above_truncation` (the backoff of a timer above the truncation).
    pub fn from_params(name: &'static str, p: &AlgorithmParams) -> Result<Self, ParamError> {
        p.check(name, TRUNCATING_PARAMS)?;
        let d = Cocoa::default();
        let initial_rto = clamp_rto(p.ack_timeout.unwrap_or(d.initial_rto), MAX_RTO);
        Ok(Cocoa {
            est: Estimate::new(initial_rto),
            aging: p.aging.unwrap_or(d.aging),
            weak_samples: true,
            truncation: p.cap.unwrap_or(d.truncation),
            above_truncation: p.above_truncation.unwrap_or(d.above_truncation),
            initial_rto,
            dither: p.ack_random_factor.unwrap_or(d.dither),
        })
    }

    /// Applies aging for all the time from the last update to `now`, step by
    /// step: `RTO < 1` unchanged for more than `16·RTO` → `2·RTO`; `RTO > 3`
    /// unchanged for more than `4·RTO` → `1 + 0.5·RTO`. Each step happens at the
    /// instant its period ends, which becomes the new `last_update`.
    pub fn age(&mut self, now: f64) {
        let mut t = self.est.touch(now);
        if !self.aging {
            return;
        }
        let mut rto = self.est.rto;
        // Terminates: doubling reaches 1 from MIN_RTO in 10 steps; 1 + RTO/2
        // reaches 3 from any finite RTO in at most 1025 steps (it halves the
        // distance to 2; an f64 is below 2^1024).
        loop {
            if rto < 1.0 && now - t > 16.0 * rto {
                t += 16.0 * rto;
                rto *= 2.0;
            } else if rto > 3.0 && now - t > 4.0 * rto {
                t += 4.0 * rto;
                rto = 1.0 + 0.5 * rto;
            } else {
                break;
            }
        }
        self.est.rto = rto;
        self.est.last_update = Some(t);
    }

    /// The (aged) RTO a new exchange starts from, before dithering.
    pub fn base_rto(&mut self, now: f64, outstanding: usize) -> f64 {
        self.age(now);
        self.est.base_rto(outstanding, MAX_RTO)
    }

    /// Feeds the estimators with an acknowledgement after `retransmissions`
    /// retransmissions; returns whether the overall RTO was updated.
    pub fn sample(&mut self, retransmissions: u8, ack: &Ack) -> bool {
        if !usable_sample(ack.elapsed) {
            return false;
        }
        match SampleKind::of(retransmissions) {
            SampleKind::Strong => self.est.strong_sample(ack.elapsed, ack.now, UNBOUNDED),
            SampleKind::Weak if self.weak_samples => {
                self.est.weak_sample(ack.elapsed, ack.now, UNBOUNDED)
            }
            _ => return false,
        }
        true
    }

    /// The backoff step of one expiry (VBF of the current timer, truncated).
    pub fn backoff(&self, current: f64) -> f64 {
        truncated_backoff(current, self.truncation, self.above_truncation)
    }
}

impl CongestionControl for Cocoa {
    fn start(&mut self, now: f64, outstanding: usize, rng: &mut dyn Random) -> ExchangeTimer {
        let t = dither(self.base_rto(now, outstanding), self.dither, rng);
        ExchangeTimer {
            initial: t,
            current: t,
            ..ExchangeTimer::default()
        }
    }

    fn expire(&mut self, _now: f64, ex: &mut ExchangeTimer, _rng: &mut dyn Random) {
        ex.retransmissions = ex.retransmissions.saturating_add(1);
        ex.current = self.backoff(ex.current);
    }

    fn on_ack(&mut self, ex: &ExchangeTimer, ack: &Ack) {
        self.sample(ex.retransmissions, ack);
    }

    fn reset(&mut self) {
        self.est = Estimate::new(self.initial_rto);
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::testutil::{close, Scripted};

    pub fn ack(now: f64, elapsed: f64) -> Ack {
        Ack {
            now,
            elapsed,
            echo: None,
            piggybacked: true,
        }
    }

    fn ex(n: u8) -> ExchangeTimer {
        ExchangeTimer {
            retransmissions: n,
            ..ExchangeTimer::default()
        }
    }

    fn no_aging() -> Cocoa {
        Cocoa {
            aging: false,
            ..Cocoa::default()
        }
    }

    #[test]
    fn draft_appendix_c1_weak_updates() {
        // Draft App. C.1 (docs/spec/algorithms-spec.md §3.1 test vector): RTO 1.5 and two weak updates
        // with E_w = 3 give 1.875 and 2.156. Fed through the weak estimator
        // (K = 1, RFC 6298 order: RTTVAR against the old SRTT):
        // first weak sample R = 2: SRTT 2, RTTVAR 1, E_w = 2 + 1·1 = 3;
        //   RTO = 0.25·3 + 0.75·1.5 = 0.75 + 1.125 = 1.875.
        let mut e = Estimate::new(1.5);
        e.weak_sample(2.0, 0.0, UNBOUNDED);
        assert!(close(e.weak.estimate(), 3.0));
        assert!(close(e.rto, 1.875), "{}", e.rto);
        // A second E_w of 3 needs SRTT' + RTTVAR' = 3 with
        //   RTTVAR' = 3/4·1 + |2 − R|/4, SRTT' = 7/8·2 + R/8;
        // for R > 2: 2 + 3R/8 = 3 → R = 8/3: RTTVAR' = 3/4 + 1/6 = 11/12,
        //   SRTT' = 7/4 + 1/3 = 25/12, E_w = 36/12 = 3;
        //   RTO = 0.75 + 0.75·1.875 = 0.75 + 1.40625 = 2.15625 (the draft's 2.156).
        e.weak_sample(8.0 / 3.0, 0.0, UNBOUNDED);
        assert!(close(e.weak.rttvar, 11.0 / 12.0) && close(e.weak.srtt, 25.0 / 12.0));
        assert!(close(e.weak.estimate(), 3.0));
        assert!(close(e.rto, 2.15625), "{}", e.rto);
        assert_eq!((e.rto * 1000.0).round() / 1000.0, 2.156);
    }

    #[test]
    fn first_strong_sample() {
        let mut c = no_aging();
        c.on_ack(&ex(0), &ack(10.0, 0.4));
        // SRTT 0.4, RTTVAR 0.2, E_s = 0.4 + 0.8 = 1.2; RTO = 0.6 + 1 = 1.6.
        assert!(close(c.est.strong.estimate(), 1.2));
        assert!(close(c.est.rto, 1.6));
        assert_eq!(c.est.last_update, Some(10.0));
        assert!(!c.est.weak.is_seeded());
    }

    #[test]
    fn later_strong_sample() {
        let mut c = no_aging();
        c.on_ack(&ex(0), &ack(1.0, 0.4));
        c.on_ack(&ex(0), &ack(2.0, 0.8));
        // RTTVAR = 0.15 + 0.1 = 0.25; SRTT = 0.35 + 0.1 = 0.45; E_s = 1.45.
        assert!(close(c.est.strong.estimate(), 1.45));
        assert!(close(c.est.rto, 0.5 * 1.45 + 0.5 * 1.6));
    }

    #[test]
    fn weak_samples_for_one_and_two_retransmissions_only() {
        let mut c = no_aging();
        c.on_ack(&ex(1), &ack(5.0, 4.0));
        // E_w = 4 + 2 = 6; RTO = 1.5 + 1.5 = 3.
        assert!(close(c.est.rto, 3.0));
        c.on_ack(&ex(2), &ack(9.0, 4.0));
        // RTTVAR = 1.5, SRTT = 4, E_w = 5.5; RTO = 1.375 + 2.25 = 3.625.
        assert!(close(c.est.rto, 3.625));
        assert_eq!(c.est.last_update, Some(9.0));
        for n in [3u8, 4, 20, 255] {
            c.on_ack(&ex(n), &ack(20.0, 1.0));
            assert!(close(c.est.rto, 3.625));
            assert_eq!(c.est.last_update, Some(9.0));
        }
        assert!(!c.est.strong.is_seeded());
    }

    #[test]
    fn unusable_elapsed_is_ignored() {
        let mut c = no_aging();
        for e in [-1.0, f64::NAN, f64::INFINITY] {
            c.on_ack(&ex(0), &ack(1.0, e));
        }
        assert_eq!(c, no_aging());
    }

    #[test]
    fn rto_has_a_floor_but_no_ceiling() {
        let mut c = no_aging();
        for _ in 0..2000 {
            c.on_ack(&ex(0), &ack(1.0, 0.0));
        }
        assert!(close(c.est.rto, MIN_RTO));
        // Thesis §3.3: the estimator is not limited above 32 s (nor at 60).
        // From RTO 2, weak samples of 100 s (K = 1):
        // first: SRTT 100, RTTVAR 50, E_w = 150; RTO = 37.5 + 0.75·2 = 39.
        // second: RTTVAR = 3/4·50 + |100 − 100|/4 = 37.5, SRTT 100,
        //   E_w = 137.5; RTO = 34.375 + 0.75·39 = 34.375 + 29.25 = 63.625.
        let mut c = no_aging();
        c.on_ack(&ex(1), &ack(100.0, 100.0));
        assert!(close(c.est.rto, 39.0), "{}", c.est.rto);
        c.on_ack(&ex(2), &ack(200.0, 100.0));
        assert!(close(c.est.rto, 63.625), "{}", c.est.rto);
        // The next exchange (U = 0) starts at 63.625 s; its backed-off timers
        // stay there: a timer already above the 32 s truncation is kept.
        let mut r = Scripted::new(&[0.0]);
        let mut t = c.start(300.0, 0, &mut r);
        assert!(close(t.initial, 63.625));
        c.expire(363.625, &mut t, &mut r);
        assert!(close(t.current, 63.625));
    }

    #[test]
    fn initial_timer_dithers_between_rto_and_one_and_a_half_rto() {
        let mut c = no_aging();
        let t = c.start(0.0, 0, &mut Scripted::new(&[0.0]));
        assert!(close(t.initial, 2.0) && close(t.current, 2.0));
        assert_eq!(t.retransmissions, 0);
        assert!(close(
            c.start(0.0, 0, &mut Scripted::new(&[1.0])).initial,
            3.0
        ));
        c.est.rto = 0.8;
        assert!(close(
            c.start(0.0, 0, &mut Scripted::new(&[0.5])).initial,
            1.0
        ));
    }

    #[test]
    fn vbf_is_evaluated_on_the_current_timer() {
        assert_eq!(vbf(0.999), 3.0);
        assert_eq!(vbf(1.0), 2.0);
        assert_eq!(vbf(3.0), 2.0);
        assert_eq!(vbf(3.001), 1.5);
        let mut c = no_aging();
        c.est.rto = 0.4;
        let mut r = Scripted::new(&[0.0]);
        let mut t = c.start(0.0, 0, &mut r);
        let mut series = [0.0; 8];
        for s in series.iter_mut() {
            c.expire(0.0, &mut t, &mut r);
            *s = t.current;
        }
        // 0.4 ×3 → 1.2 ×2 → 2.4 ×2 → 4.8 ×1.5 → 7.2 → 10.8 → 16.2 → 24.3 → 32 (truncated).
        let expect = [1.2, 2.4, 4.8, 7.2, 10.8, 16.2, 24.3, 32.0];
        for (s, e) in series.iter().zip(expect) {
            assert!(close(*s, e), "{s} vs {e}");
        }
        c.expire(0.0, &mut t, &mut r);
        assert!(close(t.current, 32.0));
        assert_eq!(t.retransmissions, 9);
        assert!(close(t.initial, 0.4));
    }

    #[test]
    fn backoff_above_the_truncation_under_both_readings() {
        use AboveTruncation::{Keep, Truncate};
        // The draft's rule: ×3 for a timer below 1 s, ×1.5 above 3 s, ×2 in
        // between; "The binary exponential backoff is truncated at 32 seconds."
        // At or below the limit both readings give the same:
        //   20 s: 20 > 3 → ×1.5 = 30, below 32 → 30;
        //   30 s: ×1.5 = 45, truncated → 32;
        //   32 s: ×1.5 = 48, truncated → 32.
        for above in [Keep, Truncate] {
            assert!(close(truncated_backoff(20.0, 32.0, above), 30.0));
            assert!(close(truncated_backoff(30.0, 32.0, above), 32.0));
            assert!(close(truncated_backoff(32.0, 32.0, above), 32.0));
        }
        // A 45 s timer (above the limit): ×1.5 = 67.5, truncated → 32, which
        // would shorten it. `keep`: it stays 45. `truncate`: it becomes 32.
        assert!(close(truncated_backoff(45.0, 32.0, Keep), 45.0));
        assert!(close(truncated_backoff(45.0, 32.0, Truncate), 32.0));

        // Through the parameters, with `cap` = 10: 6 → ×1.5 = 9; 9 → 13.5,
        // truncated → 10 (both readings); a 12 s timer: kept at 12, or cut to 10.
        let with = |above| {
            let p = AlgorithmParams {
                cap: Some(10.0),
                aging: Some(false),
                above_truncation: above,
                ..Default::default()
            };
            Cocoa::from_params("cocoa", &p).unwrap()
        };
        let (default, keep, truncate) = (with(None), with(Some(Keep)), with(Some(Truncate)));
        assert_eq!(default.above_truncation, Keep);
        for c in [&default, &keep, &truncate] {
            assert!(close(c.backoff(6.0), 9.0));
            assert!(close(c.backoff(9.0), 10.0));
        }
        assert!(close(default.backoff(12.0), 12.0));
        assert!(close(keep.backoff(12.0), 12.0));
        assert!(close(truncate.backoff(12.0), 10.0));

        // A whole exchange. One weak sample of 100 s (one retransmission) from
        // RTO 2: SRTT 100, RTTVAR 50, E_w = 100 + 1·50 = 150;
        // RTO = 0.25·150 + 0.75·2 = 37.5 + 1.5 = 39. The next exchange, U = 0,
        // starts at 39 s (> 32); its expiries (39 > 3 → ×1.5 = 58.5 > 32):
        //   keep:     39, 39, 39;
        //   truncate: 32, then 32·1.5 = 48 → 32, 32.
        for (above, expect) in [(Keep, [39.0; 3]), (Truncate, [32.0; 3])] {
            let p = AlgorithmParams {
                aging: Some(false),
                above_truncation: Some(above),
                ..Default::default()
            };
            let mut c = Cocoa::from_params("cocoa", &p).unwrap();
            c.on_ack(&ex(1), &ack(100.0, 100.0));
            assert!(close(c.est.rto, 39.0), "{}", c.est.rto);
            let mut r = Scripted::new(&[0.0]);
            let mut t = c.start(200.0, 0, &mut r);
            assert!(close(t.initial, 39.0));
            for e in expect {
                c.expire(200.0, &mut t, &mut r);
                assert!(close(t.current, e), "{above:?}: {} vs {e}", t.current);
            }
        }
    }

    #[test]
    fn aging_doubles_a_small_rto_cumulatively() {
        let mut c = Cocoa::default();
        c.est.set(0.25, 100.0, UNBOUNDED);
        // 16·0.25 = 4 s: at exactly 104 nothing ("more than").
        c.age(104.0);
        assert!(close(c.est.rto, 0.25));
        // By 113: step at 104 → 0.5; next after 8 more s (112) → 1.0; stop.
        c.age(113.0);
        assert!(close(c.est.rto, 1.0));
        assert_eq!(c.est.last_update, Some(112.0));
    }

    #[test]
    fn aging_pulls_a_large_rto_back_cumulatively() {
        let mut c = Cocoa::default();
        c.est.set(10.0, 0.0, UNBOUNDED);
        // Steps at 40 (→ 6) and 64 (→ 4); the next would be after 80.
        c.age(70.0);
        assert!(close(c.est.rto, 4.0));
        assert_eq!(c.est.last_update, Some(64.0));
        c.age(81.0);
        assert!(close(c.est.rto, 3.0));
        assert_eq!(c.est.last_update, Some(80.0));
        // 3 is not above 3: no more aging, however long.
        c.age(1e6);
        assert!(close(c.est.rto, 3.0));
    }

    #[test]
    fn aging_happens_before_the_initial_timer_and_can_be_switched_off() {
        let mut on = Cocoa::default();
        on.est.set(10.0, 0.0, UNBOUNDED);
        let mut off = Cocoa {
            aging: false,
            ..on.clone()
        };
        let mut r = Scripted::new(&[0.0]);
        assert!(close(on.start(70.0, 0, &mut r).initial, 4.0));
        assert!(close(off.start(70.0, 0, &mut r).initial, 10.0));
        let p = AlgorithmParams {
            aging: Some(false),
            ..Default::default()
        };
        assert!(!Cocoa::from_params("cocoa", &p).unwrap().aging);
        assert!(
            Cocoa::from_params("cocoa", &AlgorithmParams::default())
                .unwrap()
                .aging
        );
    }

    #[test]
    fn aging_clock_starts_at_first_use() {
        let mut c = Cocoa {
            initial_rto: 8.0,
            est: Estimate::new(8.0),
            ..Cocoa::default()
        };
        let mut r = Scripted::new(&[0.0]);
        // First use at t = 1000 starts the clock: no aging yet.
        assert!(close(c.start(1000.0, 0, &mut r).initial, 8.0));
        // 32 s later, aging: 1 + 4 = 5.
        assert!(close(c.start(1032.5, 0, &mut r).initial, 5.0));
    }

    #[test]
    fn blind_rto_with_parallel_exchanges() {
        let mut c = no_aging();
        let mut r = Scripted::new(&[0.0]);
        assert!(close(c.start(0.0, 0, &mut r).initial, 2.0));
        assert!(close(c.start(0.0, 1, &mut r).initial, 4.0));
        assert!(close(c.start(0.0, 2, &mut r).initial, 6.0));
        assert!(close(c.start(0.0, 100, &mut r).initial, MAX_RTO));
        // After the first sample the overall RTO is used whatever k.
        c.on_ack(&ex(0), &ack(1.0, 1.0));
        let rto = c.est.rto;
        assert!(close(c.start(1.0, 3, &mut r).initial, rto));
    }

    #[test]
    fn reset_equals_fresh() {
        let p = AlgorithmParams {
            aging: Some(false),
            ack_timeout: Some(3.0),
            ..Default::default()
        };
        let fresh = Cocoa::from_params("cocoa", &p).unwrap();
        let mut c = fresh.clone();
        let mut r = Scripted::new(&[0.3]);
        let mut t = c.start(0.0, 0, &mut r);
        c.expire(3.0, &mut t, &mut r);
        c.on_ack(&t, &ack(4.0, 4.0));
        assert_ne!(c, fresh);
        c.reset();
        assert_eq!(c, fresh);
    }

    #[test]
    fn parameters() {
        let p = AlgorithmParams {
            first_sample: Some(crate::FirstSample::Draft),
            ..Default::default()
        };
        assert_eq!(
            Cocoa::from_params("cocoa", &p).unwrap_err().field,
            "first_sample"
        );
        let p = AlgorithmParams {
            ack_timeout: Some(1.0),
            ack_random_factor: Some(2.0),
            ..Default::default()
        };
        let mut c = Cocoa::from_params("cocoa", &p).unwrap();
        assert!(close(
            c.start(0.0, 0, &mut Scripted::new(&[1.0])).initial,
            2.0
        ));
    }
}
