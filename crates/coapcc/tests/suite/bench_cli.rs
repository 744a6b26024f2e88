//! `coapcc bench`'s matrix and scale modes: argument validation, and the
//! shape and content of their tables on small runs without the ns-3
//! reference. Nothing here asserts a time: the wall-time cells are only
//! checked to be numbers.

use assert_cmd::Command;
use coapcc::networks::dumbbell::bench::dumbbell_spec;
use coapcc_link::dumbbell::Buffer;
use coapcc_sim::dumbbell;
use coapcc_sim::network::SimNetwork;
use coapcc_sim::NetworkScenario;

fn coapcc() -> Command {
    Command::cargo_bin("coapcc").unwrap()
}

/// Runs `coapcc bench ARGS`, expecting failure; its standard error.
fn fails(args: &[&str]) -> String {
    let out = coapcc().arg("bench").args(args).output().unwrap();
    assert!(!out.status.success(), "bench {args:?} succeeded");
    assert!(out.stdout.is_empty(), "bench {args:?} printed a table");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Runs `coapcc bench ARGS`, expecting success; its standard output.
fn succeeds(args: &[&str]) -> String {
    let out = coapcc().arg("bench").args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The body rows of the Markdown table whose header starts with `header`,
/// split into trimmed cells.
fn table(text: &str, header: &str) -> Vec<Vec<String>> {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.starts_with(header))
        .unwrap_or_else(|| panic!("no table `{header}` in:\n{text}"));
    lines[start + 2..]
        .iter()
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            l.trim_matches('|')
                .split('|')
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect()
}

fn repo_file(rel: &str) -> String {
    format!("{}/../../{rel}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn bad_combinations_are_refused_with_the_flag_named() {
    assert!(fails(&["--matrix", "--clients", "5"]).contains("--clients"));
    assert!(fails(&["--matrix", "--buffer", "2500"]).contains("--buffer"));
    assert!(fails(&["--matrix", "--network", "grid"]).contains("--network"));
    assert!(fails(&["--matrix", "--no-reference", "--ns3", "x"]).contains("--no-reference"));
    let scale = repo_file("scenarios/scale/clients-1e3.toml");
    assert!(fails(&["--scenario", &scale, "--clients", "5"]).contains("--clients"));
    assert!(fails(&["--scenario", &scale, "--ns3", "run.sh"]).contains("--ns3"));
    assert!(fails(&["--scenario", &scale, "--max-memory", "0"]).contains("--max-memory"));
    assert!(fails(&["--max-memory", "2"]).contains("--scenario only"));
    assert!(fails(&["--network", "star", "--buffer", "2500"]).contains("--buffer"));
    assert!(fails(&["--child-run", &scale]).contains("--child-algorithm"));
    let e = fails(&["--child-run", &scale, "--child-algorithm", "2"]);
    assert!(e.contains("2 algorithm(s)"), "{e}");
}

#[test]
fn a_missing_reference_or_scenario_says_what_is_missing() {
    let e = fails(&["--ns3", "/nonexistent/run.sh", "--clients", "1"]);
    assert!(
        e.contains("/nonexistent/run.sh") && e.contains("--no-reference"),
        "{e}"
    );
    let e = fails(&["--matrix", "--ns3", "/nonexistent/run.sh"]);
    assert!(e.contains("--no-reference"), "{e}");
    let e = fails(&["--network", "grid", "--ns3", "/nonexistent/run.sh"]);
    assert!(e.contains("/nonexistent/run.sh"), "{e}");
    let e = fails(&["--scenario", "/nonexistent/s.toml"]);
    assert!(e.contains("/nonexistent/s.toml"), "{e}");
    let grid = repo_file("scenarios/pcocoa/periodic.toml");
    let e = fails(&["--scenario", &grid]);
    assert!(e.contains("dumbbell"), "{e}");
}

#[test]
fn the_scale_tables_report_each_algorithm_of_the_file_from_its_own_process() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tiny.toml");
    std::fs::write(
        &file,
        "name = \"tiny\"\nclients = 20\nreplications = 1\nseed = 7\n\
         [network]\nbuffer = 2500\n\
         [workload]\nkind = \"continuous\"\nexchanges = 3\n\
         [[algorithm]]\nname = \"default\"\n[[algorithm]]\nname = \"cocoa\"\n",
    )
    .unwrap();
    let out = succeeds(&["--scenario", file.to_str().unwrap()]);
    let scenario = coapcc::networks::dumbbell::load_scenario(&file).unwrap();
    let runs = table(&out, "| scenario | algorithm | clients | events |");
    let cost = table(&out, "| scenario | algorithm | clients | packets |");
    assert_eq!(runs.len(), 2);
    assert_eq!(cost.len(), 2);
    for (i, label) in ["default", "cocoa"].iter().enumerate() {
        let r = dumbbell::Sim::run(&scenario.run_spec(i), 0).unwrap();
        let row = &runs[i];
        assert_eq!(row[..4], ["tiny", label, "20", &r.events.to_string()]);
        // the wall time may print as 0.0000 on a fast machine; the rates
        // and the memory are positive
        assert!(row[4].parse::<f64>().is_ok(), "{row:?}");
        for cell in &row[5..] {
            let v: f64 = cell
                .parse()
                .unwrap_or_else(|_| panic!("`{cell}` in {row:?}"));
            assert!(v > 0.0, "{row:?}");
        }
        // peak RSS / clients, in KiB, is at least the MB figure over 20
        let mb: f64 = row[6].parse().unwrap();
        let per_client: f64 = row[7].parse().unwrap();
        assert!(
            (per_client * 1024.0 * 20.0 / 1e6 - mb).abs() < 1.0,
            "{row:?}"
        );
        let row = &cost[i];
        let (packets, events) = (r.conservation.sent, r.events);
        assert_eq!(
            row[..6],
            [
                "tiny",
                label,
                "20",
                &packets.to_string(),
                &events.to_string(),
                &format!("{:.2}", events as f64 / packets as f64),
            ]
        );
    }
    assert!(out.contains("Load average"));
}

#[test]
fn a_size_estimated_above_the_memory_limit_is_not_run() {
    let big = repo_file("scenarios/scale/clients-1e6.toml");
    let out = succeeds(&["--scenario", &big, "--max-memory", "1"]);
    let runs = table(&out, "| scenario | algorithm | clients | events |");
    assert_eq!(runs.len(), 2);
    for row in &runs {
        assert_eq!(row[2], "1000000");
        // 10⁶ clients × 1.25 KiB alone are 1.28 GB
        let gb: f64 = row[3]
            .strip_prefix("not run: estimated ")
            .and_then(|r| r.strip_suffix(" GB"))
            .unwrap_or_else(|| panic!("{row:?}"))
            .parse()
            .unwrap();
        assert!(gb >= 1.28, "{row:?}");
    }
    let cost = table(&out, "| scenario | algorithm | clients | packets |");
    assert!(cost.iter().all(|r| r[3] == "not run"));
}

#[test]
fn the_matrix_without_reference_has_every_point_in_order() {
    let out = succeeds(&["--matrix", "--no-reference", "--repeat", "1"]);
    let rows = table(&out, "| clients | buffer |");
    let points: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| (r[0].as_str(), r[1].as_str()))
        .collect();
    assert_eq!(
        points,
        [
            ("100", "2500 B"),
            ("100", "inf"),
            ("400", "2500 B"),
            ("400", "inf"),
            ("1000", "2500 B"),
            ("1000", "inf"),
        ]
    );
    for row in &rows {
        let clients: u32 = row[0].parse().unwrap();
        let buffer = Buffer::parse(row[1].trim_end_matches(" B")).unwrap();
        let r = dumbbell::Sim::run(&dumbbell_spec(clients, buffer, "default", 1), 0).unwrap();
        assert_eq!(row[2], r.events.to_string(), "{row:?}");
        assert!(row[3].parse::<f64>().unwrap() > 0.0);
        // coapcc's and the bare heap loop's nanoseconds per event.
        assert!(row[5].parse::<f64>().unwrap() > 0.0, "{row:?}");
        assert!(row[6].parse::<f64>().unwrap() > 0.0, "{row:?}");
        assert_eq!(row[7..], ["not run", "not run", "—"]);
    }
}

