//! Campaigns end to end: interruption and resumption, independence from the
//! thread count, changed definitions, the report's figures and tables, and the
//! shipped campaign files.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use coapcc::campaign;
use coapcc::networks::AnyPlan;
use coapcc::report;

const SMALL: &str = r#"
name = "small"
title = "a small test campaign"
seed = 5
algorithms = ["default", "cocoa"]

[workload]
exchanges = 20

[[set]]
name = "error-free"
clients = [5, 20]
buffers = [2500, "inf"]
workloads = ["continuous", "random"]
replications = 2

[[set]]
name = "mixed"
clients = [6]
buffers = ["inf"]
replications = 2
algorithms = []
mixed = [{ label = "default+cocoa", of = ["default", "cocoa"] }]
"#;

/// Runs of SMALL: 2 clients × 2 buffers × 2 workloads × 2 algorithms × 2
/// replications, plus 2 of the mixed population.
const SMALL_RUNS: u64 = 2 * 2 * 2 * 2 * 2 + 2;

fn bin() -> std::path::PathBuf {
    assert_cmd::cargo::cargo_bin("coapcc")
}

fn runs_in(store: &Path) -> u64 {
    if !store.exists() {
        return 0;
    }
    coapcc::networks::open_store_read_only(store)
        .and_then(|s| coapcc::networks::dumbbell::store::run_count(&s))
        .unwrap_or(0)
}

