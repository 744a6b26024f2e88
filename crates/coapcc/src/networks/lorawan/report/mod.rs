//! The report of a LoRaWAN campaign: per cell (devices × period), the
//! delivery ratio, completion times and retransmissions of each algorithm
//! with 95 % confidence intervals, as one self-contained HTML page, every
//! figure also as SVG and every table as CSV.
//!
//! - [`data`]: what is shown; [`figures`]: the figures; [`tables`]: the
//!   tables; [`html`]: the page.

pub mod data;
pub mod figures;
pub mod html;
pub mod tables;

use std::path::Path;

use anyhow::Result;

use crate::report::{put_all, Written};
use data::LorawanReport;

/// Writes the report into `out` (created if needed): `report.html`, one SVG
/// per figure, one CSV per table.
pub fn write(r: &LorawanReport, out: &Path) -> Result<Written> {
    let figures = figures::figures(r);
    let tables = tables::all(r);
    put_all(out, &figures, &tables, &html::page(r, &figures, &tables))
}
