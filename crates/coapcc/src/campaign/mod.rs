//! Campaigns: a whole published evaluation as one matrix of runs (algorithms ×
//! buffers × client counts × workloads × error profiles × replications, and
//! mixed populations; spec `testbed.md` §1.3, §2, `algorithms.md` §7), run on all
//! cores into a resumable results store ([`crate::store`]).
//!
//! - [`file`]: the TOML schema; [`plan`]: expansion and checks; [`dumbbell`]:
//!   the cost of a dumbbell run and the plan as a [`Campaign`];
//! - [`key`]: run keys and the model version; [`unit`]: one run, computed and
//!   stored the same way by every executor; [`runner`]: parallel execution;
//!   [`progress`]: the progress on stderr;
//! - [`grid`]: campaigns on the 802.15.4 grid of the pCoCoA evaluation
//!   (`[network] kind = "grid"`, spec `testbed.md` §4);
//! - [`star`]: campaigns on the Wi-Fi star of the lwIP evaluation
//!   (`[network] kind = "star"`, spec `testbed.md` §5).

pub mod dumbbell;
pub mod file;
pub mod grid;
pub mod key;
pub mod plan;
pub mod progress;
pub mod runner;
pub mod sets;
pub mod star;
pub mod unit;

use std::collections::HashSet;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use crate::scenario_file::{network_kind, NetworkKind};
use crate::store::Store;
pub use grid::{GridCell, GridPlan};
pub use plan::{load, parse, Cell, Plan};
pub use progress::Progress;
pub use runner::Outcome;
pub use star::{StarCell, StarPlan};
pub use unit::{run, Campaign, Unit, UnitResult};

/// A campaign of either network, as its file's `[network] kind` says.
#[derive(Clone, Debug)]
pub enum AnyPlan {
    /// On the constrained-link dumbbell.
    Dumbbell(Box<Plan>),
    /// On the 802.15.4 grid.
    Grid(Box<GridPlan>),
    /// On the Wi-Fi star.
    Star(Box<StarPlan>),
}

/// Parses and expands campaign text of either network; `origin` names it in
/// errors.
pub fn parse_any(text: &str, origin: &str) -> Result<AnyPlan> {
    Ok(match network_kind(text, origin)? {
        NetworkKind::Dumbbell => AnyPlan::Dumbbell(Box::new(parse(text, origin)?)),
        NetworkKind::Grid => AnyPlan::Grid(Box::new(grid::parse(text, origin)?)),
        NetworkKind::Star => AnyPlan::Star(Box::new(star::parse(text, origin)?)),
    })
}

/// Loads and expands a campaign file of either network.
pub fn load_any(path: &Path) -> Result<AnyPlan> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read the campaign file", path.display()))?;
    parse_any(&text, &path.display().to_string())
}

impl AnyPlan {
    /// The plan of whichever network it is, as a [`Campaign`].
    fn inner(&self) -> &dyn Campaign {
        match self {
            AnyPlan::Dumbbell(p) => &**p,
            AnyPlan::Grid(p) => &**p,
            AnyPlan::Star(p) => &**p,
        }
    }
}

impl Campaign for AnyPlan {
    fn register(&self, store: &mut Store) -> Result<()> {
        self.inner().register(store)
    }
    fn done_keys(&self, store: &Store) -> Result<HashSet<String>> {
        self.inner().done_keys(store)
    }
    fn total(&self) -> usize {
        self.inner().total()
    }
    fn pending(&self, done: &HashSet<String>) -> Vec<Unit> {
        self.inner().pending(done)
    }
    fn compute(&self, unit: &Unit) -> Result<UnitResult> {
        self.inner().compute(unit)
    }
    fn commit(&self, store: &mut Store, unit: &Unit, result: &UnitResult) -> Result<()> {
        self.inner().commit(store, unit, result)
    }
}

