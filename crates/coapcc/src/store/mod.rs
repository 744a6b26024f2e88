//! The results store of campaigns: one SQLite file (WAL journal) holding every
//! finished run under its key ([`crate::key`]) with its records, and the
//! campaign definitions with their cells. This module names no network: it
//! keeps the shared tables and takes each network's tables as the network
//! declares them ([`NetworkTables`], in the network's `store.rs`), handed
//! over when the store is opened.
//!
//! Each finished run is written in one transaction, so killing the process at
//! any moment leaves whole runs only; a run is never written twice (its key is
//! the primary key). Shared tables ([`layout`] has their layout versions):
//!
//! - `definitions`: one row per campaign definition (hash, name, file text,
//!   model version, skipped algorithms, network, when it was last run);
//! - `run_digests`: a digest of each run's stored rows ([`digest`]), so a
//!   value edited after the run was stored is not reported as measured;
//! - `cell_digests`: a digest of each definition's cells as stored, so a
//!   cell's edited parameters or labels are not reported as measured either.
//!
//! Each network has a cells table (one row per cell of a definition, with
//! its run keys), a run table (one row per finished run: key, spec,
//! replication, duration, events, packet conservation and the network's own
//! figures) and item tables (one row per client, node or station of a run).
//!
//! Opening a store for writing checks it read-only first (nothing is written
//! to a file that is not a store of a known layout) and then takes the
//! store's lock ([`lock`]): one writing process at a time.

pub mod digest;
pub mod layout;
pub mod lock;

use std::collections::HashSet;
use std::fmt::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use rusqlite::{params, Connection, OpenFlags, OptionalExtension, Transaction};
use serde::{Deserialize, Serialize};

use coapcc_sim::metrics::Conservation;

use crate::key::{canonical, MODEL_VERSION};
use digest::RunTables;
pub use layout::NetworkTables;

/// The networks' tables a store is opened with: every network's
/// [`NetworkTables`], in the registry's order.
pub type Networks = &'static [&'static NetworkTables];

/// A campaign definition as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct Definition {
    /// Its hash ([`crate::campaign::Plan::definition`]).
    pub hash: String,
    /// The campaign's name.
    pub name: String,
    /// The published work it reproduces.
    pub title: String,
    /// Its description.
    pub description: String,
    /// The file it was last run from.
    pub source: String,
    /// That file's text.
    pub text: String,
    /// The model version of its runs.
    pub model_version: String,
    /// The network its runs are on (its registry name).
    pub network: String,
    /// Algorithms skipped as unavailable.
    pub skipped: Vec<Skipped>,
    /// Runs it comprises (cells × replications).
    pub runs: u64,
    /// When it was first and last run (Unix seconds).
    pub first_seen: i64,
    /// When it was last run.
    pub last_run: i64,
}

/// An algorithm left out of a campaign because this build lacks it, as its
/// definition records.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Skipped {
    /// The algorithm's registry name.
    pub name: String,
    /// Why (the simulator's message).
    pub reason: String,
}

/// What registering a definition found.
#[derive(Clone, Debug)]
pub struct Registered {
    /// Whether the definition was new to the store.
    pub new_definition: bool,
    /// Other definitions of a campaign of the same name already in the store.
    pub other_versions: Vec<Definition>,
}

/// What every network's run row holds ([`Store::insert_run_with`]).
pub struct RunRow<'a, S> {
    /// The run's key.
    pub key: &'a str,
    /// Its spec (stored canonical).
    pub spec: &'a S,
    /// Its replication.
    pub replication: u32,
    /// Its simulated time (s).
    pub duration: f64,
    /// The events it processed.
    pub events: u64,
    /// Its packet conservation.
    pub conservation: &'a Conservation,
}

/// An open store.
pub struct Store {
    /// The connection (each network's folder reads and writes its tables).
    pub(crate) conn: Connection,
    /// Its file, for errors.
    path: PathBuf,
    /// The writer's lock (`None` when opened read-only).
    _lock: Option<lock::WriterLock>,
    /// Its layout (older than the current one only for an old store opened
    /// read-only).
    layout: u32,
    /// The networks' tables.
    networks: Networks,
    /// The layout it was upgraded from when opened, if it was.
    upgraded_from: Option<u32>,
}

