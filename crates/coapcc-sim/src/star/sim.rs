//! The star as a network of the simulator: [`StarSim`], its types and how a
//! run is set up and summarised.

use super::config::{validate, StarRunSpec};
use super::result::StarRunResult;
use super::summary::StarSummary;
use super::world;
use crate::network::SimNetwork;
use crate::spec_error::SpecError;

/// The Wi-Fi star, as a network of the simulator.
#[derive(Clone, Copy, Debug)]
pub struct StarSim;

impl SimNetwork for StarSim {
    type RunSpec = StarRunSpec;
    type RunResult = StarRunResult;
    type Summary = StarSummary;
    type World<'a> = world::World<'a>;

    fn validate(spec: &StarRunSpec) -> Result<(), SpecError> {
        validate(spec)
    }

    fn world(spec: &StarRunSpec, replication: u32) -> Result<Self::World<'_>, SpecError> {
        world::World::new(spec, replication)
    }

    fn summary(label: &str, spec: &StarRunSpec, runs: &[StarRunResult]) -> StarSummary {
        StarSummary::of(label, spec, runs)
    }
}
