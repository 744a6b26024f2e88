//! Star campaigns end to end: a small campaign runs into a store through the
//! binary, resumes computing only what is missing, gives the same store
//! whatever the thread count, stores the simulator's runs exactly; a
//! layout-2 store is upgraded in place to layout 3 without changing a row;
//! the report draws the lwIP paper's bars and time series and its tables
//! hold the values of the stored runs.

use crate::campaign_support;

use std::path::Path;

use campaign_support::{
    assert_definitions_then_upgraded_once, assert_the_one_definition,
    campaign_twice_through_the_binary, cli, col, count, csv_rows, open_upgraded, run_whole,
    section_rows, shipped, small_dumbbell, ReportPage,
};
use coapcc::campaign;
use coapcc::networks::star::campaign::StarPlan;
use coapcc::networks::star::Star;
use coapcc::networks::{AnyPlan, NetworkKind};
use coapcc::report;
use coapcc_sim::network::SimNetwork;
use coapcc_sim::star;

/// Three flavours; a "published" set of 12 stations (12 × 1024 B / 0.1 s =
/// 983 kbit/s offered, half the air's 2 Mbit/s) and a "loaded" set of 18 and
/// 24 stations, where 1.97 Mbit/s is offered, more than DCF carries at
/// 2 Mbit/s. 40 writes each, two replications.
const SMALL: &str = r#"
name = "small-star"
title = "a small star campaign"
seed = 23
algorithms = [
    { name = "tcp-lwip", label = "lwIP" },
    { name = "tcp-lwip-backoff-cwnd", label = "lwIP back-off & cwnd" },
    { name = "tcp", label = "full TCP" },
]

[network]
kind = "star"

[workload]
writes = 40
interval_s = 0.1
drain_s = 10

[[set]]
name = "published"
stations = [12]
replications = 2

[[set]]
name = "loaded"
stations = [24, 18]
replications = 2
"#;
const FLAVOURS: usize = 3;
const SMALL_RUNS: usize = 3 * FLAVOURS * 2;

fn star_plan(text: &str, origin: &str) -> StarPlan {
    AnyPlan::parse(text, origin)
        .unwrap()
        .into_inner::<Star>()
        .expect("a star campaign was taken for another kind")
}

#[test]
fn a_star_campaign_file_expands_to_its_cells_and_keys() {
    let p = star_plan(SMALL, "small.toml");
    assert_eq!(p.runs(), SMALL_RUNS);
    assert_eq!(p.distinct_keys().len(), SMALL_RUNS);
    let coords: Vec<(&str, u32, &str)> = p
        .cells
        .iter()
        .map(|c| (c.set.as_str(), c.stations, c.label.as_str()))
        .collect();
    assert_eq!(coords[0], ("published", 12, "lwIP"));
    assert_eq!(coords[3], ("loaded", 24, "lwIP"));
    assert_eq!(coords[8], ("loaded", 18, "full TCP"));
    for c in &p.cells {
        assert_eq!(c.spec.network.stations, c.stations);
        assert_eq!(c.spec.workload.writes, 40);
        assert_eq!(c.spec.workload.write_bytes, 1024, "the default");
        assert_eq!(c.spec.seed, 23);
        star::validate(&c.spec).unwrap();
    }
    // A file whose network is the star but whose set is not.
    let e = format!(
        "{:#}",
        AnyPlan::parse(
            &SMALL.replace("stations = [24, 18]", "periods_s = [8]"),
            "small.toml"
        )
        .unwrap_err()
    );
    assert!(
        e.contains("small.toml") && e.contains("unknown field `periods_s`"),
        "{e}"
    );
}

