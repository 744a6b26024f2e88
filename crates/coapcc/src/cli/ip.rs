//! `coapcc emulate --ip`: the network model between two network namespaces
//! joined by TUN devices, with a server command and a client command run in
//! them (`coapcc_net::ip`). See docs/real-network.md, "IP mode".

use std::io::Write;

use anyhow::{bail, Context, Result};
use coapcc_net::ip::session::{self, Ending, SessionOutcome, SessionSpec};
use coapcc_net::ip::{self, signals, IpEmulation, IpOptions, IpRelayOptions, RelayReport};
use coapcc_net::tokio;
use serde_json::{json, Value};

use crate::cli::args::EmulateArgs;
use crate::cli::emulated::emulate_network;

/// The exit status of `coapcc emulate --ip` when the server command ended
/// before the client command.
pub const SERVER_ENDED_FIRST: i32 = 125;

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
    let sysctls = ip::sysctl::parse(&args.ip.sysctl)?;
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
    // Ctrl-C, SIGTERM or SIGHUP (the terminal closed) during the set-up:
    // caught, then everything set up so far is torn down before exiting
    let mut stop = {
        let _guard = rt.enter();
        signals::listen()?
    };
    let emu = IpEmulation::start(opts)?;
    let early_stop = rt.block_on(async {
        tokio::select! {
            biased;
            n = signals::first(&mut stop) => Some(n),
            _ = std::future::ready(()) => None,
        }
    });
    if let Some(n) = early_stop {
        // the terminal may be gone: a failed write must not stop the teardown
        let _ = writeln!(
            std::io::stderr(),
            "coapcc emulate --ip: {} during set-up; tearing down",
            signals::name(n)
        );
        emu.stop()?;
        return Ok(128 + n);
    }
    let a = emu.addressing();
    let _ = writeln!(
        std::io::stderr(),
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
    // the terminal may be gone (SIGHUP): a failed write is no reason to lose
    // the report
    let _ = writeln!(
        std::io::stderr(),
        "{}\n{}",
        direction_line("uplink (client → server)", &relay.uplink),
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
        Ending::HungUp => 129,
    })
}
