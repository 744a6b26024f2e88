//! The `coapcc client | server | load | emulate` subcommands: argument
//! definitions (clap) and what each one runs. Each builds its own tokio
//! runtime, so the caller stays synchronous.

use std::io::{Read, Write};
use std::net::SocketAddr;
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use clap::{Args, ValueEnum};
use coapcc_net::tokio;
use coapcc_proto::client::Request;
use coapcc_proto::message::Code;
use coapcc_sim::config::{AlgorithmSpec, Buffer, Network, Workload, WorkloadKind};
use coapcc_sim::link_errors::ErrorProfile;
use coapcc_sim::metrics::{Percentiles, RunResult, Summary};

use coapcc_net::client::{ClientOptions, ExchangeReport, NetClient, Outcome};
use coapcc_net::clock::Clock;
use coapcc_net::emulate::{self, EmulatorOptions, EmulatorReport};
use coapcc_net::load::{self, LoadSpec};
use coapcc_net::resources::Resources;
use coapcc_net::server::{self, ServerOptions, Snapshot};
use coapcc_net::target;

/// A request method.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Method {
    /// GET.
    Get,
    /// PUT.
    Put,
    /// POST.
    Post,
    /// DELETE.
    Delete,
}

impl Method {
    fn code(self) -> Code {
        match self {
            Method::Get => Code::GET,
            Method::Put => Code::PUT,
            Method::Post => Code::POST,
            Method::Delete => Code::DELETE,
        }
    }
}

/// `coapcc client`.
#[derive(Args, Debug, Clone)]
pub struct ClientArgs {
    /// The resource: coap://host[:port]/path.
    pub uri: String,
    /// Request method.
    #[arg(short = 'm', long, value_enum, default_value = "get")]
    pub method: Method,
    /// Request payload; `-` reads it from standard input.
    #[arg(short = 'p', long, value_name = "TEXT|-")]
    pub payload: Option<String>,
    /// Retransmission-timeout algorithm (see `coapcc algorithms`).
    #[arg(
        long = "cc",
        alias = "algorithm",
        default_value = "default",
        value_name = "ALGORITHM"
    )]
    pub cc: String,
    /// Run this many exchanges back to back and print each one's RTT sample
    /// and the timers the algorithm chose.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub count: u32,
    /// Send Non-confirmable requests.
    #[arg(long)]
    pub non: bool,
    /// MAX_RETRANSMIT.
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub max_retransmit: u8,
    /// Token length in bytes (0–8).
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub token_len: u8,
    /// Give up on an exchange after this many seconds of wall time.
    #[arg(long, default_value_t = 300.0, value_name = "S")]
    pub timeout: f64,
    /// Seed of the client's random stream (timer dithering, tokens, Message IDs).
    #[arg(long, value_name = "S")]
    pub seed: Option<u64>,
}

/// `coapcc server`.
#[derive(Args, Debug, Clone)]
pub struct ServerArgs {
    /// Address to listen on.
    #[arg(long, default_value = "0.0.0.0:5683", value_name = "ADDR")]
    pub listen: SocketAddr,
    /// A resource: PATH=SIZE (GET returns SIZE bytes), PATH=text:STRING or
    /// PATH=store (GET/PUT/POST/DELETE). Repeatable; default: sense=60,
    /// large=1000, hello=text, store.
    #[arg(long = "resource", value_name = "SPEC")]
    pub resources: Vec<String>,
    /// Do not echo the TC / Rexmit-Cnt options (a server without support).
    #[arg(long)]
    pub no_echo: bool,
    /// Most exchanges remembered for deduplication.
    #[arg(long, default_value_t = 16_384, value_name = "N")]
    pub cache: usize,
    /// How long an exchange is remembered (s); RFC 7252 EXCHANGE_LIFETIME.
    #[arg(long, default_value_t = 247.0, value_name = "S")]
    pub lifetime: f64,
    /// Stop after this many seconds (default: run until interrupted).
    #[arg(long, value_name = "S")]
    pub duration: Option<f64>,
}

