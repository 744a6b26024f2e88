//! Star campaigns in the store (layout 3): their definitions and cells, and
//! every finished star run — its totals (`star_runs`: goodput, the 802.11
//! counters, packet conservation and the sums over stations), one row per
//! station (`star_stations`) with every other field of [`StationResult`],
//! and every station's sampled TCP state as one BLOB per run
//! (`star_traces`, encoded by [`super::trace_codec`]). A stored run loads
//! back exactly as the simulator returned it.

use std::collections::HashSet;

use anyhow::{bail, Context, Result};
use coapcc_link::star::StarRecord;
use coapcc_sim::metrics::Conservation;
use coapcc_sim::star::{self, StationResult};
use rusqlite::{params, OptionalExtension};

use super::campaign::plan::{StarCell, StarPlan};
use super::{trace_codec, Star};
use crate::networks::LabNetwork;
use crate::store::digest::RunTables;
use crate::store::{u, NetworkTables, Registered, Store};

/// Its tables in the store, from layout 3 on.
pub const TABLES: NetworkTables = NetworkTables {
    network: Star::NAME,
    since_layout: 3,
    create: CREATE,
    runs: RunTables {
        runs: "star_runs",
        items: &[("star_stations", "station"), ("star_traces", "run")],
    },
    cells: "star_cells",
};

/// The SQL that creates them, exactly as the builds of layout 3 did.
const CREATE: &str = "
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

fn require_layout(db: &Store) -> Result<()> {
    db.require_layout(3, "star")
}

/// Records a star campaign's definition and cells (once), and marks it as
/// the most recently run definition.
pub fn register(db: &mut Store, plan: &StarPlan) -> Result<Registered> {
    require_layout(db)?;
    let columns = "set_name, stations, algorithm";
    plan.register_cells(db, &TABLES, columns, |c| {
        vec![
            c.set.clone().into(),
            c.stations.into(),
            c.label.clone().into(),
        ]
    })
}

/// The cells of a star definition, in campaign order.
pub fn cells(db: &Store, definition: &str) -> Result<Vec<StarCell>> {
    require_layout(db)?;
    db.cells_in("star_cells", definition, "star")
}

/// Keys of every finished star run.
pub fn done_keys(db: &Store) -> Result<HashSet<String>> {
    db.keys_in("star_runs", 3)
}

/// Finished star runs.
pub fn run_count(db: &Store) -> Result<u64> {
    db.rows_in("star_runs", 3)
}

/// Writes one finished star run and its stations in one transaction. A
/// key already present is left as it is.
pub fn insert_run(
    db: &mut Store,
    key: &str,
    spec: &star::RunSpec,
    replication: u32,
    result: &star::RunResult,
) -> Result<()> {
    require_layout(db)?;
    let total =
        |f: &dyn Fn(&StationResult) -> u64| result.stations.iter().map(f).sum::<u64>() as i64;
    let m = &result.mac;
    db.insert_run_with(
        &TABLES.runs,
        &Star::run_row(key, spec, replication, result),
        (
            "goodput_bps, data_frames, collided_frames, collisions, mac_retries, \
             retry_drops, queue_drops, delivered_frames, busy, written, received, \
             complete_stations, retransmitted_segments, timeouts, fast_retransmits",
            params![
                result.goodput_bps,
                m.data_frames as i64,
                m.collided_frames as i64,
                m.collisions as i64,
                m.retries as i64,
                m.retry_drops as i64,
                m.queue_drops as i64,
                m.delivered_frames as i64,
                m.busy,
                total(&|s| s.written),
                total(&|s| s.received),
                total(&|s| u64::from(s.complete)),
                total(&|s| s.retransmitted_segments),
                total(&|s| s.timeouts),
                total(&|s| s.fast_retransmits),
            ],
        ),
        |tx, id| {
            let mut stmt = tx.prepare_cached(
                "INSERT INTO star_stations VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, \
                 ?11, ?12)",
            )?;
            for s in &result.stations {
                stmt.execute(params![
                    id,
                    s.station,
                    s.written as i64,
                    s.received as i64,
                    s.complete,
                    s.retransmitted_segments as i64,
                    s.timeouts as i64,
                    s.fast_retransmits as i64,
                    s.rtt_samples as i64,
                    s.max_expired_rto,
                    s.max_rto,
                    s.trace.len() as i64,
                ])?;
            }
            let blob = trace_codec::encode(result.stations.iter().map(|s| s.trace.as_slice()));
            tx.execute(
                "INSERT INTO star_traces (run, trace) VALUES (?1, ?2)",
                params![id, blob],
            )?;
            Ok(())
        },
    )
}

