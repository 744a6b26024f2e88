//! A campaign of the observe, block-wise and NSTART > 1 workloads
//! (`scenarios/campaigns/workloads.toml`, cut down): run into a store,
//! resumed without recomputing anything, and reported with the workloads'
//! own sections, figures and tables.

use std::path::Path;
use std::process::Command;

use coapcc::campaign;

const CAMPAIGN: &str = r#"
name = "workloads-test"
seed = 11
algorithms = ["default", "cocoa"]

[workload]
period = 2.0
confirm_every = 2
size = 1000
block_size = 64

[[set]]
name = "observe"
workloads = ["observe"]
exchanges = 10
clients = [4]
buffers = ["inf"]
replications = 2

[[set]]
name = "blockwise"
workloads = ["blockwise"]
exchanges = 2
clients = [3]
buffers = ["inf"]
replications = 2

[[set]]
name = "nstart-4"
nstart = 4
workloads = ["continuous"]
exchanges = 8
clients = [3]
buffers = ["inf"]
replications = 1
"#;

fn bin() -> std::path::PathBuf {
    assert_cmd::cargo::cargo_bin("coapcc")
}

/// A CSV table as rows of fields (the report's tables hold no commas).
fn csv(path: &Path) -> Vec<Vec<String>> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .split("\r\n")
        .filter(|l| !l.is_empty())
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

fn column(rows: &[Vec<String>], name: &str) -> usize {
    rows[0]
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no column `{name}` in {:?}", rows[0]))
}

#[test]
fn a_workloads_campaign_runs_resumes_and_reports_its_own_sections() {
    let dir = tempfile::tempdir().unwrap();
    let plan =
        coapcc::networks::dumbbell::campaign::plan::parse(CAMPAIGN, "workloads-test.toml").unwrap();
    // 2 algorithms × (2 + 2 + 1) replications.
    assert_eq!(plan.runs(), 10);
    let store_path = dir.path().join("w.sqlite");
    let mut store = coapcc::networks::open_store(&store_path).unwrap();
    campaign::run(&plan, &mut store, 0, None, false).unwrap();
    assert_eq!(
        coapcc::networks::dumbbell::store::run_count(&store).unwrap(),
        10
    );
    // Resumed: nothing left to compute, nothing recomputed.
    let again = campaign::run(&plan, &mut store, 0, None, false).unwrap();
    assert_eq!((again.reused, again.computed), (10, 0), "{again:?}");
    drop(store);

    let out = dir.path().join("report");
    let status = Command::new(bin())
        .args([
            "report",
            store_path.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .status()
        .unwrap();
    assert!(status.success());

    // Observe: one row per algorithm; every change accounted for once.
    let obs = csv(&out.join("observe.csv"));
    assert_eq!(obs.len(), 1 + 2, "{obs:?}");
    let (changes, delivered, superseded, lost) = (
        column(&obs, "changes"),
        column(&obs, "delivered %"),
        column(&obs, "superseded %"),
        column(&obs, "lost %"),
    );
    for row in &obs[1..] {
        // 4 observers × 10 changes × 2 replications.
        assert_eq!(row[changes], "80", "{row:?}");
        let share: f64 = [delivered, superseded, lost]
            .iter()
            .map(|&c| row[c].parse::<f64>().unwrap())
            .sum();
        assert!((share - 100.0).abs() < 0.02, "{row:?}");
        // No loss on an uncongested link with an infinite buffer.
        assert_eq!(row[lost], "0.00", "{row:?}");
        let median: f64 = row[column(&obs, "delay median")].parse().unwrap();
        assert!(median > 0.0 && median < 2.0, "{row:?}");
    }

    // Block-wise: every transfer of every client completed.
    let tr = csv(&out.join("transfers.csv"));
    assert_eq!(tr.len(), 1 + 2, "{tr:?}");
    for row in &tr[1..] {
        // 3 clients × 2 transfers × 2 replications.
        assert_eq!(row[column(&tr, "completed")], "12", "{row:?}");
        assert_eq!(row[column(&tr, "failed")], "0", "{row:?}");
        let t: f64 = row[column(&tr, "time median")].parse().unwrap();
        let g: f64 = row[column(&tr, "goodput median")].parse().unwrap();
        assert!(t > 0.0 && g > 0.0, "{row:?}");
    }

    // The NSTART set is a request/response set: in the summary, not in the
    // workloads' tables.
    let summary = csv(&out.join("summary.csv"));
    let set = column(&summary, "set");
    assert!(summary.iter().any(|r| r[set] == "nstart-4"));
    assert!(!obs.iter().chain(&tr).any(|r| r[0] == "nstart-4"));

    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    for needle in [
        "id=\"delay\"",
        "id=\"transfer\"",
        "Observe: notification delay",
        "observe.csv",
        "transfers.csv",
    ] {
        assert!(html.contains(needle), "report.html lacks {needle}");
    }
    let svgs: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        svgs.iter().any(|f| f.starts_with("delay-observe-observe")),
        "{svgs:?}"
    );
    assert!(
        svgs.iter()
            .any(|f| f.starts_with("transfer-blockwise-blockwise")),
        "{svgs:?}"
    );
    assert!(
        !svgs.iter().any(|f| f.starts_with("delay-nstart")),
        "{svgs:?}"
    );
}
