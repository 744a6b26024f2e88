//! The store's tables and their layout versions.
//!
//! - Layout 1: `meta`, `definitions`, `cells`, `runs`, `clients` (dumbbell
//!   campaigns only).
//! - Layout 2: layout 1, `definitions.network` (`dumbbell` or `grid`), and the
//!   grid tables `grid_cells`, `grid_runs`, `grid_nodes`, `grid_traces`.
//! - Layout 3: layout 2 and the star tables `star_cells`, `star_runs`,
//!   `star_stations`, `star_traces` (`definitions.network` may be `star`).
//! - Layout 4: layout 3 and the kernel cross-check's `kernel_check_runs`
//!   ([`crate::kernel_check`]).
//! - Layout 5: layout 4 and `run_digests`, a digest of every run's stored
//!   rows ([`super::digest`]); `meta` rows `digests_from:<run table>` in a
//!   store upgraded from an older layout (its older runs have no digest).
//! - Layout 6: layout 5 and `cell_digests`, a digest of every definition's
//!   cells as stored ([`super::digest`]); a definition stored before (in a
//!   store upgraded from an older layout) has a row without a digest.
//!
//! A store of layout 1 to 5 is upgraded in place when opened for writing
//! (one transaction: the column and the tables it lacks are added, no row
//! changes; a layout-1 store's definitions are dumbbell ones) and read as it
//! is when opened read-only. A store of any other layout is refused before
//! anything is written to it.

use anyhow::{bail, Result};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior};

/// What layout 4 adds to layout 3.
const LAYOUT_4_ADDS: &str = "
CREATE TABLE kernel_check_runs (
    key TEXT PRIMARY KEY, point TEXT NOT NULL, label TEXT NOT NULL,
    kernel TEXT, sysctl TEXT, model_version TEXT, replication INTEGER NOT NULL,
    record TEXT NOT NULL, raw TEXT NOT NULL, created INTEGER NOT NULL) WITHOUT ROWID;
";

/// The layout this build writes.
pub const CURRENT: u32 = 6;