#[test]
fn a_small_star_campaign_runs_resumes_and_ignores_the_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let plan = star_plan(SMALL, "small.toml");

    // One replication first: its runs are those of replication 0 of the
    // whole campaign, which then computes only replication 1.
    let half = star_plan(
        &SMALL.replace("replications = 2", "replications = 1"),
        "small.toml",
    );
    let two = dir.path().join("two.sqlite");
    let mut store = coapcc::networks::open_store(&two).unwrap();
    let o = campaign::run(&half, &mut store, 2, None, false).unwrap();
    assert_eq!(
        (o.total, o.reused, o.computed),
        (SMALL_RUNS / 2, 0, SMALL_RUNS / 2)
    );
    let o = campaign::run(&plan, &mut store, 2, None, false).unwrap();
    assert_eq!(
        (o.total, o.reused, o.computed),
        (SMALL_RUNS, SMALL_RUNS / 2, SMALL_RUNS / 2)
    );
    let o = campaign::run(&plan, &mut store, 2, None, false).unwrap();
    assert_eq!((o.reused, o.computed), (SMALL_RUNS, 0));
    coapcc::networks::verify(&store).unwrap();
    assert_eq!(
        coapcc::networks::star::store::run_count(&store).unwrap(),
        SMALL_RUNS as u64
    );
    assert_eq!(
        coapcc::networks::dumbbell::store::run_count(&store).unwrap(),
        0,
        "no dumbbell run"
    );
    assert_eq!(
        coapcc::networks::grid::store::run_count(&store).unwrap(),
        0,
        "no grid run"
    );

    // Through the binary, one thread, then again: nothing to compute.
    let one = campaign_twice_through_the_binary(dir.path(), SMALL, SMALL_RUNS);

    // Both stores hold the same rows, whatever the threads and the order.
    let a = coapcc::networks::open_store_read_only(&one).unwrap();
    coapcc::networks::verify(&a).unwrap();
    let (da, db) = (
        coapcc::networks::dump(&a).unwrap(),
        coapcc::networks::dump(&store).unwrap(),
    );
    assert_eq!(section_rows(&da, "star_runs"), SMALL_RUNS);
    assert_eq!(section_rows(&da, "star_traces"), SMALL_RUNS);
    assert_eq!(
        section_rows(&da, "star_stations"),
        2 * FLAVOURS * (12 + 24 + 18)
    );
    assert_eq!(section_rows(&da, "star_cells"), plan.cells.len());
    // The two stores' dumps differ in their definitions (two of them in
    // `two`); the run tables must not.
    for table in ["star_runs", "star_stations", "star_traces"] {
        let section = |d: &str| -> Vec<String> {
            d.lines()
                .skip_while(|l| *l != format!("[{table}]"))
                .skip(1)
                .take_while(|l| !l.starts_with('['))
                .map(str::to_string)
                .collect()
        };
        assert!(
            section(&da) == section(&db),
            "{table}: 1 thread and 2 threads stored different rows"
        );
    }

    assert_the_one_definition(
        &a,
        &plan.definition,
        NetworkKind::of::<coapcc::networks::star::Star>(),
    );
    // Stored runs are the simulator's, exactly, traces included.
    let c = &plan.cells[4];
    let stored = coapcc::networks::star::store::load_run(&a, &c.keys[1], true)
        .unwrap()
        .unwrap();
    assert_eq!(stored, star::Sim::run(&c.spec, 1).unwrap());
}

/// What layout 2 added to layout 1, exactly as layout-2 builds created it.
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
INSERT INTO meta (key, value) VALUES ('schema', '2');
";

const GRID: &str = r#"
name = "small-grid"
seed = 11
algorithms = ["default"]
[network]
kind = "grid"
[workload]
duration_s = 30
trace_node = 36
[[set]]
name = "periodic"
periods_s = [8]
replications = 1
"#;

