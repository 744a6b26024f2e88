//! The testbed's workloads (`docs/spec/testbed-spec.md` §2) over CoAP over TCP on kernel
//! sockets, timed exactly as the simulator's TCP clients are
//! (`docs/spec/transport-tcp-spec.md` §2, `coapcc_sim::dumbbell`, its `tcp.rs`):
//!
//! - **continuous**: one connection per client, opened and its CSM exchange
//!   done (our CSM written, the server's read) *before* a barrier common to
//!   all clients; when every client is ready (or has failed to connect),
//!   all start at once. A client's FCT runs from just before its first
//!   request is written, after the barrier, to the moment its last response
//!   is read.
//! - **random**: every batch (size uniform in LO..HI, drawn from the
//!   client's stream as the simulator draws it) opens a new connection,
//!   writes the CSM and the batch's first request at once (Nagle, when on,
//!   holds the request until the CSM is acknowledged) and closes the
//!   connection (FIN) after the batch's last response. The FCT runs from
//!   just before the first connect() (the first SYN) to the last response:
//!   handshakes and CSMs are inside it.
//!
//! One request is outstanding per connection; GET on the target's path with
//! the given token length (0 in the testbed). A connection that breaks
//! (reset, Abort, close) fails the exchange in flight; the client opens a
//! new connection for the rest, as the simulator's do. CoAP never
//! retransmits over TCP, so the result has no CoAP-level retransmissions or
//! duplicates: those are TCP's, below CoAP.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Result};
use coapcc_link::rng::{derive, SimRng, Stream};
use coapcc_link::time::to_secs;
use coapcc_proto::message::Code;
use coapcc_proto::tcp::Csm;
use coapcc_workload::tcp_metrics::TcpRecord;
use coapcc_workload::{ClientRecord, RunResult, Workload, WorkloadKind};
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

use super::client::TcpClient;
use super::socket::{self, SocketOptions};
use crate::clock::Clock;
use crate::load::ResponseCodes;

/// Pause after a connect() that failed at once (e.g. refused), before the
/// next attempt.
const RECONNECT_PAUSE: Duration = Duration::from_millis(100);

/// What to run.
#[derive(Clone, Debug)]
pub struct TcpLoadSpec {
    /// The server.
    pub target: SocketAddr,
    /// Uri-Path (and query) of every request (GET).
    pub path: String,
    /// Concurrent clients.
    pub clients: u32,
    /// Their workload.
    pub workload: Workload,
    /// Token length (0 as in the testbed).
    pub token_len: u8,
    /// Seed of the clients' random streams (batch sizes).
    pub seed: u64,
    /// Wall-time bound; clients not finished by then have no FCT.
    pub time_limit: Duration,
    /// Socket options of every client connection (its `bind` is ignored:
    /// see [`TcpLoadSpec::bind`]).
    pub socket: SocketOptions,
    /// Source addresses, given to clients round-robin (client i binds
    /// `bind[i % len]`); empty: the kernel chooses.
    pub bind: Vec<IpAddr>,
}

/// What a TCP load run measured.
#[derive(Clone, Debug, Default)]
pub struct TcpLoadResult {
    /// Per-client records, as the simulator's (each with its
    /// [`TcpRecord`]: connections opened, connections broken).
    pub result: RunResult,
    /// Responses received, by code.
    pub codes: ResponseCodes,
    /// Connections opened, all clients.
    pub connections: u64,
}

/// How one client's run ended.
struct ClientOut {
    record: ClientRecord,
    codes: ResponseCodes,
}

impl TcpLoadSpec {
    fn socket_for(&self, index: u32) -> SocketOptions {
        let mut s = self.socket.clone();
        s.bind = (!self.bind.is_empty()).then(|| self.bind[index as usize % self.bind.len()]);
        s
    }
}

/// Connects (retrying until `until` if the kernel gives up or refuses);
/// counts broken attempts in `tcp.aborted`.
async fn connect(
    spec: &TcpLoadSpec,
    sock: &SocketOptions,
    until: Instant,
    tcp: &mut TcpRecord,
) -> Option<TcpClient> {
    while Instant::now() < until {
        let attempt = TcpClient::connect(
            spec.target,
            sock,
            Csm::default(),
            usize::from(spec.token_len),
        );
        match tokio::time::timeout_at(until, attempt).await {
            Ok(Ok(c)) => {
                tcp.connections += 1;
                return Some(c);
            }
            Ok(Err(_)) => {
                tcp.aborted += 1;
                tokio::time::sleep_until((Instant::now() + RECONNECT_PAUSE).min(until)).await;
            }
            Err(_) => return None,
        }
    }
    None
}

