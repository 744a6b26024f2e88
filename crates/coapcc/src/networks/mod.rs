//! The networks of the lab layer, and the one place that names them all.
//!
//! Each network has a folder here — [`dumbbell`] (the constrained-link
//! testbed), [`grid`] (the 802.15.4 grid of the pCoCoA evaluation), [`star`]
//! (the Wi-Fi star of the lwIP evaluation) — holding its output printing,
//! its campaign file and plan, its store tables and its report, and one type
//! implementing [`LabNetwork`]: what the shared code (scenario files,
//! campaigns, the store, reports, the API and the command line) needs of a
//! network.
//!
//! The shared code names no network: it holds a value of any network as an
//! [`AnyNetwork`] (a scenario, a plan, a run result, a scenario's results)
//! and reaches the network's code through `dispatch!` — the one `match`
//! over the networks, as `coapcc-tcp`'s `AnySocket` does for sockets. A new
//! network is a folder here and, in this file, its `pub mod` line, one
//! variant of [`NetworkKind`] and of [`AnyNetwork`] (with its two serde
//! bounds) and one arm of each of the two dispatch macros.

pub mod dumbbell;
pub mod grid;
pub mod star;

use std::collections::{BTreeSet, HashSet};
use std::fmt;
use std::marker::PhantomData;
use std::path::Path;
use std::sync::atomic::AtomicBool;

use anyhow::{anyhow, bail, Context, Result};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use coapcc_sim::metrics::Conservation;
use coapcc_sim::{NetworkScenario, ScenarioResult, SimNetwork};

use crate::campaign::ceiling::Estimate;
use crate::campaign::{Campaign, CampaignFile, NetworkPlan, Plan, PlanCell, Unit};
use crate::cost::RunCost;
use crate::report::Written;
use crate::scenario_file::Overrides;
use crate::store::digest::RunTables;
use crate::store::{Definition, Store};

/// The networks, by the name `[network] kind` gives them and the store
/// records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NetworkKind {
    /// `kind = "dumbbell"` (or no `kind`).
    Dumbbell,
    /// `kind = "grid"`.
    Grid,
    /// `kind = "star"`.
    Star,
}

/// A value of one network: `F::Of<N>` for network `N` (a scenario, a
/// plan, …; see [`Family`]). A [`UnitResult`] crosses processes (the Python
/// package's Ray executor) serialised: the variant, then the run result.
#[derive(Serialize, Deserialize)]
#[serde(bound(
    serialize = "F::Of<dumbbell::Dumbbell>: Serialize, F::Of<grid::Grid>: Serialize, \
                 F::Of<star::Star>: Serialize",
    deserialize = "F::Of<dumbbell::Dumbbell>: Deserialize<'de>, \
                   F::Of<grid::Grid>: Deserialize<'de>, F::Of<star::Star>: Deserialize<'de>"
))]
pub enum AnyNetwork<F: Family> {
    /// On the constrained-link dumbbell.
    Dumbbell(F::Of<dumbbell::Dumbbell>),
    /// On the 802.15.4 grid.
    Grid(F::Of<grid::Grid>),
    /// On the Wi-Fi star.
    Star(F::Of<star::Star>),
}

/// Runs `$e` with `$n` the network type and `$x` bound to the value of
/// `$value` (an [`AnyNetwork`]), whichever network it holds.
macro_rules! dispatch {
    ($value:expr, $n:ident, $x:pat => $e:expr) => {
        match $value {
            AnyNetwork::Dumbbell($x) => {
                #[allow(dead_code)]
                type $n = dumbbell::Dumbbell;
                $e
            }
            AnyNetwork::Grid($x) => {
                #[allow(dead_code)]
                type $n = grid::Grid;
                $e
            }
            AnyNetwork::Star($x) => {
                #[allow(dead_code)]
                type $n = star::Star;
                $e
            }
        }
    };
}