#[test]
fn a_layout_2_store_is_upgraded_in_place_to_layout_3_without_changing_rows() {
    let dir = tempfile::tempdir().unwrap();
    // A dumbbell and a grid campaign in a current store, for reference.
    let reference = dir.path().join("reference.sqlite");
    let mut store = coapcc::networks::open_store(&reference).unwrap();
    let dumbbell =
        coapcc::networks::dumbbell::campaign::plan::parse(&small_dumbbell("[3]"), "dumbbell.toml")
            .unwrap();
    campaign::run(&dumbbell, &mut store, 0, None, false).unwrap();
    let Some(grid) = AnyPlan::parse(GRID, "grid.toml")
        .unwrap()
        .into_inner::<coapcc::networks::grid::Grid>()
    else {
        panic!("a grid campaign");
    };
    campaign::run(&grid, &mut store, 0, None, false).unwrap();
    let want = coapcc::networks::dump(&store).unwrap();
    assert_eq!(section_rows(&want, "grid_runs"), 1);
    drop(store);

    // The same rows in a store created with layout 2's SQL.
    let old = dir.path().join("old.sqlite");
    {
        let conn = rusqlite::Connection::open(&old).unwrap();
        conn.execute_batch(&coapcc::store::layout::adds(
            1,
            coapcc::networks::store_tables(),
        ))
        .unwrap();
        conn.execute_batch(LAYOUT_2_ADDS).unwrap();
        conn.execute("ATTACH DATABASE ?1 AS r", [reference.to_str().unwrap()])
            .unwrap();
        conn.execute_batch(
            "INSERT INTO definitions SELECT * FROM r.definitions;
             INSERT INTO cells SELECT * FROM r.cells;
             INSERT INTO runs SELECT * FROM r.runs;
             INSERT INTO clients SELECT * FROM r.clients;
             INSERT INTO grid_cells SELECT * FROM r.grid_cells;
             INSERT INTO grid_runs SELECT * FROM r.grid_runs;
             INSERT INTO grid_nodes SELECT * FROM r.grid_nodes;
             INSERT INTO grid_traces SELECT * FROM r.grid_traces;
             DETACH DATABASE r;",
        )
        .unwrap();
    }
    let star_tables = |p: &Path| -> i64 {
        rusqlite::Connection::open(p)
            .unwrap()
            .query_row(
                "SELECT COUNT(*) FROM sqlite_master WHERE name LIKE 'star_%'",
                [],
                |r| r.get(0),
            )
            .unwrap()
    };

    // Read-only, it is read as it is: no star runs, its grid definition
    // (the one run last) reportable.
    let ro = coapcc::networks::open_store_read_only(&old).unwrap();
    assert_eq!(ro.layout(), 2);
    assert!(coapcc::networks::star::store::done_keys(&ro)
        .unwrap()
        .is_empty());
    assert_eq!(coapcc::networks::star::store::run_count(&ro).unwrap(), 0);
    let (def, others) = report::choose(&ro, None).unwrap();
    assert_eq!(def.network, "grid");
    let r = coapcc::networks::grid::report::data::gather(&ro, def, others).unwrap();
    assert_eq!(r.progress(), (1, 1));
    drop(ro);
    assert_eq!(star_tables(&old), 0, "read-only leaves it as it is");

    // Opened for writing, it is upgraded and holds the same rows.
    let mut up = open_upgraded(&old, 2, &want);
    assert_eq!(star_tables(&old), 4);
    // It resumes the old campaigns without computing anything …
    let o = campaign::run(&dumbbell, &mut up, 0, None, false).unwrap();
    assert_eq!((o.reused, o.computed), (dumbbell.runs(), 0));
    let o = campaign::run(&grid, &mut up, 0, None, false).unwrap();
    assert_eq!((o.reused, o.computed), (1, 0));
    // … and takes a star campaign beside them.
    let star = star_plan(
        &SMALL
            .replace("replications = 2", "replications = 1")
            .replace("stations = [24, 18]", "stations = [6]"),
        "small.toml",
    );
    let o = campaign::run(&star, &mut up, 0, None, false).unwrap();
    assert_eq!(o.computed, star.runs());
    coapcc::networks::verify(&up).unwrap();
    assert_definitions_then_upgraded_once(up, &old, &["star", "grid", "dumbbell"]);
}

