//! The two-state bursty link-error model (spec `docs/spec/testbed-spec.md` §1.1).
//!
//! A good and a bad state alternate in time, independently of traffic. Each
//! sojourn is exponentially distributed (mean 0.4 s good, 0.1 s bad), truncated to
//! [0.06, 1.2] s and [0.03, 0.3] s. **Decision** (`docs/decisions/testbed-choices.md`, "Link
//! errors"): "truncated" means *clamped* — an exponential draw below the lower
//! bound lasts the lower bound, one above the upper bound the upper bound
//! ([`Truncation::Clamp`]). Clamping keeps the mean sojourns within 4 % of the
//! published 0.4 s and 0.1 s and the long-run loss at the published ≈ 10 % and
//! ≈ 18 % (10.25 % and 17.99 %); the other reading, the exponential conditioned
//! on the interval (a redraw until the value falls inside,
//! [`Truncation::Redraw`]), lengthens the mean bad sojourn to 0.1105 s and
//! gives 11.04 % and 19.23 %. A packet leaving the serialiser is lost with the
//! packet-error rate of the state the link is in at that instant. The state
//! process and the loss draws use two separate random streams, so the state
//! sequence does not depend on how many packets cross the link.

use serde::{Deserialize, Serialize};

use crate::rng::SimRng;
use crate::time::{from_secs, Nanos};

/// The error profiles of the published evaluations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum ErrorProfile {
    /// No link errors.
    #[default]
    None,
    /// 2 % constant, no state alternation.
    Low,
    /// 0 % good / 50 % bad (≈ 10 % average).
    Medium,
    /// 2 % good / 80 % bad (≈ 18 % average).
    High,
}

impl ErrorProfile {
    /// All profiles, in order.
    pub const ALL: [ErrorProfile; 4] = [
        ErrorProfile::None,
        ErrorProfile::Low,
        ErrorProfile::Medium,
        ErrorProfile::High,
    ];

    /// Parses `none|low|medium|high`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "none" => Some(ErrorProfile::None),
            "low" => Some(ErrorProfile::Low),
            "medium" => Some(ErrorProfile::Medium),
            "high" => Some(ErrorProfile::High),
            _ => None,
        }
    }

    /// The profile's name.
    pub fn name(self) -> &'static str {
        match self {
            ErrorProfile::None => "none",
            ErrorProfile::Low => "low",
            ErrorProfile::Medium => "medium",
            ErrorProfile::High => "high",
        }
    }

    /// Packet-error rates in the good and bad state, and whether states alternate.
    pub fn rates(self) -> (f64, f64, bool) {
        match self {
            ErrorProfile::None => (0.0, 0.0, false),
            ErrorProfile::Low => (0.02, 0.02, false),
            ErrorProfile::Medium => (0.0, 0.5, true),
            ErrorProfile::High => (0.02, 0.8, true),
        }
    }

    /// The long-run average packet-error rate of the model as run
    /// ([`Truncation::Clamp`]).
    pub fn average_loss(self) -> f64 {
        self.average_loss_with(Truncation::Clamp)
    }

    /// The long-run average packet-error rate under truncation rule `rule`:
    /// each state's rate weighted by its mean sojourn.
    pub fn average_loss_with(self, rule: Truncation) -> f64 {
        let (good, bad, alternating) = self.rates();
        if !alternating {
            return good;
        }
        let g = GOOD.mean(rule);
        let b = BAD.mean(rule);
        (good * g + bad * b) / (g + b)
    }
}

/// How an exponential sojourn is truncated to its interval `[lo, hi]`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Truncation {
    /// A draw outside the interval is set to the nearer bound: the bounds carry
    /// probability mass `1 − e^(−lo/m)` and `e^(−hi/m)`. The model's rule.
    #[default]
    Clamp,
    /// A draw outside the interval is drawn again: the exponential conditioned
    /// on the interval (sampled exactly by inverting its CDF). Kept to measure
    /// what the rule changes (`examples/error_profiles.rs`, the ablation of
    /// `docs/calibration.md`).
    Redraw,
    /// No truncation: the plain exponential (for the ablation only; the
    /// sources truncate).
    None,
}

