//! Dumbbell campaigns (the constrained-link testbed; [`super::file`]: the TOML
//! schema, [`super::plan`]: expansion and checks): the cost of a run and the
//! plan as a [`Campaign`] (its units computed and stored).

use std::collections::HashSet;

use anyhow::Result;
use coapcc_sim::dumbbell::{DumbbellSim, RunSpec};
use coapcc_sim::network::SimNetwork;

use super::plan::Plan;
use super::unit::{count, failed, mismatch, spec_of, units, Campaign, Unit, UnitResult};
use crate::store::Store;

/// The expected cost of a dumbbell run (clients × exchanges), for ordering
/// and the ETA.
pub fn weight(spec: &RunSpec) -> u64 {
    spec.groups
        .iter()
        .map(|g| u64::from(g.clients) * u64::from(g.workload.exchanges))
        .sum()
}

impl Campaign for Plan {
    fn register(&self, store: &mut Store) -> Result<()> {
        store.register(self).map(drop)
    }
    fn done_keys(&self, store: &Store) -> Result<HashSet<String>> {
        store.done_keys()
    }
    fn total(&self) -> usize {
        count(self.distinct_keys())
    }
    fn pending(&self, done: &HashSet<String>) -> Vec<Unit> {
        units(&self.cells, |c| &c.keys, |c| weight(&c.spec), done)
    }
    fn compute(&self, unit: &Unit) -> Result<UnitResult> {
        let spec = spec_of(&self.cells, |c| &c.keys, |c| &c.spec, unit)?;
        DumbbellSim::run(spec, unit.replication)
            .map(UnitResult::Dumbbell)
            .map_err(|e| failed(unit, e))
    }
    fn commit(&self, store: &mut Store, unit: &Unit, result: &UnitResult) -> Result<()> {
        let spec = spec_of(&self.cells, |c| &c.keys, |c| &c.spec, unit)?;
        let UnitResult::Dumbbell(r) = result else {
            return Err(mismatch(result, "dumbbell"));
        };
        store.insert_run(&unit.key, spec, unit.replication, r)
    }
}