/// Output format of `coapcc load`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LoadFormat {
    /// The table of `coapcc run`.
    Table,
    /// One JSON document.
    Json,
}

/// `coapcc load`.
#[derive(Args, Debug, Clone)]
pub struct LoadArgs {
    /// The resource every client GETs: coap://host[:port]/path.
    pub uri: String,
    /// Concurrent clients (one UDP socket each).
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub clients: u32,
    /// Exchanges per client.
    #[arg(long, default_value_t = 50, value_name = "N")]
    pub exchanges: u32,
    /// Workload: continuous or random.
    #[arg(long, default_value = "continuous", value_name = "KIND")]
    pub workload: String,
    /// Batch sizes of random clients: LO-HI.
    #[arg(long, default_value = "1-10", value_name = "LO-HI")]
    pub batch: String,
    /// Algorithm (see `coapcc algorithms`).
    #[arg(
        long = "cc",
        alias = "algorithm",
        default_value = "default",
        value_name = "ALGORITHM"
    )]
    pub cc: String,
    /// MAX_RETRANSMIT (the evaluations used 20).
    #[arg(long, default_value_t = 20, value_name = "N")]
    pub max_retransmit: u8,
    /// Token length (0 as in the testbed).
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub token_len: u8,
    /// Seed of the clients' random streams.
    #[arg(long, default_value_t = 1, value_name = "S")]
    pub seed: u64,
    /// Stop after this many seconds of wall time; unfinished clients have no FCT.
    #[arg(long, default_value_t = 600.0, value_name = "S")]
    pub time_limit: f64,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: LoadFormat,
}

/// `coapcc emulate`.
#[derive(Args, Debug, Clone)]
pub struct EmulateArgs {
    /// Address clients send to.
    #[arg(long, default_value = "0.0.0.0:5684", value_name = "ADDR")]
    pub listen: SocketAddr,
    /// The CoAP server to relay to (host:port).
    #[arg(long, value_name = "HOST:PORT")]
    pub server: String,
    /// Uplink (client → server) rate, bit/s.
    #[arg(long, default_value_t = 60_000, value_name = "BPS")]
    pub uplink_bps: u64,
    /// Downlink (server → client) rate, bit/s.
    #[arg(long, default_value_t = 30_000, value_name = "BPS")]
    pub downlink_bps: u64,
    /// Uplink one-way propagation delay (ms).
    #[arg(long, default_value_t = 200.0, value_name = "MS")]
    pub uplink_delay_ms: f64,
    /// Downlink one-way propagation delay (ms).
    #[arg(long, default_value_t = 400.0, value_name = "MS")]
    pub downlink_delay_ms: f64,
    /// Router ↔ server one-way delay, uniform in LO,HI ms per packet.
    #[arg(long, default_value = "10,20", value_name = "LO,HI")]
    pub path_delay_ms: String,
    /// Router buffer per direction: bytes of waiting IP packets, or `inf`.
    #[arg(long, default_value = "inf", value_name = "BYTES|inf")]
    pub buffer: String,
    /// Link-error profile: none, low, medium or high.
    #[arg(long, default_value = "none", value_name = "PROFILE")]
    pub errors: String,
    /// Speed the link up F times: rates × F, delays ÷ F (link errors keep
    /// their time scale).
    #[arg(long, default_value_t = 1.0, value_name = "F")]
    pub scale: f64,
    /// Seed of the error processes and path jitter.
    #[arg(long, default_value_t = 1, value_name = "S")]
    pub seed: u64,
    /// Most client mappings at once.
    #[arg(long, default_value_t = 4096, value_name = "N")]
    pub max_clients: usize,
    /// Close a mapping unused for this many seconds.
    #[arg(long, default_value_t = 300.0, value_name = "S")]
    pub idle_timeout: f64,
    /// Stop after this many seconds (default: run until interrupted).
    #[arg(long, value_name = "S")]
    pub duration: Option<f64>,
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?)
}

fn seconds(name: &str, s: f64) -> Result<Duration> {
    if !(s.is_finite() && s > 0.0) {
        bail!("--{name}: expected a positive number of seconds, found {s}");
    }
    Ok(Duration::from_secs_f64(s))
}

