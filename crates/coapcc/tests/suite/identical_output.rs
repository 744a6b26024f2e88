//! Identical output: every scenario file under `scenarios/` (dumbbell, grid
//! and star kinds; the campaign files under `scenarios/campaigns/` are not
//! scenarios and are skipped) is run, reduced, and the SHA-256 of its full
//! JSON result — every replication's raw result and every summary — is
//! compared with the digest recorded in `tests/data/identical_output.txt`.
//! A run is a pure function of its scenario and seed (spec `docs/spec/architecture-spec.md`,
//! determinism), so an engine change that is meant to be a pure speed-up
//! (timer structures, memory layout, metric recording) must leave every
//! digest unchanged; a change of the model must bump `MODEL_VERSION`
//! (`crates/coapcc-sim/src/lib.rs`) and only then re-record.
//!
//! The reduction, applied in the same way when recording and when checking,
//! keeps the whole test to a few seconds: each network's `LabNetwork::reduce`
//! (one replication of every algorithm of the file and a short workload:
//! the dumbbell at most 5 exchanges per client, the grid a traffic window of
//! at most 240 s, the star at most 60 writes per station). Dumbbell files
//! with more than 1000 clients (the large members of `scenarios/scale/`)
//! are skipped: even one exchange each is too long for a test; the
//! 10³-client scale files are covered.
//!
//! The digest is taken over the JSON with every `events` field removed:
//! `events` counts the engine's work, not what the modelled network did, and
//! a faster engine may well process fewer events for the same outcome. The
//! total event count is recorded beside the digest and a change of it is
//! printed, not failed.
//!
//! Each scenario is run on a one-thread and on a three-thread pool, and the
//! two digests must agree: results do not depend on the thread count.
//!
//! Recording is explicit: `COAPCC_RECORD_DIGESTS=1 cargo test -p coapcc
//! --test suite identical_output::` rewrites the file. Re-record only together with a
//! `MODEL_VERSION` bump; the file names the model it was recorded with, and
//! the check refuses a file recorded under another model.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use coapcc::networks::AnyScenario;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The environment variable that turns checking into recording.
const RECORD: &str = "COAPCC_RECORD_DIGESTS";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn digest_file() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/identical_output.txt")
}

/// Every `.toml` under `dir`, recursively, sorted; `scenarios/campaigns/`
/// excluded.
fn scenario_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            if p.file_name().is_some_and(|n| n == "campaigns") {
                continue;
            }
            scenario_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "toml") {
            out.push(p);
        }
    }
}

/// The full JSON result of `s` run on a pool of `threads` threads.
fn result_json(s: &AnyScenario, threads: usize) -> Value {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("thread pool");
    let stop = std::sync::atomic::AtomicBool::new(false);
    s.run_on(&pool, &|| (), &stop)
        .unwrap_or_else(|e| panic!("{e:#}"))
        .result_json()
}

/// Removes every `events` field of `v`, returning their sum.
fn strip_events(v: &mut Value) -> u64 {
    match v {
        Value::Object(map) => {
            let own = map
                .remove("events")
                .and_then(|e| e.as_u64())
                .unwrap_or_default();
            own + map.values_mut().map(strip_events).sum::<u64>()
        }
        Value::Array(items) => items.iter_mut().map(strip_events).sum(),
        _ => 0,
    }
}

/// (SHA-256 of the JSON without `events`, total events).
fn digest(mut v: Value) -> (String, u64) {
    let events = strip_events(&mut v);
    let text = serde_json::to_string(&v).expect("serialisable");
    let hash = Sha256::digest(text.as_bytes());
    let mut hex = String::with_capacity(64);
    for b in hash {
        write!(hex, "{b:02x}").expect("write to a String");
    }
    (hex, events)
}

/// The recorded file: model, then `path digest events` per scenario.
struct Recorded {
    model: String,
    entries: BTreeMap<String, (String, u64)>,
}

