//! Grid campaigns in the store (layout 2): their definitions and cells, and
//! every finished grid run — its totals (`grid_runs`), one row per node with
//! every field of [`grid::NodeResult`] and its MAC counters (`grid_nodes`), and
//! the trace node's RTO and RTT samples (`grid_traces`).

use std::collections::HashSet;

use anyhow::Result;
use coapcc_link::grid::{DropCounts, NodeRecord};
use coapcc_sim::grid::{self, Role, TraceKind, TracePoint};
use coapcc_sim::metrics::Conservation;
use rusqlite::params;

use super::campaign::plan::{GridCell, GridPlan};
use super::Grid;
use crate::networks::LabNetwork;
use crate::store::digest::RunTables;
use crate::store::{u, NetworkTables, Registered, Store};

fn role_name(r: Role) -> &'static str {
    match r {
        Role::Root => "root",
        Role::Server => "server",
        Role::Client => "client",
        Role::Interferer => "interferer",
    }
}

fn parse_role(s: &str) -> Option<Role> {
    Some(match s {
        "root" => Role::Root,
        "server" => Role::Server,
        "client" => Role::Client,
        "interferer" => Role::Interferer,
        _ => return None,
    })
}

/// The name of a trace point's kind, as stored and as the report prints it.
pub fn trace_kind_name(k: TraceKind) -> &'static str {
    match k {
        TraceKind::Rto => "rto",
        TraceKind::Backoff => "backoff",
        TraceKind::Rtt => "rtt",
    }
}

fn parse_trace_kind(s: &str) -> Option<TraceKind> {
    Some(match s {
        "rto" => TraceKind::Rto,
        "backoff" => TraceKind::Backoff,
        "rtt" => TraceKind::Rtt,
        _ => return None,
    })
}

fn bad_text(col: usize, what: &str) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(
        col,
        rusqlite::types::Type::Text,
        format!("unknown {what}").into(),
    )
}

/// Its tables in the store, from layout 2 on.
pub const TABLES: NetworkTables = NetworkTables {
    network: Grid::NAME,
    since_layout: 2,
    create: CREATE,
    runs: RunTables {
        runs: "grid_runs",
        items: &[("grid_nodes", "node"), ("grid_traces", "idx")],
    },
    cells: "grid_cells",
};

/// The SQL that creates them, exactly as the builds of layout 2 did.
const CREATE: &str = "
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

fn require_layout(db: &Store) -> Result<()> {
    db.require_layout(2, "grid")
}

/// Records a grid campaign's definition and cells (once), and marks it as
/// the most recently run definition.
pub fn register(db: &mut Store, plan: &GridPlan) -> Result<Registered> {
    require_layout(db)?;
    let columns = "set_name, workload, point, algorithm";
    plan.register_cells(db, &TABLES, columns, |c| {
        vec![
            c.set.clone().into(),
            c.kind.name().to_string().into(),
            c.point.into(),
            c.label.clone().into(),
        ]
    })
}

/// The cells of a grid definition, in campaign order.
pub fn cells(db: &Store, definition: &str) -> Result<Vec<GridCell>> {
    require_layout(db)?;
    db.cells_in("grid_cells", definition, "grid")
}

/// Keys of every finished grid run.
pub fn done_keys(db: &Store) -> Result<HashSet<String>> {
    db.keys_in("grid_runs", 2)
}

/// Finished grid runs.
pub fn run_count(db: &Store) -> Result<u64> {
    db.rows_in("grid_runs", 2)
}

