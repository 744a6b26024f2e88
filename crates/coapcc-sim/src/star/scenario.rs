//! A star scenario as written in a scenario file (`[network] kind =
//! "star"`, the lwIP evaluation, spec `docs/spec/testbed-spec.md` §3, §5): the star, the bulk
//! senders and the TCP flavours to compare, replicated. Running it is
//! [`crate::scenario`]'s.

use super::config::{RunSpec, Workload};
use super::sim::Sim;
use crate::scenario::network_scenario;

network_scenario! {
    /// A star scenario as written in a scenario file (`[network] kind = "star"`).
    pub struct Scenario {
        /// The star.
        #[serde(default)]
        pub network: coapcc_link::star::Config,
        /// The bulk senders.
        #[serde(default)]
        pub workload: Workload,
    }
    /// The TCP flavours to compare; each runs on every station.
    algorithms,
    /// Replications per flavour.
    replications,
    impl NetworkScenario<Network = Sim> {
        const ALGORITHM: &'static str = "TCP flavour";

        fn run_spec(&self, i: usize) -> RunSpec {
            RunSpec {
                network: self.network.clone(),
                workload: self.workload.clone(),
                algorithm: self.algorithms[i].clone(),
                seed: self.seed,
            }
        }
    }
}
