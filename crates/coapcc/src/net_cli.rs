//! The `coapcc client | server | load | emulate` subcommands: argument
//! definitions (clap) and what each one runs. Each builds its own tokio
//! runtime, so the caller stays synchronous.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use clap::{Args, ValueEnum};
use coapcc_link::dumbbell::Buffer;
use coapcc_link::errors::ErrorProfile;
use coapcc_net::tokio;
use coapcc_proto::client::Request;
use coapcc_proto::message::Code;
use coapcc_sim::dumbbell::Network;
use coapcc_sim::metrics::{Percentiles, RunResult, Summary};
use coapcc_sim::{AlgorithmSpec, Workload, WorkloadKind};
use serde::de::DeserializeOwned;
use serde::Deserialize;

use coapcc_link::grid;
use coapcc_link::NodeId;
use coapcc_net::client::{ClientOptions, ExchangeReport, NetClient, Outcome};
use coapcc_net::clock::Clock;
use coapcc_net::emulate::{self, EmulatedNetwork, EmulatorOptions, EmulatorReport};
use coapcc_net::load::{self, LoadSpec};
use coapcc_net::resources::Resources;
use coapcc_net::server::{self, ServerOptions, Snapshot};
use coapcc_net::target;

use crate::duration::{delay_ms, seconds};
use crate::scenario_file::{self, NetworkKind};

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
    /// Exit 0 even when an exchange fails (no acknowledgement after
    /// MAX_RETRANSMIT, a reset) or is answered with a 4.xx or 5.xx response;
    /// by default either, though reported, makes the exit status non-zero
    /// (the rule of `coapcc load` too).
    #[arg(long)]
    pub no_fail: bool,
    /// coap+tcp:// only: turn Nagle's algorithm off (TCP_NODELAY); it is on
    /// by default, as the evaluations ran.
    #[arg(long)]
    pub nodelay: bool,
    /// coap+tcp:// only: the kernel's congestion control for the connection
    /// (TCP_CONGESTION, e.g. reno or cubic; see
    /// /proc/sys/net/ipv4/tcp_available_congestion_control).
    #[arg(long, value_name = "NAME")]
    pub tcp_congestion: Option<String>,
}

/// `coapcc server`.
#[derive(Args, Debug, Clone)]
pub struct ServerArgs {
    /// Address to listen on (loopback by default; 0.0.0.0:5683 serves every
    /// interface, see docs/security.md).
    #[arg(long, default_value = "127.0.0.1:5683", value_name = "ADDR")]
    pub listen: SocketAddr,
    /// Answer a source that has not proven it receives at its address (an
    /// Echo round trip, RFC 9175; loopback sources are exempt) with at most F
    /// times its request's size: larger responses become a 4.01 carrying an
    /// Echo option. 0 turns the bound off.
    #[arg(long, default_value_t = 3, value_name = "F")]
    pub amplification_factor: usize,
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
    /// Do not listen on coap+tcp (by default the server also accepts CoAP
    /// over TCP, RFC 8323, on the --listen address's port).
    #[arg(long)]
    pub no_tcp: bool,
    /// Listen on coap+tcp on this address instead of the --listen address.
    #[arg(long, value_name = "ADDR")]
    pub tcp_listen: Option<SocketAddr>,
    /// coap+tcp: most connections open at once; connections over the limit
    /// are closed at once (the open ones keep their place).
    #[arg(long, default_value_t = 1024, value_name = "N")]
    pub max_connections: usize,
    /// coap+tcp: close a connection that sent nothing for this many seconds.
    #[arg(long, default_value_t = 300.0, value_name = "S")]
    pub idle_timeout: f64,
    /// coap+tcp: the Max-Message-Size the server's CSM states; larger
    /// messages are refused with Abort.
    #[arg(long, default_value_t = 1152, value_name = "BYTES")]
    pub max_message_size: u32,
    /// coap+tcp: turn Nagle's algorithm off on accepted connections (on by
    /// default, as the evaluations ran).
    #[arg(long)]
    pub nodelay: bool,
    /// coap+tcp: the kernel's congestion control for accepted connections
    /// (TCP_CONGESTION, e.g. reno); default: the system's.
    #[arg(long, value_name = "NAME")]
    pub tcp_congestion: Option<String>,
}

/// The transport a load ran over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// coap:// (UDP).
    Udp,
    /// coap+tcp:// (TCP, RFC 8323).
    Tcp,
}

impl Transport {
    /// `udp` or `tcp`.
    pub fn name(self) -> &'static str {
        match self {
            Transport::Udp => "udp",
            Transport::Tcp => "tcp",
        }
    }
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
    /// The resource every client GETs: coap://host[:port]/path (UDP) or
    /// coap+tcp://host[:port]/path (TCP, RFC 8323).
    pub uri: String,
    /// Concurrent clients (one UDP socket, or one TCP connection at a time,
    /// each).
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
    /// Source addresses, given to clients round-robin (client i binds the
    /// (i mod n)th); default: the kernel's choice (loopback for a loopback
    /// target over UDP).
    #[arg(long, value_name = "ADDR[,ADDR…]")]
    pub bind: Vec<String>,
    /// Exit 0 even when an exchange fails (no acknowledgement after
    /// MAX_RETRANSMIT, a reset), a client does not finish within
    /// --time-limit, or a response is a 4.xx or 5.xx; by default any of them,
    /// once the results are printed, makes the exit status non-zero (the rule
    /// of `coapcc client` too).
    #[arg(long)]
    pub no_fail: bool,
    /// coap+tcp:// only: turn Nagle's algorithm off (TCP_NODELAY); on by
    /// default, as the evaluations ran.
    #[arg(long)]
    pub nodelay: bool,
    /// coap+tcp:// only: the kernel's congestion control for every
    /// connection (TCP_CONGESTION, e.g. reno); refused names fail the run
    /// before it starts.
    #[arg(long, value_name = "NAME")]
    pub tcp_congestion: Option<String>,
}