fn parse_recorded(text: &str) -> Recorded {
    let mut model = String::new();
    let mut entries = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if let Some(m) = line.strip_prefix("model:") {
            model = m.trim().to_string();
        } else if line.is_empty() || line.starts_with('#') {
            continue;
        } else {
            let parts: Vec<&str> = line.split_whitespace().collect();
            let [path, hash, events] = parts[..] else {
                panic!(
                    "{}:{}: expected `path sha256 events=N`, found `{line}`",
                    digest_file().display(),
                    i + 1
                );
            };
            let events: u64 = events
                .strip_prefix("events=")
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| {
                    panic!(
                        "{}:{}: expected `events=N`, found `{events}`",
                        digest_file().display(),
                        i + 1
                    )
                });
            entries.insert(path.to_string(), (hash.to_string(), events));
        }
    }
    Recorded { model, entries }
}

#[test]
fn every_scenario_gives_the_recorded_output_whatever_the_thread_count() {
    let root = repo();
    let mut files = Vec::new();
    scenario_files(&root.join("scenarios"), &mut files);
    assert!(
        files.len() >= 10,
        "expected the scenario files of scenarios/, found {}",
        files.len()
    );
    let mut measured = BTreeMap::new();
    for file in &files {
        let rel = file
            .strip_prefix(&root)
            .expect("under the repository")
            .to_string_lossy()
            .replace('\\', "/");
        let s = AnyScenario::load(file).unwrap_or_else(|e| panic!("{e:#}"));
        let Some(s) = s.reduced() else {
            eprintln!("skipped (too large to run as a test): {rel}");
            continue;
        };
        let one = digest(result_json(&s, 1));
        let three = digest(result_json(&s, 3));
        assert_eq!(
            one, three,
            "{rel}: the output on one thread differs from the output on three"
        );
        measured.insert(rel, one);
    }

    let model = coapcc_sim::MODEL_VERSION;
    if std::env::var_os(RECORD).is_some_and(|v| v == "1") {
        let mut text = String::from(
            "# Digests of the reduced runs of every scenario file (see\n\
             # crates/coapcc/tests/suite/identical_output.rs). Re-record only with a\n\
             # MODEL_VERSION bump: COAPCC_RECORD_DIGESTS=1 cargo test -p coapcc --test suite identical_output::\n",
        );
        writeln!(text, "model: {model}").unwrap();
        for (path, (hash, events)) in &measured {
            writeln!(text, "{path} {hash} events={events}").unwrap();
        }
        std::fs::write(digest_file(), text).expect("write the digest file");
        eprintln!(
            "recorded {} digests to {}",
            measured.len(),
            digest_file().display()
        );
        return;
    }

    let how = format!(
        "record with `{RECORD}=1 cargo test -p coapcc --test suite identical_output::` \
         (only together with a MODEL_VERSION bump if the output of an existing scenario changed)"
    );
    let text = std::fs::read_to_string(digest_file())
        .unwrap_or_else(|e| panic!("{}: {e}; {how}", digest_file().display()));
    let recorded = parse_recorded(&text);
    assert_eq!(
        recorded.model,
        model,
        "{} was recorded under another model; {how}",
        digest_file().display()
    );
    let mut failures = Vec::new();
    for (path, (hash, events)) in &measured {
        match recorded.entries.get(path) {
            None => failures.push(format!("{path}: no recorded digest; {how}")),
            Some((h, _)) if h != hash => failures.push(format!(
                "{path}: output differs from the recorded one (digest {hash}, recorded {h})"
            )),
            Some((_, e)) if e != events => eprintln!(
                "note: {path}: same output, {events} events (recorded {e}): the engine's work changed"
            ),
            Some(_) => {}
        }
    }
    for path in recorded.entries.keys() {
        if !measured.contains_key(path) {
            failures.push(format!(
                "{path}: recorded but no longer run (file removed or now skipped); {how}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn strip_events_sums_and_removes_every_events_field() {
    let mut v = serde_json::json!({
        "events": 3,
        "runs": [[{ "events": 4, "x": 1 }, { "events": 5 }]],
        "y": { "events": 6, "z": [1, 2] }
    });
    assert_eq!(strip_events(&mut v), 18);
    assert_eq!(
        v,
        serde_json::json!({ "runs": [[{ "x": 1 }, {}]], "y": { "z": [1, 2] } })
    );
}

#[test]
fn the_recorded_file_parses() {
    let r = parse_recorded("# c\nmodel: m 3\na.toml abc events=12\n\nb.toml def events=0\n");
    assert_eq!(r.model, "m 3");
    assert_eq!(r.entries["a.toml"], ("abc".to_string(), 12));
    assert_eq!(r.entries["b.toml"], ("def".to_string(), 0));
}
