//! The results store of campaigns: one SQLite file (WAL journal) holding every
//! finished run under its key ([`crate::campaign::key`]), its per-client records
//! (spec `testbed.md` §3) and per-group summary, the grid runs with their
//! per-node records and traces (spec `testbed.md` §3–4), and the campaign
//! definitions with their cells.
//!
//! Each finished run is written in one transaction, so killing the process at
//! any moment leaves whole runs only; a run is never written twice (its key is
//! the primary key). Tables ([`layout`] has their layout versions):
//!
//! - `definitions`: one row per campaign definition (hash, name, file text,
//!   model version, skipped algorithms, network, when it was last run);
//! - `cells`: the cells of each dumbbell definition with their run keys (JSON);
//! - `runs`: one row per finished dumbbell run: key, spec, replication, link
//!   and conservation figures, retransmissions histograms, per-group summaries
//!   (JSON);
//! - `clients`: one row per client of each dumbbell run;
//! - `grid_cells`, `grid_runs`, `grid_nodes`, `grid_traces`: the same for grid
//!   campaigns ([`grid`]): one row per node of each run, one per traced event;
//! - `star_cells`, `star_runs`, `star_stations`: the same for star campaigns
//!   ([`star`]): one row per station of each run, its sampled TCP state as a
//!   compact BLOB ([`trace_codec`]);
//! - `run_digests`: a digest of each run's stored rows ([`digest`]), so a
//!   value edited after the run was stored is not reported as measured.
//!
//! Opening a store for writing checks it read-only first (nothing is written
//! to a file that is not a store of a known layout) and then takes the
//! store's lock ([`lock`]): one writing process at a time.

pub mod digest;
pub mod grid;
pub mod kernel_check;
pub mod layout;
pub mod lock;
pub mod star;
pub mod trace_codec;

use std::collections::HashSet;
use std::fmt::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use coapcc_sim::dumbbell::RunSpec;
use coapcc_sim::metrics::{ClientRecord, Conservation, LinkRecord};
use coapcc_sim::{RunResult, Summary};
use rusqlite::{params, Connection, OpenFlags, OptionalExtension, Transaction};

use crate::campaign::key::MODEL_VERSION;
use crate::campaign::plan::{Cell, Plan, Skipped};
use crate::scenario_file::NetworkKind;

/// The layout version of the tables this build writes; a store of layout 1 to
/// 4 is upgraded in place, a store of any other layout is refused.
pub const SCHEMA_VERSION: &str = "5";

/// A campaign definition as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct Definition {
    /// Its hash ([`Plan::definition`]).
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
    /// The network its runs are on.
    pub network: NetworkKind,
    /// Algorithms skipped as unavailable.
    pub skipped: Vec<Skipped>,
    /// Runs it comprises (cells × replications).
    pub runs: u64,
    /// When it was first and last run (Unix seconds).
    pub first_seen: i64,
    /// When it was last run.
    pub last_run: i64,
}

/// What [`Store::register`] found.
#[derive(Clone, Debug)]
pub struct Registered {
    /// Whether the definition was new to the store.
    pub new_definition: bool,
    /// Other definitions of a campaign of the same name already in the store.
    pub other_versions: Vec<Definition>,
}

/// An open store.
pub struct Store {
    conn: Connection,
    /// Its file, for errors.
    path: PathBuf,
    /// The writer's lock (`None` when opened read-only).
    _lock: Option<lock::WriterLock>,
    /// Its layout (1 only for an old store opened read-only).
    layout: u32,
    /// The layout it was upgraded from when opened, if it was.
    upgraded_from: Option<u32>,
}

/// The text of a network kind in the `definitions` table.
fn network_name(n: NetworkKind) -> &'static str {
    match n {
        NetworkKind::Dumbbell => "dumbbell",
        NetworkKind::Grid => "grid",
        NetworkKind::Star => "star",
    }
}

