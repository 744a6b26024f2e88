//! Real CoAP stacks through `coapcc emulate` on the 802.15.4 grid, on
//! loopback: unloaded exchanges take the round trip the grid model gives for
//! the same path and message sizes (run offline here, on the same code),
//! clients attach to the nodes the mapping rule gives, and the relay's report
//! counts what the model's nodes did.

use crate::net_support;

use std::time::Duration;

use coapcc_link::grid::{self, Grid, NodeRecord};
use coapcc_link::{Datagram, Nanos, Network, NodeId, Output};
use coapcc_net::client::{ClientOptions, Outcome};
use coapcc_net::emulate::networks::dumbbell::DumbbellReport;
use coapcc_net::emulate::networks::grid::{EmulatedGrid, GridReport};
use coapcc_net::emulate::{self, EmulatorHandle, EmulatorOptions};
use coapcc_net::load::{self, LoadSpec};
use coapcc_net::resources::Resources;
use coapcc_net::server::{self, ServerHandle, ServerOptions};
use coapcc_proto::message::Code;
use coapcc_sim::{AlgorithmSpec, Workload};
use net_support::*;

/// A loopback address whose port the system picks when it is bound (no
/// race with other tests for a port found free earlier).
fn any_port() -> std::net::SocketAddr {
    "127.0.0.1:0".parse().unwrap()
}

/// The seed of the relay's grid (and of the offline model).
const SEED: u64 = 7;

/// Server turnaround assumed by the offline model: between the request's
/// delivery and the response entering the grid (coapcc's server on loopback
/// answers in a fraction of a millisecond; the response's trip does not
/// depend on it, its sum with the trip does).
const SERVER_TURNAROUND: Nanos = 200_000;

/// Pause between exchanges, so that every one starts on an idle grid (the
/// last frame's acknowledgement is over).
const PAUSE: Duration = Duration::from_millis(40);

fn grid_relay(client_nodes: Vec<NodeId>) -> (ServerHandle, EmulatorHandle) {
    let srv = server::spawn(any_port(), ServerOptions::default(), Resources::standard()).unwrap();
    let emu = emulate::spawn(
        any_port(),
        srv.addr(),
        EmulatorOptions {
            network: EmulatedGrid {
                config: grid::Config::default(),
                client_nodes,
            }
            .into(),
            seed: SEED,
            ..EmulatorOptions::default()
        },
    )
    .unwrap();
    (srv, emu)
}

/// The same grid, driven offline through the same sequence of exchanges, each
/// on an idle grid.
struct Offline {
    grid: Grid,
    now: Nanos,
    next_id: u32,
}

impl Offline {
    fn new() -> Self {
        Offline {
            grid: Grid::new(&grid::Config::default(), SEED).unwrap(),
            now: 0,
            next_id: 0,
        }
    }

    /// Sends `len` CoAP bytes from `src` to `dst` now; returns when they
    /// arrive (the grid runs on until then).
    fn one_way(&mut self, src: NodeId, dst: NodeId, len: usize) -> Nanos {
        let id = self.next_id;
        self.next_id += 1;
        let d = Datagram {
            id,
            src,
            dst,
            transport_header: 8,
            payload: len as u16,
            unnecessary: false,
        };
        self.grid.send(self.now, d).expect("accepted");
        loop {
            let t = self.grid.next_wakeup().expect("the datagram is in flight");
            let (at, out) = self.grid.poll(t).expect("an event is due");
            self.now = at;
            match out {
                Some(Output::Delivered { id: i, .. }) if i == id => return at,
                Some(Output::Dropped { id: i, cause }) if i == id => {
                    panic!("the model dropped it: {cause:?}")
                }
                _ => {}
            }
        }
    }