/// Waits for `duration` if given, else for Ctrl-C.
async fn until_stopped(duration: Option<Duration>) {
    match duration {
        Some(d) => tokio::time::sleep(d).await,
        None => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

/// One line per exchange for `--count`.
fn exchange_line(i: u32, r: &ExchangeReport) -> String {
    let timers: Vec<String> = r.timers.iter().map(|t| format!("{t:.3}")).collect();
    let (what, echo) = match &r.outcome {
        Outcome::Response { code, echo, .. } => (
            code.to_string(),
            echo.map_or("-".to_string(), |e| e.to_string()),
        ),
        Outcome::Failed(reason) => (format!("failed ({reason:?})"), "-".to_string()),
    };
    format!(
        "{i:>6}  {what:<8} {:>10.3}  {:>7}  {echo:>4}  {}",
        r.elapsed as f64 / 1e6,
        r.retransmissions,
        timers.join(",")
    )
}

/// Runs `coapcc client`.
pub fn client(args: ClientArgs) -> Result<()> {
    let payload = match args.payload.as_deref() {
        None => Vec::new(),
        Some("-") => {
            let mut v = Vec::new();
            std::io::stdin()
                .read_to_end(&mut v)
                .context("cannot read the payload from standard input")?;
            v
        }
        Some(s) => s.as_bytes().to_vec(),
    };
    if args.count == 0 {
        bail!("--count: expected at least 1");
    }
    if args.token_len > 8 {
        bail!("--token-len: expected 0 to 8");
    }
    let limit = seconds("timeout", args.timeout)?;
    let opts = ClientOptions {
        algorithm: AlgorithmSpec::named(&args.cc),
        max_retransmit: args.max_retransmit,
        nstart: 1,
        token_len: args.token_len,
        seed: args.seed.unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
        }),
        keep_payload: true,
    };
    runtime()?.block_on(async move {
        let t = target::resolve(&args.uri).await?;
        let local: SocketAddr = if t.addr.is_ipv4() {
            "0.0.0.0:0".parse().expect("valid")
        } else {
            "[::]:0".parse().expect("valid")
        };
        let mut c = NetClient::bind(local, &opts, Clock::start()).await?;
        let req = Request {
            method: args.method.code(),
            path: &t.path,
            payload: &payload,
            confirmable: !args.non,
        };
        let mut stdout = std::io::stdout().lock();
        let mut rtts = Vec::new();
        let mut failed = 0u32;
        if args.count > 1 {
            writeln!(
                stdout,
                "{:>6}  {:<8} {:>10}  {:>7}  {:>4}  timers (s)",
                "#", "code", "rtt (ms)", "rexmits", "echo"
            )?;
        }
        for i in 0..args.count {
            let r = c.exchange(t.addr, &req, limit).await?;
            if args.count == 1 {
                match &r.outcome {
                    Outcome::Response { code, payload, .. } => {
                        let timers: Vec<String> =
                            r.timers.iter().map(|t| format!("{t:.3}")).collect();
                        eprintln!(
                            "{code} from {} in {:.3} ms, {} retransmission(s), timers [{}] s",
                            t.addr,
                            r.elapsed as f64 / 1e6,
                            r.retransmissions,
                            timers.join(", ")
                        );
                        stdout.write_all(payload)?;
                        if !payload.is_empty() && payload.last() != Some(&b'\n') {
                            writeln!(stdout)?;
                        }
                    }
                    Outcome::Failed(reason) => {
                        bail!(
                            "exchange failed ({reason:?}) after {} retransmission(s)",
                            r.retransmissions
                        )
                    }
                }
                return Ok(());
            }
            writeln!(stdout, "{}", exchange_line(i, &r))?;
            match r.outcome {
                Outcome::Response { .. } => rtts.push(r.elapsed as f64 / 1e6),
                Outcome::Failed(_) => failed += 1,
            }
        }
        let p = Percentiles::of(&mut rtts);
        writeln!(
            stdout,
            "{} exchanges, {} failed; RTT (ms) min {:.3} median {:.3} p90 {:.3} max {:.3}",
            args.count, failed, p.min, p.p50, p.p90, p.max
        )?;
        if failed > 0 {
            bail!("{failed} exchange(s) failed");
        }
        Ok(())
    })
}

