//! Grid campaigns end to end: the file expands to the expected cells and keys
//! (and bad files are refused with file, field and expectation), a small
//! campaign runs into a store, resumes without computing anything and gives
//! the same store whatever the thread count, a layout-1 store is upgraded in
//! place without losing a run, and the report draws the pCoCoA paper's
//! figures with the values the simulator gives.

use crate::campaign_support;

use campaign_support::{
    assert_definitions_then_upgraded_once, assert_the_one_definition,
    campaign_twice_through_the_binary, cli, col, count, csv_rows, open_upgraded, run_whole,
    section_rows, shipped, small_dumbbell, ReportPage,
};
use coapcc::campaign;
use coapcc::key::run_key;
use coapcc::networks::grid::campaign::GridPlan;
use coapcc::networks::grid::Grid;
use coapcc::networks::{AnyPlan, NetworkKind};
use coapcc::report;
use coapcc_sim::grid;
use coapcc_sim::network::SimNetwork;

/// 2 periods × 2 algorithms × 2 replications of 60 s, and a bursty set of
/// 2 ON durations × 2 algorithms × 1 replication of 100 s.
const SMALL: &str = r#"
name = "small-grid"
title = "a small grid campaign"
seed = 11
algorithms = ["default", "pcocoa"]

[network]
kind = "grid"

[workload]
period_s = 14
duration_s = 60
off_s = 30
trace_node = 36

[[set]]
name = "periodic"
periods_s = [8, 2]
replications = 2

[[set]]
name = "bursty"
on_s = [10, 40]
duration_s = 100
replications = 1
"#;
const SMALL_RUNS: usize = 2 * 2 * 2 + 2 * 2;

fn grid_plan(text: &str, origin: &str) -> GridPlan {
    let plan = AnyPlan::parse(text, origin).unwrap();
    let network = plan.network();
    plan.into_inner::<Grid>()
        .unwrap_or_else(|| panic!("a grid campaign was taken for a {network} one"))
}

#[test]
fn a_grid_campaign_file_expands_to_its_cells_and_keys() {
    let p = grid_plan(SMALL, "small.toml");
    assert_eq!(p.runs(), SMALL_RUNS);
    assert_eq!(p.distinct_keys().len(), SMALL_RUNS);
    let coords: Vec<(&str, f64, &str)> = p
        .cells
        .iter()
        .map(|c| (c.set.as_str(), c.point, c.label.as_str()))
        .collect();
    assert_eq!(
        coords,
        [
            ("periodic", 8.0, "default"),
            ("periodic", 8.0, "pcocoa"),
            ("periodic", 2.0, "default"),
            ("periodic", 2.0, "pcocoa"),
            ("bursty", 10.0, "default"),
            ("bursty", 10.0, "pcocoa"),
            ("bursty", 40.0, "default"),
            ("bursty", 40.0, "pcocoa"),
        ]
    );
    for c in &p.cells {
        // Keys are the dumbbell's key function over the grid run spec.
        let want: Vec<String> = (0..c.keys.len() as u32)
            .map(|r| run_key(&c.spec, r))
            .collect();
        assert_eq!(c.keys, want);
        assert_eq!(c.spec.seed, 11);
        assert_eq!(c.spec.workload.trace_node, Some(36));
        grid::validate(&c.spec).unwrap();
    }
    // Bare names: the paper's settings.
    assert_eq!(p.cells[0].spec.algorithm.ack_timeout, Some(3.0));
    assert_eq!(p.cells[1].spec.algorithm.ack_timeout, None);
    let b = &p.cells[6].spec.workload;
    assert_eq!(
        (b.kind, b.on_s, b.off_s, b.period_s, b.duration_s),
        (grid::WorkloadKind::Bursty, 40.0, 30.0, 14.0, 100.0)
    );
    let w = &p.cells[2].spec.workload;
    assert_eq!(
        (w.kind, w.period_s, w.duration_s),
        (grid::WorkloadKind::Periodic, 2.0, 60.0)
    );
}

