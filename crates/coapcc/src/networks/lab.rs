//! [`LabNetwork`]: what a network of the lab layer provides. Everything the
//! shared code (scenario files, campaigns, the store, reports, the API and
//! the command line) does with a network goes through it, reached through
//! the registry ([`super::NETWORKS`]).

use std::collections::HashSet;
use std::fmt;
use std::path::Path;
use std::sync::atomic::AtomicBool;

use anyhow::{Context, Result};
use serde::de::DeserializeOwned;
use serde::Serialize;

use coapcc_sim::metrics::Conservation;
use coapcc_sim::{NetworkScenario, ScenarioResult, SimNetwork};

use crate::bench::BenchOptions;
use crate::campaign::ceiling::SetSample;
use crate::campaign::{Campaign, CampaignFile, Plan, PlanCell};
use crate::cost::RunCost;
use crate::emulate::Emulator;
use crate::report::Written;
use crate::scenario_file::Overrides;
use crate::store::{Definition, NetworkTables, RunRow, Store};

/// What a scenario's runs on network `N` gave: per algorithm, its summary
/// and its runs.
pub type ScenarioOutcome<N> = ScenarioResult<<N as LabNetwork>::Sim>;

/// What a network of the lab layer provides.
pub trait LabNetwork: Sized + 'static {
    /// Its `[network] kind` (and the store's `definitions.network`).
    const NAME: &'static str;
    /// Its tables in the store, declared in its `store.rs`.
    const TABLES: NetworkTables;
    /// What it is and what `coapcc run` prints for it, with where its
    /// scenarios and campaigns are: one paragraph of the `--help` texts
    /// ([`super::NetworkKind::help`]).
    const ABOUT: &'static str;

    /// The network it simulates.
    type Sim: SimNetwork<
            RunSpec = Self::Spec,
            RunResult = Self::RunResult,
            Summary: fmt::Debug + Serialize + Send + 'static,
        > + 'static;
    /// A scenario file's scenario.
    type Scenario: NetworkScenario<Network = Self::Sim>
        + Serialize
        + Clone
        + fmt::Debug
        + PartialEq
        + Send
        + Sync
        + 'static;
    /// One run's spec.
    type Spec: 'static;
    /// One run's result.
    type RunResult: Clone
        + fmt::Debug
        + PartialEq
        + Serialize
        + DeserializeOwned
        + Send
        + Sync
        + 'static;
    /// One record of a run (a client, a node, a station), for tables.
    type Item: Serialize + 'static;
    /// Its campaign file's fields ([`Plan::file`]).
    type File: CampaignFile + Clone + fmt::Debug + Send + Sync + 'static;
    /// One cell of a plan.
    type Cell: PlanCell<Spec = Self::Spec>
        + Serialize
        + DeserializeOwned
        + Clone
        + fmt::Debug
        + Send
        + Sync
        + 'static;

    // Scenario files and `coapcc run`.

    /// Parses and validates a scenario; `origin` names it in errors.
    fn parse_scenario(text: &str, origin: &str) -> Result<Self::Scenario>;
    /// Applies command-line overrides and re-validates.
    fn apply(overrides: &Overrides, s: Self::Scenario, origin: &str) -> Result<Self::Scenario>;
    /// The labels of the scenario's algorithms.
    fn labels(s: &Self::Scenario) -> Vec<&str> {
        s.algorithms().iter().map(|a| a.label()).collect()
    }
    /// Its replications per algorithm.
    fn replications(s: &Self::Scenario) -> u32 {
        NetworkScenario::replications(s)
    }
    /// The run spec of algorithm `i`.
    fn run_spec(s: &Self::Scenario, i: usize) -> Self::Spec {
        NetworkScenario::run_spec(s, i)
    }
    /// Cuts `s` down to a quick run of the same network, population and
    /// algorithms — one replication, a short workload — for the checks that
    /// run every shipped scenario (the identical-output digests); `false`
    /// if even that is too long for a test.
    fn reduce(s: &mut Self::Scenario) -> bool;
    /// The expected cost of one run ([`crate::cost`]).
    fn run_cost(spec: &Self::Spec) -> RunCost;
    /// Runs every replication of every algorithm; `progress` once per run.
    fn run(
        s: &Self::Scenario,
        progress: &(dyn Fn() + Sync),
        stop: &AtomicBool,
    ) -> Result<ScenarioOutcome<Self>> {
        Ok(coapcc_sim::run_scenario_stoppable(s, progress, stop)?)
    }
    /// The runs of an outcome, per algorithm.
    fn runs(r: &ScenarioOutcome<Self>) -> &[Vec<Self::RunResult>] {
        &r.runs
    }
    /// The events a run processed.
    fn events(r: &Self::RunResult) -> u64;
    /// A run's simulated time (s) and its packet conservation, which the
    /// store keeps with every run ([`crate::store::Store::insert_run_with`]).
    fn duration_and_conservation(r: &Self::RunResult) -> (f64, &Conservation);
    /// The run row every network's run table holds
    /// ([`crate::store::Store::insert_run_with`]).
    fn run_row<'a>(
        key: &'a str,
        spec: &'a Self::Spec,
        replication: u32,
        r: &'a Self::RunResult,
    ) -> RunRow<'a, Self::Spec> {
        let (duration, conservation) = Self::duration_and_conservation(r);
        RunRow {
            key,
            spec,
            replication,
            duration,
            events: Self::events(r),
            conservation,
        }
    }
    /// The records of a run.
    fn items(r: &Self::RunResult) -> &[Self::Item];
    /// What `coapcc run --format json` prints, without the final newline:
    /// the scenario and its summaries ([`super::run_json`]).
    fn json(s: &Self::Scenario, r: &ScenarioOutcome<Self>) -> String {
        super::run_json(s, &r.summaries)
    }
    /// Every summary and every run's raw result as one JSON value
    /// (`{"summaries": …, "runs": …}`).
    fn result_json(r: &ScenarioOutcome<Self>) -> serde_json::Value {
        serde_json::json!({ "summaries": r.summaries, "runs": r.runs })
    }
    /// What `coapcc run` prints as its table.
    fn table(s: &Self::Scenario, r: &ScenarioOutcome<Self>) -> String;
    /// What `coapcc run --format markdown` prints.
    fn markdown(s: &Self::Scenario, r: &ScenarioOutcome<Self>) -> String;
    /// [`crate::api::Outcome::histograms`].
    fn histograms(_s: &Self::Scenario, _r: &ScenarioOutcome<Self>) -> String {
        "[]".to_string()
    }
    /// Fails unless `--pcap` can write this network's traffic; else what a
    /// file holds (`packets`, `frames`).
    fn pcap_unit() -> Result<&'static str>;
    /// Re-runs replication 0 of algorithm `i` writing its traffic to `file`;
    /// returns the packets or frames written.
    fn write_pcap(s: &Self::Scenario, i: usize, file: &Path) -> Result<u64>;

    /// `coapcc bench --network NAME`: one replication timed beside the
    /// network's ns-3 reference, each line handed to `out` as it is
    /// measured (its `bench` module).
    fn bench(o: &BenchOptions, out: &mut dyn FnMut(String) -> Result<()>) -> Result<()>;

    /// Its real-time emulator (`coapcc emulate`), if it has one (its
    /// `emulate` module).
    fn emulator() -> Option<&'static dyn Emulator> {
        None
    }

    // Campaigns.

    /// Parses and expands campaign text; `origin` names it in errors.
    fn parse_plan(text: &str, origin: &str) -> Result<Plan<Self::File, Self::Cell>>;
    /// Counts and samples the cells of campaign text without expanding it
    /// ([`crate::campaign::ceiling`]).
    fn sample_plan(text: &str, origin: &str) -> Result<Vec<SetSample>>;
    /// The plan as a campaign (its [`crate::campaign::NetworkPlan`]).
    fn campaign(p: &Plan<Self::File, Self::Cell>) -> &dyn Campaign<Result = Self::RunResult>;
    /// The algorithm a cell shows in [`crate::api::campaign::plan_rows`].
    fn cell_algorithm(c: &Self::Cell) -> &str;

    // The store.

    /// The keys of every stored run of this network.
    fn done_keys(store: &Store) -> Result<HashSet<String>> {
        store.keys_in(Self::TABLES.runs.runs, Self::TABLES.since_layout)
    }
    /// The run keys of a stored definition's cells.
    fn definition_keys(store: &Store, hash: &str) -> Result<Vec<String>> {
        let cells: Vec<Self::Cell> = store.cells_in(Self::TABLES.cells, hash, Self::NAME)?;
        Ok(cells
            .iter()
            .flat_map(|c| c.keys().iter().cloned())
            .collect())
    }
    /// Checks this network's stored runs ([`super::verify`]).
    fn verify(store: &Store) -> Result<()>;
    /// This network's tables for [`super::dump`].
    fn dump(store: &Store, out: &mut String) -> Result<()>;

    // Reports.

    /// What its report shows.
    type Report;
    /// Gathers the report of `definition` from `store`.
    fn gather(
        store: &Store,
        definition: Definition,
        others: Vec<Definition>,
    ) -> Result<Self::Report>;
    /// The report's finished and planned runs.
    fn progress(r: &Self::Report) -> (u64, u64);
    /// Writes the report into `out`.
    fn write_report(r: &Self::Report, out: &Path) -> Result<Written>;

    /// Gathers the report of `definition` and, if a run of it is finished,
    /// writes it into `out`.
    fn report(
        store: &Store,
        definition: Definition,
        others: Vec<Definition>,
        out: &Path,
    ) -> Result<Reported> {
        let report = Self::gather(store, definition, others)
            .with_context(|| format!("results store {}", store.path().display()))?;
        let (done, planned) = Self::progress(&report);
        let written = (done > 0)
            .then(|| Self::write_report(&report, out))
            .transpose()?;
        Ok(Reported {
            done,
            planned,
            written,
        })
    }
}

/// What [`LabNetwork::report`] did.
#[derive(Clone, Debug)]
pub struct Reported {
    /// Finished and planned runs.
    pub done: u64,
    /// Runs the definition comprises.
    pub planned: u64,
    /// The files written; `None` if no run is finished (nothing written).
    pub written: Option<Written>,
}
