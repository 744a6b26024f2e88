//! A LoRaWAN scenario as written in a scenario file (`[network] kind =
//! "lorawan"`): the network, the CoAP settings, the periodic workload and
//! the algorithms to compare, replicated. Running it is
//! [`crate::scenario`]'s.

use super::config::{Coap, RunSpec, Workload};
use super::sim::Sim;
use crate::scenario::network_scenario;

network_scenario! {
    /// A LoRaWAN scenario as written in a scenario file (`[network] kind = "lorawan"`).
    pub struct Scenario {
        /// The network.
        #[serde(default)]
        pub network: coapcc_link::lorawan::Config,
        /// CoAP settings.
        #[serde(default)]
        pub coap: Coap,
        /// The workload.
        #[serde(default)]
        pub workload: Workload,
    }
    /// The algorithms to compare; each runs every device.
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