/// Runs `coapcc server`; returns its final counters.
pub fn server(args: ServerArgs) -> Result<Snapshot> {
    let mut resources = if args.resources.is_empty() {
        Resources::standard()
    } else {
        Resources::new()
    };
    for r in &args.resources {
        resources.add_spec(r).map_err(|e| anyhow!(e))?;
    }
    let opts = ServerOptions {
        echo: !args.no_echo,
        max_cache_entries: args.cache.max(1),
        exchange_lifetime: seconds("lifetime", args.lifetime)?,
    };
    let duration = args.duration.map(|d| seconds("duration", d)).transpose()?;
    let paths: Vec<String> = resources.paths().map(|p| format!("/{p}")).collect();
    let h = server::spawn(args.listen, opts, resources)?;
    eprintln!("coapcc server on {} serving {}", h.addr(), paths.join(" "));
    runtime()?.block_on(until_stopped(duration));
    let s = h.stop();
    eprintln!(
        "{} datagrams: {} requests, {} duplicates, {} malformed, {} rejected, {} ignored; cache peak {}",
        s.datagrams,
        s.stats.requests,
        s.stats.duplicates,
        s.stats.malformed,
        s.stats.rejected,
        s.stats.ignored,
        s.max_cached
    );
    Ok(s)
}

/// What `coapcc load` measured.
#[derive(Debug, Clone)]
pub struct LoadOutcome {
    /// What ran.
    pub spec: LoadSpec,
    /// The URI given.
    pub uri: String,
    /// Per-client records, as the simulator's.
    pub result: RunResult,
    /// The summary `coapcc run` prints.
    pub summary: Summary,
}

/// Parses `LO-HI`.
fn parse_batch(s: &str) -> Result<[u32; 2]> {
    let (a, b) = s
        .split_once('-')
        .ok_or_else(|| anyhow!("--batch: expected LO-HI, found `{s}`"))?;
    let (a, b): (u32, u32) = (a.trim().parse()?, b.trim().parse()?);
    if a == 0 || b < a {
        bail!("--batch: expected 1 <= LO <= HI, found `{s}`");
    }
    Ok([a, b])
}

/// Runs `coapcc load`.
pub fn load(args: LoadArgs) -> Result<LoadOutcome> {
    let kind = WorkloadKind::parse(&args.workload).ok_or_else(|| {
        anyhow!(
            "--workload: expected continuous or random, found `{}`",
            args.workload
        )
    })?;
    let rt = runtime()?;
    let t = rt.block_on(target::resolve(&args.uri))?;
    let spec = LoadSpec {
        target: t.addr,
        path: t.path,
        clients: args.clients,
        workload: Workload {
            kind,
            exchanges: args.exchanges,
            batch: parse_batch(&args.batch)?,
        },
        algorithm: AlgorithmSpec::named(&args.cc),
        max_retransmit: args.max_retransmit,
        token_len: args.token_len.min(8),
        seed: args.seed,
        time_limit: seconds("time-limit", args.time_limit)?,
    };
    let result = rt.block_on(load::run(&spec))?;
    let summary = Summary::of(&args.cc, 0, std::slice::from_ref(&result));
    Ok(LoadOutcome {
        spec,
        uri: args.uri,
        result,
        summary,
    })
}

