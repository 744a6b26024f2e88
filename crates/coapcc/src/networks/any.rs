//! A network's values behind one type each, whichever network they are of:
//! [`AnyScenario`], [`AnyPlan`], [`UnitResult`] and [`Ran`], and
//! [`Network`], the object-safe face of a [`LabNetwork`] that the registry
//! ([`super::NETWORKS`]) lists. Each holds a trait object implemented once,
//! generically, for every [`LabNetwork`]: no network is named here.

use std::any::Any;
use std::collections::{BTreeSet, HashSet};
use std::fmt;
use std::marker::PhantomData;
use std::path::Path;
use std::sync::atomic::AtomicBool;

use anyhow::{anyhow, Result};
use serde::Serialize;
use serde_json::{Map, Value};

use super::lab::{LabNetwork, Reported, ScenarioOutcome};
use super::NetworkKind;
use crate::bench::BenchOptions;
use crate::campaign::ceiling::{Estimate, SetSample};
use crate::campaign::{Campaign, Plan, PlanCell, Unit};
use crate::cost::RunCost;
use crate::emulate::Emulator;
use crate::scenario_file::Overrides;
use crate::store::{Definition, NetworkTables, Store};

/// A network as the registry holds it: what the shared code reaches without
/// knowing the network's types.
pub trait Network: Sync {
    /// Its `[network] kind`.
    fn name(&self) -> &'static str;
    /// Its tables in the store.
    fn tables(&self) -> &'static NetworkTables;
    /// What it is ([`LabNetwork::ABOUT`]).
    fn about(&self) -> &'static str;
    /// Parses and validates a scenario; `origin` names it in errors.
    fn parse_scenario(&self, text: &str, origin: &str) -> Result<AnyScenario>;
    /// Parses and expands campaign text; `origin` names it in errors.
    fn parse_plan(&self, text: &str, origin: &str) -> Result<AnyPlan>;
    /// Counts and samples the cells of campaign text without expanding it.
    fn sample_plan(&self, text: &str, origin: &str) -> Result<Vec<SetSample>>;
    /// The keys of every stored run of this network.
    fn done_keys(&self, store: &Store) -> Result<HashSet<String>>;
    /// The run keys of a stored definition's cells.
    fn definition_keys(&self, store: &Store, hash: &str) -> Result<Vec<String>>;
    /// Checks this network's stored runs.
    fn verify(&self, store: &Store) -> Result<()>;
    /// This network's tables, as text ([`super::dump`]).
    fn dump(&self, store: &Store, out: &mut String) -> Result<()>;
    /// Gathers the report of `definition` and, if a run of it is finished,
    /// writes it into `out`.
    fn report(
        &self,
        store: &Store,
        definition: Definition,
        others: Vec<Definition>,
        out: &Path,
    ) -> Result<Reported>;
    /// `coapcc bench` on this network ([`LabNetwork::bench`]).
    fn bench(&self, o: &BenchOptions, out: &mut dyn FnMut(String) -> Result<()>) -> Result<()>;
    /// Its real-time emulator ([`LabNetwork::emulator`]).
    fn emulator(&self) -> Option<&'static dyn Emulator>;
    /// A run result of this network from its CBOR value
    /// ([`UnitResult::decode`]).
    fn decode_result(&self, value: ciborium::Value) -> Result<UnitResult>;
}

/// The registry's entry of network `N`: [`Network`] for every
/// [`LabNetwork`].
pub struct Entry<N>(PhantomData<fn() -> N>);

impl<N> Entry<N> {
    /// The entry.
    pub const NEW: Entry<N> = Entry(PhantomData);
}