/// The stored result of a star run, if finished; with `traces = false`
/// every station's `trace` is left empty (cheaper when only the counters
/// are wanted).
pub fn load_run(db: &Store, key: &str, traces: bool) -> Result<Option<star::RunResult>> {
    if db.layout() < 3 {
        return Ok(None);
    }
    let row = db.read_row(
        "SELECT id, duration, events, goodput_bps, data_frames, collided_frames, collisions, \
         mac_retries, retry_drops, queue_drops, delivered_frames, busy, sent, delivered, \
         dropped, in_flight FROM star_runs WHERE key = ?1",
        key,
        "star_runs",
        &format!("star run {key}"),
        |r| {
            Ok((
                r.get::<_, i64>(0)?,
                star::RunResult {
                    stations: Vec::new(),
                    goodput_bps: r.get(3)?,
                    mac: StarRecord {
                        data_frames: u(r, 4)?,
                        collided_frames: u(r, 5)?,
                        collisions: u(r, 6)?,
                        retries: u(r, 7)?,
                        retry_drops: u(r, 8)?,
                        queue_drops: u(r, 9)?,
                        delivered_frames: u(r, 10)?,
                        busy: r.get(11)?,
                    },
                    duration: r.get(1)?,
                    events: u(r, 2)?,
                    conservation: Conservation {
                        sent: u(r, 12)?,
                        delivered: u(r, 13)?,
                        dropped: u(r, 14)?,
                        in_flight: u(r, 15)?,
                    },
                },
            ))
        },
    )?;
    let Some((id, mut run)) = row else {
        return Ok(None);
    };
    let rows = db.read_rows(
        "SELECT station, written, received, complete, retransmitted_segments, timeouts, \
         fast_retransmits, rtt_samples, max_expired_rto, max_rto, samples \
         FROM star_stations WHERE run = ?1 ORDER BY station",
        id,
        "star_stations",
        &format!("star run {key}"),
        |r| {
            Ok((
                StationResult {
                    station: r.get(0)?,
                    written: u(r, 1)?,
                    received: u(r, 2)?,
                    complete: r.get(3)?,
                    retransmitted_segments: u(r, 4)?,
                    timeouts: u(r, 5)?,
                    fast_retransmits: u(r, 6)?,
                    rtt_samples: u(r, 7)?,
                    max_expired_rto: r.get(8)?,
                    max_rto: r.get(9)?,
                    trace: Vec::new(),
                },
                u(r, 10)?,
            ))
        },
    )?;
    let mut series = if traces {
        let blob: Vec<u8> = db
            .conn
            .prepare_cached("SELECT trace FROM star_traces WHERE run = ?1")?
            .query_row([id], |r| r.get(0))
            .optional()?
            .with_context(|| format!("star run {key}: no trace"))?;
        let series = trace_codec::decode(&blob).with_context(|| format!("star run {key}"))?;
        if series.len() != rows.len() {
            bail!(
                "star run {key}: {} stations in the trace, {} station rows",
                series.len(),
                rows.len()
            );
        }
        series
    } else {
        Vec::new()
    }
    .into_iter();
    for (mut s, samples) in rows {
        if let Some(trace) = series.next() {
            if trace.len() as u64 != samples {
                bail!(
                    "star run {key}, station {}: {} samples in the trace, {samples} recorded",
                    s.station,
                    trace.len()
                );
            }
            s.trace = trace;
        }
        run.stations.push(s);
    }
    Ok(Some(run))
}