/// Runs `$e` with `$n` the network type of `$kind` (a [`NetworkKind`]).
macro_rules! dispatch_kind {
    ($kind:expr, $n:ident => $e:expr) => {
        match $kind {
            NetworkKind::Dumbbell => {
                #[allow(dead_code)]
                type $n = dumbbell::Dumbbell;
                $e
            }
            NetworkKind::Grid => {
                #[allow(dead_code)]
                type $n = grid::Grid;
                $e
            }
            NetworkKind::Star => {
                #[allow(dead_code)]
                type $n = star::Star;
                $e
            }
        }
    };
}

impl NetworkKind {
    /// Every network, in the order the store's tables were added.
    pub const ALL: [NetworkKind; 3] = [NetworkKind::Dumbbell, NetworkKind::Grid, NetworkKind::Star];

    /// `dumbbell`, `grid` or `star`: its `[network] kind` and the store's
    /// `definitions.network`.
    pub fn name(self) -> &'static str {
        dispatch_kind!(self, N => N::NAME)
    }

    /// The network of that [`NetworkKind::name`].
    pub fn named(name: &str) -> Option<NetworkKind> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Reads `[network] kind` of a TOML document (scenario or campaign), with
    /// nothing else checked; `origin` names it in errors.
    pub fn of_toml(text: &str, origin: &str) -> Result<NetworkKind> {
        #[derive(Deserialize)]
        struct Probe {
            #[serde(default)]
            network: Option<ProbeNetwork>,
        }
        #[derive(Deserialize)]
        struct ProbeNetwork {
            #[serde(default)]
            kind: Option<toml::Value>,
        }
        let probe: Probe =
            toml::from_str(text).map_err(|e| crate::scenario_file::toml_error(origin, text, &e))?;
        match probe.network.and_then(|n| n.kind) {
            None => Ok(NetworkKind::Dumbbell),
            Some(toml::Value::String(k)) if Self::named(&k).is_some() => {
                Ok(Self::named(&k).expect("checked"))
            }
            Some(other) => {
                let names: Vec<String> = Self::ALL
                    .iter()
                    .map(|k| format!("\"{}\"", k.name()))
                    .collect();
                let (last, first) = names.split_last().expect("networks");
                bail!(
                    "{origin}: network.kind: expected {} or {last}, found {other}",
                    first.join(", ")
                )
            }
        }
    }

    /// The first store layout that holds this network's runs.
    pub fn since_layout(self) -> u32 {
        dispatch_kind!(self, N => N::SINCE_LAYOUT)
    }

    /// The store tables of this network's runs ([`crate::store::digest`]).
    pub fn run_tables(self) -> &'static RunTables {
        dispatch_kind!(self, N => &N::RUN_TABLES)
    }

    /// Its table of definitions' cells in the store.
    pub fn cells_table(self) -> &'static str {
        dispatch_kind!(self, N => N::CELLS_TABLE)
    }

    /// The keys of every run of this network `store` holds.
    pub fn done_keys(self, store: &Store) -> Result<HashSet<String>> {
        dispatch_kind!(self, N => N::done_keys(store))
    }
}

/// What a scenario's runs on network `N` gave: per algorithm, its summary
/// and its runs.
pub type ScenarioOutcome<N> = ScenarioResult<<N as LabNetwork>::Sim>;