impl<N: LabNetwork> Network for Entry<N> {
    fn name(&self) -> &'static str {
        N::NAME
    }
    fn tables(&self) -> &'static NetworkTables {
        &N::TABLES
    }
    fn about(&self) -> &'static str {
        N::ABOUT
    }
    fn parse_scenario(&self, text: &str, origin: &str) -> Result<AnyScenario> {
        Ok(AnyScenario(Box::new(Of::<N, _>::new(N::parse_scenario(
            text, origin,
        )?))))
    }
    fn parse_plan(&self, text: &str, origin: &str) -> Result<AnyPlan> {
        Ok(AnyPlan(Box::new(Of::<N, _>::new(N::parse_plan(
            text, origin,
        )?))))
    }
    fn sample_plan(&self, text: &str, origin: &str) -> Result<Vec<SetSample>> {
        N::sample_plan(text, origin)
    }
    fn done_keys(&self, store: &Store) -> Result<HashSet<String>> {
        N::done_keys(store)
    }
    fn definition_keys(&self, store: &Store, hash: &str) -> Result<Vec<String>> {
        N::definition_keys(store, hash)
    }
    fn verify(&self, store: &Store) -> Result<()> {
        N::verify(store)
    }
    fn dump(&self, store: &Store, out: &mut String) -> Result<()> {
        N::dump(store, out)
    }
    fn report(
        &self,
        store: &Store,
        definition: Definition,
        others: Vec<Definition>,
        out: &Path,
    ) -> Result<Reported> {
        N::report(store, definition, others, out)
    }
    fn bench(&self, o: &BenchOptions, out: &mut dyn FnMut(String) -> Result<()>) -> Result<()> {
        N::bench(o, out)
    }
    fn emulator(&self) -> Option<&'static dyn Emulator> {
        N::emulator()
    }
    fn decode_result(&self, value: ciborium::Value) -> Result<UnitResult> {
        let r: N::RunResult = value
            .deserialized()
            .map_err(|e| anyhow!("expected a {} run result ({e})", N::NAME))?;
        Ok(UnitResult(Box::new(Of::<N, _>::new(r))))
    }
}

/// A value `T` of network `N`.
struct Of<N, T> {
    value: T,
    network: PhantomData<fn() -> N>,
}

impl<N, T> Of<N, T> {
    fn new(value: T) -> Self {
        Of {
            value,
            network: PhantomData,
        }
    }
}

/// The value of network `N` that `x` holds, if it holds one of `N`.
fn downcast<N: LabNetwork, T: 'static>(x: &dyn Any) -> Option<&T> {
    x.downcast_ref::<Of<N, T>>().map(|o| &o.value)
}

// ----- scenarios -------------------------------------------------------------

/// A scenario of any network.
pub struct AnyScenario(Box<dyn DynScenario>);

trait DynScenario: Any + Send + Sync {
    fn kind(&self) -> NetworkKind;
    fn clone_box(&self) -> Box<dyn DynScenario>;
    fn debug(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result;
    fn eq_dyn(&self, other: &dyn Any) -> bool;
    fn apply(self: Box<Self>, o: &Overrides, origin: &str) -> Result<Box<dyn DynScenario>>;
    fn replications(&self) -> u32;
    fn reduce(&mut self) -> bool;
    fn labels(&self) -> Vec<&str>;
    fn largest_cost(&self) -> RunCost;
    fn run_on<'a>(
        &'a self,
        pool: &rayon::ThreadPool,
        progress: &(dyn Fn() + Sync),
        stop: &AtomicBool,
    ) -> Result<Ran<'a>>;
    fn pcap_unit(&self) -> Result<&'static str>;
    fn write_pcap(&self, i: usize, file: &Path) -> Result<u64>;
}

