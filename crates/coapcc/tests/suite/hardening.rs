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

/// Every flag named in a refusal is spelt as typed: two dashes, never four
/// (`kernel-check --time-limit 0` once said `----time-limit`). Refused
/// before any store is opened.
#[test]
fn refused_flags_are_named_with_two_dashes() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("never.sqlite");
    let store = store.to_str().unwrap();
    for (args, flag) in [
        (
            vec![
                "kernel-check",
                "--model-only",
                "--store",
                store,
                "--time-limit",
                "0",
            ],
            "--time-limit",
        ),
        (
            vec!["load", "--time-limit", "0", "coap://127.0.0.1:9/x"],
            "--time-limit",
        ),
        (
            vec!["load", "--time-limit", "0", "coap+tcp://127.0.0.1:9/x"],
            "--time-limit",
        ),
        (
            vec!["client", "--timeout", "0", "coap+tcp://127.0.0.1:9/x"],
            "--timeout",
        ),
    ] {
        let (code, err) = run(&args);
        assert!(code != 0 && code != 101, "{args:?}: exit {code}\n{err}");
        assert!(
            err.contains(&format!(
                "{flag}: expected a positive number of seconds up to 1e7, found 0"
            )),
            "{args:?}: {err}"
        );
        assert!(!err.contains("---"), "{args:?}: {err}");
    }
    assert!(
        !dir.path().join("never.sqlite").exists(),
        "refused before the store"
    );
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
        assert_stdout_write_error_reported(&args);
    }
}

#[test]
fn unbounded_resources_are_refused_before_anything_starts() {
    let t0 = std::time::Instant::now();
    assert_refused(
        &["run", "--clients", "1000000000", "--replications", "1"],
        &["memory", "available", "--force"],
    );
    assert_refused(
        &["run", "--replications", "1000000000"],
        &["replications: expected 1 to 10000, found 1000000000"],
    );
    assert_refused(
        &["run", "--threads", "100000", "--clients", "2"],
        &["--threads: expected 1 to"],
    );
    let f = temp_toml(&scenario_with("").replace("clients = 2", "clients = 1000000000"));
    let path = f.path().to_str().unwrap();
    assert_refused(&["run", path], &[path, "memory", "--force"]);

    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.sqlite");
    let store = store.to_str().unwrap();
    for (clients, replications, needle) in [
        // one run too large: named by its field, not only by the ceilings
        ("1000000000", "1", "clients: its largest runs"),
        ("2", "1000000000", "replications: expected 1 to 10000"),
    ] {
        let f = temp_toml(&format!(
            "name = \"big\"\n[[set]]\nname = \"s\"\nclients = [{clients}]\nreplications = {replications}\n\
             [[algorithms]]\nname = \"default\"\n"
        ));
        let path = f.path().to_str().unwrap();
        assert_refused(&["campaign", path, "--store", store], &[path, needle]);
    }
    assert_refused(
        &[
            "campaign",
            "x.toml",
            "--store",
            store,
            "--threads",
            "100000",
        ],
        &["--threads: expected 1 to"],
    );
    assert!(
        t0.elapsed().as_secs() < 20,
        "refusals took {:?}",
        t0.elapsed()
    );
}

/// A small campaign file on the dumbbell.
fn tiny_campaign(name: &str) -> tempfile::NamedTempFile {
    temp_toml(&format!(
        "name = \"{name}\"\nalgorithms = [\"default\"]\n[workload]\nexchanges = 2\n\
         [[set]]\nname = \"s\"\nclients = [1, 2]\nreplications = 1\n"
    ))
}

#[test]
fn a_campaign_logs_progress_when_stderr_is_not_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let f = tiny_campaign("p");
    let store = dir.path().join("s.sqlite");
    let o = bin()
        .args(["campaign", f.path().to_str().unwrap(), "--store"])
        .arg(&store)
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("progress: 0/2 runs") && err.contains("progress: 2/2 runs"),
        "{err}"
    );
}

/// A GET of `path` with Message ID `mid`, no token, and an Echo option if given.
fn get(path: &str, mid: u16, echo: Option<&[u8]>) -> Vec<u8> {
    use coapcc_proto::message::{option, Code, MessageType, MessageWriter};
    let mut buf = [0u8; 128];
    let mut w = MessageWriter::new(&mut buf, MessageType::Con, Code::GET, mid, &[]).unwrap();
    w.option(option::URI_PATH, path.as_bytes()).unwrap();
    if let Some(e) = echo {
        w.option(coapcc_net::amplification::ECHO, e).unwrap();
    }
    w.bytes().to_vec()
}

/// Sends `req` from `sock` to `to`, returns the reply.
fn ask(sock: &std::net::UdpSocket, to: std::net::SocketAddr, req: &[u8]) -> Vec<u8> {
    sock.send_to(req, to).unwrap();
    let mut buf = vec![0u8; 2048];
    let (n, _) = sock.recv_from(&mut buf).expect("a reply");
    buf.truncate(n);
    buf
}

