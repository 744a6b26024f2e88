//! The real-network subcommands end to end: `coapcc client`, `server`,
//! `load` and `emulate`, on loopback.

use crate::net_support;

use std::process::{Command, Stdio};
use std::time::Duration;

use coapcc_net::client::{ClientOptions, Outcome};
use coapcc_net::resources::Resources;
use coapcc_net::server::{self, ServerOptions};
use coapcc_proto::message::Code;
use net_support::*;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_coapcc"))
}

#[test]
fn client_methods_payload_from_stdin_and_count() {
    let h = server::spawn(any_port(), ServerOptions::default(), Resources::standard()).unwrap();
    let uri = |p: &str| format!("coap://127.0.0.1:{}/{p}", h.addr().port());
    let (ok, out, err) = run_bounded(bin().args(["client", &uri("hello")]));
    assert!(ok, "{err}");
    assert_eq!(out, "Hello from coapcc\n");
    assert!(err.starts_with("2.05 from 127.0.0.1:"), "{err}");

    let mut put = bin()
        .args(["client", "-m", "put", "-p", "-", &uri("store")])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        put.stdin.take().unwrap().write_all(b"from stdin").unwrap();
    }
    let o = put.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).starts_with("2.04"));
    let (_, out, _) = run_bounded(bin().args(["client", &uri("store")]));
    assert_eq!(out, "from stdin\n");
    let (ok, _, err) = run_bounded(bin().args(["client", "-m", "delete", &uri("store")]));
    assert!(ok && err.starts_with("2.02"), "{err}");

    let (ok, out, err) =
        run_bounded(bin().args(["client", "--cc", "cocoa", "--count", "4", &uri("sense")]));
    assert!(ok, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 6, "{out}");
    for (i, l) in lines[1..5].iter().enumerate() {
        let f: Vec<&str> = l.split_whitespace().collect();
        assert_eq!(f[0], i.to_string());
        assert_eq!(f[1], "2.05");
        let rtt: f64 = f[2].parse().unwrap();
        assert!(rtt > 0.0 && rtt < 1000.0, "{l}");
        assert_eq!(f[3], "0");
        // CoCoA's first timer is in [2, 3] s; later ones follow its estimate
        let timer: f64 = f[5].parse().unwrap();
        if i == 0 {
            assert!((2.0..=3.0).contains(&timer), "{l}");
        }
    }
    assert!(lines[5].starts_with("4 exchanges, 0 failed"), "{out}");
    assert_eq!(h.stop().stats.requests, 8);
}

#[test]
fn client_rejects_unknown_algorithms_and_bad_uris() {
    let (ok, _, err) = run_bounded(bin().args(["client", "--cc", "nope", "coap://127.0.0.1:9/x"]));
    assert!(!ok);
    assert!(err.contains("unknown") && err.contains("default"), "{err}");
    let (ok, _, err) = run_bounded(bin().args(["client", "http://127.0.0.1/x"]));
    assert!(!ok);
    assert!(err.contains("coap://"), "{err}");
}

#[test]
fn load_prints_the_testbed_metrics_as_json_and_table() {
    let h = server::spawn(any_port(), ServerOptions::default(), Resources::standard()).unwrap();
    let uri = format!("coap://127.0.0.1:{}/sense", h.addr().port());
    let (ok, out, err) = run_bounded(bin().args([
        "load",
        &uri,
        "--clients",
        "4",
        "--exchanges",
        "6",
        "--workload",
        "random",
        "--batch",
        "2-3",
        "--cc",
        "cocoa",
        "--format",
        "json",
    ]));
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let a = &v["algorithms"][0];
    assert_eq!(a["label"], "cocoa");
    assert_eq!(a["clients"], 4);
    assert_eq!(a["retransmissions_per_exchange"], serde_json::json!([24]));
    assert_eq!(a["unfinished_clients"], 0);
    let p50 = a["fct"]["p50"].as_f64().unwrap();
    assert!(p50 > 0.0 && p50 < 2.0, "{p50}");
    assert_eq!(v["workload"]["kind"], "random");
    // Only what a load generator measures: no bottleneck counters.
    for key in [
        "drops",
        "utilisation_up",
        "utilisation_down",
        "unnecessary_share_up",
    ] {
        assert!(a.get(key).is_none(), "{key} in {a}");
    }
    assert_eq!(a["mismatched_responses"], 0);

    let (ok, out, err) =
        run_bounded(bin().args(["load", &uri, "--clients", "2", "--exchanges", "3"]));
    assert!(ok, "{err}");
    assert!(out.starts_with("load against coap://127.0.0.1:"), "{out}");
    assert!(
        out.contains("FCT (s)") && out.contains("retransmissions/exchange  0:6 (100.0%)"),
        "{out}"
    );
    assert!(
        !out.contains("utilisation") && !out.contains("drops"),
        "{out}"
    );
    assert!(out.contains("responses with another token 0"), "{out}");
    assert_eq!(h.stop().stats.requests, 24 + 6);
}