impl<N: LabNetwork> DynScenario for Of<N, N::Scenario> {
    fn kind(&self) -> NetworkKind {
        NetworkKind::of::<N>()
    }
    fn clone_box(&self) -> Box<dyn DynScenario> {
        Box::new(Of::<N, _>::new(self.value.clone()))
    }
    fn debug(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple(N::NAME).field(&self.value).finish()
    }
    fn eq_dyn(&self, other: &dyn Any) -> bool {
        downcast::<N, N::Scenario>(other).is_some_and(|o| *o == self.value)
    }
    fn apply(self: Box<Self>, o: &Overrides, origin: &str) -> Result<Box<dyn DynScenario>> {
        Ok(Box::new(Of::<N, _>::new(N::apply(o, self.value, origin)?)))
    }
    fn replications(&self) -> u32 {
        N::replications(&self.value)
    }
    fn reduce(&mut self) -> bool {
        N::reduce(&mut self.value)
    }
    fn labels(&self) -> Vec<&str> {
        N::labels(&self.value)
    }
    fn largest_cost(&self) -> RunCost {
        (0..N::labels(&self.value).len())
            .map(|i| N::run_cost(&N::run_spec(&self.value, i)))
            .fold(RunCost::default(), RunCost::max)
    }
    fn run_on<'a>(
        &'a self,
        pool: &rayon::ThreadPool,
        progress: &(dyn Fn() + Sync),
        stop: &AtomicBool,
    ) -> Result<Ran<'a>> {
        let outcome =
            coapcc_rto::fault::catch(|| pool.install(|| N::run(&self.value, progress, stop)))??;
        Ok(Ran(Box::new(Of::<N, _>::new((&self.value, outcome)))))
    }
    fn pcap_unit(&self) -> Result<&'static str> {
        N::pcap_unit()
    }
    fn write_pcap(&self, i: usize, file: &Path) -> Result<u64> {
        N::write_pcap(&self.value, i, file)
    }
}

impl Clone for AnyScenario {
    fn clone(&self) -> Self {
        AnyScenario(self.0.clone_box())
    }
}

impl fmt::Debug for AnyScenario {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.debug(f)
    }
}

impl PartialEq for AnyScenario {
    fn eq(&self, other: &Self) -> bool {
        self.0.eq_dyn(&*other.0 as &dyn Any)
    }
}

impl AnyScenario {
    /// Parses a scenario of any network from TOML text (its `[network]
    /// kind` says which); `origin` names the file in errors.
    pub fn parse(text: &str, origin: &str) -> Result<AnyScenario> {
        NetworkKind::of_toml(text, origin)?
            .network()
            .parse_scenario(text, origin)
    }

