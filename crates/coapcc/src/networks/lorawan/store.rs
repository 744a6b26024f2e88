//! LoRaWAN campaigns in the store (layout 7): their definitions and cells,
//! and every finished LoRaWAN run — its totals, drops by direction and
//! cause, the network's record and the completion-time percentiles
//! (`lorawan_runs`), and one row per device with every field of
//! [`lorawan::DeviceResult`] (`lorawan_devices`).

use std::collections::HashSet;

use anyhow::Result;
use coapcc_link::lorawan::LorawanRecord;
use coapcc_sim::lorawan::{self, DeviceResult, Drops};
use coapcc_sim::metrics::{Conservation, Percentiles};
use rusqlite::{params, Row};

use super::campaign::plan::{LorawanCell, LorawanPlan};
use super::Lorawan;
use crate::networks::LabNetwork;
use crate::store::digest::RunTables;
use crate::store::{u, NetworkTables, Registered, Store};

/// The layout its tables arrive in.
const SINCE: u32 = 7;

/// Its tables in the store, from layout 7 on.
pub const TABLES: NetworkTables = NetworkTables {
    network: Lorawan::NAME,
    since_layout: SINCE,
    create: CREATE,
    runs: RunTables {
        runs: "lorawan_runs",
        items: &[("lorawan_devices", "device")],
    },
    cells: "lorawan_cells",
};

/// The SQL that creates them, exactly as the builds of layout 7 did.
const CREATE: &str = "
CREATE TABLE lorawan_cells (
    definition TEXT NOT NULL, idx INTEGER NOT NULL, set_name TEXT NOT NULL,
    devices INTEGER NOT NULL, period REAL NOT NULL, algorithm TEXT NOT NULL, cell TEXT NOT NULL,
    PRIMARY KEY (definition, idx)) WITHOUT ROWID;
CREATE TABLE lorawan_runs (
    id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, model_version TEXT NOT NULL,
    spec TEXT NOT NULL, replication INTEGER NOT NULL, duration REAL NOT NULL,
    events INTEGER NOT NULL,
    sent INTEGER NOT NULL, delivered INTEGER NOT NULL, dropped INTEGER NOT NULL,
    in_flight INTEGER NOT NULL,
    started INTEGER NOT NULL, completed INTEGER NOT NULL, failed INTEGER NOT NULL,
    unfinished INTEGER NOT NULL,
    up_payload_too_large INTEGER NOT NULL, up_mac_queue INTEGER NOT NULL,
    up_collision INTEGER NOT NULL, up_below_sensitivity INTEGER NOT NULL,
    up_gateway_busy INTEGER NOT NULL, up_no_window INTEGER NOT NULL,
    up_duty_cycle INTEGER NOT NULL,
    down_payload_too_large INTEGER NOT NULL, down_mac_queue INTEGER NOT NULL,
    down_collision INTEGER NOT NULL, down_below_sensitivity INTEGER NOT NULL,
    down_gateway_busy INTEGER NOT NULL, down_no_window INTEGER NOT NULL,
    down_duty_cycle INTEGER NOT NULL,
    uplink_frames INTEGER NOT NULL, uplink_airtime REAL NOT NULL, waiting REAL NOT NULL,
    downlink_frames INTEGER NOT NULL, rx2_downlinks INTEGER NOT NULL,
    downlink_airtime REAL NOT NULL, held_downlinks INTEGER NOT NULL,
    completion_min REAL NOT NULL, completion_p10 REAL NOT NULL, completion_p25 REAL NOT NULL,
    completion_p50 REAL NOT NULL, completion_p75 REAL NOT NULL, completion_p90 REAL NOT NULL,
    completion_max REAL NOT NULL);
CREATE TABLE lorawan_devices (
    run INTEGER NOT NULL REFERENCES lorawan_runs (id), device INTEGER NOT NULL,
    distance_m REAL NOT NULL, sf INTEGER NOT NULL, generated INTEGER NOT NULL,
    app_drops INTEGER NOT NULL, started INTEGER NOT NULL, completed INTEGER NOT NULL,
    failed INTEGER NOT NULL, unfinished INTEGER NOT NULL, transmissions INTEGER NOT NULL,
    retransmission_airtime REAL NOT NULL, completion_sum REAL NOT NULL,
    uplinks_dropped INTEGER NOT NULL, downlinks_dropped INTEGER NOT NULL,
    PRIMARY KEY (run, device)) WITHOUT ROWID;
";

/// The run table's own columns, in the order of [`CREATE`].
const RUN_COLUMNS: &str = "started, completed, failed, unfinished, \
    up_payload_too_large, up_mac_queue, up_collision, up_below_sensitivity, up_gateway_busy, \
    up_no_window, up_duty_cycle, down_payload_too_large, down_mac_queue, down_collision, \
    down_below_sensitivity, down_gateway_busy, down_no_window, down_duty_cycle, \
    uplink_frames, uplink_airtime, waiting, downlink_frames, rx2_downlinks, downlink_airtime, \
    held_downlinks, completion_min, completion_p10, completion_p25, completion_p50, \
    completion_p75, completion_p90, completion_max";

