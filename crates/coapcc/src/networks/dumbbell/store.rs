//! Dumbbell campaigns in the store (layout 1): their definitions and cells
//! (`cells`), and every finished run — its link and conservation figures,
//! retransmissions histograms and per-group summaries (`runs`), and one row
//! per client (`clients`, spec `docs/spec/testbed-spec.md` §3).

use std::collections::HashSet;

use anyhow::{Context, Result};
use coapcc_sim::dumbbell::RunSpec;
use coapcc_sim::metrics::{ClientRecord, Conservation, LinkRecord};
use coapcc_sim::{RunResult, Summary};
use rusqlite::params;

use super::campaign::plan::{DumbbellCell, DumbbellPlan};
use super::Dumbbell;
use crate::networks::LabNetwork;
use crate::store::digest::RunTables;
use crate::store::{u, NetworkTables, Registered, Store};

/// Its tables in the store, from layout 1 on.
pub const TABLES: NetworkTables = NetworkTables {
    network: Dumbbell::NAME,
    since_layout: 1,
    create: CREATE,
    runs: RunTables {
        runs: "runs",
        items: &[("clients", "idx")],
    },
    cells: "cells",
};

/// The SQL that creates them, exactly as the builds of layout 1 did.
const CREATE: &str = "
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

/// Records `plan`'s definition and cells (once), and marks it as the most
/// recently run definition.
pub fn register(db: &mut Store, plan: &DumbbellPlan) -> Result<Registered> {
    let columns = "set_name, clients, buffer, workload, errors, population";
    plan.register_cells(db, &TABLES, columns, |c| {
        vec![
            c.set.clone().into(),
            c.clients.into(),
            c.buffer.label().into(),
            c.workload.name().to_string().into(),
            c.errors.name().to_string().into(),
            c.population.clone().into(),
        ]
    })
}

/// Keys of every finished run.
pub fn done_keys(db: &Store) -> Result<HashSet<String>> {
    db.keys_in("runs", 1)
}

/// Finished runs.
pub fn run_count(db: &Store) -> Result<u64> {
    db.rows_in("runs", 1)
}

/// Writes one finished run, its clients and its per-group summaries in one
/// transaction. A key already present is left as it is.
pub fn insert_run(
    db: &mut Store,
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
    let (u, d) = (&result.uplink, &result.downlink);
    db.insert_run_with(
        &TABLES.runs,
        &Dumbbell::run_row(key, spec, replication, result),
        (
            "up_packets, up_bytes, up_busy, up_unnecessary_bytes, up_dropped_buffer, \
             up_dropped_error, down_packets, down_bytes, down_busy, down_unnecessary_bytes, \
             down_dropped_buffer, down_dropped_error, histograms, summaries",
            params![
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
                serde_json::to_string(&result.histograms)?,
                serde_json::to_string(&summaries)?,
            ],
        ),
        |tx, id| {
            let mut stmt = tx.prepare_cached(
                "INSERT INTO clients VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, \
                 ?12, ?13)",
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
            Ok(())
        },
    )
}

/// Checks that every stored dumbbell run has one client row per client
/// of its spec.
pub fn verify(db: &Store) -> Result<()> {
    db.check_item_rows(
        ("runs", "clients"),
        ("run", "client"),
        |spec: &RunSpec| spec.groups.iter().map(|g| i64::from(g.clients)).sum(),
        |_| Ok(()),
    )
}

/// The stored result of a run, if finished.
/// The per-group summaries stored with run `key`, if it is stored. They
/// hold what the client rows do not: observers' and block-wise clients'
/// figures.
pub fn load_summaries(db: &Store, key: &str) -> Result<Option<Vec<Summary>>> {
    let text: Option<String> = db.read_row(
        "SELECT summaries FROM runs WHERE key = ?1",
        key,
        "runs",
        &format!("run {key}"),
        |r| r.get(0),
    )?;
    text.map(|t| {
        serde_json::from_str(&t).with_context(|| format!("run {key}: its stored summaries"))
    })
    .transpose()
}

pub fn load_run(db: &Store, key: &str) -> Result<Option<RunResult>> {
    let row = db.read_row(
        "SELECT duration, events, up_packets, up_bytes, up_busy, up_unnecessary_bytes, \
         up_dropped_buffer, up_dropped_error, down_packets, down_bytes, down_busy, \
         down_unnecessary_bytes, down_dropped_buffer, down_dropped_error, sent, delivered, \
         dropped, in_flight, histograms, id FROM runs WHERE key = ?1",
        key,
        "runs",
        &format!("run {key}"),
        |r| {
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
        },
    )?;
    let Some((mut run, histograms, id)) = row else {
        return Ok(None);
    };
    run.histograms = serde_json::from_str(&histograms)
        .with_context(|| format!("run {key}: unreadable histograms"))?;
    run.clients = db
        .read_rows(
            "SELECT grp, fct, completed, failed, unnecessary, retransmissions, expirations, \
         max_expired_timer, rtt_sum, spurious_detected, tcp FROM clients WHERE run = ?1 \
         ORDER BY idx",
            id,
            "clients",
            &format!("run {key}"),
            |r| {
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
                        // Not columns of the store either: an observer's
                        // and a block-wise client's own figures reach the
                        // store summarised, in the run's `summaries`.
                        observe: None,
                        transfers: None,
                    },
                    r.get::<_, Option<String>>(10)?,
                ))
            },
        )?
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

