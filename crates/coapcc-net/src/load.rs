//! A load generator: N concurrent CoAP clients, each on its own UDP socket
//! (so the server sees N endpoints, as the testbed's devices), running the
//! testbed's workloads (`docs/spec/testbed-spec.md` §2) with any registered algorithm
//! against any CoAP server, and recording the testbed's per-client metrics
//! (§3) into the simulator's own [`RunResult`] so that the summary and its
//! printing are those of `coapcc run`.
//!
//! - Continuous: the next request leaves as soon as the previous exchange
//!   ends; algorithm state is kept throughout.
//! - Random: batches of uniformly random size; at each batch start the
//!   client's algorithm state toward the server is reset (a new short-lived
//!   device).
//!
//! With [`LoadSpec::nstart`] K above 1 (RFC 7252 §4.7's NSTART), each
//! client keeps up to K exchanges outstanding: it starts K at once and the
//! next one whenever one ends, all timed by its one algorithm instance.
//! [`LoadReport::max_outstanding`] shows how many were in flight at once.
//!
//! What only the network can see (bottleneck bytes, drops, unnecessary
//! copies' share) is not in the load generator's result; `coapcc emulate`
//! reports it for traffic that crosses it.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

use anyhow::{bail, Result};
use coapcc_link::rng::{derive, SimRng, Stream};
use coapcc_link::time::to_secs;
use coapcc_proto::client::{ClientEvent, Request};
use coapcc_proto::message::Code;
use coapcc_proto::Nanos;
use coapcc_workload::{AlgorithmSpec, Workload, WorkloadKind};
use coapcc_workload::{ClientRecord, RunResult};
use tokio::time::Instant;

use crate::client::{ClientOptions, Happening, NetClient};
use crate::clock::Clock;

/// What to run.
#[derive(Clone, Debug)]
pub struct LoadSpec {
    /// The server.
    pub target: SocketAddr,
    /// Uri-Path of every request (GET).
    pub path: String,
    /// Concurrent clients.
    pub clients: u32,
    /// Their workload.
    pub workload: Workload,
    /// Their algorithm.
    pub algorithm: AlgorithmSpec,
    /// MAX_RETRANSMIT.
    pub max_retransmit: u8,
    /// Token length (0, as in the testbed, keeps packet sizes equal to it).
    /// With [`LoadSpec::nstart`] above 1 a client's exchanges are told apart
    /// by Message ID for piggybacked responses, so 0 still works.
    pub token_len: u8,
    /// NSTART: exchanges each client keeps outstanding (1 to [`MAX_NSTART`]).
    pub nstart: usize,
    /// Seed of the clients' random streams.
    pub seed: u64,
    /// Wall-time bound; clients not finished by then have no FCT.
    pub time_limit: Duration,
}

/// The largest [`LoadSpec::nstart`].
pub const MAX_NSTART: usize = 16;

/// Local address for a client socket reaching `target`.
fn local_for(target: SocketAddr) -> SocketAddr {
    match target.ip() {
        IpAddr::V4(a) if a.is_loopback() => (Ipv4Addr::LOCALHOST, 0).into(),
        IpAddr::V4(_) => (Ipv4Addr::UNSPECIFIED, 0).into(),
        IpAddr::V6(a) if a.is_loopback() => (Ipv6Addr::LOCALHOST, 0).into(),
        IpAddr::V6(_) => (Ipv6Addr::UNSPECIFIED, 0).into(),
    }
}

/// The state of one load client between steps.
struct Progress {
    started: Option<Nanos>,
    /// Exchanges ended since the last look.
    ended: u32,
    /// Exchanges sent and not yet ended.
    in_flight: usize,
    /// The most at once.
    max_in_flight: usize,
    record: ClientRecord,
    histogram: Vec<u64>,
    codes: ResponseCodes,
    echo_retries: u64,
}

/// Responses received, by code.
pub type ResponseCodes = BTreeMap<Code, u64>;

/// What a load over UDP measured.
#[derive(Clone, Debug, Default)]
pub struct LoadReport {
    /// Per-client records, as the simulator's.
    pub result: RunResult,
    /// Final responses received, by code.
    pub codes: ResponseCodes,
    /// Requests sent again with an Echo option after a 4.01 (RFC 9175
    /// §2.4: the server's amplification bound challenged the client's
    /// address); the 4.01s that asked for them are not among `codes`.
    pub echo_retries: u64,
    /// The most exchanges one client had in flight at once (sent and not
    /// yet answered or abandoned): at most [`LoadSpec::nstart`].
    pub max_outstanding: usize,
}

