//! `coapcc report`: the tables and figures of the published evaluations from a
//! results store, as one self-contained HTML file, every figure also as SVG
//! and every table as CSV. What every network's report shares is here; each
//! network's report is in its folder ([`crate::networks`]).
//!
//! - [`svg`]: box plots, bars, curves, heat maps; [`tables`]: tables;
//!   [`html`]: what every page shares; [`manifest`]: the files a report
//!   wrote. The kernel cross-check's report: [`crate::kernel_check::report`].

pub mod html;
pub mod manifest;
pub mod svg;
pub mod tables;

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use crate::store::{Definition, Store};
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

/// A file-name stem: lower-case letters, digits and `-`; anything else `_`.
pub fn stem(raw: &str) -> String {
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

/// Chooses the definition: `selector` is a hash prefix or a campaign name (its
/// most recently run definition); without one, the most recently run.
pub fn choose(store: &Store, selector: Option<&str>) -> Result<(Definition, Vec<Definition>)> {
    let defs = store.definitions()?;
    if defs.is_empty() {
        bail!("the store holds no campaign; run `coapcc campaign` first");
    }
    let list = |defs: &[&Definition]| {
        defs.iter()
            .map(|d| format!("{} ({})", d.name, &d.hash[..12]))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let idx = match selector {
        None => 0,
        Some(s) => {
            // a name selects its most recently run definition (definitions
            // come most recent first); otherwise a hash prefix must be unique
            let by_name = defs.iter().position(|d| d.name == s);
            let by_hash: Vec<usize> = (0..defs.len())
                .filter(|&i| !s.is_empty() && defs[i].hash.starts_with(s))
                .collect();
            match (by_name, by_hash.as_slice()) {
                (Some(i), _) => i,
                (None, [i]) => *i,
                (None, []) => bail!(
                    "no campaign definition `{s}` in the store; it holds: {}",
                    list(&defs.iter().collect::<Vec<_>>())
                ),
                (None, many) => bail!(
                    "--campaign {s}: the prefix matches {} definitions: {}; give more of the hash",
                    many.len(),
                    list(&many.iter().map(|&i| &defs[i]).collect::<Vec<_>>())
                ),
            }
        }
    };
    let mut others = defs;
    let chosen = others.remove(idx);
    Ok((chosen, others))
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

/// Writes `figures` as SVG files, `tables` as CSV files and `page` as
/// `report.html` into `out` (created if needed), with the manifest of what
/// it wrote, all at once ([`manifest::replace`]): every file is first
/// written into a folder beside them, then the previous report's files are
/// moved aside and the new ones renamed into place; a failure on the way
/// (a full disk, a name the file system refuses) leaves the previous report
/// whole. A symbolic link under one of these names is replaced, not written
/// through.
pub fn put_all(out: &Path, figures: &[Figure], tables: &[Table], page: &str) -> Result<Written> {
    std::fs::create_dir_all(out)
        .with_context(|| format!("{}: cannot create the report directory", out.display()))?;
    let csvs: Vec<(String, String)> = tables
        .iter()
        .map(|t| (format!("{}.csv", t.id), t.csv()))
        .collect();
    let files: Vec<(&str, &str)> = figures
        .iter()
        .map(|f| (f.file.as_str(), f.svg.as_str()))
        .chain(csvs.iter().map(|(n, t)| (n.as_str(), t.as_str())))
        .chain([("report.html", page)])
        .collect();
    let removed = manifest::replace(out, &files)?;
    Ok(Written {
        html: out.join("report.html"),
        svgs: figures.iter().map(|f| out.join(&f.file)).collect(),
        csvs: csvs.iter().map(|(n, _)| out.join(n)).collect(),
        removed,
    })
}

/// Runs found and runs planned over a report's cells, each given as (runs
/// found, runs planned).
pub fn progress(cells: impl Iterator<Item = (u32, usize)>) -> (u64, u64) {
    cells.fold((0, 0), |(done, planned), (d, p)| {
        (done + u64::from(d), planned + p as u64)
    })
}

/// Appends `x` to `v` unless it is there already (first-appearance order).
pub fn push_new<T: PartialEq>(v: &mut Vec<T>, x: T) {
    if !v.contains(&x) {
        v.push(x);
    }
}

/// The set named `name` in `sets` (found by `name_of`), appended with
/// `new` if there is none yet.
pub fn set_named<'a, S>(
    sets: &'a mut Vec<S>,
    name: &str,
    name_of: impl Fn(&S) -> &str,
    new: impl FnOnce() -> S,
) -> &'a mut S {
    let i = match sets.iter().position(|s| name_of(s) == name) {
        Some(i) => i,
        None => {
            sets.push(new());
            sets.len() - 1
        }
    };
    &mut sets[i]
}

/// For each wanted value, the point whose `value` is nearest to it on a log
/// scale (ties: the smaller value, then the earlier point), without repeats,
/// in the order wanted. Points whose value is not positive are passed over.
pub fn nearest_on_log_scale<T: Clone + PartialEq>(
    points: &[T],
    wanted: &[f64],
    value: impl Fn(&T) -> f64,
) -> Vec<T> {
    let mut out: Vec<T> = Vec::new();
    for &w in wanted {
        let dist = |p: &T| (value(p) / w).ln().abs();
        // `min_by` keeps the first of equal elements: the earlier point.
        let best = points.iter().filter(|p| value(p) > 0.0).min_by(|a, b| {
            dist(a)
                .total_cmp(&dist(b))
                .then(value(a).total_cmp(&value(b)))
        });
        if let Some(b) = best {
            push_new(&mut out, b.clone());
        }
    }
    out
}

/// The figure of metric `id` of the set `set`, of `kind`: the plot of
/// `series` on `axes`, in the set's group, filed as `<set>-<id>.svg`.
pub fn set_figure(
    kind: &'static str,
    set: &str,
    id: &str,
    axes: &svg::xy::Axes,
    series: &[svg::xy::Series],
) -> Figure {
    Figure {
        kind,
        group: set.to_string(),
        file: format!("{}-{}.svg", stem(set), id),
        svg: svg::xy::xy_plot(axes, series),
    }
}