/// The fields of a definition row that [`Store::register_definition`]
/// writes.
pub struct NewDefinition<'a> {
    /// Its hash.
    pub hash: &'a str,
    /// The campaign's name.
    pub name: &'a str,
    /// The published work it reproduces.
    pub title: &'a str,
    /// Its description.
    pub description: &'a str,
    /// The file it is run from.
    pub source: &'a str,
    /// That file's text.
    pub text: &'a str,
    /// Algorithms skipped as unavailable (JSON).
    pub skipped: String,
    /// Runs it comprises.
    pub runs: usize,
    /// Its network's name.
    pub network: &'static str,
    /// Its network's cells table, where the definition's cells are written.
    pub cells_table: &'static str,
}

/// Now, in Unix seconds.
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// Fails unless `PRAGMA quick_check` finds the database intact.
fn check_integrity(conn: &Connection, path: &Path) -> Result<()> {
    let not_ours = || format!("{}: not a coapcc results store", path.display());
    let mut stmt = conn.prepare("PRAGMA quick_check").with_context(not_ours)?;
    let problems: Vec<String> = stmt
        .query_map([], |r| r.get::<_, String>(0))
        .and_then(|rows| rows.collect())
        .with_context(|| format!("{}: the results store is damaged", path.display()))?;
    if problems.len() != 1 || problems[0] != "ok" {
        bail!(
            "{}: the results store is damaged (PRAGMA quick_check: {}); restore it from a copy \
             or start a new one",
            path.display(),
            problems
                .iter()
                .take(3)
                .cloned()
                .collect::<Vec<_>>()
                .join("; ")
        );
    }
    Ok(())
}

/// Refuses a database that holds tables but is not a results store: opening
/// it would add the store's tables to someone else's data.
fn refuse_foreign(conn: &Connection, path: &Path) -> Result<()> {
    if layout::recorded(conn)?.is_some() {
        return Ok(());
    }
    let mut stmt =
        conn.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")?;
    let tables: Vec<String> = stmt
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    if !tables.is_empty() {
        bail!(
            "{}: an SQLite database that is not a coapcc results store (it holds table(s) {}); \
             refusing to add the store's tables to it — give --store a new file",
            path.display(),
            tables.join(", ")
        );
    }
    Ok(())
}

/// Whether `path` exists and cannot be written: the file cannot be opened
/// for writing (permissions, an immutable file, a read-only file system) or
/// its directory takes no new file (where the WAL and the lock file go).
pub fn read_only(path: &Path) -> bool {
    if !path.exists() {
        return false;
    }
    if std::fs::OpenOptions::new().append(true).open(path).is_err() {
        return true;
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    rustix::fs::access(dir, rustix::fs::Access::WRITE_OK).is_err()
}

/// A non-negative integer column as `u64` (a negative one is an error, not
/// a huge count).
pub fn u(r: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<u64> {
    let v: i64 = r.get(i)?;
    u64::try_from(v).map_err(|_| rusqlite::Error::IntegralValueOutOfRange(i, v))
}

/// The names of a statement's columns, for [`Store::read_error`].
pub fn column_names(stmt: &rusqlite::Statement<'_>) -> Vec<String> {
    stmt.column_names().into_iter().map(String::from).collect()
}

/// `path` as an SQLite URI (`file:` and the path, percent-encoded) with `query`.
fn uri(path: &Path, query: &str) -> String {
    use std::os::unix::ffi::OsStrExt;
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut s = String::from("file:");
    for &b in abs.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            s.push(b as char);
        } else {
            let _ = write!(s, "%{b:02X}");
        }
    }
    s.push('?');
    s.push_str(query);
    s
}

/// Opens `path` read-only, writing nothing to it; returns whether it had to
/// be opened immutable (see [`Store::open_read_only`]).
fn open_reader(path: &Path) -> Result<(Connection, bool)> {
    let cannot = || format!("{}: cannot open the results store", path.display());
    let conn = Connection::open_with_flags(
        uri(path, "mode=ro"),
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI,
    )
    .with_context(cannot)?;
    conn.busy_timeout(std::time::Duration::from_secs(30))?;
    let probe = conn.query_row("SELECT count(*) FROM sqlite_master", [], |_| Ok(()));
    let Err(e) = probe else {
        return Ok((conn, false));
    };
    let cannot_open = matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::CannotOpen | rusqlite::ErrorCode::ReadOnly)
    );
    if !cannot_open {
        // not a database, damaged, …: the caller's checks say which
        return Ok((conn, false));
    }
    drop(conn);
    let mut wal = path.as_os_str().to_os_string();
    wal.push("-wal");
    if std::fs::metadata(&wal).is_ok_and(|m| m.len() > 0) {
        return Err(anyhow::Error::new(e)).with_context(|| {
            format!(
                "{}: cannot open the results store read-only: its directory is not writable \
                 and {} holds transactions not yet in the store file; copy both files to a \
                 writable directory to read them",
                path.display(),
                std::path::Path::new(&wal).display()
            )
        });
    }
    // Nothing beside it to read: the file alone is the whole store.
    let conn = Connection::open_with_flags(
        uri(path, "immutable=1"),
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI,
    )
    .with_context(cannot)?;
    Ok((conn, true))
}