/// Whether `code` is an error response (4.xx or 5.xx).
pub fn is_error(code: Code) -> bool {
    code.0 >> 5 >= 4
}

impl Progress {
    fn end(&mut self) {
        self.ended += 1;
        self.in_flight = self.in_flight.saturating_sub(1);
    }

    fn see(&mut self, h: Happening<'_>) {
        match h {
            Happening::Sent { at, transmit } => {
                if transmit.exchange.is_some() {
                    self.started.get_or_insert(at);
                    if transmit.ordinal > 0 {
                        self.record.retransmissions += 1;
                    } else {
                        self.in_flight += 1;
                        self.max_in_flight = self.max_in_flight.max(self.in_flight);
                    }
                }
            }
            Happening::Event { event, .. } => match event {
                ClientEvent::Response {
                    retransmissions,
                    elapsed,
                    code,
                    ..
                } => {
                    *self.codes.entry(code).or_default() += 1;
                    self.record.completed += 1;
                    self.record.rtt_sum += to_secs(elapsed);
                    let n = retransmissions as usize;
                    if self.histogram.len() <= n {
                        self.histogram.resize(n + 1, 0);
                    }
                    self.histogram[n] += 1;
                    self.end();
                }
                ClientEvent::Failed { .. } => {
                    self.record.failed += 1;
                    self.end();
                }
                ClientEvent::TimerExpired { timer, .. } => {
                    self.record.expirations += 1;
                    self.record.max_expired_timer = self.record.max_expired_timer.max(timer);
                }
                ClientEvent::DuplicateResponse { .. } => self.record.unnecessary += 1,
                ClientEvent::MismatchedResponse { .. } => self.record.mismatched_responses += 1,
                ClientEvent::EchoRetry { .. } => {
                    // sent again as a new first transmission
                    self.in_flight = self.in_flight.saturating_sub(1);
                    self.echo_retries += 1;
                }
                ClientEvent::TimerArmed { .. } => {}
            },
        }
    }
}

/// What one load client measured.
struct ClientOutcome {
    record: ClientRecord,
    histogram: Vec<u64>,
    codes: ResponseCodes,
    echo_retries: u64,
    max_in_flight: usize,
}

/// Runs client `index` of `spec` until its workload is done or `until`.
async fn one_client(
    spec: &LoadSpec,
    index: u32,
    local: SocketAddr,
    clock: Clock,
    until: Instant,
) -> Result<ClientOutcome> {
    let seed = derive(spec.seed, Stream::Client, u64::from(index));
    let mut rng = SimRng::new(seed);
    let opts = ClientOptions {
        algorithm: spec.algorithm.clone(),
        max_retransmit: spec.max_retransmit,
        nstart: spec.nstart,
        token_len: spec.token_len,
        seed: rng.next_u64(),
        keep_payload: false,
    };
    let mut c = NetClient::bind(local, &opts, clock)
        .await
        .map_err(|e| anyhow::anyhow!("cannot bind a UDP socket to {local}: {e}"))?;
    let mut p = Progress {
        started: None,
        ended: 0,
        in_flight: 0,
        max_in_flight: 0,
        record: ClientRecord::default(),
        histogram: Vec::new(),
        codes: ResponseCodes::new(),
        echo_retries: 0,
    };
    let mut remaining = spec.workload.exchanges;
    let mut batch_left = 0u32;
    let req = Request {
        method: Code::GET,
        path: &spec.path,
        payload: &[],
        confirmable: true,
    };
    // Starts the next exchange; `false` when it opens a new batch while
    // exchanges of the last one are still outstanding (a new device starts
    // once the old one is done).
    let mut start_next =
        |c: &mut NetClient, remaining: &mut u32, outstanding: usize| -> Result<bool> {
            if spec.workload.kind == WorkloadKind::Random && batch_left == 0 {
                if outstanding > 0 {
                    return Ok(false);
                }
                c.coap_mut().reset_peer(spec.target);
                let [lo, hi] = spec.workload.batch;
                batch_left = rng.int_in(lo, hi).min(*remaining);
            }
            *remaining -= 1;
            batch_left = batch_left.saturating_sub(1);
            c.start(spec.target, &req)?;
            Ok(true)
        };
    let mut outstanding = 0usize;
    while outstanding < spec.nstart
        && remaining > 0
        && start_next(&mut c, &mut remaining, outstanding)?
    {
        outstanding += 1;
    }
    loop {
        c.step(until, &mut |h| p.see(h)).await;
        let ended = std::mem::take(&mut p.ended) as usize;
        outstanding = outstanding.saturating_sub(ended);
        if ended > 0 && remaining == 0 && outstanding == 0 {
            let now = clock.now();
            p.record.fct = Some(to_secs(now - p.started.unwrap_or(now)));
            break;
        }
        // By the clock on every step, whatever arrived: neither a server
        // answering at once nor a peer flooding datagrams that end nothing
        // keeps the client past its deadline.
        if Instant::now() >= until {
            break;
        }
        while outstanding < spec.nstart
            && remaining > 0
            && start_next(&mut c, &mut remaining, outstanding)?
        {
            outstanding += 1;
        }
    }
    p.record.spurious_detected = c
        .coap()
        .algorithm(spec.target)
        .map_or(0, |a| a.spurious_detected() as u32);
    Ok(ClientOutcome {
        record: p.record,
        histogram: p.histogram,
        codes: p.codes,
        echo_retries: p.echo_retries,
        max_in_flight: p.max_in_flight,
    })
}

