//! `coapcc emulate --ip`: the network model between two network namespaces
//! joined by TUN devices, with a server command and a client command run in
//! them (`coapcc_net::ip`). See docs/real-network.md, "IP mode".

use std::path::PathBuf;

use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use coapcc_link::star;
use coapcc_net::emulate::EmulatedNetwork;
use coapcc_net::ip::session::{self, Ending, SessionOutcome, SessionSpec};
use coapcc_net::ip::{self, IpEmulation, IpOptions, IpRelayOptions, RelayReport};
use coapcc_net::tokio;
use serde_json::{json, Value};

use crate::net_cli::{emulate_network, network_table, EmulateArgs};

/// The exit status of `coapcc emulate --ip` when the server command ended
/// before the client command.
pub const SERVER_ENDED_FIRST: i32 = 125;

/// The options of the IP mode (flattened into `coapcc emulate`).
#[derive(Args, Debug, Clone, Default)]
pub struct IpArgs {
    /// IP mode: put the network between two network namespaces joined by TUN
    /// devices, run --server-cmd in the server namespace and the command
    /// after `--` in the client namespace, tear everything down when the
    /// client command ends (or the server command, or on Ctrl-C) and exit
    /// with the client command's status. Needs CAP_NET_ADMIN and
    /// /dev/net/tun.
    #[arg(long)]
    pub ip: bool,
    /// IP mode: the server command, run by `sh -c` in the server namespace
    /// (its output goes to standard error).
    #[arg(long, value_name = "'SHELL COMMAND'", requires = "ip")]
    pub server_cmd: Option<String>,
    /// IP mode: set a sysctl in both namespaces before the commands start
    /// (repeatable), e.g. net.ipv4.tcp_sack=0.
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

/// The star of `--network star` or of a scenario with `kind = "star"`:
/// refuses the dumbbell's and the grid's options.
pub(crate) fn star_network(
    args: &EmulateArgs,
    file: Option<(String, String)>,
) -> Result<EmulatedNetwork> {
    let others = [
        ("--scale", args.scale.is_some_and(|f| f != 1.0)),
        ("--nodes", !args.nodes.is_empty()),
    ];
    if let Some((flag, _)) = args
        .dumbbell_options()
        .iter()
        .chain(&others)
        .find(|(_, set)| *set)
    {
        bail!(
            "{flag}: does not apply to the Wi-Fi star (its timings are 802.11 constants and its \
             buffers the nodes' queues; set its parameters in a scenario's [network] table with \
             kind = \"star\" and pass it with --scenario)"
        );
    }
    let (config, origin) = match &file {
        Some((text, origin)) => (
            network_table::<star::Config>(text, origin)?,
            origin.as_str(),
        ),
        None => (star::Config::default(), "--network star"),
    };
    config.validate().map_err(|e| anyhow!("{origin}: {e}"))?;
    Ok(EmulatedNetwork::Star(config))
}

fn parse_sysctls(given: &[String]) -> Result<Vec<(String, String)>> {
    given
        .iter()
        .map(|s| {
            let (k, v) = s
                .split_once('=')
                .filter(|(k, v)| !k.trim().is_empty() && !v.trim().is_empty())
                .ok_or_else(|| anyhow!("--sysctl: expected KEY=VALUE, found `{s}`"))?;
            let k = k.trim();
            if !k
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
            {
                bail!("--sysctl: `{k}` is not a sysctl name (letters, digits, `.`, `_`, `-`)");
            }
            Ok((k.to_string(), v.trim().to_string()))
        })
        .collect()
}

/// The network's parameters as the report shows them.
fn network_json(emu: &IpEmulation, seed: u64) -> Value {
    let net = emu.network();
    let mut v = match net {
        EmulatedNetwork::Dumbbell(c) => serde_json::to_value(c),
        EmulatedNetwork::Grid { config, .. } => serde_json::to_value(config),
        EmulatedNetwork::Star(c) => serde_json::to_value(c),
    }
    .unwrap_or(Value::Null);
    if let Value::Object(m) = &mut v {
        m.insert("kind".into(), json!(net.kind()));
        m.insert("seed".into(), json!(seed));
        m.insert("tun_mtu".into(), json!(emu.mtu()));
        m.insert(
            "server_addr".into(),
            json!(emu.addressing().server.to_string()),
        );
        m.insert(
            "client_addr".into(),
            json!(emu.addressing().client.to_string()),
        );
        let addrs: Vec<String> = emu.node_addrs().iter().map(|a| a.to_string()).collect();
        m.insert("client_addrs".into(), json!(addrs));
        m.insert("client_nodes".into(), json!(net.client_nodes()));
        m.insert("server_node".into(), json!(net.server_node()));
    }
    v
}

/// The `--report-json` document.
pub fn report_json(network: Value, o: &SessionOutcome, relay: &RelayReport) -> Value {
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_default();
    json!({
        "kernel": kernel,
        "network": network,
        "sysctl": o.sysctl,
        "relay": relay,
        "counters": o.counters,
        "client_status": o.client_status,
        "server_status": o.server_status,
        "ending": o.ending,
    })
}

fn direction_line(name: &str, d: &ip::DirectionReport) -> String {
    let map = |m: &std::collections::BTreeMap<String, u64>| {
        if m.is_empty() {
            "none".to_string()
        } else {
            m.iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect::<Vec<_>>()
                .join(", ")
        }
    };
    format!(
        "{name}: {} packets ({} IP bytes), {} delivered, dropped: {}, refused: {}, {} still inside",
        d.packets,
        d.bytes,
        d.delivered,
        map(&d.dropped),
        map(&d.refused),
        d.in_flight
    )
}

/// Runs `coapcc emulate --ip`; returns the exit status (see
/// docs/real-network.md, "IP mode").
pub fn emulate_ip(args: EmulateArgs) -> Result<i32> {
    let Some(server_cmd) = args.ip.server_cmd.clone() else {
        bail!("--ip: expected --server-cmd 'SHELL COMMAND' (run in the server namespace)");
    };
    if args.ip.client_cmd.is_empty() {
        bail!("--ip: expected the client command after `--` (run in the client namespace)");
    }
    if args.duration.is_some() {
        bail!("--duration: the IP mode runs until the client command ends");
    }
    let network = emulate_network(&args)?;
    let sysctls = parse_sysctls(&args.ip.sysctl)?;
    let defaults = IpRelayOptions::default();
    if args.ip.max_held_bytes == Some(0) {
        bail!("--max-held-bytes: expected at least 1");
    }
    let opts = IpOptions {
        relay: IpRelayOptions {
            network,
            seed: args.seed,
            max_held_bytes: args.ip.max_held_bytes.unwrap_or(defaults.max_held_bytes),
            packet_log: args.ip.packet_log.clone(),
            ..defaults
        },
        sysctls,
    };
    if let Some(p) = &args.ip.report_json {
        // fail before anything runs rather than at the end
        std::fs::write(p, b"")
            .with_context(|| format!("--report-json: cannot write `{}`", p.display()))?;
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    // Ctrl-C or SIGTERM during the set-up: caught, then everything set up
    // so far is torn down before exiting
    let (mut sigint, mut sigterm) = {
        let _guard = rt.enter();
        use tokio::signal::unix::{signal, SignalKind};
        (
            signal(SignalKind::interrupt()).context("cannot handle SIGINT")?,
            signal(SignalKind::terminate()).context("cannot handle SIGTERM")?,
        )
    };
    let emu = IpEmulation::start(opts)?;
    let early_stop = rt.block_on(async {
        tokio::select! {
            biased;
            _ = sigint.recv() => Some(130),
            _ = sigterm.recv() => Some(143),
            _ = std::future::ready(()) => None,
        }
    });
    if let Some(code) = early_stop {
        eprintln!("coapcc emulate --ip: interrupted during set-up; tearing down");
        emu.stop()?;
        return Ok(code);
    }
    let a = emu.addressing();
    eprintln!(
        "coapcc emulate --ip: {} network between namespaces {} (client {}) and {} (server {}), MTU {}",
        emu.network().kind(),
        emu.client_ns().name(),
        a.client,
        emu.server_ns().name(),
        a.server,
        emu.mtu()
    );
    let network = network_json(&emu, args.seed);
    let spec = SessionSpec::new(&server_cmd, &args.ip.client_cmd);
    let outcome = rt.block_on(session::run_session(&emu, &spec));
    let relay = emu.stop()?;
    let outcome = outcome?;
    eprintln!(
        "{}",
        direction_line("uplink (client → server)", &relay.uplink)
    );
    eprintln!(
        "{}",
        direction_line("downlink (server → client)", &relay.downlink)
    );
    if let Some(p) = &args.ip.report_json {
        let doc = report_json(network, &outcome, &relay);
        std::fs::write(p, serde_json::to_string_pretty(&doc)? + "\n")
            .with_context(|| format!("--report-json: cannot write `{}`", p.display()))?;
    }
    Ok(match outcome.ending {
        Ending::ClientEnded => outcome.client_status.unwrap_or(1),
        Ending::ServerEnded => SERVER_ENDED_FIRST,
        Ending::Interrupted => 130,
        Ending::Terminated => 143,
    })
}

/// What `coapcc emulate --network star` (the UDP relay) prints at exit.
pub(crate) fn star_summary(
    r: &coapcc_net::emulate::EmulatorReport,
    s: &star::StarRecord,
    mappings: &str,
) -> String {
    let dir = |name: &str, c: &coapcc_net::emulate::DatagramCounts| {
        format!(
            "{name}: {} datagrams ({} bytes): {} delivered, {} dropped in the star, {} refused (too large), {} refused (relay full), {} in flight",
            c.received,
            c.bytes,
            c.delivered,
            c.dropped,
            c.refused_too_large,
            c.refused_full,
            c.in_flight()
        )
    };
    format!(
        "{}\n{}\n\
         star frames: {} data frames ({} delivered, {} collided in {} collisions), {} retries, \
         {:.3} s of airtime; drops: {} after the retry limit, {} at full queues\n{mappings}",
        dir("upstream (clients → server)", &r.upstream),
        dir("downstream (server → clients)", &r.downstream),
        s.data_frames,
        s.delivered_frames,
        s.collided_frames,
        s.collisions,
        s.retries,
        s.busy,
        s.retry_drops,
        s.queue_drops
    )
}
