//! The grid as a network of the simulator: [`GridSim`], its types and how a
//! run is set up and summarised.

use super::config::{validate, GridRunSpec};
use super::result::GridRunResult;
use super::summary::GridSummary;
use super::world::{self, GridTap};
use crate::network::{SimNetwork, Tapped};
use crate::spec_error::SpecError;

/// The 802.15.4 grid, as a network of the simulator.
#[derive(Clone, Copy, Debug)]
pub struct GridSim;

impl SimNetwork for GridSim {
    type RunSpec = GridRunSpec;
    type RunResult = GridRunResult;
    type Summary = GridSummary;
    type World<'a> = world::World<'a>;

    fn validate(spec: &GridRunSpec) -> Result<(), SpecError> {
        validate(spec)
    }

    fn world(spec: &GridRunSpec, replication: u32) -> Result<Self::World<'_>, SpecError> {
        world::World::new(spec, replication)
    }

    fn summary(label: &str, spec: &GridRunSpec, runs: &[GridRunResult]) -> GridSummary {
        GridSummary::of(label, spec, runs)
    }
}

impl Tapped for GridSim {
    type Tap<'a> = dyn GridTap + 'a;

    fn attach<'a>(world: &mut world::World<'a>, tap: &'a mut (dyn GridTap + 'a)) {
        world.attach(tap);
    }
}