/// The properties of the error process that the sources leave open, one
/// field each, for the ablation of `docs/calibration.md` ("The link-error
/// model, property by property"). The default is the model as run; every
/// other value is a reading no source supports better, kept so that what
/// each property does to the error-prone rows can be measured. Set in a
/// dumbbell scenario as `[network.error_structure]`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ErrorStructure {
    /// How sojourns are truncated (the sources: "truncated at both ends").
    pub truncation: Truncation,
    /// Which directions of the link have an error process, and whether they
    /// share one state sequence.
    pub directions: ErrorDirections,
    /// The state at time 0.
    pub start: ErrorStart,
    /// When a packet's fate is decided.
    pub read_at: ErrorReadAt,
    /// Whether the state's error rate is per packet or per byte.
    pub unit: ErrorUnit,
}

impl ErrorStructure {
    /// Whether this is the model as run (so that scenario files and results
    /// that do not set it serialise as before).
    pub fn is_default(&self) -> bool {
        *self == ErrorStructure::default()
    }
}

/// Which directions have an error process.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorDirections {
    /// Both, each with its own state sequence (the model).
    #[default]
    Independent,
    /// Both, in the same state at every instant (one state sequence; the
    /// loss draws stay separate).
    Shared,
    /// The uplink (clients → server) only.
    UpOnly,
    /// The downlink (server → clients) only.
    DownOnly,
}

/// The state of the process at time 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ErrorStart {
    /// Good, a fresh good sojourn starting at 0 (the model).
    #[default]
    Good,
    /// Bad with the long-run probability of the bad state (mean bad sojourn
    /// over the sum of both means), then a fresh sojourn of that state.
    Stationary,
}

/// When the state decides a packet's fate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ErrorReadAt {
    /// When serialisation ends, after the buffer (the model; the spec's
    /// order queue → serialise → errors → delay).
    #[default]
    End,
    /// When serialisation starts.
    Start,
    /// When the packet reaches the router, before the buffer: a lost packet
    /// takes neither buffer space nor link time.
    Arrival,
}

/// What the state's error rate applies to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ErrorUnit {
    /// Each packet is lost with the state's rate (the sources' "packet-error
    /// rate"; the model).
    #[default]
    Packet,
    /// Each byte is lost independently, at the rate that loses a packet of
    /// [`BYTE_REFERENCE`] bytes with the state's rate: a packet of `n` bytes
    /// is lost with `1 − (1 − p)^(n / BYTE_REFERENCE)`.
    Byte,
}

/// The packet size (IP bytes) at which [`ErrorUnit::Byte`] loses a packet
/// with the state's own rate: 65, halfway between the 38-byte request and
/// the 93-byte response of the published workload.
pub const BYTE_REFERENCE: f64 = 65.0;

/// An exponential distribution truncated to `[lo, hi]` (seconds).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TruncatedExp {
    /// Mean of the untruncated exponential.
    pub mean: f64,
    /// Lower bound.
    pub lo: f64,
    /// Upper bound.
    pub hi: f64,
}

/// Good-state sojourns.
pub const GOOD: TruncatedExp = TruncatedExp {
    mean: 0.4,
    lo: 0.06,
    hi: 1.2,
};
/// Bad-state sojourns.
pub const BAD: TruncatedExp = TruncatedExp {
    mean: 0.1,
    lo: 0.03,
    hi: 0.3,
};

impl TruncatedExp {
    /// A sample under `rule`, by inversion from one uniform `u` in `[0, 1)`:
    /// the exponential's quantile `−m·ln(1 − u)` clamped, or the conditioned
    /// law's quantile.
    pub fn sample(&self, rule: Truncation, u: f64) -> f64 {
        let x = match rule {
            Truncation::Clamp => -self.mean * (1.0 - u).ln(),
            Truncation::Redraw => {
                let a = (-self.lo / self.mean).exp();
                let b = (-self.hi / self.mean).exp();
                -self.mean * (a - u * (a - b)).ln()
            }
            Truncation::None => return -self.mean * (1.0 - u).ln(),
        };
        x.clamp(self.lo, self.hi)
    }