    /// Loads and validates a scenario file of any network.
    pub fn load(path: &Path) -> Result<AnyScenario> {
        use anyhow::Context;
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("{}: cannot read the scenario file", path.display()))?;
        Self::parse(&text, &path.display().to_string())
    }

    /// A scenario of network `N`.
    pub fn new<N: LabNetwork>(s: N::Scenario) -> AnyScenario {
        AnyScenario(Box::new(Of::<N, _>::new(s)))
    }

    /// The scenario, if it is one of network `N`.
    pub fn get<N: LabNetwork>(&self) -> Option<&N::Scenario> {
        downcast::<N, N::Scenario>(&*self.0 as &dyn Any)
    }

    /// The scenario, if it is one of network `N`.
    pub fn get_mut<N: LabNetwork>(&mut self) -> Option<&mut N::Scenario> {
        let any: &mut dyn Any = &mut *self.0;
        any.downcast_mut::<Of<N, N::Scenario>>()
            .map(|o| &mut o.value)
    }

    /// The scenario, if it is one of network `N`.
    pub fn into_inner<N: LabNetwork>(self) -> Option<N::Scenario> {
        let any: Box<dyn Any> = self.0;
        any.downcast::<Of<N, N::Scenario>>().ok().map(|o| o.value)
    }

    /// Its network.
    pub fn kind(&self) -> NetworkKind {
        self.0.kind()
    }

    /// Its network's name.
    pub fn network(&self) -> &'static str {
        self.kind().name()
    }

    /// Applies command-line overrides and re-validates.
    pub fn apply(self, overrides: &Overrides, origin: &str) -> Result<AnyScenario> {
        Ok(AnyScenario(self.0.apply(overrides, origin)?))
    }

    /// Its replications per algorithm.
    pub fn replications(&self) -> u32 {
        self.0.replications()
    }

    /// The scenario cut down to a quick run ([`LabNetwork::reduce`]), or
    /// `None` if even that is too long for a test.
    pub fn reduced(mut self) -> Option<AnyScenario> {
        self.0.reduce().then_some(self)
    }

    /// The labels of its algorithms.
    pub fn labels(&self) -> Vec<&str> {
        self.0.labels()
    }

    /// The runs it will make: every algorithm's replications.
    pub fn planned_runs(&self) -> u64 {
        self.labels().len() as u64 * u64::from(self.replications())
    }

    /// The cost of its most expensive run and its number of runs.
    pub fn cost(&self) -> (RunCost, u64) {
        (self.0.largest_cost(), self.planned_runs())
    }

    /// Checks it against the resource bounds of `coapcc run` on `threads`
    /// threads ([`crate::budget::check_scenario`]); errors name `origin`.
    pub fn check_budget(&self, origin: &str, threads: usize, force: bool) -> Result<()> {
        let (cost, runs) = self.cost();
        crate::budget::check_scenario(cost, runs, self.replications(), origin, threads, force)
    }

    /// Runs every replication of every algorithm on `pool`: `progress` is
    /// called once per finished run; once `stop` is set, the run stops and
    /// fails with `cancelled` ([`coapcc_sim::stop`]); an algorithm's fault
    /// ([`coapcc_rto::fault`]) stops it and is its error.
    pub fn run_on(
        &self,
        pool: &rayon::ThreadPool,
        progress: &(dyn Fn() + Sync),
        stop: &AtomicBool,
    ) -> Result<Ran<'_>> {
        self.0.run_on(pool, progress, stop)
    }

    /// Fails unless `--pcap` can write this scenario's traffic.
    pub fn check_pcap(&self) -> Result<()> {
        self.0.pcap_unit().map(drop)
    }

    /// Re-runs replication 0 of algorithm `i` with a tap writing its traffic
    /// to `file` (runs are deterministic: the same traffic as the run
    /// reported); returns how many packets or frames it wrote, and which.
    pub fn write_pcap(&self, i: usize, file: &Path) -> Result<(u64, &'static str)> {
        Ok((self.0.write_pcap(i, file)?, self.0.pcap_unit()?))
    }
}

// ----- a scenario's results --------------------------------------------------

/// A scenario and what running it gave, on whichever network it ran.
pub struct Ran<'a>(Box<dyn DynRan + 'a>);

trait DynRan {
    fn kind(&self) -> NetworkKind;
    fn debug(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result;
    fn json(&self) -> String;
    fn table(&self) -> String;
    fn markdown(&self) -> String;
    fn records(&self) -> String;
    fn histograms(&self) -> String;
    fn runs(&self) -> u64;
    fn events(&self) -> u64;
    fn result_json(&self) -> Value;
}

#[derive(Serialize)]
struct Row<'a, T: Serialize> {
    algorithm: &'a str,
    replication: usize,
    #[serde(flatten)]
    record: &'a T,
}

impl<N: LabNetwork> DynRan for Of<N, (&N::Scenario, ScenarioOutcome<N>)> {
    fn kind(&self) -> NetworkKind {
        NetworkKind::of::<N>()
    }
    fn debug(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple(N::NAME).field(&self.value).finish()
    }
    fn json(&self) -> String {
        N::json(self.value.0, &self.value.1)
    }
    fn table(&self) -> String {
        N::table(self.value.0, &self.value.1)
    }
    fn markdown(&self) -> String {
        N::markdown(self.value.0, &self.value.1)
    }
    fn records(&self) -> String {
        let (s, r) = (self.value.0, &self.value.1);
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
    }
    fn histograms(&self) -> String {
        N::histograms(self.value.0, &self.value.1)
    }
    fn runs(&self) -> u64 {
        N::runs(&self.value.1).iter().map(|v| v.len() as u64).sum()
    }
    fn events(&self) -> u64 {
        N::runs(&self.value.1).iter().flatten().map(N::events).sum()
    }
    fn result_json(&self) -> Value {
        N::result_json(&self.value.1)
    }
}

