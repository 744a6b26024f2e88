//! LoRaWAN campaigns: sweeps of the number of devices × the request period
//! × algorithms × replications, run on all cores into the results store
//! ([`crate::store`]).
//!
//! - [`mod@file`]: the TOML schema; [`plan`]: expansion and checks; this module:
//!   the weight of a run and the plan as a [`NetworkPlan`].

pub mod file;
pub mod plan;

use std::collections::HashSet;

use anyhow::Result;
use coapcc_sim::lorawan;

use crate::campaign::NetworkPlan;
use crate::store::Store;
pub use plan::{parse, LorawanCell, LorawanPlan};

/// The expected cost of a run: the requests its devices generate, in
/// milli-units so that short runs still weigh something.
pub fn weight(spec: &lorawan::RunSpec) -> u64 {
    let w = &spec.workload;
    let requests = f64::from(spec.network.devices) * w.duration_s / w.period_s;
    (1000.0 * requests).max(1.0) as u64
}

impl NetworkPlan for LorawanPlan {
    type Cell = LorawanCell;
    type Network = lorawan::Sim;
    fn cells(&self) -> &[LorawanCell] {
        &self.cells
    }
    fn weight(spec: &lorawan::RunSpec) -> u64 {
        weight(spec)
    }
    fn register(&self, store: &mut Store) -> Result<()> {
        super::store::register(store, self).map(drop)
    }
    fn done_keys(store: &Store) -> Result<HashSet<String>> {
        super::store::done_keys(store)
    }
    fn insert(
        store: &mut Store,
        key: &str,
        spec: &lorawan::RunSpec,
        replication: u32,
        result: &lorawan::RunResult,
    ) -> Result<()> {
        super::store::insert_run(store, key, spec, replication, result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::campaign::Campaign;

    #[test]
    fn weights_grow_with_devices_and_rate() {
        let plan = parse(
            "name = \"w\"\nalgorithms = [\"default\"]\n[network]\nkind = \"lorawan\"\n\
             [[set]]\nname = \"s\"\ndevices = [10, 100]\nperiods_s = [600, 60]\nreplications = 2\n",
            "w",
        )
        .unwrap();
        let w: Vec<u64> = plan.cells.iter().map(|c| weight(&c.spec)).collect();
        assert!(w[0] < w[1] && w[1] < w[3] && w[2] < w[3], "{w:?}");
        assert_eq!(plan.pending(&HashSet::new()).len(), 4 * 2);
    }
}