    /// The mean of the truncated distribution under `rule`.
    pub fn mean(&self, rule: Truncation) -> f64 {
        let a = (-self.lo / self.mean).exp();
        let b = (-self.hi / self.mean).exp();
        match rule {
            // E[min(max(X, lo), hi)] = lo + ∫_lo^hi P(X > x) dx
            Truncation::Clamp => self.lo + self.mean * (a - b),
            Truncation::Redraw => self.mean + (self.lo * a - self.hi * b) / (a - b),
            Truncation::None => self.mean,
        }
    }
}

/// One link direction's error process.
#[derive(Clone, Debug)]
pub struct LinkErrors {
    good_rate: f64,
    bad_rate: f64,
    alternating: bool,
    rule: Truncation,
    /// [`ErrorUnit::Byte`]: the rate applies per byte.
    per_byte: bool,
    bad: bool,
    /// When the current sojourn began and when it ends.
    since: Nanos,
    switch_at: Nanos,
    state_rng: SimRng,
    loss_rng: SimRng,
    /// Completed sojourns (for tests): (was bad, length in ns).
    pub sojourns: SojournLog,
}

/// Statistics of completed sojourns, for checking the model.
#[derive(Clone, Debug, Default)]
pub struct SojournLog {
    /// Count and total length of good sojourns.
    pub good: (u64, Nanos),
    /// Count and total length of bad sojourns.
    pub bad: (u64, Nanos),
    /// Shortest and longest good sojourn.
    pub good_range: (Nanos, Nanos),
    /// Shortest and longest bad sojourn.
    pub bad_range: (Nanos, Nanos),
    /// Good sojourns that lasted exactly the lower and the upper bound.
    pub good_at_bounds: (u64, u64),
    /// Bad sojourns that lasted exactly the lower and the upper bound.
    pub bad_at_bounds: (u64, u64),
}

impl SojournLog {
    fn record(&mut self, bad: bool, len: Nanos) {
        let (count, range, at_bounds, dist) = if bad {
            (
                &mut self.bad,
                &mut self.bad_range,
                &mut self.bad_at_bounds,
                BAD,
            )
        } else {
            (
                &mut self.good,
                &mut self.good_range,
                &mut self.good_at_bounds,
                GOOD,
            )
        };
        if len == from_secs(dist.lo) {
            at_bounds.0 += 1;
        } else if len == from_secs(dist.hi) {
            at_bounds.1 += 1;
        }
        if count.0 == 0 {
            *range = (len, len);
        } else {
            range.0 = range.0.min(len);
            range.1 = range.1.max(len);
        }
        count.0 += 1;
        count.1 += len;
    }
}

impl LinkErrors {
    /// The process for `profile`, starting in the good state at time 0, with
    /// the model's truncation rule ([`Truncation::Clamp`]).
    pub fn new(profile: ErrorProfile, state_seed: u64, loss_seed: u64) -> Self {
        Self::with_truncation(profile, Truncation::Clamp, state_seed, loss_seed)
    }

    /// The process for `profile` with sojourns truncated by `rule`.
    pub fn with_truncation(
        profile: ErrorProfile,
        rule: Truncation,
        state_seed: u64,
        loss_seed: u64,
    ) -> Self {
        let structure = ErrorStructure {
            truncation: rule,
            ..ErrorStructure::default()
        };
        Self::with_structure(profile, &structure, state_seed, loss_seed)
    }

    /// The process for `profile` built as `structure` says (its truncation,
    /// start state and unit; the directions and the instant a packet's fate
    /// is read are the link's business). The default structure is
    /// [`LinkErrors::new`].
    pub fn with_structure(
        profile: ErrorProfile,
        structure: &ErrorStructure,
        state_seed: u64,
        loss_seed: u64,
    ) -> Self {
        let (good_rate, bad_rate, alternating) = profile.rates();
        let rule = structure.truncation;
        let mut e = LinkErrors {
            good_rate,
            bad_rate,
            alternating,
            rule,
            per_byte: structure.unit == ErrorUnit::Byte,
            bad: false,
            since: 0,
            switch_at: Nanos::MAX,
            state_rng: SimRng::new(state_seed),
            loss_rng: SimRng::new(loss_seed),
            sojourns: SojournLog::default(),
        };
        if alternating {
            if structure.start == ErrorStart::Stationary {
                let (g, b) = (GOOD.mean(rule), BAD.mean(rule));
                e.bad = e.state_rng.uniform() < b / (g + b);
            }
            let dist = if e.bad { BAD } else { GOOD };
            e.switch_at = from_secs(dist.sample(rule, e.state_rng.uniform()));
        }
        e
    }

