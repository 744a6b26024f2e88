//! The command line's commands (clap's definitions) and what each one runs.

use std::path::PathBuf;
use std::time::Instant;

use crate::campaign::ceiling::Ceilings;
use crate::networks::dumbbell::Dumbbell;
use crate::networks::{LabNetwork, NetworkKind};
use crate::scenario_file::{self, Overrides};
use anyhow::{Context, Result};
use clap::{Parser, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};

#[derive(Parser)]
#[command(
    name = "coapcc",
    version,
    about = "Congestion control for CoAP: every published algorithm, a deterministic testbed of the published evaluations, and real CoAP.",
    long_about = None
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    /// One table per algorithm.
    Table,
    /// One JSON document on stdout.
    Json,
    /// One Markdown table (for papers and docs).
    Markdown,
}

#[derive(Clone, Copy, ValueEnum)]
enum BenchMac {
    /// Contiki's CSMA over nullrdc.
    Contiki,
    /// IEEE 802.15.4 unslotted CSMA/CA.
    Ieee802154,
}

#[derive(Subcommand)]
enum Command {
    /// Run a scenario in the simulated testbed and print the published metrics.
    ///
    /// Without a file, runs the embedded default: the constrained-link testbed
    /// (60/30 kbit/s, 200/400 ms, MTU 296) with the published evaluations'
    /// settings — 100 continuous clients, infinite buffer, no link errors,
    /// Default CoAP vs CoCoA (aging off), MAX_RETRANSMIT 20, 3 replications.
    ///
    /// A scenario runs on the network its `[network] kind` names (listed
    /// below) and prints that network's metrics.
    #[command(after_long_help = NetworkKind::help())]
    Run {
        /// Scenario file (TOML); see scenarios/ for examples.
        scenario: Option<PathBuf>,
        /// Number of clients.
        #[arg(long, value_name = "N")]
        clients: Option<u32>,
        /// Router buffer per direction: bytes of waiting IP packets, or `inf`.
        #[arg(long, value_name = "BYTES|inf")]
        buffer: Option<String>,
        /// Link-error profile: none, low, medium or high.
        #[arg(long, value_name = "PROFILE")]
        errors: Option<String>,
        /// Dumbbell workload: continuous or random (request/response clients),
        /// observe (each client observes a resource that changes every `period`
        /// seconds, RFC 7641) or blockwise (each client downloads or uploads a
        /// representation in blocks, RFC 7959). Settings of another kind given in
        /// the scenario are dropped; the new kind's defaults apply.
        #[arg(long, value_name = "KIND")]
        workload: Option<String>,
        /// Dumbbell scenarios: NSTART, the exchanges a client keeps outstanding at
        /// once (1..=16; request/response workloads only).
        #[arg(long, value_name = "K")]
        nstart: Option<u32>,
        /// Algorithms to compare, comma-separated (see `coapcc algorithms`).
        #[arg(long, value_name = "A,B,…")]
        algorithms: Option<String>,
        /// Replications per algorithm.
        #[arg(long, value_name = "N")]
        replications: Option<u32>,
        /// Scenario seed (each replication derives its own).
        #[arg(long, value_name = "S")]
        seed: Option<u64>,
        /// Grid scenarios: the request period of the periodic clients. Dumbbell
        /// scenarios of the observe workload: seconds between changes of the
        /// observed resource.
        #[arg(long, value_name = "SECONDS")]
        period: Option<f64>,
        /// Output format.
        #[arg(long, value_enum, default_value = "table")]
        format: Format,
        /// Worker threads (default: all cores). Results do not depend on it.
        #[arg(long, value_name = "N")]
        threads: Option<usize>,
        /// Also write replication 0's traffic as a pcap file, decodable as CoAP by
        /// Wireshark/tshark: IPv4/UDP and TCP packets on the dumbbell, IEEE 802.15.4
        /// frames with 6LoWPAN on the grid. With several algorithms, one file per
        /// algorithm: FILE's stem + `-<label>.pcap`.
        #[arg(long, value_name = "FILE")]
        pcap: Option<PathBuf>,
        /// Run even if the estimated memory exceeds what the machine has available, or
        /// the estimated events of one run exceed 10^10 (see docs/security.md).
        #[arg(long)]
        force: bool,
    },
    /// List every algorithm with a one-line description and its spec section.
    Algorithms,
    /// Run every published row of the constrained-link testbed with the published
    /// replication counts and print measured vs published FCT (Markdown).
    ///
    /// With --sensitivity: every disputed reading of the models (an algorithm's
    /// parameter, a TCP mechanism, a property of the link-error process, the lwIP
    /// cwnd variants) run on the rows it touches, one column per reading, the
    /// default first (docs/calibration.md, "Readings and their sensitivity").
    /// With --lossy-star: the lwIP star with a lossy channel, its bit-error rate
    /// fitted to original lwIP's 136 retransmissions and every other published
    /// figure predicted (docs/calibration.md, "The lossy star").
    Calibrate {
        /// Override the replication counts (default: 20 error-free, 40 error-prone;
        /// the scenario files' for the grid and the star).
        #[arg(long, value_name = "N")]
        replications: Option<u32>,
        /// Scenario seed.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Print the sensitivity of every disputed reading instead.
        #[arg(long, conflicts_with = "lossy_star")]
        sensitivity: bool,
        /// With --sensitivity: only the switches whose name contains TEXT (e.g.
        /// `link errors`, `TCP: nodelay`, `pcocoa`).
        #[arg(long, value_name = "TEXT", requires = "sensitivity")]
        only: Option<String>,
        /// Fit the lossy star's bit-error rate and print its predictions instead.
        #[arg(long)]
        lossy_star: bool,
        /// Worker threads (default: all cores).
        #[arg(long, value_name = "N")]
        threads: Option<usize>,
    },
    /// Benchmark one replication against the ns-3 reference in the same run.
    ///
    /// Times coapcc's event loop (set-up excluded) over several repetitions and
    /// runs the ns-3 reference of the same network with the same settings and
    /// seed (`../shared/baselines/ns3/run.sh` for the dumbbell: clients and
    /// buffer; `ns3-grid/run.sh` for the grid: the period), whose `wall_s` also
    /// excludes set-up; prints both and the ratio.
    ///
    /// `--matrix` does so for 100, 400 and 1000 clients × a 2500-byte and an
    /// infinite buffer and prints one Markdown table. `--scenario FILE…`
    /// times every algorithm of each dumbbell scenario (e.g.
    /// scenarios/scale/*.toml) in a fresh child process and prints events,
    /// wall time, events/s, peak resident memory and memory per client, and
    /// the linear-cost table (packets, events per packet, wall per event).
    Bench {
        /// Which network (default: the first listed, the dumbbell); each
        /// runs with its ns-3 reference's settings.
        #[arg(long, value_name = "NETWORK",
              value_parser = clap::builder::PossibleValuesParser::new(NetworkKind::names()))]
        network: Option<String>,
        /// Number of continuous clients (dumbbell, default 400), or of
        /// stations (star, default 12).
        #[arg(long)]
        clients: Option<u32>,
        /// Request period (grid).
        #[arg(long, default_value_t = 10.0, value_name = "SECONDS")]
        period: f64,
        /// MAC profile (grid): `ieee802154` is what the ns-3 reference runs;
        /// `contiki` times the paper's grid instead.
        #[arg(long, default_value = "ieee802154", value_name = "PROFILE")]
        mac: BenchMac,
        /// Router buffer (dumbbell): bytes or `inf`, the default (ns-3 gets
        /// 1410000 B for `inf`).
        #[arg(long, value_name = "BYTES|inf")]
        buffer: Option<String>,
        /// Algorithm (dumbbell: ns-3 always runs Default CoAP; star: a TCP
        /// flavour, default `tcp`, ns-3 runs its NewReno).
        #[arg(long)]
        algorithm: Option<String>,
        /// Repetitions of the coapcc run (the median is reported; --scenario
        /// runs each file's algorithms once).
        #[arg(long, default_value_t = 5)]
        repeat: usize,
        /// Seed (--scenario uses each file's own).
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// The ns-3 reference script, or `none` to skip it (default:
        /// ../shared/baselines/ns3/run.sh, ns3-grid/run.sh for the grid,
        /// baselines/ns3-star/run.sh of this repository for the star). For
        /// LoRaWAN the reference is LoRaSim: its `loraDir.py`, run with
        /// `python3` (none by default).
        #[arg(long, value_name = "SCRIPT|none")]
        ns3: Option<String>,
        /// Skip the ns-3 reference (same as `--ns3 none`).
        #[arg(long, conflicts_with = "ns3")]
        no_reference: bool,
        /// The dumbbell over 100, 400 and 1000 clients × 2500 B and infinite
        /// buffers, each point against the ns-3 reference; one Markdown table.
        #[arg(long, conflicts_with_all = ["scenario", "clients", "buffer"])]
        matrix: bool,
        /// The bare event loop coapcc's cost per event is held to: one binary
        /// heap, the hold model (pop the earliest event, push it back 0.5–1.5 s
        /// later), at 10³, 10⁴, 10⁵ and 10⁶ pending events; one Markdown table.
        /// (`--matrix` prints it beside each point too.)
        #[arg(long, conflicts_with_all = ["scenario", "clients", "buffer", "matrix", "network"])]
        heap: bool,
        /// Dumbbell scenario files to time, every algorithm of each in a fresh
        /// child process (repeat the flag or list several); no ns-3 reference.
        #[arg(long, value_name = "FILE", num_args = 1..)]
        scenario: Vec<PathBuf>,
        /// With --scenario: sizes whose estimated memory (1.25 KiB per client,
        /// see docs/performance.md) exceeds this many GB are not run
        /// (default: the memory the machine has available).
        #[arg(long, value_name = "GB")]
        max_memory: Option<f64>,
        /// Internal: the child of --scenario (runs one algorithm of FILE).
        #[arg(long, hide = true, value_name = "FILE", requires = "child_algorithm")]
        child_run: Option<PathBuf>,
        /// Internal: the algorithm index of --child-run.
        #[arg(long, hide = true, value_name = "I", requires = "child_run")]
        child_algorithm: Option<usize>,
    },
    /// Print the embedded default scenario (a starting point for your own).
    DefaultScenario,
    /// Send CoAP requests to a real server, timed by any algorithm.
    Client(crate::cli::args::ClientArgs),
    /// Serve CoAP resources on a real socket (deduplication, TC / Rexmit-Cnt echo).
    Server(crate::cli::args::ServerArgs),
    /// Run N concurrent real clients against a CoAP server; print the testbed's metrics.
    Load(crate::cli::args::LoadArgs),
    /// Relay UDP between real CoAP clients and a server through a simulated network, in real time.
    Emulate(crate::cli::args::EmulateArgs),
    /// Run a campaign (a whole published evaluation) into a results store.
    ///
    /// Runs every run of the campaign file's matrix missing from the store, on
    /// all cores; results do not depend on the thread count. Each finished run is
    /// committed at once, so an interrupted campaign resumes where it stopped.
    ///
    /// A campaign runs on the network its `[network] kind` names (listed
    /// below).
    ///
    /// Before anything is expanded, run or written, the whole plan is counted
    /// from its sets' sizes and estimated from a sample of its cells: its runs,
    /// their events, the memory the plan holds and the store it writes. A plan
    /// above a ceiling (--max-runs 100000, --max-events 10^11, --max-memory-mib
    /// 4096, --max-store-mib 16384; every shipped campaign is well below) is
    /// refused with the estimate, unless --force.
    #[command(after_long_help = NetworkKind::help())]
    Campaign {
        /// Campaign file (TOML); see scenarios/campaigns/.
        file: PathBuf,
        /// The results store (SQLite; created if missing).
        #[arg(long, value_name = "FILE", default_value = "results.sqlite")]
        store: PathBuf,
        /// Worker threads (default: all cores).
        #[arg(long, value_name = "N")]
        threads: Option<usize>,
        /// Sleep after each stored run (for tests of interruption).
        #[arg(long, hide = true, value_name = "MS")]
        pause_ms: Option<u64>,
        /// Refuse a campaign of more runs (cells × replications) than this.
        #[arg(long, value_name = "N", default_value_t = Ceilings::DEFAULT.runs)]
        max_runs: u64,
        /// Refuse a campaign whose runs are estimated to process more events than
        /// this in all (10^11: hours of computing).
        #[arg(long, value_name = "N", default_value_t = Ceilings::DEFAULT.events)]
        max_events: u64,
        /// Refuse a campaign whose plan is estimated to hold more memory than this
        /// (MiB): its cells, its runs' keys and the runs computed at once.
        #[arg(long, value_name = "MIB", default_value_t = Ceilings::DEFAULT.memory >> 20)]
        max_memory_mib: u64,
        /// Refuse a campaign estimated to write more than this to the store (MiB).
        #[arg(long, value_name = "MIB", default_value_t = Ceilings::DEFAULT.store >> 20)]
        max_store_mib: u64,
        /// Run even if a ceiling above is exceeded, the estimated memory of its runs
        /// exceeds what the machine has available, or the estimated events of one
        /// run exceed 10^10 (see docs/security.md).
        #[arg(long)]
        force: bool,
    },
    /// Hold the TCP model to the host kernel: CoAP over the kernel's TCP through the
    /// IP-level dumbbell, beside the model's TCP with the same mechanisms.
    ///
    /// For every point (configuration × workload × buffer) and replication it runs
    /// `coapcc emulate --ip` with `coapcc server` in one network namespace and
    /// `coapcc load coap+tcp://…` in the other, and the simulator with the matching
    /// profiles (`thesis`: tcp-linux6-nosack with the thesis's SYN retries, written
    /// `tcp-linux:frto+prr+wheel+oow+quickack+ato+rto1s+wscale+oowreset`, and tcp;
    /// `defaults`: tcp-linux6).
    /// Runs go into the results store as they finish (an interrupted check resumes);
    /// the side-by-side table (FCT percentiles with their spread over replications,
    /// retransmitted segments, loss probes, timeouts, spurious RTOs, D-SACKs, bytes
    /// per direction, downlink drops) is printed at the end. Kernel runs take real
    /// time: about 3 minutes each at 100 clients; they need root (CAP_NET_ADMIN) and
    /// /dev/net/tun. See docs/calibration.md, "The TCP model held to the kernel".
    KernelCheck {
        /// The results store (SQLite; created if missing).
        #[arg(long, value_name = "FILE", default_value = "kernel-check.sqlite")]
        store: PathBuf,
        /// Kernel configurations: `thesis` (SACK off: NewReno, as the evaluations
        /// configured Linux 4.9), `defaults` (this kernel's loss recovery), both
        /// with Nagle on as the evaluations' libcoap left it, and
        /// `thesis-nodelay` (`thesis` with TCP_NODELAY on both ends).
        #[arg(long, value_name = "LIST", default_value = "thesis,defaults")]
        configs: String,
        /// Workloads: continuous and/or random.
        #[arg(long, value_name = "LIST", default_value = "continuous,random")]
        workloads: String,
        /// Router buffers: `inf` and/or bytes.
        #[arg(long, value_name = "LIST", default_value = "inf,2500")]
        buffers: String,
        /// Replications per point and TCP.
        #[arg(long, default_value_t = 5, value_name = "N")]
        replications: u32,
        /// Clients per run.
        #[arg(long, default_value_t = 100, value_name = "N")]
        clients: u32,
        /// Exchanges per client.
        #[arg(long, default_value_t = 50, value_name = "N")]
        exchanges: u32,
        /// Base seed (replication r uses seed + r).
        #[arg(long, default_value_t = 1, value_name = "S")]
        seed: u64,
        /// Wall-time limit of one kernel run (s).
        #[arg(long, default_value_t = 1800.0, value_name = "S")]
        time_limit: f64,
        /// Kernel runs at once, 1 to 64, each in network namespaces of its own
        /// (the relay and the stacks use little CPU; keep the machine otherwise
        /// idle). SIGINT, SIGTERM or SIGHUP stop the runs in progress, which tear
        /// their namespaces down; the runs finished stay stored.
        #[arg(long, default_value_t = 1, value_name = "N")]
        parallel: usize,
        /// Run only the model's side (no root needed).
        #[arg(long, conflicts_with = "kernel_only")]
        model_only: bool,
        /// Run only the kernel's side.
        #[arg(long)]
        kernel_only: bool,
        /// Print the table of what the store holds; run nothing.
        #[arg(long, conflicts_with_all = ["model_only", "kernel_only"])]
        table_only: bool,
    },
    /// Write the report of a results store: one HTML page, SVG figures, CSV tables.
    Report {
        /// The results store written by `coapcc campaign`.
        store: PathBuf,
        /// Output directory.
        #[arg(long, value_name = "DIR", default_value = "report")]
        out: PathBuf,
        /// Which campaign definition (name or hash prefix; default: the one run last).
        #[arg(long, value_name = "NAME|HASH")]
        campaign: Option<String>,
    },
}

