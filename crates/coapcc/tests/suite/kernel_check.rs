//! `coapcc kernel-check` end to end on this machine's kernel: a small point
//! (4 continuous clients × 3 exchanges behind the 2500-byte buffer, SACK off)
//! through the IP-level dumbbell, beside the model; then a second call that
//! finds every run in the store. Needs root (CAP_NET_ADMIN) and
//! /dev/net/tun: skipped with a message without them, unless
//! `COAPCC_REQUIRE_NETNS=1` (CI) makes that a failure.

use assert_cmd::Command;
use coapcc::kernel_check::record::Source;

fn can_run_kernel() -> bool {
    match coapcc::kernel_check::kernel::unavailable() {
        None => true,
        Some(why) if std::env::var_os("COAPCC_REQUIRE_NETNS").is_some() => {
            panic!("COAPCC_REQUIRE_NETNS is set but kernel runs cannot be made: {why}")
        }
        Some(why) => {
            eprintln!("skipped: {why}");
            false
        }
    }
}

fn kernel_check(store: &std::path::Path) -> std::process::Output {
    Command::cargo_bin("coapcc")
        .unwrap()
        .args(["kernel-check", "--store"])
        .arg(store)
        .args([
            "--configs",
            "thesis",
            "--workloads",
            "continuous",
            "--buffers",
            "2500",
            "--replications",
            "1",
            "--clients",
            "4",
            "--exchanges",
            "3",
            "--time-limit",
            "120",
        ])
        .timeout(std::time::Duration::from_secs(240))
        .output()
        .unwrap()
}