    /// One exchange from `node`; returns the round trip the client sees.
    fn exchange(&mut self, node: NodeId, request: usize, response: usize) -> Nanos {
        let t0 = self.now;
        self.one_way(node, 3, request);
        self.now += SERVER_TURNAROUND;
        let end = self.one_way(3, node, response);
        // then the grid goes idle (the pause between exchanges)
        while let Some(t) = self.grid.next_wakeup() {
            self.now = self.grid.poll(t).expect("due").0;
        }
        self.now += 1_000_000_000;
        end - t0
    }

    fn record(&self, node: NodeId) -> NodeRecord {
        self.grid.node_record(node)
    }
}

/// `n` GET /sense exchanges with a pause after each; their RTTs (ns).
fn rtts(relay: std::net::SocketAddr, n: usize, seed: u64) -> Vec<Nanos> {
    let opts = ClientOptions {
        seed,
        ..ClientOptions::default()
    };
    exchanges(relay, &opts, Code::GET, "sense", b"", n, |_, r| {
        assert!(
            matches!(
                r.outcome,
                Outcome::Response {
                    code: Code::CONTENT,
                    ..
                }
            ),
            "{r:?}"
        );
        assert_eq!(
            r.retransmissions, 0,
            "an unloaded exchange needs one transmission"
        );
        std::thread::sleep(PAUSE);
    })
    .iter()
    .map(|r| r.elapsed)
    .collect()
}

/// The size of every datagram of a direction, all of which had one size.
fn size(c: &emulate::DatagramCounts) -> usize {
    assert!(c.received > 0);
    assert_eq!(c.bytes % c.received, 0, "one size: {c:?}");
    (c.bytes / c.received) as usize
}

fn ms(n: Nanos) -> f64 {
    n as f64 / 1e6
}

/// Measured RTTs against the model's. The median must be within 2 ms: that
/// is the accuracy check. Each sample must be no more than 3 ms early (the
/// relay may send up to 1 ms early per direction; earlier is a model error no
/// machine load can cause) and no later than a fifth of the model RTT or
/// 6 ms, whichever is more (about 26 ms for node 36's eight hops: a hop
/// counted twice, or a fragment's airtime lost, shows as more than that). A tighter upper bound per sample would measure the test
/// machine, not the relay: tokio's 1 ms timer on a busy machine has been seen
/// 6.7 ms late for one sample while the median stayed within 1 ms.
fn assert_close(what: &str, measured: &[Nanos], expected: Nanos) {
    let mut diffs: Vec<f64> = measured.iter().map(|&m| ms(m) - ms(expected)).collect();
    eprintln!(
        "{what}: model RTT {:.3} ms, measured − model (ms): {:?}",
        ms(expected),
        diffs
            .iter()
            .map(|d| (d * 1000.0).round() / 1000.0)
            .collect::<Vec<_>>()
    );
    let late = (ms(expected) / 5.0).max(6.0);
    for d in &diffs {
        assert!((-3.0..=late).contains(d), "{what}: {d:.3} ms off the model");
    }
    diffs.sort_by(f64::total_cmp);
    let median = diffs[diffs.len() / 2];
    assert!(
        median.abs() <= 2.0,
        "{what}: median {median:.3} ms off the model"
    );
}

/// Without the MAC's float airtime, which is summed in another order.
fn counts(r: &NodeRecord) -> NodeRecord {
    NodeRecord {
        airtime: 0.0,
        ..r.clone()
    }
}

