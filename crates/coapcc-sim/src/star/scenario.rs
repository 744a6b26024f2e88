//! A star scenario as written in a scenario file (`[network] kind =
//! "star"`, the lwIP evaluation, spec `testbed.md` §3, §5): the star, the bulk
//! senders and the TCP flavours to compare, replicated. Running it is
//! [`crate::scenario`]'s.

use coapcc_workload::AlgorithmSpec;
use serde::{Deserialize, Serialize};

use super::config::{StarRunSpec, StarWorkload};
use super::sim::StarSim;
use crate::scenario::{one, one64, Comparison, NetworkScenario};

/// A star scenario as written in a scenario file (`[network] kind = "star"`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StarScenario {
    /// A short name.
    #[serde(default)]
    pub name: String,
    /// What it reproduces.
    #[serde(default)]
    pub description: String,
    /// The star.
    #[serde(default)]
    pub network: coapcc_link::star::Config,
    /// The bulk senders.
    #[serde(default)]
    pub workload: StarWorkload,
    /// The TCP flavours to compare; each runs on every station.
    #[serde(rename = "algorithm")]
    pub algorithms: Vec<AlgorithmSpec>,
    /// Replications per flavour.
    #[serde(default = "one")]
    pub replications: u32,
    /// The scenario seed.
    #[serde(default = "one64")]
    pub seed: u64,
}

impl NetworkScenario for StarScenario {
    type Network = StarSim;

    const ALGORITHM: &'static str = "TCP flavour";

    fn comparison(&self) -> Comparison<'_> {
        Comparison::new(&self.algorithms, self.replications)
    }

    fn run_spec(&self, i: usize) -> StarRunSpec {
        StarRunSpec {
            network: self.network.clone(),
            workload: self.workload.clone(),
            algorithm: self.algorithms[i].clone(),
            seed: self.seed,
        }
    }
}
