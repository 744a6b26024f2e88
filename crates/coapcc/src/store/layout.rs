//! The store's tables and their layout versions.
//!
//! The store has shared tables, declared here, and each network's tables,
//! declared in the network's `store.rs` as a [`NetworkTables`] with the
//! layout they arrive in. The layout a build writes is the last layout of
//! either ([`current`]).
//!
//! Shared tables by layout:
//! - 1: `meta` and `definitions`;
//! - 2: `definitions.network` (a layout-1 store's definitions are on the
//!   network that arrived in layout 1);
//! - 4: the kernel cross-check's `kernel_check_runs`
//!   ([`crate::kernel_check`]);
//! - 5: `run_digests`, a digest of every run's stored rows
//!   ([`super::digest`]); `meta` rows `digests_from:<run table>` in a store
//!   upgraded from an older layout (its older runs have no digest);
//! - 6: `cell_digests`, a digest of every definition's cells as stored
//!   ([`super::digest`]); a definition stored before (in a store upgraded
//!   from an older layout) has a row without a digest.
//!
//! A store of an older layout is upgraded in place when opened for writing
//! (one transaction: the column and the tables it lacks are added, no row
//! changes) and read as it is when opened read-only. A store of any other
//! layout is refused before anything is written to it.

use anyhow::{bail, Result};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior};

/// A network's tables in the store, as the network's `store.rs` declares
/// them.
pub struct NetworkTables {
    /// The network's name, as `definitions.network` records it.
    pub network: &'static str,
    /// The first layout that holds the tables.
    pub since_layout: u32,
    /// The SQL that creates them, exactly as the builds of that layout did.
    pub create: &'static str,
    /// Its run table and item tables.
    pub runs: RunTables,
    /// Its table of definitions' cells.
    pub cells: &'static str,
}

/// The last layout that changed the shared tables.
pub const SHARED: u32 = 6;

/// The shared tables of layout 1.
const SHARED_1: &str = "
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS definitions (
    hash TEXT PRIMARY KEY, name TEXT NOT NULL, title TEXT NOT NULL,
    description TEXT NOT NULL, source TEXT NOT NULL, text TEXT NOT NULL,
    model_version TEXT NOT NULL, skipped TEXT NOT NULL, runs INTEGER NOT NULL,
    first_seen INTEGER NOT NULL, last_run INTEGER NOT NULL, seq INTEGER NOT NULL);
";

/// What layout 4 adds to the shared tables.
const SHARED_4: &str = "
CREATE TABLE kernel_check_runs (
    key TEXT PRIMARY KEY, point TEXT NOT NULL, label TEXT NOT NULL,
    kernel TEXT, sysctl TEXT, model_version TEXT, replication INTEGER NOT NULL,
    record TEXT NOT NULL, raw TEXT NOT NULL, created INTEGER NOT NULL) WITHOUT ROWID;
";

/// What layout 5 adds to layout 4. The `meta` rows `digests_from:<table>`
/// hold, for a store upgraded from an older layout, the first row id of that
/// run table written with a digest (older runs cannot be checked).
const LAYOUT_5_ADDS: &str = "
CREATE TABLE run_digests (
    run_table TEXT NOT NULL, key TEXT NOT NULL, digest TEXT NOT NULL,
    PRIMARY KEY (run_table, key)) WITHOUT ROWID;
";

/// What layout 6 adds to layout 5: one row per definition; the digest is
/// NULL for a definition stored before (its cells cannot be checked).
const LAYOUT_6_ADDS: &str = "
CREATE TABLE cell_digests (
    definition TEXT PRIMARY KEY, digest TEXT) WITHOUT ROWID;
";

/// The tables of one network's runs: the run table and its item tables, each
/// with the column that orders its rows of a run.
pub struct RunTables {
    /// The run table (`id` is the run's row id).
    pub runs: &'static str,
    /// The item tables (`run` is the run's row id) and their order column.
    pub items: &'static [(&'static str, &'static str)],
}

/// The layout a build with these networks writes: the last of the shared
/// tables' and the networks' layouts.
pub fn current(networks: &[&NetworkTables]) -> u32 {
    networks
        .iter()
        .map(|n| n.since_layout)
        .fold(SHARED, u32::max)
}

