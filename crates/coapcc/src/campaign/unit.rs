//! One run of a campaign — a *unit*: a cell's run key and replication — and
//! the three steps every executor takes with it: list the units a store still
//! lacks ([`Campaign::pending`]), compute one ([`Campaign::compute`]), store
//! one ([`Campaign::commit`]).
//!
//! The local runner ([`run`], behind `coapcc campaign`) computes units
//! on worker threads and commits them on the calling thread; the Python
//! package's Ray executor computes them in other processes, possibly on other
//! machines, and hands each result back to its driver as bytes
//! ([`UnitResult::encode`]), which commits it with the same function. A unit
//! is a pure function of its spec and replication (spec `architecture.md`:
//! same scenario and seed, same results), so where it was computed leaves no
//! trace in the store.

use std::collections::{BTreeSet, HashSet};
use std::time::Duration;

use anyhow::{anyhow, bail, Result};
use coapcc_sim::grid::GridRunResult;
use coapcc_sim::star::StarRunResult;
use coapcc_sim::RunResult;
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

/// What computing a unit gives, on one of the three networks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum UnitResult {
    /// A dumbbell run.
    Dumbbell(RunResult),
    /// A grid run.
    Grid(GridRunResult),
    /// A star run.
    Star(StarRunResult),
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

    fn network(&self) -> &'static str {
        match self {
            UnitResult::Dumbbell(_) => "dumbbell",
            UnitResult::Grid(_) => "grid",
            UnitResult::Star(_) => "star",
        }
    }
}

/// A campaign plan seen as units: what the local runner and the remote
/// executors need of it, on any network.
pub trait Campaign: Sync {
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
    fn compute(&self, unit: &Unit) -> Result<UnitResult>;
    /// Writes `result` of `unit` to `store` in one transaction; a key already
    /// present is left as it is.
    fn commit(&self, store: &mut Store, unit: &Unit, result: &UnitResult) -> Result<()>;
}

/// The units of `cells` whose keys are not in `done`, as
/// [`Campaign::pending`] orders them.
pub(super) fn units<C>(
    cells: &[C],
    keys: impl Fn(&C) -> &[String],
    weight: impl Fn(&C) -> u64,
    done: &HashSet<String>,
) -> Vec<Unit> {
    let mut seen: HashSet<&str> = HashSet::new();
    let mut out = Vec::new();
    for (i, cell) in cells.iter().enumerate() {
        let w = weight(cell);
        for (r, key) in keys(cell).iter().enumerate() {
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
pub(super) fn spec_of<'a, C, S>(
    cells: &'a [C],
    keys: impl Fn(&C) -> &[String],
    spec: impl Fn(&'a C) -> &'a S,
    unit: &Unit,
) -> Result<&'a S> {
    let cell = cells.get(unit.cell).ok_or_else(|| {
        anyhow!(
            "unit {} names cell {}: the campaign has {} cells (was it planned from another \
             definition?)",
            unit.key,
            unit.cell,
            cells.len()
        )
    })?;
    if keys(cell).get(unit.replication as usize) != Some(&unit.key) {
        bail!(
            "unit {}: not replication {} of cell {} of this campaign (was it planned from \
             another definition?)",
            unit.key,
            unit.replication,
            unit.cell
        );
    }
    Ok(spec(cell))
}

pub(super) fn mismatch(result: &UnitResult, network: &str) -> anyhow::Error {
    anyhow!("a {} run result for a {network} campaign", result.network())
}

pub(super) fn failed(unit: &Unit, e: impl std::fmt::Display) -> anyhow::Error {
    anyhow!("run {} (replication {}): {e}", unit.key, unit.replication)
}

pub(super) fn count(keys: BTreeSet<&str>) -> usize {
    keys.len()
}

/// Registers `plan` in `store` and lists the units it lacks: the first step
/// of every executor. Returns the campaign's distinct runs and those units.
pub fn prepare(plan: &dyn Campaign, store: &mut Store) -> Result<(usize, Vec<Unit>)> {
    plan.register(store)?;
    let done = plan.done_keys(store)?;
    Ok((plan.total(), plan.pending(&done)))
}

/// Runs every unit of `plan` missing from `store` on `threads` workers (0:
/// every core), committing each as it finishes; `pause` (tests only) sleeps
/// after each commit; `show_progress` draws the progress on stderr. One
/// function for every network: `plan` is a dumbbell, grid or star plan, or an
/// [`super::AnyPlan`].
pub fn run(
    plan: &dyn Campaign,
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