    /// Advances the state process to `now`.
    fn advance(&mut self, now: Nanos) {
        while self.switch_at <= now {
            let ended = self.switch_at;
            self.sojourns.record(self.bad, ended - self.since);
            self.bad = !self.bad;
            let dist = if self.bad { BAD } else { GOOD };
            self.since = ended;
            self.switch_at = ended + from_secs(dist.sample(self.rule, self.state_rng.uniform()));
        }
    }

    /// Whether a packet leaving the serialiser at `now` is lost.
    pub fn loses(&mut self, now: Nanos) -> bool {
        self.loses_sized(now, BYTE_REFERENCE as u64)
    }

    /// Whether a packet of `ip_bytes` whose fate is read at `now` is lost:
    /// with the state's rate, or with [`ErrorUnit::Byte`] the rate scaled to
    /// its size.
    #[inline]
    pub fn loses_sized(&mut self, now: Nanos, ip_bytes: u64) -> bool {
        if self.alternating {
            self.advance(now);
        }
        let mut rate = if self.bad {
            self.bad_rate
        } else {
            self.good_rate
        };
        if self.per_byte && rate > 0.0 {
            rate = 1.0 - (1.0 - rate).powf(ip_bytes as f64 / BYTE_REFERENCE);
        }
        rate > 0.0 && self.loss_rng.uniform() < rate
    }