/// `coapcc campaign <file> --store … --threads …`: a dumbbell, grid or star
/// campaign, as the file's `[network] kind` says.
pub fn cli(
    file: &Path,
    store: &Path,
    threads: Option<usize>,
    pause_ms: Option<u64>,
    force: bool,
) -> Result<()> {
    let threads = crate::budget::threads(threads)?;
    let plan = load_any(file)?;
    check_budget(&plan, &file.display().to_string(), threads, force)?;
    if crate::store::read_only(store) {
        return complete_read_only(&plan, store);
    }
    let mut db = Store::open(store)?;
    if let Some(old) = db.upgraded_from() {
        eprintln!(
            "note: upgraded {} from store layout {old} to {} (tables added, nothing changed)",
            store.display(),
            crate::store::SCHEMA_VERSION
        );
    }
    let (name, definition) = match &plan {
        AnyPlan::Dumbbell(p) => {
            for s in &p.skipped {
                eprintln!(
                    "skipping `{}`: not available in this build ({})",
                    s.name, s.reason
                );
            }
            (p.file.name.as_str(), p.definition.as_str())
        }
        AnyPlan::Grid(p) => (p.file.name.as_str(), p.definition.as_str()),
        AnyPlan::Star(p) => (p.file.name.as_str(), p.definition.as_str()),
    };
    let others: Vec<_> = db
        .definitions()?
        .into_iter()
        .filter(|d| d.name == name && d.hash != definition)
        .collect();
    if !others.is_empty() {
        eprintln!(
            "note: {} holds {} other definition(s) of campaign `{name}` (changed parameters or \
             model version); their runs are reused only where a run's full spec is unchanged, \
             and `coapcc report` shows only the definition run last",
            store.display(),
            others.len(),
        );
    }
    let started = Instant::now();
    let pause = pause_ms.map(Duration::from_millis);
    let out = run(&plan, &mut db, threads, pause, true)
        .with_context(|| format!("results store {}", store.display()))?;
    crate::outln!(
        "campaign `{name}` (definition {}): {} runs, {} already in {}, {} computed in {:.1} s",
        &definition[..12],
        out.total,
        out.reused,
        store.display(),
        out.computed,
        started.elapsed().as_secs_f64()
    )?;
    Ok(())
}

/// Refuses a campaign whose most expensive run, `threads` at a time, would
/// need more memory than the machine has available, or more events than
/// [`crate::budget::MAX_EVENTS`] (unless `force`); errors name `origin` and
/// the field. Every front runs it before the first run.
pub fn check_budget(plan: &AnyPlan, origin: &str, threads: usize, force: bool) -> Result<()> {
    use crate::cost::{self, RunCost};
    let costs: Vec<RunCost> = match plan {
        AnyPlan::Dumbbell(p) => p.cells.iter().map(|c| cost::dumbbell(&c.spec)).collect(),
        AnyPlan::Grid(p) => p.cells.iter().map(|c| cost::grid(&c.spec)).collect(),
        AnyPlan::Star(p) => p.cells.iter().map(|c| cost::star(&c.spec)).collect(),
    };
    let largest = costs.into_iter().fold(RunCost::default(), RunCost::max);
    crate::budget::check_memory(
        crate::budget::runs_bytes(&largest, u64::MAX, threads as u64, false),
        &format!(
            "{origin}: {}: its largest runs on {threads} thread(s)",
            largest.memory_field
        ),
        force,
    )?;
    crate::budget::check_events(
        largest.events,
        &format!("{origin}: {}", largest.events_field),
        force,
    )
}

/// `coapcc campaign` on a store it cannot write: fine if every run of `plan`
/// is already there (nothing to write), else an error saying how many are
/// missing.
fn complete_read_only(plan: &AnyPlan, store: &Path) -> Result<()> {
    let (name, definition, total) = {
        let db = Store::open_read_only(store)?;
        let (name, definition, keys, done) = match plan {
            AnyPlan::Dumbbell(p) => (
                &p.file.name,
                &p.definition,
                p.distinct_keys(),
                db.done_keys()?,
            ),
            AnyPlan::Grid(p) => (
                &p.file.name,
                &p.definition,
                p.distinct_keys(),
                db.done_grid_keys()?,
            ),
            AnyPlan::Star(p) => (
                &p.file.name,
                &p.definition,
                p.distinct_keys(),
                db.done_star_keys()?,
            ),
        };
        let registered = db.definitions()?.iter().any(|d| &d.hash == definition);
        let missing = keys.iter().filter(|k| !done.contains(**k)).count();
        if !registered || missing > 0 {
            bail!(
                "{}: the store is read-only and {missing} of {} runs of campaign `{name}` are \
                 missing{}",
                store.display(),
                keys.len(),
                if registered {
                    ""
                } else {
                    " (its definition is not recorded)"
                }
            );
        }
        (name.clone(), definition.clone(), keys.len())
    };
    crate::outln!(
        "campaign `{name}` (definition {}): {total} runs, {total} already in {} (read-only; \
         nothing to write), 0 computed",
        &definition[..12],
        store.display()
    )
}