/// Parses the command line and runs its command.
pub(super) fn run() -> Result<()> {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // --help and --version: their text goes to standard output, and a
        // failed write is an error like any other command's
        Err(e) if !e.use_stderr() => {
            use std::io::Write;
            return e
                .print()
                .and_then(|()| std::io::stdout().flush())
                .context("cannot write to standard output");
        }
        Err(e) => e.exit(),
    };
    match cli.command {
        Command::Run {
            scenario,
            clients,
            buffer,
            errors,
            workload,
            nstart,
            algorithms,
            replications,
            seed,
            format,
            threads,
            pcap,
            period,
            force,
        } => {
            let source = match scenario {
                Some(p) => crate::api::Source::Path(p),
                None => crate::api::Source::Default,
            };
            let overrides = Overrides {
                clients,
                buffer,
                errors,
                workload,
                nstart,
                algorithms,
                replications,
                seed,
                period,
            };
            let (scenario, _, threads) =
                crate::api::prepare(&source, &overrides, threads, "--threads", force)?;
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .context("cannot start worker threads")?;
            if let Some(path) = &pcap {
                scenario.check_pcap()?;
                check_pcap_paths(path, &scenario.labels())?;
            }
            let total = scenario.planned_runs();
            let bar = crate::cli::progress::RunProgress::new(total);
            let started = Instant::now();
            let ran = scenario.run_on(&pool, &|| bar.inc(), &coapcc_sim::stop::NEVER)?;
            bar.finish();
            match format {
                Format::Json => crate::outln!("{}", ran.json())?,
                Format::Markdown => crate::out!("{}", ran.markdown())?,
                Format::Table => {
                    crate::out!("{}", ran.table())?;
                    crate::outln!(
                        "\n{total} runs, {} events in {:.2} s wall time",
                        ran.events(),
                        started.elapsed().as_secs_f64()
                    )?;
                }
            }
            // after the results, so a pcap that cannot be written loses nothing
            if let Some(path) = &pcap {
                write_pcaps(&scenario, path)?;
            }
            Ok(())
        }
        Command::Algorithms => {
            // CoAP algorithms: state per destination. CoAP over TCP: the
            // socket a connection holds (`size_of`; its buffers and queues
            // are on the heap), at each end.
            crate::outln!("{:<21} {:<9} {:>6}  description", "name", "spec", "state")?;
            for a in coapcc_rto::registry::all() {
                let approx = if a.approximate { " (approximate)" } else { "" };
                crate::outln!(
                    "{:<21} {:<9} {:>4} B  {}{}",
                    a.name,
                    a.section,
                    a.state_bytes,
                    a.summary,
                    approx
                )?;
            }
            for p in coapcc_tcp::PROFILES {
                crate::outln!(
                    "{:<21} {:<9} {:>4} B  {}",
                    p.name,
                    p.section,
                    p.profile.state_bytes(),
                    p.summary
                )?;
            }
            Ok(())
        }
        Command::Calibrate {
            replications,
            seed,
            sensitivity,
            only,
            lossy_star,
            threads,
        } => {
            if sensitivity || lossy_star {
                return crate::cli::calibrate::run(replications, seed, sensitivity, only, threads);
            }
            let bar = ProgressBar::new_spinner();
            bar.set_style(
                ProgressStyle::with_template("{spinner} {pos} runs, {elapsed}")
                    .expect("valid template"),
            );
            let rows = crate::calibrate::run(seed, replications, &|| bar.inc(1))?;
            bar.finish_and_clear();
            crate::out!("{}", crate::calibrate::markdown(&rows))?;
            Ok(())
        }
        Command::Bench {
            network,
            clients,
            period,
            mac,
            buffer,
            algorithm,
            repeat,
            seed,
            ns3,
            no_reference,
            matrix,
            heap,
            scenario,
            max_memory,
            child_run,
            child_algorithm,
        } => {
            if let (Some(file), Some(i)) = (&child_run, child_algorithm) {
                return crate::outln!(
                    "{}",
                    crate::networks::dumbbell::bench::scale::child(file, i)?
                );
            }
            if heap {
                let load_before = crate::bench::load_average();
                let points: Vec<_> = crate::bench::heap::PENDING
                    .iter()
                    .map(|&pending| {
                        eprintln!("bench: bare heap loop, {pending} pending events");
                        crate::bench::heap::measure(pending, repeat)
                    })
                    .collect();
                crate::out!("{}", crate::bench::heap::markdown(&points, repeat))?;
                return crate::outln!(
                    "\nLoad average (1 min) before: {load_before}, after: {}.",
                    crate::bench::load_average()
                );
            }
            let ns3 = if no_reference {
                Some("none".to_string())
            } else {
                ns3
            };
            let dumbbell_only = matrix || !scenario.is_empty();
            let network = network
                .as_deref()
                .and_then(NetworkKind::named)
                .unwrap_or_else(NetworkKind::default_kind);
            if dumbbell_only && network.name() != Dumbbell::NAME {
                anyhow::bail!(
                    "--network: --matrix and --scenario run the dumbbell; drop --network"
                );
            }
            if !scenario.is_empty() {
                let not_here = [
                    ("--clients", clients.is_some()),
                    ("--buffer", buffer.is_some()),
                    ("--algorithm", algorithm.is_some()),
                    ("--ns3", ns3.as_deref().is_some_and(|s| s != "none")),
                ];
                if let Some((flag, _)) = not_here.iter().find(|(_, set)| *set) {
                    anyhow::bail!(
                        "{flag}: --scenario takes its clients, buffer and algorithms from the \
                         files and runs no ns-3 reference"
                    );
                }
                let limit = match max_memory {
                    Some(gb) if gb.is_finite() && gb > 0.0 => Some((gb * 1e9) as u64),
                    Some(gb) => {
                        anyhow::bail!("--max-memory: expected a positive number of GB, found {gb}")
                    }
                    None => crate::budget::available_memory(),
                };
                let load_before = crate::bench::load_average();
                let rows = crate::networks::dumbbell::bench::scale::run(&scenario, limit)?;
                crate::out!(
                    "{}",
                    crate::networks::dumbbell::bench::scale::markdown(&rows)
                )?;
                return crate::outln!(
                    "\nLoad average (1 min) before: {load_before}, after: {}.",
                    crate::bench::load_average()
                );
            }
            if max_memory.is_some() {
                anyhow::bail!("--max-memory: applies to --scenario only");
            }
            if matrix {
                let script = ns3
                    .clone()
                    .unwrap_or_else(|| crate::networks::dumbbell::bench::NS3.into());
                let reference = (script != "none").then_some(script.as_str());
                if let Some(r) = reference {
                    crate::bench::check_reference(r)?;
                }
                let algorithm = algorithm.as_deref().unwrap_or("default");
                let load_before = crate::bench::load_average();
                let points = crate::networks::dumbbell::bench::matrix::run(
                    algorithm, repeat, seed, reference,
                )?;
                crate::out!(
                    "{}",
                    crate::networks::dumbbell::bench::matrix::markdown(&points, algorithm, repeat)
                )?;
                return crate::outln!(
                    "\nLoad average (1 min) before: {load_before}, after: {}.",
                    crate::bench::load_average()
                );
            }
            let options = crate::bench::BenchOptions {
                clients,
                period,
                mac: match mac {
                    BenchMac::Contiki => coapcc_link::grid::MacProfile::Contiki,
                    BenchMac::Ieee802154 => coapcc_link::grid::MacProfile::Ieee802154,
                },
                buffer,
                algorithm,
                repeat,
                seed,
                ns3,
            };
            network
                .network()
                .bench(&options, &mut |line| crate::outln!("{line}"))
        }
        Command::DefaultScenario => {
            crate::out!("{}", scenario_file::DEFAULT_SCENARIO)?;
            Ok(())
        }
        Command::Client(args) => crate::cli::net::client(args),
        Command::Server(args) => crate::cli::net::server(args).map(|_| ()),
        Command::Load(args) => {
            let json = args.format == crate::cli::args::LoadFormat::Json;
            let no_fail = args.no_fail;
            let o = crate::cli::net::load(args)?;
            if json {
                crate::outln!("{}", crate::cli::net::load_json(&o))?;
            } else {
                crate::out!("{}", load_table(&o))?;
            }
            o.check(no_fail)
        }
        Command::Emulate(args) if args.ip.ip => {
            std::process::exit(crate::cli::ip::emulate_ip(args)?)
        }
        Command::Emulate(args) => crate::cli::net::emulate(args).map(|_| ()),
        Command::Campaign {
            file,
            store,
            threads,
            pause_ms,
            max_runs,
            max_events,
            max_memory_mib,
            max_store_mib,
            force,
        } => crate::cli::campaign::run(
            &file,
            &store,
            threads,
            pause_ms,
            &Ceilings {
                runs: max_runs,
                events: max_events,
                memory: max_memory_mib.saturating_mul(1 << 20),
                store: max_store_mib.saturating_mul(1 << 20),
            },
            force,
        ),
        Command::Report {
            store,
            out,
            campaign,
        } => crate::cli::report::run(&store, &out, campaign.as_deref()),
        Command::KernelCheck {
            store,
            configs,
            workloads,
            buffers,
            replications,
            clients,
            exchanges,
            seed,
            time_limit,
            parallel,
            model_only,
            kernel_only,
            table_only,
        } => {
            use crate::kernel_check::{self, point};
            let configs = point::parse_list(
                &configs,
                "--configs",
                point::config_named,
                "thesis, defaults",
            )?;
            let workloads = point::parse_list(
                &workloads,
                "--workloads",
                point::workload_named,
                "continuous, random",
            )?;
            let buffers = point::parse_list(
                &buffers,
                "--buffers",
                point::buffer_named,
                "inf or a number of bytes ≥ 1",
            )?;
            crate::budget::check_replications("--replications", replications)?;
            if clients == 0 || exchanges == 0 {
                anyhow::bail!("--clients and --exchanges must be at least 1");
            }
            let time_limit = crate::duration::seconds("time-limit", time_limit)?.as_secs_f64();
            let parallel = kernel_check::check_parallel(parallel)?;
            kernel_check::check_store_path(&store)?;
            let points = point::points(&configs, &workloads, &buffers, clients, exchanges);
            if table_only {
                let st = crate::networks::open_store_read_only(&store)?;
                crate::out!("{}", kernel_check::tables(&st, Some(&points))?)?;
                return Ok(());
            }
            let st = crate::networks::open_store(&store)?;
            let opts = kernel_check::Options {
                points: points.clone(),
                replications,
                seed,
                kernel: !model_only,
                model: !kernel_only,
                exe: std::env::current_exe().context("cannot find the coapcc executable")?,
                time_limit,
                parallel,
            };
            let done = kernel_check::run(&opts, &st, &mut |line| eprintln!("{line}"))?;
            eprintln!(
                "{} kernel run(s) and {} model run(s) made, {} found in {}",
                done.kernel_runs,
                done.model_runs,
                done.reused,
                store.display()
            );
            crate::out!("{}", kernel_check::tables(&st, Some(&points))?)?;
            Ok(())
        }
    }
}

