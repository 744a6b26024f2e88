//! A grid scenario as written in a scenario file (`[network] kind =
//! "grid"`, the pCoCoA evaluation, spec `testbed.md` §3–4): the grid, the
//! CoAP settings, the workload and the algorithms to compare, replicated.
//! Running it is [`crate::scenario`]'s.

use coapcc_workload::AlgorithmSpec;
use serde::{Deserialize, Serialize};

use super::config::{GridCoap, GridRunSpec, GridWorkload};
use super::sim::GridSim;
use crate::scenario::{one, one64, Comparison, NetworkScenario};

/// A grid scenario as written in a scenario file (`[network] kind = "grid"`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GridScenario {
    /// A short name.
    #[serde(default)]
    pub name: String,
    /// What it reproduces.
    #[serde(default)]
    pub description: String,
    /// The grid.
    #[serde(default)]
    pub network: coapcc_link::grid::Config,
    /// CoAP settings.
    #[serde(default)]
    pub coap: GridCoap,
    /// The workload.
    #[serde(default)]
    pub workload: GridWorkload,
    /// The algorithms to compare; each runs every client under test.
    #[serde(rename = "algorithm")]
    pub algorithms: Vec<AlgorithmSpec>,
    /// Replications per algorithm.
    #[serde(default = "one")]
    pub replications: u32,
    /// The scenario seed.
    #[serde(default = "one64")]
    pub seed: u64,
}

impl NetworkScenario for GridScenario {
    type Network = GridSim;

    fn comparison(&self) -> Comparison<'_> {
        Comparison::new(&self.algorithms, self.replications)
    }

    fn run_spec(&self, i: usize) -> GridRunSpec {
        GridRunSpec {
            network: self.network.clone(),
            coap: self.coap.clone(),
            workload: self.workload.clone(),
            algorithm: self.algorithms[i].clone(),
            seed: self.seed,
        }
    }
}