#[test]
fn bad_grid_campaign_files_name_file_field_and_expectation() {
    for (from, to, wants) in [
        // An unknown field in a set.
        (
            "periods_s = [8, 2]",
            "periods = [8, 2]",
            &["small.toml", "unknown field `periods`", "periods_s"][..],
        ),
        // An unknown field at the top (a dumbbell field).
        (
            "seed = 11",
            "seed = 11\nclients = [10]",
            &["small.toml", "unknown field `clients`"][..],
        ),
        // A bad value of a network field.
        (
            "kind = \"grid\"",
            "kind = \"grid\"\nmac = \"wifi\"",
            &["small.toml", "wifi", "contiki", "ieee802154"][..],
        ),
        // A set that sweeps both.
        (
            "on_s = [10, 40]",
            "on_s = [10, 40]\nperiods_s = [1]",
            &["small.toml", "set `bursty`", "exactly one of `periods_s`"][..],
        ),
        // A point the runs reject.
        (
            "periods_s = [8, 2]",
            "periods_s = [8, 0]",
            &[
                "small.toml",
                "set `periodic`",
                "periods_s: expected positive durations in seconds, found 0",
            ][..],
        ),
        // A trace node that is not a client.
        (
            "trace_node = 36",
            "trace_node = 37",
            &["small.toml", "workload.trace_node: node 37 is not a client"][..],
        ),
        // An unknown algorithm.
        (
            "\"pcocoa\"]",
            "\"pcocoa\", \"tcp\"]",
            &["small.toml", "algorithm: ", "tcp"][..],
        ),
    ] {
        assert!(SMALL.contains(from), "{from}");
        let text = SMALL.replacen(from, to, 1);
        let e = format!("{:#}", AnyPlan::parse(&text, "small.toml").unwrap_err());
        for want in wants {
            assert!(e.contains(want), "`{want}` not in: {e}");
        }
    }
    // A file whose network kind is none of the registry's.
    let e = format!(
        "{:#}",
        AnyPlan::parse(
            &SMALL.replace("kind = \"grid\"", "kind = \"mesh\""),
            "small.toml"
        )
        .unwrap_err()
    );
    assert!(
        e.contains("small.toml")
            && e.contains(
                "network.kind: expected \"dumbbell\", \"grid\", \"star\" or \"lorawan\", found \"mesh\""
            ),
        "{e}"
    );
}

#[test]
fn a_small_grid_campaign_runs_resumes_and_ignores_the_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let one = campaign_twice_through_the_binary(dir.path(), SMALL, SMALL_RUNS);

    let plan = grid_plan(SMALL, "small.toml");
    let two = dir.path().join("two.sqlite");
    let mut store = coapcc::networks::open_store(&two).unwrap();
    let o = campaign::run(&plan, &mut store, 2, None, false).unwrap();
    assert_eq!((o.total, o.reused, o.computed), (SMALL_RUNS, 0, SMALL_RUNS));
    let o = campaign::run(&plan, &mut store, 2, None, false).unwrap();
    assert_eq!((o.reused, o.computed), (SMALL_RUNS, 0));
    coapcc::networks::verify(&store).unwrap();
    assert_eq!(
        coapcc::networks::grid::store::run_count(&store).unwrap(),
        SMALL_RUNS as u64
    );
    assert_eq!(
        coapcc::networks::dumbbell::store::run_count(&store).unwrap(),
        0,
        "no dumbbell run"
    );

    let a = coapcc::networks::open_store_read_only(&one).unwrap();
    coapcc::networks::verify(&a).unwrap();
    let (da, db) = (
        coapcc::networks::dump(&a).unwrap(),
        coapcc::networks::dump(&store).unwrap(),
    );
    assert_eq!(section_rows(&da, "grid_runs"), SMALL_RUNS);
    assert_eq!(section_rows(&da, "grid_nodes"), SMALL_RUNS * 36);
    assert_eq!(section_rows(&da, "grid_cells"), plan.cells.len());
    assert!(section_rows(&da, "grid_traces") > 0, "node 36 is traced");
    assert!(da == db, "1 thread and 2 threads stored different rows");

    assert_the_one_definition(
        &a,
        &plan.definition,
        NetworkKind::of::<coapcc::networks::grid::Grid>(),
    );
    // Stored runs are the simulator's, exactly.
    let c = &plan.cells[3];
    let stored = coapcc::networks::grid::store::load_run(&a, &c.keys[1], true)
        .unwrap()
        .unwrap();
    assert_eq!(stored, grid::Sim::run(&c.spec, 1).unwrap());
}

