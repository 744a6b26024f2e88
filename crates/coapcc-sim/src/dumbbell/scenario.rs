//! A dumbbell scenario as written in a scenario file: the network, the
//! workload, the client count and the algorithms to compare, replicated. Each
//! algorithm runs the whole population on its own (a comparison); mixed
//! populations are expressed as several groups in one run. Running it is
//! [`crate::scenario`]'s.

use coapcc_workload::Workload;

use super::config::{Coap, Group, RunSpec};
use super::sim::Sim;
use crate::scenario::network_scenario;
use crate::spec_error::SpecError;

network_scenario! {
    /// A scenario as written in a scenario file.
    pub struct Scenario {
        /// The network.
        #[serde(default)]
        pub network: coapcc_link::dumbbell::Config,
        /// CoAP settings.
        #[serde(default)]
        pub coap: Coap,
        /// The workload of every client.
        #[serde(default)]
        pub workload: Workload,
        /// Clients per run.
        pub clients: u32,
    }
    /// The algorithms to compare; each runs the whole population.
    algorithms,
    /// Replications per algorithm, each with its own derived seed.
    replications,
    impl NetworkScenario<Network = Sim> {
        fn run_spec(&self, i: usize) -> RunSpec {
            RunSpec {
                network: self.network.clone(),
                coap: self.coap.clone(),
                groups: vec![Group {
                    algorithm: self.algorithms[i].clone(),
                    workload: self.workload.clone(),
                    clients: self.clients,
                }],
                seed: self.seed,
            }
        }

        fn check(&self) -> Result<(), SpecError> {
            if self.clients == 0 {
                return Err(SpecError("clients: expected at least 1".into()));
            }
            Ok(())
        }
    }
}