/// Runs `spec` on the current tokio runtime.
pub async fn run(spec: &LoadSpec) -> Result<RunResult> {
    Ok(run_counting(spec).await?.0)
}

/// Runs `spec` on the current tokio runtime; also returns the responses
/// received, by code.
pub async fn run_counting(spec: &LoadSpec) -> Result<(RunResult, ResponseCodes)> {
    let r = run_bound(spec, &[]).await?;
    Ok((r.result, r.codes))
}

/// Runs `spec` with client `i`'s socket bound to `bind[i % len]` (port
/// chosen by the kernel; an empty list: loopback for a loopback target, the
/// unspecified address otherwise).
pub async fn run_bound(spec: &LoadSpec, bind: &[IpAddr]) -> Result<LoadReport> {
    if spec.clients == 0 || spec.workload.exchanges == 0 {
        bail!("load: expected at least one client and one exchange");
    }
    if !(1..=MAX_NSTART).contains(&spec.nstart) {
        bail!(
            "nstart: expected 1 to {MAX_NSTART} exchanges outstanding per client, found {}",
            spec.nstart
        );
    }
    if spec.workload.kind == WorkloadKind::Random {
        let [lo, hi] = spec.workload.batch;
        if lo == 0 || hi < lo {
            bail!("load: batch sizes must be lo..hi with 1 <= lo <= hi");
        }
    }
    crate::client::factory(&spec.algorithm)?;
    let clock = Clock::start();
    let until = Instant::now() + spec.time_limit;
    let mut tasks = Vec::new();
    for i in 0..spec.clients {
        let spec = spec.clone();
        let local = match bind {
            [] => local_for(spec.target),
            _ => SocketAddr::new(bind[i as usize % bind.len()], 0),
        };
        tasks.push(tokio::spawn(async move {
            one_client(&spec, i, local, clock, until).await
        }));
    }
    let mut result = RunResult {
        histograms: vec![Vec::new()],
        ..RunResult::default()
    };
    let mut codes = ResponseCodes::new();
    let mut echo_retries = 0;
    let mut max_outstanding = 0;
    for t in tasks {
        let ClientOutcome {
            record,
            histogram: hist,
            codes: c,
            echo_retries: echoes,
            max_in_flight,
        } = match t.await {
            Ok(outcome) => outcome?,
            // A client's panic, an algorithm's fault among them
            // (`coapcc_rto::fault`), goes on unwinding with what it carries.
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            Err(e) => return Err(e.into()),
        };
        echo_retries += echoes;
        max_outstanding = max_outstanding.max(max_in_flight);
        for (code, n) in c {
            *codes.entry(code).or_default() += n;
        }
        let h = &mut result.histograms[0];
        if h.len() < hist.len() {
            h.resize(hist.len(), 0);
        }
        for (a, b) in h.iter_mut().zip(hist) {
            *a += b;
        }
        result.clients.push(record);
    }
    result.duration = to_secs(clock.now());
    Ok(LoadReport {
        result,
        codes,
        echo_retries,
        max_outstanding,
    })
}

