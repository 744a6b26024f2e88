//! `coapcc report`: the tables and figures of the published evaluations from a
//! results store — FCT box plots per client count and buffer, unnecessary
//! retransmissions per client, transmissions per exchange, measured vs
//! published medians (spec `testbed.md` §3, `calibration.md` §1) — as one
//! self-contained HTML file, every figure also as SVG and every table as CSV.
//!
//! - [`data`]: what is shown; [`svg`]: box plots; [`tables`]: tables;
//!   [`html`]: the page;
//! - [`grid`]: the report of a grid campaign (the pCoCoA evaluation's figures);
//! - [`star`]: the report of a star campaign (the lwIP evaluation's figures).

pub mod data;
pub mod grid;
pub mod html;
pub mod kernel_check;
pub mod manifest;
pub mod star;
pub mod svg;
pub mod tables;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use coapcc_sim::Summary;

use crate::scenario_file::NetworkKind;
use crate::store::Store;
use data::Report;
use svg::{BoxItem, PALETTE};
use tables::Table;

/// One figure: an SVG document and where it goes.
#[derive(Clone, Debug)]
pub struct Figure {
    /// `fct` or `unnecessary` (dumbbell); `periodic`, `nodes`, `trace` or
    /// `bursty` (grid); `bars`, `sweep` or `series` (star).
    pub kind: &'static str,
    /// The heading it is shown under in the page.
    pub group: String,
    /// Its file name.
    pub file: String,
    /// The SVG document.
    pub svg: String,
}

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

/// What [`write`] produced.
#[derive(Clone, Debug)]
pub struct Written {
    /// The HTML page.
    pub html: PathBuf,
    /// The SVG files.
    pub svgs: Vec<PathBuf>,
    /// The CSV files.
    pub csvs: Vec<PathBuf>,
    /// Files of the previous report in the directory that this one does not
    /// write, removed ([`manifest`]).
    pub removed: Vec<PathBuf>,
}

/// Writes the report into `out` (created if needed): `report.html`, one SVG
/// per figure, one CSV per table.
pub fn write(r: &Report, out: &Path) -> Result<Written> {
    let figures = figures(r);
    let tables = all_tables(r);
    put_all(out, &figures, &tables, &html::page(r, &figures, &tables))
}

/// Writes `figures` as SVG files, `tables` as CSV files and `page` as
/// `report.html` into `out` (created if needed), each by [`manifest::put`]:
/// a symbolic link under one of these names is replaced, not written through.
fn put_all(out: &Path, figures: &[Figure], tables: &[Table], page: &str) -> Result<Written> {
    std::fs::create_dir_all(out)
        .with_context(|| format!("{}: cannot create the report directory", out.display()))?;
    let previous = manifest::previous(out);
    let put = |name: &str, text: &str| manifest::put(out, name, text);
    let mut svgs = Vec::new();
    for f in figures {
        svgs.push(put(&f.file, &f.svg)?);
    }
    let mut csvs = Vec::new();
    let csv_names: Vec<String> = tables.iter().map(|t| format!("{}.csv", t.id)).collect();
    for (t, name) in tables.iter().zip(&csv_names) {
        csvs.push(put(name, &t.csv())?);
    }
    let html = put("report.html", page)?;
    let names: Vec<&str> = figures
        .iter()
        .map(|f| f.file.as_str())
        .chain(csv_names.iter().map(String::as_str))
        .chain(["report.html"])
        .collect();
    let removed = manifest::prune(out, &previous, &names)?;
    manifest::record(out, &names)?;
    Ok(Written {
        html,
        svgs,
        csvs,
        removed,
    })
}