fn require_layout(db: &Store) -> Result<()> {
    db.require_layout(SINCE, "lorawan")
}

/// Records a LoRaWAN campaign's definition and cells (once), and marks it
/// as the most recently run definition.
pub fn register(db: &mut Store, plan: &LorawanPlan) -> Result<Registered> {
    require_layout(db)?;
    plan.register_cells(db, &TABLES, "set_name, devices, period, algorithm", |c| {
        vec![
            c.set.clone().into(),
            i64::from(c.devices).into(),
            c.period.into(),
            c.label.clone().into(),
        ]
    })
}

/// The cells of a LoRaWAN definition, in campaign order.
pub fn cells(db: &Store, definition: &str) -> Result<Vec<LorawanCell>> {
    require_layout(db)?;
    db.cells_in(TABLES.cells, definition, Lorawan::NAME)
}

/// Keys of every finished LoRaWAN run.
pub fn done_keys(db: &Store) -> Result<HashSet<String>> {
    db.keys_in(TABLES.runs.runs, SINCE)
}

/// Finished LoRaWAN runs.
pub fn run_count(db: &Store) -> Result<u64> {
    db.rows_in(TABLES.runs.runs, SINCE)
}

/// Writes one finished LoRaWAN run and its devices in one transaction. A
/// key already present is left as it is.
pub fn insert_run(
    db: &mut Store,
    key: &str,
    spec: &lorawan::RunSpec,
    replication: u32,
    result: &lorawan::RunResult,
) -> Result<()> {
    require_layout(db)?;
    let mut values: Vec<rusqlite::types::Value> = Vec::new();
    let int = |v: u64| rusqlite::types::Value::Integer(v as i64);
    values.extend(result.exchanges().map(int));
    for drops in [&result.uplink_drops, &result.downlink_drops] {
        values.extend(drops.named().map(|(_, n)| int(n)));
    }
    let r = &result.record;
    values.extend([
        int(r.uplink_frames),
        r.uplink_airtime.into(),
        r.waiting.into(),
        int(r.downlink_frames),
        int(r.rx2_downlinks),
        r.downlink_airtime.into(),
        int(r.held_downlinks),
    ]);
    let c = &result.completion;
    values.extend([c.min, c.p10, c.p25, c.p50, c.p75, c.p90, c.max].map(Into::into));
    let values: Vec<&dyn rusqlite::ToSql> =
        values.iter().map(|v| v as &dyn rusqlite::ToSql).collect();
    db.insert_run_with(
        &TABLES.runs,
        &Lorawan::run_row(key, spec, replication, result),
        (RUN_COLUMNS, &values),
        |tx, id| {
            let mut stmt = tx.prepare_cached(
                "INSERT INTO lorawan_devices VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, \
                 ?11, ?12, ?13, ?14, ?15)",
            )?;
            for d in &result.devices {
                stmt.execute(params![
                    id,
                    d.device,
                    d.distance_m,
                    d.sf,
                    d.generated as i64,
                    d.app_drops as i64,
                    d.started as i64,
                    d.completed as i64,
                    d.failed as i64,
                    d.unfinished as i64,
                    d.transmissions as i64,
                    d.retransmission_airtime,
                    d.completion_sum,
                    d.uplinks_dropped as i64,
                    d.downlinks_dropped as i64,
                ])?;
            }
            Ok(())
        },
    )
}

/// Drops from seven columns starting at `at`.
fn drops(r: &Row, at: usize) -> rusqlite::Result<Drops> {
    Ok(Drops {
        payload_too_large: u(r, at)?,
        mac_queue: u(r, at + 1)?,
        collision: u(r, at + 2)?,
        below_sensitivity: u(r, at + 3)?,
        gateway_busy: u(r, at + 4)?,
        no_window: u(r, at + 5)?,
        duty_cycle: u(r, at + 6)?,
    })
}

