//! What a grid report shows, read from a store: for one grid campaign
//! definition, every cell's [`grid::Summary`] over its finished replications
//! (the metrics are computed there, spec `docs/spec/testbed-spec.md` §3), the sets with the
//! points where per-node maps and traces are drawn, and those traces.

use anyhow::Result;
use coapcc_sim::grid::{self, TracePoint};

use crate::networks::grid::campaign::GridCell;
use crate::report::{push_new, set_named};
use crate::store::{Definition, Store};

/// Periods (s) whose per-node carried load is mapped: the point of a
/// periodic set nearest to each (pCoCoA paper: light load to saturation).
pub const HEAT_PERIODS: [f64; 4] = [16.0, 8.0, 4.0, 1.0];
/// Periods (s) whose RTO/RTT traces are drawn: near the knee and saturated.
pub const TRACE_PERIODS: [f64; 2] = [8.0, 2.0];

/// One cell with its results.
#[derive(Clone, Debug)]
pub struct GridCellResult {
    /// The cell.
    pub cell: GridCell,
    /// Replications found in the store.
    pub done: u32,
    /// The metrics over them.
    pub summary: grid::Summary,
}

/// One traced run: the trace node's RTO and RTT samples.
#[derive(Clone, Debug)]
pub struct Trace {
    /// Index into [`GridReport::cells`].
    pub cell: usize,
    /// The node traced.
    pub node: u32,
    /// The replication shown (the first one stored).
    pub replication: u32,
    /// Its samples.
    pub points: Vec<TracePoint>,
}

/// A set of the campaign, as the report draws it.
#[derive(Clone, Debug)]
pub struct GridSet {
    /// Its name.
    pub name: String,
    /// Periodic or bursty.
    pub kind: grid::WorkloadKind,
    /// Its points (periods or ON durations), ascending.
    pub points: Vec<f64>,
    /// Its algorithm labels, in campaign order.
    pub labels: Vec<String>,
    /// Periodic sets: the periods whose per-node carried load is mapped.
    pub heat_points: Vec<f64>,
    /// Periodic sets: the periods whose traces are drawn.
    pub trace_points: Vec<f64>,
}

/// Everything a grid report shows.
#[derive(Clone, Debug)]
pub struct GridReport {
    /// The definition reported.
    pub definition: Definition,
    /// Other definitions in the store, not reported.
    pub others: Vec<Definition>,
    /// Every cell, in campaign order.
    pub cells: Vec<GridCellResult>,
    /// The sets, in campaign order.
    pub sets: Vec<GridSet>,
    /// Algorithm labels in first-appearance order (for stable colours).
    pub labels: Vec<String>,
    /// The traces drawn, by set, period and algorithm.
    pub traces: Vec<Trace>,
}

impl GridReport {
    /// Runs found and runs planned.
    pub fn progress(&self) -> (u64, u64) {
        crate::report::progress(self.cells.iter().map(|c| (c.done, c.cell.keys.len())))
    }

    /// The cell of `label` at `point` of `set`, if it has finished runs.
    pub fn cell(&self, set: &str, point: f64, label: &str) -> Option<&GridCellResult> {
        self.cells.iter().find(|c| {
            c.cell.set == set && c.cell.point == point && c.cell.label == label && c.done > 0
        })
    }

    /// The trace of `label` at `point` of `set`, if one was stored.
    pub fn trace(&self, set: &str, point: f64, label: &str) -> Option<&Trace> {
        self.traces.iter().find(|t| {
            let c = &self.cells[t.cell].cell;
            c.set == set && c.point == point && c.label == label
        })
    }
}

/// For each wanted value, the point nearest to it on a log scale (ties: the
/// smaller point), without repeats, in the order wanted.
pub fn nearest(points: &[f64], wanted: &[f64]) -> Vec<f64> {
    crate::report::nearest_on_log_scale(points, wanted, |p| *p)
}

/// Gathers the report of the grid campaign `definition` from `store`.
pub fn gather(
    store: &Store,
    definition: Definition,
    others: Vec<Definition>,
) -> Result<GridReport> {
    let mut cells = Vec::new();
    let mut labels: Vec<String> = Vec::new();
    let mut sets: Vec<GridSet> = Vec::new();
    for cell in crate::networks::grid::store::cells(store, &definition.hash)? {
        let mut runs = Vec::new();
        for key in &cell.keys {
            if let Some(r) = crate::networks::grid::store::load_run(store, key, false)? {
                runs.push(r);
            }
        }
        let summary = grid::Summary::of(&cell.label, &cell.spec, &runs);
        push_new(&mut labels, cell.label.clone());
        let s = set_named(
            &mut sets,
            &cell.set,
            |s| &s.name,
            || GridSet {
                name: cell.set.clone(),
                kind: cell.kind,
                points: Vec::new(),
                labels: Vec::new(),
                heat_points: Vec::new(),
                trace_points: Vec::new(),
            },
        );
        push_new(&mut s.points, cell.point);
        push_new(&mut s.labels, cell.label.clone());
        cells.push(GridCellResult {
            done: runs.len() as u32,
            cell,
            summary,
        });
    }
    for s in &mut sets {
        s.points.sort_by(f64::total_cmp);
        if s.kind == grid::WorkloadKind::Periodic {
            s.heat_points = nearest(&s.points, &HEAT_PERIODS);
            s.trace_points = nearest(&s.points, &TRACE_PERIODS);
        }
    }
    let mut traces = Vec::new();
    for s in &sets {
        for &p in &s.trace_points {
            for (i, c) in cells.iter().enumerate() {
                let k = &c.cell;
                if k.set != s.name || k.point != p {
                    continue;
                }
                let Some(node) = k.spec.workload.trace_node else {
                    continue;
                };
                for (r, key) in k.keys.iter().enumerate() {
                    if let Some(run) = crate::networks::grid::store::load_run(store, key, true)? {
                        traces.push(Trace {
                            cell: i,
                            node,
                            replication: r as u32,
                            points: run.trace,
                        });
                        break;
                    }
                }
            }
        }
    }
    Ok(GridReport {
        definition,
        others,
        cells,
        sets,
        labels,
        traces,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_points_on_a_log_scale() {
        let sweep = [0.5, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 16.0, 64.0];
        assert_eq!(nearest(&sweep, &HEAT_PERIODS), [16.0, 8.0, 4.0, 1.0]);
        assert_eq!(nearest(&[2.0, 8.0], &HEAT_PERIODS), [8.0, 2.0]);
        // 4 is as far from 2 as from 8 on a log scale: the smaller wins.
        assert_eq!(nearest(&[2.0, 8.0], &[4.0]), [2.0]);
        assert_eq!(nearest(&[10.0], &TRACE_PERIODS), [10.0]);
        assert!(nearest(&[], &TRACE_PERIODS).is_empty());
    }
}
