//! Shared helpers of the grid and star campaign tests: the binary, running it,
//! and reading what it wrote (store dumps and report CSV files).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use coapcc::store::Store;

/// The `coapcc` binary under test.
pub fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("coapcc")
}

/// Runs the binary with `args`; panics with its stderr unless it succeeds,
/// and returns its stdout.
pub fn cli(args: &[&str]) -> String {
    let out = Command::new(bin()).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Writes `text` to `small.toml` in `dir` and runs it through the binary
/// into `one.sqlite` there, with one thread and then with two: the first
/// computes all its `runs`, the second none. Returns the store's path.
pub fn campaign_twice_through_the_binary(dir: &Path, text: &str, runs: usize) -> PathBuf {
    let file = dir.join("small.toml");
    std::fs::write(&file, text).unwrap();
    let one = dir.join("one.sqlite");
    let (f, s1) = (file.to_str().unwrap(), one.to_str().unwrap());
    let out = cli(&["campaign", f, "--store", s1, "--threads", "1"]);
    assert!(
        out.contains(&format!("{runs} runs, 0 already in {s1}, {runs} computed")),
        "{out}"
    );
    let out = cli(&["campaign", f, "--store", s1, "--threads", "2"]);
    assert!(
        out.contains(&format!("{runs} runs, {runs} already in")) && out.contains(", 0 computed"),
        "{out}"
    );
    one
}

/// The number of rows under `[table]` in a `store dump`.
pub fn section_rows(dump: &str, table: &str) -> usize {
    dump.lines()
        .skip_while(|l| *l != format!("[{table}]"))
        .skip(1)
        .take_while(|l| !l.starts_with('['))
        .count()
}

/// The rows of a report CSV file (CRLF-separated), each split into fields.
pub fn csv_rows(path: &Path) -> Vec<Vec<String>> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .split("\r\n")
        .filter(|l| !l.is_empty())
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

/// The index of column `name` in a CSV header.
pub fn col(header: &[String], name: &str) -> usize {
    header
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no column `{name}` in {header:?}"))
}

/// Opens the old store at `old` for writing: it is upgraded from layout
/// `from` to layout 5, verifies, and holds the rows it held (`want`, its
/// dump before).
pub fn open_upgraded(old: &Path, from: u32, want: &str) -> Store {
    let up = Store::open(old).unwrap();
    assert_eq!(up.upgraded_from(), Some(from));
    assert_eq!(up.layout(), 5);
    up.verify().unwrap();
    assert!(
        up.dump().unwrap() == want,
        "the upgrade changed or lost rows"
    );
    up
}

/// The upgraded store at `old`, opened again, is not upgraded again and
/// records layout 5.
pub fn assert_upgraded_once(old: &Path) {
    let again = Store::open(old).unwrap();
    assert_eq!(again.upgraded_from(), None);
    let schema: String = rusqlite::Connection::open(old)
        .unwrap()
        .query_row("SELECT value FROM meta WHERE key = 'schema'", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(schema, "5");
}