/// What a network of the lab layer provides: everything the shared code
/// does with a network goes through here.
pub trait LabNetwork: Sized + 'static {
    /// Its kind.
    const KIND: NetworkKind;
    /// Its `[network] kind` (and the store's `definitions.network`).
    const NAME: &'static str;
    /// The first store layout with its tables.
    const SINCE_LAYOUT: u32;
    /// Its run tables in the store.
    const RUN_TABLES: RunTables;
    /// Its table of definitions' cells in the store.
    const CELLS_TABLE: &'static str;

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
    type RunResult: Clone + fmt::Debug + PartialEq + Serialize + DeserializeOwned + Send + 'static;
    /// One record of a run (a client, a node, a station), for tables.
    type Item: Serialize + 'static;
    /// Its campaign file's fields ([`Plan::file`]).
    type File: CampaignFile + Clone + fmt::Debug + Send + Sync + 'static;
    /// One cell of a plan.
    type Cell: PlanCell<Spec = Self::Spec> + Serialize + DeserializeOwned + Sync + 'static;

    /// `x` as an [`AnyNetwork`].
    fn wrap<F: Family>(x: F::Of<Self>) -> AnyNetwork<F>;
    /// The value of `x` if it is of this network.
    fn get<F: Family>(x: &AnyNetwork<F>) -> Option<&F::Of<Self>>;

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
    /// The records of a run.
    fn items(r: &Self::RunResult) -> &[Self::Item];
    /// What `coapcc run --format json` prints, without the final newline:
    /// the scenario and its summaries ([`run_json`]).
    fn json(s: &Self::Scenario, r: &ScenarioOutcome<Self>) -> String {
        run_json(s, &r.summaries)
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

    // Campaigns.

    /// Parses and expands campaign text; `origin` names it in errors.
    fn parse_plan(text: &str, origin: &str) -> Result<Plan<Self::File, Self::Cell>>;
    /// Counts and samples the cells of campaign text without expanding it
    /// ([`crate::campaign::ceiling`]).
    fn sample_plan(text: &str, origin: &str) -> Result<Vec<crate::campaign::ceiling::SetSample>>;
    /// The algorithm a cell shows in [`crate::api::campaign::plan_rows`].
    fn cell_algorithm(c: &Self::Cell) -> &str;

    // The store.

    /// The keys of every stored run of this network.
    fn done_keys(store: &Store) -> Result<HashSet<String>> {
        store.keys_in(Self::RUN_TABLES.runs, Self::SINCE_LAYOUT)
    }
    /// The run keys of a stored definition's cells.
    fn definition_keys(store: &Store, hash: &str) -> Result<Vec<String>> {
        let cells: Vec<Self::Cell> = store.cells_in(Self::CELLS_TABLE, hash, Self::NAME)?;
        Ok(cells
            .iter()
            .flat_map(|c| c.keys().iter().cloned())
            .collect())
    }
    /// Checks this network's stored runs ([`Store::verify`]).
    fn verify(store: &Store) -> Result<()>;
    /// This network's tables for [`Store::dump`].
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

/// What an [`AnyNetwork`] holds for each network.
pub trait Family {
    /// The value for network `N`.
    type Of<N: LabNetwork>;
}

/// [`AnyScenario`]: a scenario.
pub struct Scenarios;
impl Family for Scenarios {
    type Of<N: LabNetwork> = Box<N::Scenario>;
}

/// [`AnyPlan`]: an expanded campaign.
pub struct Plans;
impl Family for Plans {
    type Of<N: LabNetwork> = Box<Plan<N::File, N::Cell>>;
}

/// [`UnitResult`]: one run's result.
pub struct RunResults;
impl Family for RunResults {
    type Of<N: LabNetwork> = N::RunResult;
}

/// [`Ran`]: a scenario and its runs' results.
pub struct Outcomes<'a>(PhantomData<&'a ()>);
impl<'a> Family for Outcomes<'a> {
    type Of<N: LabNetwork> = (&'a N::Scenario, ScenarioOutcome<N>);
}

/// A scenario of any network.
pub type AnyScenario = AnyNetwork<Scenarios>;
/// A campaign of any network, as its file's `[network] kind` says.
pub type AnyPlan = AnyNetwork<Plans>;
/// What computing a campaign's unit gives, on any network.
pub type UnitResult = AnyNetwork<RunResults>;
/// A scenario and what running it gave, on whichever network it ran.
pub type Ran<'a> = AnyNetwork<Outcomes<'a>>;

impl<F: Family> AnyNetwork<F> {
    /// Its network.
    pub fn kind(&self) -> NetworkKind {
        dispatch!(self, N, _ => N::KIND)
    }