impl Store {
    /// Opens (creating if needed) the store at `path` for writing, upgrading
    /// a store of layout 1 to 5 in place ([`layout`]). An existing file is
    /// first checked read-only — that it is an intact store of a layout this
    /// build reads, or an SQLite database without tables — so a file that is
    /// not one is refused before anything is written to it (not even its
    /// journal mode). Then the store's lock is taken ([`lock`]): a second
    /// writer is refused, naming the first.
    pub fn open(path: &Path, networks: Networks) -> Result<Store> {
        let current = layout::current(networks);
        let not_ours = || format!("{}: not a coapcc results store", path.display());
        if std::fs::metadata(path).is_ok_and(|m| m.len() > 0) {
            let (conn, _) = open_reader(path)?;
            check_integrity(&conn, path)?;
            refuse_foreign(&conn, path)?;
            if let Some(v) = layout::recorded(&conn).with_context(not_ours)? {
                layout::readable(&v, current).with_context(|| path.display().to_string())?;
            }
        }
        let lock = lock::WriterLock::acquire(path)?;
        let mut conn = Connection::open(path)
            .with_context(|| format!("{}: cannot open the results store", path.display()))?;
        conn.busy_timeout(std::time::Duration::from_secs(30))?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .with_context(not_ours)?;
        // In WAL mode, NORMAL loses no committed transaction when the process
        // dies; only a power failure can lose the last commits (never corrupt).
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "cache_size", -65_536)?;
        refuse_foreign(&conn, path)?;
        let found = layout::prepare(&mut conn, networks).with_context(not_ours)?;
        Ok(Store {
            conn,
            path: path.to_path_buf(),
            _lock: Some(lock),
            layout: current,
            networks,
            upgraded_from: found.filter(|&v| v != current),
        })
    }

    /// Opens an existing store without writing to it (a store of an older
    /// layout is read as it is). A store SQLite cannot open read-only in
    /// place — its directory is not writable, so the WAL index cannot be
    /// made — is opened immutable, unless a WAL file beside it holds
    /// transactions that reading it immutable would miss.
    pub fn open_read_only(path: &Path, networks: Networks) -> Result<Store> {
        if !path.exists() {
            bail!("{}: no such results store", path.display());
        }
        let (conn, _) = open_reader(path)?;
        check_integrity(&conn, path)?;
        let recorded = layout::recorded(&conn)
            .with_context(|| format!("{}: not a coapcc results store", path.display()))?;
        let Some(v) = recorded else {
            bail!("{}: not a coapcc results store", path.display());
        };
        let layout = layout::readable(&v, layout::current(networks))
            .with_context(|| path.display().to_string())?;
        Ok(Store {
            conn,
            path: path.to_path_buf(),
            _lock: None,
            layout,
            networks,
            upgraded_from: None,
        })
    }

    /// The file of the store.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// An error reading a value of `table` (`columns` are the columns of the
    /// statement that read it; `row` says which row): names the store, the
    /// table and the column, and what was wrong with the value.
    pub fn read_error(
        &self,
        table: &str,
        columns: &[String],
        row: &str,
        e: rusqlite::Error,
    ) -> anyhow::Error {
        use rusqlite::Error as E;
        let col = |i: usize| columns.get(i).map_or("?", String::as_str).to_string();
        let (column, what) = match &e {
            E::IntegralValueOutOfRange(i, v) => (
                col(*i),
                format!(
                    "integer {v} is out of range (expected a count: a non-negative integer of \
                     the field's size)"
                ),
            ),
            E::InvalidColumnType(i, _, ty) => (
                col(*i),
                format!("a value of type {ty}, not of the column's type"),
            ),
            E::FromSqlConversionFailure(i, ty, err) => (col(*i), format!("{err} (type {ty})")),
            _ => {
                return anyhow::Error::new(e).context(format!(
                    "{}: cannot read table {table} ({row})",
                    self.path.display()
                ))
            }
        };
        anyhow::anyhow!(
            "{}: table {table}, column {column} ({row}): {what}; the store was changed by \
             something other than coapcc",
            self.path.display()
        )
    }

    /// The layout the store had before [`Store::open`] upgraded it, if it did.
    pub fn upgraded_from(&self) -> Option<u32> {
        self.upgraded_from
    }

    /// The store's layout version.
    pub fn layout(&self) -> u32 {
        self.layout
    }

    /// The layout this build writes ([`layout::current`]).
    pub fn current_layout(&self) -> u32 {
        layout::current(self.networks)
    }

    /// The networks' tables it was opened with.
    pub fn networks(&self) -> Networks {
        self.networks
    }

    /// Inserts a definition row, or marks an existing one as run now; either
    /// way it becomes the most recently run. Returns whether it existed.
    fn upsert_definition(tx: &Transaction<'_>, d: &NewDefinition<'_>) -> Result<bool> {
        let seq: i64 = tx.query_row(
            "SELECT COALESCE(MAX(seq), 0) + 1 FROM definitions",
            [],
            |r| r.get(0),
        )?;
        let t = now();
        let exists: bool = tx
            .query_row(
                "SELECT 1 FROM definitions WHERE hash = ?1",
                [d.hash],
                |_| Ok(()),
            )
            .optional()?
            .is_some();
        if exists {
            tx.execute(
                "UPDATE definitions SET last_run = ?2, seq = ?3, source = ?4, text = ?5 WHERE hash = ?1",
                params![d.hash, t, seq, d.source, d.text],
            )?;
        } else {
            tx.execute(
                "INSERT INTO definitions (hash, name, title, description, source, text, \
                 model_version, skipped, runs, first_seen, last_run, seq, network) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?10, ?11, ?12)",
                params![
                    d.hash,
                    d.name,
                    d.title,
                    d.description,
                    d.source,
                    d.text,
                    MODEL_VERSION,
                    d.skipped,
                    d.runs as i64,
                    t,
                    seq,
                    d.network
                ],
            )?;
        }
        Ok(exists)
    }

    /// The definitions of other hashes with the same campaign name.
    fn other_versions(&self, name: &str, hash: &str) -> Result<Vec<Definition>> {
        Ok(self
            .definitions()?
            .into_iter()
            .filter(|d| d.name == name && d.hash != hash)
            .collect())
    }

    /// Fails unless SQLite's integrity check passes.
    pub fn integrity_check(&self) -> Result<()> {
        let ok: String = self
            .conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))?;
        if ok != "ok" {
            bail!("integrity check: {ok}");
        }
        Ok(())
    }

    /// The definitions table for [`crate::networks::dump`].
    pub fn dump_definitions(&self, out: &mut String) -> Result<()> {
        let mut stmt = self.conn.prepare(
            "SELECT hash, name, model_version, skipped, runs FROM definitions ORDER BY hash",
        )?;
        let _ = writeln!(out, "[definitions]");
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            for i in 0..5 {
                let v: rusqlite::types::Value = r.get(i)?;
                let _ = write!(out, "{v:?}\t");
            }
            out.push('\n');
        }
        Ok(())
    }

    /// Records a campaign's definition `d` (once, with its cells, which
    /// `insert_cells` writes in the same transaction), and marks it as the
    /// most recently run definition.
    pub fn register_definition(
        &mut self,
        d: &NewDefinition<'_>,
        insert_cells: impl FnOnce(&Transaction<'_>) -> Result<()>,
    ) -> Result<Registered> {
        let others = self.other_versions(d.name, d.hash)?;
        let tx = self.conn.transaction()?;
        let exists = Self::upsert_definition(&tx, d)?;
        if !exists {
            insert_cells(&tx)?;
            digest::record_cells(&tx, d.cells_table, d.hash)?;
        }
        tx.commit()?;
        Ok(Registered {
            new_definition: !exists,
            other_versions: others,
        })
    }

    /// Checks that every run of table `runs` has as many rows in table
    /// `items` as `want` says of its spec; `what` (`run`, `grid run`) and
    /// `item` (`client`, `node`) name them in errors. Calls `also` with each
    /// run's key.
    pub fn check_item_rows<S: serde::de::DeserializeOwned>(
        &self,
        (runs, items): (&str, &str),
        (what, item): (&str, &str),
        want: impl Fn(&S) -> i64,
        mut also: impl FnMut(&str) -> Result<()>,
    ) -> Result<()> {
        let mut stmt = self.conn.prepare(&format!(
            "SELECT r.key, r.spec, (SELECT COUNT(*) FROM {items} i WHERE i.run = r.id) \
             FROM {runs} r"
        ))?;
        let rows = stmt
            .query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, i64>(2)?,
                ))
            })?
            .collect::<Result<Vec<_>, _>>()?;
        for (key, spec, n) in rows {
            let spec: S = serde_json::from_str(&spec)
                .with_context(|| format!("{what} {key}: unreadable spec"))?;
            let want = want(&spec);
            if n != want {
                bail!("{what} {key}: {n} {item} rows, expected {want}");
            }
            also(&key)?;
        }
        Ok(())
    }

    /// Writes one finished run in one transaction: its row in the run table
    /// of `tables` — the columns every network shares (key, model version,
    /// canonical spec, replication, duration, events, packet conservation)
    /// and the network's own `columns` (comma-separated) with their `values`
    /// — unless its key is there already (then nothing is written); for a
    /// new run, `rows` writes the item rows under its id, and its digest is
    /// recorded.
    pub fn insert_run_with(
        &mut self,
        tables: &RunTables,
        run: &RunRow<'_, impl Serialize>,
        (columns, values): (&str, &[&dyn rusqlite::ToSql]),
        rows: impl FnOnce(&Transaction<'_>, i64) -> Result<()>,
    ) -> Result<()> {
        let c = run.conservation;
        let shared: [&dyn rusqlite::ToSql; 10] = [
            &run.key,
            &MODEL_VERSION,
            &canonical(run.spec),
            &run.replication,
            &run.duration,
            &(run.events as i64),
            &(c.sent as i64),
            &(c.delivered as i64),
            &(c.dropped as i64),
            &(c.in_flight as i64),
        ];
        let marks: Vec<String> = (1..=shared.len() + values.len())
            .map(|i| format!("?{i}"))
            .collect();
        let sql = format!(
            "INSERT OR IGNORE INTO {} (key, model_version, spec, replication, duration, events, \
             sent, delivered, dropped, in_flight, {columns}) VALUES ({})",
            tables.runs,
            marks.join(", ")
        );
        let tx = self.conn.transaction()?;
        let inserted = tx.execute(
            &sql,
            rusqlite::params_from_iter(shared.iter().chain(values)),
        )?;
        if inserted == 1 {
            let id = tx.last_insert_rowid();
            rows(&tx, id)?;
            digest::record(&tx, tables, run.key, id)?;
        }
        tx.commit()?;
        Ok(())
    }

    /// The row `sql` selects with `param` as `?1`, read by `read`, if there is
    /// one; a value that does not read is reported as in `table`, row `what`.
    pub fn read_row<T>(
        &self,
        sql: &str,
        param: impl rusqlite::ToSql,
        table: &str,
        what: &str,
        read: impl FnOnce(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
    ) -> Result<Option<T>> {
        let mut stmt = self.conn.prepare_cached(sql)?;
        let columns = column_names(&stmt);
        stmt.query_row([param], read)
            .optional()
            .map_err(|e| self.read_error(table, &columns, what, e))
    }

    /// Every row `sql` selects with `param` as `?1`, each read by `read`; a
    /// value that does not read is reported as in `table`, row `what`.
    pub fn read_rows<T>(
        &self,
        sql: &str,
        param: impl rusqlite::ToSql,
        table: &str,
        what: &str,
        read: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
    ) -> Result<Vec<T>> {
        let mut stmt = self.conn.prepare_cached(sql)?;
        let columns = column_names(&stmt);
        stmt.query_map([param], read)
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(|e| self.read_error(table, &columns, what, e))
    }

    /// Fails unless this store's layout is at least `since`, the first that
    /// holds `what` runs.
    pub fn require_layout(&self, since: u32, what: &str) -> Result<()> {
        if self.layout < since {
            bail!(
                "this store has layout {}, which holds no {what} runs; open it for writing \
                 (`coapcc campaign`) to upgrade it",
                self.layout
            );
        }
        Ok(())
    }

    /// The cells of `definition` in `table` (a JSON `cell` column), in
    /// campaign order; `what` names them in errors.
    pub fn cells_in<T: serde::de::DeserializeOwned>(
        &self,
        table: &str,
        definition: &str,
        what: &str,
    ) -> Result<Vec<T>> {
        let mut stmt = self.conn.prepare(&format!(
            "SELECT cell FROM {table} WHERE definition = ?1 ORDER BY idx"
        ))?;
        let texts = stmt
            .query_map([definition], |r| r.get::<_, String>(0))?
            .collect::<Result<Vec<_>, _>>()?;
        texts
            .iter()
            .map(|t| serde_json::from_str(t).with_context(|| format!("unreadable {what} cell")))
            .collect()
    }

    /// The `key` of every row of `table`; none in a store older than layout
    /// `since`, which lacks the table.
    pub fn keys_in(&self, table: &str, since: u32) -> Result<HashSet<String>> {
        if self.layout < since {
            return Ok(HashSet::new());
        }
        let mut stmt = self.conn.prepare(&format!("SELECT key FROM {table}"))?;
        let keys = stmt
            .query_map([], |r| r.get::<_, String>(0))?
            .collect::<Result<_, _>>()?;
        Ok(keys)
    }

    /// The rows of `table`; 0 in a store older than layout `since`.
    pub fn rows_in(&self, table: &str, since: u32) -> Result<u64> {
        if self.layout < since {
            return Ok(0);
        }
        Ok(self
            .conn
            .query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| {
                r.get::<_, i64>(0)
            })? as u64)
    }

    /// Every definition, most recently run first.
    pub fn definitions(&self) -> Result<Vec<Definition>> {
        // Layout 1 knew one network only.
        let first = format!("'{}'", layout::first_network(self.networks));
        let network = if self.layout >= 2 { "network" } else { &first };
        let mut stmt = self.conn.prepare(&format!(
            "SELECT hash, name, title, description, source, text, model_version, skipped, runs, \
             first_seen, last_run, {network} FROM definitions ORDER BY seq DESC"
        ))?;
        let columns = column_names(&stmt);
        let rows = stmt
            .query_map([], |r| {
                Ok((
                    Definition {
                        hash: r.get(0)?,
                        name: r.get(1)?,
                        title: r.get(2)?,
                        description: r.get(3)?,
                        source: r.get(4)?,
                        text: r.get(5)?,
                        model_version: r.get(6)?,
                        network: r.get(11)?,
                        skipped: Vec::new(),
                        runs: u(r, 8)?,
                        first_seen: r.get(9)?,
                        last_run: r.get(10)?,
                    },
                    r.get::<_, String>(7)?,
                ))
            })
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(|e| self.read_error("definitions", &columns, "a definition", e))?;
        rows.into_iter()
            .map(|(mut d, skipped)| {
                d.skipped = serde_json::from_str(&skipped).with_context(|| {
                    format!(
                        "{}: table definitions, column skipped (definition {}): expected a JSON \
                         list of skipped algorithms",
                        self.path.display(),
                        d.hash
                    )
                })?;
                Ok(d)
            })
            .collect()
    }

    /// Prints the rows of each `(table, query)` under `[table]`, every value in
    /// full, leaving out row ids (columns `id` and `run`): they depend on the
    /// order in which runs finished; queries print run keys instead.
    pub fn dump_queries(&self, out: &mut String, queries: &[(&str, &str)]) -> Result<()> {
        for (table, query) in queries {
            let _ = writeln!(out, "[{table}]");
            let mut stmt = self.conn.prepare(query)?;
            let n = stmt.column_count();
            let skip: Vec<bool> = stmt
                .column_names()
                .iter()
                .map(|c| *c == "id" || *c == "run")
                .collect();
            let mut rows = stmt.query([])?;
            while let Some(r) = rows.next()? {
                for i in (0..n).filter(|&i| !skip[i]) {
                    let v: rusqlite::types::Value = r.get(i)?;
                    let _ = write!(out, "{v:?}\t");
                }
                out.push('\n');
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn foreign_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.sqlite");
        assert!(Store::open_read_only(&path, &[]).is_err());
        std::fs::write(&path, "not a database at all, just some text ......").unwrap();
        assert!(Store::open(&path, &[]).is_err());
    }
}