/// The network `coapcc emulate --network` names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum NetworkChoice {
    /// The constrained, asymmetric link of the Helsinki testbed.
    Dumbbell,
    /// The 6 × 6 IEEE 802.15.4 grid of the pCoCoA paper.
    Grid,
    /// The 12-station IEEE 802.11 star of the lwIP evaluation.
    Star,
}

impl NetworkChoice {
    fn kind(self) -> NetworkKind {
        match self {
            NetworkChoice::Dumbbell => NetworkKind::Dumbbell,
            NetworkChoice::Grid => NetworkKind::Grid,
            NetworkChoice::Star => NetworkKind::Star,
        }
    }
}

fn kind_name(k: NetworkKind) -> &'static str {
    match k {
        NetworkKind::Dumbbell => "dumbbell",
        NetworkKind::Grid => "grid",
        NetworkKind::Star => "star",
    }
}

/// `coapcc emulate`.
#[derive(Args, Debug, Clone)]
#[command(after_long_help = EMULATE_HELP)]
pub struct EmulateArgs {
    /// Address clients send to (loopback by default; see docs/security.md
    /// before serving other hosts).
    #[arg(
        long,
        default_value = "127.0.0.1:5684",
        value_name = "ADDR",
        conflicts_with = "ip"
    )]
    pub listen: SocketAddr,
    /// The CoAP server to relay to (host:port); not with --ip.
    #[arg(
        long,
        value_name = "HOST:PORT",
        required_unless_present = "ip",
        conflicts_with = "ip"
    )]
    pub server: Option<String>,
    /// The network model: `dumbbell` (the constrained link; the default) or
    /// `grid` (the 6 × 6 IEEE 802.15.4 grid of the pCoCoA paper with its
    /// defaults: Contiki MAC, storing routing, border router on node 1,
    /// server on node 3), or `star` (the 12-station 802.11 star of the lwIP
    /// evaluation).
    #[arg(long, value_enum, value_name = "KIND")]
    pub network: Option<NetworkChoice>,
    /// Take the network from the `[network]` table of a scenario file
    /// (`kind = "grid"`, or the dumbbell); dumbbell options given here
    /// override the file's values.
    #[arg(long, value_name = "FILE.toml")]
    pub scenario: Option<PathBuf>,
    /// Dumbbell: uplink (client → server) rate, bit/s [default: 60000].
    #[arg(long, value_name = "BPS")]
    pub uplink_bps: Option<u64>,
    /// Dumbbell: downlink (server → client) rate, bit/s [default: 30000].
    #[arg(long, value_name = "BPS")]
    pub downlink_bps: Option<u64>,
    /// Dumbbell: uplink one-way propagation delay, ms [default: 200].
    #[arg(long, value_name = "MS")]
    pub uplink_delay_ms: Option<f64>,
    /// Dumbbell: downlink one-way propagation delay, ms [default: 400].
    #[arg(long, value_name = "MS")]
    pub downlink_delay_ms: Option<f64>,
    /// Dumbbell: router ↔ server one-way delay, uniform in LO,HI ms per
    /// packet [default: 10,20].
    #[arg(long, value_name = "LO,HI")]
    pub path_delay_ms: Option<String>,
    /// Dumbbell: router buffer per direction, bytes of waiting IP packets, or
    /// `inf` [default: inf].
    #[arg(long, value_name = "BYTES|inf")]
    pub buffer: Option<String>,
    /// Dumbbell: link-error profile, none, low, medium or high [default:
    /// none].
    #[arg(long, value_name = "PROFILE")]
    pub errors: Option<String>,
    /// Dumbbell: speed the link up F times: rates × F, delays ÷ F (link
    /// errors keep their time scale). The grid refuses it: its timings are
    /// radio constants, not link rates.
    #[arg(long, value_name = "F")]
    pub scale: Option<f64>,
    /// Grid: the nodes clients attach to, in the order clients first send
    /// (wrapping around when there are more clients) [default: every node but
    /// the border router and the server, in node order].
    #[arg(long, value_name = "N,N,…", value_delimiter = ',')]
    pub nodes: Vec<NodeId>,
    /// Seed of the model's random streams (dumbbell: link errors and path
    /// jitter; grid: MAC backoffs and sequence numbers).
    #[arg(long, default_value_t = 1, value_name = "S")]
    pub seed: u64,
    /// Most client mappings at once.
    #[arg(long, default_value_t = 4096, value_name = "N", conflicts_with = "ip")]
    pub max_clients: usize,
    /// Close a mapping unused for this many seconds.
    #[arg(long, default_value_t = 300.0, value_name = "S", conflicts_with = "ip")]
    pub idle_timeout: f64,
    /// Stop after this many seconds (default: run until interrupted).
    #[arg(long, value_name = "S")]
    pub duration: Option<f64>,
    /// The IP mode (`--ip`, `--server-cmd`, … `-- CLIENT COMMAND`).
    #[command(flatten)]
    pub ip: Box<crate::ip_cli::IpArgs>,
}

const EMULATE_HELP: &str = "\
Each client address gets its own upstream socket, so the server sees one endpoint per client.

On the grid the server runs on the grid's server node and the Nth client address to send (from \
the relay's start) gets the Nth client node: by default every node but the border router and the \
server, in node order (on the 6 × 6 grid: 2, 4, 5, …, 36, then 2 again). A client whose mapping \
expired counts as a new client. Datagrams larger than eight 6LoWPAN fragments carry are refused and \
counted. On exit the relay prints what it carried: per direction for the dumbbell; frames, drops by \
cause and MAC buffer overflows for the grid.

On the star the Nth client address gets station N (wrapping around).