    /// `dumbbell`, `grid` or `star`.
    pub fn network(&self) -> &'static str {
        self.kind().name()
    }
}

/// Implements `Clone`, `Debug` or `PartialEq` for [`AnyNetwork`]s of the
/// families listed, through `dispatch!`: no network is named here.
macro_rules! impl_for_families {
    (Clone: $($f:ty),*) => {$(
        impl Clone for AnyNetwork<$f> {
            fn clone(&self) -> Self {
                dispatch!(self, N, x => N::wrap(x.clone()))
            }
        }
    )*};
    (Debug: $($f:ty),*) => {$(
        impl fmt::Debug for AnyNetwork<$f> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                dispatch!(self, N, x => f.debug_tuple(N::NAME).field(x).finish())
            }
        }
    )*};
    (PartialEq: $($f:ty),*) => {$(
        impl PartialEq for AnyNetwork<$f> {
            fn eq(&self, other: &Self) -> bool {
                dispatch!(self, N, x => N::get(other).is_some_and(|y| x == y))
            }
        }
    )*};
}

impl_for_families!(Clone: Scenarios, Plans, RunResults);
impl_for_families!(Debug: Scenarios, Plans, RunResults, Outcomes<'_>);
impl_for_families!(PartialEq: Scenarios, RunResults);

// ----- scenarios -------------------------------------------------------------

impl AnyScenario {
    /// Parses a scenario of any network from TOML text; `origin` names the
    /// file in errors.
    pub fn parse(text: &str, origin: &str) -> Result<AnyScenario> {
        dispatch_kind!(NetworkKind::of_toml(text, origin)?, N => {
            Ok(N::wrap(Box::new(N::parse_scenario(text, origin)?)))
        })
    }

    /// Loads and validates a scenario file of any network.
    pub fn load(path: &Path) -> Result<AnyScenario> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("{}: cannot read the scenario file", path.display()))?;
        Self::parse(&text, &path.display().to_string())
    }

    /// Applies command-line overrides and re-validates.
    pub fn apply(self, overrides: &Overrides, origin: &str) -> Result<AnyScenario> {
        dispatch!(self, N, s => Ok(N::wrap(Box::new(N::apply(overrides, *s, origin)?))))
    }

    /// Its replications per algorithm.
    pub fn replications(&self) -> u32 {
        dispatch!(self, N, s => N::replications(s))
    }

    /// The labels of its algorithms.
    pub fn labels(&self) -> Vec<&str> {
        dispatch!(self, N, s => N::labels(s))
    }

    /// The runs it will make: every algorithm's replications.
    pub fn planned_runs(&self) -> u64 {
        self.labels().len() as u64 * u64::from(self.replications())
    }

    /// The cost of its most expensive run and its number of runs.
    pub fn cost(&self) -> (RunCost, u64) {
        let largest = dispatch!(self, N, s => (0..N::labels(s).len())
            .map(|i| N::run_cost(&N::run_spec(s, i)))
            .fold(RunCost::default(), RunCost::max));
        (largest, self.planned_runs())
    }

    /// Checks it against the resource bounds of `coapcc run` on `threads`
    /// threads ([`crate::budget::check_scenario`]); errors name `origin`.
    pub fn check_budget(&self, origin: &str, threads: usize, force: bool) -> Result<()> {
        let (cost, runs) = self.cost();
        crate::budget::check_scenario(cost, runs, self.replications(), origin, threads, force)
    }

    /// Runs every replication of every algorithm on `pool`: `progress` is
    /// called once per finished run; once `stop` is set, the run stops and
    /// fails with `cancelled` ([`coapcc_sim::stop`]).
    pub fn run_on(
        &self,
        pool: &rayon::ThreadPool,
        progress: &(dyn Fn() + Sync),
        stop: &AtomicBool,
    ) -> Result<Ran<'_>> {
        dispatch!(self, N, s => Ok(N::wrap((&**s, pool.install(|| N::run(s, progress, stop))?))))
    }

    /// Fails unless `--pcap` can write this scenario's traffic.
    pub fn check_pcap(&self) -> Result<()> {
        dispatch!(self, N, _ => N::pcap_unit().map(drop))
    }

    /// Re-runs replication 0 of algorithm `i` with a tap writing its traffic
    /// to `file` (runs are deterministic: the same traffic as the run
    /// reported); returns how many packets or frames it wrote, and which.
    pub fn write_pcap(&self, i: usize, file: &Path) -> Result<(u64, &'static str)> {
        dispatch!(self, N, s => Ok((N::write_pcap(s, i, file)?, N::pcap_unit()?)))
    }
}