#[test]
fn the_report_of_a_star_campaign_draws_the_papers_figures_from_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("small.toml");
    std::fs::write(&file, SMALL).unwrap();
    let path = dir.path().join("s.sqlite");
    let (f, s) = (file.to_str().unwrap(), path.to_str().unwrap());
    cli(&["campaign", f, "--store", s]);
    let out = dir.path().join("report");
    let printed = cli(&["report", s, "--out", out.to_str().unwrap()]);
    // Bars: 3 station counts × 4 metrics; the loaded set against the
    // stations: 4; time series at 12 (published) and 24 (loaded, the point
    // nearest 60): 4 variables × (one client, mean) + cwnd's first 50 s × 2.
    assert!(
        printed.contains(&format!(
            "{SMALL_RUNS}/{SMALL_RUNS} runs): {} (36 figures, 2 tables)",
            out.join("report.html").display()
        )),
        "{printed}"
    );
    let page = ReportPage::read(&out);
    let (html, svg) = (&page.html, |name: &str| page.svg(name));

    let st = coapcc::networks::open_store_read_only(&path).unwrap();
    let plan = star_plan(SMALL, "small.toml");
    let summary = |set: &str, stations: u32, label: &str| -> star::Summary {
        let c = plan
            .cells
            .iter()
            .find(|c| c.set == set && c.stations == stations && c.label == label)
            .unwrap();
        let runs: Vec<_> = c
            .keys
            .iter()
            .map(|k| {
                coapcc::networks::star::store::load_run(&st, k, true)
                    .unwrap()
                    .unwrap()
            })
            .collect();
        star::Summary::of(label, &c.spec, &runs)
    };

    // Bars: a bar per flavour, an error bar where the replications differ.
    for (file, title) in [
        (
            "published-12-goodput.svg",
            "Goodput at the AP · published · 12 stations",
        ),
        (
            "published-12-retransmissions.svg",
            "Retransmitted segments · published · 12 stations",
        ),
        (
            "loaded-24-timeouts.svg",
            "Retransmission timeouts · loaded · 24 stations",
        ),
        (
            "loaded-18-max-rto.svg",
            "Largest RTO · loaded · 18 stations",
        ),
    ] {
        let s = svg(file);
        assert!(s.contains(title), "{file}: {title}");
        assert_eq!(count(&s, "class=\"bar\""), FLAVOURS, "{file}");
    }
    let lwip = summary("loaded", 24, "lwIP");
    let goodput = svg("loaded-24-goodput.svg");
    let tip = format!(
        "lwIP: {} ± {}",
        (lwip.goodput_bps.mean * 1e-3 * 1000.0).round() / 1000.0,
        (lwip.goodput_bps.ci95 * 1e-3 * 1000.0).round() / 1000.0
    );
    assert!(goodput.contains(&tip), "{tip}");
    // At 24 stations the air is saturated: segments are lost and resent.
    let resent: f64 = ["lwIP", "lwIP back-off & cwnd", "full TCP"]
        .iter()
        .map(|l| summary("loaded", 24, l).retransmissions.mean)
        .sum();
    assert!(resent > 0.0, "nothing resent at 24 stations");

    // Against the stations: one line per flavour (and the offered load on
    // the goodput), a point per station count.
    let sweep = svg("loaded-goodput.svg");
    assert_eq!(count(&sweep, "class=\"series\""), FLAVOURS + 1);
    assert_eq!(count(&sweep, "class=\"pt\""), (FLAVOURS + 1) * 2);
    assert!(sweep.contains("offered load"));
    assert!(!out.join("published-goodput.svg").exists(), "one point");

    // Time series: one trace per flavour, station 1 and the mean.
    for (file, title) in [
        (
            "published-12-cwnd-one.svg",
            "cwnd · station 1, replication 0 · 12 stations",
        ),
        (
            "published-12-rto-mean.svg",
            "RTO · mean over stations and replications · 12 stations",
        ),
        (
            "loaded-24-rtt-mean.svg",
            "RTT · mean over stations and replications · 24 stations",
        ),
        (
            "loaded-24-cwnd-one-50s.svg",
            "cwnd, first 50 s · station 1, replication 0 · 24 stations",
        ),
    ] {
        let s = svg(file);
        assert!(s.contains(title), "{file}: {title}");
        assert_eq!(count(&s, "class=\"trace\""), FLAVOURS, "{file}");
    }

    // Self-contained, with its headings.
    page.assert_self_contained_with(
        &plan.definition,
        &[
            "Set <code>published</code>",
            "Set <code>loaded</code>",
            "<h3>24 stations</h3>",
            "Against the number of stations",
            "cwnd, ssthresh, RTO and RTT over time",
            "<h3>published · 12 stations</h3>",
            "<p>12 stations around one 802.11 access point at 2 Mbit/s",
            "<p>18 or 24 stations around one 802.11 access point",
            "every 0.1 s, 40 times, over TCP with MSS 536; 2 replications",
        ],
    );

    // The points table: one row per bar, holding star::Summary's values for
    // the stored runs, in the page as in its CSV file.
    let points = csv_rows(&out.join("star-points.csv"));
    assert_eq!(points.len(), 1 + 3 * FLAVOURS);
    let h = &points[0];
    // Sets in order, station counts ascending, flavours in campaign order.
    let order: Vec<(&str, &str, &str)> = points[1..]
        .iter()
        .map(|r| (r[0].as_str(), r[1].as_str(), r[2].as_str()))
        .collect();
    assert_eq!(order[0], ("published", "12", "lwIP"));
    assert_eq!(order[3], ("loaded", "18", "lwIP"));
    assert_eq!(order[8], ("loaded", "24", "full TCP"));
    let f3 = |v: f64| format!("{v:.3}");
    for row in &points[1..] {
        let s = summary(&row[0], row[1].parse().unwrap(), &row[2]);
        for (column, want) in [
            ("replications", "2".to_string()),
            ("offered (kbit/s)", f3(s.offered_bps * 1e-3)),
            ("goodput (kbit/s)", f3(s.goodput_bps.mean * 1e-3)),
            ("goodput (kbit/s) ±95%", f3(s.goodput_bps.ci95 * 1e-3)),
            ("retransmitted segments/run", f3(s.retransmissions.mean)),
            (
                "retransmitted segments/run ±95%",
                f3(s.retransmissions.ci95),
            ),
            ("timeouts/run", f3(s.timeouts.mean)),
            ("largest RTO (s)", f3(s.max_rto.mean)),
            ("stations done/run", f3(s.complete_stations.mean)),
            ("queue drops/run", f3(s.queue_drops.mean)),
            ("medium busy (%)", f3(100.0 * s.utilisation.mean)),
        ] {
            assert_eq!(row[col(h, column)], want, "{row:?}: {column}");
        }
        let tr: String = row
            .iter()
            .map(|v| {
                if v.parse::<f64>().is_ok() {
                    format!("<td class=\"n\">{v}</td>")
                } else {
                    format!("<td>{}</td>", v.replace('&', "&amp;"))
                }
            })
            .collect();
        assert!(
            html.contains(&format!("<tr>{tr}</tr>")),
            "row {row:?} is not in the page"
        );
    }
    // 12 stations × 1024 B / 0.1 s, checked by hand.
    assert_eq!(points[1][col(h, "offered (kbit/s)")], "983.040");

    // The series table: every sample drawn — station 1 of replication 0
    // and one mean per sample time, per flavour at both points.
    let series = csv_rows(&out.join("star-series.csv"));
    let mut want = 0;
    for (set, n) in [("published", 12), ("loaded", 24)] {
        for l in ["lwIP", "lwIP back-off & cwnd", "full TCP"] {
            let s = summary(set, n, l);
            assert!(!s.one_station.is_empty() && !s.mean.is_empty());
            want += s.one_station.len() + s.mean.len();
        }
    }
    assert_eq!(series.len(), 1 + want);
    let sh = &series[0];
    let first = series
        .iter()
        .find(|r| r[0] == "loaded" && r[2] == "full TCP" && r[3] == "station 1")
        .unwrap();
    let s = summary("loaded", 24, "full TCP");
    assert_eq!(first[col(sh, "t (s)")], format!("{}", s.one_station[0].t));
    assert_eq!(
        first[col(sh, "cwnd (bytes)")],
        format!("{}", s.one_station[0].cwnd as f64)
    );
    assert_eq!(
        first[col(sh, "RTO (s)")],
        format!("{}", s.one_station[0].rto)
    );
}

