//! CoAP over TCP (RFC 8323) interoperability on loopback, both directions:
//! libcoap's coap+tcp client against coapcc's server and coapcc's client
//! against libcoap's server; aiocoap's TCP transport likewise; and the
//! `coapcc server` / `coapcc load` commands over coap+tcp with the JSON
//! the kernel cross-check reads.
//!
//! A test whose peer is not installed prints `SKIPPED …` and passes, unless
//! COAPCC_REQUIRE_PEERS=1 (CI), when it fails.

use crate::net_support;

use std::io::{BufRead, BufReader};
use std::net::{SocketAddr, TcpStream};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use coapcc_net::resources::Resources;
use coapcc_net::tcp::client::TcpClient;
use coapcc_net::tcp::server::{self as tcp_server, TcpServerOptions};
use coapcc_net::tcp::socket::SocketOptions;
use coapcc_proto::message::Code;
use coapcc_proto::tcp::Csm;
use net_support::*;

const LIMIT: Duration = Duration::from_secs(10);

/// Skips with a message, or fails when peers are required.
fn missing(test: &str, why: &str) {
    if std::env::var("COAPCC_REQUIRE_PEERS").as_deref() == Ok("1") {
        panic!("{test}: {why}, and COAPCC_REQUIRE_PEERS=1");
    }
    skip(test, why);
}

