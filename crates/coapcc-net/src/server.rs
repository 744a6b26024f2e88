//! A CoAP server on a real UDP socket: the sans-IO
//! [`coapcc_proto::server::Server`] (deduplication, piggybacked responses,
//! TC / Rexmit-Cnt echo — spec `docs/spec/algorithms-spec.md` §4, §6.6) driven by tokio,
//! answering from [`Resources`].
//!
//! One datagram at a time through fixed buffers: whatever arrives, the
//! server's memory is its deduplication cache (bounded by
//! [`ServerOptions::max_cache_entries`]) plus the resource table. Replies to
//! unverified sources are bounded to a multiple of the request's size
//! ([`ServerOptions::amplification`], [`crate::amplification`]).

use std::future::Future;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Result;
use coapcc_proto::message::MAX_MESSAGE_SIZE;
use coapcc_proto::server::{Server, ServerConfig, ServerOutput, ServerStats};
use tokio::net::UdpSocket;

use crate::amplification::{AmplificationLimit, Guard, Verdict};
use crate::clock::Clock;
use crate::resources::Resources;
use crate::RECV_BUFFER;

/// How the server is set up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerOptions {
    /// Echo TC / Rexmit-Cnt (off models a server without support).
    pub echo: bool,
    /// Most exchanges remembered for deduplication.
    pub max_cache_entries: usize,
    /// How long an exchange is remembered.
    pub exchange_lifetime: Duration,
    /// The bound on replies to unverified sources.
    pub amplification: AmplificationLimit,
}

impl Default for ServerOptions {
    /// Echo on; 16 384 remembered exchanges; RFC 7252's EXCHANGE_LIFETIME
    /// (247 s); replies to unverified sources at most 3 × the request.
    fn default() -> Self {
        ServerOptions {
            echo: true,
            max_cache_entries: 16_384,
            exchange_lifetime: Duration::from_nanos(ServerConfig::RFC_EXCHANGE_LIFETIME),
            amplification: AmplificationLimit::default(),
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

/// Serves on `socket` until `stop` completes; returns the final snapshot.
pub async fn serve(
    socket: UdpSocket,
    opts: &ServerOptions,
    resources: Resources,
    monitor: Arc<Monitor>,
    stop: impl Future<Output = ()>,
) -> Snapshot {
    let clock = Clock::start();
    let mut server: Server<SocketAddr, Resources> = Server::new(opts.config(), resources);
    // one byte more than any datagram served: a longer one is seen whole
    // as too long, never read cut short
    let mut rx = vec![0u8; RECV_BUFFER + 1];
    let mut tx = vec![0u8; MAX_MESSAGE_SIZE];
    let mut snap = Snapshot::default();
    let guard = Guard::new(opts.amplification);
    tokio::pin!(stop);
    loop {
        let (n, from) = tokio::select! {
            r = socket.recv_from(&mut rx) => match r {
                Ok(x) => x,
                // e.g. ICMP-reported errors: nothing to answer
                Err(_) => continue,
            },
            _ = &mut stop => break,
        };
        snap.datagrams += 1;
        if n > RECV_BUFFER {
            snap.oversized += 1;
            *monitor.0.lock().expect("monitor lock") = snap;
            continue;
        }
        let now = clock.now();
        server.handler_mut().set_peer(from);
        if let ServerOutput::Reply { len, .. } =
            server.handle_datagram(now, from, &rx[..n], &mut tx)
        {
            let len = match guard.check(from, &rx[..n], &mut tx, len, now / 1_000_000_000) {
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
        snap.stats = server.stats();
        snap.cached = server.cached();
        snap.max_cached = snap.max_cached.max(snap.cached);
        *monitor.0.lock().expect("monitor lock") = snap;
    }
    snap
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
    let (addr, task) =
        crate::background::spawn_on_udp(addr, "coapcc-server", move |socket, stop| async move {
            serve(socket, &opts, resources, m, async {
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
