//! Campaigns for front-ends other than the command line: the plan as rows,
//! and running it into a store without printing.

use std::collections::HashSet;
use std::path::Path;

use anyhow::Result;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::campaign::{self, AnyPlan};
use crate::store::Store;

/// A campaign file, expanded.
pub fn load(path: &Path) -> Result<AnyPlan> {
    campaign::load_any(path)
}

/// `dumbbell`, `grid` or `star`.
pub fn network(plan: &AnyPlan) -> &'static str {
    match plan {
        AnyPlan::Dumbbell(_) => "dumbbell",
        AnyPlan::Grid(_) => "grid",
        AnyPlan::Star(_) => "star",
    }
}

/// The campaign's name and definition hash.
pub fn identity(plan: &AnyPlan) -> (&str, &str) {
    match plan {
        AnyPlan::Dumbbell(p) => (&p.file.name, &p.definition),
        AnyPlan::Grid(p) => (&p.file.name, &p.definition),
        AnyPlan::Star(p) => (&p.file.name, &p.definition),
    }
}

fn cell_row<C: Serialize>(cell: &C, algorithm: &str) -> Map<String, Value> {
    let Value::Object(mut m) = serde_json::to_value(cell).expect("cells serialise") else {
        unreachable!("a cell is a struct")
    };
    m.remove("spec");
    m.remove("keys");
    if let Some(Value::Array(groups)) = m.remove("groups") {
        m.insert("groups".into(), Value::from(groups.len()));
    }
    m.insert("algorithm".into(), Value::from(algorithm));
    m
}

/// One JSON object per run of the plan (cell × replication), in plan order:
/// the cell's fields (without its run spec), `cell` (its index),
/// `replication`, `key`, and `stored` (whether `store` already holds it; false
/// without a store).
pub fn plan_rows(plan: &AnyPlan, store: Option<&Path>) -> Result<String> {
    let done: HashSet<String> = match store {
        Some(path) if path.exists() => {
            let db = Store::open_read_only(path)?;
            match plan {
                AnyPlan::Dumbbell(_) => db.done_keys()?,
                AnyPlan::Grid(_) => db.done_grid_keys()?,
                AnyPlan::Star(_) => db.done_star_keys()?,
            }
        }
        _ => HashSet::new(),
    };
    let cells: Vec<(Map<String, Value>, &[String])> = match plan {
        AnyPlan::Dumbbell(p) => p
            .cells
            .iter()
            .map(|c| {
                let first = c.groups.first().map_or("", |g| g.algorithm.name.as_str());
                (cell_row(c, first), &c.keys[..])
            })
            .collect(),
        AnyPlan::Grid(p) => p
            .cells
            .iter()
            .map(|c| (cell_row(c, &c.algorithm().name), &c.keys[..]))
            .collect(),
        AnyPlan::Star(p) => p
            .cells
            .iter()
            .map(|c| (cell_row(c, &c.algorithm().name), &c.keys[..]))
            .collect(),
    };
    let mut rows = Vec::new();
    for (i, (fields, keys)) in cells.into_iter().enumerate() {
        for (r, key) in keys.iter().enumerate() {
            let mut row = fields.clone();
            row.insert("cell".into(), Value::from(i));
            row.insert("replication".into(), Value::from(r));
            row.insert("key".into(), Value::from(key.as_str()));
            row.insert("stored".into(), Value::from(done.contains(key)));
            rows.push(Value::Object(row));
        }
    }
    Ok(serde_json::to_string(&rows).expect("rows serialise"))
}

/// Runs every run of `plan` missing from the store at `store` (created if
/// missing) on `threads` workers (0: all cores), committing each as it
/// finishes, exactly as `coapcc campaign` does; `progress` draws its bar on
/// stderr.
pub fn run(
    plan: &AnyPlan,
    store: &Path,
    threads: usize,
    progress: bool,
) -> Result<campaign::Outcome> {
    let mut db = Store::open(store)?;
    match plan {
        AnyPlan::Dumbbell(p) => campaign::run(p, &mut db, threads, None, progress),
        AnyPlan::Grid(p) => campaign::grid::run(p, &mut db, threads, None, progress),
        AnyPlan::Star(p) => campaign::star::run(p, &mut db, threads, None, progress),
    }
}
