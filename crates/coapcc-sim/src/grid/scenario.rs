//! A grid scenario as written in a scenario file (`[network] kind =
//! "grid"`, the pCoCoA evaluation, spec `docs/spec/testbed-spec.md` §3–4): the grid, the
//! CoAP settings, the workload and the algorithms to compare, replicated.
//! Running it is [`crate::scenario`]'s.

use super::config::{Coap, RunSpec, Workload};
use super::sim::Sim;
use crate::scenario::network_scenario;

network_scenario! {
    /// A grid scenario as written in a scenario file (`[network] kind = "grid"`).
    pub struct Scenario {
        /// The grid.
        #[serde(default)]
        pub network: coapcc_link::grid::Config,
        /// CoAP settings.
        #[serde(default)]
        pub coap: Coap,
        /// The workload.
        #[serde(default)]
        pub workload: Workload,
    }
    /// The algorithms to compare; each runs every client under test.
    algorithms,
    /// Replications per algorithm.
    replications,
    impl NetworkScenario<Network = Sim> {
        fn run_spec(&self, i: usize) -> RunSpec {
            RunSpec {
                network: self.network.clone(),
                coap: self.coap.clone(),
                workload: self.workload.clone(),
                algorithm: self.algorithms[i].clone(),
                seed: self.seed,
            }
        }
    }
}
