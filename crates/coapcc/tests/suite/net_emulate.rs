//! `coapcc load` through `coapcc emulate` on loopback, against coapcc's
//! server, compared with the simulator on the same (sped-up) network: the
//! real-time relay and the discrete-event testbed apply one link model, so
//! flow completion times agree.

use crate::net_support;

use std::time::Duration;

use coapcc_link::dumbbell::{Buffer, Config};
use coapcc_link::errors::ErrorProfile;
use coapcc_net::emulate::networks::dumbbell::DumbbellReport;
use coapcc_net::emulate::{self, EmulatorOptions};
use coapcc_net::load::{self, LoadSpec};
use coapcc_net::resources::Resources;
use coapcc_net::server::{self, ServerOptions};
use coapcc_sim::dumbbell::{self, Coap, Group, RunSpec};
use coapcc_sim::metrics::Summary;
use coapcc_sim::network::SimNetwork;
use coapcc_sim::{AlgorithmSpec, Workload};
use net_support::any_port;

/// The testbed's network sped up ten times: 600/300 kbit/s, 20/40 ms,
/// 1–2 ms to the server.
fn fast_network(errors: ErrorProfile, buffer: Buffer) -> Config {
    Config {
        errors,
        buffer,
        ..Config::default()
    }
    .scaled(10.0)
}

struct Outcome {
    result: coapcc_sim::metrics::RunResult,
    summary: Summary,
    relay: emulate::EmulatorReport,
    server: coapcc_net::server::Snapshot,
}

fn load_through_emulator(
    net: &Config,
    clients: u32,
    workload: Workload,
    alg: AlgorithmSpec,
) -> Outcome {
    let srv = server::spawn(any_port(), ServerOptions::default(), Resources::standard()).unwrap();
    let emu = emulate::spawn(
        any_port(),
        srv.addr(),
        EmulatorOptions {
            network: net.clone().into(),
            seed: 7,
            ..EmulatorOptions::default()
        },
    )
    .unwrap();
    let spec = LoadSpec {
        target: emu.addr(),
        path: "sense".into(),
        clients,
        workload,
        algorithm: alg.clone(),
        max_retransmit: 20,
        token_len: 0,
        nstart: 1,
        seed: 3,
        time_limit: Duration::from_secs(15),
    };
    let result = load::run_blocking(&spec).unwrap();
    let report = emu.stop();
    let stats = srv.stop();
    assert_eq!(result.clients.len(), clients as usize);
    assert!(
        result.clients.iter().all(|c| c.fct.is_some()),
        "every client finished: {:?}",
        result.clients
    );
    assert!(stats.stats.requests >= u64::from(clients * spec.workload.exchanges));
    Outcome {
        summary: Summary::of(alg.label(), 0, std::slice::from_ref(&result)),
        result,
        relay: report,
        server: stats,
    }
}

fn simulated(net: &Config, clients: u32, workload: Workload, alg: &str, reps: u32) -> Summary {
    let spec = RunSpec {
        network: net.clone(),
        coap: Coap::default(),
        groups: vec![Group {
            algorithm: AlgorithmSpec::named(alg),
            workload,
            clients,
        }],
        seed: 11,
    };
    let runs: Vec<_> = (0..reps)
        .map(|r| dumbbell::Sim::run(&spec, r).unwrap())
        .collect();
    Summary::of(alg, 0, &runs)
}

#[test]
fn load_through_emulator_matches_the_simulator() {
    let net = fast_network(ErrorProfile::None, Buffer::Infinite);
    assert_eq!((net.uplink_bps, net.downlink_bps), (600_000, 300_000));
    assert_eq!((net.uplink_delay_ms, net.downlink_delay_ms), (20.0, 40.0));
    let workload = Workload {
        exchanges: 40,
        ..Workload::default()
    };
    let clients = 10;
    let real = load_through_emulator(
        &net,
        clients,
        workload.clone(),
        AlgorithmSpec::named("default"),
    );
    let sim = simulated(&net, clients, workload.clone(), "default", 3);
    let (r, s) = (real.summary.fct.p50, sim.fct.p50);
    eprintln!(
        "FCT median: real {r:.4} s, simulated {s:.4} s, ratio {:.4}",
        r / s
    );
    assert!((r / s - 1.0).abs() < 0.10, "real {r} vs simulated {s}");
    // No losses: every exchange needed one transmission, in both.
    assert_eq!(
        real.summary.retransmissions_per_exchange,
        vec![u64::from(clients * workload.exchanges)]
    );
    assert_eq!(
        sim.retransmissions_per_exchange,
        vec![3 * u64::from(clients * workload.exchanges)]
    );
    // The relay carried every request and response, sized as the testbed's
    // (38-byte requests, 93-byte responses at IP level).
    let n = u64::from(clients * workload.exchanges);
    let e = &real.relay;
    let link = e
        .network_part::<DumbbellReport>()
        .expect("the dumbbell's links");
    assert_eq!((link.uplink.packets, link.uplink.bytes), (n, 38 * n));
    assert_eq!((link.downlink.packets, link.downlink.bytes), (n, 93 * n));
    assert_eq!(e.clients_seen, u64::from(clients));
}

