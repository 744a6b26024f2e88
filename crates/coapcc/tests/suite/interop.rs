//! Interoperability on real sockets (loopback only): coapcc's client against
//! libcoap's and aiocoap's servers, their clients against coapcc's server,
//! every registered algorithm against libcoap, and the fallback of the
//! algorithms that mark transmissions when the server does not echo the mark.
//!
//! A test whose peer is not installed prints `SKIPPED …` and passes; CI
//! installs libcoap3-bin and aiocoap.

use crate::net_support;

use std::process::Command;

use coapcc_net::client::{ClientOptions, Outcome};
use coapcc_net::resources::Resources;
use coapcc_net::server::{self, ServerOptions};
use coapcc_proto::message::Code;
use coapcc_rto::registry::ALGORITHMS;
use coapcc_rto::{AlgorithmParams, Marking};
use coapcc_sim::AlgorithmSpec;
use net_support::*;

fn response(o: &Outcome) -> (Code, &[u8]) {
    match o {
        Outcome::Response { code, payload, .. } => (*code, payload.as_slice()),
        Outcome::Failed(r) => panic!("exchange failed: {r:?}"),
    }
}

fn opts(alg: &str) -> ClientOptions {
    ClientOptions {
        algorithm: AlgorithmSpec::named(alg),
        max_retransmit: 20,
        ..ClientOptions::default()
    }
}

#[test]
fn our_client_against_libcoap_server_all_methods() {
    let Some((_peer, addr)) = libcoap_server() else {
        return skip(
            "our_client_against_libcoap_server_all_methods",
            "coap-server-notls not found",
        );
    };
    let o = opts("default");
    let r = exchanges(addr, &o, Code::GET, "", b"", 1, |_, _| {});
    let (code, body) = response(&r[0].outcome);
    assert_eq!(code, Code::CONTENT);
    assert!(String::from_utf8_lossy(body).contains("libcoap"));
    // -d: PUT creates a resource, POST changes it, DELETE removes it.
    let r = exchanges(addr, &o, Code::PUT, "dyn", b"abc", 1, |_, _| {});
    assert_eq!(response(&r[0].outcome).0, Code::CREATED);
    let r = exchanges(addr, &o, Code::GET, "dyn", b"", 1, |_, _| {});
    assert_eq!(response(&r[0].outcome), (Code::CONTENT, &b"abc"[..]));
    let r = exchanges(addr, &o, Code::POST, "dyn", b"z", 1, |_, _| {});
    assert_eq!(response(&r[0].outcome).0, Code::CHANGED);
    let r = exchanges(addr, &o, Code::DELETE, "dyn", b"", 1, |_, _| {});
    assert_eq!(response(&r[0].outcome).0, Code::DELETED);
    let r = exchanges(addr, &o, Code::GET, "dyn", b"", 1, |_, _| {});
    assert_eq!(response(&r[0].outcome).0, Code::NOT_FOUND);
}

#[test]
fn every_algorithm_completes_exchanges_against_libcoap() {
    let Some((_peer, addr)) = libcoap_server() else {
        return skip(
            "every_algorithm_completes_exchanges_against_libcoap",
            "coap-server-notls not found",
        );
    };
    for a in ALGORITHMS {
        let reports = exchanges(addr, &opts(a.name), Code::GET, "", b"", 5, |_, _| {});
        assert_eq!(reports.len(), 5, "{}", a.name);
        for r in &reports {
            assert_eq!(response(&r.outcome).0, Code::CONTENT, "{}", a.name);
            // one timer armed per transmission, all positive and finite
            assert_eq!(
                r.timers.len(),
                usize::from(r.retransmissions) + 1,
                "{}",
                a.name
            );
            assert!(
                r.timers.iter().all(|t| t.is_finite() && *t > 0.0),
                "{}",
                a.name
            );
            assert!(r.elapsed > 0, "{}", a.name);
        }
    }
}

/// The marking a fresh instance of each algorithm asks for.
fn initial_marking(name: &str) -> Marking {
    let info = coapcc_rto::registry::find(name).unwrap();
    (info.build)(&AlgorithmParams::default()).unwrap().marking()
}

