//! The disputed readings: where the published sources of an algorithm can be
//! read more than one way, the parameter that picks the reading, its values
//! and the default (the reading the simulations use unless a scenario says
//! otherwise). Spec `docs/spec/algorithms-spec.md` §8; the reasons for each
//! default are in `docs/decisions/algorithms-choices.md`.
//!
//! [`READINGS`] lists them for sensitivity tables; [`apply`] sets one value
//! in an [`AlgorithmParams`] as a scenario file would.

use crate::params::{AboveTruncation, AlgorithmParams, FirstSample, Smoothing};

/// One disputed reading of one or more algorithms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reading {
    /// The scenario parameter that picks the reading.
    pub parameter: &'static str,
    /// The registry names of the algorithms that accept the parameter.
    pub algorithms: &'static [&'static str],
    /// The accepted values, the default among them.
    pub values: &'static [&'static str],
    /// The value used when the parameter is not set.
    pub default: &'static str,
    /// Where the ambiguity is, in one line.
    pub source: &'static str,
}

/// Every disputed reading with a parameter.
pub const READINGS: &[Reading] = &[
    Reading {
        parameter: "smoothing",
        algorithms: &["pcocoa"],
        values: &["undithered", "dithered"],
        default: "undithered",
        source: "pCoCoA paper, Algorithm 2 line 19 (stored, undithered RTO) vs §II.A (RTO_init is the dithered value)",
    },
    Reading {
        parameter: "above_truncation",
        algorithms: &["cocoa", "cocoa-fb1", "cocoa-fb2"],
        values: &["keep", "truncate"],
        default: "keep",
        source: "CoCoA draft: \"The binary exponential backoff is truncated at 32 seconds\" says nothing of a timer already above 32 s",
    },
    Reading {
        parameter: "first_sample",
        algorithms: &[
            "fasor",
            "fasor-slow",
            "fasor-fastslow",
            "fasor-token",
            "fasor-option",
        ],
        values: &["draft", "pseudocode", "initk4"],
        default: "draft",
        source: "FASOR: thesis §7.1.2 text (RTTVAR = R/2K, K = 4) vs Listing 1 (initial K = 1); initk4 = plain RFC 6298 (thesis §8 runs)",
    },
];

/// `p` with `parameter` set to `value` (parsed as a scenario file would), or
/// `None` if the parameter is not a reading of [`READINGS`] or the value is not
/// one of its values.
pub fn apply(p: AlgorithmParams, parameter: &str, value: &str) -> Option<AlgorithmParams> {
    match parameter {
        "smoothing" => Some(AlgorithmParams {
            smoothing: Some(Smoothing::parse(value)?),
            ..p
        }),
        "above_truncation" => Some(AlgorithmParams {
            above_truncation: Some(AboveTruncation::parse(value)?),
            ..p
        }),
        "first_sample" => Some(AlgorithmParams {
            first_sample: Some(FirstSample::parse(value)?),
            ..p
        }),
        _ => None,
    }
}

#[cfg(all(test, feature = "alloc"))]
mod tests {
    use super::*;
    use crate::registry::{BoxedAlgorithm, ALGORITHMS};
    use crate::testutil::Mix;
    use crate::{Ack, Echo};
    use alloc::vec::Vec;

    /// The timers of a fixed run of exchanges (initial timer, then each
    /// backed-off one), as bits. Short echoed samples first (FASOR's first
    /// and second FastRTO, pCoCoA's line 19 below its cap), then samples of
    /// 100 s that take CoCoA's RTO above 32 s and a clean exchange (so that
    /// CoCoA-FB1/FB2 retain nothing), then exchanges with expiries from
    /// there: every reading changes some timer.
    fn trace(mut a: BoxedAlgorithm) -> Vec<u64> {
        const RUN: [(u8, f64); 9] = [
            (0, 1.0),
            (2, 0.5),
            (0, 0.4),
            (1, 0.6),
            (1, 100.0),
            (0, 100.0),
            (2, 1.0),
            (3, 1.0),
            (0, 1.0),
        ];
        let mut rng = Mix(11);
        let mut out = Vec::new();
        let mut now = 0.0;
        for _ in 0..3 {
            for (n, rtt) in RUN {
                let mut ex = a.start(now, 0, &mut rng);
                out.push(ex.initial.to_bits());
                for _ in 0..n {
                    a.expire(now, &mut ex, &mut rng);
                    out.push(ex.current.to_bits());
                }
                now += 1000.0;
                let echo = Some(Echo { ordinal: n, rtt });
                let ack = Ack {
                    now,
                    elapsed: rtt,
                    echo,
                    piggybacked: true,
                };
                a.on_ack(&ex, &ack);
            }
        }
        out
    }

    #[test]
    fn every_value_parses_and_unknown_ones_do_not() {
        for r in READINGS {
            assert!(r.values.contains(&r.default), "{}", r.parameter);
            for v in r.values {
                assert!(apply(AlgorithmParams::default(), r.parameter, v).is_some());
            }
            assert_eq!(
                apply(AlgorithmParams::default(), r.parameter, "sometimes"),
                None
            );
        }
        assert_eq!(apply(AlgorithmParams::default(), "cap", "keep"), None);
    }

    #[test]
    fn exactly_the_listed_algorithms_accept_each_reading() {
        for r in READINGS {
            let p = apply(AlgorithmParams::default(), r.parameter, r.default).unwrap();
            for a in ALGORITHMS {
                let accepted = (a.build)(&p).is_ok();
                assert_eq!(
                    accepted,
                    r.algorithms.contains(&a.name),
                    "{} {}",
                    r.parameter,
                    a.name
                );
            }
        }
    }

    #[test]
    fn the_default_is_what_unset_parameters_do_and_the_others_differ() {
        for r in READINGS {
            for name in r.algorithms {
                let build = crate::registry::find(name).unwrap().build;
                let unset = trace(build(&AlgorithmParams::default()).unwrap());
                for v in r.values {
                    let p = apply(AlgorithmParams::default(), r.parameter, v).unwrap();
                    let t = trace(build(&p).unwrap());
                    assert_eq!(t == unset, *v == r.default, "{name}: {} = {v}", r.parameter);
                }
            }
        }
    }
}
