//! `my-rto` registered beside the built-ins: deterministic runs and
//! campaigns, real clients on loopback, and clear errors for bad
//! registrations and bad parameters.

use std::path::Path;
use std::process::{Command, Output};

use coapcc_rto::registry::{BoxedAlgorithm, NewAlgorithm, Registry};

const COMPARE: &str = r#"
name = "compare"
clients = 20
replications = 2
seed = 3

[network]
buffer = 2500
errors = "medium"

[workload]
kind = "random"
exchanges = 10

[[algorithm]]
name = "my-rto"

[[algorithm]]
name = "my-rto"
label = "my-rto-cap-8"
cap = 8

[[algorithm]]
name = "cocoa"
"#;

const CAMPAIGN: &str = r#"
name = "mine"
title = "my-rto beside Default CoAP"
seed = 11
algorithms = ["my-rto", "default"]

[workload]
exchanges = 10

[[set]]
name = "s"
clients = [5, 15]
buffers = [2500]
workloads = ["continuous", "random"]
replications = 2
"#;

fn my_coapcc(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_my-coapcc"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

/// Runs `args`, which must succeed; returns standard output.
fn ok(dir: &Path, args: &[&str]) -> String {
    let out = my_coapcc(dir, args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Runs `args`, which must fail with status 2; returns standard error.
fn fails(dir: &Path, args: &[&str]) -> String {
    let out = my_coapcc(dir, args);
    assert_eq!(out.status.code(), Some(2), "{args:?}");
    String::from_utf8(out.stderr).unwrap()
}

#[test]
fn a_scenario_runs_it_the_same_on_any_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("compare.toml"), COMPARE).unwrap();
    let one = ok(
        d,
        &["run", "compare.toml", "--format", "json", "--threads", "1"],
    );
    let two = ok(
        d,
        &["run", "compare.toml", "--format", "json", "--threads", "2"],
    );
    assert_eq!(one, two);
    for label in ["\"my-rto\"", "\"my-rto-cap-8\"", "\"cocoa\""] {
        assert!(one.contains(label), "{label}: {one}");
    }
    let cli = ok(
        d,
        &["run", "--algorithms", "my-rto,fasor", "--clients", "5"],
    );
    assert!(cli.contains("my-rto") && cli.contains("fasor"), "{cli}");
}

#[test]
fn a_campaign_stores_it_and_reports_it_the_same_on_any_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("mine.toml"), CAMPAIGN).unwrap();
    let mut summaries = Vec::new();
    for threads in ["1", "2"] {
        let store = format!("store-{threads}.sqlite");
        let out = format!("report-{threads}");
        let ran = ok(
            d,
            &[
                "campaign",
                "mine.toml",
                "--store",
                &store,
                "--threads",
                threads,
            ],
        );
        assert!(ran.contains("16 runs, 0 already"), "{ran}");
        ok(d, &["report", &store, "--out", &out]);
        summaries.push(std::fs::read_to_string(d.join(out).join("summary.csv")).unwrap());
    }
    assert_eq!(summaries[0], summaries[1]);
    assert!(summaries[0].contains("my-rto"), "{}", summaries[0]);
}

#[test]
fn real_clients_run_it_against_a_server_on_loopback() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut server = Command::new(env!("CARGO_BIN_EXE_my-coapcc"))
        .args(["server", "--listen", "127.0.0.1:56832", "--duration", "4"])
        .args(["--notify-cc", "my-rto"])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    let uri = "coap://127.0.0.1:56832/sense";
    let client = ok(d, &["client", "--cc", "my-rto", "--count", "3", uri]);
    assert!(client.contains("3 exchanges, 0 failed"), "{client}");
    // my-rto's first timer is 2 s; after a sample below 0.25 s, its 1 s floor.
    let timers: Vec<&str> = client
        .lines()
        .skip(1)
        .take(3)
        .filter_map(|l| l.split_whitespace().last())
        .collect();
    assert_eq!(timers, ["2.000", "1.000", "1.000"], "{client}");
    let load = ok(
        d,
        &[
            "load",
            "--cc",
            "my-rto",
            "--clients",
            "2",
            "--exchanges",
            "3",
            uri,
        ],
    );
    assert!(load.contains("my-rto"), "{load}");
    let _ = server.wait();
}

#[test]
fn bad_parameters_and_names_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let head = &COMPARE[..COMPARE.find("[[algorithm]]").unwrap()];
    let with = |param: &str| format!("{head}[[algorithm]]\nname = \"my-rto\"\n{param}\n");
    std::fs::write(d.join("bad.toml"), with("aging = true")).unwrap();
    let err = fails(d, &["run", "bad.toml"]);
    assert!(
        err.contains("algorithm `my-rto`: parameter `aging`: not a parameter of this algorithm"),
        "{err}"
    );
    std::fs::write(d.join("bad.toml"), with("cap = -1")).unwrap();
    let err = fails(d, &["run", "bad.toml"]);
    assert!(
        err.contains(
            "algorithm `my-rto`: parameter `cap`: a finite number of seconds greater than 0"
        ),
        "{err}"
    );
    let err = fails(d, &["client", "--cc", "my-rtoo", "coap://127.0.0.1:9/x"]);
    assert!(
        err.contains("unknown name") && err.contains("fasor-option, my-rto"),
        "{err}"
    );
}

#[test]
fn a_bad_registration_is_refused_naming_the_algorithm() {
    let twice = Registry::builtin()
        .with(my_rto::algorithm())
        .and_then(|r| r.with(my_rto::algorithm()));
    assert_eq!(
        twice.unwrap_err().to_string(),
        "algorithm `my-rto`: the name is taken by an algorithm registered before"
    );
    let builtin = Registry::builtin().with(NewAlgorithm::new("fasor", |p| {
        Ok(Box::new(my_rto::MyRto::from_params(p)?) as BoxedAlgorithm)
    }));
    assert_eq!(
        builtin.unwrap_err().to_string(),
        "algorithm `fasor`: the name is taken by a built-in algorithm"
    );
    let empty = Registry::builtin().with(NewAlgorithm::new("", |p| {
        Ok(Box::new(my_rto::MyRto::from_params(p)?) as BoxedAlgorithm)
    }));
    assert!(empty
        .unwrap_err()
        .to_string()
        .starts_with("algorithm name \"\": expected 1 to 64 ASCII letters"));
}
