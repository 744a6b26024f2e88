//! The report of a dumbbell campaign (the Helsinki evaluations, spec
//! `testbed.md` §3, `calibration.md` §1): FCT box plots per client count and
//! buffer, unnecessary retransmissions per client, transmissions per
//! exchange, measured vs published medians.
//!
//! - [`data`]: what is shown; [`tables`]: the tables; [`html`]: the page;
//!   this module: the figures.

pub mod data;
pub mod html;
pub mod tables;

use std::path::Path;

use anyhow::Result;
use coapcc_sim::Summary;

use crate::report::svg::{self, BoxItem, PALETTE};
use crate::report::tables::Table;
use crate::report::{put_all, Figure, Written};
use data::Report;

/// The box of one group: FCT or unnecessary retransmissions.
fn item(r: &Report, label: &str, alg: &str, dashed: bool, s: &Summary, kind: &str) -> BoxItem {
    let colour = PALETTE[r.labels.iter().position(|l| l == alg).unwrap_or(0) % PALETTE.len()];
    let finished = s.clients - s.unfinished_clients;
    let stats = match kind {
        "fct" if finished > 0 => Some(s.fct),
        "unnecessary" if s.clients > 0 => Some(s.unnecessary),
        _ => None,
    };
    BoxItem {
        label: label.to_string(),
        stats,
        colour,
        dashed,
    }
}

/// Every figure of the report, in campaign order.
pub fn figures(r: &Report) -> Vec<Figure> {
    let mut out = Vec::new();
    for (kind, unit, what) in [
        ("fct", "flow completion time (s)", "FCT"),
        (
            "unnecessary",
            "unnecessary retransmissions per client",
            "unnecessary",
        ),
    ] {
        for p in &r.panels {
            let mut items = Vec::new();
            for &i in &p.cells {
                let c = &r.cells[i];
                for g in &c.groups {
                    items.push(item(
                        r,
                        &g.label,
                        g.algorithm.label(),
                        c.cell.mixed,
                        &g.summary,
                        kind,
                    ));
                }
            }
            let title = p.title();
            out.push(Figure {
                kind,
                group: p.row_title(),
                file: format!("{kind}-{}.svg", p.stem()),
                svg: svg::box_plot(&format!("{what}: {title}"), unit, &items),
            });
        }
    }
    out
}

/// Every table of the report.
pub fn all_tables(r: &Report) -> Vec<Table> {
    vec![
        tables::published(r),
        tables::transmissions(r),
        tables::summary(r),
    ]
}

/// Writes the report into `out` (created if needed): `report.html`, one SVG
/// per figure, one CSV per table.
pub fn write(r: &Report, out: &Path) -> Result<Written> {
    let figures = figures(r);
    let tables = all_tables(r);
    put_all(out, &figures, &tables, &html::page(r, &figures, &tables))
}