/// The network `args` describe.
pub fn emulate_network(args: &EmulateArgs) -> Result<Network> {
    let (lo, hi) = args
        .path_delay_ms
        .split_once(',')
        .ok_or_else(|| anyhow!("--path-delay-ms: expected LO,HI"))?;
    let (lo, hi): (f64, f64) = (lo.trim().parse()?, hi.trim().parse()?);
    if !(lo >= 0.0 && hi >= lo && hi.is_finite()) {
        bail!("--path-delay-ms: expected 0 <= LO <= HI");
    }
    let buffer = Buffer::parse(&args.buffer).ok_or_else(|| {
        anyhow!(
            "--buffer: expected a byte count or `inf`, found `{}`",
            args.buffer
        )
    })?;
    let errors = ErrorProfile::parse(&args.errors).ok_or_else(|| {
        anyhow!(
            "--errors: expected none, low, medium or high, found `{}`",
            args.errors
        )
    })?;
    if args.uplink_bps == 0 || args.downlink_bps == 0 {
        bail!("link rates must be greater than 0");
    }
    if !(args.uplink_delay_ms >= 0.0 && args.downlink_delay_ms >= 0.0) {
        bail!("delays must be >= 0");
    }
    if !(args.scale.is_finite() && args.scale > 0.0) {
        bail!("--scale: expected a positive number");
    }
    let net = Network {
        uplink_bps: args.uplink_bps,
        downlink_bps: args.downlink_bps,
        uplink_delay_ms: args.uplink_delay_ms,
        downlink_delay_ms: args.downlink_delay_ms,
        path_delay_ms: [lo, hi],
        buffer,
        errors,
        ..Network::default()
    };
    Ok(net.scaled(args.scale))
}

/// Runs `coapcc emulate`; returns its final report.
pub fn emulate(args: EmulateArgs) -> Result<EmulatorReport> {
    let network = emulate_network(&args)?;
    let rt = runtime()?;
    let server = rt
        .block_on(tokio::net::lookup_host(args.server.as_str()))
        .with_context(|| format!("--server: cannot resolve `{}`", args.server))?
        .next()
        .ok_or_else(|| anyhow!("--server: `{}` has no address", args.server))?;
    let duration = args.duration.map(|d| seconds("duration", d)).transpose()?;
    let opts = EmulatorOptions {
        network: network.clone(),
        seed: args.seed,
        max_clients: args.max_clients.max(1),
        idle_timeout: seconds("idle-timeout", args.idle_timeout)?,
        ..EmulatorOptions::default()
    };
    let h = emulate::spawn(args.listen, server, opts)?;
    eprintln!(
        "coapcc emulate: {} → {server}; up {} bit/s {} ms, down {} bit/s {} ms, path {:?} ms, buffer {}, errors {}",
        h.addr(),
        network.uplink_bps,
        network.uplink_delay_ms,
        network.downlink_bps,
        network.downlink_delay_ms,
        network.path_delay_ms,
        network.buffer.label(),
        network.errors.name()
    );
    rt.block_on(until_stopped(duration));
    let r = h.stop();
    eprintln!("{}", emulator_summary(&r));
    Ok(r)
}

/// A few lines describing what crossed the relay.
pub fn emulator_summary(r: &EmulatorReport) -> String {
    let dir = |name: &str, l: &coapcc_sim::metrics::LinkRecord| {
        format!(
            "{name}: {} packets, {} bytes, busy {:.3} s, dropped {} (buffer) + {} (link errors)",
            l.packets, l.bytes, l.busy, l.dropped_buffer, l.dropped_error
        )
    };
    format!(
        "{}\n{}\n{} client mapping(s) opened, {} closed",
        dir("uplink", &r.uplink),
        dir("downlink", &r.downlink),
        r.clients_seen,
        r.mappings_closed
    )
}

/// The JSON document `coapcc load --format json` prints.
pub fn load_json(o: &LoadOutcome) -> String {
    let doc = serde_json::json!({
        "target": o.uri,
        "clients": o.spec.clients,
        "workload": o.spec.workload,
        "algorithm": o.spec.algorithm,
        "max_retransmit": o.spec.max_retransmit,
        "seed": o.spec.seed,
        "duration": o.result.duration,
        "algorithms": [o.summary],
    });
    serde_json::to_string_pretty(&doc).expect("serialisable")
}

/// The header line of `coapcc load`'s table.
pub fn load_header(o: &LoadOutcome) -> String {
    format!(
        "load against {} — {} clients, {} workload, {} exchanges each, {:.2} s wall time",
        o.uri,
        o.spec.clients,
        o.spec.workload.kind.name(),
        o.spec.workload.exchanges,
        o.result.duration
    )
}