/// RFC 7252 §11.3 / RFC 9175 §2.4: a 10-byte GET /large from a source that
/// has not proven it is on-path gets at most 3 × 10 bytes — a 4.01 with an
/// Echo option; repeating the request with that Echo value gets the 1005-byte
/// response. A forged or missing Echo does not.
#[test]
fn the_server_bounds_amplification_until_the_client_echoes() {
    use coapcc_net::amplification::{AmplificationLimit, ECHO};
    use coapcc_net::resources::Resources;
    use coapcc_net::server::{self, ServerOptions};
    use coapcc_proto::message::{Code, MessageView};
    let opts = ServerOptions {
        amplification: AmplificationLimit {
            factor: 3,
            // loopback stands for a remote source here
            exempt_loopback: false,
        },
        ..ServerOptions::default()
    };
    let h = server::spawn("127.0.0.1:0".parse().unwrap(), opts, Resources::standard()).unwrap();
    let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(std::time::Duration::from_secs(5)))
        .unwrap();
    let req = get("large", 1, None);
    assert_eq!(req.len(), 10);
    let reply = ask(&sock, h.addr(), &req);
    assert!(
        reply.len() <= 30,
        "{} bytes for a 10-byte request",
        reply.len()
    );
    let v = MessageView::decode(&reply).unwrap();
    assert_eq!(v.code, Code::UNAUTHORIZED);
    assert_eq!(v.mid, 1);
    let echo = v.option(ECHO).expect("an Echo option").to_vec();
    // the same request again (a retransmission) is still bounded
    assert!(ask(&sock, h.addr(), &req).len() <= 30);
    // a forged Echo value does not verify
    let forged = get("large", 2, Some(&[0; 8]));
    assert_eq!(
        MessageView::decode(&ask(&sock, h.addr(), &forged))
            .unwrap()
            .code,
        Code::UNAUTHORIZED
    );
    // the Echo value it was given does
    let reply = ask(&sock, h.addr(), &get("large", 3, Some(&echo)));
    let v = MessageView::decode(&reply).unwrap();
    assert_eq!(v.code, Code::CONTENT);
    assert_eq!(v.payload.len(), 1000);
    // small responses are not affected
    let v = ask(&sock, h.addr(), &get("hello", 4, None));
    assert_eq!(MessageView::decode(&v).unwrap().code, Code::CONTENT);
    let s = h.stop();
    assert_eq!((s.challenged, s.withheld), (3, 0));

    // by default loopback sources are verified: the full response at once
    let h = server::spawn(
        "127.0.0.1:0".parse().unwrap(),
        ServerOptions::default(),
        Resources::standard(),
    )
    .unwrap();
    assert!(ask(&sock, h.addr(), &get("large", 5, None)).len() > 1000);

    // a datagram longer than the server reads is ignored and counted, not
    // read cut short and answered
    let h = server::spawn(
        "127.0.0.1:0".parse().unwrap(),
        ServerOptions::default(),
        Resources::standard(),
    )
    .unwrap();
    let mut long = get("hello", 6, None);
    long.push(0xFF);
    long.resize(2000, b'p');
    sock.send_to(&long, h.addr()).unwrap();
    sock.set_read_timeout(Some(std::time::Duration::from_millis(300)))
        .unwrap();
    let mut buf = [0u8; 64];
    assert!(
        sock.recv_from(&mut buf).is_err(),
        "a cut datagram was answered"
    );
    let s = h.stop();
    assert_eq!((s.datagrams, s.oversized, s.replies), (1, 1, 0));

    // the server and the relay listen on loopback unless told otherwise
    for (cmd, default) in [("server", "127.0.0.1:5683"), ("emulate", "127.0.0.1:5684")] {
        let o = bin().args([cmd, "--help"]).output().unwrap();
        let help = String::from_utf8_lossy(&o.stdout);
        assert!(help.contains(&format!("[default: {default}]")), "{help}");
    }
}

/// Runs `coapcc args…`; returns (exit code, stdout, stderr).
fn run_out(args: &[&str]) -> (i32, String, String) {
    let o = bin().args(args).stdin(Stdio::null()).output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr(&o),
    )
}

#[test]
fn error_responses_are_counted_and_fail_the_command() {
    use coapcc_net::resources::Resources;
    use coapcc_net::server::{self, ServerOptions};
    let h = server::spawn(
        "127.0.0.1:0".parse().unwrap(),
        ServerOptions::default(),
        Resources::standard(),
    )
    .unwrap();
    let uri = |p: &str| format!("coap://127.0.0.1:{}/{p}", h.addr().port());
    let load = |p: &str| {
        run_out(&[
            "load",
            &uri(p),
            "--clients",
            "2",
            "--exchanges",
            "3",
            "--format",
            "json",
        ])
    };
    let (code, out, err) = load("nope");
    assert!(code != 0 && code != 101, "exit {code}: {err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("results still printed");
    assert_eq!(v["responses"]["4.04"], 6, "{out}");
    assert_eq!(v["error_responses"], 6, "{out}");
    assert!(
        err.contains("6 of 6 responses were errors") && err.contains("4.04"),
        "{err}"
    );
    let (code, out, err) = load("hello");
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["responses"]["2.05"], 6, "{out}");
    assert_eq!(v["error_responses"], 0, "{out}");
    let (code, out, _) = run_out(&["load", &uri("nope"), "--clients", "1", "--exchanges", "1"]);
    assert!(code != 0);
    assert!(out.contains("responses: 4.04 × 1"), "{out}");

    let (code, _, err) = run_out(&["client", &uri("nope")]);
    assert!(code != 0 && code != 101, "exit {code}: {err}");
    assert!(
        err.contains("4.04") && err.contains("error response"),
        "{err}"
    );
    let (code, _, err) = run_out(&["client", "--no-fail", &uri("nope")]);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = run_out(&["client", "--count", "2", &uri("nope")]);
    assert!(code != 0, "{err}");
    assert!(
        out.contains("2 exchanges, 0 failed, 2 error responses"),
        "{out}"
    );
    let (code, _, err) = run_out(&["client", &uri("hello")]);
    assert_eq!(code, 0, "{err}");
}

