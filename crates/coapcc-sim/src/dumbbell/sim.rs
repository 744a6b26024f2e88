//! The dumbbell as a network of the simulator: [`Sim`], its types
//! and how a run is set up and summarised.

use coapcc_workload::metrics::{RunResult, Summary};

use super::config::{validate, RunSpec};
use super::world::{self, Tap};
use crate::network::{SimNetwork, Tapped};
use crate::spec_error::SpecError;

/// The dumbbell, as a network of the simulator.
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

    /// The summary of a scenario's algorithm: its one group (group 0).
    fn summary(label: &str, _spec: &RunSpec, runs: &[RunResult]) -> Summary {
        Summary::of(label, 0, runs)
    }
}

impl Tapped for Sim {
    type Tap<'a> = dyn Tap + 'a;

    fn attach<'a>(world: &mut world::World<'a>, tap: &'a mut (dyn Tap + 'a)) {
        world.attach(tap);
    }
}
