//! Running a scenario of any network: its algorithms compared, each over
//! its replications, on the current rayon pool, and summarised.
//!
//! A scenario file describes one network ([`NetworkScenario`]: the dumbbell's
//! [`crate::dumbbell::Scenario`], the grid's [`crate::grid::Scenario`],
//! the star's [`crate::star::Scenario`]); what they share — the fields
//! every scenario file has (declared by `network_scenario!`), the list of
//! algorithms, the replications, the checks of both, the runs and their
//! order — is here, once.

use std::sync::atomic::AtomicBool;

use coapcc_workload::AlgorithmSpec;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::network::SimNetwork;
use crate::spec_error::SpecError;

/// What a scenario compares: its algorithms, each replicated.
#[derive(Clone, Copy, Debug)]
pub struct Comparison<'a> {
    /// The algorithms to compare, in the file's order.
    pub algorithms: &'a [AlgorithmSpec],
    /// Replications per algorithm, each with its own derived seed.
    pub replications: u32,
}

impl<'a> Comparison<'a> {
    /// `replications` of each of `algorithms`.
    pub fn new(algorithms: &'a [AlgorithmSpec], replications: u32) -> Self {
        Comparison {
            algorithms,
            replications,
        }
    }
}

/// A scenario of one network: the algorithms to compare, each run on the
/// whole population of the network, replicated.
pub trait NetworkScenario: Sync {
    /// The network it runs on.
    type Network: SimNetwork;

    /// What the algorithms are called in errors (`algorithm`, `TCP flavour`).
    const ALGORITHM: &'static str = "algorithm";

    /// What it compares: the algorithms, in the file's order, and the
    /// replications of each.
    fn comparison(&self) -> Comparison<'_>;

    /// The algorithms to compare, in the file's order.
    fn algorithms(&self) -> &[AlgorithmSpec] {
        self.comparison().algorithms
    }

    /// Replications per algorithm, each with its own derived seed.
    fn replications(&self) -> u32 {
        self.comparison().replications
    }

    /// The run of algorithm `i` (its whole population).
    fn run_spec(&self, i: usize) -> <Self::Network as SimNetwork>::RunSpec;

    /// Checks of the network's own scenario fields, after the shared ones on
    /// the algorithm list and the replications and before any run's
    /// (nothing by default).
    fn check(&self) -> Result<(), SpecError> {
        Ok(())
    }

    /// Checks everything a run would reject, before any run starts: at least
    /// one algorithm and one replication, [`Self::check`], then per algorithm
    /// its label (valid, not listed twice) and its run.
    fn validate(&self) -> Result<(), SpecError> {
        let algorithms = self.algorithms();
        if algorithms.is_empty() {
            return Err(SpecError(format!(
                "algorithm: expected at least one {}",
                Self::ALGORITHM
            )));
        }
        if self.replications() == 0 {
            return Err(SpecError("replications: expected at least 1".into()));
        }
        self.check()?;
        for (i, a) in algorithms.iter().enumerate() {
            a.check_label().map_err(SpecError)?;
            if algorithms[..i].iter().any(|b| b.label() == a.label()) {
                return Err(SpecError(format!(
                    "algorithm `{}`: listed twice; give one a distinct `label`",
                    a.label()
                )));
            }
            Self::Network::validate(&self.run_spec(i))?;
        }
        Ok(())
    }
}

/// The results of a scenario: per algorithm, its summary and the raw runs.
#[derive(Serialize, Deserialize)]
#[serde(bound(
    serialize = "N::Summary: Serialize",
    deserialize = "N::Summary: Deserialize<'de>"
))]
pub struct ScenarioResult<N: SimNetwork> {
    /// One summary per algorithm, in scenario order.
    pub summaries: Vec<N::Summary>,
    /// Per algorithm, one result per replication.
    #[serde(skip)]
    pub runs: Vec<Vec<N::RunResult>>,
}

impl<N: SimNetwork> Clone for ScenarioResult<N>
where
    N::Summary: Clone,
    N::RunResult: Clone,
{
    fn clone(&self) -> Self {
        ScenarioResult {
            summaries: self.summaries.clone(),
            runs: self.runs.clone(),
        }
    }
}

impl<N: SimNetwork> std::fmt::Debug for ScenarioResult<N>
where
    N::Summary: std::fmt::Debug,
    N::RunResult: std::fmt::Debug,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScenarioResult")
            .field("summaries", &self.summaries)
            .field("runs", &self.runs)
            .finish()
    }
}

