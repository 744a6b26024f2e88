//! `coapcc kernel-check` end to end on this machine's kernel: a small point
//! (4 continuous clients × 3 exchanges behind the 2500-byte buffer, SACK off)
//! through the IP-level dumbbell, beside the model; then a second call that
//! finds every run in the store. Needs root (CAP_NET_ADMIN) and
//! /dev/net/tun: skipped with a message without them, unless
//! `COAPCC_REQUIRE_NETNS=1` (CI) makes that a failure.

use assert_cmd::Command;
use coapcc::kernel_check::record::Source;
use coapcc::store::Store;

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

    let st = Store::open_read_only(&store).unwrap();
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