/// A coapcc client on node 36, eight hops from the server (storing routing:
/// 36 → 30 → 24 → 18 → 12 → 6 → 5 → 4 → 3), GETs /sense ten times: each
/// round trip is the model's for that path and those sizes (about 129 ms:
/// the 69-byte response needs two fragments on most hops), and every node
/// did exactly what the offline model's nodes do.
#[test]
fn unloaded_exchanges_from_node_36_take_the_model_round_trip() {
    let (srv, emu) = grid_relay(vec![36]);
    let measured = rtts(emu.addr(), 10, 1);
    let r = emu.stop();
    let stats = srv.stop();
    assert_eq!(stats.stats.requests, 10);
    let (request, response) = (size(&r.upstream), size(&r.downstream));
    eprintln!("request {request} B, response {response} B");
    let mut model = Offline::new();
    let expected: Vec<Nanos> = (0..10)
        .map(|_| model.exchange(36, request, response))
        .collect();
    assert!(expected.iter().all(|&e| e == expected[0]), "{expected:?}");
    assert_close("node 36", &measured, expected[0]);

    let g = r.network_part::<GridReport>().expect("grid report");
    assert_eq!((r.upstream.delivered, r.downstream.delivered), (10, 10));
    assert_eq!((r.upstream.dropped, r.downstream.dropped), (0, 0));
    for n in &g.nodes {
        assert_eq!(n.clients, u64::from(n.node == 36), "node {}", n.node);
        assert_eq!(
            counts(&n.record),
            counts(&model.record(n.node)),
            "node {}",
            n.node
        );
    }
    // 7 forwarders, each carrying every request and every response
    let t = g.totals();
    assert_eq!(t.forwarded, 7 * 2 * 10);
    assert_eq!(g.frames_on_air, t.data_frames + t.ack_frames);
    assert_eq!(t.data_frames, t.ack_frames, "every frame acknowledged once");
    assert_eq!(g.drops.total(), 0);
    assert!(
        r.network_part::<DumbbellReport>().is_none(),
        "no dumbbell links"
    );
}

/// Three clients, one after the other, attach to nodes 2, 4 and 5 (every
/// node but the border router 1 and the server 3, in node order); their
/// round trips are the model's for one hop (2 and 4 are the server's
/// neighbours: 2 its parent, 4 its child) and two hops (5 → 4 → 3).
#[test]
fn clients_attach_to_distinct_nodes_in_node_order() {
    let (srv, emu) = grid_relay(Vec::new());
    let measured: Vec<Vec<Nanos>> = (0..3).map(|i| rtts(emu.addr(), 4, 10 + i)).collect();
    let r = emu.stop();
    srv.stop();
    let (request, response) = (size(&r.upstream), size(&r.downstream));
    let g = r.network_part::<GridReport>().expect("grid report");
    let attached: Vec<NodeId> = g
        .nodes
        .iter()
        .filter(|n| n.clients > 0)
        .map(|n| {
            assert_eq!(n.clients, 1);
            n.node
        })
        .collect();
    assert_eq!(attached, vec![2, 4, 5]);
    assert_eq!(r.clients_seen, 3);
    let mut model = Offline::new();
    for (node, m) in [2, 4, 5].into_iter().zip(&measured) {
        let expected: Vec<Nanos> = (0..4)
            .map(|_| model.exchange(node, request, response))
            .collect();
        assert!(expected.iter().all(|&e| e == expected[0]));
        assert_close(&format!("node {node}"), m, expected[0]);
    }
    for n in &g.nodes {
        assert_eq!(
            counts(&n.record),
            counts(&model.record(n.node)),
            "node {}",
            n.node
        );
    }
    // only node 4 forwards: node 5's requests and responses
    assert_eq!(g.node(4).unwrap().record.forwarded, 2 * 4);
    assert_eq!(g.totals().forwarded, 2 * 4);
}

