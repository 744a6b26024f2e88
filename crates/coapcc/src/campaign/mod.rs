//! Campaigns: a whole published evaluation as one matrix of runs (algorithms ×
//! buffers × client counts × workloads × error profiles × replications, and
//! mixed populations; spec `testbed.md` §1.3, §2, `algorithms.md` §7), run on all
//! cores into a resumable results store ([`crate::store`]).
//!
//! - [`file`]: the TOML schema; [`plan`]: expansion and checks;
//! - [`key`]: run keys and the model version; [`runner`]: parallel execution;
//! - [`grid`]: campaigns on the 802.15.4 grid of the pCoCoA evaluation
//!   (`[network] kind = "grid"`, spec `testbed.md` §4);
//! - [`star`]: campaigns on the Wi-Fi star of the lwIP evaluation
//!   (`[network] kind = "star"`, spec `testbed.md` §5).

pub mod file;
pub mod grid;
pub mod key;
pub mod plan;
pub mod runner;
pub mod star;

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::scenario_file::{network_kind, NetworkKind};
use crate::store::Store;
pub use grid::{GridCell, GridPlan};
pub use plan::{load, parse, Cell, Plan};
pub use runner::Outcome;
pub use star::{StarCell, StarPlan};

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

/// The progress bar of a campaign: `total` is the summed weight of its runs.
fn progress_bar(total: u64, show: bool) -> ProgressBar {
    let bar = if show {
        ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr())
    } else {
        ProgressBar::hidden()
    };
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {msg} runs, {elapsed} elapsed, ETA {eta}")
            .expect("valid template"),
    );
    bar
}

/// Runs every run of `plan` missing from `store`. `threads` = 0 uses every core;
/// `pause` (tests only) sleeps after each stored run; `show_progress` draws a
/// progress bar with an ETA on stderr.
pub fn run(
    plan: &Plan,
    store: &mut Store,
    threads: usize,
    pause: Option<Duration>,
    show_progress: bool,
) -> Result<Outcome> {
    store.register(plan)?;
    let done = store.done_keys()?;
    let total = plan.distinct_keys().len();
    let jobs = runner::pending(plan, &done);
    let outcome = Outcome {
        total,
        reused: total - jobs.len(),
        computed: 0,
    };
    let weight: u64 = jobs.iter().map(|j| j.weight).sum();
    let bar = progress_bar(weight, show_progress);
    let n = jobs.len();
    bar.set_message(format!("0/{n}"));
    let mut finished = 0;
    let computed = runner::execute(&jobs, store, threads, &mut |job| {
        finished += 1;
        bar.inc(job.weight);
        bar.set_message(format!("{finished}/{n}"));
        if let Some(p) = pause {
            std::thread::sleep(p);
        }
    })?;
    bar.finish_and_clear();
    Ok(Outcome {
        computed,
        ..outcome
    })
}

/// `coapcc campaign <file> --store … --threads …`: a dumbbell, grid or star
/// campaign, as the file's `[network] kind` says.
pub fn cli(file: &Path, store: &Path, threads: Option<usize>, pause_ms: Option<u64>) -> Result<()> {
    let plan = load_any(file)?;
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
    let threads = threads.unwrap_or(0);
    let out = match &plan {
        AnyPlan::Dumbbell(p) => run(p, &mut db, threads, pause, true)?,
        AnyPlan::Grid(p) => grid::run(p, &mut db, threads, pause, true)?,
        AnyPlan::Star(p) => star::run(p, &mut db, threads, pause, true)?,
    };
    println!(
        "campaign `{name}` (definition {}): {} runs, {} already in {}, {} computed in {:.1} s",
        &definition[..12],
        out.total,
        out.reused,
        store.display(),
        out.computed,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
