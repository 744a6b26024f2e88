//! Dumbbell campaigns: [`mod@file`]: the TOML schema, [`plan`]: expansion and
//! checks; this module: the cost of a run and the plan as a
//! [`NetworkPlan`] (its units computed and stored).

pub mod file;
pub mod plan;

use std::collections::HashSet;

use anyhow::Result;
use coapcc_sim::dumbbell::{self, RunSpec};
use coapcc_sim::RunResult;

use crate::campaign::NetworkPlan;
use crate::store::Store;
use plan::{DumbbellCell, DumbbellPlan};

/// The expected cost of a dumbbell run (clients × exchanges), for ordering
/// and the ETA.
pub fn weight(spec: &RunSpec) -> u64 {
    spec.groups
        .iter()
        .map(|g| u64::from(g.clients) * u64::from(g.workload.exchanges))
        .sum()
}

impl NetworkPlan for DumbbellPlan {
    type Cell = DumbbellCell;
    type Network = dumbbell::Sim;
    fn cells(&self) -> &[DumbbellCell] {
        &self.cells
    }
    fn weight(spec: &RunSpec) -> u64 {
        weight(spec)
    }
    fn register(&self, store: &mut Store) -> Result<()> {
        crate::networks::dumbbell::store::register(store, self).map(drop)
    }
    fn done_keys(store: &Store) -> Result<HashSet<String>> {
        crate::networks::dumbbell::store::done_keys(store)
    }
    fn insert(
        store: &mut Store,
        key: &str,
        spec: &RunSpec,
        replication: u32,
        result: &RunResult,
    ) -> Result<()> {
        crate::networks::dumbbell::store::insert_run(store, key, spec, replication, result)
    }
}
