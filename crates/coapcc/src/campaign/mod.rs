//! Campaigns: a whole published evaluation as one matrix of runs (algorithms ×
//! buffers × client counts × workloads × error profiles × replications, and
//! mixed populations; spec `testbed.md` §1.3, §2, `algorithms.md` §7), run on all
//! cores into a resumable results store ([`crate::store`]).
//!
//! - [`file`]: the TOML schema; [`plan`]: expansion and checks;
//! - [`key`]: run keys and the model version; [`runner`]: parallel execution.

pub mod file;
pub mod key;
pub mod plan;
pub mod runner;

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Result;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::store::Store;
pub use plan::{load, parse, Cell, Plan};
pub use runner::Outcome;

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
    let bar = if show_progress {
        ProgressBar::with_draw_target(Some(weight), ProgressDrawTarget::stderr())
    } else {
        ProgressBar::hidden()
    };
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {msg} runs, {elapsed} elapsed, ETA {eta}")
            .expect("valid template"),
    );
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

/// `coapcc campaign <file> --store … --threads …`.
pub fn cli(file: &Path, store: &Path, threads: Option<usize>, pause_ms: Option<u64>) -> Result<()> {
    let plan = load(file)?;
    let mut db = Store::open(store)?;
    for s in &plan.skipped {
        eprintln!(
            "skipping `{}`: not available in this build ({})",
            s.name, s.reason
        );
    }
    let others: Vec<_> = db
        .definitions()?
        .into_iter()
        .filter(|d| d.name == plan.file.name && d.hash != plan.definition)
        .collect();
    if !others.is_empty() {
        eprintln!(
            "note: {} holds {} other definition(s) of campaign `{}` (changed parameters or model \
             version); their runs are reused only where a run's full spec is unchanged, and \
             `coapcc report` shows only the definition run last",
            store.display(),
            others.len(),
            plan.file.name
        );
    }
    let started = Instant::now();
    let out = run(
        &plan,
        &mut db,
        threads.unwrap_or(0),
        pause_ms.map(Duration::from_millis),
        true,
    )?;
    println!(
        "campaign `{}` (definition {}): {} runs, {} already in {}, {} computed in {:.1} s",
        plan.file.name,
        &plan.definition[..12],
        out.total,
        out.reused,
        store.display(),
        out.computed,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