/// The cells of a definition, in campaign order.
pub fn cells(db: &Store, definition: &str) -> Result<Vec<DumbbellCell>> {
    let mut stmt = db
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

/// The dumbbell's tables for [`crate::networks::dump`].
pub fn dump(db: &Store, out: &mut String) -> Result<()> {
    db.dump_queries(
        out,
        &[
            ("cells", "SELECT * FROM cells ORDER BY definition, idx"),
            ("runs", "SELECT * FROM runs ORDER BY key"),
            (
                "clients",
                "SELECT r.key, c.* FROM clients c JOIN runs r ON r.id = c.run ORDER BY r.key, c.idx",
            ),
        ],
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::digest;
    use coapcc_sim::dumbbell::Group;
    use coapcc_sim::{AlgorithmSpec, Workload};

    fn spec() -> RunSpec {
        RunSpec {
            network: coapcc_link::dumbbell::Config::default(),
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
                    tcp: Some(Box::new(coapcc_sim::tcp_metrics::TcpRecord {
                        connections: 7,
                        unnecessary_syn: 2,
                        ..Default::default()
                    })),
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
        let mut store = crate::networks::open_store(&path).unwrap();
        assert!(load_run(&store, "k").unwrap().is_none());
        insert_run(&mut store, "k", &spec(), 0, &result()).unwrap();
        insert_run(&mut store, "k", &spec(), 0, &result()).unwrap();
        assert_eq!(run_count(&store).unwrap(), 1);
        assert_eq!(load_run(&store, "k").unwrap().unwrap(), result());
        assert_eq!(done_keys(&store).unwrap(), HashSet::from(["k".to_string()]));
        drop(store);
        let ro = crate::networks::open_store_read_only(&path).unwrap();
        assert_eq!(load_run(&ro, "k").unwrap().unwrap(), result());
        let summaries: String = ro
            .conn
            .query_row("SELECT summaries FROM runs", [], |r| r.get(0))
            .unwrap();
        let s: Vec<Summary> = serde_json::from_str(&summaries).unwrap();
        assert_eq!((s[0].label.as_str(), s[0].clients), ("a", 1));
        assert_eq!((s[1].label.as_str(), s[1].unfinished_clients), ("b", 1));
        assert!(crate::networks::dump(&ro)
            .unwrap()
            .contains("33.0030000000001"));
        crate::networks::verify(&ro).unwrap();
    }

    #[test]
    fn summaries_written_before_the_rename_still_read() {
        // Stores written before the key was named for what it counts keep
        // the per-group retransmission counts under "histogram".
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sqlite");
        let mut store = crate::networks::open_store(&path).unwrap();
        insert_run(&mut store, "k", &spec(), 0, &result()).unwrap();
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
        digest::record(&store.conn, &TABLES.runs, "k", id).unwrap();
        drop(store);
        let ro = crate::networks::open_store_read_only(&path).unwrap();
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
        crate::networks::verify(&ro).unwrap();
    }
}
