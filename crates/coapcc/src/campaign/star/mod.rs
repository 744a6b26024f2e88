//! Star campaigns: the lwIP evaluation (spec `testbed.md` §5, `radio.md` §2)
//! as sweeps of the number of stations × TCP flavours × replications, run on
//! all cores into the results store ([`crate::store`]) beside the dumbbell
//! and grid campaigns.
//!
//! - [`file`](mod@file): the TOML schema; [`plan`]: expansion and checks; this module:
//!   the runs still to do and running them.

pub mod file;
pub mod plan;

use std::collections::HashSet;
use std::time::Duration;

use anyhow::{anyhow, Result};
use coapcc_sim::star::{self, StarRunSpec};

use super::runner::{execute_with, Outcome};
use crate::store::Store;
pub use plan::{load, parse, StarCell, StarPlan};

/// One star run still to do.
#[derive(Clone, Debug)]
pub struct StarJob<'a> {
    /// Its key.
    pub key: &'a str,
    /// What to run.
    pub spec: &'a StarRunSpec,
    /// Which replication.
    pub replication: u32,
    /// Its expected cost, for ordering and the ETA ([`weight`]).
    pub weight: u64,
}

/// The expected cost of a run: the segments its stations try to send
/// (stations × writes × segments per write). Measured: a run's time grows
/// about linearly with the stations (0.05 s for 12, 0.2 s for 36, 0.3 s for
/// 72; saturated runs lose segments and end no later).
pub fn weight(spec: &StarRunSpec) -> u64 {
    let w = &spec.workload;
    let segments = u64::from(w.write_bytes).div_ceil(u64::from(w.mss.max(1)));
    (u64::from(spec.network.stations) * u64::from(w.writes) * segments).max(1)
}

/// The runs of `plan` whose keys are not in `done`, each once, heaviest first.
pub fn pending<'a>(plan: &'a StarPlan, done: &HashSet<String>) -> Vec<StarJob<'a>> {
    let mut seen: HashSet<&str> = HashSet::new();
    let mut jobs = Vec::new();
    for cell in &plan.cells {
        let w = weight(&cell.spec);
        for (r, key) in cell.keys.iter().enumerate() {
            if done.contains(key) || !seen.insert(key) {
                continue;
            }
            jobs.push(StarJob {
                key,
                spec: &cell.spec,
                replication: r as u32,
                weight: w,
            });
        }
    }
    jobs.sort_by(|a, b| b.weight.cmp(&a.weight).then(a.key.cmp(b.key)));
    jobs
}

/// Runs every run of `plan` missing from `store`, as [`super::run`] does for
/// the dumbbell: `threads` = 0 uses every core; `pause` (tests only) sleeps
/// after each stored run; `show_progress` draws a progress bar with an ETA.
pub fn run(
    plan: &StarPlan,
    store: &mut Store,
    threads: usize,
    pause: Option<Duration>,
    show_progress: bool,
) -> Result<Outcome> {
    store.register_star(plan)?;
    let done = store.done_star_keys()?;
    let total = plan.distinct_keys().len();
    let jobs = pending(plan, &done);
    let weight: u64 = jobs.iter().map(|j| j.weight).sum();
    let n = jobs.len();
    let mut progress = super::Progress::new(weight, n, show_progress);
    let computed = execute_with(
        &jobs,
        threads,
        |job| {
            star::run(job.spec, job.replication)
                .map_err(|e| anyhow!("run {} (replication {}): {e}", job.key, job.replication))
        },
        |job, result| store.insert_star_run(job.key, job.spec, job.replication, &result),
        &mut |job| {
            progress.stored(job.weight);
            if let Some(p) = pause {
                std::thread::sleep(p);
            }
        },
    )?;
    progress.finish();
    Ok(Outcome {
        total,
        reused: total - n,
        computed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_grow_with_the_stations() {
        let plan = parse(
            "name = \"w\"\nalgorithms = [\"tcp-lwip\"]\n[network]\nkind = \"star\"\n\
             [[set]]\nname = \"a\"\nstations = [12, 60]\nreplications = 2\n",
            "w",
        )
        .unwrap();
        let w: Vec<u64> = plan.cells.iter().map(|c| weight(&c.spec)).collect();
        // 1024-byte writes in 536-byte segments: two each.
        assert_eq!(w, [12 * 1000 * 2, 60 * 1000 * 2]);
        let jobs = pending(&plan, &HashSet::new());
        assert_eq!(jobs.len(), 4);
        assert!(jobs.windows(2).all(|j| j[0].weight >= j[1].weight));
        let done: HashSet<String> = plan.cells[0].keys.iter().cloned().collect();
        assert_eq!(pending(&plan, &done).len(), 2);
    }
}