    /// Whether the link is in the bad state at `now`.
    pub fn is_bad(&mut self, now: Nanos) -> bool {
        if self.alternating {
            self.advance(now);
        }
        self.bad
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{to_secs, SECOND};

    const CLAMP: Truncation = Truncation::Clamp;
    const REDRAW: Truncation = Truncation::Redraw;

    #[test]
    fn truncated_means_hand_computed() {
        // clamped: lo + m·(e^(-lo/m) - e^(-hi/m))
        //   good 0.06 + 0.4·(e^-0.15 - e^-3) = 0.06 + 0.4·(0.860708 - 0.049787)
        //   bad  0.03 + 0.1·(e^-0.3 - e^-3)  = 0.03 + 0.1·(0.740818 - 0.049787)
        assert!(
            (GOOD.mean(CLAMP) - 0.384368).abs() < 1e-6,
            "{}",
            GOOD.mean(CLAMP)
        );
        assert!(
            (BAD.mean(CLAMP) - 0.099103).abs() < 1e-6,
            "{}",
            BAD.mean(CLAMP)
        );
        // conditioned: m + (lo·e^(-lo/m) - hi·e^(-hi/m)) / (e^(-lo/m) - e^(-hi/m))
        assert!((GOOD.mean(REDRAW) - 0.39001).abs() < 1e-4);
        assert!((BAD.mean(REDRAW) - 0.110548).abs() < 1e-4);
        // averages, model as run: medium 0.5·0.099103 / 0.483471,
        // high (0.02·0.384368 + 0.8·0.099103) / 0.483471
        assert!((ErrorProfile::Medium.average_loss() - 0.102489).abs() < 1e-5);
        assert!((ErrorProfile::High.average_loss() - 0.179887).abs() < 1e-5);
        assert!((ErrorProfile::Medium.average_loss_with(REDRAW) - 0.11041).abs() < 1e-4);
        assert!((ErrorProfile::High.average_loss_with(REDRAW) - 0.19229).abs() < 1e-4);
        assert_eq!(ErrorProfile::Low.average_loss(), 0.02);
        assert_eq!(ErrorProfile::None.average_loss(), 0.0);
    }

    /// Clamping: a draw of the untruncated exponential below the lower bound
    /// lasts exactly the lower bound, one above the upper bound exactly the
    /// upper bound; in between the exponential's own quantile.
    #[test]
    fn clamped_sampling_hand_computed() {
        // -0.1·ln(0.75) = 0.0288 s < 0.03: the lower bound
        assert_eq!(BAD.sample(CLAMP, 0.25), 0.03);
        // the exponential's median, 0.1·ln 2, lies inside [0.03, 0.3]
        assert!((BAD.sample(CLAMP, 0.5) - 0.1 * 2f64.ln()).abs() < 1e-15);
        // -0.1·ln(0.04) = 0.3219 s > 0.3: the upper bound
        assert_eq!(BAD.sample(CLAMP, 0.96), 0.3);
        // good: -0.4·ln(0.9) = 0.0421 s < 0.06; -0.4·ln(0.04) = 1.2876 s > 1.2
        assert_eq!(GOOD.sample(CLAMP, 0.1), 0.06);
        assert_eq!(GOOD.sample(CLAMP, 0.96), 1.2);
        assert!((GOOD.sample(CLAMP, 0.5) - 0.4 * 2f64.ln()).abs() < 1e-15);
    }

    #[test]
    fn conditioned_sampling_covers_exactly_the_interval() {
        assert!((GOOD.sample(REDRAW, 0.0) - 0.06).abs() < 1e-12);
        assert!((GOOD.sample(REDRAW, 1.0 - 1e-15) - 1.2).abs() < 1e-9);
        // the median of the conditioned law is where its CDF is 1/2
        let m = BAD.sample(REDRAW, 0.5);
        let a = (-0.3f64).exp();
        let b = (-3.0f64).exp();
        let cdf = (a - (-m / 0.1).exp()) / (a - b);
        assert!((cdf - 0.5).abs() < 1e-12);
    }

    /// The process as run puts the clamped mass on the bounds: of n bad
    /// sojourns a fraction 1 − e^(−0.3) = 0.25918 last exactly 0.03 s and
    /// e^(−3) = 0.04979 exactly 0.3 s; of the good ones 1 − e^(−0.15) =
    /// 0.13929 last 0.06 s and e^(−3) 1.2 s. Tolerance: five binomial
    /// standard deviations, √(p(1 − p)/n) with n ≥ 100 000 (at most 0.0069).
    #[test]
    fn clamped_mass_sits_on_the_bounds() {
        let mut e = LinkErrors::new(ErrorProfile::High, 21, 22);
        e.is_bad(100_000 * SECOND);
        let log = &e.sojourns;
        let n_good = log.good.0 as f64;
        let n_bad = log.bad.0 as f64;
        assert!(n_good > 100_000.0 && n_bad > 100_000.0);
        let check = |count: u64, n: f64, p: f64| {
            let tol = 5.0 * (p * (1.0 - p) / n).sqrt();
            let f = count as f64 / n;
            assert!((f - p).abs() < tol, "fraction {f}, expected {p} ± {tol}");
        };
        check(log.bad_at_bounds.0, n_bad, 1.0 - (-0.3f64).exp());
        check(log.bad_at_bounds.1, n_bad, (-3.0f64).exp());
        check(log.good_at_bounds.0, n_good, 1.0 - (-0.15f64).exp());
        check(log.good_at_bounds.1, n_good, (-3.0f64).exp());
    }

    /// Over a long run (one packet every 10 ms for two simulated days), the
    /// measured loss rate of every profile and both truncation rules is within
    /// one percentage point of its analytic average, and no sojourn leaves its
    /// truncation bounds.
    #[test]
    fn long_run_loss_matches_the_analytic_average() {
        for rule in [CLAMP, REDRAW] {
            for profile in ErrorProfile::ALL {
                let mut e = LinkErrors::with_truncation(profile, rule, 11, 12);
                let step = SECOND / 100;
                let n = 17_280_000u64;
                let lost = (1..=n).filter(|i| e.loses(i * step)).count();
                let measured = lost as f64 / n as f64;
                let expected = profile.average_loss_with(rule);
                assert!(
                    (measured - expected).abs() < 0.01,
                    "{profile:?} {rule:?}: measured {measured}, analytic {expected}"
                );
                let log = &e.sojourns;
                if profile == ErrorProfile::Medium || profile == ErrorProfile::High {
                    assert!(log.good.0 > 100_000 && log.bad.0 > 100_000);
                    let (glo, ghi) = log.good_range;
                    let (blo, bhi) = log.bad_range;
                    assert!(to_secs(glo) >= 0.06 - 1e-9 && to_secs(ghi) <= 1.2 + 1e-9);
                    assert!(to_secs(blo) >= 0.03 - 1e-9 && to_secs(bhi) <= 0.3 + 1e-9);
                    // mean sojourns match the truncated means within 1 %
                    let gmean = to_secs(log.good.1) / log.good.0 as f64;
                    let bmean = to_secs(log.bad.1) / log.bad.0 as f64;
                    assert!((gmean / GOOD.mean(rule) - 1.0).abs() < 0.01, "{gmean}");
                    assert!((bmean / BAD.mean(rule) - 1.0).abs() < 0.01, "{bmean}");
                } else {
                    assert_eq!(log.good.0 + log.bad.0, 0, "{profile:?} never alternates");
                }
            }
        }
    }

    /// The ablation's readings of the process, by hand: the untruncated
    /// exponential's mean and quantile; a stationary start is bad with
    /// probability 0.099103 / 0.483471 = 0.20498 (clamped means), checked over
    /// 20 000 seeds within five binomial standard deviations (0.0143); the
    /// per-byte unit loses a 65-byte packet with the state's rate and a
    /// 130-byte one with 1 − (1 − p)² (low profile: 1 − 0.98² = 0.0396).
    #[test]
    fn ablation_readings_hand_computed() {
        assert_eq!(BAD.mean(Truncation::None), 0.1);
        // −0.1·ln(0.04) = 0.32189 s: past the 0.3 s bound, kept
        assert!((BAD.sample(Truncation::None, 0.96) - 0.321888).abs() < 1e-6);
        let stationary = ErrorStructure {
            start: ErrorStart::Stationary,
            ..ErrorStructure::default()
        };
        let n = 20_000u64;
        let bad = (0..n)
            .filter(|&seed| {
                LinkErrors::with_structure(ErrorProfile::High, &stationary, seed, 1).is_bad(0)
            })
            .count() as f64
            / n as f64;
        let p = 0.099103 / 0.483471;
        assert!(
            (bad - p).abs() < 5.0 * (p * (1.0 - p) / n as f64).sqrt(),
            "{bad}"
        );
        assert!(!LinkErrors::new(ErrorProfile::High, 7, 1).is_bad(0));
        let per_byte = ErrorStructure {
            unit: ErrorUnit::Byte,
            ..ErrorStructure::default()
        };
        for (bytes, expected) in [(65u64, 0.02), (130, 1.0 - 0.98f64.powi(2))] {
            let mut e = LinkErrors::with_structure(ErrorProfile::Low, &per_byte, 1, 2);
            let n = 1_000_000u64;
            let lost = (0..n).filter(|&i| e.loses_sized(i, bytes)).count() as f64 / n as f64;
            let sd = (expected * (1.0 - expected) / n as f64).sqrt();
            assert!((lost - expected).abs() < 5.0 * sd, "{bytes} B: {lost}");
        }
    }

    #[test]
    fn state_process_ignores_traffic() {
        // Two processes with the same seeds, one probed ten times more often,
        // are in the same state at every common instant.
        let mut a = LinkErrors::new(ErrorProfile::High, 5, 6);
        let mut b = LinkErrors::new(ErrorProfile::High, 5, 6);
        for i in 0..100_000u64 {
            let t = i * SECOND / 10;
            for k in 0..10 {
                b.loses(t + k * SECOND / 100);
            }
            assert_eq!(
                a.is_bad(t + 9 * SECOND / 100),
                b.is_bad(t + 9 * SECOND / 100)
            );
        }
    }
}