/// A store of the tiny campaign (cells of 1 and 2 clients), computed.
fn tiny_store(dir: &std::path::Path) -> std::path::PathBuf {
    let f = tiny_campaign("tiny");
    let store = dir.join("s.sqlite");
    let (code, _, err) = run_out(&[
        "campaign",
        f.path().to_str().unwrap(),
        "--store",
        store.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    store
}

/// Deletes the stored runs of `clients` clients.
fn forget_runs(store: &std::path::Path, clients: usize) {
    let db = rusqlite::Connection::open(store).unwrap();
    db.execute_batch(&format!(
        "DELETE FROM clients WHERE run IN (SELECT run FROM clients GROUP BY run HAVING count(*) = {clients});
         DELETE FROM runs WHERE id NOT IN (SELECT run FROM clients);"
    ))
    .unwrap();
}

#[test]
fn conditions_without_finished_runs_are_empty_cells_and_an_empty_report_fails() {
    let dir = tempfile::tempdir().unwrap();
    let store = tiny_store(dir.path());
    forget_runs(&store, 2);
    let out = dir.path().join("r");
    let (code, _, err) = run_out(&[
        "report",
        store.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let csv = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    let rows: Vec<Vec<&str>> = csv.lines().map(|l| l.split(',').collect()).collect();
    let col = |name: &str| rows[0].iter().position(|h| *h == name).unwrap();
    let (clients, fct, reps) = (col("clients"), col("FCT median"), col("replications"));
    let row = |n: &str| rows.iter().find(|r| r[clients] == n).unwrap();
    assert_eq!(row("2")[reps], "0/1");
    assert_eq!(
        row("2")[fct],
        "",
        "no finished run: an empty cell, not 0.000"
    );
    assert!(row("2")[reps + 1..].iter().all(|c| c.is_empty()), "{csv}");
    assert!(row("1")[fct].parse::<f64>().unwrap() > 0.0, "{csv}");
    let tx = std::fs::read_to_string(out.join("transmissions.csv")).unwrap();
    let line = tx.lines().find(|l| l.contains(",2,default,")).unwrap();
    assert!(line.ends_with(",default,,,,,,,,"), "{line}");

    forget_runs(&store, 1);
    let (code, _, err) = run_out(&[
        "report",
        store.to_str().unwrap(),
        "--out",
        dir.path().join("r2").to_str().unwrap(),
    ]);
    assert!(code != 0 && code != 101, "exit {code}: {err}");
    assert!(
        err.contains("no finished run") && err.contains("s.sqlite"),
        "{err}"
    );
    assert!(!dir.path().join("r2").exists(), "nothing written");
}

#[test]
fn a_store_that_is_not_ours_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let other = dir.path().join("other.sqlite");
    {
        let db = rusqlite::Connection::open(&other).unwrap();
        db.execute_batch("CREATE TABLE notes (t TEXT); INSERT INTO notes VALUES ('mine');")
            .unwrap();
    }
    let f = tiny_campaign("x");
    let path = other.to_str().unwrap();
    assert_refused(
        &["campaign", f.path().to_str().unwrap(), "--store", path],
        &[path, "not a coapcc results store", "notes"],
    );
    let db = rusqlite::Connection::open(&other).unwrap();
    let tables: i64 = db
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(tables, 1, "no table added");
}

#[test]
fn a_damaged_store_is_named_and_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = tiny_store(dir.path());
    // overwrite every page but the first (the header) with garbage
    let mut bytes = std::fs::read(&store).unwrap();
    let page = u16::from_be_bytes([bytes[16], bytes[17]]) as usize;
    assert!(bytes.len() > 2 * page, "{} bytes", bytes.len());
    for (i, b) in bytes[page..].iter_mut().enumerate() {
        *b = (i * 7 % 251) as u8;
    }
    std::fs::write(&store, &bytes).unwrap();
    let path = store.to_str().unwrap();
    let f = tiny_campaign("tiny");
    assert_refused(
        &["campaign", f.path().to_str().unwrap(), "--store", path],
        &[path],
    );
    let (code, out, err) = run_out(&["campaign", f.path().to_str().unwrap(), "--store", path]);
    assert!(code != 0 && !out.contains("computed"), "{out}{err}");
    assert_refused(
        &[
            "report",
            path,
            "--out",
            dir.path().join("r").to_str().unwrap(),
        ],
        &[path],
    );
}

/// Makes `path` unwritable even for root (an immutable file) or, failing
/// that, by permissions; returns whether it worked, and an undo.
fn make_read_only(path: &std::path::Path) -> Option<impl FnOnce()> {
    use std::os::unix::fs::PermissionsExt;
    let p = path.to_path_buf();
    let immutable = Command::new("chattr")
        .arg("+i")
        .arg(&p)
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !immutable {
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o444)).unwrap();
    }
    let undo = move || {
        if immutable {
            let _ = Command::new("chattr").arg("-i").arg(&p).status();
        }
        let _ = std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644));
    };
    if std::fs::OpenOptions::new().append(true).open(path).is_ok() {
        undo();
        return None;
    }
    Some(undo)
}

#[test]
fn a_complete_read_only_store_needs_no_writing() {
    let dir = tempfile::tempdir().unwrap();
    let store = tiny_store(dir.path());
    let Some(undo) = make_read_only(&store) else {
        eprintln!(
            "SKIPPED a_complete_read_only_store_needs_no_writing: cannot make a file read-only"
        );
        return;
    };
    let f = tiny_campaign("tiny");
    let path = store.to_str().unwrap();
    let (code, out, err) = run_out(&["campaign", f.path().to_str().unwrap(), "--store", path]);
    // a campaign with one more cell has runs to write: refused, saying so
    let bigger = temp_toml(
        &std::fs::read_to_string(f.path())
            .unwrap()
            .replace("clients = [1, 2]", "clients = [1, 2, 3]"),
    );
    let refused = run_out(&["campaign", bigger.path().to_str().unwrap(), "--store", path]);
    undo();
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("2 runs, 2 already in") && out.contains("0 computed"),
        "{out}"
    );
    assert!(refused.0 != 0 && refused.0 != 101, "{refused:?}");
    assert!(
        refused.2.contains("read-only") && refused.2.contains(path),
        "{}",
        refused.2
    );
}