/// The fields of a definition row that [`Store::upsert_definition`] writes.
struct NewDefinition<'a> {
    hash: &'a str,
    name: &'a str,
    title: &'a str,
    description: &'a str,
    source: &'a str,
    text: &'a str,
    skipped: String,
    runs: usize,
    network: NetworkKind,
}

fn now() -> i64 {
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
pub(crate) fn u(r: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<u64> {
    let v: i64 = r.get(i)?;
    u64::try_from(v).map_err(|_| rusqlite::Error::IntegralValueOutOfRange(i, v))
}

/// The names of a statement's columns, for [`Store::read_error`].
pub(crate) fn column_names(stmt: &rusqlite::Statement<'_>) -> Vec<String> {
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
    /// a store of layout 1 to 4 in place ([`layout`]). An existing file is
    /// first checked read-only — that it is an intact store of a layout this
    /// build reads, or an SQLite database without tables — so a file that is
    /// not one is refused before anything is written to it (not even its
    /// journal mode). Then the store's lock is taken ([`lock`]): a second
    /// writer is refused, naming the first.
    pub fn open(path: &Path) -> Result<Store> {
        let not_ours = || format!("{}: not a coapcc results store", path.display());
        if std::fs::metadata(path).is_ok_and(|m| m.len() > 0) {
            let (conn, _) = open_reader(path)?;
            check_integrity(&conn, path)?;
            refuse_foreign(&conn, path)?;
            if let Some(v) = layout::recorded(&conn).with_context(not_ours)? {
                layout::readable(&v).with_context(|| path.display().to_string())?;
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
        let found = layout::prepare(&mut conn).with_context(not_ours)?;
        Ok(Store {
            conn,
            path: path.to_path_buf(),
            _lock: Some(lock),
            layout: layout::CURRENT,
            upgraded_from: found.filter(|&v| v != layout::CURRENT),
        })
    }

    /// Opens an existing store without writing to it (a store of an older
    /// layout is read as it is). A store SQLite cannot open read-only in
    /// place — its directory is not writable, so the WAL index cannot be
    /// made — is opened immutable, unless a WAL file beside it holds
    /// transactions that reading it immutable would miss.
    pub fn open_read_only(path: &Path) -> Result<Store> {
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
        let layout = layout::readable(&v).with_context(|| path.display().to_string())?;
        Ok(Store {
            conn,
            path: path.to_path_buf(),
            _lock: None,
            layout,
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
    pub(crate) fn read_error(
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
                    network_name(d.network)
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

    /// Records `plan`'s definition and cells (once), and marks it as the most
    /// recently run definition.
    pub fn register(&mut self, plan: &Plan) -> Result<Registered> {
        let others = self.other_versions(&plan.file.name, &plan.definition)?;
        let tx = self.conn.transaction()?;
        let exists = Self::upsert_definition(
            &tx,
            &NewDefinition {
                hash: &plan.definition,
                name: &plan.file.name,
                title: &plan.file.title,
                description: &plan.file.description,
                source: &plan.source,
                text: &plan.text,
                skipped: serde_json::to_string(&plan.skipped)?,
                runs: plan.runs(),
                network: NetworkKind::Dumbbell,
            },
        )?;
        if !exists {
            let mut stmt = tx.prepare(
                "INSERT INTO cells (definition, idx, set_name, clients, buffer, workload, \
                 errors, population, cell) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            )?;
            for (i, c) in plan.cells.iter().enumerate() {
                stmt.execute(params![
                    plan.definition,
                    i as i64,
                    c.set,
                    c.clients,
                    c.buffer.label(),
                    c.workload.name(),
                    c.errors.name(),
                    c.population,
                    serde_json::to_string(c)?
                ])?;
            }
        }
        tx.commit()?;
        Ok(Registered {
            new_definition: !exists,
            other_versions: others,
        })
    }

    /// Keys of every finished run.
    pub fn done_keys(&self) -> Result<HashSet<String>> {
        self.keys_in("runs", 1)
    }

    /// Finished runs.
    pub fn run_count(&self) -> Result<u64> {
        self.rows_in("runs", 1)
    }

    /// Fails unless this store's layout is at least `since`, the first that
    /// holds `what` runs.
    fn require_layout(&self, since: u32, what: &str) -> Result<()> {
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
    fn cells_in<T: serde::de::DeserializeOwned>(
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
    fn keys_in(&self, table: &str, since: u32) -> Result<HashSet<String>> {
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
    fn rows_in(&self, table: &str, since: u32) -> Result<u64> {
        if self.layout < since {
            return Ok(0);
        }
        Ok(self
            .conn
            .query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| {
                r.get::<_, i64>(0)
            })? as u64)
    }

    /// Writes one finished run, its clients and its per-group summaries in one
    /// transaction. A key already present is left as it is.
    pub fn insert_run(
        &mut self,
        key: &str,
        spec: &RunSpec,
        replication: u32,
        result: &RunResult,
    ) -> Result<()> {
        let summaries: Vec<Summary> = spec
            .groups
            .iter()
            .enumerate()
            .map(|(g, grp)| {
                Summary::of(
                    grp.algorithm.label(),
                    g as u32,
                    std::slice::from_ref(result),
                )
            })
            .collect();
        let tx = self.conn.transaction()?;
        let (u, d, c) = (&result.uplink, &result.downlink, &result.conservation);
        let inserted = tx.execute(
            "INSERT OR IGNORE INTO runs (key, model_version, spec, replication, duration, events, \
             up_packets, up_bytes, up_busy, up_unnecessary_bytes, up_dropped_buffer, \
             up_dropped_error, down_packets, down_bytes, down_busy, down_unnecessary_bytes, \
             down_dropped_buffer, down_dropped_error, sent, delivered, dropped, in_flight, \
             histograms, summaries) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, \
             ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24)",
            params![
                key,
                MODEL_VERSION,
                crate::campaign::key::canonical(spec),
                replication,
                result.duration,
                result.events as i64,
                u.packets as i64,
                u.bytes as i64,
                u.busy,
                u.unnecessary_bytes as i64,
                u.dropped_buffer as i64,
                u.dropped_error as i64,
                d.packets as i64,
                d.bytes as i64,
                d.busy,
                d.unnecessary_bytes as i64,
                d.dropped_buffer as i64,
                d.dropped_error as i64,
                c.sent as i64,
                c.delivered as i64,
                c.dropped as i64,
                c.in_flight as i64,
                serde_json::to_string(&result.histograms)?,
                serde_json::to_string(&summaries)?,
            ],
        )?;
        if inserted == 1 {
            let id = tx.last_insert_rowid();
            let mut stmt = tx.prepare_cached(
                "INSERT INTO clients VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
            )?;
            for (i, cl) in result.clients.iter().enumerate() {
                stmt.execute(params![
                    id,
                    i as i64,
                    cl.group,
                    cl.fct,
                    cl.completed,
                    cl.failed,
                    cl.unnecessary,
                    cl.retransmissions,
                    cl.expirations,
                    cl.max_expired_timer,
                    cl.rtt_sum,
                    cl.spurious_detected,
                    cl.tcp.as_ref().map(serde_json::to_string).transpose()?
                ])?;
            }
            drop(stmt);
            digest::record(&tx, digest::tables(NetworkKind::Dumbbell), key, id)?;
        }
        tx.commit()?;
        Ok(())
    }

    /// Checks that the store is whole: SQLite's integrity check passes, every
    /// stored run has one client row per client of its spec, every grid run
    /// one node row per node, and every star run one station row per station
    /// with a readable trace.
    pub fn verify(&self) -> Result<()> {
        let ok: String = self
            .conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))?;
        if ok != "ok" {
            bail!("integrity check: {ok}");
        }
        let mut stmt = self.conn.prepare(
            "SELECT r.key, r.spec, (SELECT COUNT(*) FROM clients c WHERE c.run = r.id) FROM runs r",
        )?;
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
            let spec: RunSpec = serde_json::from_str(&spec)
                .with_context(|| format!("run {key}: unreadable spec"))?;
            let want: i64 = spec.groups.iter().map(|g| i64::from(g.clients)).sum();
            if n != want {
                bail!("run {key}: {n} client rows, expected {want}");
            }
        }
        if self.layout >= 2 {
            self.verify_grid()?;
        }
        if self.layout >= 3 {
            self.verify_star()?;
        }
        for n in [NetworkKind::Dumbbell, NetworkKind::Grid, NetworkKind::Star] {
            let check = self.check_all_digests(n)?;
            if let Some(key) = check.altered.first() {
                bail!(
                    "{} run {key}: its rows in table {} do not match the digest stored with \
                     them ({} run(s) so)",
                    network_name(n),
                    digest::tables(n).runs,
                    check.altered.len()
                );
            }
        }
        Ok(())
    }

    /// The stored result of a run, if finished.
    pub fn load_run(&self, key: &str) -> Result<Option<RunResult>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT duration, events, up_packets, up_bytes, up_busy, up_unnecessary_bytes, \
             up_dropped_buffer, up_dropped_error, down_packets, down_bytes, down_busy, \
             down_unnecessary_bytes, down_dropped_buffer, down_dropped_error, sent, delivered, \
             dropped, in_flight, histograms, id FROM runs WHERE key = ?1",
        )?;
        let columns = column_names(&stmt);
        let row = stmt
            .query_row([key], |r| {
                let link = |o: usize| -> rusqlite::Result<LinkRecord> {
                    Ok(LinkRecord {
                        packets: u(r, o)?,
                        bytes: u(r, o + 1)?,
                        busy: r.get(o + 2)?,
                        unnecessary_bytes: u(r, o + 3)?,
                        dropped_buffer: u(r, o + 4)?,
                        dropped_error: u(r, o + 5)?,
                    })
                };
                Ok((
                    RunResult {
                        clients: Vec::new(),
                        histograms: Vec::new(),
                        uplink: link(2)?,
                        downlink: link(8)?,
                        duration: r.get(0)?,
                        events: u(r, 1)?,
                        conservation: Conservation {
                            sent: u(r, 14)?,
                            delivered: u(r, 15)?,
                            dropped: u(r, 16)?,
                            in_flight: u(r, 17)?,
                        },
                    },
                    r.get::<_, String>(18)?,
                    r.get::<_, i64>(19)?,
                ))
            })
            .optional()
            .map_err(|e| self.read_error("runs", &columns, &format!("run {key}"), e))?;
        let Some((mut run, histograms, id)) = row else {
            return Ok(None);
        };
        run.histograms = serde_json::from_str(&histograms)
            .with_context(|| format!("run {key}: unreadable histograms"))?;
        let mut stmt = self.conn.prepare_cached(
            "SELECT grp, fct, completed, failed, unnecessary, retransmissions, expirations, \
             max_expired_timer, rtt_sum, spurious_detected, tcp FROM clients WHERE run = ?1 \
             ORDER BY idx",
        )?;
        let columns = column_names(&stmt);
        run.clients = stmt
            .query_map([id], |r| {
                Ok((
                    ClientRecord {
                        group: r.get(0)?,
                        fct: r.get(1)?,
                        completed: r.get(2)?,
                        failed: r.get(3)?,
                        unnecessary: r.get(4)?,
                        retransmissions: r.get(5)?,
                        expirations: r.get(6)?,
                        max_expired_timer: r.get(7)?,
                        rtt_sum: r.get(8)?,
                        spurious_detected: r.get(9)?,
                        // Not a column of the store: the simulated servers
                        // always echo the request's token, so it is 0 in
                        // every run a campaign computes.
                        mismatched_responses: 0,
                        tcp: None,
                    },
                    r.get::<_, Option<String>>(10)?,
                ))
            })
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(|e| self.read_error("clients", &columns, &format!("run {key}"), e))?
            .into_iter()
            .map(|(mut c, tcp)| {
                if let Some(t) = tcp {
                    c.tcp = Some(serde_json::from_str(&t)?);
                }
                Ok(c)
            })
            .collect::<Result<_, serde_json::Error>>()
            .with_context(|| format!("run {key}: unreadable TCP counters"))?;
        Ok(Some(run))
    }

    /// Every definition, most recently run first.
    pub fn definitions(&self) -> Result<Vec<Definition>> {
        // Layout 1 knew the dumbbell only.
        let network = if self.layout >= 2 {
            "network"
        } else {
            "'dumbbell'"
        };
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
                        network: match r.get::<_, String>(11)?.as_str() {
                            "grid" => NetworkKind::Grid,
                            "star" => NetworkKind::Star,
                            _ => NetworkKind::Dumbbell,
                        },
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

    /// The cells of a definition, in campaign order.
    pub fn cells(&self, definition: &str) -> Result<Vec<Cell>> {
        let mut stmt = self
            .conn
            .prepare("SELECT cell FROM cells WHERE definition = ?1 ORDER BY idx")?;
        let texts = stmt
            .query_map([definition], |r| r.get::<_, String>(0))?
            .collect::<Result<Vec<_>, _>>()?;
        texts
            .iter()
            .map(|t| serde_json::from_str(t).context("unreadable cell"))
            .collect()
    }

    /// Prints the rows of each `(table, query)` under `[table]`, every value in
    /// full, leaving out row ids (columns `id` and `run`): they depend on the
    /// order in which runs finished; queries print run keys instead.
    fn dump_queries(&self, out: &mut String, queries: &[(&str, &str)]) -> Result<()> {
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

    /// A canonical text of every result and cell in the store (not the times at
    /// which definitions were run), for comparing two stores exactly: every
    /// value is printed in full (floats by their shortest exact form).
    pub fn dump(&self) -> Result<String> {
        let mut out = String::new();
        self.dump_queries(
            &mut out,
            &[
                ("cells", "SELECT * FROM cells ORDER BY definition, idx"),
                ("runs", "SELECT * FROM runs ORDER BY key"),
                (
                    "clients",
                    "SELECT r.key, c.* FROM clients c JOIN runs r ON r.id = c.run ORDER BY r.key, c.idx",
                ),
            ],
        )?;
        if self.layout >= 2 {
            self.dump_grid(&mut out)?;
        }
        if self.layout >= 3 {
            self.dump_star(&mut out)?;
        }
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
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coapcc_sim::dumbbell::{Group, Network};
    use coapcc_sim::{AlgorithmSpec, Workload};

    fn spec() -> RunSpec {
        RunSpec {
            network: Network::default(),
            coap: Default::default(),
            groups: vec![
                Group {
                    algorithm: AlgorithmSpec::named("a"),
                    workload: Workload::default(),
                    clients: 1,
                },
                Group {
                    algorithm: AlgorithmSpec::named("b"),
                    workload: Workload::default(),
                    clients: 1,
                },
            ],
            seed: 3,
        }
    }

    fn result() -> RunResult {
        RunResult {
            clients: vec![
                ClientRecord {
                    group: 0,
                    fct: Some(33.003_000_000_000_1),
                    completed: 50,
                    unnecessary: 3,
                    rtt_sum: 0.1 + 0.2,
                    max_expired_timer: 2.5 + 1e-12,
                    ..Default::default()
                },
                ClientRecord {
                    group: 1,
                    fct: None,
                    failed: 2,
                    spurious_detected: 1,
                    tcp: Some(coapcc_sim::tcp_metrics::TcpRecord {
                        connections: 7,
                        unnecessary_syn: 2,
                        ..Default::default()
                    }),
                    ..Default::default()
                },
            ],
            histograms: vec![vec![49, 1], vec![40, 5, 3]],
            uplink: LinkRecord {
                packets: 10,
                bytes: 380,
                busy: 1.0 / 3.0,
                unnecessary_bytes: 38,
                dropped_buffer: 1,
                dropped_error: 2,
            },
            downlink: LinkRecord {
                packets: 9,
                busy: 7.0 / 9.0,
                ..Default::default()
            },
            duration: 123.456_789,
            events: 1234,
            conservation: Conservation {
                sent: 19,
                delivered: 16,
                dropped: 3,
                in_flight: 0,
            },
        }
    }

    #[test]
    fn a_run_round_trips_exactly_and_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sqlite");
        let mut store = Store::open(&path).unwrap();
        assert!(store.load_run("k").unwrap().is_none());
        store.insert_run("k", &spec(), 0, &result()).unwrap();
        store.insert_run("k", &spec(), 0, &result()).unwrap();
        assert_eq!(store.run_count().unwrap(), 1);
        assert_eq!(store.load_run("k").unwrap().unwrap(), result());
        assert_eq!(store.done_keys().unwrap(), HashSet::from(["k".to_string()]));
        drop(store);
        let ro = Store::open_read_only(&path).unwrap();
        assert_eq!(ro.load_run("k").unwrap().unwrap(), result());
        let summaries: String = ro
            .conn
            .query_row("SELECT summaries FROM runs", [], |r| r.get(0))
            .unwrap();
        let s: Vec<Summary> = serde_json::from_str(&summaries).unwrap();
        assert_eq!((s[0].label.as_str(), s[0].clients), ("a", 1));
        assert_eq!((s[1].label.as_str(), s[1].unfinished_clients), ("b", 1));
        assert!(ro.dump().unwrap().contains("33.0030000000001"));
        ro.verify().unwrap();
    }

    #[test]
    fn summaries_written_before_the_rename_still_read() {
        // Stores written before the key was named for what it counts keep
        // the per-group retransmission counts under "histogram".
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sqlite");
        let mut store = Store::open(&path).unwrap();
        store.insert_run("k", &spec(), 0, &result()).unwrap();
        let new: String = store
            .conn
            .query_row("SELECT summaries FROM runs", [], |r| r.get(0))
            .unwrap();
        assert!(
            new.contains("\"retransmissions_per_exchange\":[49,1]"),
            "{new}"
        );
        assert!(!new.contains("\"histogram\""));
        let old = new.replace("\"retransmissions_per_exchange\"", "\"histogram\"");
        store
            .conn
            .execute("UPDATE runs SET summaries = ?1", [&old])
            .unwrap();
        // as such a store holds it: its digest is of the old text
        let id: i64 = store
            .conn
            .query_row("SELECT id FROM runs", [], |r| r.get(0))
            .unwrap();
        digest::record(&store.conn, digest::tables(NetworkKind::Dumbbell), "k", id).unwrap();
        drop(store);
        let ro = Store::open_read_only(&path).unwrap();
        let read: String = ro
            .conn
            .query_row("SELECT summaries FROM runs", [], |r| r.get(0))
            .unwrap();
        assert_eq!(read, old);
        let s: Vec<Summary> = serde_json::from_str(&read).unwrap();
        let n: Vec<Summary> = serde_json::from_str(&new).unwrap();
        assert_eq!(s, n);
        assert_eq!(s[0].retransmissions_per_exchange, vec![49, 1]);
        assert_eq!(s[1].retransmissions_per_exchange, vec![40, 5, 3]);
        ro.verify().unwrap();
    }

    #[test]
    fn foreign_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.sqlite");
        assert!(Store::open_read_only(&path).is_err());
        std::fs::write(&path, "not a database at all, just some text ......").unwrap();
        assert!(Store::open(&path).is_err());
    }
}
