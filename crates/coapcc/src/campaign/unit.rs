//! One run of a campaign — a *unit*: a cell's run key and replication — and
//! the three steps every executor takes with it: list the units a store still
//! lacks ([`Campaign::pending`]), compute one ([`Campaign::compute`]), store
//! one ([`Campaign::commit`]).
//!
//! The local runner ([`run`], behind `coapcc campaign`) computes units
//! on worker threads and commits them on the calling thread; the Python
//! package's Ray executor computes them in other processes, possibly on other
//! machines, and hands each result back to its driver as bytes
//! ([`crate::networks::UnitResult::encode`]), which commits it with the same function. A unit
//! is a pure function of its spec and replication (spec `docs/spec/architecture-spec.md`:
//! same scenario and seed, same results), so where it was computed leaves no
//! trace in the store.

use std::collections::{BTreeSet, HashSet};
use std::time::Duration;

use anyhow::{anyhow, bail, Result};
use coapcc_sim::SimNetwork;
use serde::{Deserialize, Serialize};

use super::progress::Progress;
use super::runner::{execute_with, Outcome};
use crate::store::Store;

/// One run of a campaign still to do.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unit {
    /// Its run key (the store's primary key of the run).
    pub key: String,
    /// The index of a cell of the plan whose runs include it.
    pub cell: usize,
    /// Which replication of that cell.
    pub replication: u32,
    /// Its expected cost, for ordering and the ETA.
    pub weight: u64,
}

/// A campaign plan seen as units: what the local runner and the remote
/// executors need of it, on any network. Each network's plan is one through
/// [`NetworkPlan`]; a plan of any network ([`crate::networks::AnyPlan`]) is
/// one too.
pub trait Campaign: Sync {
    /// What computing a unit gives.
    type Result: Send;
    /// Records the definition and its cells in `store` (idempotent).
    fn register(&self, store: &mut Store) -> Result<()>;
    /// The run keys of this network that `store` holds.
    fn done_keys(&self, store: &Store) -> Result<HashSet<String>>;
    /// The campaign's distinct run keys.
    fn total(&self) -> usize;
    /// The units whose keys are not in `done`, each key once, heaviest first
    /// (so the long runs do not end up alone at the end), ties by key.
    fn pending(&self, done: &HashSet<String>) -> Vec<Unit>;
    /// Runs `unit` (which must be one of this plan's).
    fn compute(&self, unit: &Unit) -> Result<Self::Result>;
    /// Writes `result` of `unit` to `store` in one transaction; a key already
    /// present is left as it is.
    fn commit(&self, store: &mut Store, unit: &Unit, result: &Self::Result) -> Result<()>;
}

/// One cell of a network's plan: its run keys (one per replication) and its
/// run spec. A network's cell is a struct holding, in this order (the order
/// of the cell's JSON, which the campaign's definition hashes), the set's
/// name (`set`), the network's own fields, the run (`spec`) and its keys
/// (`keys`).
pub trait PlanCell {
    /// The run spec.
    type Spec;
    /// Its run keys, replication by replication.
    fn keys(&self) -> &[String];
    /// Its run spec.
    fn spec(&self) -> &Self::Spec;
}

/// What a network's plan provides to be a [`Campaign`].
pub trait NetworkPlan: Sync {
    /// Its cells.
    type Cell: PlanCell + Sync;
    /// The network its runs are simulated on (a run is the network's
    /// [`SimNetwork::run`]).
    type Network: SimNetwork<RunSpec = <Self::Cell as PlanCell>::Spec>;
    /// The cells, in campaign order.
    fn cells(&self) -> &[Self::Cell];
    /// The expected cost of a run, for ordering and the ETA.
    fn weight(spec: &<Self::Cell as PlanCell>::Spec) -> u64;
    /// Records the definition and its cells in `store` (idempotent).
    fn register(&self, store: &mut Store) -> Result<()>;
    /// The run keys of this network that `store` holds.
    fn done_keys(store: &Store) -> Result<HashSet<String>>;
    /// Writes one run in one transaction; a key already present is left as
    /// it is.
    fn insert(
        store: &mut Store,
        key: &str,
        spec: &<Self::Cell as PlanCell>::Spec,
        replication: u32,
        result: &RunResult<Self>,
    ) -> Result<()>;
}

/// What one run of a network's plan `P` gives.
pub type RunResult<P> = <<P as NetworkPlan>::Network as SimNetwork>::RunResult;