#[test]
fn a_report_over_an_older_one_removes_only_the_older_ones_files() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.sqlite");
    let store = store.to_str().unwrap();
    for (name, buffer) in [("inf", "\"inf\""), ("small", "2500")] {
        let f = temp_toml(&format!(
            "name = \"{name}\"\nalgorithms = [\"default\"]\n[workload]\nexchanges = 2\n\
             [[set]]\nname = \"s\"\nclients = [1]\nbuffers = [{buffer}]\nreplications = 1\n"
        ));
        let (code, _, err) = run_out(&["campaign", f.path().to_str().unwrap(), "--store", store]);
        assert_eq!(code, 0, "{err}");
    }
    let out = dir.path().join("r");
    let svgs = || -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".svg"))
            .collect();
        v.sort();
        v
    };
    let report = |campaign: &str| {
        run_out(&[
            "report",
            store,
            "--out",
            out.to_str().unwrap(),
            "--campaign",
            campaign,
        ])
    };
    let (code, _, err) = report("inf");
    assert_eq!(code, 0, "{err}");
    let first = svgs();
    assert!(!first.is_empty());
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    let (code, _, err) = report("small");
    assert_eq!(code, 0, "{err}");
    let second = svgs();
    assert!(
        first.iter().all(|f| !second.contains(f)),
        "stale figures left: {first:?} / {second:?}"
    );
    assert!(err.contains("removed") && err.contains(&first[0]), "{err}");
    assert!(
        out.join("notes.txt").exists(),
        "a file the report did not write was removed"
    );
}

/// Every byte of `path` and the names of the files beside it.
fn snapshot(path: &std::path::Path) -> (Vec<u8>, Vec<String>) {
    let mut names: Vec<String> = std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    (std::fs::read(path).unwrap(), names)
}

#[test]
fn a_database_that_is_not_a_store_is_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let f = tiny_campaign("x");
    // someone else's database, and a store of a layout this build does not know
    let foreign = dir.path().join("foreign.sqlite");
    let future = dir.path().join("future.sqlite");
    for (path, sql) in [
        (
            &foreign,
            "CREATE TABLE notes (t TEXT); INSERT INTO notes VALUES ('mine');",
        ),
        (
            &future,
            "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
             INSERT INTO meta VALUES ('schema', '99');",
        ),
    ] {
        rusqlite::Connection::open(path)
            .unwrap()
            .execute_batch(sql)
            .unwrap();
    }
    for (path, why) in [
        (&foreign, "not a coapcc results store"),
        (&future, "layout 99"),
    ] {
        let before = snapshot(path);
        // rollback journal: header bytes 18–19 are 1, 1 (WAL would be 2, 2)
        assert_eq!(before.0[18..20], [1, 1]);
        let p = path.to_str().unwrap();
        assert_refused(
            &["campaign", f.path().to_str().unwrap(), "--store", p],
            &[p, why],
        );
        assert!(
            snapshot(path) == before,
            "{p}: changed by a refused campaign"
        );
    }
}

/// Makes a directory immutable (no file can be created, removed or renamed
/// in it, even by root); undone when dropped.
struct ImmutableDir(std::path::PathBuf);

impl ImmutableDir {
    fn new(dir: &std::path::Path) -> Option<ImmutableDir> {
        let ok = Command::new("chattr")
            .arg("+i")
            .arg(dir)
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        let guard = ok.then(|| ImmutableDir(dir.to_path_buf()))?;
        std::fs::write(dir.join("probe"), "x")
            .is_err()
            .then_some(guard)
    }
}

impl Drop for ImmutableDir {
    fn drop(&mut self) {
        let _ = Command::new("chattr").arg("-i").arg(&self.0).status();
    }
}

#[test]
fn a_store_in_a_read_only_directory_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("stores");
    std::fs::create_dir(&sub).unwrap();
    let store = tiny_store(&sub);
    let out = dir.path().join("r");
    let f = tiny_campaign("tiny");
    let path = store.to_str().unwrap();
    let (report, campaign) = {
        let Some(_ro) = ImmutableDir::new(&sub) else {
            eprintln!(
                "SKIPPED a_store_in_a_read_only_directory_is_reported: cannot make a directory \
                 read-only"
            );
            return;
        };
        (
            run_out(&["report", path, "--out", out.to_str().unwrap()]),
            run_out(&["campaign", f.path().to_str().unwrap(), "--store", path]),
        )
    };
    assert_eq!(report.0, 0, "{}", report.2);
    assert!(out.join("report.html").is_file());
    assert_eq!(campaign.0, 0, "{}", campaign.2);
    assert!(campaign.1.contains("0 computed"), "{}", campaign.1);
}

/// Turns a store back into what layout 4 wrote: no run or cell digests,
/// and none of the tables of networks added since (LoRaWAN's, layout 7).
fn as_layout_4(store: &std::path::Path) {
    rusqlite::Connection::open(store)
        .unwrap()
        .execute_batch(
            "DROP TABLE IF EXISTS run_digests; DROP TABLE IF EXISTS cell_digests;
             DROP TABLE IF EXISTS lorawan_devices; DROP TABLE IF EXISTS lorawan_runs;
             DROP TABLE IF EXISTS lorawan_cells;
             DELETE FROM meta WHERE key LIKE 'digests_from:%';
             UPDATE meta SET value = '4' WHERE key = 'schema';",
        )
        .unwrap();
}