/// Fails, naming the file, if a pcap file of `--pcap path` cannot be
/// created; leaves nothing behind.
fn check_pcap_paths(path: &std::path::Path, labels: &[&str]) -> Result<()> {
    for label in labels {
        let file = pcap_path(path, label, labels.len() > 1);
        let existed = file.exists();
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(&file)
            .with_context(|| format!("--pcap: cannot create {}", file.display()))?;
        if !existed {
            let _ = std::fs::remove_file(&file);
        }
    }
    Ok(())
}

/// The pcap file of algorithm `label`: `path` itself with one algorithm,
/// else `path`'s stem + `-<label>.pcap`.
fn pcap_path(path: &std::path::Path, label: &str, several: bool) -> std::path::PathBuf {
    if several {
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_default();
        path.with_file_name(format!("{stem}-{label}.pcap"))
    } else {
        path.to_path_buf()
    }
}

/// Re-runs replication 0 of each algorithm with a pcap tap (runs are
/// deterministic, so this is the same traffic as the run just reported).
fn write_pcaps(scenario: &crate::networks::AnyScenario, path: &std::path::Path) -> Result<()> {
    let labels = scenario.labels();
    let several = labels.len() > 1;
    for (i, label) in labels.iter().enumerate() {
        let file = pcap_path(path, label, several);
        let (n, unit) = scenario.write_pcap(i, &file)?;
        eprintln!("wrote {n} {unit} to {}", file.display());
    }
    Ok(())
}

/// `coapcc load`'s table: what a load generator measures of the summary
/// (not the bottleneck's counters) under a header saying what was measured.
fn load_table(o: &crate::cli::args::LoadOutcome) -> String {
    let tables = if o.transport == crate::cli::args::Transport::Tcp {
        crate::networks::dumbbell::output::tcp_load_tables(std::slice::from_ref(&o.summary))
    } else {
        crate::networks::dumbbell::output::load_tables(std::slice::from_ref(&o.summary))
    };
    format!("{}\n{}", crate::cli::net::load_header(o), tables)
}
