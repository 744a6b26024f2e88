//! A campaign ready to run, on any network: a network's campaign file
//! expanded into its cells ([`Plan`]), and what every plan does alike — its
//! name and definition, its runs, and its record in the store.

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::{Context, Result};
use coapcc_sim::AlgorithmSpec;
use rusqlite::types::Value;
use rusqlite::{params_from_iter, Transaction};
use serde::Serialize;

use super::unit::PlanCell;
use crate::store::{NetworkTables, NewDefinition, Registered, Skipped, Store};

/// What every network's campaign file has.
pub trait CampaignFile {
    /// The spec of an algorithm entry given by name: the network's published
    /// settings of that name.
    const NAMED: fn(&str) -> AlgorithmSpec;
    /// What an algorithm entry is expected to be, in errors.
    const ENTRY: &'static str;

    /// One of its sets as written.
    type Set;

    /// Its name, title and description as written.
    fn about(&self) -> (&str, &str, &str);

    /// Its sets as written, in order.
    fn sets(&self) -> &[Self::Set];

    /// The name of `set`, which names it in reports and errors.
    fn set_name(set: &Self::Set) -> &str;

    /// A short name; names the campaign in the store and reports.
    fn name(&self) -> &str {
        self.about().0
    }
    /// The published work it reproduces.
    fn title(&self) -> &str {
        self.about().1
    }
    /// What it runs, in a sentence or two.
    fn description(&self) -> &str {
        self.about().2
    }
}

/// A campaign ready to run: a network's campaign file `F` expanded into its
/// cells `C`.
#[derive(Clone, Debug)]
pub struct Plan<F, C> {
    /// The file's fields as written.
    pub file: F,
    /// The file's text.
    pub text: String,
    /// Where it was read from.
    pub source: String,
    /// Every cell.
    pub cells: Vec<C>,
    /// Algorithms skipped as unavailable in this build (dumbbell campaigns
    /// under `skip_unavailable`).
    pub skipped: Vec<Skipped>,
    /// The definition: SHA-256 over the model version, the campaign's name and
    /// every cell with its run keys (and a network marker but for the
    /// dumbbell). Comments or formatting of the file do not change it; any
    /// parameter does.
    pub definition: String,
}

impl<F: CampaignFile, C: PlanCell> Plan<F, C> {
    /// Runs in all (cells × replications; a key shared by two cells counts twice).
    pub fn runs(&self) -> usize {
        self.cells.iter().map(|c| c.keys().len()).sum()
    }

    /// Distinct run keys.
    pub fn distinct_keys(&self) -> BTreeSet<&str> {
        self.cells
            .iter()
            .flat_map(|c| c.keys().iter().map(String::as_str))
            .collect()
    }

    /// The campaign's name and definition hash.
    pub fn identity(&self) -> (&str, &str) {
        (self.file.name(), &self.definition)
    }

    /// The campaign file's text and where it came from.
    pub fn text(&self) -> (&str, &str) {
        (&self.text, &self.source)
    }

    /// What to say before running it: the algorithms it skips.
    pub fn notes(&self) -> Vec<String> {
        self.skipped
            .iter()
            .map(|s| {
                format!(
                    "skipping `{}`: not available in this build ({})",
                    s.name, s.reason
                )
            })
            .collect()
    }

    /// Records the definition in `store` as one of the network of `tables`
    /// (once, with its cells, which `insert_cells` writes in the same
    /// transaction), and marks it as the most recently run definition.
    pub fn register(
        &self,
        store: &mut Store,
        tables: &'static NetworkTables,
        insert_cells: impl FnOnce(&Transaction<'_>) -> Result<()>,
    ) -> Result<Registered> {
        let definition = NewDefinition {
            hash: &self.definition,
            name: self.file.name(),
            title: self.file.title(),
            description: self.file.description(),
            source: &self.source,
            text: &self.text,
            skipped: serde_json::to_string(&self.skipped)?,
            runs: self.runs(),
            network: tables.network,
            cells_table: tables.cells,
        };
        store.register_definition(&definition, insert_cells)
    }

    /// [`Plan::register`] with one row a cell in the network's cells table: the definition, the
    /// cell's index, the network's `columns` (comma-separated) with the
    /// `values` the cell gives, and the cell as JSON.
    pub fn register_cells(
        &self,
        store: &mut Store,
        tables: &'static NetworkTables,
        columns: &str,
        values: impl Fn(&C) -> Vec<Value>,
    ) -> Result<Registered>
    where
        C: Serialize,
    {
        let table = tables.cells;
        self.register(store, tables, |tx| {
            let marks: Vec<String> = (1..=columns.split(',').count() + 3)
                .map(|i| format!("?{i}"))
                .collect();
            let mut stmt = tx.prepare(&format!(
                "INSERT INTO {table} (definition, idx, {columns}, cell) VALUES ({})",
                marks.join(", ")
            ))?;
            for (i, c) in self.cells.iter().enumerate() {
                let mut row = vec![Value::from(self.definition.clone()), Value::from(i as i64)];
                row.extend(values(c));
                row.push(Value::from(serde_json::to_string(c)?));
                stmt.execute(params_from_iter(row))?;
            }
            Ok(())
        })
    }
}

/// Reads the campaign file at `path` and expands it with `parse` (its text
/// and the name errors give it).
pub fn load<T>(path: &Path, parse: impl FnOnce(&str, &str) -> Result<T>) -> Result<T> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read the campaign file", path.display()))?;
    parse(&text, &path.display().to_string())
}