/// Writes one finished grid run, its nodes and its trace in one
/// transaction. A key already present is left as it is.
pub fn insert_run(
    db: &mut Store,
    key: &str,
    spec: &grid::RunSpec,
    replication: u32,
    result: &grid::RunResult,
) -> Result<()> {
    require_layout(db)?;
    let clients = || result.nodes.iter().filter(|n| n.role == Role::Client);
    let total = |f: &dyn Fn(&grid::NodeResult) -> u64| clients().map(f).sum::<u64>() as i64;
    let d = &result.drops;
    db.insert_run_with(
        &TABLES.runs,
        &Grid::run_row(key, spec, replication, result),
        (
            "request_size, frames, collisions, drop_mac_queue, drop_mac_retries, \
             drop_channel_access, drop_reassembly, drop_fragments_aborted, drop_hop_limit, \
             generated, app_drops, requests_sent, transmissions, completed, failed, acks, \
             carried",
            params![
                result.request_size as i64,
                result.frames as i64,
                result.collisions as i64,
                d.mac_queue as i64,
                d.mac_retries as i64,
                d.channel_access as i64,
                d.reassembly as i64,
                d.fragments_aborted as i64,
                d.hop_limit as i64,
                total(&|n| n.generated),
                total(&|n| n.app_drops),
                total(&|n| n.sent),
                total(&|n| n.transmissions),
                total(&|n| n.completed),
                total(&|n| n.failed),
                total(&|n| n.acks),
                total(&|n| n.carried),
            ],
        ),
        |tx, id| {
            let mut stmt = tx.prepare_cached(
                "INSERT INTO grid_nodes VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, \
                 ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23)",
            )?;
            for n in &result.nodes {
                let m = &n.mac;
                stmt.execute(params![
                    id,
                    n.node,
                    role_name(n.role),
                    n.generated as i64,
                    n.app_drops as i64,
                    n.sent as i64,
                    n.transmissions as i64,
                    n.completed as i64,
                    n.failed as i64,
                    n.completed_transmissions as i64,
                    n.acks as i64,
                    n.carried as i64,
                    n.rtt_sum,
                    m.data_frames as i64,
                    m.ack_frames as i64,
                    m.deferrals as i64,
                    m.mac_drops as i64,
                    m.channel_access_failures as i64,
                    m.overflows as i64,
                    m.reassembly_drops as i64,
                    m.duplicates as i64,
                    m.forwarded as i64,
                    m.airtime,
                ])?;
            }
            let mut stmt =
                tx.prepare_cached("INSERT INTO grid_traces VALUES (?1, ?2, ?3, ?4, ?5, ?6)")?;
            for (i, p) in result.trace.iter().enumerate() {
                stmt.execute(params![
                    id,
                    i as i64,
                    p.t,
                    trace_kind_name(p.kind),
                    p.value,
                    p.retransmissions
                ])?;
            }
            Ok(())
        },
    )
}

/// The stored result of a grid run, if finished; with `trace = false` its
/// `trace` is left empty (cheaper when only the metrics are wanted).
pub fn load_run(db: &Store, key: &str, trace: bool) -> Result<Option<grid::RunResult>> {
    if db.layout() < 2 {
        return Ok(None);
    }
    let row = db.read_row(
        "SELECT id, duration, request_size, events, frames, collisions, drop_mac_queue, \
         drop_mac_retries, drop_channel_access, drop_reassembly, drop_fragments_aborted, \
         drop_hop_limit, sent, delivered, dropped, in_flight FROM grid_runs WHERE key = ?1",
        key,
        "grid_runs",
        &format!("grid run {key}"),
        |r| {
            Ok((
                r.get::<_, i64>(0)?,
                grid::RunResult {
                    nodes: Vec::new(),
                    drops: DropCounts {
                        mac_queue: u(r, 6)?,
                        mac_retries: u(r, 7)?,
                        channel_access: u(r, 8)?,
                        reassembly: u(r, 9)?,
                        fragments_aborted: u(r, 10)?,
                        hop_limit: u(r, 11)?,
                    },
                    frames: u(r, 4)?,
                    collisions: u(r, 5)?,
                    duration: r.get(1)?,
                    request_size: u(r, 2)? as usize,
                    events: u(r, 3)?,
                    conservation: Conservation {
                        sent: u(r, 12)?,
                        delivered: u(r, 13)?,
                        dropped: u(r, 14)?,
                        in_flight: u(r, 15)?,
                    },
                    trace: Vec::new(),
                },
            ))
        },
    )?;
    let Some((id, mut run)) = row else {
        return Ok(None);
    };
    run.nodes = db.read_rows(
        "SELECT * FROM grid_nodes WHERE run = ?1 ORDER BY node",
        id,
        "grid_nodes",
        &format!("grid run {key}"),
        |r| {
            Ok(grid::NodeResult {
                node: r.get(1)?,
                role: parse_role(&r.get::<_, String>(2)?).ok_or_else(|| bad_text(2, "role"))?,
                generated: u(r, 3)?,
                app_drops: u(r, 4)?,
                sent: u(r, 5)?,
                transmissions: u(r, 6)?,
                completed: u(r, 7)?,
                failed: u(r, 8)?,
                completed_transmissions: u(r, 9)?,
                acks: u(r, 10)?,
                carried: u(r, 11)?,
                rtt_sum: r.get(12)?,
                mac: NodeRecord {
                    data_frames: u(r, 13)?,
                    ack_frames: u(r, 14)?,
                    deferrals: u(r, 15)?,
                    mac_drops: u(r, 16)?,
                    channel_access_failures: u(r, 17)?,
                    overflows: u(r, 18)?,
                    reassembly_drops: u(r, 19)?,
                    duplicates: u(r, 20)?,
                    forwarded: u(r, 21)?,
                    airtime: r.get(22)?,
                },
            })
        },
    )?;
    if trace {
        run.trace = db.read_rows(
            "SELECT t, kind, value, retransmissions FROM grid_traces WHERE run = ?1 \
             ORDER BY idx",
            id,
            "grid_traces",
            &format!("grid run {key}"),
            |r| {
                Ok(TracePoint {
                    t: r.get(0)?,
                    kind: parse_trace_kind(&r.get::<_, String>(1)?)
                        .ok_or_else(|| bad_text(1, "trace kind"))?,
                    value: r.get(2)?,
                    retransmissions: r.get(3)?,
                })
            },
        )?;
    }
    Ok(Some(run))
}