fn run_cli(file: &Path, store: &Path, threads: &str) -> String {
    let out = Command::new(bin())
        .args([
            "campaign",
            file.to_str().unwrap(),
            "--store",
            store.to_str().unwrap(),
        ])
        .args(["--threads", threads])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn a_second_campaign_on_a_store_in_use_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("small.toml");
    std::fs::write(&file, SMALL).unwrap();
    let store = dir.path().join("s.sqlite");
    let first = Command::new(bin())
        .args([
            "campaign",
            file.to_str().unwrap(),
            "--store",
            store.to_str().unwrap(),
        ])
        .args(["--threads", "1", "--pause-ms", "100"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = first.id();
    let mut tries = 0;
    while runs_in(&store) < 1 {
        tries += 1;
        assert!(tries < 12_000, "the first campaign stored no run");
        std::thread::sleep(Duration::from_millis(5));
    }
    // While the first one runs: refused at once, naming it; nothing computed.
    let second = Command::new(bin())
        .args([
            "campaign",
            file.to_str().unwrap(),
            "--store",
            store.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&second.stderr);
    let stored_meanwhile = runs_in(&store);
    let first = first.wait_with_output().unwrap();
    assert!(first.status.success());
    let out = String::from_utf8_lossy(&first.stdout);
    assert!(
        out.contains(&format!("{SMALL_RUNS} runs, 0 already in")),
        "{out}"
    );
    assert!(
        stored_meanwhile < SMALL_RUNS,
        "the first campaign ended before the second started: nothing was tested"
    );
    assert!(!second.status.success());
    assert!(
        err.contains(&format!("another coapcc process (pid {pid})"))
            && err.contains(store.to_str().unwrap())
            && !err.contains("panicked"),
        "{err}"
    );
    assert!(String::from_utf8_lossy(&second.stdout).is_empty());
    // Once it is done, the store is free again.
    let out = run_cli(&file, &store, "2");
    assert!(out.contains(", 0 computed"), "{out}");
    coapcc::networks::verify(&coapcc::networks::open_store_read_only(&store).unwrap()).unwrap();
}

#[test]
fn a_killed_campaign_resumes_to_the_same_store() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("small.toml");
    std::fs::write(&file, SMALL).unwrap();
    let killed = dir.path().join("killed.sqlite");

    // Slowed down (a pause after each stored run) so that the kill lands mid-way.
    let mut child = Command::new(bin())
        .args([
            "campaign",
            file.to_str().unwrap(),
            "--store",
            killed.to_str().unwrap(),
        ])
        .args(["--threads", "1", "--pause-ms", "60"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while runs_in(&killed) < 3 {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "no run stored in 60 s"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    // The killed process's lock file is left behind; the kernel released its
    // lock, so it does not stand in the way of the resumption.
    let lock = coapcc::store::lock::lock_path(&killed);
    assert!(lock.exists());
    let after_kill = runs_in(&killed);
    assert!(
        (3..SMALL_RUNS).contains(&after_kill),
        "the kill should land mid-way: {after_kill} of {SMALL_RUNS} runs stored"
    );
    // Only whole runs are stored.
    coapcc::networks::verify(&coapcc::networks::open_store_read_only(&killed).unwrap()).unwrap();

    // Resuming recomputes nothing already stored.
    let out = run_cli(&file, &killed, "2");
    assert!(
        out.contains(&format!(
            "{SMALL_RUNS} runs, {after_kill} already in {}, {} computed",
            killed.display(),
            SMALL_RUNS - after_kill
        )),
        "{out}"
    );
    assert!(!lock.exists(), "removed by the process that held it");
    // And running again computes nothing.
    let out = run_cli(&file, &killed, "2");
    assert!(
        out.contains(&format!("{SMALL_RUNS} already in")) && out.contains(", 0 computed"),
        "{out}"
    );

    // The same store as an uninterrupted run's, with another thread count.
    let whole = dir.path().join("whole.sqlite");
    run_cli(&file, &whole, "1");
    let (a, b) = (
        coapcc::networks::open_store_read_only(&killed).unwrap(),
        coapcc::networks::open_store_read_only(&whole).unwrap(),
    );
    coapcc::networks::verify(&a).unwrap();
    assert_eq!(
        coapcc::networks::dumbbell::store::run_count(&a).unwrap(),
        SMALL_RUNS
    );
    let (da, db) = (
        coapcc::networks::dump(&a).unwrap(),
        coapcc::networks::dump(&b).unwrap(),
    );
    // 16 runs of 5 clients, 16 of 20, 2 of 6.
    let client_rows = da
        .lines()
        .skip_while(|l| *l != "[clients]")
        .skip(1)
        .take_while(|l| !l.starts_with('['))
        .count();
    assert_eq!(
        client_rows,
        16 * 5 + 16 * 20 + 2 * 6,
        "the dump holds every client row"
    );
    assert!(da == db, "resumed and uninterrupted stores differ");
}

#[test]
fn results_do_not_depend_on_the_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let plan = coapcc::networks::dumbbell::campaign::plan::parse(SMALL, "small").unwrap();
    let mut dumps = Vec::new();
    for threads in [1, 2, 3] {
        let path = dir.path().join(format!("t{threads}.sqlite"));
        let mut store = coapcc::networks::open_store(&path).unwrap();
        let out = campaign::run(&plan, &mut store, threads, None, false).unwrap();
        assert_eq!(
            (out.total, out.reused, out.computed),
            (SMALL_RUNS as usize, 0, SMALL_RUNS as usize)
        );
        dumps.push(coapcc::networks::dump(&store).unwrap());
    }
    assert!(dumps[0] == dumps[1] && dumps[1] == dumps[2]);
}

#[test]
fn a_changed_campaign_reuses_unchanged_runs_and_is_reported_apart() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.sqlite");
    let mut store = coapcc::networks::open_store(&path).unwrap();
    let old = coapcc::networks::dumbbell::campaign::plan::parse(SMALL, "small.toml").unwrap();
    campaign::run(&old, &mut store, 0, None, false).unwrap();

    // One more replication of the error-free set: its first two are reused.
    let changed_text = SMALL.replacen("replications = 2", "replications = 3", 1);
    let changed =
        coapcc::networks::dumbbell::campaign::plan::parse(&changed_text, "small.toml").unwrap();
    assert_ne!(old.definition, changed.definition);
    let out = campaign::run(&changed, &mut store, 0, None, false).unwrap();
    assert_eq!(out.reused, SMALL_RUNS as usize);
    assert_eq!(out.computed, 16);

    // A new seed shares no run.
    let reseeded = coapcc::networks::dumbbell::campaign::plan::parse(
        &SMALL.replace("seed = 5", "seed = 6"),
        "small.toml",
    )
    .unwrap();
    let out = campaign::run(&reseeded, &mut store, 0, None, false).unwrap();
    assert_eq!((out.reused, out.computed), (0, SMALL_RUNS as usize));

    // The report shows the definition run last and names the others.
    let (def, others) = report::choose(&store, None).unwrap();
    assert_eq!(def.hash, reseeded.definition);
    assert_eq!(others.len(), 2);
    let (def, _) = report::choose(&store, Some(&changed.definition[..10])).unwrap();
    assert_eq!(def.hash, changed.definition);
    let r = coapcc::networks::dumbbell::report::data::gather(&store, def, others).unwrap();
    assert_eq!(r.progress(), (SMALL_RUNS + 16, SMALL_RUNS + 16));
    // Every cell summarises exactly its own replications.
    for c in &r.cells {
        let want = if c.cell.set == "error-free" { 3 } else { 2 };
        assert_eq!(c.done, want);
        let clients: u64 = c.groups.iter().map(|g| g.summary.clients).sum();
        assert_eq!(clients, u64::from(c.cell.clients) * want as u64);
    }
    assert!(report::choose(&store, Some("nothing-like-this")).is_err());
}

fn csv_rows(path: &Path) -> Vec<Vec<String>> {
    std::fs::read_to_string(path)
        .unwrap()
        .split("\r\n")
        .filter(|l| !l.is_empty())
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

#[test]
fn the_report_holds_the_figures_and_tables() {
    let dir = tempfile::tempdir().unwrap();
    let text = r#"
        name = "report-test"
        seed = 3
        algorithms = ["default", "cocoa"]
        [[set]]
        name = "error-free"
        clients = [1, 10]
        buffers = [2500]
        workloads = ["continuous"]
        replications = 2
        [[set]]
        name = "mixed"
        clients = [4]
        buffers = ["inf"]
        replications = 1
        algorithms = []
        mixed = [{ label = "half", of = ["default", "cocoa"] }]
    "#;
    let plan = coapcc::networks::dumbbell::campaign::plan::parse(text, "report-test.toml").unwrap();
    let store_path = dir.path().join("s.sqlite");
    let mut store = coapcc::networks::open_store(&store_path).unwrap();
    campaign::run(&plan, &mut store, 0, None, false).unwrap();
    drop(store);

    let out = dir.path().join("report");
    let status = Command::new(bin())
        .args([
            "report",
            store_path.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();

    // One FCT and one unnecessary-retransmissions figure per client count and
    // buffer, each as an SVG file and inline in the page.
    let stems = [
        "error-free-continuous-2500-none-1",
        "error-free-continuous-2500-none-10",
        "mixed-continuous-inf-none-4",
    ];
    for kind in ["fct", "unnecessary"] {
        for stem in stems {
            let svg = std::fs::read_to_string(out.join(format!("{kind}-{stem}.svg"))).unwrap();
            assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
            assert!(
                html.contains(svg.trim_end()),
                "{kind}-{stem}.svg is not inline"
            );
        }
    }
    let n_svg = std::fs::read_dir(&out)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "svg")
        })
        .count();
    assert_eq!(n_svg, 6);
    let fct10 =
        std::fs::read_to_string(out.join("fct-error-free-continuous-2500-none-10.svg")).unwrap();
    assert_eq!(
        fct10.matches("class=\"iqr\"").count(),
        2,
        "one box per algorithm"
    );
    let mixed = std::fs::read_to_string(out.join("fct-mixed-continuous-inf-none-4.svg")).unwrap();
    assert!(mixed.contains("half: default") && mixed.contains("half: cocoa"));
    assert!(
        mixed.contains("stroke-dasharray"),
        "mixed groups are dashed"
    );

    // Self-contained: nothing fetched from elsewhere.
    for bad in ["<script", "<link", " src=", "url("] {
        assert!(!html.contains(bad), "{bad}");
    }
    assert!(html.contains(&plan.definition), "names the definition");
    for heading in [
        "Measured vs published",
        "Flow completion time",
        "Unnecessary retransmissions per client",
        "Transmissions per exchange",
    ] {
        assert!(html.contains(heading), "{heading}");
    }

    // Measured vs published: the 1- and 10-client continuous rows with a
    // 2500-byte buffer of docs/spec/calibration-spec.md §1, for both algorithms.
    let published = csv_rows(&out.join("published.csv"));
    assert_eq!(published[0][9], "measured median");
    assert_eq!(published[0][14], "published median");
    assert_eq!(published[0][18], "Δ median");
    let keyed: Vec<(String, String, String)> = published[1..]
        .iter()
        .map(|r| (r[4].clone(), r[5].clone(), r[14].clone()))
        .collect();
    for want in [
        ("1", "default", "33.003"),
        ("1", "cocoa", "33.003"),
        ("10", "default", "33.220"),
        ("10", "cocoa", "33.220"),
    ] {
        assert!(
            keyed.contains(&(want.0.into(), want.1.into(), want.2.into())),
            "{want:?} in {keyed:?}"
        );
    }
    assert_eq!(published.len(), 1 + 4);
    for r in &published[1..] {
        let (m, p): (f64, f64) = (r[9].parse().unwrap(), r[14].parse().unwrap());
        assert!((m - 33.0).abs() < 1.0, "median {m}");
        let d = 100.0 * (m - p) / p;
        let want = if (d * 10.0).round() == 0.0 {
            "0.0%".to_string()
        } else {
            format!("{d:+.1}%")
        };
        assert_eq!(r[18], want);
        assert!(html.contains(&format!("<td class=\"n\">{}</td>", r[18])));
    }

    // Transmissions per exchange: one row per group, shares summing to 100 %.
    let tx = csv_rows(&out.join("transmissions.csv"));
    assert_eq!(tx[0][7], "1 tx %");
    assert_eq!(tx.len(), 1 + 4 + 2);
    for r in &tx[1..] {
        let sum: f64 = r[7..13].iter().map(|v| v.parse::<f64>().unwrap()).sum();
        assert!((sum - 100.0).abs() < 0.05, "{r:?}");
    }
    // One client, 50 exchanges, 2 replications, nothing retransmitted.
    assert_eq!(
        tx[1][..8],
        [
            "error-free",
            "none",
            "continuous",
            "2500",
            "1",
            "default",
            "100",
            "100.00"
        ]
    );

    let summary = csv_rows(&out.join("summary.csv"));
    assert_eq!(summary.len(), 1 + 4 + 2);
    assert_eq!(summary[1][6], "2/2");
    assert_eq!(summary[5][5], "half: default");
    assert_eq!(summary[5][7], "2", "4 mixed clients split 2 + 2");
}

#[test]
fn shipped_campaigns_expand() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/campaigns");
    // Whether this build lacks CoAP over TCP (then the campaigns skip it).
    let probe = "name = \"p\"\nskip_unavailable = true\nalgorithms = [\"tcp\"]\n\
                 [[set]]\nname = \"s\"\nclients = [1]\nreplications = 1\n";
    let tcp = coapcc::networks::dumbbell::campaign::plan::parse(probe, "probe")
        .unwrap()
        .skipped
        .len() as u64;
    for (name, single_alg_runs, tcp_runs) in [
        // (6 clients × 2 buffers × 2 workloads × 20 + 3 errors × 2 workloads × 40) per algorithm.
        (
            "thesis.toml",
            6 * (6 * 2 * 2 * 20 + 3 * 2 * 40),
            6 * 2 * 2 * 20 + 3 * 2 * 40,
        ),
        // 6 clients × 3 buffers × 2 workloads × 6 algorithms × 20, + 5 × 2 × 2 × 4 mixes × 20.
        (
            "anrw2018-fullbackoff.toml",
            6 * 3 * 2 * 6 * 20 + 5 * 2 * 2 * 4 * 20,
            0,
        ),
        // 4 clients × 2 buffers × 2 workloads × 20 per algorithm.
        (
            "vtc2018-coap-over-tcp.toml",
            2 * 4 * 2 * 2 * 20,
            4 * 2 * 2 * 20,
        ),
        // 4 sets × 3 clients × 2 buffers × 3 algorithms × 5.
        ("workloads.toml", 4 * 3 * 2 * 3 * 5, 0),
    ] {
        let plan = coapcc::networks::dumbbell::campaign::plan::load(&root.join(name)).unwrap();
        let want = single_alg_runs + (1 - tcp) * tcp_runs;
        assert_eq!(plan.runs() as u64, want, "{name}");
        assert_eq!(
            plan.skipped.len() as u64,
            if tcp_runs > 0 { tcp } else { 0 },
            "{name}"
        );
    }
}

/// Every shipped campaign is within the default ceilings of a whole plan
/// (so none needs --force), and its cells and runs, counted from its sets'
/// sizes without expanding it, are those of its expanded plan.
#[test]
fn shipped_campaigns_are_within_the_ceilings_and_counted_exactly() {
    use coapcc::campaign::ceiling::{Ceilings, Estimate};
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/campaigns");
    let mut names: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    names.sort();
    assert_eq!(names.len(), 7, "{names:?}");
    for path in names {
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        let e: Estimate = AnyPlan::estimate(&text, &origin, 4).unwrap();
        e.check(&Ceilings::DEFAULT, &origin, false)
            .unwrap_or_else(|err| panic!("{err}"));
        let plan = AnyPlan::parse(&text, &origin).unwrap();
        let (cells, runs) = (plan.cell_rows().len() as u64, plan.costs().len() as u64);
        assert_eq!(cells, runs, "one cost a cell");
        assert_eq!(e.cells, cells, "{origin}");
        let keys: u64 = plan.cell_rows().iter().map(|(_, k)| k.len() as u64).sum();
        assert_eq!(e.runs, keys, "{origin}");
        assert!(
            e.events > 0 && e.memory > 0 && e.store > 0,
            "{origin}: {e:?}"
        );
    }
}

/// Grid campaigns came later: the dumbbell campaigns' definitions and run keys
/// are those they had before (a changed key would recompute every stored run).
/// They change with `MODEL_VERSION` only (model 3: clamped error sojourns,
/// the server's token on duplicates, Linux 4.9's loss recovery in `tcp`;
/// model 4: `tcp` is Linux 4.9 as the thesis configured it, without SACK;
/// model 5: the second algorithm audit; model 6: the Linux profiles' timers
/// on Linux's timer wheel; model 7: the tail loss probe on fresh
/// connections; model 8: the window-scale option in `tcp-linux6`; model 9:
/// the timers of one wheel bucket run last armed first; model 10: `tcp`'s
/// early retransmit, window scale and fresh stamp, and the lwIP cwnd
/// variants' `min` reading).
#[test]
fn shipped_dumbbell_definitions_and_keys_are_unchanged() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/campaigns");
    for (name, definition, first, last) in [
        (
            "thesis.toml",
            "9406e56ec88a54a37cd3d329f0b7b750d0efe722478bf05ca21f553013b8972d",
            "49a3e6e81c3b508ee4232a4fa0e6991f11b23de475ac9a98a4cd3059f9b7a722",
            "e928eeaadb783b9b70f5c52821e91a455acc530839ae0cf9df079a66aa22851e",
        ),
        (
            "anrw2018-fullbackoff.toml",
            "ef2d311e21c7830fdbbb811db7f3562fa2d796be3f893089e74475f11853965e",
            "e57d2993dc31da6802499b5200415e531ef5a7579e90bce7c91dd3368cbce0d3",
            "8faf747de3a78dfbf6752d645ac9d53105605faca1095afd475127d39a813155",
        ),
        (
            "vtc2018-coap-over-tcp.toml",
            "7fe975e9c909c5404d67f75386c0f350a617f729d840c3d5feed8ae740457ab4",
            "e57d2993dc31da6802499b5200415e531ef5a7579e90bce7c91dd3368cbce0d3",
            "fc5cf2743bb53c85e7f1792624f8ba188d50b2fe58474932dbbbe30833ae0a46",
        ),
    ] {
        let Some(plan) = AnyPlan::load(&root.join(name))
            .unwrap()
            .into_inner::<coapcc::networks::dumbbell::Dumbbell>()
        else {
            panic!("{name} is a dumbbell campaign");
        };
        let last_cell = plan.cells.last().unwrap();
        assert_eq!(
            (
                plan.definition.as_str(),
                plan.cells[0].keys[0].as_str(),
                last_cell.keys.last().unwrap().as_str()
            ),
            (definition, first, last),
            "{name}"
        );
    }
}

/// The whole thesis campaign with the published replication counts (about half a
/// minute on 2 cores; see docs/campaigns.md):
/// `cargo test -p coapcc --test suite campaign:: -- --ignored`.
#[test]
#[ignore]
fn the_thesis_campaign_runs_whole() {
    let dir = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/campaigns");
    let plan = coapcc::networks::dumbbell::campaign::plan::load(&root.join("thesis.toml")).unwrap();
    let path = dir.path().join("thesis.sqlite");
    let mut store = coapcc::networks::open_store(&path).unwrap();
    let t0 = Instant::now();
    let out = campaign::run(&plan, &mut store, 0, None, false).unwrap();
    eprintln!(
        "thesis campaign: {} runs in {:.1} s",
        out.computed,
        t0.elapsed().as_secs_f64()
    );
    assert_eq!(out.computed, plan.runs());
    coapcc::networks::verify(&store).unwrap();
    let (def, others) = report::choose(&store, None).unwrap();
    let r = coapcc::networks::dumbbell::report::data::gather(&store, def, others).unwrap();
    assert_eq!(r.progress().0, plan.runs() as u64);
    // Every published row of the thesis' algorithms at these settings is compared.
    assert!(r.comparisons.len() >= 24, "{}", r.comparisons.len());
    coapcc::networks::dumbbell::report::write(&r, &dir.path().join("report")).unwrap();
}