#[test]
fn the_shipped_lwip_campaign_expands() {
    let Some(p) = shipped("lwip.toml").into_inner::<Star>() else {
        panic!("lwip.toml is a star campaign");
    };
    // (1 published + 5 loaded station counts) × 5 flavours × 10 replications.
    assert_eq!(p.cells.len(), 6 * 5);
    assert_eq!(p.runs(), 6 * 5 * 10);
    assert_eq!(p.distinct_keys().len(), p.runs());
    let labels: Vec<&str> = p.cells[..5].iter().map(|c| c.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "lwIP",
            "lwIP back-off",
            "lwIP cwnd",
            "lwIP back-off & cwnd",
            "full TCP"
        ]
    );
    let names: Vec<&str> = p.cells[..5]
        .iter()
        .map(|c| c.spec.algorithm.name.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "tcp-lwip",
            "tcp-lwip-backoff",
            "tcp-lwip-cwnd",
            "tcp-lwip-backoff-cwnd",
            "tcp"
        ]
    );
    // The published star: 12 stations, the paper's workload.
    let first = &p.cells[0];
    assert_eq!((first.set.as_str(), first.stations), ("published", 12));
    assert_eq!(first.spec.workload, star::Workload::default());
    assert_eq!(first.spec.seed, 2023);
    let mut net = first.spec.network.clone();
    net.stations = coapcc_link::star::Config::default().stations;
    assert_eq!(net, coapcc_link::star::Config::default());
    let loaded: Vec<u32> = p
        .cells
        .iter()
        .filter(|c| c.set == "loaded")
        .map(|c| c.stations)
        .step_by(5)
        .collect();
    assert_eq!(loaded, [24, 36, 48, 60, 72]);
}

