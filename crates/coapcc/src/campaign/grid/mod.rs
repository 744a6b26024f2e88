//! Grid campaigns: the pCoCoA evaluation (spec `testbed.md` §4, `radio.md`
//! §1) as sweeps of the request period and of the interferers' ON duration ×
//! algorithms × replications, run on all cores into the results store
//! ([`crate::store`]) beside the dumbbell campaigns.
//!
//! - [`file`]: the TOML schema; [`plan`]: expansion and checks; this module:
//!   the cost of a run and running them ([`super::unit`]).

pub mod file;
pub mod plan;

use std::time::Duration;

use anyhow::Result;
use coapcc_sim::grid::{GridRunSpec, GridWorkloadKind};

use super::runner::Outcome;
use crate::store::Store;
pub use plan::{load, parse, GridCell, GridPlan};

/// The expected cost of a run: its traffic time × the requests per second
/// its clients try to send, capped at 8 (about where the grid saturates and
/// the work per second stops growing); an interferer counts 3 requests per
/// second while ON. In milli-units, so that short runs still weigh something.
pub fn weight(spec: &GridRunSpec) -> u64 {
    let w = &spec.workload;
    let nodes = spec.network.nodes() as f64;
    let bursty = w.kind == GridWorkloadKind::Bursty;
    let interferers = if bursty {
        w.interferers.len() as f64
    } else {
        0.0
    };
    let clients = (nodes - 2.0 - interferers).max(0.0);
    let mut rate = clients / w.period_s;
    if bursty {
        rate += 3.0 * interferers * w.on_s / (w.on_s + w.off_s);
    }
    (1000.0 * w.duration_s * rate.min(8.0)).max(1.0) as u64
}

/// Runs every run of `plan` missing from `store`, as [`super::run`] does for
/// the dumbbell: `threads` = 0 uses every core; `pause` (tests only) sleeps
/// after each stored run; `show_progress` draws a progress bar with an ETA.
pub fn run(
    plan: &GridPlan,
    store: &mut Store,
    threads: usize,
    pause: Option<Duration>,
    show_progress: bool,
) -> Result<Outcome> {
    super::unit::run_units(plan, store, threads, pause, show_progress)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::campaign::Campaign;
    use std::collections::HashSet;

    #[test]
    fn weights_grow_with_the_load_and_saturate() {
        let plan = parse(
            "name = \"w\"\nalgorithms = [\"default\"]\n[network]\nkind = \"grid\"\n\
             [[set]]\nname = \"p\"\nperiods_s = [64, 8, 1, 0.5]\nreplications = 2\n\
             [[set]]\nname = \"b\"\non_s = [10, 140]\nreplications = 1\n",
            "w",
        )
        .unwrap();
        let w: Vec<u64> = plan.cells.iter().map(|c| weight(&c.spec)).collect();
        assert!(w[0] < w[1] && w[1] < w[2], "{w:?}");
        assert_eq!(w[2], w[3], "saturated");
        assert!(w[4] < w[5], "longer ON, more work: {w:?}");
        let jobs = plan.pending(&HashSet::new());
        assert_eq!(jobs.len(), 4 * 2 + 2);
        assert!(jobs.windows(2).all(|j| j[0].weight >= j[1].weight));
        let done: HashSet<String> = plan.cells[0].keys.iter().cloned().collect();
        assert_eq!(plan.pending(&done).len(), 8);
    }
}
