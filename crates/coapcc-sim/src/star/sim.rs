//! The star as a network of the simulator: [`StarSim`], its types and how a
//! run is set up and summarised.

use super::config::{validate, StarRunSpec};
use super::result::StarRunResult;
use super::summary::StarSummary;
use super::world;
use crate::network::sim_network;

sim_network! {
    /// The Wi-Fi star, as a network of the simulator.
    StarSim {
        RunSpec = StarRunSpec, RunResult = StarRunResult, Summary = StarSummary,
        World<'a> = world::World<'a>,
        validate = validate, world = world::World::new, summary = StarSummary::of,
    }
}