/// The whole lwIP campaign (300 runs, about a minute of CPU in a release
/// build): `cargo test --release -p coapcc --test suite star_campaign:: -- --ignored`.
#[test]
#[ignore]
fn the_lwip_campaign_runs_whole() {
    let Some(plan) = shipped("lwip.toml").into_inner::<Star>() else {
        panic!("lwip.toml is a star campaign");
    };
    let (dir, store) = run_whole(&plan, "lwip", plan.runs());
    let (def, others) = report::choose(&store, None).unwrap();
    let r = coapcc::networks::star::report::data::gather(&store, def, others).unwrap();
    assert_eq!(r.progress().0, plan.runs() as u64);
    let get = |set: &str, n: u32, label: &str| &r.cell(set, n, label).unwrap().summary;
    // The published star is not congested: every flavour carries the
    // offered load and resends nothing.
    for c in r.cells.iter().filter(|c| c.cell.set == "published") {
        let s = &c.summary;
        assert!(
            (s.goodput_bps.mean - s.offered_bps).abs() < 0.001 * s.offered_bps,
            "{}: goodput {} of {}",
            c.cell.label,
            s.goodput_bps.mean,
            s.offered_bps
        );
        assert_eq!(s.retransmissions.mean, 0.0, "{}", c.cell.label);
    }
    // docs/spec/calibration-spec.md §3, first phenomenon: where the star saturates, the
    // back-off rule keeps the largest RTO far (here: at least halved) below
    // lwIP's, alone and with the cwnd rule.
    for n in [48, 60, 72] {
        for (variant, base) in [
            ("lwIP back-off", "lwIP"),
            ("lwIP back-off & cwnd", "lwIP cwnd"),
        ] {
            let (v, b) = (get("loaded", n, variant), get("loaded", n, base));
            assert!(
                v.max_rto.mean < 0.5 * b.max_rto.mean,
                "{n} stations: {variant} {} s, {base} {} s",
                v.max_rto.mean,
                b.max_rto.mean
            );
        }
    }
    let w = coapcc::networks::star::report::write(&r, &dir.path().join("report")).unwrap();
    // Bars: 6 points × 4; sweeps: 4 (loaded); series at 12 and 60: 2 × 10.
    assert_eq!(w.svgs.len(), 6 * 4 + 4 + 2 * 10);
}