impl fmt::Debug for Ran<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.debug(f)
    }
}

impl Ran<'_> {
    /// Its network.
    pub fn kind(&self) -> NetworkKind {
        self.0.kind()
    }

    /// Its network's name.
    pub fn network(&self) -> &'static str {
        self.kind().name()
    }

    /// What `coapcc run --format json` prints, without the final newline.
    pub fn json(&self) -> String {
        self.0.json()
    }

    /// What `coapcc run` prints as its table (without the wall-time line).
    pub fn table(&self) -> String {
        self.0.table()
    }

    /// What `coapcc run --format markdown` prints.
    pub fn markdown(&self) -> String {
        self.0.markdown()
    }

    /// [`crate::api::Outcome::records`].
    pub fn records(&self) -> String {
        self.0.records()
    }

    /// [`crate::api::Outcome::histograms`].
    pub fn histograms(&self) -> String {
        self.0.histograms()
    }

    /// The runs made.
    pub fn runs(&self) -> u64 {
        self.0.runs()
    }

    /// The events processed over all runs.
    pub fn events(&self) -> u64 {
        self.0.events()
    }

    /// Every summary and every run's raw result as one JSON value
    /// ([`LabNetwork::result_json`]).
    pub fn result_json(&self) -> Value {
        self.0.result_json()
    }
}

// ----- campaigns -------------------------------------------------------------

/// A campaign of any network, as its file's `[network] kind` says.
pub struct AnyPlan(Box<dyn DynPlan>);

trait DynPlan: Any + Send + Sync {
    fn kind(&self) -> NetworkKind;
    fn clone_box(&self) -> Box<dyn DynPlan>;
    fn debug(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result;
    fn identity(&self) -> (&str, &str);
    fn text(&self) -> (&str, &str);
    fn notes(&self) -> Vec<String>;
    fn costs(&self) -> Vec<RunCost>;
    fn distinct_keys(&self) -> BTreeSet<&str>;
    fn cell_rows(&self) -> Vec<(Map<String, Value>, &[String])>;
    fn register(&self, store: &mut Store) -> Result<()>;
    fn total(&self) -> usize;
    fn pending(&self, done: &HashSet<String>) -> Vec<Unit>;
    fn compute(&self, unit: &Unit) -> Result<UnitResult>;
    fn commit(&self, store: &mut Store, unit: &Unit, result: &UnitResult) -> Result<()>;
}

impl<N: LabNetwork> DynPlan for Of<N, Plan<N::File, N::Cell>> {
    fn kind(&self) -> NetworkKind {
        NetworkKind::of::<N>()
    }
    fn clone_box(&self) -> Box<dyn DynPlan> {
        Box::new(Of::<N, _>::new(self.value.clone()))
    }
    fn debug(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple(N::NAME).field(&self.value).finish()
    }
    fn identity(&self) -> (&str, &str) {
        self.value.identity()
    }
    fn text(&self) -> (&str, &str) {
        self.value.text()
    }
    fn notes(&self) -> Vec<String> {
        self.value.notes()
    }
    fn costs(&self) -> Vec<RunCost> {
        self.value
            .cells
            .iter()
            .map(|c| N::run_cost(c.spec()))
            .collect()
    }
    fn distinct_keys(&self) -> BTreeSet<&str> {
        self.value.distinct_keys()
    }
    fn cell_rows(&self) -> Vec<(Map<String, Value>, &[String])> {
        self.value
            .cells
            .iter()
            .map(|c| (cell_row(c, N::cell_algorithm(c)), c.keys()))
            .collect()
    }
    fn register(&self, store: &mut Store) -> Result<()> {
        N::campaign(&self.value).register(store)
    }
    fn total(&self) -> usize {
        N::campaign(&self.value).total()
    }
    fn pending(&self, done: &HashSet<String>) -> Vec<Unit> {
        N::campaign(&self.value).pending(done)
    }
    fn compute(&self, unit: &Unit) -> Result<UnitResult> {
        let r = N::campaign(&self.value).compute(unit)?;
        Ok(UnitResult(Box::new(Of::<N, _>::new(r))))
    }
    fn commit(&self, store: &mut Store, unit: &Unit, result: &UnitResult) -> Result<()> {
        let r = result.get::<N>().ok_or_else(|| {
            anyhow!(
                "a {} run result for a {} campaign",
                result.network(),
                N::NAME
            )
        })?;
        N::campaign(&self.value).commit(store, unit, r)
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

impl Clone for AnyPlan {
    fn clone(&self) -> Self {
        AnyPlan(self.0.clone_box())
    }
}

impl fmt::Debug for AnyPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.debug(f)
    }
}

impl AnyPlan {
    /// Parses and expands campaign text of any network; `origin` names it in
    /// errors.
    pub fn parse(text: &str, origin: &str) -> Result<AnyPlan> {
        NetworkKind::of_toml(text, origin)?
            .network()
            .parse_plan(text, origin)
    }

