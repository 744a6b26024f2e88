//! Per-algorithm parameters, as set in scenario files (spec `docs/spec/algorithms-spec.md` §8).
//!
//! One flat struct holds every tunable any algorithm has; each field is optional
//! and `None` means "the spec's default for this algorithm". An algorithm rejects
//! fields it does not use, so that a typo in a scenario never passes silently.

/// The first-sample rule of FASOR's FastRTO (docs/spec/algorithms-spec.md §6.1),
/// parameter `first_sample`; default [`FirstSample::Draft`]. The sources
/// agree on FastRTO = 1.5·R after the first sample R but not on how: in the
/// thesis text (§7.1.2) "now the RTTVAR is set to measurement/2K, where K is
/// 4"; its Listing 1 (§7.2, adapted from the FASOR draft's pseudocode) keeps
/// RFC 6298's `RTTVAR = R/2` and uses "initial K = 1". The two differ from
/// the second sample on (RTTVAR R/8 against R/2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FirstSample {
    /// The default: the thesis text (§7.1.2), which the spec (§6.1) takes as
    /// the draft's text: `RTTVAR = R/2K = R/8` with K = 4, FastRTO = 1.5·R
    /// (the thesis' "initk1").
    Draft,
    /// The pseudocode (thesis Listing 1, `unambiguous_ack`): RFC 6298's
    /// `RTTVAR = R/2` with K = 1 for the first sample only; FastRTO = 1.5·R.
    Pseudocode,
    /// Plain RFC 6298: `RTTVAR = R/2`, K = 4, FastRTO = 3·R (the thesis'
    /// "FASOR initk4", and the development variants Slow and FastSlow as
    /// the thesis ran them, §8).
    InitK4,
}

impl FirstSample {
    /// Parses `"draft"`, `"pseudocode"` or `"initk4"` (also `"initk1"` = draft).
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "draft" | "initk1" => Some(FirstSample::Draft),
            "pseudocode" => Some(FirstSample::Pseudocode),
            "initk4" => Some(FirstSample::InitK4),
            _ => None,
        }
    }
    /// The name accepted by [`FirstSample::parse`].
    pub fn name(self) -> &'static str {
        match self {
            FirstSample::Draft => "draft",
            FirstSample::Pseudocode => "pseudocode",
            FirstSample::InitK4 => "initk4",
        }
    }
}

/// Which RTO pCoCoA's Algorithm 2 line 19 smooths the new SRTO with
/// (`RTO = (1-δ)·SRTO + δ·RTO`), parameter `smoothing`; default
/// [`Smoothing::Undithered`]. The paper's algorithms store and smooth the
/// undithered value (Algorithm 1 lines 7 and 26), while its §II.A calls the
/// dithered value `RTO_init`, the name line 19 uses
/// (`docs/decisions/algorithms-choices.md`, "Second audit", item 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Smoothing {
    /// The default: the previous undithered RTO (the estimator's own output).
    /// Under a constant RTT the RTO settles at SRTO.
    Undithered,
    /// The dithered initial timer of the exchange the sample comes from (with
    /// one exchange at a time, the previous exchange's `RTO_init`). Under a
    /// constant RTT the RTO settles at 4/3·SRTO on average.
    Dithered,
}

impl Smoothing {
    /// Parses `"undithered"` or `"dithered"`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "undithered" => Some(Smoothing::Undithered),
            "dithered" => Some(Smoothing::Dithered),
            _ => None,
        }
    }
    /// The name accepted by [`Smoothing::parse`].
    pub fn name(self) -> &'static str {
        match self {
            Smoothing::Undithered => "undithered",
            Smoothing::Dithered => "dithered",
        }
    }
}

/// What CoCoA's backoff does with a timer already above the 32 s truncation
/// (reachable because the overall RTO is not bounded), parameter
/// `above_truncation`; default [`AboveTruncation::Keep`]. The draft says only
/// "The binary exponential backoff is truncated at 32 seconds" (see
/// [`crate::cocoa::truncated_backoff`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AboveTruncation {
    /// The default: such a timer stays as it is, neither raised nor shortened
    /// (`max(t, min(t·vbf(t), limit))`).
    Keep,
    /// Every backed-off timer is truncated, so such a timer is cut to the
    /// limit (`min(t·vbf(t), limit)`).
    Truncate,
}

impl AboveTruncation {
    /// Parses `"keep"` or `"truncate"`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "keep" => Some(AboveTruncation::Keep),
            "truncate" => Some(AboveTruncation::Truncate),
            _ => None,
        }
    }
    /// The name accepted by [`AboveTruncation::parse`].
    pub fn name(self) -> &'static str {
        match self {
            AboveTruncation::Keep => "keep",
            AboveTruncation::Truncate => "truncate",
        }
    }
}

/// The longest duration a parameter may give (seconds): 10⁷ s, the bound of
/// every duration coapcc takes (`coapcc::duration`), far below where a timer
/// deadline in nanoseconds overflows.
pub const MAX_SECONDS: f64 = 1e7;

/// The largest multiplier a factor parameter may give (`ack_random_factor`,
/// `slowrto_factor`): with [`MAX_SECONDS`] it keeps every timer below the
/// overflow of a nanosecond deadline (1.8·10¹⁰ s).
pub const MAX_FACTOR: f64 = 1000.0;