/// libcoap on both sides of the grid: its client (on node 20) against
/// coapcc's server, and coapcc's clients (on nodes 2 and 4) against its server.
#[test]
fn libcoap_through_the_grid() {
    let Some((_peer, libcoap)) = libcoap_server() else {
        return skip(
            "libcoap_through_the_grid",
            "coap-server-notls not installed",
        );
    };
    if !have("coap-client-notls") {
        return skip(
            "libcoap_through_the_grid",
            "coap-client-notls not installed",
        );
    }
    let (srv, emu) = grid_relay(vec![20]);
    let uri = format!("coap://127.0.0.1:{}/hello", emu.addr().port());
    let (ok, out, err) =
        run_bounded(std::process::Command::new("coap-client-notls").args(["-B", "10", &uri]));
    assert!(ok, "{err}");
    assert_eq!(out.trim(), "Hello from coapcc");
    let r = emu.stop();
    srv.stop();
    let g = r.network_part::<GridReport>().unwrap();
    assert_eq!(g.node(20).unwrap().clients, 1);
    assert!(r.upstream.delivered >= 1 && r.downstream.delivered >= 1);
    // 20 → 14 → 8 → 2 → 3 and back
    assert!(g.node(14).unwrap().record.forwarded >= 2);

    let emu = emulate::spawn(
        any_port(),
        libcoap,
        EmulatorOptions {
            network: grid::Config::default().into(),
            seed: SEED,
            ..EmulatorOptions::default()
        },
    )
    .unwrap();
    let put = exchanges(
        emu.addr(),
        &ClientOptions::default(),
        Code::PUT,
        "dyn",
        b"through the grid",
        1,
        |_, _| {},
    );
    assert!(
        matches!(
            put[0].outcome,
            Outcome::Response {
                code: Code::CREATED,
                ..
            }
        ),
        "{put:?}"
    );
    let get = exchanges(
        emu.addr(),
        &ClientOptions::default(),
        Code::GET,
        "dyn",
        b"",
        1,
        |_, _| {},
    );
    let Outcome::Response { payload, .. } = &get[0].outcome else {
        panic!("{get:?}")
    };
    assert_eq!(payload, b"through the grid");
    let r = emu.stop();
    assert_eq!(r.clients_seen, 2, "two client sockets");
    let g = r.network_part::<GridReport>().unwrap();
    assert_eq!(
        (g.node(2).unwrap().clients, g.node(4).unwrap().clients),
        (1, 1)
    );
}

/// `coapcc load` (6 concurrent clients on nodes 2, 4, 5, 6, 7, 8) through the
/// grid: every exchange completes, and the relay's counts add up — every
/// request transmission entered the grid, every delivered one reached the
/// server and was answered, every drop has a cause, every frame on the air is
/// a node's data frame or acknowledgement.
#[test]
fn load_through_the_grid_is_accounted_for() {
    let (srv, emu) = grid_relay(Vec::new());
    let spec = LoadSpec {
        target: emu.addr(),
        path: "sense".into(),
        clients: 6,
        workload: Workload {
            exchanges: 5,
            ..Workload::default()
        },
        algorithm: AlgorithmSpec::named("cocoa"),
        max_retransmit: 4,
        token_len: 0,
        nstart: 1,
        seed: 3,
        time_limit: Duration::from_secs(30),
    };
    let result = load::run_blocking(&spec).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let r = emu.stop();
    let stats = srv.stop();
    let completed: u32 = result.clients.iter().map(|c| c.completed).sum();
    assert_eq!(completed, 30, "{:?}", result.clients);
    let sent: u64 = result
        .clients
        .iter()
        .map(|c| u64::from(c.completed + c.retransmissions))
        .sum();
    let g = r.network_part::<GridReport>().unwrap();
    eprintln!("{r:?}");
    assert_eq!(r.upstream.received, sent);
    assert_eq!(r.upstream.in_flight() + r.downstream.in_flight(), 0);
    assert_eq!(stats.datagrams, r.upstream.delivered);
    assert_eq!(stats.replies, r.downstream.received);
    assert_eq!(
        g.drops.total(),
        r.upstream.dropped + r.downstream.dropped,
        "{:?}",
        g.drops
    );
    let t = g.totals();
    assert_eq!(g.frames_on_air, t.data_frames + t.ack_frames);
    // at least one frame per hop for every delivered datagram
    assert!(t.data_frames >= r.upstream.delivered + r.downstream.delivered);
    let attached: Vec<NodeId> = g
        .nodes
        .iter()
        .filter(|n| n.clients > 0)
        .map(|n| n.node)
        .collect();
    assert_eq!(attached, vec![2, 4, 5, 6, 7, 8]);
}