    /// Loads and expands a campaign file of any network.
    pub fn load(path: &Path) -> Result<AnyPlan> {
        crate::campaign::plan::load(path, Self::parse)
    }

    /// The size of the plan of campaign text of any network, `threads` runs
    /// at a time, estimated without expanding it
    /// ([`crate::campaign::ceiling`]); `origin` names it in errors.
    pub fn estimate(text: &str, origin: &str, threads: usize) -> Result<Estimate> {
        let sets = NetworkKind::of_toml(text, origin)?
            .network()
            .sample_plan(text, origin)?;
        Ok(Estimate::of(&sets, threads))
    }

    /// The plan, if it is one of network `N`.
    pub fn get<N: LabNetwork>(&self) -> Option<&Plan<N::File, N::Cell>> {
        downcast::<N, Plan<N::File, N::Cell>>(&*self.0 as &dyn Any)
    }

    /// The plan, if it is one of network `N`.
    pub fn into_inner<N: LabNetwork>(self) -> Option<Plan<N::File, N::Cell>> {
        let any: Box<dyn Any> = self.0;
        any.downcast::<Of<N, Plan<N::File, N::Cell>>>()
            .ok()
            .map(|o| o.value)
    }

    /// Its network.
    pub fn kind(&self) -> NetworkKind {
        self.0.kind()
    }

    /// Its network's name.
    pub fn network(&self) -> &'static str {
        self.kind().name()
    }

    /// The campaign's name and definition hash.
    pub fn identity(&self) -> (&str, &str) {
        self.0.identity()
    }

    /// The campaign file's text and where it came from: all a worker needs
    /// to expand the same plan ([`AnyPlan::parse`]).
    pub fn text(&self) -> (&str, &str) {
        self.0.text()
    }

    /// Notes to print before running it.
    pub fn notes(&self) -> Vec<String> {
        self.0.notes()
    }

    /// The cost of every cell's runs.
    pub fn costs(&self) -> Vec<RunCost> {
        self.0.costs()
    }

    /// Its distinct run keys.
    pub fn distinct_keys(&self) -> BTreeSet<&str> {
        self.0.distinct_keys()
    }

    /// Each cell as a JSON object (without its run spec and keys; a mixed
    /// population's groups counted), with `algorithm`, and its run keys.
    pub fn cell_rows(&self) -> Vec<(Map<String, Value>, &[String])> {
        self.0.cell_rows()
    }
}