/// With a slow uplink, a small buffer and bursty link errors, the relay
/// drops packets (counted by cause), the clients retransmit (Default CoAP with
/// ACK_TIMEOUT 0.2 s, so that a loss costs little wall time) and still
/// complete every exchange; every transmission is accounted for.
#[test]
fn emulator_drops_and_clients_recover() {
    let net = Config {
        uplink_bps: 60_000,
        downlink_bps: 300_000,
        uplink_delay_ms: 20.0,
        downlink_delay_ms: 40.0,
        path_delay_ms: [1.0, 2.0],
        buffer: Buffer::Bytes(100),
        errors: ErrorProfile::Medium,
        ..Config::default()
    };
    let alg = AlgorithmSpec {
        ack_timeout: Some(0.2),
        ..AlgorithmSpec::named("default")
    };
    let workload = Workload {
        exchanges: 10,
        ..Workload::default()
    };
    let o = load_through_emulator(&net, 8, workload, alg);
    let link = o.relay.network_part::<DumbbellReport>().expect("its links");
    let (up, down) = (&link.uplink, &link.downlink);
    eprintln!("{up:?}\n{down:?}");
    assert!(up.dropped_error + down.dropped_error > 0, "{:?}", o.relay);
    assert!(
        o.summary.retransmissions_per_exchange.len() > 1,
        "some exchanges needed retransmissions"
    );
    assert_eq!(
        o.summary.retransmissions_per_exchange.iter().sum::<u64>(),
        80
    );
    assert_eq!(o.summary.failed_exchanges, 0);
    // Every request transmission entered the uplink: serialised or tail-dropped.
    let sent: u64 = o
        .result
        .clients
        .iter()
        .map(|c| u64::from(c.completed + c.retransmissions))
        .sum();
    assert_eq!(up.packets + up.dropped_buffer, sent);
    // Every request that crossed reached the server; every reply entered the
    // downlink.
    assert_eq!(o.server.datagrams, up.packets - up.dropped_error);
    assert_eq!(down.packets + down.dropped_buffer, o.server.replies);
}

/// Floods the dumbbell relay (uplink at 1 bit/s: nothing finishes
/// serialising while the test runs) with 200 datagrams of 60 000 bytes
/// from one client, paced so the relay reads them all; returns the relay's
/// final report. The server address is a socket that never answers.
fn flood_the_uplink(buffer: Buffer) -> emulate::EmulatorReport {
    let sink = std::net::UdpSocket::bind(any_port()).unwrap();
    let net = Config {
        uplink_bps: 1,
        buffer,
        ..Config::default()
    };
    let emu = emulate::spawn(
        any_port(),
        sink.local_addr().unwrap(),
        EmulatorOptions {
            network: net.into(),
            ..EmulatorOptions::default()
        },
    )
    .unwrap();
    let client = std::net::UdpSocket::bind(any_port()).unwrap();
    let data = vec![0xA5u8; 60_000];
    for _ in 0..200 {
        client.send_to(&data, emu.addr()).unwrap();
        std::thread::sleep(Duration::from_millis(2));
    }
    // bounded wait until the relay has read all of them (its report is
    // refreshed every second); the assertions hold for however many it read
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while emu.report().upstream.received < 200 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    emu.stop()
}

/// The relay bounds the IP bytes it holds per direction (4 MiB by default),
/// whatever the model's buffer: into the dumbbell's infinite buffer, 60 000-byte
/// datagrams (60 028 IP bytes) are taken until 69 are held and refused after
/// that, counted as refused (relay full, with their bytes) and as buffer drops
/// of the uplink. With the 1 410 000 B buffer that stands for "infinite" in the
/// evaluations, the model's tail drop decides alone (one being serialised plus
/// 23 waiting): the relay refuses nothing, so it drops exactly where the model
/// does.
#[test]
fn the_relay_bounds_the_bytes_it_holds() {
    const IP: u64 = 60_028;
    let r = flood_the_uplink(Buffer::Infinite);
    let up = &r.upstream;
    assert!(up.received >= 100, "the relay read too few: {up:?}");
    let held = (4u64 << 20) / IP;
    assert_eq!(held, 69);
    assert_eq!(up.in_flight(), held, "{up:?}");
    assert_eq!((up.held_bytes, up.peak_held_bytes), (held * IP, held * IP));
    assert_eq!(up.refused_full, up.received - held, "{up:?}");
    assert_eq!(up.refused_full_bytes, up.refused_full * IP);
    assert_eq!(up.dropped, 0);
    let link = r.network_part::<DumbbellReport>().expect("its links");
    assert_eq!(link.uplink.dropped_buffer, up.refused_full);
    let r = flood_the_uplink(Buffer::Bytes(1_410_000));
    let up = &r.upstream;
    assert!(up.received >= 100, "the relay read too few: {up:?}");
    let taken = 1 + 1_410_000 / IP;
    assert_eq!(up.refused_full, 0, "{up:?}");
    assert_eq!(up.in_flight(), taken, "{up:?}");
    assert_eq!(up.held_bytes, taken * IP);
    assert_eq!(up.dropped, up.received - taken);
    let link = r.network_part::<DumbbellReport>().expect("its links");
    assert_eq!(link.uplink.dropped_buffer, up.dropped);
}
