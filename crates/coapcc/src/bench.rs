//! `coapcc bench`: one replication of the constrained-link testbed, timed, beside
//! the ns-3 reference simulation of the same network run in the same command.

use std::process::Command;

use anyhow::{anyhow, bail, Context, Result};
use coapcc_sim::{testbed, Buffer, Group, Network, RunSpec, Workload};

use crate::calibrate::published_settings;

/// What the ns-3 reference printed.
#[derive(Debug, Default)]
pub struct Ns3 {
    /// Wall time of its `Simulator::Run()` (s).
    pub wall: f64,
    /// Events it processed.
    pub events: u64,
    /// Its FCT median (s) and unnecessary retransmissions per client.
    pub p50: f64,
    /// Unnecessary retransmissions per client.
    pub unnecessary: f64,
}

/// Parses the one line `run.sh` prints (`key=value` pairs).
pub fn parse_ns3(line: &str) -> Result<Ns3> {
    let mut out = Ns3::default();
    let mut seen = 0;
    for kv in line.split_whitespace() {
        let Some((k, v)) = kv.split_once('=') else {
            continue;
        };
        let num = || {
            v.parse::<f64>()
                .map_err(|_| anyhow!("ns-3 output: `{kv}` is not a number"))
        };
        match k {
            "wall_s" => (out.wall, seen) = (num()?, seen + 1),
            "events" => (out.events, seen) = (num()? as u64, seen + 1),
            "p50" => out.p50 = num()?,
            "unnecessary_per_client" => out.unnecessary = num()?,
            _ => {}
        }
    }
    if seen < 2 {
        bail!("ns-3 output lacks wall_s or events: `{line}`");
    }
    Ok(out)
}

/// Runs the benchmark and prints the comparison.
pub fn run(
    clients: u32,
    buffer: &str,
    algorithm: &str,
    repeat: usize,
    seed: u64,
    ns3: &str,
) -> Result<()> {
    let buffer = Buffer::parse(buffer)
        .ok_or_else(|| anyhow!("--buffer: expected bytes or `inf`, found `{buffer}`"))?;
    let spec = RunSpec {
        network: Network {
            buffer,
            ..Network::default()
        },
        coap: Default::default(),
        groups: vec![Group {
            algorithm: published_settings(algorithm),
            workload: Workload::default(),
            clients,
        }],
        seed,
    };
    testbed::validate(&spec).map_err(|e| anyhow!("{e}"))?;
    let mut walls = Vec::new();
    let mut last = None;
    for _ in 0..repeat.max(1) {
        let (result, wall) = testbed::run_timed(&spec, 0).map_err(|e| anyhow!("{e}"))?;
        walls.push(wall.as_secs_f64());
        last = Some(result);
    }
    walls.sort_by(f64::total_cmp);
    let ours = walls[walls.len() / 2];
    let result = last.expect("at least one run");
    let mut summary = coapcc_sim::Summary::of(algorithm, 0, std::slice::from_ref(&result));
    let events = result.events;
    println!(
        "coapcc: {clients} clients, {algorithm}, buffer {}: event loop {:.4} s (median of {}), {events} events, {:.1} M events/s; FCT median {:.1} s, unnecessary/client median {:.1}",
        buffer.label(),
        ours,
        walls.len(),
        events as f64 / ours / 1e6,
        summary.fct.p50,
        summary.unnecessary.p50,
    );
    summary.histogram.clear();
    if ns3 == "none" {
        return Ok(());
    }
    let ns3_buffer = match buffer {
        Buffer::Bytes(b) => format!("{b}B"),
        Buffer::Infinite => "1410000B".to_string(),
    };
    let out = Command::new(ns3)
        .arg(format!("--clients={clients}"))
        .arg(format!("--buffer={ns3_buffer}"))
        .arg(format!("--seed={seed}"))
        .output()
        .with_context(|| format!("cannot run the ns-3 reference `{ns3}`"))?;
    if !out.status.success() {
        bail!(
            "the ns-3 reference failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().last().unwrap_or_default();
    let n = parse_ns3(line)?;
    println!(
        "ns-3:   Simulator::Run {:.4} s, {} events, {:.1} M events/s; FCT median {:.1} s, unnecessary/client mean {:.1}",
        n.wall,
        n.events,
        n.events as f64 / n.wall / 1e6,
        n.p50,
        n.unnecessary
    );
    println!(
        "speed-up: coapcc is {:.1}x faster than ns-3 on the same work",
        n.wall / ours
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_reference_line() {
        let n = parse_ns3("clients=400 buffer=1410000B finished=400 p10=2427.953 p50=2449.339 p90=2470.020 unnecessary_per_client=195.5 failed_exchanges=0 tx=98186 events=884486 wall_s=1.813").unwrap();
        assert_eq!(n.events, 884_486);
        assert_eq!(n.wall, 1.813);
        assert_eq!(n.p50, 2449.339);
        assert!(parse_ns3("garbage").is_err());
    }
}
