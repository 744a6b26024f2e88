//! Run digests (layout 5): when a run is stored, a SHA-256 of every value of
//! its rows — the run's row and its item rows (clients, grid nodes and
//! traces, star stations and traces), as SQLite holds them, with their types,
//! row ids left out — is stored beside it in `run_digests`, in the same
//! transaction. A report recomputes the digest of each run it shows and
//! refuses runs whose rows no longer match: a value edited by hand is not
//! reported as if it had been measured.
//!
//! A run's key is a hash of its spec, and one run may belong to several
//! cells (of several definitions, or twice in one): what a cell says of its
//! runs — its set, clients, buffer, labels — is covered by a digest of the
//! definition's cells (layout 6): a SHA-256 of every value of its rows in
//! its network's cells table, stored in `cell_digests` in the transaction
//! that writes them. A report checks both: the runs it shows and the cells
//! that label them.
//!
//! Runs stored before the digest existed (a store of layout 4 or older, and
//! its runs from before its upgrade) have none: they are read with a note
//! that they cannot be checked. The digest catches edits, not forgery: whoever
//! can write the store can write a matching digest too.

use std::collections::HashSet;

use anyhow::Result;
use rusqlite::types::ValueRef;
use rusqlite::{params, Connection, OptionalExtension};
use sha2::{Digest, Sha256};

pub use super::layout::RunTables;
use super::Store;

/// Every value of one row, typed, into `h`; columns named in `skip` left out.
fn feed_rows(
    h: &mut Sha256,
    conn: &Connection,
    sql: &str,
    id: impl rusqlite::ToSql,
    skip: &str,
) -> Result<()> {
    let mut stmt = conn.prepare_cached(sql)?;
    let keep: Vec<bool> = stmt.column_names().iter().map(|c| *c != skip).collect();
    let mut rows = stmt.query([id])?;
    while let Some(r) = rows.next()? {
        h.update(b"(");
        for (i, _) in keep.iter().enumerate().filter(|(_, k)| **k) {
            match r.get_ref(i)? {
                ValueRef::Null => h.update([0]),
                ValueRef::Integer(v) => {
                    h.update([1]);
                    h.update(v.to_le_bytes());
                }
                ValueRef::Real(v) => {
                    h.update([2]);
                    h.update(v.to_bits().to_le_bytes());
                }
                ValueRef::Text(t) => {
                    h.update([3]);
                    h.update((t.len() as u64).to_le_bytes());
                    h.update(t);
                }
                ValueRef::Blob(b) => {
                    h.update([4]);
                    h.update((b.len() as u64).to_le_bytes());
                    h.update(b);
                }
            }
        }
        h.update(b")");
    }
    Ok(())
}