/// Runs `spec` on a runtime of its own.
pub fn run_blocking(spec: &LoadSpec) -> Result<RunResult> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(run(spec))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::flood::{bounded, UdpFlood, MARGIN};

    fn spec(target: SocketAddr, exchanges: u32, time_limit: Duration) -> LoadSpec {
        LoadSpec {
            target,
            path: "sense".into(),
            clients: 1,
            workload: Workload {
                kind: WorkloadKind::Continuous,
                exchanges,
                ..Workload::default()
            },
            algorithm: AlgorithmSpec::named("default"),
            max_retransmit: 20,
            token_len: 0,
            nstart: 1,
            seed: 3,
            time_limit,
        }
    }

    /// NSTART 4 against coapcc's own server on loopback: each client
    /// sends four requests before the first answer, and every exchange
    /// completes; NSTART out of range is refused.
    #[test]
    fn nstart_keeps_several_exchanges_outstanding() {
        use crate::resources::Resources;
        use crate::server::{self, ServerOptions};
        let h = server::spawn(
            "127.0.0.1:0".parse().unwrap(),
            ServerOptions::default(),
            Resources::standard(),
        )
        .unwrap();
        for kind in [WorkloadKind::Continuous, WorkloadKind::Random] {
            let mut s = spec(h.addr(), 40, Duration::from_secs(10));
            s.clients = 2;
            s.nstart = 4;
            s.workload.kind = kind;
            let (r, _) = bounded(Duration::from_secs(10) + MARGIN, run_bound(&s, &[]));
            let r = r.expect("within the limit").unwrap();
            assert!(r.max_outstanding > 1, "{kind:?}: {}", r.max_outstanding);
            assert!(r.max_outstanding <= 4, "{kind:?}: {}", r.max_outstanding);
            for c in &r.result.clients {
                assert_eq!((c.completed, c.failed), (40, 0), "{kind:?}");
                assert!(c.fct.is_some());
            }
        }
        let one = spec(h.addr(), 5, Duration::from_secs(10));
        let (r, _) = bounded(Duration::from_secs(10) + MARGIN, run_bound(&one, &[]));
        assert_eq!(r.unwrap().unwrap().max_outstanding, 1);
        for k in [0, MAX_NSTART + 1] {
            let mut s = spec(h.addr(), 5, Duration::from_secs(1));
            s.nstart = k;
            let (r, _) = bounded(Duration::from_secs(5), run_bound(&s, &[]));
            let e = r.unwrap().unwrap_err().to_string();
            assert!(e.contains("nstart: expected 1 to 16"), "{e}");
        }
        h.stop();
    }

    #[test]
    fn load_stops_at_its_time_limit_while_the_peer_floods_foreign_tokens() {
        let peer = UdpFlood::start();
        let limit = Duration::from_secs(2);
        let spec = spec(peer.addr, 5, limit);
        let (r, took) = bounded(limit + MARGIN, run_bound(&spec, &[]));
        let r = r
            .unwrap_or_else(|| panic!("load ran past {limit:?} + {MARGIN:?} under a flood"))
            .unwrap();
        assert!(took >= limit, "{took:?}");
        assert!(peer.sent() > 100, "the peer flooded: {}", peer.sent());
        assert!(r.codes.is_empty(), "{:?}", r.codes);
        let c = &r.result.clients[0];
        assert_eq!((c.completed, c.failed), (0, 0));
        assert!(c.fct.is_none(), "unfinished: no FCT");
        assert!(
            r.result.duration >= 2.0 && r.result.duration < 5.0,
            "{}",
            r.result.duration
        );
    }

    /// Every exchange ends at once, so that no step waits for anything: the
    /// deadline still ends the run (before, only a step that ended no
    /// exchange looked at the clock, and u32::MAX exchanges ran on).
    #[test]
    fn load_stops_at_its_time_limit_against_a_server_that_answers_at_once() {
        use crate::resources::Resources;
        use crate::server::{self, ServerOptions};
        let h = server::spawn(
            "127.0.0.1:0".parse().unwrap(),
            ServerOptions::default(),
            Resources::standard(),
        )
        .unwrap();
        let limit = Duration::from_secs(1);
        let spec = spec(h.addr(), u32::MAX, limit);
        let (r, _) = bounded(limit + MARGIN, run_bound(&spec, &[]));
        let r = r
            .unwrap_or_else(|| panic!("load ran past {limit:?} + {MARGIN:?}"))
            .unwrap();
        let snap = h.stop();
        let c = &r.result.clients[0];
        assert!(c.completed > 0);
        assert!(c.fct.is_none(), "u32::MAX exchanges cannot finish");
        assert_eq!(r.codes.values().sum::<u64>(), u64::from(c.completed));
        assert!(snap.stats.requests >= u64::from(c.completed));
        assert!(
            r.result.duration >= 1.0 && r.result.duration < 4.0,
            "{}",
            r.result.duration
        );
    }
}
