//! What a LoRaWAN report shows, read from a store: for one campaign
//! definition, every cell's [`lorawan::Summary`] over its finished
//! replications, and the points (set, devices, period) in campaign order.

use anyhow::Result;
use coapcc_sim::lorawan;

use crate::networks::lorawan::campaign::LorawanCell;
use crate::networks::lorawan::store;
use crate::report::push_new;
use crate::store::{Definition, Store};

/// One cell with its results.
#[derive(Clone, Debug)]
pub struct LorawanCellResult {
    /// The cell.
    pub cell: LorawanCell,
    /// Replications found in the store.
    pub done: u32,
    /// The metrics over them.
    pub summary: lorawan::Summary,
}

/// A point of the campaign: a set, a number of devices and a period.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    /// The set's name.
    pub set: String,
    /// Devices.
    pub devices: u32,
    /// The request period (s).
    pub period: f64,
}

impl Point {
    /// How the point is named in headings and file names.
    pub fn name(&self) -> String {
        format!(
            "{} · {} devices · T = {} s",
            self.set, self.devices, self.period
        )
    }
}

/// Everything a LoRaWAN report shows.
#[derive(Clone, Debug)]
pub struct LorawanReport {
    /// The definition reported.
    pub definition: Definition,
    /// Other definitions in the store, not reported.
    pub others: Vec<Definition>,
    /// Every cell, in campaign order.
    pub cells: Vec<LorawanCellResult>,
    /// The points, in campaign order.
    pub points: Vec<Point>,
    /// Algorithm labels in first-appearance order (for stable colours).
    pub labels: Vec<String>,
}

impl LorawanReport {
    /// Runs found and runs planned.
    pub fn progress(&self) -> (u64, u64) {
        crate::report::progress(self.cells.iter().map(|c| (c.done, c.cell.keys.len())))
    }

    /// The cells of point `p`, in campaign order.
    pub fn cells_at<'a>(&'a self, p: &'a Point) -> impl Iterator<Item = &'a LorawanCellResult> {
        self.cells.iter().filter(move |c| {
            c.cell.set == p.set && c.cell.devices == p.devices && c.cell.period == p.period
        })
    }
}

/// Gathers the report of the LoRaWAN campaign `definition` from `store`.
pub fn gather(
    store: &Store,
    definition: Definition,
    others: Vec<Definition>,
) -> Result<LorawanReport> {
    let mut cells = Vec::new();
    let mut labels: Vec<String> = Vec::new();
    let mut points: Vec<Point> = Vec::new();
    for cell in store::cells(store, &definition.hash)? {
        let mut runs = Vec::new();
        for key in &cell.keys {
            if let Some(r) = store::load_run(store, key)? {
                runs.push(r);
            }
        }
        let summary = lorawan::Summary::of(&cell.label, &cell.spec, &runs);
        push_new(&mut labels, cell.label.clone());
        push_new(
            &mut points,
            Point {
                set: cell.set.clone(),
                devices: cell.devices,
                period: cell.period,
            },
        );
        cells.push(LorawanCellResult {
            done: runs.len() as u32,
            cell,
            summary,
        });
    }
    Ok(LorawanReport {
        definition,
        others,
        cells,
        points,
        labels,
    })
}
