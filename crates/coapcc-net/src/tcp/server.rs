//! `coapcc server`'s coap+tcp listener (RFC 8323): every accepted
//! connection gets the server's CSM at once (Max-Message-Size), Pings are
//! answered with Pongs, a Release closes the connection, malformed input is
//! answered with Abort (7.05) and a close; requests are answered from the
//! same [`Resources`] as over UDP.
//!
//! Bounds (docs/security.md): at most [`TcpServerOptions::max_connections`]
//! connections at once (a connection over the limit is accepted and closed at
//! once, without a CSM, and counted as refused; the established ones keep
//! their place); a connection with no byte received for
//! [`TcpServerOptions::idle_timeout`] is closed; frames larger than our
//! Max-Message-Size are refused with Abort; per-connection buffers are bounded
//! as [`super::connection`] says. Amplification limits do not apply: the
//! three-way handshake proves the client receives at its address before any
//! CoAP byte is answered.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result};
use coapcc_proto::tcp::{self, ConnEvent, Csm, FrameView, Role};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinSet;

use super::connection::Driver;
use crate::resources::Resources;

/// CoAP option number of Uri-Path (RFC 7252 §5.10).
const URI_PATH: u16 = 11;

/// How the TCP side of the server is set up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TcpServerOptions {
    /// Most connections open at once.
    pub max_connections: usize,
    /// Close a connection that received nothing for this long.
    pub idle_timeout: Duration,
    /// The Max-Message-Size our CSM states and the decoder enforces.
    pub max_message_size: u32,
    /// Turn Nagle's algorithm off on accepted connections (on by default,
    /// as the evaluations ran).
    pub nodelay: bool,
    /// The kernel's congestion control for accepted connections (`None`:
    /// the system default).
    pub congestion: Option<String>,
}

impl Default for TcpServerOptions {
    /// 1024 connections, 300 s idle timeout, Max-Message-Size 1152 (RFC
    /// 8323's base value).
    fn default() -> Self {
        TcpServerOptions {
            max_connections: 1024,
            idle_timeout: Duration::from_secs(300),
            max_message_size: tcp::signal::BASE_MAX_MESSAGE_SIZE,
            nodelay: false,
            congestion: None,
        }
    }
}

/// What the TCP server has done so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpSnapshot {
    /// Connections accepted and served.
    pub accepted: u64,
    /// Connections over the limit, closed at once.
    pub refused: u64,
    /// Connections open now.
    pub open: usize,
    /// The most open at once.
    pub max_open: usize,
    /// Requests answered.
    pub requests: u64,
    /// Pings answered with a Pong.
    pub pings: u64,
    /// Connections the peer released (Release received).
    pub released: u64,
    /// Connections we aborted (malformed input, no CSM first, frame too
    /// large, bad CSM option).
    pub aborted: u64,
    /// Of those, for a frame larger than our Max-Message-Size.
    pub too_large: u64,
    /// Connections the peer aborted.
    pub peer_aborted: u64,
    /// Connections closed for idleness.
    pub idle_closed: u64,
    /// Largest output queued on one connection (bytes).
    pub max_output: u64,
}

/// Shared counters of a running TCP server.
#[derive(Debug, Default)]
pub struct TcpMonitor {
    accepted: AtomicU64,
    refused: AtomicU64,
    open: AtomicUsize,
    max_open: AtomicUsize,
    requests: AtomicU64,
    pings: AtomicU64,
    released: AtomicU64,
    aborted: AtomicU64,
    too_large: AtomicU64,
    peer_aborted: AtomicU64,
    idle_closed: AtomicU64,
    max_output: AtomicU64,
}

impl TcpMonitor {
    /// The counters now.
    pub fn snapshot(&self) -> TcpSnapshot {
        let l = |a: &AtomicU64| a.load(Ordering::Relaxed);
        TcpSnapshot {
            accepted: l(&self.accepted),
            refused: l(&self.refused),
            open: self.open.load(Ordering::Relaxed),
            max_open: self.max_open.load(Ordering::Relaxed),
            requests: l(&self.requests),
            pings: l(&self.pings),
            released: l(&self.released),
            aborted: l(&self.aborted),
            too_large: l(&self.too_large),
            peer_aborted: l(&self.peer_aborted),
            idle_closed: l(&self.idle_closed),
            max_output: l(&self.max_output),
        }
    }

    fn add(a: &AtomicU64) {
        a.fetch_add(1, Ordering::Relaxed);
    }
}

/// Answers a request frame from `resources`.
fn answer(resources: &Mutex<Resources>, req: &FrameView<'_>, resp: &mut tcp::Response) {
    let segments = || {
        req.options()
            .filter(|(n, _)| *n == URI_PATH)
            .map(|(_, v)| v)
    };
    resources.lock().expect("resources lock").answer(
        req.code,
        segments,
        req.payload,
        &mut resp.code,
        &mut resp.options,
        &mut resp.payload,
    );
}