impl<P: NetworkPlan> Campaign for P {
    type Result = RunResult<P>;
    fn register(&self, store: &mut Store) -> Result<()> {
        NetworkPlan::register(self, store)
    }
    fn done_keys(&self, store: &Store) -> Result<HashSet<String>> {
        P::done_keys(store)
    }
    fn total(&self) -> usize {
        let keys: BTreeSet<&str> = self
            .cells()
            .iter()
            .flat_map(|c| c.keys().iter().map(String::as_str))
            .collect();
        keys.len()
    }
    fn pending(&self, done: &HashSet<String>) -> Vec<Unit> {
        units(self.cells(), |c| P::weight(c.spec()), done)
    }
    fn compute(&self, unit: &Unit) -> Result<RunResult<P>> {
        let spec = spec_of(self.cells(), unit)?;
        let context = || format!("run {} (replication {})", unit.key, unit.replication);
        // An algorithm's fault stops this run with an error, and the
        // campaign with it (the runs stored before stay).
        coapcc_rto::fault::catch(|| P::Network::run(spec, unit.replication))
            .map_err(|f| anyhow::Error::from(f).context(context()))?
            .map_err(|e| anyhow!("{}: {e}", context()))
    }
    fn commit(&self, store: &mut Store, unit: &Unit, result: &RunResult<P>) -> Result<()> {
        let spec = spec_of(self.cells(), unit)?;
        P::insert(store, &unit.key, spec, unit.replication, result)
    }
}

/// The units of `cells` whose keys are not in `done`, as
/// [`Campaign::pending`] orders them.
fn units<C: PlanCell>(
    cells: &[C],
    weight: impl Fn(&C) -> u64,
    done: &HashSet<String>,
) -> Vec<Unit> {
    let mut seen: HashSet<&str> = HashSet::new();
    let mut out = Vec::new();
    for (i, cell) in cells.iter().enumerate() {
        let w = weight(cell);
        for (r, key) in cell.keys().iter().enumerate() {
            if done.contains(key) || !seen.insert(key) {
                continue;
            }
            out.push(Unit {
                key: key.clone(),
                cell: i,
                replication: r as u32,
                weight: w,
            });
        }
    }
    out.sort_by(|a, b| b.weight.cmp(&a.weight).then_with(|| a.key.cmp(&b.key)));
    out
}

/// The spec of `unit` in `cells`, checking that the unit belongs to them.
fn spec_of<'a, C: PlanCell>(cells: &'a [C], unit: &Unit) -> Result<&'a C::Spec> {
    let cell = cells.get(unit.cell).ok_or_else(|| {
        anyhow!(
            "unit {} names cell {}: the campaign has {} cells (was it planned from another \
             definition?)",
            unit.key,
            unit.cell,
            cells.len()
        )
    })?;
    if cell.keys().get(unit.replication as usize) != Some(&unit.key) {
        bail!(
            "unit {}: not replication {} of cell {} of this campaign (was it planned from \
             another definition?)",
            unit.key,
            unit.replication,
            unit.cell
        );
    }
    Ok(cell.spec())
}

/// Registers `plan` in `store` and lists the units it lacks: the first step
/// of every executor. Returns the campaign's distinct runs and those units.
pub fn prepare<C: Campaign + ?Sized>(plan: &C, store: &mut Store) -> Result<(usize, Vec<Unit>)> {
    plan.register(store)?;
    let done = plan.done_keys(store)?;
    Ok((plan.total(), plan.pending(&done)))
}

/// Runs every unit of `plan` missing from `store` on `threads` workers (0:
/// every core), committing each as it finishes; `pause` (tests only) sleeps
/// after each commit; `show_progress` draws the progress on stderr. One
/// function for every network: `plan` is one network's plan, or a
/// [`crate::networks::AnyPlan`].
pub fn run<C: Campaign + ?Sized>(
    plan: &C,
    store: &mut Store,
    threads: usize,
    pause: Option<Duration>,
    show_progress: bool,
) -> Result<Outcome> {
    let (total, jobs) = prepare(plan, store)?;
    let weight: u64 = jobs.iter().map(|j| j.weight).sum();
    let mut progress = Progress::new(weight, jobs.len(), show_progress);
    let computed = execute_with(
        &jobs,
        threads,
        |unit| plan.compute(unit),
        |unit, result| plan.commit(store, unit, &result),
        &mut |unit| {
            progress.stored(unit.weight);
            if let Some(p) = pause {
                std::thread::sleep(p);
            }
        },
    )?;
    progress.finish();
    Ok(Outcome {
        total,
        reused: total - jobs.len(),
        computed,
    })
}
