//! The command line: scenario files, overrides, errors, JSON output, and
//! results independent of the thread count.

use assert_cmd::Command;
use std::io::Write;

fn coapcc() -> Command {
    Command::cargo_bin("coapcc").unwrap()
}

fn json_of(args: &[&str]) -> serde_json::Value {
    let out = coapcc().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn default_run_prints_json_per_algorithm() {
    let v = json_of(&[
        "run",
        "--clients",
        "5",
        "--replications",
        "2",
        "--format",
        "json",
    ]);
    let algs = v["algorithms"].as_array().unwrap();
    let labels: Vec<&str> = algs.iter().map(|a| a["label"].as_str().unwrap()).collect();
    assert_eq!(labels, ["default", "cocoa"]);
    for a in algs {
        for k in ["min", "p10", "p25", "p50", "p75", "p90", "max"] {
            let fct = a["fct"][k].as_f64().unwrap();
            assert!(fct > 30.0 && fct < 40.0, "{k} = {fct}");
            assert!(a["unnecessary"][k].as_f64().is_some());
        }
        let hist: u64 = a["retransmissions_per_exchange"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_u64().unwrap())
            .sum();
        assert_eq!(hist, 5 * 50 * 2);
        assert!(a["drops"]["buffer_up"].as_u64().is_some());
    }
    assert_eq!(v["scenario"]["clients"], 5);
}

#[test]
fn results_do_not_depend_on_the_thread_count() {
    let args = [
        "run",
        "--clients",
        "20",
        "--replications",
        "3",
        "--errors",
        "medium",
        "--workload",
        "random",
        "--format",
        "json",
    ];
    let one = json_of(&[&args[..], &["--threads", "1"]].concat());
    let two = json_of(&[&args[..], &["--threads", "2"]].concat());
    assert_eq!(one, two);
    let other_seed = json_of(&[&args[..], &["--seed", "9"]].concat());
    assert_ne!(one["algorithms"], other_seed["algorithms"]);
}

#[test]
fn overrides_are_checked() {
    let out = coapcc()
        .args(["run", "--errors", "sometimes"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--errors") && err.contains("none, low, medium or high"),
        "{err}"
    );
    let out = coapcc()
        .args(["run", "--algorithms", "default,bogus"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("bogus") && err.contains("expected one of"),
        "{err}"
    );
}

fn run_file(text: &str) -> (bool, String) {
    let mut f = tempfile::Builder::new().suffix(".toml").tempfile().unwrap();
    f.write_all(text.as_bytes()).unwrap();
    let out = coapcc().arg("run").arg(f.path()).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(
        out.status.success() || err.contains(&f.path().display().to_string()),
        "{err}"
    );
    (out.status.success(), err)
}

#[test]
fn invalid_files_name_the_file_the_field_and_what_was_expected() {
    let (ok, err) =
        run_file("clients = 2\n[[algorithm]]\nname = \"default\"\n[network]\nbuffer = \"big\"\n");
    assert!(
        !ok && err.contains("buffer") && err.contains("inf"),
        "{err}"
    );
    let (ok, err) = run_file(
        "clients = 2\n[[algorithm]]\nname = \"default\"\n[workload]\nkinds = \"random\"\n",
    );
    assert!(!ok && err.contains("kinds"), "{err}");
    let (ok, err) =
        run_file("clients = 2\n[[algorithm]]\nname = \"cocoa\"\nfirst_sample = \"initk4\"\n");
    assert!(
        !ok && err.contains("first_sample") && err.contains("cocoa"),
        "{err}"
    );
    let (ok, err) =
        run_file("clients = 2\n[[algorithm]]\nname = \"pcocoa\"\nsmoothing = \"smooth\"\n");
    assert!(
        !ok && err.contains("smoothing: expected \"undithered\" or \"dithered\""),
        "{err}"
    );
    let (ok, err) = run_file(
        "clients = 2\n[[algorithm]]\nname = \"cocoa-plus\"\nabove_truncation = \"keep\"\n",
    );
    assert!(
        !ok && err.contains("above_truncation") && err.contains("cocoa-plus"),
        "{err}"
    );
    let (ok, err) = run_file("clients = 0\n[[algorithm]]\nname = \"default\"\n");
    assert!(!ok && err.contains("clients"), "{err}");
    let (ok, err) = run_file("clients = 2\n");
    assert!(!ok && err.contains("algorithm"), "{err}");
    let (ok, _) = run_file("clients = 2\nreplications = 1\n[[algorithm]]\nname = \"default\"\n");
    assert!(ok);
    let (ok, err) = run_file(
        "clients = 2\nreplications = 1\n[[algorithm]]\nname = \"pcocoa\"\nsmoothing = \"dithered\"\n",
    );
    assert!(ok, "{err}");
}

#[test]
fn missing_file_is_reported() {
    let out = coapcc()
        .args(["run", "/no/such/file.toml"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("/no/such/file.toml"),
        "{err}"
    );
}

#[test]
fn every_scenario_file_in_the_repository_is_valid() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut n = 0;
    for entry in walk(&dir) {
        // Campaign files are checked by tests/campaign.rs; look at the path
        // inside scenarios/ only (the checkout's own path may say "campaign").
        let inside = entry.strip_prefix(&dir).unwrap_or(&entry);
        if entry.extension().is_some_and(|e| e == "toml")
            && !inside.to_string_lossy().contains("campaign")
        {
            coapcc::networks::AnyScenario::load(&entry).unwrap_or_else(|e| panic!("{e:#}"));
            n += 1;
        }
    }
    assert!(n >= 1);
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// `coapcc algorithms` lists the TCP profiles of model 4, and the hidden
/// switch names run (`tcp-linux:` with a Linux 6.x switch) or are refused
/// with the switches the prefix takes.
#[test]
fn algorithms_list_the_tcp_profiles_and_switch_names_run() {
    let out = coapcc().arg("algorithms").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let names: Vec<&str> = text
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| n.starts_with("tcp"))
        .collect();
    for n in [
        "tcp",
        "tcp-newreno",
        "tcp-linux49-debian9",
        "tcp-linux6",
        "tcp-linux6-nosack",
    ] {
        assert!(names.contains(&n), "{n} missing from {names:?}");
    }
    let v = json_of(&[
        "run",
        "--clients",
        "2",
        "--replications",
        "1",
        "--algorithms",
        "tcp-linux6,tcp-linux:frto+prr+quickack",
        "--format",
        "json",
    ]);
    let labels: Vec<&str> = v["algorithms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["tcp-linux6", "tcp-linux:frto+prr+quickack"]);
    let bad = coapcc()
        .args(["run", "--algorithms", "tcp-linux49:quickack"])
        .output()
        .unwrap();
    assert!(!bad.status.success());
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.contains("tcp-linux49:quickack") && err.contains("sack, er, rack, tlp, frto, prr"),
        "{err}"
    );
}

/// A parse error in a scenario file with a 1 MB line prints a few hundred
/// bytes, not the line (it printed 2 MB: the line and a marker line as
/// long), and still names the file, the line, the column and what was
/// expected.
#[test]
fn a_parse_error_on_a_one_megabyte_line_stays_short() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        // the probe of the network kind fails on the junk after the string
        (
            format!("name = \"{}\" junk\n", "a".repeat(1_000_000)),
            "line 1, column 1000011",
            "expected newline",
        ),
        // the scenario's own parse names the field's type
        (
            format!(
                "clients = \"{}\"\n[network]\nkind = \"dumbbell\"\n",
                "b".repeat(1_000_000)
            ),
            "line 1, column 11",
            "invalid type: string",
        ),
    ];
    for (i, (text, position, what)) in cases.iter().enumerate() {
        let path = dir.path().join(format!("big{i}.toml"));
        std::fs::write(&path, text).unwrap();
        let out = coapcc().arg("run").arg(&path).output().unwrap();
        let e = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{}", &e[..e.len().min(500)]);
        assert!(e.len() < 2048, "{} bytes of stderr", e.len());
        assert!(e.contains(&path.display().to_string()), "{e}");
        assert!(e.contains(position), "{e}");
        assert!(e.contains(what), "{e}");
        assert!(e.contains('…'), "{e}");
    }
}

#[test]
fn a_campaign_files_parse_error_on_a_one_megabyte_line_stays_short() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("never.sqlite");
    // One file per network: each network's campaign parse names the field's
    // type after the network-kind probe has passed.
    let cases = [
        format!("name = \"x\"\nseed = \"{}\"\n", "c".repeat(1_000_000)),
        format!(
            "name = \"x\"\nseed = \"{}\"\n[network]\nkind = \"grid\"\n",
            "d".repeat(1_000_000)
        ),
        format!(
            "name = \"x\"\nseed = \"{}\"\n[network]\nkind = \"star\"\n",
            "e".repeat(1_000_000)
        ),
    ];
    for (i, text) in cases.iter().enumerate() {
        let path = dir.path().join(format!("campaign{i}.toml"));
        std::fs::write(&path, text).unwrap();
        let out = coapcc()
            .arg("campaign")
            .arg(&path)
            .arg("--store")
            .arg(&store)
            .output()
            .unwrap();
        let e = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{}", &e[..e.len().min(500)]);
        assert!(e.len() < 2048, "case {i}: {} bytes of stderr", e.len());
        assert!(e.contains(&path.display().to_string()), "{e}");
        assert!(e.contains("line 2"), "{e}");
        assert!(e.contains('…'), "{e}");
        assert!(
            !store.exists(),
            "no store is created for a file that does not parse"
        );
    }
}
