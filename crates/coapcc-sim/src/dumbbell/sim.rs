//! The dumbbell as a network of the simulator: [`DumbbellSim`], its types
//! and how a run is set up and summarised.

use coapcc_workload::metrics::{RunResult, Summary};

use super::config::{validate, RunSpec};
use super::testbed::{Tap, Testbed};
use crate::network::{sim_network, Tapped};

sim_network! {
    /// The dumbbell, as a network of the simulator.
    DumbbellSim {
        RunSpec = RunSpec, RunResult = RunResult, Summary = Summary,
        World<'a> = Testbed<'a>,
        validate = validate, world = Testbed::new, summary = summary,
    }
}

/// The summary of a scenario's algorithm: its one group (group 0).
fn summary(label: &str, _spec: &RunSpec, runs: &[RunResult]) -> Summary {
    Summary::of(label, 0, runs)
}

impl Tapped for DumbbellSim {
    type Tap<'a> = dyn Tap + 'a;

    fn attach<'a>(world: &mut Testbed<'a>, tap: &'a mut (dyn Tap + 'a)) {
        world.attach(tap);
    }
}
