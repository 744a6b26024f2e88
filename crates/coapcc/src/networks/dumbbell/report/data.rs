//! What a report shows, computed from a store: for one campaign definition,
//! every cell's per-group summary over its finished replications (spec
//! `docs/spec/testbed-spec.md` §3), the cells grouped into the papers' panels (one client count
//! and buffer each), and measured beside published medians (`docs/spec/calibration-spec.md` §1).

use anyhow::Result;
use coapcc_link::dumbbell::Buffer;
use coapcc_link::errors::ErrorProfile;
use coapcc_sim::observe_metrics::ObserveSummary;
use coapcc_sim::transfer_metrics::TransferSummary;
use coapcc_sim::{AlgorithmSpec, Summary, WorkloadKind};

use crate::calibrate::published_settings;
use crate::networks::dumbbell::campaign::plan::DumbbellCell;
use crate::published::{PublishedRow, PUBLISHED};
use crate::store::{Definition, Store};

/// One group of a cell, summarised.
#[derive(Clone, Debug)]
pub struct GroupResult {
    /// Its label.
    pub label: String,
    /// Its algorithm.
    pub algorithm: AlgorithmSpec,
    /// The summary over the finished replications.
    pub summary: Summary,
}

/// One cell with its results.
#[derive(Clone, Debug)]
pub struct CellResult {
    /// The cell.
    pub cell: DumbbellCell,
    /// Replications found in the store.
    pub done: u32,
    /// Per group.
    pub groups: Vec<GroupResult>,
}

/// Cells that share a set, error profile, workload, buffer and client count:
/// one figure of the papers.
#[derive(Clone, Debug)]
pub struct Panel {
    /// The set.
    pub set: String,
    /// Error profile.
    pub errors: ErrorProfile,
    /// Workload.
    pub workload: WorkloadKind,
    /// Buffer.
    pub buffer: Buffer,
    /// Clients.
    pub clients: u32,
    /// Indices into [`DumbbellReport::cells`].
    pub cells: Vec<usize>,
}

impl Panel {
    /// A title: `error-free · continuous · buffer 2500 B · 100 clients`.
    pub fn title(&self) -> String {
        let errors = if self.errors == ErrorProfile::None {
            String::new()
        } else {
            format!(" · {} errors", self.errors.name())
        };
        let buffer = match self.buffer {
            Buffer::Infinite => "buffer ∞".to_string(),
            Buffer::Bytes(b) => format!("buffer {b} B"),
        };
        format!(
            "{} · {}{errors} · {buffer} · {} client{}",
            self.set,
            self.workload.name(),
            self.clients,
            if self.clients == 1 { "" } else { "s" }
        )
    }

    /// The heading of the row of figures it belongs to: the title without the
    /// client count and error profile, which vary along the row.
    pub fn row_title(&self) -> String {
        let buffer = match self.buffer {
            Buffer::Infinite => "buffer ∞".to_string(),
            Buffer::Bytes(b) => format!("buffer {b} B"),
        };
        format!("{} · {} · {buffer}", self.set, self.workload.name())
    }

    /// A file-name stem: `error-free-continuous-2500-none-100`.
    pub fn stem(&self) -> String {
        let raw = format!(
            "{}-{}-{}-{}-{}",
            self.set,
            self.workload.name(),
            self.buffer.label(),
            self.errors.name(),
            self.clients
        );
        raw.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c.to_ascii_lowercase()
                } else {
                    '_'
                }
            })
            .collect()
    }
}

/// A published row with the measured summary of a cell that runs it.
#[derive(Clone, Debug)]
pub struct Comparison {
    /// The published figures.
    pub row: PublishedRow,
    /// The set of the matching cell.
    pub set: String,
    /// The measured summary.
    pub measured: Summary,
    /// Replications measured.
    pub replications: u32,
}

/// Everything a report shows.
#[derive(Clone, Debug)]
pub struct DumbbellReport {
    /// The definition reported.
    pub definition: Definition,
    /// Other definitions in the store, not reported.
    pub others: Vec<Definition>,
    /// Every cell, in campaign order.
    pub cells: Vec<CellResult>,
    /// The panels, in campaign order.
    pub panels: Vec<Panel>,
    /// Published rows the campaign reproduces.
    pub comparisons: Vec<Comparison>,
    /// Algorithm labels in first-appearance order (for stable colours).
    pub labels: Vec<String>,
}