/// The stored result of a LoRaWAN run, if finished.
pub fn load_run(db: &Store, key: &str) -> Result<Option<lorawan::RunResult>> {
    if db.layout() < SINCE {
        return Ok(None);
    }
    let row = db.read_row(
        &format!(
            "SELECT id, duration, events, sent, delivered, dropped, in_flight, {RUN_COLUMNS} \
             FROM lorawan_runs WHERE key = ?1"
        ),
        key,
        "lorawan_runs",
        &format!("lorawan run {key}"),
        |r| {
            Ok((
                r.get::<_, i64>(0)?,
                lorawan::RunResult {
                    devices: Vec::new(),
                    uplink_drops: drops(r, 11)?,
                    downlink_drops: drops(r, 18)?,
                    record: LorawanRecord {
                        uplink_frames: u(r, 25)?,
                        uplink_airtime: r.get(26)?,
                        waiting: r.get(27)?,
                        downlink_frames: u(r, 28)?,
                        rx2_downlinks: u(r, 29)?,
                        downlink_airtime: r.get(30)?,
                        held_downlinks: u(r, 31)?,
                    },
                    completion: Percentiles {
                        min: r.get(32)?,
                        p10: r.get(33)?,
                        p25: r.get(34)?,
                        p50: r.get(35)?,
                        p75: r.get(36)?,
                        p90: r.get(37)?,
                        max: r.get(38)?,
                    },
                    duration: r.get(1)?,
                    events: u(r, 2)?,
                    conservation: Conservation {
                        sent: u(r, 3)?,
                        delivered: u(r, 4)?,
                        dropped: u(r, 5)?,
                        in_flight: u(r, 6)?,
                    },
                },
            ))
        },
    )?;
    let Some((id, mut run)) = row else {
        return Ok(None);
    };
    run.devices = db.read_rows(
        "SELECT * FROM lorawan_devices WHERE run = ?1 ORDER BY device",
        id,
        "lorawan_devices",
        &format!("lorawan run {key}"),
        |r| {
            Ok(DeviceResult {
                device: r.get(1)?,
                distance_m: r.get(2)?,
                sf: r.get(3)?,
                generated: u(r, 4)?,
                app_drops: u(r, 5)?,
                started: u(r, 6)?,
                completed: u(r, 7)?,
                failed: u(r, 8)?,
                unfinished: u(r, 9)?,
                transmissions: u(r, 10)?,
                retransmission_airtime: r.get(11)?,
                completion_sum: r.get(12)?,
                uplinks_dropped: u(r, 13)?,
                downlinks_dropped: u(r, 14)?,
            })
        },
    )?;
    Ok(Some(run))
}

/// Every LoRaWAN run has one device row per device of its network.
pub fn verify(db: &Store) -> Result<()> {
    db.check_item_rows(
        ("lorawan_runs", "lorawan_devices"),
        ("lorawan run", "device"),
        |spec: &lorawan::RunSpec| i64::from(spec.network.devices),
        |_| Ok(()),
    )
}

/// The LoRaWAN tables for [`crate::networks::dump`].
pub fn dump(db: &Store, out: &mut String) -> Result<()> {
    db.dump_queries(
        out,
        &[
            (
                "lorawan_cells",
                "SELECT * FROM lorawan_cells ORDER BY definition, idx",
            ),
            ("lorawan_runs", "SELECT * FROM lorawan_runs ORDER BY key"),
            (
                "lorawan_devices",
                "SELECT r.key, d.* FROM lorawan_devices d JOIN lorawan_runs r ON r.id = d.run \
                 ORDER BY r.key, d.device",
            ),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::networks::NetworkKind;
    use coapcc_sim::AlgorithmSpec;

    fn spec() -> lorawan::RunSpec {
        lorawan::RunSpec {
            network: coapcc_link::lorawan::Config {
                devices: 40,
                ..Default::default()
            },
            coap: Default::default(),
            workload: lorawan::Workload {
                duration_s: 900.0,
                period_s: 60.0,
                ..Default::default()
            },
            algorithm: AlgorithmSpec::named("cocoa"),
            seed: 4,
        }
    }

    #[test]
    fn a_lorawan_run_round_trips_exactly_and_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l.sqlite");
        let mut store = crate::networks::open_store(&path).unwrap();
        let result = <lorawan::Sim as coapcc_sim::SimNetwork>::run(&spec(), 0).unwrap();
        assert!(result.uplink_drops.total() + result.downlink_drops.total() > 0);
        assert!(result
            .devices
            .iter()
            .any(|d| d.retransmission_airtime > 0.0));
        assert!(load_run(&store, "k").unwrap().is_none());
        insert_run(&mut store, "k", &spec(), 0, &result).unwrap();
        insert_run(&mut store, "k", &spec(), 0, &result).unwrap();
        assert_eq!(run_count(&store).unwrap(), 1);
        assert_eq!(load_run(&store, "k").unwrap().unwrap(), result);
        assert_eq!(done_keys(&store).unwrap(), HashSet::from(["k".to_string()]));
        crate::networks::verify(&store).unwrap();
        let dump = crate::networks::dump(&store).unwrap();
        assert_eq!(
            dump.lines()
                .skip_while(|l| *l != "[lorawan_devices]")
                .skip(1)
                .take_while(|l| !l.starts_with('['))
                .count(),
            40
        );
        let kind = NetworkKind::of::<Lorawan>();
        let ok = crate::networks::check_all_digests(&store, kind).unwrap();
        assert_eq!((ok.checked, ok.unchecked, ok.altered.len()), (1, 0, 0));
        store
            .conn
            .execute(
                "UPDATE lorawan_devices SET completed = completed + 1 WHERE device = 0",
                [],
            )
            .unwrap();
        let bad = crate::networks::check_all_digests(&store, kind).unwrap();
        assert_eq!(bad.altered, vec!["k".to_string()]);
        store
            .conn
            .execute("DELETE FROM lorawan_devices WHERE device = 0", [])
            .unwrap();
        assert!(crate::networks::verify(&store).is_err());
    }
}