/// Refuses to report a definition with a run whose stored rows no longer
/// match the digest written with them ([`crate::store::digest`]); notes on
/// stderr how many of its runs were stored before digests existed.
fn check_digests(db: &Store, def: &crate::store::Definition) -> Result<()> {
    let keys: Vec<String> = match def.network {
        NetworkKind::Dumbbell => db
            .cells(&def.hash)?
            .into_iter()
            .flat_map(|c| c.keys)
            .collect(),
        NetworkKind::Grid => db
            .grid_cells(&def.hash)?
            .into_iter()
            .flat_map(|c| c.keys)
            .collect(),
        NetworkKind::Star => db
            .star_cells(&def.hash)?
            .into_iter()
            .flat_map(|c| c.keys)
            .collect(),
    };
    let check = db.check_digests(def.network, keys.iter().map(String::as_str))?;
    let t = crate::store::digest::tables(def.network);
    if !check.altered.is_empty() {
        let items: Vec<&str> = t.items.iter().map(|(n, _)| *n).collect();
        anyhow::bail!(
            "{}: {} run(s) of campaign `{}` do not match the digest stored with them — their \
             rows in table {} or {} were changed after coapcc stored them: {}{}; refusing to \
             report edited values as measured (nothing written). Compute them again into a new \
             store",
            db.path().display(),
            check.altered.len(),
            def.name,
            t.runs,
            items.join(", "),
            check
                .altered
                .iter()
                .take(3)
                .cloned()
                .collect::<Vec<_>>()
                .join(", "),
            if check.altered.len() > 3 { ", …" } else { "" }
        );
    }
    if check.unchecked > 0 {
        eprintln!(
            "note: {} of the {} stored runs of campaign `{}` in {} were stored before coapcc kept \
             run digests (store layout 4 or older); whether their values were edited since \
             cannot be checked",
            check.unchecked,
            check.unchecked + check.checked,
            def.name,
            db.path().display()
        );
    }
    Ok(())
}

/// `coapcc report <store> --out DIR [--campaign NAME|HASH]`: the report of a
/// dumbbell, grid or star campaign, as its definition says.
pub fn cli(store: &Path, out: &Path, campaign: Option<&str>) -> Result<()> {
    let db = Store::open_read_only(store)?;
    if campaign.is_none() && db.definitions()?.is_empty() && !db.kernel_check_runs()?.is_empty() {
        let w = kernel_check::write(&db, out)?;
        crate::outln!(
            "report of the kernel cross-check: {} (1 table)",
            w.html.display()
        )?;
        return Ok(());
    }
    let (def, others) = data::choose(&db, campaign)
        .with_context(|| format!("results store {}", store.display()))?;
    check_digests(&db, &def)?;
    let (name, hash) = (def.name.clone(), def.hash.clone());
    let none_finished = |planned: u64| {
        anyhow::anyhow!(
            "{}: campaign `{name}` has no finished run (0/{planned}); run `coapcc campaign` to \
             compute them (nothing written)",
            store.display()
        )
    };
    let (w, (done, planned)) = match def.network {
        NetworkKind::Dumbbell => {
            let report = data::gather(&db, def, others)
                .with_context(|| format!("results store {}", store.display()))?;
            let (done, planned) = report.progress();
            if done == 0 {
                return Err(none_finished(planned));
            }
            (write(&report, out)?, (done, planned))
        }
        NetworkKind::Grid => {
            let report = grid::data::gather(&db, def, others)
                .with_context(|| format!("results store {}", store.display()))?;
            let (done, planned) = report.progress();
            if done == 0 {
                return Err(none_finished(planned));
            }
            (grid::write(&report, out)?, (done, planned))
        }
        NetworkKind::Star => {
            let report = star::data::gather(&db, def, others)
                .with_context(|| format!("results store {}", store.display()))?;
            let (done, planned) = report.progress();
            if done == 0 {
                return Err(none_finished(planned));
            }
            (star::write(&report, out)?, (done, planned))
        }
    };
    crate::outln!(
        "report of campaign `{name}` (definition {}, {done}/{planned} runs): {} ({} figures, {} tables)",
        &hash[..12],
        w.html.display(),
        w.svgs.len(),
        w.csvs.len()
    )?;
    if !w.removed.is_empty() {
        let names: Vec<String> = w.removed.iter().map(|p| p.display().to_string()).collect();
        eprintln!(
            "removed {} file(s) the previous report in {} wrote and this one does not: {}",
            names.len(),
            out.display(),
            names.join(", ")
        );
    }
    Ok(())
}
