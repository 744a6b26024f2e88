//! The arguments of `coapcc client`, `server`, `load` and `emulate` (with
//! its IP mode), and what `load` measured.

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::{Args, ValueEnum};
use coapcc_proto::message::Code;
use coapcc_sim::metrics::{RunResult, Summary};

use coapcc_net::load::{self, LoadSpec};

use crate::emulate::EmulateOptions;

use super::emulators;

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
    pub fn code(self) -> Code {
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
    /// Request payload: the bytes of this file.
    #[arg(long, value_name = "FILE", conflicts_with = "payload")]
    pub payload_file: Option<PathBuf>,
    /// Request payload: N deterministic bytes (byte i is ASCII 33 + i mod
    /// 94, the pattern of the server's bytes: resources).
    #[arg(long, value_name = "N", conflicts_with_all = ["payload", "payload_file"])]
    pub payload_size: Option<usize>,
    /// A block-wise transfer (RFC 7959) in blocks of N bytes (16, 32, …,
    /// 1024), one Confirmable exchange per block, each timed by the --cc
    /// algorithm: a GET downloads with Block2 (following a smaller size the
    /// server answers with; at most 64 MiB), a PUT or POST uploads the
    /// payload with Block1. Prints the body (GET) or the final response's
    /// payload, and on standard error the total bytes, blocks, exchanges,
    /// retransmissions and the completion time. A payload over 1024 bytes
    /// is uploaded block-wise in 1024-byte blocks without this option
    /// (coap:// only). With coap+tcp:// the same, one request per block on
    /// the connection (RFC 8323 §6; no BERT).
    #[arg(long, value_name = "N")]
    pub block_size: Option<usize>,
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
    /// coap:// GET only: observe the resource (RFC 7641). Registers with a
    /// Non-confirmable GET carrying Observe 0, prints one line per
    /// notification (its Observe value, CON or NON, payload size, the delay
    /// when the payload is coapcc's `N T` representation, and the payload),
    /// acknowledges Confirmable ones, registers again when Max-Age passes
    /// without one; stops after --notifications, --duration or Ctrl-C,
    /// deregisters (Observe 1, waiting at most 5 s for the answer) and
    /// prints how many notifications came, were discarded as older than one
    /// already seen, and how many re-registrations were sent. Fails if the
    /// server answers without Observe (it does not observe the resource) or
    /// not within --timeout.
    #[arg(long)]
    pub observe: bool,
    /// --observe: stop after N notifications (the registration's response
    /// is the first), 1 to 1 000 000.
    #[arg(long, value_name = "N", requires = "observe")]
    pub notifications: Option<u64>,
    /// --observe: stop after S seconds (at most one day).
    #[arg(long, value_name = "S", requires = "observe")]
    pub duration: Option<f64>,
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
    /// A resource: PATH=SIZE (GET returns SIZE bytes of `x`, at most 1024),
    /// PATH=text:STRING, PATH=store (GET/PUT/POST/DELETE, at most 1024
    /// bytes), PATH=bytes:N (GET returns N deterministic bytes, byte i being
    /// ASCII 33 + i mod 94, served block-wise; at most 16 MiB) or
    /// PATH=upload:LIMIT (PUT/POST, block-wise with Block1 or not, answered
    /// 2.04 with the body's length in decimal as the payload, 2.31 Continue
    /// for each block before the last, 4.13 with Size1 = LIMIT past it; GET
    /// returns the last body; LIMIT at most 16 MiB) or PATH=observe:PERIOD[:K]
    /// (observable, RFC 7641: the representation changes every PERIOD, e.g.
    /// 500ms or 1s, from 10 ms to 1 day; it is `N T` in text/plain, N the
    /// change counter and T the server's wall clock at change N in
    /// microseconds since the Unix epoch; over UDP a GET with Observe 0
    /// registers for notifications, every K-th of them Confirmable, default
    /// 5; at most 4 observers per client address and 1024 per resource).
    /// Repeatable; default: sense=60, large=1000, hello=text, store,
    /// big=bytes:102400, upload=upload:1048576, obs=observe:1s.
    #[arg(long = "resource", value_name = "SPEC")]
    pub resources: Vec<String>,
    /// The algorithm timing the retransmissions of Confirmable
    /// notifications of observable resources (see `coapcc algorithms`): one
    /// instance per observing client address, as a client keeps one per
    /// server. An unacknowledged notification is retransmitted at most 4
    /// times; then the observer is removed.
    #[arg(
        long = "notify-cc",
        alias = "notify-algorithm",
        default_value = "default",
        value_name = "ALGORITHM"
    )]
    pub notify_cc: String,
    /// Do not echo the TC / Rexmit-Cnt options (a server without support).
    #[arg(long)]
    pub no_echo: bool,
    /// UDP: the largest block-wise block (RFC 7959) the server sends with
    /// Block2 and asks for with Block1: 16, 32, …, 1024. A GET answered with
    /// 2.05 is sent in blocks when it asks with Block2 or its payload is
    /// larger; Size2 is sent when asked for.
    #[arg(long, default_value_t = 1024, value_name = "N")]
    pub block_size: usize,
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
    /// get CSM and Abort ("connection limit reached") and are closed at
    /// once (the open ones keep their place).
    #[arg(long, default_value_t = 1024, value_name = "N")]
    pub max_connections: usize,
    /// coap+tcp: close a connection that sent nothing for this many seconds.
    #[arg(long, default_value_t = 300.0, value_name = "S")]
    pub idle_timeout: f64,
    /// coap+tcp: a frame must be complete this many seconds after its first
    /// byte arrived, or the connection gets Abort and is closed (a sender
    /// trickling bytes cannot hold a connection slot; raise it with
    /// --max-message-size on very slow links).
    #[arg(long, default_value_t = 30.0, value_name = "S")]
    pub frame_timeout: f64,
    /// coap+tcp: a peer that takes none of the server's bytes for this many
    /// seconds (it stopped reading) is reset, and a closing connection's
    /// last bytes must be written within it, or the connection is reset
    /// (after that the kernel drops what it still holds), so that its slot
    /// frees.
    #[arg(long, default_value_t = 30.0, value_name = "S")]
    pub flush_timeout: f64,
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
    /// coap:// only: NSTART (RFC 7252 §4.7), the exchanges each client keeps
    /// outstanding, 1 to 16: a client starts K requests at once and the next
    /// one whenever one ends (random workload: a new batch once the last
    /// one's exchanges have all ended), all timed by its one algorithm
    /// instance. The header line reports the most a client had in flight at
    /// once.
    #[arg(long, default_value_t = 1, value_name = "K")]
    pub nstart: usize,
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

