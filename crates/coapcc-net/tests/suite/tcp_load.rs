//! The testbed's workloads over coap+tcp against the coap+tcp server on
//! loopback: every exchange answered, one connection per continuous client,
//! one per batch for random clients (batch sizes replayed from the clients'
//! seeds), and the server saw exactly those connections. Deadlines: the load
//! and a single exchange stop at their time limit by the clock while a peer
//! floods them with responses to no request of theirs.

use std::io::Write;
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use coapcc_link::rng::{derive, SimRng, Stream};
use coapcc_net::resources::Resources;
use coapcc_net::tcp::client::TcpClient;
use coapcc_net::tcp::load::{self, TcpLoadSpec};
use coapcc_net::tcp::server::{self, TcpServerOptions};
use coapcc_net::tcp::socket::SocketOptions;
use coapcc_proto::message::Code;
use coapcc_proto::tcp::Csm;
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
            ..Default::default()
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

/// How long a flooding peer floods at most (the tests stop it sooner).
const FLOOD_BOUND: Duration = Duration::from_secs(20);

/// A coap+tcp peer on loopback that writes, on every connection it accepts,
/// a valid CSM and then 2.05 responses with a token no request has (1
/// byte, where the clients' tokens are 0 or 4 bytes long) as fast as the
/// client reads them, never answering a request. It stops when dropped, or
/// after [`FLOOD_BOUND`].
///
/// Small segments (MSS 1400) without Nagle keep the client's socket
/// readable at every read: with loopback's 64 KiB segments its receive
/// queue runs dry between window updates now and then, and a read that has
/// to wait lets a timeout around it fire, which hid the missing check.
struct FloodPeer {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    accepted: Arc<Mutex<u32>>,
    thread: Option<JoinHandle<()>>,
}

impl FloodPeer {
    fn start() -> Self {
        let sock =
            socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
        sock.set_tcp_mss(1400).unwrap();
        sock.bind(&SocketAddr::from(([127, 0, 0, 1], 0)).into())
            .unwrap();
        sock.listen(8).unwrap();
        let listener: TcpListener = sock.into();
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let accepted = Arc::new(Mutex::new(0));
        let (s, a) = (stop.clone(), accepted.clone());
        let thread = std::thread::spawn(move || {
            // CSM (7.01, no options), then 2.05 frames: Len 0, TKL 1, token F0.
            let csm = [0x00, 0xE1];
            let flood: Vec<u8> = [0x01, 0x45, 0xF0].repeat(1 << 20);
            let end = Instant::now() + FLOOD_BOUND;
            let mut writers = Vec::new();
            while !s.load(Ordering::Relaxed) && Instant::now() < end {
                let Ok((mut conn, _)) = listener.accept() else {
                    std::thread::sleep(Duration::from_millis(5));
                    continue;
                };
                *a.lock().unwrap() += 1;
                conn.set_nonblocking(false).unwrap();
                conn.set_nodelay(true).unwrap();
                conn.set_write_timeout(Some(Duration::from_millis(200)))
                    .unwrap();
                let (s, flood) = (s.clone(), flood.clone());
                writers.push(std::thread::spawn(move || {
                    let mut ok = conn.write_all(&csm).is_ok();
                    // Whole frames only: a partial write goes on where it stopped.
                    let mut at = 0;
                    while ok && !s.load(Ordering::Relaxed) && Instant::now() < end {
                        ok = match conn.write(&flood[at..]) {
                            Ok(n) => {
                                at = (at + n) % flood.len();
                                n > 0
                            }
                            // the write timeout: the client reads no more for now
                            Err(e) => matches!(
                                e.kind(),
                                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                            ),
                        };
                    }
                }));
            }
            for w in writers {
                let _ = w.join();
            }
        });
        FloodPeer {
            addr,
            stop,
            accepted,
            thread: Some(thread),
        }
    }

    fn accepted(&self) -> u32 {
        *self.accepted.lock().unwrap()
    }
}

impl Drop for FloodPeer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Runs `fut` on a runtime like the CLI's, bounded at `bound` from outside
/// (so that a run that ignores its own deadline fails the test instead of
/// running on); returns its output and how long it took.
fn bounded<T>(bound: Duration, fut: impl std::future::Future<Output = T>) -> (Option<T>, Duration) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let began = Instant::now();
    let out = rt.block_on(async { tokio::time::timeout(bound, fut).await.ok() });
    let took = began.elapsed();
    rt.shutdown_timeout(Duration::from_secs(1));
    (out, took)
}