#[derive(Serialize)]
struct Row<'a, T: Serialize> {
    algorithm: &'a str,
    replication: usize,
    #[serde(flatten)]
    record: &'a T,
}

impl Ran<'_> {
    /// What `coapcc run --format json` prints, without the final newline.
    pub fn json(&self) -> String {
        dispatch!(self, N, (s, r) => N::json(s, r))
    }

    /// What `coapcc run` prints as its table (without the wall-time line).
    pub fn table(&self) -> String {
        dispatch!(self, N, (s, r) => N::table(s, r))
    }

    /// What `coapcc run --format markdown` prints.
    pub fn markdown(&self) -> String {
        dispatch!(self, N, (s, r) => N::markdown(s, r))
    }

    /// [`crate::api::Outcome::records`].
    pub fn records(&self) -> String {
        dispatch!(self, N, (s, r) => {
            let mut rows = Vec::new();
            for (label, runs) in N::labels(s).into_iter().zip(N::runs(r)) {
                for (replication, run) in runs.iter().enumerate() {
                    for record in N::items(run) {
                        rows.push(Row {
                            algorithm: label,
                            replication,
                            record,
                        });
                    }
                }
            }
            serde_json::to_string(&rows).expect("records serialise")
        })
    }

    /// [`crate::api::Outcome::histograms`].
    pub fn histograms(&self) -> String {
        dispatch!(self, N, (s, r) => N::histograms(s, r))
    }

    /// The runs made.
    pub fn runs(&self) -> u64 {
        dispatch!(self, N, (_, r) => N::runs(r).iter().map(|v| v.len() as u64).sum())
    }

    /// The events processed over all runs.
    pub fn events(&self) -> u64 {
        dispatch!(self, N, (_, r) => N::runs(r).iter().flatten().map(N::events).sum())
    }
}

// ----- campaigns -------------------------------------------------------------

impl AnyPlan {
    /// Parses and expands campaign text of any network; `origin` names it in
    /// errors.
    pub fn parse(text: &str, origin: &str) -> Result<AnyPlan> {
        dispatch_kind!(NetworkKind::of_toml(text, origin)?, N => {
            Ok(N::wrap(Box::new(N::parse_plan(text, origin)?)))
        })
    }

    /// Loads and expands a campaign file of any network.
    pub fn load(path: &Path) -> Result<AnyPlan> {
        crate::campaign::plan::load(path, Self::parse)
    }

    /// The size of the plan of campaign text of any network, `threads` runs
    /// at a time, estimated without expanding it
    /// ([`crate::campaign::ceiling`]); `origin` names it in errors.
    pub fn estimate(text: &str, origin: &str, threads: usize) -> Result<Estimate> {
        let sets = dispatch_kind!(NetworkKind::of_toml(text, origin)?, N => {
            N::sample_plan(text, origin)?
        });
        Ok(Estimate::of(&sets, threads))
    }

    /// The campaign's name and definition hash.
    pub fn identity(&self) -> (&str, &str) {
        dispatch!(self, N, p => p.identity())
    }

    /// The campaign file's text and where it came from: all a worker needs
    /// to expand the same plan ([`AnyPlan::parse`]).
    pub fn text(&self) -> (&str, &str) {
        dispatch!(self, N, p => p.text())
    }