IP mode (--ip): two network namespaces joined by TUN devices with the network between them; the \
server command runs in one (address 10.0.0.1), the client command in the other (10.0.0.2; on the \
grid and the star also 10.1.H.L for node 256·H+L), with COAPCC_SERVER_ADDR, COAPCC_CLIENT_ADDR and \
COAPCC_CLIENT_ADDRS set; everything is torn down when the client command ends, the server command \
ends (exit 125) or on Ctrl-C (exit 130). See docs/real-network.md, \"IP mode\".

Examples:
  coapcc emulate --ip --server-cmd 'coap-server-notls -A $COAPCC_SERVER_ADDR' -- \
    coap-client-notls coap+tcp://10.0.0.1/.well-known/core
  coapcc emulate --server 127.0.0.1:5683 --buffer 2500 --errors medium
  coapcc emulate --server 127.0.0.1:5683 --network grid --nodes 36,35,30
  coapcc emulate --server 127.0.0.1:5683 --scenario scenarios/pcocoa/ns3-reference.toml";

fn runtime() -> Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?)
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

const STDOUT: &str = "cannot write to standard output";

/// Refuses a TCP option given with a coap:// URI.
fn tcp_only(flag: &str, set: bool) -> Result<()> {
    if set {
        bail!("{flag}: applies to coap+tcp:// URIs only");
    }
    Ok(())
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
    if target::is_tcp(&args.uri) {
        return crate::tcp_cli::client(&runtime()?, &args, args.method.code(), &payload);
    }
    tcp_only("--nodelay", args.nodelay)?;
    tcp_only("--tcp-congestion", args.tcp_congestion.is_some())?;
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
        let mut errors = 0u32;
        if args.count > 1 {
            writeln!(
                stdout,
                "{:>6}  {:<8} {:>10}  {:>7}  {:>4}  timers (s)",
                "#", "code", "rtt (ms)", "rexmits", "echo"
            )
            .context(STDOUT)?;
        }
        let mut mismatched = 0u32;
        let mut echo_retries = 0u32;
        for i in 0..args.count {
            let r = c.exchange(t.addr, &req, limit).await?;
            if r.mismatched_responses > 0 {
                eprintln!(
                    "{} piggybacked response(s) with the request's Message ID but another token \
                     acknowledged it without answering it (RFC 7252 §5.3.2)",
                    r.mismatched_responses
                );
            }
            mismatched += r.mismatched_responses;
            echo_retries += r.echo_retries;
            if args.count == 1 {
                match &r.outcome {
                    Outcome::Response { code, payload, .. } => {
                        let timers: Vec<String> =
                            r.timers.iter().map(|t| format!("{t:.3}")).collect();
                        if r.echo_retries > 0 {
                            eprintln!(
                                "4.01 with an Echo option from {}: the request was sent again \
                                 with the Echo value (RFC 9175)",
                                t.addr
                            );
                        }
                        eprintln!(
                            "{code} from {} in {:.3} ms, {} retransmission(s), timers [{}] s",
                            t.addr,
                            r.elapsed as f64 / 1e6,
                            r.retransmissions,
                            timers.join(", ")
                        );
                        stdout.write_all(payload).context(STDOUT)?;
                        if !payload.is_empty() && payload.last() != Some(&b'\n') {
                            writeln!(stdout).context(STDOUT)?;
                        }
                    }
                    Outcome::Failed(reason) => {
                        let what = format!(
                            "exchange failed ({reason:?}) after {} retransmission(s)",
                            r.retransmissions
                        );
                        if !args.no_fail {
                            bail!("{what} (exit 0 with --no-fail)");
                        }
                        eprintln!("{what}");
                    }
                }
                stdout.flush().context(STDOUT)?;
                if let Outcome::Response { code, .. } = &r.outcome {
                    if load::is_error(*code) && !args.no_fail {
                        bail!("error response {code} (exit 0 with --no-fail)");
                    }
                }
                return Ok(());
            }
            writeln!(stdout, "{}", exchange_line(i, &r)).context(STDOUT)?;
            match r.outcome {
                Outcome::Response { code, .. } => {
                    rtts.push(r.elapsed as f64 / 1e6);
                    if load::is_error(code) {
                        errors += 1;
                    }
                }
                Outcome::Failed(_) => failed += 1,
            }
        }
        let p = Percentiles::of(&mut rtts);
        writeln!(
            stdout,
            "{} exchanges, {} failed, {} error responses; RTT (ms) min {:.3} median {:.3} p90 {:.3} max {:.3}",
            args.count, failed, errors, p.min, p.p50, p.p90, p.max
        )
        .context(STDOUT)?;
        if mismatched > 0 {
            writeln!(
                stdout,
                "{mismatched} piggybacked response(s) with a token not their exchange's"
            )
            .context(STDOUT)?;
        }
        if echo_retries > 0 {
            writeln!(
                stdout,
                "{echo_retries} request(s) sent again with an Echo option after a 4.01 challenge"
            )
            .context(STDOUT)?;
        }
        if failed > 0 && !args.no_fail {
            bail!("{failed} exchange(s) failed (exit 0 with --no-fail)");
        }
        if errors > 0 && !args.no_fail {
            bail!("{errors} error response(s) (4.xx or 5.xx; exit 0 with --no-fail)");
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
        amplification: coapcc_net::amplification::AmplificationLimit {
            factor: args.amplification_factor,
            exempt_loopback: true,
        },
    };
    let duration = args.duration.map(|d| seconds("duration", d)).transpose()?;
    let paths: Vec<String> = resources.paths().map(|p| format!("/{p}")).collect();
    let tcp_resources = resources.clone();
    let h = server::spawn(args.listen, opts, resources)?;
    let tcp = crate::tcp_cli::spawn_server(&args, h.addr(), tcp_resources)?;
    match &tcp {
        Some(t) => eprintln!(
            "coapcc server on {} (UDP) and {} (TCP) serving {}",
            h.addr(),
            t.addr(),
            paths.join(" ")
        ),
        None => eprintln!("coapcc server on {} serving {}", h.addr(), paths.join(" ")),
    }
    runtime()?.block_on(until_stopped(duration));
    let tcp = tcp.map(|t| t.stop());
    let s = h.stop();
    eprintln!(
        "{} datagrams: {} requests, {} duplicates, {} malformed, {} rejected, {} ignored; \
         {} challenged and {} withheld (amplification bound), {} oversized; cache peak {}",
        s.datagrams,
        s.stats.requests,
        s.stats.duplicates,
        s.stats.malformed,
        s.stats.rejected,
        s.stats.ignored,
        s.challenged,
        s.withheld,
        s.oversized,
        s.max_cached
    );
    if let Some(t) = tcp {
        eprintln!("{}", crate::tcp_cli::server_summary(&t));
    }
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
    /// Responses received, by code.
    pub codes: load::ResponseCodes,
    /// Requests sent again with an Echo option after the server's 4.01
    /// challenge (RFC 9175 §2.4; UDP only).
    pub echo_retries: u64,
    /// UDP or TCP.
    pub transport: Transport,
    /// TCP: connections opened (None over UDP).
    pub connections: Option<u64>,
}

