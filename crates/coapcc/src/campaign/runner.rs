//! Running a campaign's missing runs on all cores and storing each as it
//! finishes.
//!
//! Runs are pure functions of their spec and replication, so the stored values
//! do not depend on the thread count or the order in which runs finish. Worker
//! threads compute; the calling thread alone writes to the store, one
//! transaction per finished run.

use std::collections::HashSet;
use std::sync::mpsc;

use anyhow::{anyhow, Context, Result};
use coapcc_sim::{testbed, RunSpec};
use rayon::prelude::*;

use super::plan::Plan;
use crate::store::Store;

/// One run still to do.
#[derive(Clone, Debug)]
pub struct Job<'a> {
    /// Its key.
    pub key: &'a str,
    /// What to run.
    pub spec: &'a RunSpec,
    /// Which replication.
    pub replication: u32,
    /// Its expected cost (clients × exchanges), for ordering and the ETA.
    pub weight: u64,
}

/// The runs of `plan` whose keys are not in `done`, each once, heaviest first
/// (so the long runs do not end up alone at the end).
pub fn pending<'a>(plan: &'a Plan, done: &HashSet<String>) -> Vec<Job<'a>> {
    let mut seen: HashSet<&str> = HashSet::new();
    let mut jobs = Vec::new();
    for cell in &plan.cells {
        for (r, key) in cell.keys.iter().enumerate() {
            if done.contains(key) || !seen.insert(key) {
                continue;
            }
            let weight = cell
                .spec
                .groups
                .iter()
                .map(|g| u64::from(g.clients) * u64::from(g.workload.exchanges))
                .sum();
            jobs.push(Job {
                key,
                spec: &cell.spec,
                replication: r as u32,
                weight,
            });
        }
    }
    jobs.sort_by(|a, b| b.weight.cmp(&a.weight).then(a.key.cmp(b.key)));
    jobs
}

/// How far a campaign got.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Distinct runs of the campaign.
    pub total: usize,
    /// Runs found in the store before starting.
    pub reused: usize,
    /// Runs computed now.
    pub computed: usize,
}

/// Computes `jobs` on `threads` workers (0 = all cores) and writes each result
/// to `store` as it arrives; `on_stored(job)` is called after each commit.
pub fn execute(
    jobs: &[Job<'_>],
    store: &mut Store,
    threads: usize,
    on_stored: &mut dyn FnMut(&Job<'_>),
) -> Result<usize> {
    execute_with(
        jobs,
        threads,
        |job| {
            testbed::run(job.spec, job.replication)
                .map_err(|e| anyhow!("run {} (replication {}): {e}", job.key, job.replication))
        },
        |job, result| store.insert_run(job.key, job.spec, job.replication, &result),
        on_stored,
    )
}

/// Computes every job with `compute` on `threads` workers (0 = all cores) and
/// hands each result, on the calling thread, to `commit` as it arrives;
/// `on_stored(job)` is called after each commit. The first error stops the
/// writer (workers stop at their next result). Returns the results committed.
pub fn execute_with<J: Sync, R: Send>(
    jobs: &[J],
    threads: usize,
    compute: impl Fn(&J) -> Result<R> + Sync,
    mut commit: impl FnMut(&J, R) -> Result<()>,
    on_stored: &mut dyn FnMut(&J),
) -> Result<usize> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .context("cannot start worker threads")?;
    let (tx, rx) = mpsc::channel::<(usize, Result<R>)>();
    let mut stored = 0;
    let compute = &compute;
    std::thread::scope(|scope| -> Result<()> {
        scope.spawn(move || {
            pool.install(|| {
                // A send fails only once the writer has given up: stop then.
                let _ = jobs
                    .par_iter()
                    .enumerate()
                    .try_for_each_with(tx, |tx, (i, job)| {
                        tx.send((i, compute(job))).map_err(|_| ())
                    });
            })
        });
        for (i, result) in rx {
            let job = &jobs[i];
            commit(job, result?)?;
            stored += 1;
            on_stored(job);
        }
        Ok(())
    })?;
    Ok(stored)
}