/// Runs client `index` until its workload is done or `until`.
async fn one_client(
    spec: Arc<TcpLoadSpec>,
    index: u32,
    clock: Clock,
    until: Instant,
    ready: Option<mpsc::Sender<()>>,
    mut start: watch::Receiver<bool>,
) -> ClientOut {
    let mut rng = SimRng::new(derive(spec.seed, Stream::Client, u64::from(index)));
    let sock = spec.socket_for(index);
    let mut record = ClientRecord::default();
    let mut tcp = TcpRecord::default();
    let mut codes = ResponseCodes::new();
    let random = spec.workload.kind == WorkloadKind::Random;
    let mut conn: Option<TcpClient> = None;
    if let Some(ready) = ready {
        // Continuous: connect and exchange CSMs before the common barrier.
        conn = connect(&spec, &sock, until, &mut tcp).await;
        if let Some(c) = conn.as_mut() {
            if c.wait_csm(until).await.is_err() {
                tcp.aborted += 1;
                conn = None;
            }
        }
        let _ = ready.send(()).await;
        if tokio::time::timeout_at(until, start.wait_for(|s| *s))
            .await
            .is_err()
        {
            record.tcp = Some(Box::new(tcp));
            return ClientOut { record, codes };
        }
    }
    let started = clock.now();
    let mut remaining = spec.workload.exchanges;
    let mut batch_left = 0u32;
    let mut finished = true;
    while remaining > 0 {
        // By the clock, whatever the exchanges do: the deadline ends the run
        // even when every exchange succeeds at once.
        if Instant::now() >= until {
            finished = false;
            break;
        }
        if random && batch_left == 0 {
            if let Some(c) = conn.take() {
                c.shutdown().await;
            }
            let [lo, hi] = spec.workload.batch;
            batch_left = rng.int_in(lo, hi).min(remaining);
        }
        if conn.is_none() {
            conn = connect(&spec, &sock, until, &mut tcp).await;
        }
        let Some(c) = conn.as_mut() else {
            finished = false;
            break;
        };
        remaining -= 1;
        batch_left = batch_left.saturating_sub(1);
        let limit = until.saturating_duration_since(Instant::now());
        match c.exchange(Code::GET, &spec.path, &[], limit).await {
            Ok(r) => {
                record.completed += 1;
                record.rtt_sum += r.rtt.as_secs_f64();
                *codes.entry(r.code).or_default() += 1;
            }
            Err(_) if Instant::now() >= until => {
                finished = false;
                break;
            }
            Err(_) => {
                record.failed += 1;
                tcp.aborted += 1;
                conn = None;
            }
        }
    }
    if finished {
        let now = clock.now();
        record.fct = Some(to_secs(now.saturating_sub(started)));
    }
    if let Some(c) = conn {
        c.shutdown().await;
    }
    record.tcp = Some(Box::new(tcp));
    ClientOut { record, codes }
}

/// Runs `spec` on the current tokio runtime.
pub async fn run(spec: &TcpLoadSpec) -> Result<TcpLoadResult> {
    if spec.clients == 0 || spec.workload.exchanges == 0 {
        bail!("load: expected at least one client and one exchange");
    }
    if spec.workload.kind == WorkloadKind::Random {
        let [lo, hi] = spec.workload.batch;
        if lo == 0 || hi < lo {
            bail!("load: batch sizes must be lo..hi with 1 <= lo <= hi");
        }
    }
    // A refused congestion-control name or source address fails here, once.
    for i in 0..spec.bind.len().max(1) {
        socket::check(spec.target, &spec.socket_for(i as u32))?;
    }
    let spec = Arc::new(spec.clone());
    let clock = Clock::start();
    let until = Instant::now() + spec.time_limit;
    let continuous = spec.workload.kind == WorkloadKind::Continuous;
    let (ready_tx, mut ready_rx) = mpsc::channel::<()>(spec.clients as usize);
    let (start_tx, start_rx) = watch::channel(false);
    let mut tasks = Vec::new();
    for i in 0..spec.clients {
        let ready = continuous.then(|| ready_tx.clone());
        tasks.push(tokio::spawn(one_client(
            spec.clone(),
            i,
            clock,
            until,
            ready,
            start_rx.clone(),
        )));
    }
    drop(ready_tx);
    if continuous {
        // The barrier: every client connected with CSMs exchanged (or gave
        // up), or the time limit.
        let mut ready = 0;
        while ready < spec.clients {
            match tokio::time::timeout_at(until, ready_rx.recv()).await {
                Ok(Some(())) => ready += 1,
                _ => break,
            }
        }
    }
    let _ = start_tx.send(true);
    let mut out = TcpLoadResult {
        result: RunResult {
            histograms: vec![Vec::new()],
            ..RunResult::default()
        },
        ..TcpLoadResult::default()
    };
    for t in tasks {
        let c = t.await?;
        for (code, n) in c.codes {
            *out.codes.entry(code).or_default() += n;
        }
        // CoAP sends every request once over TCP: all at "0 retransmissions".
        let h = &mut out.result.histograms[0];
        if h.is_empty() {
            h.push(0);
        }
        h[0] += u64::from(c.record.completed);
        out.connections += c
            .record
            .tcp
            .as_ref()
            .map_or(0, |t| u64::from(t.connections));
        out.result.clients.push(c.record);
    }
    out.result.duration = to_secs(clock.now());
    Ok(out)
}
