//! `coapcc server`'s coap+tcp listener (RFC 8323): every accepted
//! connection gets the server's CSM at once (Max-Message-Size), Pings are
//! answered with Pongs, a Release closes the connection, malformed input is
//! answered with Abort (7.05) and a close; requests are answered from the
//! same [`Resources`] as over UDP. A request carrying Block1 or Block2 is
//! answered block-wise as over UDP (RFC 8323 §6; blocks of 16 to 1024
//! bytes, BERT is not offered: the CSM carries no Block-Wise-Transfer
//! option), an upload reassembled per connection; other requests get the
//! whole representation.
//!
//! Bounds (docs/security.md): at most [`TcpServerOptions::max_connections`]
//! connections at once (a connection over the limit gets our CSM and an
//! Abort saying "connection limit reached", written without waiting, then
//! FIN, and is counted as refused; the established ones keep their place); a
//! connection with no byte received for [`TcpServerOptions::idle_timeout`] is
//! closed; a frame must be complete [`TcpServerOptions::frame_timeout`] after
//! its first byte arrived, or the connection gets Abort and is closed (a
//! sender trickling bytes cannot hold a slot); a peer that takes none of our
//! bytes for [`TcpServerOptions::flush_timeout`] is reset, and a closing
//! connection's last bytes get the same deadline (see
//! [`Driver::close_within`]); frames larger than our Max-Message-Size are
//! refused with Abort; per-connection buffers are bounded as
//! [`super::connection`] says. Amplification limits do not apply: the
//! three-way handshake proves the client receives at its address before any
//! CoAP byte is answered.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result};
use coapcc_proto::message::option;
use coapcc_proto::tcp::{self, ConnEvent, Csm, FrameView, Role};
use tokio::io::AsyncReadExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinSet;
use tokio::time::Instant;

use super::connection::{after, Closed, Driver};
use crate::resources::Resources;

/// CoAP option number of Uri-Path (RFC 7252 §5.10).
const URI_PATH: u16 = 11;

/// How long a closing connection waits for the peer's FIN after ours.
const FIN_WAIT: Duration = Duration::from_secs(1);

/// The diagnostic of the Abort a connection over the limit gets.
pub const REFUSAL_DIAGNOSTIC: &str = "connection limit reached";

/// Most refused connections kept at once to read what their client still
/// sends after our Abort (beyond that, dropped at once).
pub const REFUSED_LINGER_MAX: usize = 64;

/// How long a refused connection is kept at most.
pub const REFUSED_LINGER: Duration = Duration::from_secs(1);

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
    /// A frame whose first byte arrived must be complete within this long,
    /// or the connection gets Abort and is closed.
    pub frame_timeout: Duration,
    /// A write that makes no progress for this long (the peer stopped
    /// reading) resets the connection; a closing connection's last bytes
    /// must be written within this long too.
    pub flush_timeout: Duration,
}

impl Default for TcpServerOptions {
    /// 1024 connections, 300 s idle timeout, Max-Message-Size 1152 (RFC
    /// 8323's base value), 30 s frame and flush timeouts (a 1152-byte frame
    /// needs a 300 bit/s link for that long; TCP itself retransmits a lost
    /// segment five times within 31 s).
    fn default() -> Self {
        TcpServerOptions {
            max_connections: 1024,
            idle_timeout: Duration::from_secs(300),
            max_message_size: tcp::signal::BASE_MAX_MESSAGE_SIZE,
            nodelay: false,
            congestion: None,
            frame_timeout: Duration::from_secs(30),
            flush_timeout: Duration::from_secs(30),
        }
    }
}

/// What the TCP server has done so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpSnapshot {
    /// Connections accepted and served.
    pub accepted: u64,
    /// Connections over the limit, given CSM and Abort and closed at once.
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
    /// Connections closed for idleness (nothing received for the idle
    /// timeout while nothing of ours was waiting to be written).
    pub idle_closed: u64,
    /// Connections closed (with Abort) because a frame begun did not
    /// complete within the frame timeout.
    pub frame_timeouts: u64,
    /// Connections reset because a write made no progress for the flush
    /// timeout (the peer stopped reading).
    pub write_stalled: u64,
    /// Connections we ended with a reset: those stalled, and those whose
    /// last bytes could not be written within the flush timeout at close.
    pub reset: u64,
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
    frame_timeouts: AtomicU64,
    write_stalled: AtomicU64,
    reset: AtomicU64,
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
            frame_timeouts: l(&self.frame_timeouts),
            write_stalled: l(&self.write_stalled),
            reset: l(&self.reset),
            max_output: l(&self.max_output),
        }
    }

    fn add(a: &AtomicU64) {
        a.fetch_add(1, Ordering::Relaxed);
    }
}