/// The tables exactly as layout-1 builds of coapcc created them.
const LAYOUT_1_SQL: &str = "
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
INSERT INTO meta (key, value) VALUES ('schema', '1');
";

#[test]
fn a_layout_1_store_is_upgraded_in_place_without_losing_runs() {
    let dir = tempfile::tempdir().unwrap();
    // The dumbbell campaign in a current store, for reference.
    let plan = coapcc::networks::dumbbell::campaign::plan::parse(
        &small_dumbbell("[3, 6]"),
        "dumbbell.toml",
    )
    .unwrap();
    let reference = dir.path().join("reference.sqlite");
    let mut store = coapcc::networks::open_store(&reference).unwrap();
    campaign::run(&plan, &mut store, 0, None, false).unwrap();
    let want = coapcc::networks::dump(&store).unwrap();
    drop(store);

    // The same rows in a store created with layout 1's SQL.
    let old = dir.path().join("old.sqlite");
    {
        let conn = rusqlite::Connection::open(&old).unwrap();
        conn.execute_batch(LAYOUT_1_SQL).unwrap();
        conn.execute("ATTACH DATABASE ?1 AS r", [reference.to_str().unwrap()])
            .unwrap();
        conn.execute_batch(
            "INSERT INTO definitions SELECT hash, name, title, description, source, text, \
             model_version, skipped, runs, first_seen, last_run, seq FROM r.definitions;
             INSERT INTO cells SELECT * FROM r.cells;
             INSERT INTO runs SELECT * FROM r.runs;
             INSERT INTO clients SELECT * FROM r.clients;
             DETACH DATABASE r;",
        )
        .unwrap();
    }

    // Read-only, it is read as it is: a dumbbell definition, reportable.
    let ro = coapcc::networks::open_store_read_only(&old).unwrap();
    assert_eq!(ro.layout(), 1);
    assert_eq!(
        coapcc::networks::dumbbell::store::run_count(&ro).unwrap(),
        plan.runs() as u64
    );
    let (def, others) = report::choose(&ro, None).unwrap();
    assert_eq!(def.network, "dumbbell");
    let r = coapcc::networks::dumbbell::report::data::gather(&ro, def, others).unwrap();
    assert_eq!(r.progress(), (plan.runs() as u64, plan.runs() as u64));
    assert!(coapcc::networks::grid::store::done_keys(&ro)
        .unwrap()
        .is_empty());
    drop(ro);

    // Opened for writing, it is upgraded and holds the same rows.
    let mut up = open_upgraded(&old, 1, &want);
    let o = campaign::run(&plan, &mut up, 0, None, false).unwrap();
    assert_eq!((o.reused, o.computed), (plan.runs(), 0));
    // And takes grid campaigns beside its dumbbell one.
    let grid = grid_plan(
        &SMALL.replace("replications = 2", "replications = 1"),
        "small.toml",
    );
    let o = campaign::run(&grid, &mut up, 0, None, false).unwrap();
    assert_eq!(o.computed, grid.runs());
    assert_definitions_then_upgraded_once(up, &old, &["grid", "dumbbell"]);
}

#[test]
fn a_store_of_an_unknown_layout_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("future.sqlite");
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(&LAYOUT_1_SQL.replace("'schema', '1'", "'schema', '99'"))
            .unwrap();
    }
    for e in [
        coapcc::networks::open_store(&path).err().unwrap(),
        coapcc::networks::open_store_read_only(&path).err().unwrap(),
    ] {
        let e = format!("{e:#}");
        assert!(
            e.contains("future.sqlite") && e.contains("layout 99"),
            "{e}"
        );
    }
    let conn = rusqlite::Connection::open(&path).unwrap();
    let grid_tables: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM sqlite_master WHERE name LIKE 'grid_%'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(grid_tables, 0, "nothing written to a refused store");
}