impl DumbbellReport {
    /// Runs found and runs planned.
    pub fn progress(&self) -> (u64, u64) {
        let done = self.cells.iter().map(|c| u64::from(c.done)).sum();
        let planned = self.cells.iter().map(|c| c.cell.keys.len() as u64).sum();
        (done, planned)
    }
}

fn same_algorithm(a: &AlgorithmSpec, b: &AlgorithmSpec) -> bool {
    let strip = |x: &AlgorithmSpec| AlgorithmSpec {
        label: None,
        ..x.clone()
    };
    strip(a) == strip(b)
}

/// Gathers the report of `definition` from `store`.
pub fn gather(
    store: &Store,
    definition: Definition,
    others: Vec<Definition>,
) -> Result<DumbbellReport> {
    let mut cells = Vec::new();
    let mut labels: Vec<String> = Vec::new();
    for cell in super::super::store::cells(store, &definition.hash)? {
        let mut runs = Vec::new();
        for key in &cell.keys {
            if let Some(r) = super::super::store::load_run(store, key)? {
                runs.push(r);
            }
        }
        let mut groups: Vec<GroupResult> = cell
            .groups
            .iter()
            .enumerate()
            .map(|(g, info)| GroupResult {
                label: info.label.clone(),
                algorithm: info.algorithm.clone(),
                summary: Summary::of(&info.label, g as u32, &runs),
            })
            .collect();
        if !cell.workload.is_request_response() {
            workload_figures(store, &cell, &mut groups)?;
        }
        for g in &cell.groups {
            let l = g.algorithm.label().to_string();
            if !labels.contains(&l) {
                labels.push(l);
            }
        }
        cells.push(CellResult {
            done: runs.len() as u32,
            cell,
            groups,
        });
    }
    let mut panels: Vec<Panel> = Vec::new();
    for (i, c) in cells.iter().enumerate() {
        let k = &c.cell;
        match panels.iter_mut().find(|p| {
            p.set == k.set
                && p.errors == k.errors
                && p.workload == k.workload
                && p.buffer == k.buffer
                && p.clients == k.clients
        }) {
            Some(p) => p.cells.push(i),
            None => panels.push(Panel {
                set: k.set.clone(),
                errors: k.errors,
                workload: k.workload,
                buffer: k.buffer,
                clients: k.clients,
                cells: vec![i],
            }),
        }
    }
    let mut comparisons = Vec::new();
    for row in PUBLISHED {
        for c in &cells {
            let k = &c.cell;
            if !k.mixed
                && c.done > 0
                && k.clients == row.clients
                && k.workload == row.workload
                && k.errors == row.errors
                && k.buffer == row.buffer()
                && same_algorithm(&k.groups[0].algorithm, &published_settings(row.algorithm))
            {
                comparisons.push(Comparison {
                    row: *row,
                    set: k.set.clone(),
                    measured: c.groups[0].summary.clone(),
                    replications: c.done,
                });
            }
        }
    }
    // By set and client count, then workload and buffer; algorithms keep the
    // published order.
    comparisons.sort_by_key(|c| {
        (
            cells.iter().position(|k| k.cell.set == c.set),
            c.row.clients,
            c.row.errors.name(),
            c.row.workload.name(),
            c.row.buffer.unwrap_or(u64::MAX),
        )
    });
    Ok(DumbbellReport {
        definition,
        others,
        cells,
        panels,
        comparisons,
        labels,
    })
}

/// Fills in an observing or block-wise cell's own figures, which the store
/// keeps in each run's summaries rather than in its client rows: combined
/// over the replications found ([`ObserveSummary::combine`],
/// [`TransferSummary::combine`]).
fn workload_figures(store: &Store, cell: &DumbbellCell, groups: &mut [GroupResult]) -> Result<()> {
    let mut stored = Vec::new();
    for key in &cell.keys {
        if let Some(s) = super::super::store::load_summaries(store, key)? {
            stored.push(s);
        }
    }
    for (g, group) in groups.iter_mut().enumerate() {
        let of_group = || stored.iter().filter_map(|run| run.get(g));
        let observe: Vec<_> = of_group().filter_map(|s| s.observe.clone()).collect();
        if !observe.is_empty() {
            group.summary.observe = Some(ObserveSummary::combine(&observe));
        }
        let transfers: Vec<_> = of_group().filter_map(|s| s.transfers.clone()).collect();
        if !transfers.is_empty() {
            group.summary.transfers = Some(TransferSummary::combine(&transfers));
        }
    }
    Ok(())
}

/// The difference of `measured` from `published`, in percent.
pub fn diff_percent(measured: f64, published: f64) -> f64 {
    100.0 * (measured - published) / published
}