#[test]
fn an_edited_value_is_not_reported_as_measured() {
    let dir = tempfile::tempdir().unwrap();
    let store = tiny_store(dir.path());
    let path = store.to_str().unwrap();
    let out = dir.path().join("r");
    let (code, _, err) = run_out(&["report", path, "--out", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("cannot be checked"), "{err}");
    rusqlite::Connection::open(&store)
        .unwrap()
        .execute_batch("UPDATE clients SET fct = 99999 WHERE idx = 0")
        .unwrap();
    let out2 = dir.path().join("r2");
    assert_refused(
        &["report", path, "--out", out2.to_str().unwrap()],
        &[path, "2 run(s)", "digest", "clients", "changed"],
    );
    assert!(!out2.exists(), "nothing written");
}

#[test]
fn runs_stored_before_digests_are_read_with_a_note_and_resumed() {
    let dir = tempfile::tempdir().unwrap();
    let store = tiny_store(dir.path());
    as_layout_4(&store);
    let path = store.to_str().unwrap();
    let out = dir.path().join("r");
    let (code, _, err) = run_out(&["report", path, "--out", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("2 of the 2 stored runs") && err.contains("cannot be checked"),
        "{err}"
    );
    // resumed: upgraded, nothing recomputed; a new run is stored with a digest
    let f = tiny_campaign("tiny");
    let (code, stdout, err) = run_out(&["campaign", f.path().to_str().unwrap(), "--store", path]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("from store layout 4 to 7"), "{err}");
    assert!(stdout.contains("2 already in") && stdout.contains("0 computed"));
    let bigger = temp_toml(
        &std::fs::read_to_string(f.path())
            .unwrap()
            .replace("clients = [1, 2]", "clients = [1, 2, 3]"),
    );
    let (code, stdout, err) =
        run_out(&["campaign", bigger.path().to_str().unwrap(), "--store", path]);
    assert_eq!(code, 0, "{err}");
    assert!(stdout.contains("1 computed"), "{stdout}");
    let (code, _, err) = run_out(&["report", path, "--out", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("2 of the 3 stored runs"), "{err}");
}

#[test]
fn a_value_that_cannot_be_read_names_its_table_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let store = tiny_store(dir.path());
    // without digests (an old store), the value itself is checked on reading
    as_layout_4(&store);
    rusqlite::Connection::open(&store)
        .unwrap()
        .execute_batch("UPDATE clients SET completed = -3 WHERE idx = 0")
        .unwrap();
    let path = store.to_str().unwrap();
    let out = dir.path().join("r");
    assert_refused(
        &["report", path, "--out", out.to_str().unwrap()],
        &[path, "table clients, column completed", "integer -3"],
    );
    // a negative count read as u64 is refused the same way, not wrapped
    rusqlite::Connection::open(&store)
        .unwrap()
        .execute_batch("UPDATE clients SET completed = 1; UPDATE runs SET events = -1")
        .unwrap();
    assert_refused(
        &["report", path, "--out", out.to_str().unwrap()],
        &[path, "table runs, column events", "integer -1"],
    );
}

#[test]
fn a_report_never_writes_through_links_in_its_directory() {
    let dir = tempfile::tempdir().unwrap();
    let store = tiny_store(dir.path());
    let out = dir.path().join("r");
    std::fs::create_dir(&out).unwrap();
    let outside = dir.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    let names = ["report.html", "summary.csv", ".coapcc-report"];
    for n in names {
        std::fs::write(outside.join(n), "precious").unwrap();
        std::os::unix::fs::symlink(outside.join(n), out.join(n)).unwrap();
    }
    let (code, _, err) = run_out(&[
        "report",
        store.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    for n in names {
        assert_eq!(
            std::fs::read_to_string(outside.join(n)).unwrap(),
            "precious",
            "{n}: written through the link"
        );
        let m = std::fs::symlink_metadata(out.join(n)).unwrap();
        assert!(
            m.is_file(),
            "{n}: the link was not replaced by the report's file"
        );
    }
    let leftovers: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".part"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn smaller_misreadings_are_refused() {
    assert_refused(
        &[
            "emulate",
            "--listen",
            "127.0.0.1:0",
            "--server",
            "127.0.0.1:9",
            "--max-clients",
            "0",
        ],
        &["--max-clients: expected at least 1"],
    );
    assert_refused(
        &["load", "--token-len", "9", "coap://127.0.0.1:9/x"],
        &["--token-len: expected 0 to 8 bytes, found 9"],
    );
    assert_refused(&["run", "--buffer", "infinite"], &["--buffer", "infinite"]);
    let f = temp_toml(&scenario_with("buffer = \"infinite\""));
    let path = f.path().to_str().unwrap();
    assert_refused(&["run", path], &[path, "buffer", "\"inf\""]);
    for label in ["\"\"", "\"  \"", "\"a\\nb\""] {
        let text = scenario_with("").replace(
            "name = \"default\"\n",
            &format!("name = \"default\"\nlabel = {label}\n"),
        );
        let f = temp_toml(&text);
        let path = f.path().to_str().unwrap();
        assert_refused(&["run", path], &[path, "label: expected a non-empty name"]);
    }
    // an unwritable --pcap fails before the run, naming the file
    let dir = tempfile::tempdir().unwrap();
    let pcap = dir.path().join("no/such/dir/x.pcap");
    let pcap = pcap.to_str().unwrap();
    assert_refused(
        &[
            "run",
            "--clients",
            "2",
            "--replications",
            "1",
            "--algorithms",
            "default",
            "--pcap",
            pcap,
        ],
        &["--pcap", pcap],
    );
}

#[test]
fn an_ambiguous_campaign_prefix_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = tiny_store(dir.path());
    let db = rusqlite::Connection::open(&store).unwrap();
    let hash: String = db
        .query_row("SELECT hash FROM definitions", [], |r| r.get(0))
        .unwrap();
    // a second definition whose hash shares the first four characters
    db.execute(
        "INSERT INTO definitions SELECT substr(hash, 1, 4) || 'ffff' || substr(hash, 9), 'other', \
         title, description, source, text, model_version, skipped, runs, first_seen, last_run, \
         seq + 1, network FROM definitions",
        [],
    )
    .unwrap();
    drop(db);
    let s = store.to_str().unwrap();
    let out = dir.path().join("r");
    let out = out.to_str().unwrap();
    assert_refused(
        &["report", s, "--out", out, "--campaign", &hash[..4]],
        &["matches 2 definitions", "tiny", "other"],
    );
    for selector in [&hash[..12], "tiny"] {
        let (code, stdout, err) = run_out(&["report", s, "--out", out, "--campaign", selector]);
        assert_eq!(code, 0, "{err}");
        assert!(stdout.contains("campaign `tiny`"), "{stdout}");
    }
}

#[test]
fn a_long_run_logs_progress_when_stderr_is_not_a_terminal() {
    let args = [
        "run",
        "--clients",
        "2",
        "--replications",
        "30",
        "--threads",
        "1",
        "--format",
        "json",
    ];
    let o = bin()
        .args(args)
        .env("COAPCC_PROGRESS_EVERY_MS", "0")
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("progress: 60/60 runs"), "{err}");
    // at the default interval a short run stays quiet
    let o = bin().args(args).output().unwrap();
    assert!(!stderr(&o).contains("progress:"), "{}", stderr(&o));
}

/// `--help`, a subcommand's `--help` and `--version` into a full device: the
/// write error is reported (non-zero exit, a message on stderr), as for
/// every other command; to a working stdout they still exit 0.
#[test]
fn help_and_version_report_a_failed_write() {
    if !std::path::Path::new("/dev/full").exists() {
        eprintln!("SKIPPED help_and_version_report_a_failed_write: no /dev/full");
        return;
    }
    for args in [
        vec!["--help"],
        vec!["-h"],
        vec!["run", "--help"],
        vec!["load", "--help"],
        vec!["--version"],
    ] {
        assert_stdout_write_error_reported(&args);
        let o = bin().args(&args).output().unwrap();
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        assert!(!o.stdout.is_empty(), "{args:?}");
    }
    // a usage error still goes to stderr with clap's exit status 2
    let (code, err) = run(&["run", "--no-such-option"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--no-such-option"), "{err}");
}

/// A CoAP server address on loopback where nothing listens.
fn nobody_listening() -> String {
    let s = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let a = s.local_addr().unwrap();
    drop(s);
    format!("coap://{a}/x")
}

/// One rule for `client` and `load`: an exchange that fails (or a client
/// that does not finish) makes the exit status non-zero once the results
/// are printed; `--no-fail` makes it 0. Both say so in `--help`.
#[test]
fn failed_exchanges_fail_load_and_client_unless_no_fail() {
    let uri = nobody_listening();
    let load = |extra: &[&str]| {
        let mut args = vec![
            "load",
            uri.as_str(),
            "--clients",
            "2",
            "--exchanges",
            "1",
            "--max-retransmit",
            "0",
            "--time-limit",
            "30",
            "--format",
            "json",
        ];
        args.extend_from_slice(extra);
        run_out(&args)
    };
    let (code, out, err) = load(&[]);
    assert!(code != 0 && code != 101, "exit {code}: {err}");
    assert!(err.contains("2 exchange(s) failed"), "{err}");
    assert!(err.contains("--no-fail"), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("the results, printed first");
    assert_eq!(v["failed_exchanges"], 2, "{out}");
    let (code, out, err) = load(&["--no-fail"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("failed_exchanges"), "{out}");
    let client = |extra: &[&str]| {
        let mut args = vec!["client", uri.as_str(), "--max-retransmit", "0"];
        args.extend_from_slice(extra);
        run_out(&args)
    };
    let (code, _, err) = client(&[]);
    assert!(code != 0 && code != 101, "exit {code}: {err}");
    assert!(err.contains("failed"), "{err}");
    let (code, _, err) = client(&["--no-fail"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("failed"),
        "the failure is still reported: {err}"
    );
    for cmd in ["load", "client"] {
        let (code, out, _) = run_out(&[cmd, "--help"]);
        assert_eq!(code, 0);
        assert!(
            out.contains("--no-fail") && out.contains("exchange fails"),
            "{cmd} --help: {out}"
        );
    }
}

/// IPv4 loopback reaching a dual-stack (IPv6) socket arrives as
/// `::ffff:127.0.0.1`: still loopback, so exempt from the amplification
/// bound like 127.0.0.1 on an IPv4 socket — GET /large gets the resource,
/// not a 4.01. The server socket is bound to the mapped loopback address
/// itself, so nothing outside this host can reach it.
#[test]
fn ipv4_loopback_on_a_dual_stack_socket_is_loopback() {
    use coapcc_net::resources::Resources;
    use coapcc_net::server::{self, ServerOptions};
    use coapcc_proto::message::{Code, MessageView};
    let h = match server::spawn(
        "[::ffff:127.0.0.1]:0".parse().unwrap(),
        ServerOptions::default(),
        Resources::standard(),
    ) {
        Ok(h) => h,
        Err(e) => {
            eprintln!(
                "SKIPPED ipv4_loopback_on_a_dual_stack_socket_is_loopback: no IPv6 socket: {e}"
            );
            return;
        }
    };
    let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(std::time::Duration::from_secs(5)))
        .unwrap();
    let to = std::net::SocketAddr::from(([127, 0, 0, 1], h.addr().port()));
    let reply = ask(&sock, to, &get("large", 1, None));
    let v = MessageView::decode(&reply).unwrap();
    assert_eq!(v.code, Code::CONTENT, "{} bytes", reply.len());
    assert_eq!(v.payload.len(), 1000);
    let s = h.stop();
    assert_eq!((s.challenged, s.withheld), (0, 0));
}

/// A star scenario with `workload` lines.
fn star_with(workload: &str) -> String {
    format!(
        "[network]\nkind = \"star\"\nstations = 12\n[workload]\n{workload}\n\
         [[algorithm]]\nname = \"tcp-lwip\"\n"
    )
}

#[test]
fn values_that_would_never_finish_are_refused_by_field() {
    let grid = "[network]\nkind = \"grid\"\n[workload]\nperiod_s = 1e-9\n\
                [[algorithm]]\nname = \"default\"\n"
        .to_string();
    let exchanges = scenario_with("").replace("exchanges = 2", "exchanges = 4000000000");
    // Timers at their bound on a lossy link: the error process walks 10¹⁰ s.
    let timers = scenario_with("errors = \"high\"")
        .replace("exchanges = 2", "exchanges = 1000")
        .replace(
            "name = \"default\"\n",
            "name = \"default\"\nack_timeout = 1e7\ncap = 1e7\n",
        );
    for (text, needles) in [
        (
            star_with("sample_s = 1e-9"),
            &["workload.sample_s", "memory", "--force"][..],
        ),
        // memory here; where memory suffices, its events
        (
            star_with("writes = 100000000"),
            &["workload.writes", "--force"],
        ),
        (grid, &["workload.period_s", "events", "--force"]),
        (exchanges, &["workload.exchanges", "events", "--force"]),
        (timers, &["algorithm.cap, algorithm.ack_timeout", "events"]),
    ] {
        let f = temp_toml(&text);
        let path = f.path().to_str().unwrap();
        let mut with_path = needles.to_vec();
        with_path.push(path);
        assert_refused(&["run", path], &with_path);
    }
    // --force skips the estimate: what fails then is the next check.
    let f = temp_toml(&star_with("sample_s = 1e-9"));
    let path = f.path().to_str().unwrap();
    assert_refused(
        &["run", path, "--force", "--pcap", "x.pcap"],
        &["--pcap: not available on the Wi-Fi star"],
    );
    // A campaign is held to the same estimate.
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.sqlite");
    let c = temp_toml(
        "name = \"long\"\nalgorithms = [\"default\"]\n[workload]\nexchanges = 4000000000\n\
         [[set]]\nname = \"s\"\nclients = [2]\nreplications = 1\n",
    );
    let path = c.path().to_str().unwrap();
    assert_refused(
        &["campaign", path, "--store", store.to_str().unwrap()],
        &[path, "workload.exchanges", "events", "--force"],
    );
    assert!(!store.exists(), "nothing written before the check");
}

#[test]
fn the_published_scenarios_are_within_the_work_bound() {
    let mut files = Vec::new();
    for dir in std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios")).unwrap() {
        let dir = dir.unwrap().path();
        if dir.is_dir() && !dir.ends_with("campaigns") {
            for f in std::fs::read_dir(dir).unwrap() {
                files.push(f.unwrap().path());
            }
        }
    }
    assert!(files.len() > 10, "{files:?}");
    for f in files {
        let s = coapcc::networks::AnyScenario::load(&f).unwrap();
        let (cost, _) = s.cost();
        // Every scenario a tenth of the bound away from needing --force,
        // but the ten-million-client one, which exists to run at the edge
        // of one machine: it must still run without --force (estimated
        // 1.2·10⁹ events; it processes 6.7·10⁸ per algorithm).
        let bound = if f.ends_with("scale/clients-1e7.toml") {
            coapcc::budget::MAX_EVENTS
        } else {
            coapcc::budget::MAX_EVENTS / 10
        };
        assert!(cost.events <= bound, "{}: {cost:?}", f.display());
    }
}

#[test]
fn algorithm_parameters_are_bounded_like_every_duration() {
    for (param, field) in [
        ("ack_timeout = 1e30\ncap = 1e30", "cap"),
        ("ack_timeout = 1e8", "ack_timeout"),
        ("ack_timeout = 1e10", "ack_timeout"),
        ("cap = 1e30", "cap"),
        ("ack_random_factor = 1e30", "ack_random_factor"),
    ] {
        let text = scenario_with("").replace(
            "name = \"default\"\n",
            &format!("name = \"default\"\n{param}\n"),
        );
        let f = temp_toml(&text);
        let path = f.path().to_str().unwrap();
        assert_refused(&["run", path], &[path, &format!("`{field}`")]);
    }
    let f = temp_toml(&scenario_with("").replace(
        "name = \"default\"\n",
        "name = \"default\"\nack_timeout = 1e7\ncap = 1e7\n",
    ));
    let (code, err) = run(&["run", f.path().to_str().unwrap()]);
    assert_eq!(code, 0, "the bound itself is accepted: {err}");
}

/// Runs coapcc with `args` and standard output on /dev/full: the write error
/// is reported on stderr (naming standard output, no panic) with a non-zero
/// exit.
fn assert_stdout_write_error_reported(args: &[&str]) {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let o = bin()
        .args(args)
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

/// Every file of `dir` (links as links, folders by name) and its bytes.
fn tree(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let name = e.file_name().to_string_lossy().into_owned();
            let m = std::fs::symlink_metadata(e.path()).unwrap();
            let bytes = if m.is_file() {
                std::fs::read(e.path()).unwrap()
            } else {
                format!("{:?}", m.file_type()).into_bytes()
            };
            (name, bytes)
        })
        .collect();
    v.sort();
    v
}

/// A report that fails half-way (here: a set name too long for a file
/// name, so its figures cannot be written after those of the set before it
/// were) leaves the previous report whole: every file byte for byte, no
/// file of the new report beside it, nothing left of the attempt.
#[test]
fn a_report_that_fails_half_way_leaves_the_previous_one_whole() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.sqlite");
    let store = store.to_str().unwrap();
    let long = "x".repeat(300);
    for (name, sets) in [
        ("old", vec!["before"]),
        ("new", vec!["after", long.as_str()]),
    ] {
        let mut text =
            format!("name = \"{name}\"\nalgorithms = [\"default\"]\n[workload]\nexchanges = 2\n");
        for s in sets {
            text.push_str(&format!(
                "[[set]]\nname = \"{s}\"\nclients = [1]\nreplications = 1\n"
            ));
        }
        let f = temp_toml(&text);
        let (code, _, err) = run_out(&["campaign", f.path().to_str().unwrap(), "--store", store]);
        assert_eq!(code, 0, "{err}");
    }
    let out = dir.path().join("r");
    let out_s = out.to_str().unwrap();
    let (code, _, err) = run_out(&["report", store, "--out", out_s, "--campaign", "old"]);
    assert_eq!(code, 0, "{err}");
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    let before = tree(&out);
    assert!(before.iter().any(|(n, _)| n == "report.html"), "{before:?}");
    assert_refused(
        &["report", store, "--out", out_s, "--campaign", "new"],
        &["cannot write"],
    );
    let after = tree(&out);
    let names = |t: &[(String, Vec<u8>)]| t.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    assert_eq!(names(&after), names(&before), "files added or removed");
    assert!(after == before, "a file of the previous report changed");
    // the same report without the long set goes through, and then owns
    // only its own files
    let (code, _, err) = run_out(&["report", store, "--out", out_s, "--campaign", "old"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(names(&tree(&out)), names(&before));
}

/// A cell's parameters edited in the store (its buffer: 2500 B → 777 B, in
/// its column and its JSON alike) are not reported as measured: the
/// definition's cells are covered by a digest, as its runs are.
#[test]
fn an_edited_cell_is_not_reported_as_measured() {
    let dir = tempfile::tempdir().unwrap();
    let f = temp_toml(
        "name = \"cell\"\nalgorithms = [\"default\"]\n[workload]\nexchanges = 2\n\
         [[set]]\nname = \"s\"\nclients = [1, 2]\nbuffers = [2500]\nreplications = 1\n",
    );
    let store = dir.path().join("s.sqlite");
    let path = store.to_str().unwrap();
    let (code, _, err) = run_out(&["campaign", f.path().to_str().unwrap(), "--store", path]);
    assert_eq!(code, 0, "{err}");
    let out = dir.path().join("r");
    let (code, _, err) = run_out(&["report", path, "--out", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("cannot be checked"), "{err}");
    let conn = rusqlite::Connection::open(&store).unwrap();
    let edited = conn
        .execute(
            "UPDATE cells SET buffer = '777', cell = replace(cell, '2500', '777') WHERE idx = 0",
            [],
        )
        .unwrap();
    assert_eq!(edited, 1);
    let cell: String = conn
        .query_row("SELECT cell FROM cells WHERE idx = 0", [], |r| r.get(0))
        .unwrap();
    assert!(cell.contains("777") && !cell.contains("2500"), "{cell}");
    drop(conn);
    let out2 = dir.path().join("r2");
    assert_refused(
        &["report", path, "--out", out2.to_str().unwrap()],
        &[
            path,
            "cells of campaign `cell`",
            "digest",
            "table cells",
            "changed",
        ],
    );
    assert!(!out2.exists(), "nothing written");
    let e = coapcc::networks::verify(&coapcc::networks::open_store_read_only(&store).unwrap())
        .unwrap_err()
        .to_string();
    assert!(e.contains("table cells") && e.contains("digest"), "{e}");
}

/// Every file of the store's directory, byte for byte.
fn store_dir(store: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    tree(store.parent().unwrap())
}

/// The audit's campaign — 1000 client counts × 1000 buffers × 2 algorithms,
/// 2·10⁶ runs from a 12 KB file — is refused before anything runs, with
/// its estimate and how to override, within 1 GiB of address space (its
/// cells are counted, not expanded), and the store is neither created nor,
/// if it exists, changed.
#[test]
fn a_campaign_above_the_ceilings_is_refused_before_the_store_is_touched() {
    let clients: Vec<String> = (1..=1000).map(|c| c.to_string()).collect();
    let buffers: Vec<String> = (0..1000).map(|b| (1000 + 7 * b).to_string()).collect();
    let text = format!(
        "name = \"audit\"\nalgorithms = [\"default\", \"cocoa\"]\n[[set]]\nname = \"s\"\n\
         clients = [{}]\nbuffers = [{}]\nreplications = 1\n",
        clients.join(", "),
        buffers.join(", ")
    );
    assert!(text.len() < 13_000, "{}", text.len());
    let f = temp_toml(&text);
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.sqlite");
    // within 1 GiB of address space: expanding the cells took 4.3 GB
    let limited = |store: &std::path::Path| {
        let o = Command::new("sh")
            .arg("-c")
            .arg("ulimit -v 1048576 && exec \"$0\" campaign \"$1\" --store \"$2\"")
            .arg(env!("CARGO_BIN_EXE_coapcc"))
            .arg(f.path())
            .arg(store)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        (o.status.code().unwrap_or(-1), stderr(&o))
    };
    let (code, err) = limited(&store);
    assert!(code != 0 && code != 101, "exit {code}\n{err}");
    for needle in [
        f.path().to_str().unwrap(),
        "too large",
        "2000000 cells",
        "2000000 runs (ceiling 100000)",
        "events",
        "of memory",
        "of store",
        "--max-runs",
        "--force",
        "nothing was run",
    ] {
        assert!(err.contains(needle), "`{needle}` not in\n{err}");
    }
    assert!(
        std::fs::read_dir(dir.path()).unwrap().next().is_none(),
        "the store (or its WAL or lock) was created"
    );
    // an existing store is left byte for byte
    let small = tiny_campaign("small");
    let (code, _, err) = run_out(&[
        "campaign",
        small.path().to_str().unwrap(),
        "--store",
        store.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let before = store_dir(&store);
    let (code, err) = limited(&store);
    assert!(
        code != 0 && code != 101 && err.contains("too large"),
        "{err}"
    );
    assert!(store_dir(&store) == before, "the store was changed");
}

/// The ceilings can be lowered, and --force goes past them: a plan of 2
/// runs is refused under `--max-runs 1`, runs under `--max-runs 2`, and
/// runs under `--max-runs 1 --force`.
#[test]
fn the_ceilings_are_set_on_the_command_line_and_forced_past() {
    let dir = tempfile::tempdir().unwrap();
    let f = tiny_campaign("c");
    let file = f.path().to_str().unwrap();
    let store = dir.path().join("s.sqlite");
    let store_s = store.to_str().unwrap();
    assert_refused(
        &["campaign", file, "--store", store_s, "--max-runs", "1"],
        &[file, "2 runs (ceiling 1)", "--force"],
    );
    assert!(!store.exists(), "a refused campaign created the store");
    for (flag, value, needle) in [
        ("--max-events", "1", "(events above the ceiling)"),
        ("--max-memory-mib", "0", "(memory above the ceiling)"),
        ("--max-store-mib", "0", "(store above the ceiling)"),
    ] {
        assert_refused(
            &["campaign", file, "--store", store_s, flag, value],
            &[needle],
        );
    }
    assert!(!store.exists(), "a refused campaign created the store");
    let (code, out, err) = run_out(&[
        "campaign",
        file,
        "--store",
        store_s,
        "--max-runs",
        "1",
        "--force",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("2 computed"), "{out}");
    let (code, out, err) = run_out(&["campaign", file, "--store", store_s, "--max-runs", "2"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("0 computed"), "{out}");
}
