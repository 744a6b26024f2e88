//! Shared helpers of the grid and star campaign tests: the binary, running it,
//! the shipped campaigns, and reading what it wrote (store dumps, the
//! definitions, the report's page, figures and CSV files).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use coapcc::campaign::{self, Campaign};
use coapcc::networks::{AnyPlan, NetworkKind};
use coapcc::report;
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
/// `from` to the current layout, verifies, and holds the rows it held (`want`, its
/// dump before).
pub fn open_upgraded(old: &Path, from: u32, want: &str) -> Store {
    let up = coapcc::networks::open_store(old).unwrap();
    assert_eq!(up.upgraded_from(), Some(from));
    assert_eq!(up.layout(), up.current_layout());
    coapcc::networks::verify(&up).unwrap();
    assert!(
        coapcc::networks::dump(&up).unwrap() == want,
        "the upgrade changed or lost rows"
    );
    up
}

/// The upgraded store at `old`, opened again, is not upgraded again and
/// records the current layout.
pub fn assert_upgraded_once(old: &Path) {
    let again = coapcc::networks::open_store(old).unwrap();
    assert_eq!(again.upgraded_from(), None);
    let current = again.current_layout().to_string();
    let schema: String = rusqlite::Connection::open(old)
        .unwrap()
        .query_row("SELECT value FROM meta WHERE key = 'schema'", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(schema, current);
}

/// The small dumbbell campaign stored beside a network's own in the layout
/// upgrade tests, with the client counts `clients` (`[3, 6]`).
pub fn small_dumbbell(clients: &str) -> String {
    format!(
        r#"
name = "small-dumbbell"
seed = 5
algorithms = ["default", "cocoa"]
[workload]
exchanges = 10
[[set]]
name = "s"
clients = {clients}
buffers = [2500]
workloads = ["continuous"]
replications = 2
"#
    )
}

/// Checks that the upgraded store `up` holds the definitions of `networks`,
/// newest first; then closes it and checks that it is upgraded only once
/// ([`assert_upgraded_once`]).
pub fn assert_definitions_then_upgraded_once(up: Store, old: &Path, networks: &[&str]) {
    let defs = up.definitions().unwrap();
    assert_eq!(
        defs.iter().map(|d| d.network.as_str()).collect::<Vec<_>>(),
        networks
    );
    drop(up);
    assert_upgraded_once(old);
}

/// Checks that `store` holds one definition, `hash`, of `network`: the
/// definition is registered as the one run last.
pub fn assert_the_one_definition(store: &Store, hash: &str, network: NetworkKind) {
    let (def, others) = report::choose(store, None).unwrap();
    assert_eq!(def.hash, hash);
    assert_eq!(def.network, network.name());
    assert!(others.is_empty());
}

/// The shipped campaign file `name` (in `scenarios/campaigns`), loaded.
pub fn shipped(name: &str) -> AnyPlan {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/campaigns");
    AnyPlan::load(&root.join(name)).unwrap()
}

/// Runs a whole campaign of `runs` runs into `<name>.sqlite` in a new
/// folder, timed on stderr (`<name> campaign: N runs in T s`); checks that
/// it computed them all and that the store verifies. Returns the folder
/// (which holds the store) and the store.
pub fn run_whole<C: Campaign + ?Sized>(
    plan: &C,
    name: &str,
    runs: usize,
) -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(format!("{name}.sqlite"));
    let mut store = coapcc::networks::open_store(&path).unwrap();
    let t0 = std::time::Instant::now();
    let out = campaign::run(plan, &mut store, 0, None, false).unwrap();
    eprintln!(
        "{name} campaign: {} runs in {:.1} s",
        out.computed,
        t0.elapsed().as_secs_f64()
    );
    assert_eq!(out.computed, runs);
    coapcc::networks::verify(&store).unwrap();
    (dir, store)
}

/// A report's page as written in `out`, and its figures.
pub struct ReportPage {
    /// The folder the report was written to.
    pub out: PathBuf,
    /// `report.html`.
    pub html: String,
}

impl ReportPage {
    /// Reads the page of the report written to `out`.
    pub fn read(out: &Path) -> ReportPage {
        let html = std::fs::read_to_string(out.join("report.html")).unwrap();
        ReportPage {
            out: out.to_path_buf(),
            html,
        }
    }

    /// The figure `name`: an SVG file, inline in the page.
    pub fn svg(&self, name: &str) -> String {
        let s =
            std::fs::read_to_string(self.out.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(s.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(self.html.contains(s.trim_end()), "{name} is not inline");
        s
    }

    /// Checks that the page is self-contained (no script, link, source or
    /// URL), names the campaign's `definition` and holds every one of
    /// `headings`.
    pub fn assert_self_contained_with(&self, definition: &str, headings: &[&str]) {
        for bad in ["<script", "<link", " src=", "url("] {
            assert!(!self.html.contains(bad), "{bad}");
        }
        assert!(self.html.contains(definition));
        for h in headings {
            assert!(self.html.contains(h), "{h}");
        }
    }
}

/// How many times `what` occurs in `s`.
pub fn count(s: &str, what: &str) -> usize {
    s.matches(what).count()
}
