//! LoRaWAN campaigns end to end: a small campaign runs into a store beside
//! another network's runs, is interrupted and resumed computing only what is
//! missing, stores the simulator's runs exactly, and gives its report; and
//! the shipped scenario through `coapcc run`, with one device: the
//! completion time is the hand-computed uplink, RX1 delay and downlink.

use crate::campaign_support;

use campaign_support::{cli, col, csv_rows};
use coapcc::campaign;
use coapcc::networks::lorawan::campaign::LorawanPlan;
use coapcc::networks::lorawan::{self, Lorawan};
use coapcc::networks::AnyPlan;
use coapcc::report;
use coapcc_sim::network::SimNetwork;

/// Two algorithms × 20 and 60 devices × T = 60 s, two replications of
/// 600 s.
const SMALL: &str = r#"
name = "small-lorawan"
title = "a small LoRaWAN campaign"
seed = 5
algorithms = ["default", "cocoa"]

[network]
kind = "lorawan"
radius_m = 3000.0

[workload]
duration_s = 600

[[set]]
name = "load"
devices = [20, 60]
periods_s = [60]
replications = 2
"#;
const SMALL_RUNS: usize = 2 * 2 * 2;

fn plan(text: &str) -> LorawanPlan {
    AnyPlan::parse(text, "small.toml")
        .unwrap()
        .into_inner::<Lorawan>()
        .expect("a LoRaWAN campaign was taken for another kind")
}

#[test]
fn a_small_lorawan_campaign_runs_resumes_beside_a_grid_run_and_reports() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.sqlite");
    let mut store = coapcc::networks::open_store(&path).unwrap();
    // Another network's run in the same store.
    let grid_spec = coapcc_sim::grid::RunSpec {
        network: Default::default(),
        coap: Default::default(),
        workload: coapcc_sim::grid::Workload {
            duration_s: 20.0,
            ..Default::default()
        },
        algorithm: coapcc_sim::AlgorithmSpec::named("default"),
        seed: 1,
    };
    let g = coapcc_sim::grid::Sim::run(&grid_spec, 0).unwrap();
    coapcc::networks::grid::store::insert_run(&mut store, "g", &grid_spec, 0, &g).unwrap();

    // Interrupted after replication 0: the whole campaign then computes
    // only replication 1.
    let full = plan(SMALL);
    let half = plan(&SMALL.replace("replications = 2", "replications = 1"));
    let o = campaign::run(&half, &mut store, 2, None, false).unwrap();
    assert_eq!((o.total, o.computed), (SMALL_RUNS / 2, SMALL_RUNS / 2));
    let o = campaign::run(&full, &mut store, 2, None, false).unwrap();
    assert_eq!(
        (o.total, o.reused, o.computed),
        (SMALL_RUNS, SMALL_RUNS / 2, SMALL_RUNS / 2)
    );
    let o = campaign::run(&full, &mut store, 1, None, false).unwrap();
    assert_eq!((o.reused, o.computed), (SMALL_RUNS, 0));
    coapcc::networks::verify(&store).unwrap();
    assert_eq!(
        lorawan::store::run_count(&store).unwrap(),
        SMALL_RUNS as u64
    );
    assert_eq!(coapcc::networks::grid::store::run_count(&store).unwrap(), 1);

    // Stored runs are the simulator's, exactly; exchanges are conserved.
    for c in &full.cells {
        for (r, key) in c.keys.iter().enumerate() {
            let stored = lorawan::store::load_run(&store, key).unwrap().unwrap();
            assert_eq!(
                stored,
                coapcc_sim::lorawan::Sim::run(&c.spec, r as u32).unwrap()
            );
            let [started, completed, failed, unfinished] = stored.exchanges();
            assert_eq!(started, completed + failed + unfinished);
        }
    }

    // The report: four figures per point, the tables with every cell.
    let (def, others) = report::choose(&store, None).unwrap();
    assert_eq!(def.hash, full.definition);
    let r = lorawan::report::data::gather(&store, def, others).unwrap();
    assert_eq!(r.progress(), (SMALL_RUNS as u64, SMALL_RUNS as u64));
    let out = dir.path().join("report");
    let w = lorawan::report::write(&r, &out).unwrap();
    let svgs = std::fs::read_dir(&out)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "svg")
        })
        .count();
    assert_eq!(svgs, 2 * 4, "{w:?}");
    let rows = csv_rows(&out.join("lorawan-metrics.csv"));
    assert_eq!(rows.len(), 1 + full.cells.len());
    let ratio = col(&rows[0], "delivery_ratio");
    for row in &rows[1..] {
        let v: f64 = row[ratio].parse().unwrap();
        assert!(v > 0.0 && v <= 1.0, "{row:?}");
    }
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("60 devices · T = 60 s"));
}

#[test]
fn the_shipped_scenario_runs_and_one_device_takes_uplink_rx1_and_downlink() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let scenario = root.join("lorawan/lorawan-periodic.toml");
    let out = cli(&[
        "run",
        scenario.to_str().unwrap(),
        "--replications",
        "1",
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let summaries = v["algorithms"].as_array().unwrap();
    assert_eq!(summaries.len(), 3);
    for s in summaries {
        let d = s["delivery_ratio"]["mean"].as_f64().unwrap();
        assert!(d > 0.5 && d <= 1.0, "{s}");
    }

    // One device at SF7, 24-byte POST (SCHC: 15 B FRMPayload, 28 B PHY:
    // 66.816 ms on air), RX1 1 s after the uplink, the 13-byte 2.04 (11 B,
    // 24 B PHY: 61.696 ms) — every exchange completes in 1.128512 s.
    let text = std::fs::read_to_string(&scenario)
        .unwrap()
        .replace("devices = 100 ", "devices = 1 ")
        .replace("spreading_factor = \"distance\"", "spreading_factor = 7");
    let one = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(one.path(), text).unwrap();
    let out = cli(&[
        "run",
        one.path().to_str().unwrap(),
        "--replications",
        "1",
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    for s in v["algorithms"].as_array().unwrap() {
        let c = &s["completion"];
        for p in ["min", "p50", "max"] {
            let t = c[p].as_f64().unwrap();
            assert!((t - 1.128512).abs() < 1e-9, "{p}: {t}");
        }
        assert_eq!(s["delivery_ratio"]["mean"].as_f64(), Some(1.0));
        assert_eq!(s["started"]["mean"].as_f64(), Some(6.0));
    }
}
