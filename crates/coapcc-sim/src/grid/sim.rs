//! The grid as a network of the simulator: [`GridSim`], its types and how a
//! run is set up and summarised.

use super::config::{validate, GridRunSpec};
use super::result::GridRunResult;
use super::summary::GridSummary;
use super::world::{self, GridTap};
use crate::network::{sim_network, Tapped};

sim_network! {
    /// The 802.15.4 grid, as a network of the simulator.
    GridSim {
        RunSpec = GridRunSpec, RunResult = GridRunResult, Summary = GridSummary,
        World<'a> = world::World<'a>,
        validate = validate, world = world::World::new, summary = GridSummary::of,
    }
}

impl Tapped for GridSim {
    type Tap<'a> = dyn GridTap + 'a;

    fn attach<'a>(world: &mut world::World<'a>, tap: &'a mut (dyn GridTap + 'a)) {
        world.attach(tap);
    }
}