/// Runs every (algorithm, replication) of `scenario` on the current rayon
/// pool. Results are put back in order, so they do not depend on the thread
/// count. `progress` is called once per finished run.
pub fn run_scenario<S: NetworkScenario>(
    scenario: &S,
    progress: &(dyn Fn() + Sync),
) -> Result<ScenarioResult<S::Network>, SpecError> {
    run_scenario_stoppable(scenario, progress, &crate::stop::NEVER)
}

/// [`run_scenario`], stopped with [`crate::stop::cancelled`] soon after `stop`
/// is set: runs not started are skipped, runs under way stop within
/// [`crate::stop::CHECK_EVERY`] events.
pub fn run_scenario_stoppable<S: NetworkScenario>(
    scenario: &S,
    progress: &(dyn Fn() + Sync),
    stop: &AtomicBool,
) -> Result<ScenarioResult<S::Network>, SpecError> {
    scenario.validate()?;
    let algorithms = scenario.algorithms();
    let specs: Vec<_> = (0..algorithms.len())
        .map(|i| scenario.run_spec(i))
        .collect();
    let jobs: Vec<(usize, u32)> = (0..specs.len())
        .flat_map(|a| (0..scenario.replications()).map(move |r| (a, r)))
        .collect();
    let results: Vec<_> = jobs
        .par_iter()
        .map(|&(a, r)| {
            if crate::stop::requested(stop) {
                return Err(crate::stop::cancelled());
            }
            let out = S::Network::run_stoppable(&specs[a], r, stop);
            progress();
            out
        })
        .collect::<Result<_, _>>()?;
    let mut runs: Vec<Vec<_>> = (0..specs.len()).map(|_| Vec::new()).collect();
    for ((a, _), res) in jobs.into_iter().zip(results) {
        runs[a].push(res);
    }
    let summaries = algorithms
        .iter()
        .zip(&specs)
        .zip(&runs)
        .map(|((alg, spec), r)| S::Network::summary(alg.label(), spec, r))
        .collect();
    Ok(ScenarioResult { summaries, runs })
}

/// Declares a network's scenario struct as scenario files write it and
/// implements [`NetworkScenario`] for it. The struct has, in this order (the
/// order of the fields in errors): `name` and `description`, the network's
/// own fields as given, then the fields every network shares — the
/// `algorithm` list, `replications` and `seed` (documented with the two doc
/// comments given) — and denies unknown fields. The impl has the network
/// given, the comparison of the algorithms and the items given (the run of
/// algorithm `i`, and the network's `ALGORITHM` word or `check` if it has
/// them).
///
/// Why a macro: the shared fields cannot come from a shared struct through
/// `#[serde(flatten)]`, because serde does not support `deny_unknown_fields`
/// together with `flatten`, and a misspelt field must be refused by name.
macro_rules! network_scenario {
    (
        $(#[$attr:meta])*
        pub struct $name:ident {
            $($fields:tt)*
        }
        $(#[doc = $algorithms_doc:literal])+
        algorithms,
        $(#[doc = $replications_doc:literal])+
        replications,
        impl NetworkScenario<Network = $network:ty> {
            $($items:tt)*
        }
    ) => {
        $(#[$attr])*
        #[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            /// A short name.
            #[serde(default)]
            pub name: String,
            /// What it reproduces.
            #[serde(default)]
            pub description: String,
            $($fields)*
            $(#[doc = $algorithms_doc])+
            #[serde(rename = "algorithm")]
            pub algorithms: Vec<coapcc_workload::AlgorithmSpec>,
            $(#[doc = $replications_doc])+
            #[serde(default = "crate::scenario::one")]
            pub replications: u32,
            /// The scenario seed.
            #[serde(default = "crate::scenario::one64")]
            pub seed: u64,
        }

        impl crate::scenario::NetworkScenario for $name {
            type Network = $network;

            fn comparison(&self) -> crate::scenario::Comparison<'_> {
                crate::scenario::Comparison::new(&self.algorithms, self.replications)
            }

            $($items)*
        }
    };
}
pub(crate) use network_scenario;

/// The default of a scenario file's `replications`.
pub(crate) fn one() -> u32 {
    1
}

/// The default of a scenario file's `seed`.
pub(crate) fn one64() -> u64 {
    1
}
