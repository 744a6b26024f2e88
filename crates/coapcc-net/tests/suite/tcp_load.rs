//! The testbed's workloads over coap+tcp against the coap+tcp server on
//! loopback: every exchange answered, one connection per continuous client,
//! one per batch for random clients (batch sizes replayed from the clients'
//! seeds), and the server saw exactly those connections.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use coapcc_link::rng::{derive, SimRng, Stream};
use coapcc_net::resources::Resources;
use coapcc_net::tcp::load::{self, TcpLoadSpec};
use coapcc_net::tcp::server::{self, TcpServerOptions};
use coapcc_net::tcp::socket::SocketOptions;
use coapcc_proto::message::Code;
use coapcc_workload::{Workload, WorkloadKind};

fn run(kind: WorkloadKind, nodelay: bool) -> (load::TcpLoadResult, u64, TcpLoadSpec) {
    let h = server::spawn(
        "127.0.0.1:0".parse().unwrap(),
        TcpServerOptions::default(),
        Arc::new(Mutex::new(Resources::standard())),
    )
    .unwrap();
    let spec = TcpLoadSpec {
        target: h.addr(),
        path: "sense".into(),
        clients: 12,
        workload: Workload {
            kind,
            exchanges: 15,
            batch: [1, 10],
        },
        token_len: 0,
        seed: 7,
        time_limit: Duration::from_secs(60),
        socket: SocketOptions {
            nodelay,
            ..SocketOptions::default()
        },
        bind: vec!["127.0.0.1".parse().unwrap()],
    };
    let r = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
        .block_on(load::run(&spec))
        .unwrap();
    let snap = h.stop();
    assert_eq!(snap.requests, 12 * 15);
    (r, snap.accepted, spec)
}

fn check_answered(r: &load::TcpLoadResult) {
    assert_eq!(r.codes.get(&Code::CONTENT), Some(&(12 * 15)));
    assert_eq!(r.codes.len(), 1);
    assert_eq!(r.result.clients.len(), 12);
    for c in &r.result.clients {
        assert_eq!((c.completed, c.failed), (15, 0));
        assert!(c.fct.is_some_and(|f| f > 0.0));
        assert!(c.rtt_sum > 0.0 && c.rtt_sum <= c.fct.unwrap());
    }
}

#[test]
fn continuous_clients_use_one_connection_each() {
    for nodelay in [false, true] {
        let (r, accepted, _) = run(WorkloadKind::Continuous, nodelay);
        check_answered(&r);
        assert_eq!(r.connections, 12);
        assert_eq!(accepted, 12);
    }
}

#[test]
fn random_clients_open_a_connection_per_batch() {
    let (r, accepted, spec) = run(WorkloadKind::Random, false);
    check_answered(&r);
    let mut batches = 0u64;
    for (i, c) in r.result.clients.iter().enumerate() {
        let mut rng = SimRng::new(derive(spec.seed, Stream::Client, i as u64));
        let mut left = 15;
        let mut mine = 0;
        while left > 0 {
            left -= rng.int_in(1, 10).min(left);
            mine += 1;
        }
        assert_eq!(c.tcp.as_ref().unwrap().connections, mine, "client {i}");
        batches += u64::from(mine);
    }
    assert!(
        batches > 12,
        "batches of 1-10 over 15 exchanges: more than one each"
    );
    assert_eq!(r.connections, batches);
    assert_eq!(accepted, batches);
}