/// Every star run has one station row per station of its network and a
/// trace that decodes to the number of samples recorded for each.
pub fn verify(db: &Store) -> Result<()> {
    db.check_item_rows(
        ("star_runs", "star_stations"),
        ("star run", "station"),
        |spec: &star::RunSpec| i64::from(spec.network.stations),
        |key| load_run(db, key, true).map(drop),
    )
}

/// The star tables for [`crate::networks::dump`] (traces in hexadecimal).
pub fn dump(db: &Store, out: &mut String) -> Result<()> {
    db.dump_queries(
        out,
        &[
            (
                "star_cells",
                "SELECT * FROM star_cells ORDER BY definition, idx",
            ),
            ("star_runs", "SELECT * FROM star_runs ORDER BY key"),
            (
                "star_stations",
                "SELECT r.key, s.* FROM star_stations s JOIN star_runs r ON r.id = s.run \
                 ORDER BY r.key, s.station",
            ),
            (
                "star_traces",
                "SELECT r.key, hex(t.trace) FROM star_traces t \
                 JOIN star_runs r ON r.id = t.run ORDER BY r.key",
            ),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::networks::NetworkKind;
    use coapcc_sim::AlgorithmSpec;

    fn spec() -> star::RunSpec {
        let mut s = star::RunSpec {
            network: Default::default(),
            workload: coapcc_sim::star::Workload {
                writes: 40,
                ..Default::default()
            },
            algorithm: AlgorithmSpec::named("tcp"),
            seed: 4,
        };
        s.network.stations = 5;
        s
    }

    #[test]
    fn a_star_run_round_trips_exactly_and_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sqlite");
        let mut store = crate::networks::open_store(&path).unwrap();
        let result = <coapcc_sim::star::Sim as coapcc_sim::SimNetwork>::run(&spec(), 0).unwrap();
        assert!(result.stations.iter().all(|s| !s.trace.is_empty()));
        assert!(load_run(&store, "k", true).unwrap().is_none());
        insert_run(&mut store, "k", &spec(), 0, &result).unwrap();
        insert_run(&mut store, "k", &spec(), 0, &result).unwrap();
        assert_eq!(run_count(&store).unwrap(), 1);
        assert_eq!(load_run(&store, "k", true).unwrap().unwrap(), result);
        let bare = load_run(&store, "k", false).unwrap().unwrap();
        assert!(bare.stations.iter().all(|s| s.trace.is_empty()));
        assert_eq!(bare.goodput_bps, result.goodput_bps);
        assert_eq!(done_keys(&store).unwrap(), HashSet::from(["k".to_string()]));
        let written: i64 = store
            .conn
            .query_row("SELECT written FROM star_runs", [], |r| r.get(0))
            .unwrap();
        assert_eq!(
            written as u64,
            result.stations.iter().map(|s| s.written).sum::<u64>()
        );
        crate::networks::verify(&store).unwrap();
        let dump = crate::networks::dump(&store).unwrap();
        assert_eq!(
            dump.lines()
                .skip_while(|l| *l != "[star_stations]")
                .skip(1)
                .take_while(|l| !l.starts_with('['))
                .count(),
            5
        );
        // an edited value no longer matches the run's digest
        let ok = crate::networks::check_all_digests(
            &store,
            NetworkKind::of::<crate::networks::star::Star>(),
        )
        .unwrap();
        assert_eq!((ok.checked, ok.unchecked, ok.altered.len()), (1, 0, 0));
        store
            .conn
            .execute(
                "UPDATE star_stations SET written = written + 1 WHERE station = (SELECT MIN(station) FROM star_stations)",
                [],
            )
            .unwrap();
        let bad = crate::networks::check_all_digests(
            &store,
            NetworkKind::of::<crate::networks::star::Star>(),
        )
        .unwrap();
        assert_eq!(bad.altered, vec!["k".to_string()]);
        assert!(crate::networks::verify(&store).is_err());
    }
}