/// Tunables of the algorithms; `None` = the spec's default.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AlgorithmParams {
    /// Upper bound on any timer (seconds): Default CoAP 60, FASOR 60, CoCoA's
    /// backoff truncation 32, CoCoA+'s initial-RTO cap 60.
    pub cap: Option<f64>,
    /// CoCoA / CoCoA+ aging on or off (spec default: on).
    pub aging: Option<bool>,
    /// FASOR first-sample rule.
    pub first_sample: Option<FirstSample>,
    /// pCoCoA: which RTO Algorithm 2 line 19 smooths with.
    pub smoothing: Option<Smoothing>,
    /// CoCoA, CoCoA-FB1/FB2: the backoff of a timer above the truncation.
    pub above_truncation: Option<AboveTruncation>,
    /// FASOR SLOWRTO_FACTOR (default 1.5).
    pub slowrto_factor: Option<f64>,
    /// ACK_TIMEOUT (default 2 s) for algorithms that start from it.
    pub ack_timeout: Option<f64>,
    /// ACK_RANDOM_FACTOR (default 1.5).
    pub ack_random_factor: Option<f64>,
}

/// A parameter that an algorithm does not accept, or a value out of range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParamError {
    /// The algorithm's name.
    pub algorithm: &'static str,
    /// The offending field.
    pub field: &'static str,
    /// What was expected.
    pub expected: &'static str,
}

impl core::fmt::Display for ParamError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "algorithm `{}`: parameter `{}`: {}",
            self.algorithm, self.field, self.expected
        )
    }
}

impl AlgorithmParams {
    /// Fails if any field outside `allowed` is set, or a set number is out of
    /// range: durations (`cap`, `ack_timeout`) finite, positive and at most
    /// [`MAX_SECONDS`]; factors finite, positive (`ack_random_factor` at least
    /// 1) and at most [`MAX_FACTOR`].
    pub fn check(
        &self,
        algorithm: &'static str,
        allowed: &[&'static str],
    ) -> Result<(), ParamError> {
        let set: [(&'static str, bool); 8] = [
            ("cap", self.cap.is_some()),
            ("aging", self.aging.is_some()),
            ("first_sample", self.first_sample.is_some()),
            ("smoothing", self.smoothing.is_some()),
            ("above_truncation", self.above_truncation.is_some()),
            ("slowrto_factor", self.slowrto_factor.is_some()),
            ("ack_timeout", self.ack_timeout.is_some()),
            ("ack_random_factor", self.ack_random_factor.is_some()),
        ];
        for (field, is_set) in set {
            if is_set && !allowed.contains(&field) {
                return Err(ParamError {
                    algorithm,
                    field,
                    expected: "not a parameter of this algorithm",
                });
            }
        }
        let within = |field, v: Option<f64>, lo_excl: f64, hi: f64, expected| match v {
            Some(x) if !(x.is_finite() && x > lo_excl && x <= hi) => Err(ParamError {
                algorithm,
                field,
                expected,
            }),
            _ => Ok(()),
        };
        const SECONDS: &str = "a finite number of seconds greater than 0 and at most 1e7";
        within("cap", self.cap, 0.0, MAX_SECONDS, SECONDS)?;
        within("ack_timeout", self.ack_timeout, 0.0, MAX_SECONDS, SECONDS)?;
        within(
            "slowrto_factor",
            self.slowrto_factor,
            0.0,
            MAX_FACTOR,
            "a finite number greater than 0 and at most 1000",
        )?;
        match self.ack_random_factor {
            Some(x) if !(x.is_finite() && (1.0..=MAX_FACTOR).contains(&x)) => Err(ParamError {
                algorithm,
                field: "ack_random_factor",
                expected: "a finite number from 1 to 1000",
            }),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: &[&str] = &["cap", "slowrto_factor", "ack_timeout", "ack_random_factor"];

    fn field_of(p: AlgorithmParams) -> Option<&'static str> {
        p.check("x", ALL).err().map(|e| e.field)
    }

    #[test]
    fn durations_and_factors_are_bounded() {
        let ok = AlgorithmParams {
            cap: Some(1e7),
            ack_timeout: Some(1e7),
            slowrto_factor: Some(1000.0),
            ack_random_factor: Some(1.0),
            ..Default::default()
        };
        assert_eq!(field_of(ok), None);
        for bad in [1e7 * 1.000_001, 1e30, f64::INFINITY, f64::NAN, 0.0, -1.0] {
            let p = |f: fn(&mut AlgorithmParams, f64)| {
                let mut p = ok;
                f(&mut p, bad);
                p
            };
            assert_eq!(field_of(p(|p, v| p.cap = Some(v))), Some("cap"), "{bad}");
            assert_eq!(
                field_of(p(|p, v| p.ack_timeout = Some(v))),
                Some("ack_timeout"),
                "{bad}"
            );
        }
        for bad in [1000.5, 1e30, f64::NAN, 0.5] {
            let mut p = ok;
            p.ack_random_factor = Some(bad);
            assert_eq!(field_of(p), Some("ack_random_factor"), "{bad}");
        }
        let mut p = ok;
        p.slowrto_factor = Some(1e30);
        assert_eq!(field_of(p), Some("slowrto_factor"));
    }
}
