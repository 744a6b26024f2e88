//! Per-algorithm parameters, as set in scenario files (spec `docs/spec/algorithms-spec.md` §8).
//!
//! One flat struct holds every tunable any algorithm has; each field is optional
//! and `None` means "the spec's default for this algorithm". An algorithm rejects
//! fields it does not use, so that a typo in a scenario never passes silently.

/// The first-sample rule of FASOR's FastRTO (docs/spec/algorithms-spec.md §6.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FirstSample {
    /// The draft text: `RTTVAR = R/8`, FastRTO = 1.5·R (the thesis' "initk1").
    Draft,
    /// The draft's pseudocode: K = 1 for the first sample, RTTVAR = R/2; 1.5·R.
    Pseudocode,
    /// Plain RFC 6298: RTTVAR = R/2, K = 4, FastRTO = 3·R.
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
        let set: [(&'static str, bool); 6] = [
            ("cap", self.cap.is_some()),
            ("aging", self.aging.is_some()),
            ("first_sample", self.first_sample.is_some()),
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
