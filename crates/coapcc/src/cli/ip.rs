//! `coapcc emulate --ip`: the network model between two network namespaces
//! joined by TUN devices, with a server command and a client command run in
//! them (`coapcc_net::ip`). See docs/real-network.md, "IP mode".

use anyhow::{anyhow, bail, Context, Result};
use coapcc_net::ip::session::{self, Ending, SessionOutcome, SessionSpec};
use coapcc_net::ip::{self, IpEmulation, IpOptions, IpRelayOptions, RelayReport};
use coapcc_net::tokio;
use serde_json::{json, Value};

use crate::cli::args::EmulateArgs;
use crate::cli::emulated::emulate_network;

/// The exit status of `coapcc emulate --ip` when the server command ended
/// before the client command.
pub const SERVER_ENDED_FIRST: i32 = 125;

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
    let mut v = net.config_json();
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