/// `coapcc emulate`.
#[derive(Args, Debug, Clone)]
#[command(after_long_help = emulators::emulate_help())]
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
    /// The network model (its help, possible values and what they say are
    /// every emulated network's: [`emulators::network_help`]).
    #[arg(
        long,
        value_name = "KIND",
        value_parser = emulators::network_parser(),
        help = emulators::network_help()
    )]
    pub network: Option<String>,
    /// Take the network from the `[network]` table of a scenario file
    /// (`kind = "grid"`, or the dumbbell); dumbbell options given here
    /// override the file's values.
    #[arg(long, value_name = "FILE.toml")]
    pub scenario: Option<PathBuf>,
    /// The network's options.
    #[command(flatten)]
    pub options: EmulateOptions,
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
    pub ip: Box<IpArgs>,
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
    /// UDP: the most exchanges one client had in flight at once (None over
    /// TCP).
    pub max_outstanding: Option<usize>,
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

/// The options of the IP mode (flattened into `coapcc emulate`).
#[derive(Args, Debug, Clone, Default)]
pub struct IpArgs {
    /// IP mode: put the network between two network namespaces joined by TUN
    /// devices, run --server-cmd in the server namespace and the command
    /// after `--` in the client namespace, tear everything down when the
    /// client command ends (or the server command, or on SIGINT, SIGTERM or
    /// SIGHUP) and exit
    /// with the client command's status. Needs CAP_NET_ADMIN and
    /// /dev/net/tun.
    #[arg(long)]
    pub ip: bool,
    /// IP mode: the server command, run by `sh -c` in the server namespace
    /// (its output goes to standard error).
    #[arg(long, value_name = "'SHELL COMMAND'", requires = "ip")]
    pub server_cmd: Option<String>,
    /// IP mode: set a sysctl in both namespaces before the commands start
    /// (repeatable), e.g. net.ipv4.tcp_sack=0. Only keys the kernel keeps per
    /// network namespace (`net.*`, of net.core only somaxconn, optmem_max,
    /// rps_default_mask, tstamp_allow_data, txrehash and xfrm_*); any other
    /// (kernel.*, vm.*, fs.*, host-wide net.* keys) is refused before anything
    /// is created. The values vanish with the namespaces; the host's stay as
    /// they are.
    #[arg(long, value_name = "KEY=VALUE", requires = "ip")]
    pub sysctl: Vec<String>,
    /// IP mode: write a JSON report at exit (kernel, network, sysctls, relay
    /// counters, kernel counter deltas, exit statuses).
    #[arg(long, value_name = "FILE", requires = "ip")]
    pub report_json: Option<PathBuf>,
    /// IP mode: log every packet the relay reads (JSON lines).
    #[arg(long, value_name = "FILE", requires = "ip")]
    pub packet_log: Option<PathBuf>,
    /// Most IP bytes the relay holds per direction inside the network model
    /// (queued, being sent or propagating), whatever its buffer; a packet
    /// that would exceed it is refused and counted [default: 4194304, above
    /// the 1410000 B that stand for an infinite buffer in the evaluations].
    /// UDP relay and IP mode.
    #[arg(long, value_name = "BYTES")]
    pub max_held_bytes: Option<u64>,
    /// IP mode: the client command and its arguments (after `--`).
    #[arg(last = true, value_name = "CLIENT COMMAND")]
    pub client_cmd: Vec<String>,
}