    /// Notes to print before running it.
    pub fn notes(&self) -> Vec<String> {
        dispatch!(self, N, p => p.notes())
    }

    /// The cost of every cell's runs.
    pub fn costs(&self) -> Vec<RunCost> {
        dispatch!(self, N, p => p.cells().iter().map(|c| N::run_cost(c.spec())).collect())
    }

    /// Its distinct run keys.
    pub fn distinct_keys(&self) -> BTreeSet<&str> {
        dispatch!(self, N, p => p.distinct_keys())
    }

    /// Each cell as a JSON object (without its run spec and keys; a mixed
    /// population's groups counted), with `algorithm`, and its run keys.
    pub fn cell_rows(&self) -> Vec<(Map<String, Value>, &[String])> {
        dispatch!(self, N, p => p
            .cells()
            .iter()
            .map(|c| (cell_row(c, N::cell_algorithm(c)), c.keys()))
            .collect())
    }
}

fn cell_row<C: Serialize>(cell: &C, algorithm: &str) -> Map<String, Value> {
    let Value::Object(mut m) = serde_json::to_value(cell).expect("cells serialise") else {
        unreachable!("a cell is a struct")
    };
    m.remove("spec");
    m.remove("keys");
    if let Some(Value::Array(groups)) = m.remove("groups") {
        m.insert("groups".into(), Value::from(groups.len()));
    }
    m.insert("algorithm".into(), Value::from(algorithm));
    m
}

impl Campaign for AnyPlan {
    type Result = UnitResult;
    fn register(&self, store: &mut Store) -> Result<()> {
        dispatch!(self, N, p => Campaign::register(&**p, store))
    }
    fn done_keys(&self, store: &Store) -> Result<HashSet<String>> {
        self.kind().done_keys(store)
    }
    fn total(&self) -> usize {
        dispatch!(self, N, p => Campaign::total(&**p))
    }
    fn pending(&self, done: &HashSet<String>) -> Vec<Unit> {
        dispatch!(self, N, p => Campaign::pending(&**p, done))
    }
    fn compute(&self, unit: &Unit) -> Result<UnitResult> {
        dispatch!(self, N, p => Campaign::compute(&**p, unit).map(N::wrap))
    }
    fn commit(&self, store: &mut Store, unit: &Unit, result: &UnitResult) -> Result<()> {
        dispatch!(self, N, p => {
            let r = N::get(result).ok_or_else(|| {
                anyhow!("a {} run result for a {} campaign", result.network(), N::NAME)
            })?;
            Campaign::commit(&**p, store, unit, r)
        })
    }
}

impl UnitResult {
    /// The result as bytes for another process: CBOR (RFC 8949), which keeps
    /// every `f64` exactly (NaN and infinities included) and the fields' names,
    /// so a result decodes only into the type it was made from.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        ciborium::into_writer(self, &mut out).expect("writing to a Vec cannot fail");
        out
    }

    /// A result from [`UnitResult::encode`]'s bytes.
    pub fn decode(bytes: &[u8]) -> Result<UnitResult> {
        ciborium::from_reader(bytes).map_err(|e| {
            anyhow!(
                "a unit result of {} bytes: expected the CBOR encoding of a run result of this \
                 build ({e})",
                bytes.len()
            )
        })
    }
}

// ----- the store and reports ------------------------------------------------

