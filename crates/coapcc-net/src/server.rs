//! A CoAP server on a real UDP socket: the sans-IO
//! [`coapcc_proto::server::Server`] (deduplication, piggybacked responses,
//! TC / Rexmit-Cnt echo — spec `docs/spec/algorithms-spec.md` §4, §6.6) driven by tokio,
//! answering from [`Resources`], and notifying the observers of its
//! observable resources ([`crate::observed`], RFC 7641).
//!
//! One datagram at a time through fixed buffers: whatever arrives, the
//! server's memory is its deduplication cache (bounded by
//! [`ServerOptions::max_cache_entries`]) plus the resource table. Replies to
//! unverified sources are bounded to a multiple of the request's size
//! ([`ServerOptions::amplification`], [`crate::amplification`]). Observers
//! are bounded per resource (4 per peer, 1024 in all).

use std::future::Future;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Result;
use coapcc_proto::message::{Code, MessageType, MessageView, MAX_MESSAGE_SIZE};
use coapcc_proto::server::{Handler, Response, Server, ServerConfig, ServerOutput, ServerStats};
use coapcc_proto::Nanos;
use coapcc_workload::AlgorithmSpec;
use tokio::net::UdpSocket;

use crate::amplification::{AmplificationLimit, Guard, Verdict};
use crate::clock::Clock;
use crate::observed::{ObserveStats, Observed};
use crate::resources::Resources;
use crate::RECV_BUFFER;

/// How the server is set up.
#[derive(Clone, Debug, PartialEq)]
pub struct ServerOptions {
    /// Echo TC / Rexmit-Cnt (off models a server without support).
    pub echo: bool,
    /// Most exchanges remembered for deduplication.
    pub max_cache_entries: usize,
    /// How long an exchange is remembered.
    pub exchange_lifetime: Duration,
    /// The bound on replies to unverified sources.
    pub amplification: AmplificationLimit,
    /// The algorithm timing the retransmissions of Confirmable
    /// notifications (one instance per observing peer).
    pub notify_algorithm: AlgorithmSpec,
}

impl Default for ServerOptions {
    /// Echo on; 16 384 remembered exchanges; RFC 7252's EXCHANGE_LIFETIME
    /// (247 s); replies to unverified sources at most 3 × the request;
    /// notifications timed by Default CoAP.
    fn default() -> Self {
        ServerOptions {
            echo: true,
            max_cache_entries: 16_384,
            exchange_lifetime: Duration::from_nanos(ServerConfig::RFC_EXCHANGE_LIFETIME),
            amplification: AmplificationLimit::default(),
            notify_algorithm: AlgorithmSpec::named("default"),
        }
    }
}

impl ServerOptions {
    fn config(&self) -> ServerConfig {
        ServerConfig {
            echo_options: self.echo,
            exchange_lifetime: self.exchange_lifetime.as_nanos() as u64,
            max_cache_entries: self.max_cache_entries.max(1),
            ..ServerConfig::default()
        }
    }
}

/// What the server has done so far, readable while it runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Snapshot {
    /// The endpoint's counters.
    pub stats: ServerStats,
    /// Datagrams received.
    pub datagrams: u64,
    /// Replies sent.
    pub replies: u64,
    /// Replies too large for an unverified source, replaced by a 4.01 with
    /// an Echo option.
    pub challenged: u64,
    /// Replies too large for an unverified source even as a 4.01: not sent.
    pub withheld: u64,
    /// Datagrams longer than [`RECV_BUFFER`] bytes: ignored, not read cut short.
    pub oversized: u64,
    /// Exchanges in the deduplication cache now.
    pub cached: usize,
    /// The most ever held in the cache.
    pub max_cached: usize,
    /// The observable resources' counters.
    pub observe: ObserveStats,
}

/// Shared view of a running server's [`Snapshot`].
#[derive(Debug, Default)]
pub struct Monitor(Mutex<Snapshot>);

impl Monitor {
    /// The latest snapshot.
    pub fn snapshot(&self) -> Snapshot {
        *self.0.lock().expect("monitor lock")
    }
}

/// The handler of the UDP server: the resource table, with GETs of the
/// observable resources answered by their subjects.
pub struct Served {
    resources: Resources,
    observed: Observed,
    now: Nanos,
    peer: SocketAddr,
}

impl Served {
    /// `resources` with a subject for each observable one, notifications
    /// timed by `opts`' algorithm (refused if unknown) on `clock`.
    pub fn new(resources: Resources, opts: &ServerOptions, clock: Clock) -> Result<Self> {
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64);
        let observed = Observed::new(resources.observables(), &opts.notify_algorithm, clock, seed)?;
        Ok(Served {
            resources,
            observed,
            now: 0,
            peer: SocketAddr::from(([0, 0, 0, 0], 0)),
        })
    }

    /// Names the source and time of the next request handled.
    fn set_request(&mut self, now: Nanos, peer: SocketAddr) {
        self.now = now;
        self.peer = peer;
        self.resources.set_peer(peer);
    }
}