/// Answers a request frame from `peer` from `resources`.
fn answer(
    resources: &Mutex<Resources>,
    peer: SocketAddr,
    req: &FrameView<'_>,
    resp: &mut tcp::Response,
) {
    let segments = || {
        req.options()
            .filter(|(n, _)| *n == URI_PATH)
            .map(|(_, v)| v)
    };
    let block_wise = req
        .options()
        .any(|(n, _)| n == option::BLOCK1 || n == option::BLOCK2);
    let mut resources = resources.lock().expect("resources lock");
    if block_wise {
        resources.set_peer(peer);
        let mut r = coapcc_proto::server::Response::default();
        r.clear();
        resources.respond((req.code, segments, req.payload), req.options(), &mut r);
        r.options.sort_by_key(|(n, _)| *n);
        resp.code = r.code;
        resp.options = r.options;
        resp.payload = r.payload;
        return;
    }
    resources.answer(
        req.code,
        segments,
        req.payload,
        &mut resp.code,
        &mut resp.options,
        &mut resp.payload,
    );
}

/// Why the server ended a connection (each counted once).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum End {
    /// The peer closed or reset its side, or released the connection.
    Peer,
    /// An Abort, sent or received (counted from the events).
    Abort,
    /// Nothing received for the idle timeout.
    Idle,
    /// A frame begun and not complete within the frame timeout.
    FrameTimeout,
    /// A write made no progress for the flush timeout.
    WriteStalled,
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
    // Uploads are told apart by the connection's address.
    let peer = stream
        .peer_addr()
        .unwrap_or_else(|_| SocketAddr::from(([0, 0, 0, 0], 0)));
    let mut d = Driver::new(stream, Role::Responder, csm);
    d.set_write_timeout(Some(opts.flush_timeout));
    let mut handler =
        |req: &FrameView<'_>, resp: &mut tcp::Response| answer(&resources, peer, req, resp);
    // RFC 8323 §5.3: the CSM is our first message, sent on accept.
    let mut end = match d.flush().await {
        Ok(()) => None,
        Err(e) if e.kind() == io::ErrorKind::TimedOut => Some(End::WriteStalled),
        Err(_) => Some(End::Peer),
    };
    let mut last_input = Instant::now();
    // When the first byte of the frame not yet complete arrived.
    let mut frame_began: Option<Instant> = None;
    while end.is_none() {
        let idle_at = after(last_input, opts.idle_timeout);
        let (deadline, why) = match frame_began.map(|t| after(t, opts.frame_timeout)) {
            Some(frame_at) if frame_at < idle_at => (frame_at, End::FrameTimeout),
            _ => (idle_at, End::Idle),
        };
        let n = match tokio::time::timeout_at(deadline, d.read_raw()).await {
            Err(_) => {
                end = Some(why);
                break;
            }
            Ok(Err(_)) | Ok(Ok(0)) => {
                end = Some(End::Peer);
                break;
            }
            Ok(Ok(n)) => n,
        };
        last_input = Instant::now();
        let fed = d.feed(n, &mut handler).await;
        // Every frame decoded makes one event: any event means the bytes
        // still buffered (if any) belong to a frame begun in this read.
        let mut frames = false;
        while let Some(e) = d.poll_event() {
            frames = true;
            match e {
                ConnEvent::RequestServed { .. } => TcpMonitor::add(&monitor.requests),
                ConnEvent::PingAnswered(_) => TcpMonitor::add(&monitor.pings),
                ConnEvent::PeerReleased => {
                    TcpMonitor::add(&monitor.released);
                    end = Some(End::Peer);
                }
                ConnEvent::PeerAborted => {
                    TcpMonitor::add(&monitor.peer_aborted);
                    end = Some(End::Abort);
                }
                ConnEvent::Aborted(cause) => {
                    TcpMonitor::add(&monitor.aborted);
                    if cause == tcp::AbortCause::Malformed(tcp::FrameError::TooLarge) {
                        TcpMonitor::add(&monitor.too_large);
                    }
                    end = Some(End::Abort);
                }
                _ => {}
            }
        }
        match fed {
            Err(e) if e.kind() == io::ErrorKind::TimedOut => end = Some(End::WriteStalled),
            Err(_) => end = end.or(Some(End::Peer)),
            Ok(()) => {}
        }
        frame_began = match d.conn().buffered_input() {
            0 => None,
            _ if frames => Some(last_input),
            _ => frame_began.or(Some(last_input)),
        };
    }
    monitor
        .max_output
        .fetch_max(d.max_output as u64, Ordering::Relaxed);
    let closed = match end {
        Some(End::WriteStalled) => {
            // the peer has not taken a byte for the flush timeout already
            TcpMonitor::add(&monitor.write_stalled);
            d.reset()
        }
        Some(End::FrameTimeout) => {
            TcpMonitor::add(&monitor.frame_timeouts);
            let _ = d.conn().abort(&format!(
                "frame not complete within {:.1} s",
                opts.frame_timeout.as_secs_f64()
            ));
            d.close_within(opts.flush_timeout, FIN_WAIT).await
        }
        Some(End::Idle) => {
            TcpMonitor::add(&monitor.idle_closed);
            d.close_within(opts.flush_timeout, FIN_WAIT).await
        }
        // FIN after anything queued (an Abort included), then a short wait
        // for the peer's FIN.
        _ => d.close_within(opts.flush_timeout, FIN_WAIT).await,
    };
    if closed == Closed::Reset {
        TcpMonitor::add(&monitor.reset);
    }
    monitor.open.fetch_sub(1, Ordering::Relaxed);
}