/// The tables of layout 1, exactly as layout-1 builds created them.
pub const LAYOUT_1: &str = "
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS definitions (
    hash TEXT PRIMARY KEY, name TEXT NOT NULL, title TEXT NOT NULL,
    description TEXT NOT NULL, source TEXT NOT NULL, text TEXT NOT NULL,
    model_version TEXT NOT NULL, skipped TEXT NOT NULL, runs INTEGER NOT NULL,
    first_seen INTEGER NOT NULL, last_run INTEGER NOT NULL, seq INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS cells (
    definition TEXT NOT NULL, idx INTEGER NOT NULL, set_name TEXT NOT NULL,
    clients INTEGER NOT NULL, buffer TEXT NOT NULL, workload TEXT NOT NULL,
    errors TEXT NOT NULL, population TEXT NOT NULL, cell TEXT NOT NULL,
    PRIMARY KEY (definition, idx)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, model_version TEXT NOT NULL, spec TEXT NOT NULL,
    replication INTEGER NOT NULL, duration REAL NOT NULL, events INTEGER NOT NULL,
    up_packets INTEGER NOT NULL, up_bytes INTEGER NOT NULL, up_busy REAL NOT NULL,
    up_unnecessary_bytes INTEGER NOT NULL, up_dropped_buffer INTEGER NOT NULL,
    up_dropped_error INTEGER NOT NULL,
    down_packets INTEGER NOT NULL, down_bytes INTEGER NOT NULL, down_busy REAL NOT NULL,
    down_unnecessary_bytes INTEGER NOT NULL, down_dropped_buffer INTEGER NOT NULL,
    down_dropped_error INTEGER NOT NULL,
    sent INTEGER NOT NULL, delivered INTEGER NOT NULL, dropped INTEGER NOT NULL,
    in_flight INTEGER NOT NULL, histograms TEXT NOT NULL, summaries TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS clients (
    run INTEGER NOT NULL REFERENCES runs (id), idx INTEGER NOT NULL, grp INTEGER NOT NULL, fct REAL,
    completed INTEGER NOT NULL, failed INTEGER NOT NULL, unnecessary INTEGER NOT NULL,
    retransmissions INTEGER NOT NULL, expirations INTEGER NOT NULL,
    max_expired_timer REAL NOT NULL, rtt_sum REAL NOT NULL,
    spurious_detected INTEGER NOT NULL, tcp TEXT,
    PRIMARY KEY (run, idx)) WITHOUT ROWID;
";

/// What layout 2 adds to layout 1.
const LAYOUT_2_ADDS: &str = "
ALTER TABLE definitions ADD COLUMN network TEXT NOT NULL DEFAULT 'dumbbell';
CREATE TABLE grid_cells (
    definition TEXT NOT NULL, idx INTEGER NOT NULL, set_name TEXT NOT NULL,
    workload TEXT NOT NULL, point REAL NOT NULL, algorithm TEXT NOT NULL, cell TEXT NOT NULL,
    PRIMARY KEY (definition, idx)) WITHOUT ROWID;
CREATE TABLE grid_runs (
    id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, model_version TEXT NOT NULL,
    spec TEXT NOT NULL, replication INTEGER NOT NULL, duration REAL NOT NULL,
    request_size INTEGER NOT NULL, events INTEGER NOT NULL, frames INTEGER NOT NULL,
    collisions INTEGER NOT NULL,
    drop_mac_queue INTEGER NOT NULL, drop_mac_retries INTEGER NOT NULL,
    drop_channel_access INTEGER NOT NULL, drop_reassembly INTEGER NOT NULL,
    drop_fragments_aborted INTEGER NOT NULL, drop_hop_limit INTEGER NOT NULL,
    sent INTEGER NOT NULL, delivered INTEGER NOT NULL, dropped INTEGER NOT NULL,
    in_flight INTEGER NOT NULL,
    generated INTEGER NOT NULL, app_drops INTEGER NOT NULL, requests_sent INTEGER NOT NULL,
    transmissions INTEGER NOT NULL, completed INTEGER NOT NULL, failed INTEGER NOT NULL,
    acks INTEGER NOT NULL, carried INTEGER NOT NULL);
CREATE TABLE grid_nodes (
    run INTEGER NOT NULL REFERENCES grid_runs (id), node INTEGER NOT NULL, role TEXT NOT NULL,
    generated INTEGER NOT NULL, app_drops INTEGER NOT NULL, sent INTEGER NOT NULL,
    transmissions INTEGER NOT NULL, completed INTEGER NOT NULL, failed INTEGER NOT NULL,
    completed_transmissions INTEGER NOT NULL, acks INTEGER NOT NULL, carried INTEGER NOT NULL,
    rtt_sum REAL NOT NULL,
    data_frames INTEGER NOT NULL, ack_frames INTEGER NOT NULL, deferrals INTEGER NOT NULL,
    mac_drops INTEGER NOT NULL, channel_access_failures INTEGER NOT NULL,
    overflows INTEGER NOT NULL, reassembly_drops INTEGER NOT NULL, duplicates INTEGER NOT NULL,
    forwarded INTEGER NOT NULL, airtime REAL NOT NULL,
    PRIMARY KEY (run, node)) WITHOUT ROWID;
CREATE TABLE grid_traces (
    run INTEGER NOT NULL REFERENCES grid_runs (id), idx INTEGER NOT NULL, t REAL NOT NULL,
    kind TEXT NOT NULL, value REAL NOT NULL, retransmissions INTEGER NOT NULL,
    PRIMARY KEY (run, idx)) WITHOUT ROWID;
";

/// What layout 3 adds to layout 2: star runs, one row per station, and the
/// stations' sampled TCP state as one compact BLOB per run
/// (`networks/star/trace_codec.rs`).
const LAYOUT_3_ADDS: &str = "
CREATE TABLE star_cells (
    definition TEXT NOT NULL, idx INTEGER NOT NULL, set_name TEXT NOT NULL,
    stations INTEGER NOT NULL, algorithm TEXT NOT NULL, cell TEXT NOT NULL,
    PRIMARY KEY (definition, idx)) WITHOUT ROWID;
CREATE TABLE star_runs (
    id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, model_version TEXT NOT NULL,
    spec TEXT NOT NULL, replication INTEGER NOT NULL, duration REAL NOT NULL,
    events INTEGER NOT NULL, goodput_bps REAL NOT NULL,
    data_frames INTEGER NOT NULL, collided_frames INTEGER NOT NULL,
    collisions INTEGER NOT NULL, mac_retries INTEGER NOT NULL, retry_drops INTEGER NOT NULL,
    queue_drops INTEGER NOT NULL, delivered_frames INTEGER NOT NULL, busy REAL NOT NULL,
    sent INTEGER NOT NULL, delivered INTEGER NOT NULL, dropped INTEGER NOT NULL,
    in_flight INTEGER NOT NULL,
    written INTEGER NOT NULL, received INTEGER NOT NULL, complete_stations INTEGER NOT NULL,
    retransmitted_segments INTEGER NOT NULL, timeouts INTEGER NOT NULL,
    fast_retransmits INTEGER NOT NULL);
CREATE TABLE star_stations (
    run INTEGER NOT NULL REFERENCES star_runs (id), station INTEGER NOT NULL,
    written INTEGER NOT NULL, received INTEGER NOT NULL, complete INTEGER NOT NULL,
    retransmitted_segments INTEGER NOT NULL, timeouts INTEGER NOT NULL,
    fast_retransmits INTEGER NOT NULL, rtt_samples INTEGER NOT NULL,
    max_expired_rto REAL NOT NULL, max_rto REAL NOT NULL, samples INTEGER NOT NULL,
    PRIMARY KEY (run, station)) WITHOUT ROWID;
CREATE TABLE star_traces (
    run INTEGER PRIMARY KEY REFERENCES star_runs (id), trace BLOB NOT NULL);
";

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

/// Parses a recorded layout this build reads (1 to 6).
pub fn readable(v: &str) -> Result<u32> {
    match v {
        "1" => Ok(1),
        "2" => Ok(2),
        "3" => Ok(3),
        "4" => Ok(4),
        "5" => Ok(5),
        "6" => Ok(6),
        _ => bail!(
            "a store of layout {v}; this coapcc reads layouts 1 to 5 (upgraded in place) and \
             {CURRENT}"
        ),
    }
}

/// Brings the store to the current layout: creates the tables of a new store,
/// upgrades a store of layout 1 to 5, refuses any other. Returns the layout found
/// before (`None` for a new store).
pub fn prepare(conn: &mut Connection) -> Result<Option<u32>> {
    // One writer at a time decides: a second process opening the same old
    // store waits, then finds it upgraded.
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let found = match recorded(&tx)? {
        None => {
            tx.execute_batch(LAYOUT_1)?;
            tx.execute_batch(LAYOUT_2_ADDS)?;
            tx.execute_batch(LAYOUT_3_ADDS)?;
            tx.execute_batch(LAYOUT_4_ADDS)?;
            tx.execute_batch(super::digest::LAYOUT_5_ADDS)?;
            tx.execute_batch(super::digest::LAYOUT_6_ADDS)?;
            tx.execute(
                "INSERT INTO meta (key, value) VALUES ('schema', ?1)",
                [CURRENT.to_string()],
            )?;
            None
        }
        Some(v) => {
            let found = readable(&v)?;
            if found == 1 {
                tx.execute_batch(LAYOUT_2_ADDS)?;
            }
            if found <= 2 {
                tx.execute_batch(LAYOUT_3_ADDS)?;
            }
            if found <= 3 {
                tx.execute_batch(LAYOUT_4_ADDS)?;
            }
            if found <= 4 {
                tx.execute_batch(super::digest::LAYOUT_5_ADDS)?;
                super::digest::mark_upgrade(&tx)?;
            }
            if found <= 5 {
                tx.execute_batch(super::digest::LAYOUT_6_ADDS)?;
                super::digest::mark_cells_upgrade(&tx)?;
            }
            if found != CURRENT {
                tx.execute(
                    "UPDATE meta SET value = ?1 WHERE key = 'schema'",
                    [CURRENT.to_string()],
                )?;
            }
            Some(found)
        }
    };
    tx.commit()?;
    Ok(found)
}
