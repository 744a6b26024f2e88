//! Grid campaigns: the pCoCoA evaluation (spec `docs/spec/testbed-spec.md` §4, `docs/spec/radio-spec.md`
//! §1) as sweeps of the request period and of the interferers' ON duration ×
//! algorithms × replications, run on all cores into the results store
//! ([`crate::store`]).
//!
//! - [`mod@file`]: the TOML schema; [`plan`]: expansion and checks; this module:
//!   the cost of a run and the plan as a [`NetworkPlan`] (its units computed
//!   and stored).

pub mod file;
pub mod plan;

use std::collections::HashSet;

use anyhow::Result;
use coapcc_sim::grid;

use crate::campaign::NetworkPlan;
use crate::store::Store;
pub use plan::{parse, GridCell, GridPlan};

/// The expected cost of a run: its traffic time × the requests per second
/// its clients try to send, capped at 8 (about where the grid saturates and
/// the work per second stops growing); an interferer counts 3 requests per
/// second while ON. In milli-units, so that short runs still weigh something.
pub fn weight(spec: &grid::RunSpec) -> u64 {
    let w = &spec.workload;
    let nodes = spec.network.nodes() as f64;
    let bursty = w.kind == grid::WorkloadKind::Bursty;
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

impl NetworkPlan for GridPlan {
    type Cell = GridCell;
    type Network = grid::Sim;
    fn cells(&self) -> &[GridCell] {
        &self.cells
    }
    fn weight(spec: &grid::RunSpec) -> u64 {
        weight(spec)
    }
    fn register(&self, store: &mut Store) -> Result<()> {
        crate::networks::grid::store::register(store, self).map(drop)
    }
    fn done_keys(store: &Store) -> Result<HashSet<String>> {
        crate::networks::grid::store::done_keys(store)
    }
    fn insert(
        store: &mut Store,
        key: &str,
        spec: &grid::RunSpec,
        replication: u32,
        result: &grid::RunResult,
    ) -> Result<()> {
        crate::networks::grid::store::insert_run(store, key, spec, replication, result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::campaign::Campaign;

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