#[test]
fn server_and_emulate_subcommands_serve_and_delay() {
    let srv_addr = free_addr();
    let mut server = Peer(
        bin()
            .args([
                "server",
                "--listen",
                &srv_addr.to_string(),
                "--resource",
                "t=12",
                "--duration",
                "15",
            ])
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    wait_ready(srv_addr, "t");
    let emu_addr = free_addr();
    let _emu = Peer(
        bin()
            .args([
                "emulate",
                "--listen",
                &emu_addr.to_string(),
                "--server",
                &srv_addr.to_string(),
                "--scale",
                "10",
                "--duration",
                "15",
            ])
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    std::thread::sleep(Duration::from_millis(300));
    let opts = ClientOptions::default();
    let direct = exchanges(srv_addr, &opts, Code::GET, "t", b"", 2, |_, _| {});
    let relayed = exchanges(emu_addr, &opts, Code::GET, "t", b"", 3, |_, _| {});
    for r in direct.iter().chain(&relayed) {
        let Outcome::Response { code, payload, .. } = &r.outcome else {
            panic!("{r:?}")
        };
        assert_eq!((*code, payload.len()), (Code::CONTENT, 12));
    }
    // Only /t is served when resources are given.
    let r = exchanges(srv_addr, &opts, Code::GET, "sense", b"", 1, |_, _| {});
    assert!(matches!(
        r[0].outcome,
        Outcome::Response {
            code: Code::NOT_FOUND,
            ..
        }
    ));
    // Through the relay: 20 + 40 ms of propagation, 1–2 ms each way to the
    // server, and serialisation at 600 / 300 kbit/s: at least 62 ms.
    for r in &relayed {
        let ms = r.elapsed as f64 / 1e6;
        assert!((62.0..200.0).contains(&ms), "relayed RTT {ms} ms");
    }
    for r in &direct {
        assert!((r.elapsed as f64 / 1e6) < 50.0);
    }
    let _ = server.0.kill();
}

/// `coapcc emulate --scenario <a grid scenario> --nodes 36`: a client's
/// exchanges cross eight hops of the grid; the startup line says which grid
/// and where clients attach, the summary what the grid did. Options that do
/// not apply to the grid are refused before anything starts.
#[test]
fn emulate_puts_the_grid_between_client_and_server() {
    let any = "127.0.0.1:0".parse().unwrap();
    let h = server::spawn(any, ServerOptions::default(), Resources::standard()).unwrap();
    let scenario = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/pcocoa/periodic.toml"
    );
    let emu_addr = free_addr();
    let emu = bin()
        .args([
            "emulate",
            "--listen",
            &emu_addr.to_string(),
            "--server",
            &h.addr().to_string(),
            "--scenario",
            scenario,
            "--nodes",
            "36",
            "--duration",
            "3",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let uri = format!("coap://127.0.0.1:{}/sense", emu_addr.port());
    let (ok, out, err) = run_bounded(bin().args(["client", "--count", "3", &uri]));
    assert!(ok, "{err}");
    for l in out.lines().skip(1).take(3) {
        let rtt: f64 = l.split_whitespace().nth(2).unwrap().parse().unwrap();
        // eight hops each way: about 129 ms for these sizes
        assert!((100.0..200.0).contains(&rtt), "{l}");
    }
    let o = emu.wait_with_output().unwrap();
    let log = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{log}");
    assert!(
        log.contains("through the 36-node 802.15.4 grid: contiki MAC, storing routing")
            && log.contains("clients on nodes 36 in order of arrival"),
        "{log}"
    );
    assert!(
        log.contains("upstream (clients → server): 3 datagrams (42 bytes): 3 delivered"),
        "{log}"
    );
    assert!(
        log.contains("grid frames: ") && log.contains("grid drops: 0 datagrams"),
        "{log}"
    );
    assert!(log.contains("clients on nodes (mappings): 36 (1)"), "{log}");
    assert_eq!(h.stop().stats.requests, 3);

    let (ok, _, err) = run_bounded(bin().args([
        "emulate",
        "--server",
        "127.0.0.1:9",
        "--network",
        "grid",
        "--buffer",
        "2500",
    ]));
    assert!(!ok);
    assert!(
        err.contains("--buffer: applies to the dumbbell only"),
        "{err}"
    );
}

/// `coapcc emulate --scenario <one LoRaWAN device 100 m from the gateway>`:
/// the client's request crosses the LoRa uplink at SF7 and its response
/// comes back in the device's RX1 window, one second after the uplink's
/// end; the summary says
/// what the LoRaWAN model did. The other networks' options are refused.
#[test]
fn emulate_puts_lorawan_between_client_and_server() {
    let any = "127.0.0.1:0".parse().unwrap();
    let h = server::spawn(any, ServerOptions::default(), Resources::standard()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("one-device.toml");
    std::fs::write(
        &scenario,
        "name = \"one-device\"\n[network]\nkind = \"lorawan\"\ndevices = 1\nradius_m = 100.0\n\
         [[algorithm]]\nname = \"default\"\n",
    )
    .unwrap();
    let emu_addr = free_addr();
    let emu = bin()
        .args([
            "emulate",
            "--listen",
            &emu_addr.to_string(),
            "--server",
            &h.addr().to_string(),
            "--scenario",
            scenario.to_str().unwrap(),
            "--duration",
            "4",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let uri = format!("coap://127.0.0.1:{}/sense", emu_addr.port());
    let (ok, _, err) = run_bounded(bin().args(["client", "--count", "1", &uri]));
    assert!(ok, "{err}");
    // `2.05 from … in R ms, …` on stderr.
    let rtt: f64 = err
        .split(" in ")
        .nth(1)
        .and_then(|r| r.split(" ms").next())
        .and_then(|r| r.parse().ok())
        .unwrap_or_else(|| panic!("{err}"));
    // SF7 uplink, RX1 one second after its end, SF7 downlink: ~1.15 s.
    assert!((1100.0..1600.0).contains(&rtt), "{err}");
    let o = emu.wait_with_output().unwrap();
    let log = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{log}");
    assert!(
        log.contains("through LoRaWAN class A (EU868): 1 device(s) in a 100 m disc"),
        "{log}"
    );
    assert!(
        log.contains("lorawan: 1 uplink frames") && log.contains("1 downlink frames (0 in RX2"),
        "{log}"
    );
    assert_eq!(h.stop().stats.requests, 1);

    let (ok, _, err) = run_bounded(bin().args([
        "emulate",
        "--server",
        "127.0.0.1:9",
        "--network",
        "lorawan",
        "--nodes",
        "3",
    ]));
    assert!(!ok);
    assert!(err.contains("--nodes: does not apply to LoRaWAN"), "{err}");
}

/// `load coap+tcp://… --time-limit 2` and `client --timeout 2` against a
/// peer that floods responses to no request: both end at their limit by
/// the clock (the load once ran on while the flood lasted), the load with
/// its summary (one unfinished client, no responses).
#[test]
fn tcp_load_and_client_end_at_their_limit_under_a_flood_of_foreign_tokens() {
    let peer = TcpFlood::start();
    let uri = format!("coap+tcp://127.0.0.1:{}/sense", peer.addr.port());
    let began = std::time::Instant::now();
    let (ok, out, err) = run_bounded(bin().args([
        "load",
        &uri,
        "--clients",
        "1",
        "--exchanges",
        "3",
        "--time-limit",
        "2",
        "--format",
        "json",
    ]));
    let took = began.elapsed();
    assert!(
        took >= Duration::from_secs(2) && took < Duration::from_secs(5),
        "{took:?}\n{err}"
    );
    assert!(!ok, "an unfinished client fails the command");
    assert!(
        err.contains("1 of 1 client(s) did not finish within the time limit"),
        "{err}"
    );
    let v: serde_json::Value = serde_json::from_str(&out).expect("results printed");
    assert_eq!(v["transport"], "tcp", "{out}");
    assert_eq!(v["clients"], 1, "{out}");
    assert_eq!(v["unfinished_clients"], 1, "{out}");
    assert_eq!(v["failed_exchanges"], 0, "{out}");
    assert_eq!(v["fct_s"], serde_json::json!([null]), "{out}");
    assert_eq!(v["connections"], 1, "{out}");
    assert_eq!(v["responses"], serde_json::json!({}), "{out}");
    let d = v["duration"].as_f64().unwrap();
    assert!((2.0..5.0).contains(&d), "{out}");

    let began = std::time::Instant::now();
    let (ok, _, err) = run_bounded(bin().args(["client", "--timeout", "2", &uri]));
    let took = began.elapsed();
    assert!(
        took >= Duration::from_secs(2) && took < Duration::from_secs(5),
        "{took:?}\n{err}"
    );
    assert!(!ok, "{err}");
    assert!(err.contains("no answer from 127.0.0.1:"), "{err}");
}

/// `coapcc client --observe` against `coapcc server`: one line per
/// notification, in order, the delay derived from the `N T` payload, and
/// the summary; a resource that is not observable is an error that says
/// so; options that do not go with --observe are refused.
#[test]
fn client_observes_and_deregisters() {
    let mut r = Resources::standard();
    r.add_spec("fast=observe:100ms").unwrap();
    let h = server::spawn(any_port(), ServerOptions::default(), r).unwrap();
    let uri = |p: &str| format!("coap://127.0.0.1:{}/{p}", h.addr().port());
    let (ok, out, err) = run_bounded(bin().args([
        "client",
        "--observe",
        "--notifications",
        "4",
        "--duration",
        "10",
        &uri("fast"),
    ]));
    assert!(ok, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 6, "{out}");
    assert!(lines[0].contains("observe") && lines[0].contains("delay (ms)"));
    let seqs: Vec<u32> = lines[1..5]
        .iter()
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            assert!(f[2] == "NON" || f[2] == "CON", "{l}");
            assert_eq!(f[3], "2.05", "{l}");
            let delay: f64 = f[5].parse().unwrap();
            assert!(delay.abs() < 1000.0, "{l}");
            f[0].parse().unwrap()
        })
        .collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{out}");
    assert_eq!(
        lines[5],
        "4 notifications, 0 discarded as older, 0 re-registrations; deregistered"
    );
    let (ok, _, err) = run_bounded(bin().args(["client", "--observe", &uri("sense")]));
    assert!(!ok);
    assert!(err.contains("is not observed"), "{err}");
    for bad in [
        &["--count", "2"][..],
        &["-m", "put"],
        &["--notifications", "0"],
    ] {
        let (ok, _, err) = run_bounded(
            bin()
                .args(["client", "--observe"])
                .args(bad)
                .arg(uri("obs")),
        );
        assert!(!ok, "{bad:?}");
        assert!(err.contains(bad[0]) || err.contains("--observe"), "{err}");
    }
    let s = h.stop().observe;
    assert_eq!(
        (s.registered, s.deregistered, s.observers),
        (1, 1, 0),
        "{s:?}"
    );
}

/// `coapcc load --nstart`: the header line reports how many exchanges were
/// in flight at once; K out of range, or over coap+tcp, is refused.
#[test]
fn load_nstart() {
    let h = server::spawn(any_port(), ServerOptions::default(), Resources::standard()).unwrap();
    let uri = format!("coap://127.0.0.1:{}/sense", h.addr().port());
    let (ok, out, err) = run_bounded(bin().args([
        "load",
        &uri,
        "--clients",
        "2",
        "--exchanges",
        "20",
        "--nstart",
        "4",
        "--format",
        "json",
    ]));
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["nstart"], 4, "{out}");
    let most = v["max_outstanding"].as_u64().unwrap();
    assert!((2..=4).contains(&most), "{out}");
    for k in ["0", "17"] {
        let (ok, _, err) = run_bounded(bin().args(["load", &uri, "--nstart", k]));
        assert!(!ok);
        assert!(
            err.contains(&format!(
                "--nstart: expected 1 to 16 exchanges outstanding per client, found {k}"
            )),
            "{err}"
        );
    }
    let tcp = format!("coap+tcp://127.0.0.1:{}/sense", h.addr().port());
    let (ok, _, err) = run_bounded(bin().args(["load", &tcp, "--nstart", "2"]));
    assert!(!ok);
    assert!(
        err.contains("--nstart: applies to coap:// (UDP) only"),
        "{err}"
    );
    h.stop();
}