/// The network whose tables arrived in layout 1: the network of a layout-1
/// store's definitions.
pub fn first_network(networks: &[&NetworkTables]) -> &'static str {
    networks
        .iter()
        .find(|n| n.since_layout == 1)
        .map_or("", |n| n.network)
}

/// The SQL that brings a store of layout `version - 1` to `version` (for
/// `version` 1, that creates a layout-1 store): the shared tables' part,
/// then each network's tables that arrive in `version`, in `networks`'
/// order.
pub fn adds(version: u32, networks: &[&NetworkTables]) -> String {
    let mut sql = match version {
        1 => SHARED_1.to_string(),
        2 => format!(
            "ALTER TABLE definitions ADD COLUMN network TEXT NOT NULL DEFAULT '{}';",
            first_network(networks)
        ),
        4 => SHARED_4.to_string(),
        5 => LAYOUT_5_ADDS.to_string(),
        6 => LAYOUT_6_ADDS.to_string(),
        _ => String::new(),
    };
    for n in networks.iter().filter(|n| n.since_layout == version) {
        sql.push_str(n.create);
    }
    sql
}

/// The layout recorded in a store, `None` for a new (empty) database. Fails
/// on a file that is not an SQLite database.
pub fn recorded(conn: &Connection) -> Result<Option<String>> {
    let has_meta = conn
        .query_row(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'",
            [],
            |_| Ok(()),
        )
        .optional()?
        .is_some();
    if !has_meta {
        return Ok(None);
    }
    Ok(conn
        .query_row("SELECT value FROM meta WHERE key = 'schema'", [], |r| {
            r.get(0)
        })
        .optional()?)
}

/// Parses a recorded layout this build reads: 1 to `current`.
pub fn readable(v: &str, current: u32) -> Result<u32> {
    match v.parse::<u32>() {
        Ok(n) if (1..=current).contains(&n) && v == n.to_string() => Ok(n),
        _ => bail!(
            "a store of layout {v}; this coapcc reads layouts 1 to {} (upgraded in place) and \
             {current}",
            current - 1
        ),
    }
}

/// Brings the store to the current layout of `networks` ([`current`]):
/// creates the tables of a new store, upgrades a store of an older layout,
/// refuses any other. Returns the layout found before (`None` for a new
/// store).
pub fn prepare(conn: &mut Connection, networks: &[&NetworkTables]) -> Result<Option<u32>> {
    let current = current(networks);
    // One writer at a time decides: a second process opening the same old
    // store waits, then finds it upgraded.
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let found = match recorded(&tx)? {
        None => {
            for v in 1..=current {
                tx.execute_batch(&adds(v, networks))?;
            }
            tx.execute(
                "INSERT INTO meta (key, value) VALUES ('schema', ?1)",
                [current.to_string()],
            )?;
            None
        }
        Some(v) => {
            let found = readable(&v, current)?;
            for v in found + 1..=current {
                tx.execute_batch(&adds(v, networks))?;
                match v {
                    5 => mark_upgrade(&tx, networks)?,
                    6 => mark_cells_upgrade(&tx)?,
                    _ => {}
                }
            }
            if found != current {
                tx.execute(
                    "UPDATE meta SET value = ?1 WHERE key = 'schema'",
                    [current.to_string()],
                )?;
            }
            Some(found)
        }
    };
    tx.commit()?;
    Ok(found)
}

/// On upgrading a store of layout 4 or older: the runs already stored have
/// no digest; runs from the next row id on will.
fn mark_upgrade(conn: &Connection, networks: &[&NetworkTables]) -> Result<()> {
    // The run tables of layouts 1 to 4 (tables added later have no runs from
    // before digests).
    for t in networks
        .iter()
        .filter(|n| n.since_layout < 5)
        .map(|n| n.runs.runs)
    {
        conn.execute(
            &format!(
                "INSERT OR REPLACE INTO meta (key, value) \
                 SELECT 'digests_from:{t}', CAST(COALESCE(MAX(id), 0) + 1 AS TEXT) FROM {t}"
            ),
            [],
        )?;
    }
    Ok(())
}

/// On upgrading a store of layout 5 or older: the definitions already
/// stored have no digest of their cells.
fn mark_cells_upgrade(conn: &Connection) -> Result<()> {
    conn.execute(
        "INSERT OR IGNORE INTO cell_digests (definition, digest) \
         SELECT hash, NULL FROM definitions",
        [],
    )?;
    Ok(())
}