impl Store {
    /// Checks that the store is whole: SQLite's integrity check passes, every
    /// stored run of every network has its item rows (one client row per
    /// client of its spec, one node row per node, one station row per
    /// station with a readable trace), every run's rows match their
    /// digest, and so does every definition's cells.
    pub fn verify(&self) -> Result<()> {
        self.integrity_check()?;
        for kind in NetworkKind::ALL {
            if self.layout() >= kind.since_layout() {
                dispatch_kind!(kind, N => N::verify(self))?;
            }
        }
        for kind in NetworkKind::ALL {
            let check = self.check_all_digests(kind)?;
            if let Some(key) = check.altered.first() {
                bail!(
                    "{} run {key}: its rows in table {} do not match the digest stored with \
                     them ({} run(s) so)",
                    kind.name(),
                    kind.run_tables().runs,
                    check.altered.len()
                );
            }
        }
        for d in self.definitions()? {
            let table = network_of(&d)?.cells_table();
            if self.check_cells(table, &d.hash)? == crate::store::digest::CellsCheck::Altered {
                bail!(
                    "campaign `{}` (definition {}): its rows in table {table} do not match the \
                     digest stored with them",
                    d.name,
                    d.hash
                );
            }
        }
        Ok(())
    }

    /// A canonical text of every result and cell in the store (not the times
    /// at which definitions were run), for comparing two stores exactly:
    /// every value is printed in full (floats by their shortest exact form).
    pub fn dump(&self) -> Result<String> {
        let mut out = String::new();
        for kind in NetworkKind::ALL {
            if self.layout() >= kind.since_layout() {
                dispatch_kind!(kind, N => N::dump(self, &mut out))?;
            }
        }
        self.dump_definitions(&mut out)?;
        Ok(out)
    }

    /// Checks the digests of every stored run of `network`.
    pub fn check_all_digests(
        &self,
        network: NetworkKind,
    ) -> Result<crate::store::digest::DigestCheck> {
        let keys: Vec<String> = network.done_keys(self)?.into_iter().collect();
        self.check_digests(
            network.run_tables(),
            network.since_layout(),
            keys.iter().map(String::as_str),
        )
    }
}

/// The network of a stored definition.
pub fn network_of(d: &Definition) -> Result<NetworkKind> {
    NetworkKind::named(&d.network).ok_or_else(|| {
        anyhow!(
            "definition {} of campaign `{}` is on network `{}`, which this build does not know",
            d.hash,
            d.name,
            d.network
        )
    })
}

/// The run keys of a stored definition's cells.
pub fn definition_keys(store: &Store, d: &Definition) -> Result<Vec<String>> {
    dispatch_kind!(network_of(d)?, N => N::definition_keys(store, &d.hash))
}

/// Gathers the report of `definition` from `store` and, if a run of it is
/// finished, writes it into `out`.
pub fn report(
    store: &Store,
    definition: Definition,
    others: Vec<Definition>,
    out: &Path,
) -> Result<Reported> {
    dispatch_kind!(network_of(&definition)?, N => N::report(store, definition, others, out))
}

/// The JSON document `coapcc run --format json` prints for a scenario of any
/// network: the scenario `S` as run and its per-algorithm summaries `A`.
#[derive(Serialize)]
pub struct RunReport<'a, S, A> {
    /// The scenario as run (after overrides).
    pub scenario: &'a S,
    /// Per algorithm, in scenario order.
    pub algorithms: &'a [A],
}

/// One JSON document for a scenario's results ([`RunReport`]).
pub fn run_json<S: Serialize, A: Serialize>(scenario: &S, summaries: &[A]) -> String {
    serde_json::to_string_pretty(&RunReport {
        scenario,
        algorithms: summaries,
    })
    .expect("results serialise")
}

/// `mean ± ci95` with `decimals` decimals: how the grid's and the star's
/// printed tables write an estimate.
pub fn estimate_text(e: &coapcc_sim::metrics::Estimate, decimals: usize) -> String {
    format!("{:.decimals$} ± {:.decimals$}", e.mean, e.ci95)
}

/// One Markdown table under the line `title`: the `head` row, its separator
/// and one row of cells a summary.
pub fn markdown_table(
    title: &str,
    head: &[&str],
    rows: impl IntoIterator<Item = Vec<String>>,
) -> String {
    let mut out = format!(
        "{title}\n\n| {} |\n|{}\n",
        head.join(" | "),
        " --- |".repeat(head.len())
    );
    for row in rows {
        out.push_str(&format!("| {} |\n", row.join(" | ")));
    }
    out
}