impl Campaign for AnyPlan {
    type Result = UnitResult;
    fn register(&self, store: &mut Store) -> Result<()> {
        self.0.register(store)
    }
    fn done_keys(&self, store: &Store) -> Result<HashSet<String>> {
        self.kind().network().done_keys(store)
    }
    fn total(&self) -> usize {
        self.0.total()
    }
    fn pending(&self, done: &HashSet<String>) -> Vec<Unit> {
        self.0.pending(done)
    }
    fn compute(&self, unit: &Unit) -> Result<UnitResult> {
        self.0.compute(unit)
    }
    fn commit(&self, store: &mut Store, unit: &Unit, result: &UnitResult) -> Result<()> {
        self.0.commit(store, unit, result)
    }
}

// ----- one run's result ------------------------------------------------------

/// What computing a campaign's unit gives, on any network.
pub struct UnitResult(Box<dyn DynResult>);

trait DynResult: Any + Send + Sync {
    fn kind(&self) -> NetworkKind;
    fn clone_box(&self) -> Box<dyn DynResult>;
    fn debug(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result;
    fn eq_dyn(&self, other: &dyn Any) -> bool;
    fn encode(&self) -> Vec<u8>;
}

impl<N: LabNetwork> DynResult for Of<N, N::RunResult> {
    fn kind(&self) -> NetworkKind {
        NetworkKind::of::<N>()
    }
    fn clone_box(&self) -> Box<dyn DynResult> {
        Box::new(Of::<N, _>::new(self.value.clone()))
    }
    fn debug(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple(N::NAME).field(&self.value).finish()
    }
    fn eq_dyn(&self, other: &dyn Any) -> bool {
        downcast::<N, N::RunResult>(other).is_some_and(|o| *o == self.value)
    }
    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        ciborium::into_writer(&(N::NAME, &self.value), &mut out)
            .expect("writing to a Vec cannot fail");
        out
    }
}

impl Clone for UnitResult {
    fn clone(&self) -> Self {
        UnitResult(self.0.clone_box())
    }
}

impl fmt::Debug for UnitResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.debug(f)
    }
}

impl PartialEq for UnitResult {
    fn eq(&self, other: &Self) -> bool {
        self.0.eq_dyn(&*other.0 as &dyn Any)
    }
}

impl UnitResult {
    /// The result, if it is one of network `N`.
    pub fn get<N: LabNetwork>(&self) -> Option<&N::RunResult> {
        downcast::<N, N::RunResult>(&*self.0 as &dyn Any)
    }

    /// The result, if it is one of network `N`.
    pub fn get_mut<N: LabNetwork>(&mut self) -> Option<&mut N::RunResult> {
        let any: &mut dyn Any = &mut *self.0;
        any.downcast_mut::<Of<N, N::RunResult>>()
            .map(|o| &mut o.value)
    }

    /// Its network.
    pub fn kind(&self) -> NetworkKind {
        self.0.kind()
    }

    /// Its network's name.
    pub fn network(&self) -> &'static str {
        self.kind().name()
    }

    /// The result as bytes for another process: CBOR (RFC 8949) of the
    /// network's name and the result, which keeps every `f64` exactly (NaN
    /// and infinities included) and the fields' names, so a result decodes
    /// only into the type it was made from.
    pub fn encode(&self) -> Vec<u8> {
        self.0.encode()
    }

    /// A result from [`UnitResult::encode`]'s bytes.
    pub fn decode(bytes: &[u8]) -> Result<UnitResult> {
        let fail = |e: &dyn fmt::Display| {
            anyhow!(
                "a unit result of {} bytes: expected the CBOR encoding of a run result of this \
                 build ({e})",
                bytes.len()
            )
        };
        let (name, value): (String, ciborium::Value) =
            ciborium::from_reader(bytes).map_err(|e| fail(&e))?;
        let kind = NetworkKind::named(&name)
            .ok_or_else(|| fail(&format!("no network is called `{name}`")))?;
        kind.network().decode_result(value).map_err(|e| fail(&e))
    }
}