/// The generous margin past a time limit within which a run must return.
const MARGIN: Duration = Duration::from_secs(3);

#[test]
fn load_stops_at_its_time_limit_while_the_peer_floods_foreign_tokens() {
    for kind in [WorkloadKind::Continuous, WorkloadKind::Random] {
        let peer = FloodPeer::start();
        let limit = Duration::from_secs(2);
        let spec = TcpLoadSpec {
            target: peer.addr,
            path: "sense".into(),
            clients: 1,
            workload: Workload {
                kind,
                exchanges: 5,
                batch: [1, 3],
                ..Default::default()
            },
            token_len: 0,
            seed: 7,
            time_limit: limit,
            socket: SocketOptions::default(),
            bind: vec![],
        };
        let (r, took) = bounded(limit + MARGIN, load::run(&spec));
        let r = r
            .unwrap_or_else(|| {
                panic!("{kind:?}: load ran past {limit:?} + {MARGIN:?} under a flood")
            })
            .unwrap();
        assert!(took >= limit, "{kind:?}: stopped early, {took:?}");
        assert_eq!(peer.accepted(), 1, "{kind:?}");
        assert!(r.codes.is_empty(), "{kind:?}: {:?}", r.codes);
        assert_eq!(r.connections, 1, "{kind:?}");
        assert_eq!(r.result.clients.len(), 1);
        let c = &r.result.clients[0];
        assert_eq!((c.completed, c.failed), (0, 0), "{kind:?}");
        assert!(c.fct.is_none(), "{kind:?}: unfinished, no FCT");
        assert!(
            r.result.duration >= limit.as_secs_f64()
                && r.result.duration < (limit + MARGIN).as_secs_f64(),
            "{kind:?}: {}",
            r.result.duration
        );
    }
}

#[test]
fn one_exchange_fails_at_its_limit_while_the_peer_floods_foreign_tokens() {
    let peer = FloodPeer::start();
    let limit = Duration::from_secs(2);
    let (r, took) = bounded(limit + MARGIN, async {
        let mut c = TcpClient::connect(peer.addr, &SocketOptions::default(), Csm::default(), 4)
            .await
            .unwrap();
        let until = tokio::time::Instant::now() + limit;
        c.wait_csm(until).await.unwrap();
        c.exchange(Code::GET, "sense", &[], limit).await
    });
    let r = r.unwrap_or_else(|| panic!("the exchange ran past {limit:?} + {MARGIN:?}"));
    let e = r
        .expect_err("no response to our token ever came")
        .to_string();
    assert!(took >= limit, "{took:?}");
    assert!(e.contains("no answer from"), "{e}");
}

#[test]
fn load_stops_at_its_time_limit_against_a_fast_server() {
    let h = server::spawn(
        "127.0.0.1:0".parse().unwrap(),
        TcpServerOptions::default(),
        Arc::new(Mutex::new(Resources::standard())),
    )
    .unwrap();
    let limit = Duration::from_secs(1);
    let spec = TcpLoadSpec {
        target: h.addr(),
        path: "sense".into(),
        clients: 2,
        workload: Workload {
            kind: WorkloadKind::Continuous,
            exchanges: u32::MAX,
            batch: [1, 10],
            ..Default::default()
        },
        token_len: 0,
        seed: 7,
        time_limit: limit,
        socket: SocketOptions {
            nodelay: true,
            ..SocketOptions::default()
        },
        bind: vec![],
    };
    let (r, _) = bounded(limit + MARGIN, load::run(&spec));
    let r = r
        .unwrap_or_else(|| panic!("load ran past {limit:?} + {MARGIN:?}"))
        .unwrap();
    let snap = h.stop();
    let completed: u64 = r
        .result
        .clients
        .iter()
        .map(|c| u64::from(c.completed))
        .sum();
    assert!(completed > 0);
    assert_eq!(r.codes.get(&Code::CONTENT), Some(&completed));
    assert!(snap.requests >= completed);
    for c in &r.result.clients {
        assert!(c.fct.is_none(), "u32::MAX exchanges cannot finish");
        assert!(c.failed <= 1, "only the exchange in flight at the limit");
    }
}