#[test]
fn a_small_point_on_the_kernel_and_in_the_model_then_resumed() {
    if !can_run_kernel() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("k.sqlite");
    let out = kernel_check(&store);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("| kernel "), "{table}");
    assert!(table.contains("| model tcp "), "{table}");

    let st = coapcc::networks::open_store_read_only(&store).unwrap();
    let runs = st.kernel_check_runs().unwrap();
    let kernel: Vec<_> = runs.iter().filter(|r| r.kernel.is_some()).collect();
    assert_eq!(kernel.len(), 1, "{runs:?}");
    let k = kernel[0];
    assert!(matches!(k.record.source, Source::Kernel(_)));
    // Every client finished its three exchanges on one connection each.
    assert_eq!(k.record.fct.len(), 4);
    assert!(
        k.record.fct.iter().all(Option::is_some),
        "{:?}",
        k.record.fct
    );
    assert_eq!(k.record.counters.connections, 4);
    assert_eq!(k.record.counters.failed_exchanges, 0);
    // Physics: at least the 12 responses (a 65-byte CoAP message over TCP
    // framing: 105 IP bytes or more each) crossed the downlink.
    assert!(
        k.record.counters.bytes_down >= 12 * 105,
        "{:?}",
        k.record.counters
    );
    // The settings the run saw were recorded: SACK off as asked.
    let sysctl: serde_json::Value = serde_json::from_str(k.sysctl.as_ref().unwrap()).unwrap();
    assert_eq!(sysctl["net.ipv4.tcp_sack"], "0", "{sysctl}");
    assert_eq!(
        sysctl["net.ipv4.tcp_congestion_control"], "reno",
        "{sysctl}"
    );
    let models = runs.iter().filter(|r| r.model_version.is_some()).count();
    assert!(models >= 1, "{runs:?}");

    // The report: every stored run one CSV row, the side-by-side table on
    // the page.
    let rep = dir.path().join("report");
    let out = Command::cargo_bin("coapcc")
        .unwrap()
        .arg("report")
        .arg(&store)
        .arg("--out")
        .arg(&rep)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let csv = std::fs::read_to_string(rep.join("kernel-check-runs.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + runs.len(), "{csv}");
    let page = std::fs::read_to_string(rep.join("report.html")).unwrap();
    assert!(page.contains("| kernel ") && page.contains("| model tcp "));

    // Run again: nothing is computed, everything is found in the store.
    let again = kernel_check(&store);
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(again.status.success(), "{stderr}");
    assert!(
        stderr.contains("0 kernel run(s) and 0 model run(s) made"),
        "{stderr}"
    );
}

#[test]
fn bad_lists_are_refused_by_option() {
    let out = Command::cargo_bin("coapcc")
        .unwrap()
        .args(["kernel-check", "--model-only", "--buffers", "inf,0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("--buffers") && e.contains("`0`"), "{e}");
}

/// `--parallel` outside 1..=64 is refused before anything is created (it
/// used to be clamped silently: 10000 was accepted).
#[test]
fn parallel_out_of_bounds_is_refused_before_anything_is_created() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("k.sqlite");
    for n in ["10000", "65", "0"] {
        let out = Command::cargo_bin("coapcc")
            .unwrap()
            .args(["kernel-check", "--model-only", "--parallel", n])
            .args(["--configs", "defaults", "--workloads", "continuous"])
            .args(["--buffers", "inf", "--replications", "1"])
            .args(["--clients", "1", "--exchanges", "1", "--store"])
            .arg(&store)
            .timeout(std::time::Duration::from_secs(120))
            .output()
            .unwrap();
        let e = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "--parallel {n}: {e}");
        assert!(
            e.contains(&format!("--parallel {n}: expected 1 to 64")),
            "{e}"
        );
        assert!(!store.exists(), "--parallel {n}: the store was created");
    }
}

/// The namespaces whose creating process (`coapcc-<pid>-…`) is a child of
/// `parent`, with that child's pid.
fn namespaces_of_children(parent: u32) -> Vec<(String, u32)> {
    let out = std::process::Command::new("ip")
        .args(["netns", "list"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let name = l.split_whitespace().next()?;
            let pid: u32 = name
                .strip_prefix("coapcc-")?
                .split('-')
                .next()?
                .parse()
                .ok()?;
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let ppid: u32 = stat
                .rsplit_once(')')?
                .1
                .split_whitespace()
                .nth(1)?
                .parse()
                .ok()?;
            (ppid == parent).then(|| (name.to_string(), pid))
        })
        .collect()
}

/// The namespaces named after `pid`.
fn namespaces_named_after(pid: u32) -> Vec<String> {
    let out = std::process::Command::new("ip")
        .args(["netns", "list"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.starts_with(&format!("coapcc-{pid}-")))
        .map(String::from)
        .collect()
}

/// The scratch directories of kernel-check in `dir`.
fn scratch_dirs(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("coapcc-kernel-check-"))
        .collect()
}

/// Processes this test started: on drop (also when an assertion failed)
/// each still running is asked to stop (SIGTERM: an emulator tears its
/// namespaces down) and, past a bound, killed — by its own id.
struct Started(Vec<u32>);

impl Drop for Started {
    fn drop(&mut self) {
        for &pid in &self.0 {
            if std::path::Path::new(&format!("/proc/{pid}")).exists() {
                let _ = std::process::Command::new("kill")
                    .args(["-TERM", &pid.to_string()])
                    .status();
            }
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        for &pid in &self.0 {
            while std::path::Path::new(&format!("/proc/{pid}")).exists()
                && std::time::Instant::now() < deadline
            {
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            let _ = std::process::Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .stderr(std::process::Stdio::null())
                .status();
        }
    }
}

/// SIGHUP (the terminal closed) or SIGINT to `coapcc kernel-check` while a
/// kernel run is in progress: the run is stopped, its emulator tears its
/// namespaces down, the scratch directory is removed and the command exits
/// at once saying why. Before, the signal killed kernel-check only: the
/// emulator ran on and the `coapcc-kernel-check-*` directory stayed.
#[test]
fn a_signal_stops_the_kernel_runs_and_leaves_nothing_behind() {
    if !can_run_kernel() {
        return;
    }
    for signal in ["HUP", "INT"] {
        // a TMPDIR of this test's own, so only its scratch directories count
        let tmp = tempfile::tempdir().unwrap();
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_coapcc"))
            .args(["kernel-check", "--kernel-only", "--configs", "defaults"])
            .args(["--workloads", "continuous", "--buffers", "inf"])
            .args([
                "--replications",
                "1",
                "--clients",
                "2",
                "--exchanges",
                "200",
            ])
            .args(["--time-limit", "120", "--store"])
            .arg(tmp.path().join("k.sqlite"))
            .env("TMPDIR", tmp.path())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::fs::File::create(tmp.path().join("stderr")).unwrap())
            .spawn()
            .unwrap();
        let kc = child.id();
        let mut started = Started(vec![kc]);
        // wait until the kernel run's emulator has made its namespaces
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        let emulator = loop {
            if let Some((_, pid)) = namespaces_of_children(kc).first() {
                break *pid;
            }
            assert!(
                child.try_wait().unwrap().is_none(),
                "kernel-check ended early: {}",
                std::fs::read_to_string(tmp.path().join("stderr")).unwrap()
            );
            assert!(
                std::time::Instant::now() < deadline,
                "no namespaces after 60 s"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        };
        started.0.push(emulator);
        assert_eq!(scratch_dirs(tmp.path()).len(), 1);
        std::process::Command::new("kill")
            .args([&format!("-{signal}"), &kc.to_string()])
            .status()
            .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(45);
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "SIG{signal}: kernel-check still running after 45 s"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        };
        let stderr = std::fs::read_to_string(tmp.path().join("stderr")).unwrap();
        assert_eq!(status.code(), Some(2), "SIG{signal}: {status}: {stderr}");
        assert!(
            stderr.contains(&format!("stopped by SIG{signal}")),
            "{stderr}"
        );
        assert!(
            !std::path::Path::new(&format!("/proc/{emulator}")).exists(),
            "SIG{signal}: the emulator {emulator} still runs"
        );
        assert_eq!(
            namespaces_named_after(emulator),
            Vec::<String>::new(),
            "SIG{signal}: namespaces left"
        );
        assert_eq!(
            scratch_dirs(tmp.path()),
            Vec::<String>::new(),
            "SIG{signal}: scratch directory left"
        );
    }
}

/// A finished kernel-check leaves no scratch directory (model side only:
/// it makes none; see the signal test for the kernel side).
#[test]
fn a_model_only_check_leaves_no_scratch_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let out = Command::cargo_bin("coapcc")
        .unwrap()
        .args(["kernel-check", "--model-only", "--configs", "defaults"])
        .args(["--workloads", "continuous", "--buffers", "inf"])
        .args(["--replications", "1", "--clients", "1", "--exchanges", "1"])
        .arg("--store")
        .arg(tmp.path().join("k.sqlite"))
        .env("TMPDIR", tmp.path())
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(scratch_dirs(tmp.path()), Vec::<String>::new());
}
