//! What a star report shows, read from a store: for one star campaign
//! definition, every cell's [`star::Summary`] over its finished replications
//! (every metric is computed there, spec `docs/spec/testbed-spec.md` §3), the sets with
//! their station counts, and the points whose TCP time series are drawn.

use anyhow::Result;
use coapcc_sim::star;

use crate::networks::star::campaign::StarCell;
use crate::report::{push_new, set_named};
use crate::store::{Definition, Store};

/// Station counts whose cwnd, ssthresh, RTO and RTT time series are drawn:
/// the published star and a loaded one (the campaign's points nearest to
/// them).
pub const SERIES_STATIONS: [u32; 2] = [12, 60];

/// The time series' zoomed view: the first seconds of the run (the lwIP
/// paper's point: full TCP's cwnd climbs higher early).
pub const ZOOM_S: f64 = 50.0;

/// One cell with its results.
#[derive(Clone, Debug)]
pub struct StarCellResult {
    /// The cell.
    pub cell: StarCell,
    /// Replications found in the store.
    pub done: u32,
    /// The replication whose station 1 is [`star::Summary::one_station`] (the
    /// first one stored), if any.
    pub shown: Option<u32>,
    /// The metrics over the finished replications. Its time series
    /// (`one_station`, `mean`) are filled only at the points in
    /// [`StarReport::series_points`]: the other metrics do not read traces,
    /// so the other cells are summarised without loading them.
    pub summary: star::Summary,
}

/// A set of the campaign, as the report draws it.
#[derive(Clone, Debug)]
pub struct StarSet {
    /// Its name.
    pub name: String,
    /// Its station counts, ascending.
    pub points: Vec<u32>,
    /// Its flavours' labels, in campaign order.
    pub labels: Vec<String>,
}

/// Everything a star report shows.
#[derive(Clone, Debug)]
pub struct StarReport {
    /// The definition reported.
    pub definition: Definition,
    /// Other definitions in the store, not reported.
    pub others: Vec<Definition>,
    /// Every cell, in campaign order.
    pub cells: Vec<StarCellResult>,
    /// The sets, in campaign order.
    pub sets: Vec<StarSet>,
    /// Flavour labels in first-appearance order (for stable colours).
    pub labels: Vec<String>,
    /// The (set, station count) points whose time series are drawn.
    pub series_points: Vec<(String, u32)>,
}

impl StarReport {
    /// Runs found and runs planned.
    pub fn progress(&self) -> (u64, u64) {
        crate::report::progress(self.cells.iter().map(|c| (c.done, c.cell.keys.len())))
    }

    /// The cell of `label` at `stations` of `set`, if it has finished runs.
    pub fn cell(&self, set: &str, stations: u32, label: &str) -> Option<&StarCellResult> {
        self.cells.iter().find(|c| {
            c.cell.set == set && c.cell.stations == stations && c.cell.label == label && c.done > 0
        })
    }
}

/// For each wanted station count, the point nearest to it on a log scale
/// (ties: the smaller count, then the earlier set), without repeats, in the
/// order wanted.
pub fn nearest(points: &[(String, u32)], wanted: &[u32]) -> Vec<(String, u32)> {
    let wanted: Vec<f64> = wanted.iter().map(|&w| f64::from(w)).collect();
    crate::report::nearest_on_log_scale(points, &wanted, |(_, p)| f64::from(*p))
}

/// Gathers the report of the star campaign `definition` from `store`.
pub fn gather(
    store: &Store,
    definition: Definition,
    others: Vec<Definition>,
) -> Result<StarReport> {
    let cells_stored = crate::networks::star::store::cells(store, &definition.hash)?;
    let mut labels: Vec<String> = Vec::new();
    let mut sets: Vec<StarSet> = Vec::new();
    let mut points: Vec<(String, u32)> = Vec::new();
    for cell in &cells_stored {
        push_new(&mut labels, cell.label.clone());
        push_new(&mut points, (cell.set.clone(), cell.stations));
        let s = set_named(
            &mut sets,
            &cell.set,
            |s| &s.name,
            || StarSet {
                name: cell.set.clone(),
                points: Vec::new(),
                labels: Vec::new(),
            },
        );
        push_new(&mut s.points, cell.stations);
        push_new(&mut s.labels, cell.label.clone());
    }
    for s in &mut sets {
        s.points.sort_unstable();
    }
    let series_points = nearest(&points, &SERIES_STATIONS);
    let mut cells = Vec::new();
    for cell in cells_stored {
        let traces = series_points.contains(&(cell.set.clone(), cell.stations));
        let mut runs = Vec::new();
        let mut shown = None;
        for (r, key) in cell.keys.iter().enumerate() {
            if let Some(run) = crate::networks::star::store::load_run(store, key, traces)? {
                shown.get_or_insert(r as u32);
                runs.push(run);
            }
        }
        let summary = star::Summary::of(&cell.label, &cell.spec, &runs);
        cells.push(StarCellResult {
            done: runs.len() as u32,
            shown,
            cell,
            summary,
        });
    }
    Ok(StarReport {
        definition,
        others,
        cells,
        sets,
        labels,
        series_points,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_points_on_a_log_scale() {
        let pts = |v: &[(&str, u32)]| -> Vec<(String, u32)> {
            v.iter().map(|(s, p)| (s.to_string(), *p)).collect()
        };
        let campaign = pts(&[
            ("published", 12),
            ("loaded", 24),
            ("loaded", 36),
            ("loaded", 48),
            ("loaded", 60),
            ("loaded", 72),
        ]);
        assert_eq!(
            nearest(&campaign, &SERIES_STATIONS),
            pts(&[("published", 12), ("loaded", 60)])
        );
        // 12 in two sets: the earlier set's.
        let twice = pts(&[("a", 12), ("b", 12), ("b", 48)]);
        assert_eq!(
            nearest(&twice, &SERIES_STATIONS),
            pts(&[("a", 12), ("b", 48)])
        );
        // One point: drawn once.
        assert_eq!(
            nearest(&pts(&[("a", 5)]), &SERIES_STATIONS),
            pts(&[("a", 5)])
        );
        assert!(nearest(&[], &SERIES_STATIONS).is_empty());
    }
}