/// Every grid run has one node row per node of its network.
pub fn verify(db: &Store) -> Result<()> {
    db.check_item_rows(
        ("grid_runs", "grid_nodes"),
        ("grid run", "node"),
        |spec: &grid::RunSpec| spec.network.nodes() as i64,
        |_| Ok(()),
    )
}

/// The grid tables for [`crate::networks::dump`].
pub fn dump(db: &Store, out: &mut String) -> Result<()> {
    db.dump_queries(
        out,
        &[
            (
                "grid_cells",
                "SELECT * FROM grid_cells ORDER BY definition, idx",
            ),
            ("grid_runs", "SELECT * FROM grid_runs ORDER BY key"),
            (
                "grid_nodes",
                "SELECT r.key, n.* FROM grid_nodes n JOIN grid_runs r ON r.id = n.run \
                 ORDER BY r.key, n.node",
            ),
            (
                "grid_traces",
                "SELECT r.key, t.* FROM grid_traces t JOIN grid_runs r ON r.id = t.run \
                 ORDER BY r.key, t.idx",
            ),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::networks::NetworkKind;
    use coapcc_sim::AlgorithmSpec;

    fn spec() -> grid::RunSpec {
        grid::RunSpec {
            network: Default::default(),
            coap: Default::default(),
            workload: coapcc_sim::grid::Workload {
                duration_s: 30.0,
                period_s: 4.0,
                trace_node: Some(36),
                ..Default::default()
            },
            algorithm: AlgorithmSpec::named("pcocoa"),
            seed: 4,
        }
    }

    #[test]
    fn a_grid_run_round_trips_exactly_and_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("g.sqlite");
        let mut store = crate::networks::open_store(&path).unwrap();
        let result = <coapcc_sim::grid::Sim as coapcc_sim::SimNetwork>::run(&spec(), 0).unwrap();
        assert!(!result.trace.is_empty(), "node 36 is traced");
        assert!(result.nodes.iter().any(|n| n.mac.airtime > 0.0));
        assert!(load_run(&store, "k", true).unwrap().is_none());
        insert_run(&mut store, "k", &spec(), 0, &result).unwrap();
        insert_run(&mut store, "k", &spec(), 0, &result).unwrap();
        assert_eq!(run_count(&store).unwrap(), 1);
        assert_eq!(load_run(&store, "k", true).unwrap().unwrap(), result);
        let no_trace = load_run(&store, "k", false).unwrap().unwrap();
        assert!(no_trace.trace.is_empty() && no_trace.nodes == result.nodes);
        assert_eq!(done_keys(&store).unwrap(), HashSet::from(["k".to_string()]));
        // The run's totals are the sums over the clients under test.
        let carried: i64 = store
            .conn
            .query_row("SELECT carried FROM grid_runs", [], |r| r.get(0))
            .unwrap();
        let want: u64 = result
            .nodes
            .iter()
            .filter(|n| n.role == Role::Client)
            .map(|n| n.carried)
            .sum();
        assert_eq!(carried as u64, want);
        crate::networks::verify(&store).unwrap();
        let dump = crate::networks::dump(&store).unwrap();
        assert_eq!(
            dump.lines()
                .skip_while(|l| *l != "[grid_nodes]")
                .skip(1)
                .take_while(|l| !l.starts_with('['))
                .count(),
            36
        );
        // an edited value no longer matches the run's digest
        let ok = crate::networks::check_all_digests(
            &store,
            NetworkKind::of::<crate::networks::grid::Grid>(),
        )
        .unwrap();
        assert_eq!((ok.checked, ok.unchecked, ok.altered.len()), (1, 0, 0));
        store
            .conn
            .execute("UPDATE grid_traces SET value = value + 1 WHERE idx = 0", [])
            .unwrap();
        let bad = crate::networks::check_all_digests(
            &store,
            NetworkKind::of::<crate::networks::grid::Grid>(),
        )
        .unwrap();
        assert_eq!(bad.altered, vec!["k".to_string()]);
        assert!(crate::networks::verify(&store).is_err());
    }
}