impl LoadOutcome {
    /// Responses with a 4.xx or 5.xx code.
    pub fn error_responses(&self) -> u64 {
        self.codes
            .iter()
            .filter(|(c, _)| load::is_error(**c))
            .map(|(_, n)| n)
            .sum()
    }

    /// `2.05 × 480, 4.04 × 20`, or `none`.
    pub fn codes_line(&self) -> String {
        if self.codes.is_empty() {
            return "none".into();
        }
        let parts: Vec<String> = self
            .codes
            .iter()
            .map(|(c, n)| format!("{c} × {n}"))
            .collect();
        parts.join(", ")
    }

    /// An error if an exchange failed, a client did not finish or a
    /// response was an error response, unless `no_fail` (after the results
    /// are printed: they say what was measured). The rule of `coapcc client`.
    pub fn check(&self, no_fail: bool) -> Result<()> {
        if no_fail {
            return Ok(());
        }
        let failed = self.summary.failed_exchanges;
        let unfinished = self.summary.unfinished_clients;
        let errors = self.error_responses();
        let mut what = Vec::new();
        if failed > 0 {
            what.push(format!("{failed} exchange(s) failed"));
        }
        if unfinished > 0 {
            what.push(format!(
                "{unfinished} of {} client(s) did not finish within the time limit",
                self.spec.clients
            ));
        }
        if errors > 0 {
            let total: u64 = self.codes.values().sum();
            what.push(format!(
                "{errors} of {total} responses were errors ({}); the metrics do not measure the resource",
                self.codes_line()
            ));
        }
        if !what.is_empty() {
            bail!("{} (exit 0 with --no-fail)", what.join("; "));
        }
        Ok(())
    }
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
    if args.token_len > 8 {
        bail!(
            "--token-len: expected 0 to 8 bytes, found {}",
            args.token_len
        );
    }
    let rt = runtime()?;
    let workload = Workload {
        kind,
        exchanges: args.exchanges,
        batch: parse_batch(&args.batch)?,
    };
    let bind = crate::tcp_cli::parse_bind(&args.bind)?;
    if target::is_tcp(&args.uri) {
        return crate::tcp_cli::load(&rt, &args, workload, bind);
    }
    tcp_only("--nodelay", args.nodelay)?;
    tcp_only("--tcp-congestion", args.tcp_congestion.is_some())?;
    let t = rt.block_on(target::resolve(&args.uri))?;
    let spec = LoadSpec {
        target: t.addr,
        path: t.path,
        clients: args.clients,
        workload,
        algorithm: AlgorithmSpec::named(&args.cc),
        max_retransmit: args.max_retransmit,
        token_len: args.token_len,
        seed: args.seed,
        time_limit: seconds("time-limit", args.time_limit)?,
    };
    let r = rt.block_on(load::run_bound(&spec, &bind))?;
    let summary = Summary::of(&args.cc, 0, std::slice::from_ref(&r.result));
    Ok(LoadOutcome {
        spec,
        uri: args.uri,
        result: r.result,
        summary,
        codes: r.codes,
        echo_retries: r.echo_retries,
        transport: Transport::Udp,
        connections: None,
    })
}

/// The `[network]` table of a scenario (or campaign) file; other tables are
/// ignored. A missing table is the network's defaults.
pub(crate) fn network_table<T: DeserializeOwned + Default>(text: &str, origin: &str) -> Result<T> {
    #[derive(Deserialize)]
    #[serde(bound = "T: DeserializeOwned")]
    struct File<T> {
        #[serde(default = "Option::default")]
        network: Option<T>,
    }
    let f: File<T> = toml::from_str(text).map_err(|e| anyhow!("{origin}: {e}"))?;
    Ok(f.network.unwrap_or_default())
}

/// The network `args` describe: `--network` or the `[network]` table of
/// `--scenario`, with the dumbbell options applied. Options that do not apply
/// to the chosen network are refused.
pub fn emulate_network(args: &EmulateArgs) -> Result<EmulatedNetwork> {
    let (kind, file) = match &args.scenario {
        Some(path) => {
            let origin = path.display().to_string();
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("--scenario: cannot read `{origin}`"))?;
            let kind = scenario_file::network_kind(&text, &origin)?;
            if let Some(choice) = args.network.filter(|c| c.kind() != kind) {
                bail!(
                    "--network {}: {origin} describes the {} (its [network] table); \
                     expected the two to agree (or give only one of them)",
                    kind_name(choice.kind()),
                    kind_name(kind)
                );
            }
            (kind, Some((text, origin)))
        }
        None => (
            args.network
                .map_or(NetworkKind::Dumbbell, NetworkChoice::kind),
            None,
        ),
    };
    match kind {
        NetworkKind::Dumbbell => dumbbell_network(args, file),
        NetworkKind::Grid => grid_network(args, file),
        NetworkKind::Star => crate::ip_cli::star_network(args, file),
    }
}

