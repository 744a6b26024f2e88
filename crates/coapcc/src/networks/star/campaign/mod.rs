//! Star campaigns: the lwIP evaluation (spec `docs/spec/testbed-spec.md` §5, `docs/spec/radio-spec.md` §2)
//! as sweeps of the number of stations × TCP flavours × replications, run on
//! all cores into the results store ([`crate::store`]) beside the dumbbell
//! and grid campaigns.
//!
//! - [`file`](mod@file): the TOML schema; [`plan`]: expansion and checks; this module:
//!   the cost of a run and the plan as a [`NetworkPlan`] (its units computed
//!   and stored).

pub mod file;
pub mod plan;

use std::collections::HashSet;

use anyhow::Result;
use coapcc_sim::star;

use crate::campaign::NetworkPlan;
use crate::store::Store;
pub use plan::{parse, StarCell, StarPlan};

/// The expected cost of a run: the segments its stations try to send
/// (stations × writes × segments per write). Measured: a run's time grows
/// about linearly with the stations (0.05 s for 12, 0.2 s for 36, 0.3 s for
/// 72; saturated runs lose segments and end no later).
pub fn weight(spec: &star::RunSpec) -> u64 {
    let w = &spec.workload;
    let segments = u64::from(w.write_bytes).div_ceil(u64::from(w.mss.max(1)));
    (u64::from(spec.network.stations) * u64::from(w.writes) * segments).max(1)
}

impl NetworkPlan for StarPlan {
    type Cell = StarCell;
    type Network = star::Sim;
    fn cells(&self) -> &[StarCell] {
        &self.cells
    }
    fn weight(spec: &star::RunSpec) -> u64 {
        weight(spec)
    }
    fn register(&self, store: &mut Store) -> Result<()> {
        crate::networks::star::store::register(store, self).map(drop)
    }
    fn done_keys(store: &Store) -> Result<HashSet<String>> {
        crate::networks::star::store::done_keys(store)
    }
    fn insert(
        store: &mut Store,
        key: &str,
        spec: &star::RunSpec,
        replication: u32,
        result: &star::RunResult,
    ) -> Result<()> {
        crate::networks::star::store::insert_run(store, key, spec, replication, result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::campaign::Campaign;

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
        let jobs = plan.pending(&HashSet::new());
        assert_eq!(jobs.len(), 4);
        assert!(jobs.windows(2).all(|j| j[0].weight >= j[1].weight));
        let done: HashSet<String> = plan.cells[0].keys.iter().cloned().collect();
        assert_eq!(plan.pending(&done).len(), 2);
    }
}