/// Waits (at most 10 s) until something accepts TCP connections at `addr`.
fn wait_tcp(addr: SocketAddr) {
    let end = Instant::now() + LIMIT;
    while Instant::now() < end {
        if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("nothing accepted TCP connections at {addr}");
}

/// Starts a peer server (output discarded) and waits until it accepts TCP
/// connections at `addr`; killed when the returned guard drops.
fn serving_peer(cmd: &mut Command, addr: SocketAddr) -> Peer {
    let peer = Peer(
        cmd.stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    wait_tcp(addr);
    peer
}

fn our_server() -> tcp_server::TcpServerHandle {
    tcp_server::spawn(
        any_port(),
        TcpServerOptions::default(),
        Arc::new(Mutex::new(Resources::standard())),
    )
    .unwrap()
}

/// Exchanges over one coap+tcp connection with our client.
fn ours(addr: SocketAddr, steps: &[(Code, &str, &[u8])]) -> Vec<(Code, Vec<u8>)> {
    rt().block_on(async {
        let mut c = TcpClient::connect(addr, &SocketOptions::default(), Csm::default(), 4)
            .await
            .unwrap();
        c.keep_payload(true);
        c.wait_csm(tokio::time::Instant::now() + LIMIT)
            .await
            .unwrap();
        let mut out = Vec::new();
        for (m, p, body) in steps {
            let r = c.exchange(*m, p, body, LIMIT).await.unwrap();
            out.push((r.code, r.payload));
        }
        c.close().await;
        out
    })
}

use coapcc_net::tokio;

#[test]
fn libcoap_tcp_client_against_our_server() {
    if !have("coap-client-notls") {
        return missing(
            "libcoap_tcp_client_against_our_server",
            "coap-client-notls not found",
        );
    }
    let h = our_server();
    let uri = |p: &str| format!("coap+tcp://127.0.0.1:{}/{p}", h.addr().port());
    let client = |args: &[&str]| run_bounded(Command::new("coap-client-notls").args(args));
    let (ok, out, err) = client(&["-m", "get", &uri("hello")]);
    assert!(ok, "{err}");
    assert_eq!(out.trim_end(), "Hello from coapcc");
    let (ok, _, err) = client(&["-m", "put", "-e", "over tcp", &uri("store")]);
    assert!(ok, "{err}");
    let (ok, out, _) = client(&["-m", "get", &uri("store")]);
    assert!(ok);
    assert_eq!(out.trim_end(), "over tcp");
    let (ok, out, _) = client(&["-m", "get", &uri("large")]);
    assert!(ok);
    assert_eq!(out.trim_end(), "x".repeat(1000));
    let (ok, out, _) = client(&["-m", "get", &uri(".well-known/core")]);
    assert!(ok);
    assert!(out.contains("</sense>"), "{out}");
    let s = h.stop();
    assert_eq!((s.accepted, s.requests), (5, 5), "{s:?}");
    assert_eq!((s.aborted, s.peer_aborted), (0, 0), "{s:?}");
}

#[test]
fn our_tcp_client_against_libcoap_server() {
    if !have("coap-server-notls") {
        return missing(
            "our_tcp_client_against_libcoap_server",
            "coap-server-notls not found",
        );
    }
    let addr = free_addr();
    let _peer = serving_peer(
        Command::new("coap-server-notls").args([
            "-A",
            "127.0.0.1",
            "-d",
            "10",
            "-p",
            &addr.port().to_string(),
        ]),
        addr,
    );
    let r = ours(
        addr,
        &[
            (Code::GET, "", b""),
            (Code::PUT, "dyn", b"abc"),
            (Code::GET, "dyn", b""),
            (Code::DELETE, "dyn", b""),
            (Code::GET, "dyn", b""),
        ],
    );
    assert_eq!(r[0].0, Code::CONTENT);
    assert!(String::from_utf8_lossy(&r[0].1).contains("libcoap"));
    assert_eq!(r[1].0, Code::CREATED);
    assert_eq!(r[2], (Code::CONTENT, b"abc".to_vec()));
    assert_eq!(r[3].0, Code::DELETED);
    assert_eq!(r[4].0, Code::NOT_FOUND);
    // the command line, with Nagle off and several exchanges on one connection
    let (ok, out, err) = run_bounded(Command::new(env!("CARGO_BIN_EXE_coapcc")).args([
        "client",
        &format!("coap+tcp://127.0.0.1:{}/", addr.port()),
        "--count",
        "3",
        "--nodelay",
    ]));
    assert!(ok, "{err}");
    assert!(
        out.contains("3 exchanges on one connection, 0 error responses"),
        "{out}"
    );
    assert!(err.contains("Nagle off"), "{err}");
}

const AIOCOAP_TCP_CLIENT: &str = r#"
import asyncio, sys, aiocoap
async def main(base):
    ctx = await aiocoap.Context.create_client_context()
    for code, path, body in [(aiocoap.GET, "hello", b""), (aiocoap.PUT, "store", b"from aiocoap"), (aiocoap.GET, "store", b"")]:
        req = aiocoap.Message(code=code, uri=base + path, payload=body)
        r = await asyncio.wait_for(ctx.request(req).response, 10)
        print(r.code.dotted, r.payload.decode())
    await ctx.shutdown()
asyncio.run(main(sys.argv[1]))
"#;

#[test]
fn aiocoap_tcp_client_against_our_server() {
    if !have_aiocoap() {
        return missing(
            "aiocoap_tcp_client_against_our_server",
            "python3 with aiocoap not found",
        );
    }
    let h = our_server();
    let (ok, out, err) = run_bounded(
        Command::new("python3")
            .env("AIOCOAP_CLIENT_TRANSPORT", "tcpclient")
            .args([
                "-c",
                AIOCOAP_TCP_CLIENT,
                &format!("coap+tcp://127.0.0.1:{}/", h.addr().port()),
            ]),
    );
    assert!(ok, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines,
        vec!["2.05 Hello from coapcc", "2.04 ", "2.05 from aiocoap"],
        "{err}"
    );
    let s = h.stop();
    assert_eq!((s.requests, s.aborted), (3, 0), "{s:?}");
}

#[test]
fn our_tcp_client_against_aiocoap_tcp_server() {
    if !have_aiocoap() {
        return missing(
            "our_tcp_client_against_aiocoap_tcp_server",
            "python3 with aiocoap not found",
        );
    }
    let addr = free_addr();
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../coapcc-net/tests/peers/aiocoap_server.py"
    );
    let _peer = serving_peer(
        Command::new("python3")
            .env("AIOCOAP_SERVER_TRANSPORT", "tcpserver")
            .args([script, &addr.port().to_string()]),
        addr,
    );
    let r = ours(
        addr,
        &[
            (Code::GET, "sense", b""),
            (Code::PUT, "store", b"from coapcc"),
            (Code::GET, "store", b""),
            (Code::GET, "nothere", b""),
        ],
    );
    assert_eq!(r[0], (Code::CONTENT, vec![b'x'; 60]));
    assert_eq!(r[1].0, Code::CHANGED);
    assert_eq!(r[2], (Code::CONTENT, b"from coapcc".to_vec()));
    assert_eq!(r[3].0, Code::NOT_FOUND);
}

/// `coapcc server` serves coap+tcp on its UDP port by default, and
/// `coapcc load coap+tcp://… --format json` reports what the kernel
/// cross-check reads: transport, per-client FCTs, connections, failures.
#[test]
fn server_and_load_commands_over_tcp_report_the_json_contract() {
    let addr = free_addr();
    let mut server = Peer(
        Command::new(env!("CARGO_BIN_EXE_coapcc"))
            .args(["server", "--listen", &addr.to_string(), "--duration", "60"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut line = String::new();
    BufReader::new(server.0.stderr.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.contains("(TCP)"), "{line}");
    for (workload, clients, exchanges) in [("continuous", 8u64, 6u64), ("random", 5, 9)] {
        let (ok, out, err) = run_bounded(Command::new(env!("CARGO_BIN_EXE_coapcc")).args([
            "load",
            &format!("coap+tcp://{addr}/sense"),
            "--clients",
            &clients.to_string(),
            "--exchanges",
            &exchanges.to_string(),
            "--workload",
            workload,
            "--seed",
            "4",
            "--time-limit",
            "15",
            "--nodelay",
            "--format",
            "json",
        ]));
        assert!(ok, "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["transport"], "tcp");
        let fct = v["fct_s"].as_array().unwrap();
        assert_eq!(fct.len() as u64, clients);
        assert!(
            fct.iter().all(|f| f.as_f64().is_some_and(|f| f > 0.0)),
            "{out}"
        );
        assert_eq!(v["failed_exchanges"], 0);
        assert_eq!(v["responses"]["2.05"], clients * exchanges);
        let conns = v["connections"].as_u64().unwrap();
        if workload == "continuous" {
            assert_eq!(conns, clients);
        } else {
            assert!(conns > clients, "batches of 1-10 over 9 exchanges: {conns}");
        }
    }
    // the same JSON keys over UDP
    let (ok, out, err) = run_bounded(Command::new(env!("CARGO_BIN_EXE_coapcc")).args([
        "load",
        &format!("coap://{addr}/sense"),
        "--clients",
        "3",
        "--exchanges",
        "2",
        "--format",
        "json",
    ]));
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["transport"], "udp");
    assert!(v["connections"].is_null());
    assert_eq!(v["fct_s"].as_array().unwrap().len(), 3);
    // a congestion control the kernel does not have fails clearly, at once
    let (ok, _, err) = run_bounded(Command::new(env!("CARGO_BIN_EXE_coapcc")).args([
        "load",
        &format!("coap+tcp://{addr}/sense"),
        "--tcp-congestion",
        "no-such-cc",
    ]));
    assert!(!ok);
    assert!(
        err.contains("--tcp-congestion no-such-cc: the kernel refused it"),
        "{err}"
    );
}

/// Options of one transport given with the other's URI are refused by name.
#[test]
fn transport_options_are_refused_with_the_other_scheme() {
    let bin = env!("CARGO_BIN_EXE_coapcc");
    for (args, want) in [
        (
            vec!["client", "coap://127.0.0.1:9/x", "--nodelay"],
            "--nodelay: applies to coap+tcp:// URIs only",
        ),
        (
            vec!["load", "coap://127.0.0.1:9/x", "--tcp-congestion", "reno"],
            "--tcp-congestion: applies to coap+tcp:// URIs only",
        ),
        (
            vec!["client", "coap+tcp://127.0.0.1:9/x", "--non"],
            "--non: applies to coap:// (UDP) only",
        ),
        (
            vec!["load", "coap+tcp://127.0.0.1:9/x", "--cc", "cocoa"],
            "--cc: applies to coap:// (UDP) only",
        ),
    ] {
        let (ok, _, err) = run_bounded(Command::new(bin).args(&args));
        assert!(!ok, "{args:?}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
}
