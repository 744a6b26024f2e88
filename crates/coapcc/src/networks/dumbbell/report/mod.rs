//! The report of a dumbbell campaign (the Helsinki evaluations, spec
//! `docs/spec/testbed-spec.md` §3, `docs/spec/calibration-spec.md` §1): FCT box plots per client count and
//! buffer, unnecessary retransmissions per client, transmissions per
//! exchange, measured vs published medians.
//!
//! - [`data`]: what is shown; [`figures`]: the figures; [`tables`]: the
//!   tables; [`html`]: the page.

pub mod data;
pub mod figures;
pub mod html;
pub mod tables;

use std::path::Path;

use anyhow::Result;
use coapcc_sim::WorkloadKind;

use crate::report::tables::Table;
use crate::report::{put_all, Written};
use data::DumbbellReport;

/// Every table of the report: the observe and block-wise tables only when
/// the campaign has cells of those workloads.
pub fn all_tables(r: &DumbbellReport) -> Vec<Table> {
    let mut out = vec![
        tables::published(r),
        tables::transmissions(r),
        tables::summary(r),
    ];
    let has = |w: WorkloadKind| r.cells.iter().any(|c| c.cell.workload == w);
    if has(WorkloadKind::Observe) {
        out.push(tables::observe(r));
    }
    if has(WorkloadKind::Blockwise) {
        out.push(tables::transfers(r));
    }
    out
}

/// Writes the report into `out` (created if needed): `report.html`, one SVG
/// per figure, one CSV per table.
pub fn write(r: &DumbbellReport, out: &Path) -> Result<Written> {
    let figures = figures::figures(r);
    let tables = all_tables(r);
    put_all(out, &figures, &tables, &html::page(r, &figures, &tables))
}
