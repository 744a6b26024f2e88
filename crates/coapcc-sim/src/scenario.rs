//! A scenario: the network, the workload, the client count and the algorithms to
//! compare, replicated. Each algorithm runs the whole population on its own (a
//! comparison); mixed populations are expressed as several groups in one run.

use coapcc_workload::metrics::{RunResult, Summary};
use coapcc_workload::{AlgorithmSpec, Workload};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::config::{Coap, Group, Network, RunSpec};
use crate::spec_error::SpecError;
use crate::testbed;

/// A scenario as written in a scenario file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// A short name.
    #[serde(default)]
    pub name: String,
    /// What it reproduces.
    #[serde(default)]
    pub description: String,
    /// The network.
    #[serde(default)]
    pub network: Network,
    /// CoAP settings.
    #[serde(default)]
    pub coap: Coap,
    /// The workload of every client.
    #[serde(default)]
    pub workload: Workload,
    /// Clients per run.
    pub clients: u32,
    /// The algorithms to compare; each runs the whole population.
    #[serde(rename = "algorithm")]
    pub algorithms: Vec<AlgorithmSpec>,
    /// Replications per algorithm, each with its own derived seed.
    #[serde(default = "one")]
    pub replications: u32,
    /// The scenario seed.
    #[serde(default = "one64")]
    pub seed: u64,
}

fn one() -> u32 {
    1
}
fn one64() -> u64 {
    1
}

impl Scenario {
    /// The run of algorithm `i` (its whole population).
    pub fn run_spec(&self, i: usize) -> RunSpec {
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

    /// Checks everything a run would reject, before any run starts.
    pub fn validate(&self) -> Result<(), SpecError> {
        if self.algorithms.is_empty() {
            return Err(SpecError(
                "algorithm: expected at least one algorithm".into(),
            ));
        }
        if self.replications == 0 {
            return Err(SpecError("replications: expected at least 1".into()));
        }
        if self.clients == 0 {
            return Err(SpecError("clients: expected at least 1".into()));
        }
        for (i, a) in self.algorithms.iter().enumerate() {
            a.check_label().map_err(SpecError)?;
            if self.algorithms[..i].iter().any(|b| b.label() == a.label()) {
                return Err(SpecError(format!(
                    "algorithm `{}`: listed twice; give one a distinct `label`",
                    a.label()
                )));
            }
        }
        for i in 0..self.algorithms.len() {
            testbed::validate(&self.run_spec(i))?;
        }
        Ok(())
    }
}

/// The results of a scenario: per algorithm, its summary and the raw runs.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ScenarioResult {
    /// One summary per algorithm, in scenario order.
    pub summaries: Vec<Summary>,
    /// Per algorithm, one result per replication.
    #[serde(skip)]
    pub runs: Vec<Vec<RunResult>>,
}

/// Runs every (algorithm, replication) of `scenario` on the current rayon pool.
/// Results are put back in order, so they do not depend on the thread count.
/// `progress` is called once per finished run.
pub fn run_scenario(
    scenario: &Scenario,
    progress: &(dyn Fn() + Sync),
) -> Result<ScenarioResult, SpecError> {
    run_scenario_stoppable(scenario, progress, &crate::stop::NEVER)
}

/// [`run_scenario`], stopped with [`crate::stop::cancelled`] soon after `stop` is
/// set: runs not started are skipped, runs under way stop within
/// [`crate::stop::CHECK_EVERY`] events.
pub fn run_scenario_stoppable(
    scenario: &Scenario,
    progress: &(dyn Fn() + Sync),
    stop: &std::sync::atomic::AtomicBool,
) -> Result<ScenarioResult, SpecError> {
    scenario.validate()?;
    let specs: Vec<RunSpec> = (0..scenario.algorithms.len())
        .map(|i| scenario.run_spec(i))
        .collect();
    let jobs: Vec<(usize, u32)> = (0..specs.len())
        .flat_map(|a| (0..scenario.replications).map(move |r| (a, r)))
        .collect();
    let results: Vec<RunResult> = jobs
        .par_iter()
        .map(|&(a, r)| {
            if crate::stop::requested(stop) {
                return Err(crate::stop::cancelled());
            }
            let out = testbed::run_stoppable(&specs[a], r, stop);
            progress();
            out
        })
        .collect::<Result<_, _>>()?;
    let mut runs: Vec<Vec<RunResult>> = vec![Vec::new(); specs.len()];
    for ((a, _), res) in jobs.into_iter().zip(results) {
        runs[a].push(res);
    }
    let summaries = scenario
        .algorithms
        .iter()
        .zip(&runs)
        .map(|(alg, r)| Summary::of(alg.label(), 0, r))
        .collect();
    Ok(ScenarioResult { summaries, runs })
}