/// libcoap echoes neither TC nor Rexmit-Cnt: FASOR+Option stops marking
/// after the first piggybacked response without the echo; pCoCoA completes
/// with no echo; FASOR+Token gets its 1-byte token back (any server echoes
/// tokens), so its ordinal 0 is echoed.
#[test]
fn marking_algorithms_fall_back_against_a_server_without_echo() {
    let Some((_peer, addr)) = libcoap_server() else {
        return skip(
            "marking_algorithms_fall_back_against_a_server_without_echo",
            "coap-server-notls not found",
        );
    };
    let marking: Vec<_> = ALGORITHMS
        .iter()
        .map(|a| (a.name, initial_marking(a.name)))
        .filter(|(_, m)| *m != Marking::None)
        .collect();
    assert!(
        !marking.is_empty(),
        "no registered algorithm marks transmissions"
    );
    for (name, m) in marking {
        let mut markings = Vec::new();
        let reports = exchanges(addr, &opts(name), Code::GET, "", b"", 3, |c, _| {
            markings.push(c.coap().algorithm(addr).unwrap().marking());
        });
        for r in &reports {
            let Outcome::Response { code, echo, .. } = &r.outcome else {
                panic!("{name}: {:?}", r.outcome)
            };
            assert_eq!(*code, Code::CONTENT, "{name}");
            match m {
                Marking::RexmitCount { probe } => {
                    assert!(probe, "{name}: the first request to a server probes");
                    assert_eq!(*echo, None, "{name}");
                }
                Marking::TransmissionCounter => assert_eq!(*echo, None, "{name}"),
                Marking::Token => {
                    if r.retransmissions == 0 {
                        assert_eq!(*echo, Some(0), "{name}");
                    }
                }
                Marking::None => unreachable!(),
            }
        }
        if matches!(m, Marking::RexmitCount { .. }) {
            assert_eq!(
                markings,
                vec![Marking::None; 3],
                "{name} falls back after the first response"
            );
        }
    }
}

/// Against coapcc's own server (echo on), the marks come back; with
/// `--no-echo` they do not and FASOR+Option falls back.
#[test]
fn marking_algorithms_get_their_echo_from_our_server() {
    let with = server::spawn(any_port(), ServerOptions::default(), Resources::standard()).unwrap();
    let without = server::spawn(
        any_port(),
        ServerOptions {
            echo: false,
            ..ServerOptions::default()
        },
        Resources::standard(),
    )
    .unwrap();
    for a in ALGORITHMS {
        let m = initial_marking(a.name);
        if m == Marking::None {
            continue;
        }
        let mut after = Vec::new();
        let r = exchanges(
            with.addr(),
            &opts(a.name),
            Code::GET,
            "sense",
            b"",
            2,
            |c, r| {
                if r.retransmissions == 0 {
                    after.push(c.coap().algorithm(with.addr()).unwrap().marking());
                }
            },
        );
        for x in &r {
            let Outcome::Response { echo, payload, .. } = &x.outcome else {
                panic!()
            };
            assert_eq!(payload.len(), 60);
            if x.retransmissions == 0 {
                assert_eq!(*echo, Some(0), "{}: the original was answered", a.name);
            }
        }
        if matches!(m, Marking::RexmitCount { .. }) && after.len() == 2 {
            assert_eq!(
                after[0],
                Marking::RexmitCount { probe: false },
                "{}",
                a.name
            );
        }
        let mut after = Vec::new();
        let r = exchanges(
            without.addr(),
            &opts(a.name),
            Code::GET,
            "sense",
            b"",
            2,
            |c, _| {
                after.push(c.coap().algorithm(without.addr()).unwrap().marking());
            },
        );
        for x in &r {
            let Outcome::Response { echo, .. } = &x.outcome else {
                panic!()
            };
            if m != Marking::Token {
                assert_eq!(*echo, None, "{}", a.name);
            }
        }
        if matches!(m, Marking::RexmitCount { .. }) {
            assert_eq!(after[0], Marking::None, "{}", a.name);
        }
    }
    assert!(with.stop().stats.requests > 0);
    assert!(without.stop().stats.requests > 0);
}

#[test]
fn our_client_against_aiocoap_server() {
    let Some((_peer, addr)) = aiocoap_server() else {
        return skip(
            "our_client_against_aiocoap_server",
            "python3 with aiocoap not found",
        );
    };
    let o = opts("cocoa");
    let r = exchanges(addr, &o, Code::GET, "sense", b"", 3, |_, _| {});
    for x in &r {
        assert_eq!(response(&x.outcome), (Code::CONTENT, &[b'x'; 60][..]));
    }
    let r = exchanges(addr, &o, Code::PUT, "store", b"hello", 1, |_, _| {});
    assert_eq!(response(&r[0].outcome).0, Code::CHANGED);
    let r = exchanges(addr, &o, Code::GET, "store", b"", 1, |_, _| {});
    assert_eq!(response(&r[0].outcome), (Code::CONTENT, &b"hello"[..]));
    let r = exchanges(addr, &o, Code::POST, "store", b"again", 1, |_, _| {});
    assert_eq!(response(&r[0].outcome).0, Code::CHANGED);
    let r = exchanges(addr, &o, Code::DELETE, "store", b"", 1, |_, _| {});
    assert_eq!(response(&r[0].outcome).0, Code::DELETED);
    let r = exchanges(addr, &o, Code::GET, "nowhere", b"", 1, |_, _| {});
    assert_eq!(response(&r[0].outcome).0, Code::NOT_FOUND);
}