#[test]
fn the_report_of_a_grid_campaign_draws_the_papers_figures() {
    let dir = tempfile::tempdir().unwrap();
    let plan = grid_plan(SMALL, "small.toml");
    let path = dir.path().join("s.sqlite");
    let mut store = coapcc::networks::open_store(&path).unwrap();
    campaign::run(&plan, &mut store, 0, None, false).unwrap();
    drop(store);
    let out = dir.path().join("report");
    let printed = cli(&[
        "report",
        path.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(printed.contains("(15 figures, 4 tables)"), "{printed}");
    let page = ReportPage::read(&out);
    let svg = |name: &str| page.svg(name);

    // Periodic: one series per algorithm, a point and an error bar per period.
    for (file, title, series) in [
        ("periodic-carried.svg", "Carried load · periodic", 4),
        (
            "periodic-tx.svg",
            "Transmissions per transaction · periodic",
            2,
        ),
        ("periodic-acks.svg", "ACKs per transaction · periodic", 2),
        (
            "periodic-overflows.svg",
            "MAC buffer overflows · periodic",
            2,
        ),
        ("periodic-mac-drops.svg", "MAC drops · periodic", 2),
        ("bursty-tx.svg", "Transmissions per transaction · bursty", 2),
        ("bursty-carried.svg", "Carried load · bursty", 2),
    ] {
        let s = svg(file);
        assert!(s.contains(title), "{file}: {title}");
        assert_eq!(count(&s, "class=\"series\""), series, "{file}");
        assert_eq!(count(&s, "class=\"pt\""), series * 2, "{file}");
    }
    let carried = svg("periodic-carried.svg");
    assert_eq!(count(&carried, "class=\"diagonal\""), 1, "y = x");
    assert!(carried.contains("default: actual offered") && carried.contains("pcocoa: carried"));
    assert!(
        count(&carried, "class=\"err\"") >= 4,
        "2 replications: error bars"
    );
    assert!(carried.contains("nominal offered load (B/s, log scale)"));
    // One replication per bursty point: no confidence interval to draw.
    assert_eq!(count(&svg("bursty-tx.svg"), "class=\"err\""), 0);

    // Per-node maps at the periods nearest 16, 8, 4, 1 s: 8 and 2.
    for t in ["8", "2"] {
        for alg in ["default", "pcocoa"] {
            let s = svg(&format!("periodic-nodes-t{t}-{alg}.svg"));
            assert!(s.contains(&format!("{alg} · T = {t} s")));
            assert_eq!(count(&s, "class=\"node\""), 36);
            assert!(s.contains(">BR<") && s.contains(">S<"));
            // Traces at the periods nearest 8 and 2 s.
            let s = svg(&format!("periodic-trace-t{t}-{alg}.svg"));
            assert!(s.contains(&format!("{alg} · node 36 · T = {t} s · replication 0")));
            assert_eq!(count(&s, "class=\"series\""), 3);
        }
    }

    // Self-contained, with its headings.
    page.assert_self_contained_with(
        &plan.definition,
        &[
            "Periodic sweep <code>periodic</code>",
            "Bursty sweep <code>bursty</code>",
            "Carried load per node",
            "RTO and RTT of node 36",
        ],
    );

    // CSV: one row per plotted point, holding grid::Summary's values for the runs.
    let periodic = csv_rows(&out.join("grid-periodic.csv"));
    assert_eq!(periodic.len(), 1 + 2 * 2);
    let h = &periodic[0];
    let row = periodic
        .iter()
        .find(|r| r[1] == "pcocoa" && r[2] == "8")
        .expect("pcocoa at T = 8 s");
    let cell = plan
        .cells
        .iter()
        .find(|c| c.set == "periodic" && c.point == 8.0 && c.label == "pcocoa")
        .unwrap();
    let runs: Vec<_> = (0..2)
        .map(|r| grid::Sim::run(&cell.spec, r).unwrap())
        .collect();
    let s = grid::Summary::of("pcocoa", &cell.spec, &runs);
    assert_eq!(row[col(h, "replications")], "2");
    assert_eq!(
        row[col(h, "nominal offered (B/s)")],
        format!("{:.3}", s.offered)
    );
    assert_eq!(
        row[col(h, "carried (B/s)")],
        format!("{:.3}", s.carried.mean)
    );
    assert_eq!(
        row[col(h, "carried (B/s) ±95%")],
        format!("{:.3}", s.carried.ci95)
    );
    assert_eq!(
        row[col(h, "tx/transaction")],
        format!("{:.3}", s.tx_per_transaction.mean)
    );
    // Rows by period ascending within an algorithm.
    assert_eq!(periodic[1][2], "2");
    assert_eq!(periodic[2][2], "8");
    let bursty = csv_rows(&out.join("grid-bursty.csv"));
    assert_eq!(bursty.len(), 1 + 2 * 2);
    assert_eq!(bursty[1][..6], ["bursty", "default", "10", "30", "14", "1"]);
    let nodes = csv_rows(&out.join("grid-nodes.csv"));
    assert_eq!(nodes.len(), 1 + 2 * 2 * 36);
    let traces = csv_rows(&out.join("grid-traces.csv"));
    let stored: usize = {
        let st = coapcc::networks::open_store_read_only(&path).unwrap();
        plan.cells
            .iter()
            .filter(|c| c.set == "periodic")
            .map(|c| {
                coapcc::networks::grid::store::load_run(&st, &c.keys[0], true)
                    .unwrap()
                    .unwrap()
                    .trace
                    .len()
            })
            .sum()
    };
    assert_eq!(
        traces.len(),
        1 + stored,
        "every traced sample of replication 0"
    );
}

#[test]
fn the_shipped_pcocoa_campaign_expands() {
    let Some(p) = shipped("pcocoa.toml").into_inner::<Grid>() else {
        panic!("pcocoa.toml is a grid campaign");
    };
    // (16 periods + 8 ON durations) × 5 algorithms × 12 replications.
    assert_eq!(p.cells.len(), (16 + 8) * 5);
    assert_eq!(p.runs(), (16 + 8) * 5 * 12);
    assert_eq!(p.distinct_keys().len(), p.runs());
    let first = &p.cells[0];
    assert_eq!((first.point, first.label.as_str()), (0.5, "default"));
    assert_eq!(first.spec.algorithm.ack_timeout, Some(3.0));
    assert_eq!(first.spec.workload.duration_s, 800.0);
    assert_eq!(first.spec.workload.trace_node, Some(36));
    assert_eq!(first.spec.network, coapcc_link::grid::Config::default());
    let labels: Vec<&str> = p.cells[..5].iter().map(|c| c.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "default",
            "cocoa-plus",
            "4-state-strong",
            "cocoa-e",
            "pcocoa"
        ]
    );
    let bursty: Vec<_> = p.cells.iter().filter(|c| c.set == "bursty").collect();
    assert_eq!(bursty.len(), 40);
    for c in bursty {
        let w = &c.spec.workload;
        assert_eq!(
            (w.kind, w.off_s, w.period_s, w.duration_s),
            (grid::WorkloadKind::Bursty, 120.0, 14.0, 1000.0)
        );
        assert_eq!(w.interferers, [2, 8, 15, 32, 34]);
    }
}

/// The whole pCoCoA campaign (about 20 s on 2 cores; see docs/campaigns.md):
/// `cargo test --release -p coapcc --test suite grid_campaign:: -- --ignored`.
#[test]
#[ignore]
fn the_pcocoa_campaign_runs_whole() {
    let Some(plan) = shipped("pcocoa.toml").into_inner::<Grid>() else {
        panic!("pcocoa.toml is a grid campaign");
    };
    let (dir, store) = run_whole(&plan, "pcocoa", plan.runs());
    let (def, others) = report::choose(&store, None).unwrap();
    let r = coapcc::networks::grid::report::data::gather(&store, def, others).unwrap();
    assert_eq!(r.progress().0, plan.runs() as u64);
    // docs/spec/calibration-spec.md §3: carried load follows the offered load while nothing
    // is congested (T ≥ 12 s) and stops growing linearly near 380 B/s.
    for c in &r.cells {
        if c.cell.set == "periodic" && c.cell.point >= 12.0 {
            let s = &c.summary;
            assert!(
                (s.carried.mean - s.offered).abs() < 0.05 * s.offered,
                "{} at T = {}: carried {} of {}",
                c.cell.label,
                c.cell.point,
                s.carried.mean,
                s.offered
            );
        }
        if c.cell.set == "periodic" && c.cell.point <= 1.0 {
            assert!(c.summary.carried.mean < 0.25 * c.summary.offered);
        }
    }
    let w = coapcc::networks::grid::report::write(&r, &dir.path().join("report")).unwrap();
    assert_eq!(w.svgs.len(), 5 + 4 * 5 + 2 * 5 + 2);
}