/// Serves one accepted connection until it ends.
async fn serve_connection(
    stream: TcpStream,
    opts: TcpServerOptions,
    resources: Arc<Mutex<Resources>>,
    monitor: Arc<TcpMonitor>,
) {
    let csm = Csm {
        max_message_size: opts.max_message_size,
        block_wise: false,
    };
    // Checked at start-up ([`spawn`]); a failure here leaves the defaults.
    let _ = super::socket::apply_accepted(&stream, opts.nodelay, opts.congestion.as_deref());
    let mut d = Driver::new(stream, Role::Responder, csm);
    let mut handler = |req: &FrameView<'_>, resp: &mut tcp::Response| answer(&resources, req, resp);
    // RFC 8323 §5.3: the CSM is our first message, sent on accept.
    let mut ok = d.flush().await.is_ok();
    let mut release = false;
    while ok {
        match tokio::time::timeout(opts.idle_timeout, d.read_once(&mut handler)).await {
            Err(_) => {
                TcpMonitor::add(&monitor.idle_closed);
                break;
            }
            Ok(Err(_)) | Ok(Ok(0)) => ok = false,
            Ok(Ok(_)) => {}
        }
        while let Some(e) = d.poll_event() {
            match e {
                ConnEvent::RequestServed { .. } => TcpMonitor::add(&monitor.requests),
                ConnEvent::PingAnswered(_) => TcpMonitor::add(&monitor.pings),
                ConnEvent::PeerReleased => {
                    TcpMonitor::add(&monitor.released);
                    release = true;
                }
                ConnEvent::PeerAborted => {
                    TcpMonitor::add(&monitor.peer_aborted);
                    ok = false;
                }
                ConnEvent::Aborted(cause) => {
                    TcpMonitor::add(&monitor.aborted);
                    if cause == tcp::AbortCause::Malformed(tcp::FrameError::TooLarge) {
                        TcpMonitor::add(&monitor.too_large);
                    }
                    ok = false;
                }
                _ => {}
            }
        }
        if release {
            break;
        }
    }
    monitor
        .max_output
        .fetch_max(d.max_output as u64, Ordering::Relaxed);
    // FIN after anything queued (an Abort included), then a short wait for
    // the peer's FIN.
    d.close(Duration::from_secs(1)).await;
    monitor.open.fetch_sub(1, Ordering::Relaxed);
}

/// Accepts on `listener` until `stop` completes; then closes every
/// connection and returns the final counters.
pub async fn serve(
    listener: TcpListener,
    opts: TcpServerOptions,
    resources: Arc<Mutex<Resources>>,
    monitor: Arc<TcpMonitor>,
    stop: impl Future<Output = ()>,
) -> TcpSnapshot {
    let mut tasks = JoinSet::new();
    tokio::pin!(stop);
    loop {
        let stream = tokio::select! {
            r = listener.accept() => match r {
                Ok((s, _)) => s,
                // e.g. EMFILE: wait a little rather than spin
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            },
            Some(_) = tasks.join_next(), if !tasks.is_empty() => continue,
            _ = &mut stop => break,
        };
        if monitor.open.load(Ordering::Relaxed) >= opts.max_connections {
            TcpMonitor::add(&monitor.refused);
            drop(stream);
            continue;
        }
        TcpMonitor::add(&monitor.accepted);
        let open = monitor.open.fetch_add(1, Ordering::Relaxed) + 1;
        monitor.max_open.fetch_max(open, Ordering::Relaxed);
        tasks.spawn(serve_connection(
            stream,
            opts.clone(),
            resources.clone(),
            monitor.clone(),
        ));
    }
    tasks.shutdown().await;
    monitor.open.store(0, Ordering::Relaxed);
    monitor.snapshot()
}

/// A TCP server running on its own thread.
pub struct TcpServerHandle {
    addr: SocketAddr,
    monitor: Arc<TcpMonitor>,
    stop: watch::Sender<bool>,
    thread: Option<std::thread::JoinHandle<TcpSnapshot>>,
}

/// Binds `addr` (TCP) and serves on a thread of its own until the handle is
/// stopped (or dropped).
pub fn spawn(
    addr: SocketAddr,
    opts: TcpServerOptions,
    resources: Arc<Mutex<Resources>>,
) -> Result<TcpServerHandle> {
    if opts.nodelay || opts.congestion.is_some() {
        // a refused congestion-control name fails here, not per connection
        let probe = super::socket::SocketOptions {
            nodelay: opts.nodelay,
            congestion: opts.congestion.clone(),
            bind: None,
        };
        super::socket::check(addr, &probe)?;
    }
    let listener = std::net::TcpListener::bind(addr)
        .with_context(|| format!("cannot listen on {addr} (TCP)"))?;
    listener.set_nonblocking(true)?;
    let addr = listener.local_addr()?;
    let monitor = Arc::new(TcpMonitor::default());
    let (stop, mut rx) = watch::channel(false);
    let m = monitor.clone();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let thread = std::thread::Builder::new()
        .name("coapcc-tcp-server".into())
        .spawn(move || {
            runtime.block_on(async move {
                let listener = TcpListener::from_std(listener).expect("a tokio runtime");
                serve(listener, opts, resources, m, async move {
                    let _ = rx.wait_for(|s| *s).await;
                })
                .await
            })
        })?;
    Ok(TcpServerHandle {
        addr,
        monitor,
        stop,
        thread: Some(thread),
    })
}

impl TcpServerHandle {
    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The counters now.
    pub fn snapshot(&self) -> TcpSnapshot {
        self.monitor.snapshot()
    }

    /// Stops the server (closing every connection) and returns its final
    /// counters.
    pub fn stop(mut self) -> TcpSnapshot {
        self.shutdown()
    }

    fn shutdown(&mut self) -> TcpSnapshot {
        let _ = self.stop.send(true);
        match self.thread.take() {
            Some(t) => t.join().unwrap_or_default(),
            None => self.monitor.snapshot(),
        }
    }
}

impl Drop for TcpServerHandle {
    fn drop(&mut self) {
        self.shutdown();
    }
}
