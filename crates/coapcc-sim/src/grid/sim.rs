//! The grid as a network of the simulator: [`Sim`], its types and how a
//! run is set up and summarised.

use super::config::{validate, RunSpec};
use super::result::RunResult;
use super::summary::Summary;
use super::world::{self, Tap};
use crate::network::{SimNetwork, Tapped};
use crate::spec_error::SpecError;

/// The 802.15.4 grid, as a network of the simulator.
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

impl Tapped for Sim {
    type Tap<'a> = dyn Tap + 'a;

    fn attach<'a>(world: &mut world::World<'a>, tap: &'a mut (dyn Tap + 'a)) {
        world.attach(tap);
    }
}
