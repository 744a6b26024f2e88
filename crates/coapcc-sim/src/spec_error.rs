//! The error of every network's runs: a configuration the simulator cannot
//! run, or a run stopped from outside.

/// A configuration the testbed cannot run.
#[derive(Debug, Clone, PartialEq)]
pub struct SpecError(pub String);

impl std::fmt::Display for SpecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for SpecError {}