impl Handler for Served {
    fn handle(&mut self, request: &MessageView<'_>, response: &mut Response) {
        if request.code == Code::GET {
            if let Some(i) = self.observed.find(request) {
                self.observed
                    .answer(i, self.now, self.peer, request, response);
                return;
            }
        }
        self.resources.handle(request, response);
    }

    fn recognizes(&self, number: u16) -> bool {
        self.resources.recognizes(number)
    }
}

/// Serves on `socket` until `stop` completes; returns the final snapshot.
pub async fn serve(
    socket: UdpSocket,
    opts: &ServerOptions,
    served: Served,
    monitor: Arc<Monitor>,
    stop: impl Future<Output = ()>,
) -> Snapshot {
    let clock = served.observed.clock();
    let mut server: Server<SocketAddr, Served> = Server::new(opts.config(), served);
    // one byte more than any datagram served: a longer one is seen whole
    // as too long, never read cut short
    let mut rx = vec![0u8; RECV_BUFFER + 1];
    let mut tx = vec![0u8; MAX_MESSAGE_SIZE];
    let mut snap = Snapshot::default();
    let guard = Guard::new(opts.amplification);
    tokio::pin!(stop);
    loop {
        let wake = server.handler().observed.poll_timeout();
        let timer = async {
            match wake {
                Some(t) => tokio::time::sleep_until(clock.instant(t)).await,
                None => std::future::pending().await,
            }
        };
        let received = tokio::select! {
            r = socket.recv_from(&mut rx) => match r {
                Ok(x) => Some(x),
                // e.g. ICMP-reported errors: nothing to answer
                Err(_) => continue,
            },
            _ = timer => None,
            _ = &mut stop => break,
        };
        let now = clock.now();
        if let Some((n, from)) = received {
            snap.datagrams += 1;
            if n > RECV_BUFFER {
                snap.oversized += 1;
            } else {
                answer(
                    &mut server,
                    &guard,
                    &socket,
                    &rx[..n],
                    &mut tx,
                    (now, from),
                    &mut snap,
                )
                .await;
            }
        } else {
            server.handler_mut().observed.handle_timeout(now);
        }
        while let Some(t) = server.handler_mut().observed.poll_transmit(&mut tx) {
            let _ = socket.send_to(&tx[..t.len], t.peer).await;
        }
        snap.stats = server.stats();
        snap.cached = server.cached();
        snap.max_cached = snap.max_cached.max(snap.cached);
        snap.observe = server.handler().observed.stats();
        *monitor.0.lock().expect("monitor lock") = snap;
    }
    snap
}

/// Handles one datagram `data` received from `from` at `now`: an Empty ACK
/// or RST answering a notification goes to the observable resources,
/// anything else to the server, whose reply goes out within the
/// amplification bound.
async fn answer(
    server: &mut Server<SocketAddr, Served>,
    guard: &Guard,
    socket: &UdpSocket,
    data: &[u8],
    tx: &mut [u8],
    (now, from): (Nanos, SocketAddr),
    snap: &mut Snapshot,
) {
    if let Ok(msg) = MessageView::decode(data) {
        if matches!(msg.mtype, MessageType::Ack | MessageType::Rst)
            && msg.code.is_empty()
            && server
                .handler_mut()
                .observed
                .handle_message(now, from, &msg)
        {
            return;
        }
    }
    server.handler_mut().set_request(now, from);
    let ServerOutput::Reply { len, .. } = server.handle_datagram(now, from, data, tx) else {
        return;
    };
    let len = match guard.check(from, data, tx, len, now / 1_000_000_000) {
        Verdict::Send(len) => Some(len),
        Verdict::Challenge(len) => {
            snap.challenged += 1;
            Some(len)
        }
        Verdict::Drop => {
            snap.withheld += 1;
            None
        }
    };
    if let Some(len) = len {
        if socket.send_to(&tx[..len], from).await.is_ok() {
            snap.replies += 1;
        }
    }
}

/// A server running on its own thread.
pub struct ServerHandle {
    addr: SocketAddr,
    monitor: Arc<Monitor>,
    task: crate::background::Background<Snapshot>,
}

/// Binds `addr` and serves on a thread of its own until the handle is
/// stopped (or dropped).
pub fn spawn(addr: SocketAddr, opts: ServerOptions, resources: Resources) -> Result<ServerHandle> {
    let monitor = Arc::new(Monitor::default());
    let m = monitor.clone();
    let served = Served::new(resources, &opts, Clock::start())?;
    let (addr, task) =
        crate::background::spawn_on_udp(addr, "coapcc-server", move |socket, stop| async move {
            serve(socket, &opts, served, m, async {
                let _ = stop.await;
            })
            .await
        })?;
    Ok(ServerHandle {
        addr,
        monitor,
        task,
    })
}

impl ServerHandle {
    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The latest snapshot.
    pub fn snapshot(&self) -> Snapshot {
        self.monitor.snapshot()
    }

    /// Stops the server and returns its final snapshot.
    pub fn stop(mut self) -> Snapshot {
        self.task.shutdown().unwrap_or_default()
    }
}