#[test]
fn libcoap_client_against_our_server() {
    if !have("coap-client-notls") {
        return skip(
            "libcoap_client_against_our_server",
            "coap-client-notls not found",
        );
    }
    let h = server::spawn(any_port(), ServerOptions::default(), Resources::standard()).unwrap();
    let uri = |p: &str| format!("coap://127.0.0.1:{}/{p}", h.addr().port());
    let (ok, out, err) =
        run_bounded(Command::new("coap-client-notls").args(["-m", "get", &uri("hello")]));
    assert!(ok, "{err}");
    assert_eq!(out.trim_end(), "Hello from coapcc");
    let (ok, _, err) = run_bounded(Command::new("coap-client-notls").args([
        "-m",
        "put",
        "-e",
        "from libcoap",
        &uri("store"),
    ]));
    assert!(ok, "{err}");
    let (ok, out, _) =
        run_bounded(Command::new("coap-client-notls").args(["-m", "get", &uri("store")]));
    assert!(ok);
    assert_eq!(out.trim_end(), "from libcoap");
    let (ok, out, _) =
        run_bounded(Command::new("coap-client-notls").args(["-m", "get", &uri("large")]));
    assert!(ok);
    assert_eq!(out.trim_end(), "x".repeat(1000));
    let (ok, out, _) = run_bounded(Command::new("coap-client-notls").args([
        "-m",
        "get",
        &uri(".well-known/core"),
    ]));
    assert!(ok);
    assert!(
        out.contains("</sense>") && out.contains("</store>"),
        "{out}"
    );
    let s = h.stop();
    assert_eq!(s.stats.requests, 5, "{s:?}");
    assert_eq!(s.stats.malformed, 0);
}

#[test]
fn aiocoap_client_against_our_server() {
    if !have_aiocoap() {
        return skip(
            "aiocoap_client_against_our_server",
            "python3 with aiocoap not found",
        );
    }
    let h = server::spawn(any_port(), ServerOptions::default(), Resources::standard()).unwrap();
    let port = h.addr().port();
    // A Python snippet rather than the aiocoap-client CLI, whose output
    // format varies between versions.
    let script = format!(
        r#"
import asyncio, aiocoap
async def main():
    ctx = await aiocoap.Context.create_client_context()
    base = "coap://127.0.0.1:{port}/"
    r = await ctx.request(aiocoap.Message(code=aiocoap.GET, uri=base + "hello")).response
    print(r.code, r.payload.decode())
    r = await ctx.request(aiocoap.Message(code=aiocoap.PUT, uri=base + "store", payload=b"from aiocoap")).response
    print(r.code)
    r = await ctx.request(aiocoap.Message(code=aiocoap.GET, uri=base + "store")).response
    print(r.code, r.payload.decode())
    r = await ctx.request(aiocoap.Message(code=aiocoap.GET, uri=base + "sense")).response
    print(len(r.payload))
    r = await ctx.request(aiocoap.Message(code=aiocoap.DELETE, uri=base + "sense")).response
    print(r.code)
    await ctx.shutdown()
asyncio.run(main())
"#
    );
    let (ok, out, err) = run_bounded(Command::new("python3").args(["-c", &script]));
    assert!(ok, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines,
        [
            "2.05 Content Hello from coapcc",
            "2.04 Changed",
            "2.05 Content from aiocoap",
            "60",
            "4.05 Method Not Allowed"
        ],
        "{out}\n{err}"
    );
    assert_eq!(h.stop().stats.requests, 5);
}

/// `coapcc load`'s engine against libcoap: every client finishes, every
/// exchange needed one transmission on loopback.
#[test]
fn load_against_libcoap_server() {
    let Some((_peer, addr)) = libcoap_server() else {
        return skip("load_against_libcoap_server", "coap-server-notls not found");
    };
    for alg in ["default", "fasor-option", "pcocoa"] {
        let spec = coapcc_net::load::LoadSpec {
            target: addr,
            path: String::new(),
            clients: 4,
            workload: coapcc_sim::Workload {
                exchanges: 5,
                ..Default::default()
            },
            algorithm: AlgorithmSpec::named(alg),
            max_retransmit: 20,
            token_len: 0,
            nstart: 1,
            seed: 5,
            time_limit: std::time::Duration::from_secs(15),
        };
        let result = coapcc_net::load::run_blocking(&spec).unwrap();
        let s = coapcc_sim::metrics::Summary::of(alg, 0, &[result]);
        assert_eq!(s.clients, 4, "{alg}");
        assert_eq!(s.unfinished_clients, 0, "{alg}");
        assert_eq!(
            s.retransmissions_per_exchange.iter().sum::<u64>(),
            20,
            "{alg}"
        );
        assert_eq!(s.failed_exchanges, 0, "{alg}");
    }
}
