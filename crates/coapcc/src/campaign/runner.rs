//! Running a campaign's missing runs on all cores and storing each as it
//! finishes ([`super::unit`] says what a run is and how it is stored).
//!
//! Runs are pure functions of their spec and replication, so the stored values
//! do not depend on the thread count or the order in which runs finish. Worker
//! threads compute; the calling thread alone writes to the store, one
//! transaction per finished run.

use std::sync::mpsc;

use anyhow::{Context, Result};
use rayon::prelude::*;

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
                // One job per task: the jobs come heaviest first, and a
                // range split in halves left one worker with the heavy half
                // while the other ran out of work (thesis campaign: 74 % of
                // the samples on one worker, 18 % on the other).
                let _ = jobs
                    .par_iter()
                    .with_max_len(1)
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
