//! LoRaWAN as a network of the simulator: [`Sim`], its types and how a run
//! is set up and summarised.

use super::config::{validate, RunSpec};
use super::result::RunResult;
use super::summary::Summary;
use super::world;
use crate::network::SimNetwork;
use crate::spec_error::SpecError;

/// LoRaWAN class A, as a network of the simulator.
#[derive(Clone, Copy, Debug)]
pub struct Sim;

impl SimNetwork for Sim {
    type RunSpec = RunSpec;
    type RunResult = RunResult;
    type Summary = Summary;
    type World<'a> = world::World<'a>;

    fn validate(spec: &RunSpec) -> Result<(), SpecError> {
        validate(spec)
    }

    fn world(spec: &RunSpec, replication: u32) -> Result<Self::World<'_>, SpecError> {
        world::World::new(spec, replication)
    }

    fn summary(label: &str, spec: &RunSpec, runs: &[RunResult]) -> Summary {
        Summary::of(label, spec, runs)
    }
}
