//! The registry: every algorithm by its name (spec `algorithms.md` §8).
//!
//! Adding an algorithm is one new module and one entry in [`ALGORITHMS`]; the
//! command line, the scenario files and the reports list what is here.

use alloc::boxed::Box;

use crate::{AlgorithmParams, CongestionControl, ParamError};

/// A boxed algorithm for one destination.
pub type BoxedAlgorithm = Box<dyn CongestionControl + Send>;

/// One entry of the registry.
pub struct AlgorithmInfo {
    /// The name used in scenario files, on the command line and in reports.
    pub name: &'static str,
    /// One line saying what it is.
    pub summary: &'static str,
    /// The section of `algorithms.md` it implements.
    pub section: &'static str,
    /// Whether the source leaves constants open and ours are a documented guess.
    pub approximate: bool,
    /// Builds one destination's state from the scenario's parameters.
    pub build: fn(&AlgorithmParams) -> Result<BoxedAlgorithm, ParamError>,
    /// Size in bytes of one destination's state.
    pub state_bytes: usize,
}

macro_rules! entry {
    ($name:literal, $ty:ty, $section:literal, $summary:literal) => {
        entry!($name, $ty, $section, $summary, false)
    };
    ($name:literal, $ty:ty, $section:literal, $summary:literal, $approx:expr) => {
        AlgorithmInfo {
            name: $name,
            summary: $summary,
            section: $section,
            approximate: $approx,
            build: |p| Ok(Box::new(<$ty>::from_params($name, p)?)),
            state_bytes: core::mem::size_of::<$ty>(),
        }
    };
}

/// Every algorithm, in the order of the spec.
pub static ALGORITHMS: &[AlgorithmInfo] = &[
    entry!("default", crate::default::DefaultCoap, "§1", "Default CoAP (RFC 7252): [2,3] s dithered timer, binary backoff, capped"),
    // -- further algorithms are added below, one line each --
];

/// Looks an algorithm up by name.
pub fn find(name: &str) -> Option<&'static AlgorithmInfo> {
    ALGORITHMS.iter().find(|a| a.name == name)
}

/// The names of all algorithms, comma-separated, for error messages.
pub fn names() -> alloc::string::String {
    let mut s = alloc::string::String::new();
    for (i, a) in ALGORITHMS.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        s.push_str(a.name);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_buildable_with_defaults() {
        for (i, a) in ALGORITHMS.iter().enumerate() {
            assert!(ALGORITHMS[..i].iter().all(|b| b.name != a.name), "{}", a.name);
            assert!((a.build)(&AlgorithmParams::default()).is_ok(), "{}", a.name);
            assert!(find(a.name).is_some());
        }
        assert!(find("no-such").is_none());
    }
}