/// The bytes a connection over the limit gets: our CSM, then Abort (7.05)
/// saying why (RFC 8323 §5.6).
fn refusal_bytes(opts: &TcpServerOptions) -> Vec<u8> {
    let mut b = [0u8; 96];
    let csm = Csm {
        max_message_size: opts.max_message_size,
        block_wise: false,
    };
    let n = csm.encode(&mut b).unwrap_or(0);
    let m = tcp::signal::encode_abort(&mut b[n..], None, REFUSAL_DIAGNOSTIC).unwrap_or(0);
    b[..n + m].to_vec()
}

/// Refuses a connection over the limit without ever waiting on it: what
/// already arrived is read (so that closing does not turn into a reset), the
/// CSM and Abort are written if the socket takes them at once (a fresh
/// socket's buffer always does), then FIN. Up to [`REFUSED_LINGER_MAX`]
/// refused sockets are kept for at most [`REFUSED_LINGER`] to read what the
/// client still sends, so that its CSM arriving late does not reset our
/// Abort away; beyond that they are dropped at once.
fn refuse(mut stream: TcpStream, bytes: &[u8], lingering: &mut JoinSet<()>) {
    use std::io::Read;
    // Plain system calls on the non-blocking socket: tokio's `try_*` would
    // answer WouldBlock until its reactor has seen the new socket ready.
    {
        let sock = socket2::SockRef::from(&stream);
        let mut sink = [0u8; 512];
        for _ in 0..8 {
            match (&*sock).read(&mut sink) {
                Ok(n) if n > 0 => {}
                _ => break,
            }
        }
        let _ = sock.send(bytes);
        let _ = sock.shutdown(std::net::Shutdown::Write);
    }
    if lingering.len() < REFUSED_LINGER_MAX {
        lingering.spawn(async move {
            let mut sink = [0u8; 512];
            let _ = tokio::time::timeout(REFUSED_LINGER, async {
                while let Ok(n) = stream.read(&mut sink).await {
                    if n == 0 {
                        break;
                    }
                }
            })
            .await;
        });
    }
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
    let mut lingering = JoinSet::new();
    let refusal = refusal_bytes(&opts);
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
            Some(_) = lingering.join_next(), if !lingering.is_empty() => continue,
            _ = &mut stop => break,
        };
        if monitor.open.load(Ordering::Relaxed) >= opts.max_connections {
            TcpMonitor::add(&monitor.refused);
            refuse(stream, &refusal, &mut lingering);
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
    lingering.shutdown().await;
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