fn dumbbell_network(args: &EmulateArgs, file: Option<(String, String)>) -> Result<EmulatedNetwork> {
    if !args.nodes.is_empty() {
        bail!(
            "--nodes: applies to the grid only, and the emulated network is the dumbbell \
             (choose the grid with --network grid or a scenario with kind = \"grid\")"
        );
    }
    let (mut net, origin) = match &file {
        Some((text, origin)) => (network_table::<Network>(text, origin)?, origin.as_str()),
        None => (Network::default(), "--network dumbbell"),
    };
    if let Some(s) = &args.path_delay_ms {
        let parsed = s.split_once(',').and_then(|(lo, hi)| {
            Some((
                lo.trim().parse::<f64>().ok()?,
                hi.trim().parse::<f64>().ok()?,
            ))
        });
        let Some((lo, hi)) = parsed else {
            bail!("--path-delay-ms: expected LO,HI in ms, found `{s}`");
        };
        delay_ms("path-delay-ms", lo)?;
        delay_ms("path-delay-ms", hi)?;
        if lo > hi {
            bail!("--path-delay-ms: expected 0 <= LO <= HI, found `{s}`");
        }
        net.path_delay_ms = [lo, hi];
    }
    if let Some(b) = &args.buffer {
        net.buffer = Buffer::parse(b)
            .ok_or_else(|| anyhow!("--buffer: expected a byte count or `inf`, found `{b}`"))?;
    }
    if let Some(e) = &args.errors {
        net.errors = ErrorProfile::parse(e)
            .ok_or_else(|| anyhow!("--errors: expected none, low, medium or high, found `{e}`"))?;
    }
    for (flag, bps, slot) in [
        ("--uplink-bps", args.uplink_bps, &mut net.uplink_bps),
        ("--downlink-bps", args.downlink_bps, &mut net.downlink_bps),
    ] {
        if let Some(bps) = bps {
            if bps == 0 {
                bail!("{flag}: expected a rate greater than 0 bit/s");
            }
            *slot = bps;
        }
    }
    for (flag, ms, slot) in [
        (
            "--uplink-delay-ms",
            args.uplink_delay_ms,
            &mut net.uplink_delay_ms,
        ),
        (
            "--downlink-delay-ms",
            args.downlink_delay_ms,
            &mut net.downlink_delay_ms,
        ),
    ] {
        if let Some(ms) = ms {
            *slot = delay_ms(&flag[2..], ms)?;
        }
    }
    let scale = args.scale.unwrap_or(1.0);
    if !(scale.is_finite() && scale > 0.0) {
        bail!("--scale: expected a positive number, found {scale}");
    }
    let net = EmulatedNetwork::Dumbbell(net.scaled(scale));
    net.validate().map_err(|e| {
        if scale == 1.0 {
            anyhow!("{origin}: {e}")
        } else {
            anyhow!("{origin} with --scale {scale}: {e}")
        }
    })?;
    Ok(net)
}