/// The digest of the run of row id `id` in `t`, from its rows as stored.
pub fn compute(conn: &Connection, t: &RunTables, id: i64) -> Result<String> {
    let mut h = Sha256::new();
    h.update(t.runs.as_bytes());
    feed_rows(
        &mut h,
        conn,
        &format!("SELECT * FROM {} WHERE id = ?1", t.runs),
        id,
        "id",
    )?;
    for (table, order) in t.items {
        h.update(table.as_bytes());
        feed_rows(
            &mut h,
            conn,
            &format!("SELECT * FROM {table} WHERE run = ?1 ORDER BY {order}"),
            id,
            "run",
        )?;
    }
    Ok(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// Stores the digest of the run `key` (row id `id`) just written in `t`.
pub fn record(conn: &Connection, t: &RunTables, key: &str, id: i64) -> Result<()> {
    let d = compute(conn, t, id)?;
    conn.execute(
        "INSERT OR REPLACE INTO run_digests (run_table, key, digest) VALUES (?1, ?2, ?3)",
        params![t.runs, key, d],
    )?;
    Ok(())
}

/// The digest of the cells of `definition` in `table`, from its rows as
/// stored (every column, in campaign order).
pub fn compute_cells(conn: &Connection, table: &str, definition: &str) -> Result<String> {
    let mut h = Sha256::new();
    h.update(table.as_bytes());
    feed_rows(
        &mut h,
        conn,
        &format!("SELECT * FROM {table} WHERE definition = ?1 ORDER BY idx"),
        definition,
        "",
    )?;
    Ok(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// Stores the digest of the cells of `definition` just written in `table`.
pub fn record_cells(conn: &Connection, table: &str, definition: &str) -> Result<()> {
    let d = compute_cells(conn, table, definition)?;
    conn.execute(
        "INSERT OR REPLACE INTO cell_digests (definition, digest) VALUES (?1, ?2)",
        params![definition, d],
    )?;
    Ok(())
}

/// What checking the digest of a definition's cells found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CellsCheck {
    /// The cells match their digest.
    Checked,
    /// The definition was stored before cell digests existed.
    Unchecked,
    /// The cells do not match their digest, or the digest is missing.
    Altered,
}

/// What checking the digests of some runs found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DigestCheck {
    /// Runs whose rows match their digest.
    pub checked: usize,
    /// Runs stored before digests existed: not checkable.
    pub unchecked: usize,
    /// Runs whose rows do not match their digest (or whose digest is
    /// missing although they were stored with one), by key.
    pub altered: Vec<String>,
}

impl Store {
    /// Checks the digest of the cells of `definition` in `table`.
    pub fn check_cells(&self, table: &str, definition: &str) -> Result<CellsCheck> {
        if self.layout < 6 {
            return Ok(CellsCheck::Unchecked);
        }
        let stored: Option<Option<String>> = self
            .conn
            .query_row(
                "SELECT digest FROM cell_digests WHERE definition = ?1",
                [definition],
                |r| r.get(0),
            )
            .optional()?;
        Ok(match stored {
            None => CellsCheck::Altered,
            Some(None) => CellsCheck::Unchecked,
            Some(Some(d)) if d == compute_cells(&self.conn, table, definition)? => {
                CellsCheck::Checked
            }
            Some(Some(_)) => CellsCheck::Altered,
        })
    }

    /// Checks the digests of the stored runs among `keys` (keys not stored
    /// are skipped) in the run tables `t`, which layouts from `since` on
    /// hold.
    pub fn check_digests<'a>(
        &self,
        t: &RunTables,
        since: u32,
        keys: impl IntoIterator<Item = &'a str>,
    ) -> Result<DigestCheck> {
        let mut out = DigestCheck::default();
        if self.layout < since {
            return Ok(out);
        }
        let from: i64 = if self.layout < 5 {
            i64::MAX
        } else {
            self.conn
                .query_row(
                    "SELECT value FROM meta WHERE key = ?1",
                    [format!("digests_from:{}", t.runs)],
                    |r| r.get::<_, String>(0),
                )
                .optional()?
                .map_or(Ok(0), |v| v.parse::<i64>())
                .unwrap_or(i64::MAX)
        };
        let mut seen = HashSet::new();
        let mut id_of = self
            .conn
            .prepare(&format!("SELECT id FROM {} WHERE key = ?1", t.runs))?;
        for key in keys {
            if !seen.insert(key) {
                continue;
            }
            let Some(id) = id_of.query_row([key], |r| r.get::<_, i64>(0)).optional()? else {
                continue;
            };
            let stored: Option<String> = if self.layout < 5 {
                None
            } else {
                self.conn
                    .query_row(
                        "SELECT digest FROM run_digests WHERE run_table = ?1 AND key = ?2",
                        params![t.runs, key],
                        |r| r.get(0),
                    )
                    .optional()?
            };
            match stored {
                Some(d) if d == compute(&self.conn, t, id)? => out.checked += 1,
                Some(_) => out.altered.push(key.to_string()),
                None if id < from => out.unchecked += 1,
                None => out.altered.push(key.to_string()),
            }
        }
        Ok(out)
    }
}
