//! Bad input and hostile conditions: every one is a clear error naming what
//! was wrong and a non-zero exit, never a panic (exit 101) nor a silent
//! misreading.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_coapcc"))
}

/// Runs `coapcc args…` with stdout to `/dev/null`; returns (exit code, stderr).
fn run(args: &[&str]) -> (i32, String) {
    let o = bin()
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .output()
        .unwrap();
    (o.status.code().unwrap_or(-1), stderr(&o))
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `coapcc args…` failed with a message (not a panic) containing every one of `needles`.
fn assert_refused(args: &[&str], needles: &[&str]) {
    let (code, err) = run(args);
    assert!(
        code != 0 && code != 101,
        "{args:?}: exit {code}, expected a refusal\n{err}"
    );
    assert!(!err.contains("panicked"), "{args:?} panicked:\n{err}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: `{n}` not in\n{err}");
    }
}

/// A small dumbbell scenario with `line` added to its `[network]` table.
fn scenario_with(line: &str) -> String {
    format!(
        "clients = 2\nreplications = 1\n[network]\n{line}\n[workload]\nkind = \"continuous\"\nexchanges = 2\n\
         [[algorithm]]\nname = \"default\"\n"
    )
}

fn temp_toml(text: &str) -> tempfile::NamedTempFile {
    let mut f = tempfile::Builder::new().suffix(".toml").tempfile().unwrap();
    f.write_all(text.as_bytes()).unwrap();
    f
}

#[test]
fn huge_and_non_finite_durations_are_refused_by_name() {
    let l = ["--listen", "127.0.0.1:0"];
    for (args, flag) in [
        (
            vec!["server", l[0], l[1], "--lifetime", "1e30"],
            "--lifetime",
        ),
        (
            vec!["server", l[0], l[1], "--duration", "1e30"],
            "--duration",
        ),
        (
            vec!["server", l[0], l[1], "--duration", "inf"],
            "--duration",
        ),
        (
            vec!["client", "--timeout", "1e30", "coap://127.0.0.1:9/x"],
            "--timeout",
        ),
        (
            vec!["load", "--time-limit", "1e30", "coap://127.0.0.1:9/x"],
            "--time-limit",
        ),
        (
            vec!["load", "--time-limit", "NaN", "coap://127.0.0.1:9/x"],
            "--time-limit",
        ),
        (
            vec![
                "emulate",
                l[0],
                l[1],
                "--server",
                "127.0.0.1:9",
                "--idle-timeout",
                "1e30",
            ],
            "--idle-timeout",
        ),
        (
            vec![
                "emulate",
                l[0],
                l[1],
                "--server",
                "127.0.0.1:9",
                "--duration",
                "1e30",
            ],
            "--duration",
        ),
        (
            vec![
                "emulate",
                l[0],
                l[1],
                "--server",
                "127.0.0.1:9",
                "--uplink-delay-ms",
                "1e15",
            ],
            "--uplink-delay-ms",
        ),
        (
            vec![
                "emulate",
                l[0],
                l[1],
                "--server",
                "127.0.0.1:9",
                "--path-delay-ms",
                "1,1e15",
            ],
            "--path-delay-ms",
        ),
    ] {
        assert_refused(&args, &[flag, "1e7"]);
    }
}

#[test]
fn huge_and_infinite_delays_in_scenarios_are_refused() {
    for (field, value) in [
        ("uplink_delay_ms", "inf"),
        ("uplink_delay_ms", "1e15"),
        ("downlink_delay_ms", "nan"),
        ("path_delay_ms", "[1.0, 1e300]"),
    ] {
        let f = temp_toml(&scenario_with(&format!("{field} = {value}")));
        let path = f.path().to_str().unwrap();
        assert_refused(&["run", path], &[path, field]);
        assert_refused(
            &[
                "emulate",
                "--listen",
                "127.0.0.1:0",
                "--server",
                "127.0.0.1:9",
                "--scenario",
                path,
            ],
            &[path, field],
        );
    }
}

/// Output to a full device is an error with a message, not a panic.
#[test]
fn writing_to_a_full_disk_is_an_error() {
    if !std::path::Path::new("/dev/full").exists() {
        eprintln!("SKIPPED writing_to_a_full_disk_is_an_error: no /dev/full");
        return;
    }
    for args in [
        vec!["algorithms"],
        vec!["default-scenario"],
        vec![
            "run",
            "--clients",
            "2",
            "--replications",
            "1",
            "--format",
            "json",
        ],
        vec!["run", "--clients", "2", "--replications", "1"],
    ] {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let o = bin()
            .args(&args)
            .stdout(full)
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let err = stderr(&o);
        let code = o.status.code().unwrap_or(-1);
        assert!(code != 0 && code != 101, "{args:?}: exit {code}\n{err}");
        assert!(
            err.contains("standard output") && !err.contains("panicked"),
            "{args:?}: {err}"
        );
    }
}