impl EmulateArgs {
    /// The dumbbell's link options, each with whether it was given (the
    /// grid and the star refuse them by name).
    pub(crate) fn dumbbell_options(&self) -> [(&'static str, bool); 7] {
        [
            ("--uplink-bps", self.uplink_bps.is_some()),
            ("--downlink-bps", self.downlink_bps.is_some()),
            ("--uplink-delay-ms", self.uplink_delay_ms.is_some()),
            ("--downlink-delay-ms", self.downlink_delay_ms.is_some()),
            ("--path-delay-ms", self.path_delay_ms.is_some()),
            ("--buffer", self.buffer.is_some()),
            ("--errors", self.errors.is_some()),
        ]
    }
}

fn grid_network(args: &EmulateArgs, file: Option<(String, String)>) -> Result<EmulatedNetwork> {
    if let Some((flag, _)) = args.dumbbell_options().iter().find(|(_, set)| *set) {
        bail!(
            "{flag}: applies to the dumbbell only, and the emulated network is the grid \
             (its buffers are the nodes' MAC queues and it has no link-error model; set the \
             grid's parameters in a scenario's [network] table and pass it with --scenario)"
        );
    }
    if let Some(f) = args.scale.filter(|&f| f != 1.0) {
        bail!(
            "--scale {f}: applies to the dumbbell only; the grid's timings (250 kbit/s airtime, \
             turnarounds, acknowledgement waits, CSMA backoffs, the reassembly timeout) are \
             radio constants, not link rates, and speeding them all up would leave the real \
             clients' CoAP timers behind"
        );
    }
    let (config, origin) = match &file {
        Some((text, origin)) => (
            network_table::<grid::Config>(text, origin)?,
            origin.as_str(),
        ),
        None => (grid::Config::default(), "--network grid"),
    };
    config.validate().map_err(|e| anyhow!("{origin}: {e}"))?;
    if !args.nodes.is_empty() {
        emulate::grid_client_nodes(&config, &args.nodes).map_err(|e| anyhow!("--nodes: {e}"))?;
    }
    let net = EmulatedNetwork::Grid {
        config,
        client_nodes: args.nodes.clone(),
    };
    net.validate().map_err(|e| anyhow!("{origin}: {e}"))?;
    Ok(net)
}

/// Runs `coapcc emulate`; returns its final report.
pub fn emulate(args: EmulateArgs) -> Result<EmulatorReport> {
    let network = emulate_network(&args)?;
    if args.max_clients == 0 {
        bail!("--max-clients: expected at least 1");
    }
    let idle_timeout = seconds("idle-timeout", args.idle_timeout)?;
    let duration = args.duration.map(|d| seconds("duration", d)).transpose()?;
    if args.ip.max_held_bytes == Some(0) {
        bail!("--max-held-bytes: expected at least 1");
    }
    let rt = runtime()?;
    let server_arg = args.server.as_deref().unwrap_or_default();
    let server = rt
        .block_on(tokio::net::lookup_host(server_arg))
        .with_context(|| format!("--server: cannot resolve `{server_arg}`"))?
        .next()
        .ok_or_else(|| anyhow!("--server: `{server_arg}` has no address"))?;
    let opts = EmulatorOptions {
        network: network.clone(),
        seed: args.seed,
        max_clients: args.max_clients,
        idle_timeout,
        max_held_bytes: args
            .ip
            .max_held_bytes
            .unwrap_or(coapcc_net::emulate::EmulatorOptions::default().max_held_bytes),
        ..EmulatorOptions::default()
    };
    let h = emulate::spawn(args.listen, server, opts)?;
    eprintln!("{}", emulator_startup(h.addr(), server, &network));
    rt.block_on(until_stopped(duration));
    let r = h.stop();
    eprintln!("{}", emulator_summary(&r));
    Ok(r)
}

/// `a, b, c` for a few nodes, `a, b, c, …, z` for many.
fn node_list(nodes: &[NodeId]) -> String {
    let names: Vec<String> = nodes.iter().map(u32::to_string).collect();
    if names.len() <= 8 {
        names.join(", ")
    } else {
        format!("{}, …, {}", names[..3].join(", "), names[names.len() - 1])
    }
}

/// The line `coapcc emulate` prints when it starts.
pub fn emulator_startup(
    listen: SocketAddr,
    server: SocketAddr,
    network: &EmulatedNetwork,
) -> String {
    match network {
        EmulatedNetwork::Dumbbell(n) => format!(
            "coapcc emulate: {listen} → {server}; up {} bit/s {} ms, down {} bit/s {} ms, path {:?} ms, buffer {}, errors {}",
            n.uplink_bps,
            n.uplink_delay_ms,
            n.downlink_bps,
            n.downlink_delay_ms,
            n.path_delay_ms,
            n.buffer.label(),
            n.errors.name()
        ),
        EmulatedNetwork::Grid {
            config: c,
            client_nodes,
        } => {
            let nodes = emulate::grid_client_nodes(c, client_nodes).unwrap_or_default();
            format!(
                "coapcc emulate: {listen} → {server} through the {}-node 802.15.4 grid: {} MAC, {} routing, \
                 MAC queue {} frames, {} transmissions; border router node {}, server on node {}; \
                 clients on nodes {} in order of arrival (wrapping around); CoAP messages up to {} bytes",
                c.nodes(),
                match c.mac {
                    grid::MacProfile::Contiki => "contiki",
                    grid::MacProfile::Ieee802154 => "ieee802154",
                },
                match c.routing {
                    grid::layout::Routing::Storing => "storing",
                    grid::layout::Routing::Root => "root",
                },
                c.queue,
                c.transmissions,
                c.root,
                c.server,
                node_list(&nodes),
                grid::sixlowpan::max_coap(c.addressing, c.hop_by_hop)
            )
        }
        EmulatedNetwork::Star(c) => format!(
            "coapcc emulate: {listen} → {server} through the {}-station 802.11 star ({} bit/s, queue {} packets, \
             wired hop {} bit/s); the Nth client on station N (wrapping around)",
            c.stations, c.rate_bps, c.queue, c.wired_bps
        ),
    }
}

/// A few lines describing what crossed the relay.
pub fn emulator_summary(r: &EmulatorReport) -> String {
    let mappings = format!(
        "{} client mapping(s) opened, {} closed; delivered after their mapping closed (not sent): \
         {} upstream, {} downstream",
        r.clients_seen, r.mappings_closed, r.upstream.closed, r.downstream.closed
    );
    if let Some(s) = &r.star {
        return crate::ip_cli::star_summary(r, s, &mappings);
    }
    let Some(g) = &r.grid else {
        let dir = |name: &str, l: &coapcc_sim::metrics::LinkRecord| {
            format!(
                "{name}: {} packets serialised, {} bytes, busy {:.3} s, dropped {} (buffer) + {} (link errors)",
                l.packets, l.bytes, l.busy, l.dropped_buffer, l.dropped_error
            )
        };
        let relay = |name: &str, c: &emulate::DatagramCounts| {
            format!(
                "relay {name}: {} datagrams ({} bytes): {} delivered, {} dropped by the model, \
                 {} in flight ({} IP bytes held, peak {}), {} refused (relay full: {} IP bytes), \
                 {} refused (too large)",
                c.received,
                c.bytes,
                c.delivered,
                c.dropped,
                c.in_flight(),
                c.held_bytes,
                c.peak_held_bytes,
                c.refused_full,
                c.refused_full_bytes,
                c.refused_too_large
            )
        };
        return format!(
            "{}\n{}\n{}\n{}\n{mappings}",
            dir("uplink", &r.uplink),
            dir("downlink", &r.downlink),
            relay("upstream (clients → server)", &r.upstream),
            relay("downstream (server → clients)", &r.downstream),
        );
    };
    let dir = |name: &str, c: &emulate::DatagramCounts| {
        format!(
            "{name}: {} datagrams ({} bytes): {} delivered, {} dropped in the grid, {} refused (too large), {} refused (relay full), {} in flight",
            c.received,
            c.bytes,
            c.delivered,
            c.dropped,
            c.refused_too_large,
            c.refused_full,
            c.in_flight()
        )
    };
    let t = g.totals();
    let d = &g.drops;
    let on: Vec<String> = g
        .nodes
        .iter()
        .filter(|n| n.clients > 0)
        .map(|n| format!("{} ({})", n.node, n.clients))
        .collect();
    format!(
        "{}\n{}\n\
         grid frames: {} on the air ({} data, {} acknowledgements, {:.3} s of airtime), {} receptions destroyed by collisions, {} deferrals, {} duplicates filtered, {} datagrams forwarded\n\
         grid drops: {} datagrams — MAC queue full {}, MAC retries {}, channel access {}, reassembly {}, fragments aborted {}, hop limit {}\n\
         MAC buffer overflows: {} (frames refused), MAC drops after the last transmission: {}, reassembly drops: {}\n\
         clients on nodes (mappings): {}\n{mappings}",
        dir("upstream (clients → server)", &r.upstream),
        dir("downstream (server → clients)", &r.downstream),
        g.frames_on_air,
        t.data_frames,
        t.ack_frames,
        t.airtime,
        g.collisions,
        t.deferrals,
        t.duplicates,
        t.forwarded,
        d.total(),
        d.mac_queue,
        d.mac_retries,
        d.channel_access,
        d.reassembly,
        d.fragments_aborted,
        d.hop_limit,
        t.overflows,
        t.mac_drops,
        t.reassembly_drops,
        if on.is_empty() { "none".to_string() } else { on.join(", ") },
    )
}

/// The JSON document `coapcc load --format json` prints: the summary
/// without the keys only the bottleneck measures
/// ([`crate::output::NETWORK_KEYS`]).
pub fn load_json(o: &LoadOutcome) -> String {
    let mut summary = serde_json::to_value(&o.summary).expect("serialisable");
    if let Some(map) = summary.as_object_mut() {
        for key in crate::output::NETWORK_KEYS {
            map.remove(key);
        }
        if o.transport == Transport::Tcp {
            // CoAP does not retransmit over TCP: no such count exists.
            map.insert("unnecessary".into(), serde_json::Value::Null);
        }
    }
    let fct: Vec<Option<f64>> = o.result.clients.iter().map(|c| c.fct).collect();
    let doc = serde_json::json!({
        "transport": o.transport.name(),
        "connections": o.connections,
        "fct_s": fct,
        "failed_exchanges": o.summary.failed_exchanges,
        "unfinished_clients": o.summary.unfinished_clients,
        "target": o.uri,
        "clients": o.spec.clients,
        "workload": o.spec.workload,
        "algorithm": o.spec.algorithm,
        "max_retransmit": o.spec.max_retransmit,
        "seed": o.spec.seed,
        "duration": o.result.duration,
        "responses": o.codes.iter().map(|(c, n)| (c.to_string(), *n)).collect::<BTreeMap<String, u64>>(),
        "error_responses": o.error_responses(),
        "echo_retries": o.echo_retries,
        "algorithms": [summary],
    });
    serde_json::to_string_pretty(&doc).expect("serialisable")
}

/// The header line of `coapcc load`'s table.
pub fn load_header(o: &LoadOutcome) -> String {
    let mut h = format!(
        "load against {} — {} clients, {} workload, {} exchanges each, {:.2} s wall time; responses: {}",
        o.uri,
        o.spec.clients,
        o.spec.workload.kind.name(),
        o.spec.workload.exchanges,
        o.result.duration,
        o.codes_line()
    );
    if o.echo_retries > 0 {
        h.push_str(&format!(
            "\nrequests sent again with an Echo option (the server's 4.01 challenge, RFC 9175): {}",
            o.echo_retries
        ));
    }
    if let Some(n) = o.connections {
        h.push_str(&format!(
            "\nTCP connections opened: {n}; unnecessary retransmissions: none at the CoAP \
             layer (CoAP sends each request once over TCP; TCP's own retransmissions are the \
             kernel's, not counted here)"
        ));
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        emulate: EmulateArgs,
    }

    fn network(args: &[&str]) -> Result<EmulatedNetwork> {
        let mut argv = vec!["emulate", "--server", "127.0.0.1:5683"];
        argv.extend_from_slice(args);
        emulate_network(&Cli::try_parse_from(argv).expect("parses").emulate)
    }

    fn error(args: &[&str]) -> String {
        format!("{:#}", network(args).expect_err("refused"))
    }

    fn scenario(name: &str) -> String {
        format!("{}/../../scenarios/{name}", env!("CARGO_MANIFEST_DIR"))
    }

    fn temp_scenario(text: &str) -> tempfile::NamedTempFile {
        use std::io::Write;
        let mut f = tempfile::Builder::new().suffix(".toml").tempfile().unwrap();
        f.write_all(text.as_bytes()).unwrap();
        f
    }

    #[test]
    fn the_dumbbell_by_default_with_its_options_and_scale() {
        let EmulatedNetwork::Dumbbell(n) = network(&[]).unwrap() else {
            panic!("the dumbbell")
        };
        assert_eq!(n, Network::default());
        let EmulatedNetwork::Dumbbell(n) = network(&[
            "--buffer",
            "2500",
            "--errors",
            "medium",
            "--uplink-bps",
            "100000",
            "--scale",
            "10",
        ])
        .unwrap() else {
            panic!("the dumbbell")
        };
        assert_eq!(n.buffer, Buffer::Bytes(2500));
        assert_eq!(n.errors, ErrorProfile::Medium);
        assert_eq!((n.uplink_bps, n.downlink_bps), (1_000_000, 300_000));
        assert_eq!(n.path_delay_ms, [1.0, 2.0]);
    }

    #[test]
    fn a_scenarios_network_table_with_command_line_overrides() {
        let EmulatedNetwork::Dumbbell(n) = network(&[
            "--scenario",
            &scenario("fullbackoff/fb-continuous-28200.toml"),
            "--errors",
            "low",
        ])
        .unwrap() else {
            panic!("the dumbbell")
        };
        assert_eq!(n.buffer, Buffer::Bytes(28_200));
        assert_eq!(n.errors, ErrorProfile::Low);

        let EmulatedNetwork::Grid {
            config,
            client_nodes,
        } = network(&["--scenario", &scenario("pcocoa/ns3-reference.toml")]).unwrap()
        else {
            panic!("the grid")
        };
        assert_eq!(config.mac, grid::MacProfile::Ieee802154);
        assert!(client_nodes.is_empty());
        // a file with only a [network] table
        let f = temp_scenario("[network]\nkind = \"grid\"\nqueue = 16\n");
        let path = f.path().to_str().unwrap();
        let net = network(&["--scenario", path, "--nodes", "36,35"]).unwrap();
        assert_eq!(
            net,
            EmulatedNetwork::Grid {
                config: grid::Config {
                    queue: 16,
                    ..grid::Config::default()
                },
                client_nodes: vec![36, 35],
            }
        );
        assert_eq!(
            network(&["--network", "grid"]).unwrap(),
            grid::Config::default().into()
        );
    }

    #[test]
    fn options_that_do_not_apply_are_refused_by_name() {
        for flag in [
            "--buffer",
            "--errors",
            "--uplink-bps",
            "--downlink-delay-ms",
            "--path-delay-ms",
        ] {
            let value = match flag {
                "--buffer" => "100",
                "--errors" => "low",
                "--path-delay-ms" => "1,2",
                _ => "5",
            };
            let e = error(&["--network", "grid", flag, value]);
            assert!(
                e.starts_with(&format!("{flag}: applies to the dumbbell only")),
                "{e}"
            );
        }
        let e = error(&["--network", "grid", "--scale", "10"]);
        assert!(
            e.starts_with("--scale 10: applies to the dumbbell only"),
            "{e}"
        );
        assert!(e.contains("radio constants"), "{e}");
        assert!(network(&["--network", "grid", "--scale", "1"]).is_ok());
        let e = error(&["--nodes", "4"]);
        assert!(e.starts_with("--nodes: applies to the grid only"), "{e}");
        let e = error(&["--network", "grid", "--nodes", "3"]);
        assert!(e.starts_with("--nodes: node 3 is the server's node"), "{e}");
        let e = error(&["--network", "grid", "--nodes", "2,40"]);
        assert!(
            e.contains("expected node numbers from 1 to 36, found 40"),
            "{e}"
        );
        let e = error(&[
            "--network",
            "dumbbell",
            "--scenario",
            &scenario("pcocoa/periodic.toml"),
        ]);
        assert!(
            e.starts_with("--network dumbbell:") && e.contains("grid"),
            "{e}"
        );
        let e = error(&["--scenario", "/nonexistent/x.toml"]);
        assert!(e.starts_with("--scenario: cannot read"), "{e}");
        let f = temp_scenario("[network]\nkind = \"grid\"\nqueue = 0\n");
        let e = error(&["--scenario", f.path().to_str().unwrap()]);
        assert!(e.contains("network.queue: expected 1 to 64 frames"), "{e}");
        let f = temp_scenario("[network]\nkind = \"grid\"\nqeue = 8\n");
        let e = error(&["--scenario", f.path().to_str().unwrap()]);
        assert!(e.contains("qeue"), "{e}");
        // the star: from a scenario (its parameters) or --network star
        let f = temp_scenario("[network]\nkind = \"star\"\nstations = 4\n");
        let net = network(&["--scenario", f.path().to_str().unwrap()]).unwrap();
        assert_eq!(net.client_nodes(), vec![1, 2, 3, 4]);
        let e = error(&["--scenario", f.path().to_str().unwrap(), "--buffer", "9"]);
        assert!(
            e.starts_with("--buffer: does not apply to the Wi-Fi star"),
            "{e}"
        );
        let f = temp_scenario("[network]\nkind = \"star\"\nstations = 0\n");
        let e = error(&["--scenario", f.path().to_str().unwrap()]);
        assert!(e.contains("network.stations: expected 1 to 1000"), "{e}");
        assert!(matches!(
            network(&["--network", "star"]),
            Ok(EmulatedNetwork::Star(_))
        ));
        let e = error(&["--uplink-bps", "0"]);
        assert!(
            e.starts_with("--uplink-bps: expected a rate greater than 0"),
            "{e}"
        );
        let e = error(&["--path-delay-ms", "5"]);
        assert!(e.starts_with("--path-delay-ms: expected LO,HI"), "{e}");
        let e = error(&["--scale", "0"]);
        assert!(e.starts_with("--scale: expected a positive number"), "{e}");
        let e = error(&["--scale", "0.000001"]);
        assert_eq!(
            e,
            "--network dumbbell with --scale 0.000001: network.uplink_bps: expected a rate greater than 0 bit/s"
        );
    }

    #[test]
    fn the_startup_line_and_summary_describe_the_grid() {
        let net = network(&["--network", "grid"]).unwrap();
        let a: SocketAddr = "127.0.0.1:5684".parse().unwrap();
        let line = emulator_startup(a, a, &net);
        assert!(
            line.contains("36-node 802.15.4 grid: contiki MAC, storing routing")
                && line.contains("server on node 3")
                && line.contains("clients on nodes 2, 4, 5, …, 36"),
            "{line}"
        );
        let r = EmulatorReport {
            grid: Some(emulate::GridReport::default()),
            ..EmulatorReport::default()
        };
        let s = emulator_summary(&r);
        assert!(s.contains("grid frames: 0 on the air") && s.contains("MAC buffer overflows: 0"));
        assert!(emulator_summary(&EmulatorReport::default())
            .starts_with("uplink: 0 packets serialised"));
    }
}