/// `bench --network lorawan`: the CoAP run's line, then LoRaSim's
/// experiment 4 on the link model beside pure ALOHA (its data extraction
/// rate within 0.03 of e^(−2G)); a LoRaSim script that cannot be found is
/// named.
#[test]
fn the_lorawan_bench_runs_lorasims_experiment_beside_pure_aloha() {
    let out = succeeds(&[
        "--network",
        "lorawan",
        "--clients",
        "100",
        "--period",
        "600",
        "--repeat",
        "1",
        "--ns3",
        "none",
    ]);
    assert!(
        out.contains("coapcc: lorawan, default, 100 devices, T = 600 s"),
        "{out}"
    );
    let line = out
        .lines()
        .find(|l| l.contains("LoRaSim experiment 4"))
        .unwrap_or_else(|| panic!("{out}"));
    let value = |key: &str| -> f64 {
        let rest = &line[line.find(key).unwrap_or_else(|| panic!("{line}")) + key.len()..];
        rest.split([' ', ';', ')'])
            .next()
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{line}"))
    };
    let (der, aloha) = (value("DER "), value("pure ALOHA "));
    assert!((der - aloha).abs() < 0.03, "{line}");
    let err = fails(&[
        "--network",
        "lorawan",
        "--repeat",
        "1",
        "--ns3",
        "/no/such/loraDir.py",
    ]);
    assert!(
        err.contains("--ns3: cannot find LoRaSim's script `/no/such/loraDir.py`"),
        "{err}"
    );
}
