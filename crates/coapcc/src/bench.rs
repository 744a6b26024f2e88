//! `coapcc bench`: one replication of a network, timed, beside the ns-3
//! reference simulation of the same network run in the same command — the
//! constrained-link dumbbell (`../shared/baselines/ns3`) or the 802.15.4 grid
//! (`../shared/baselines/ns3-grid`) — over one point, over the matrix of
//! [`matrix`], or over the scale scenarios of [`scale`]; and the bare
//! binary-heap event loop of [`heap`] that coapcc's cost per event is held to.

pub mod heap;
pub mod matrix;
pub mod peak_rss;
pub mod scale;

use std::collections::HashMap;
use std::process::Command;

use anyhow::{anyhow, bail, Context, Result};
use coapcc_link::dumbbell::Buffer;
use coapcc_link::grid::{self, layout::Routing, sixlowpan::Addressing, MacProfile};
use coapcc_sim::dumbbell::{DumbbellSim, Group, Network, RunSpec};
use coapcc_sim::grid::{GridRunSpec, GridSim, GridSummary, GridWorkload};
use coapcc_sim::network::SimNetwork;
use coapcc_sim::star::StarSim;
use coapcc_sim::{dumbbell, AlgorithmSpec, RunResult, Workload};

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

/// The 1-minute load average of the machine (`/proc/loadavg`), or `?`
/// where it cannot be read: printed with the tables, since other work on
/// the machine moves every wall time.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|t| t.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into())
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

/// The `key=value` pairs of the one line a reference script prints.
pub fn parse_kv(line: &str) -> HashMap<String, f64> {
    line.split_whitespace()
        .filter_map(|kv| kv.split_once('='))
        .filter_map(|(k, v)| v.parse::<f64>().ok().map(|v| (k.to_string(), v)))
        .collect()
}

/// Runs a reference script with `args`; its last output line.
fn run_reference(script: &str, args: &[String]) -> Result<String> {
    let out = Command::new(script)
        .args(args)
        .output()
        .with_context(|| format!("cannot run the ns-3 reference `{script}`"))?;
    if !out.status.success() {
        bail!(
            "the ns-3 reference failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let text = String::from_utf8_lossy(&out.stdout);
    Ok(text.lines().last().unwrap_or_default().to_string())
}

/// The grid as the ns-3 reference runs it (`ns3-grid/README.md`): 16-bit
/// addresses, no RPL option, root routing, 8 transmissions, 8-frame
/// queues, Default CoAP with RTO [3, 4.5] s and MAX_RETRANSMIT 4, period
/// `period`, 60 s warm-up, 800 s; the MAC profile `mac`. With the `contiki`
/// profile, the pCoCoA paper's grid instead (the defaults of the grid).
pub fn grid_reference_spec(period: f64, mac: MacProfile, seed: u64) -> GridRunSpec {
    let network = match mac {
        MacProfile::Ieee802154 => grid::Config {
            mac,
            routing: Routing::Root,
            addressing: Addressing::Short,
            hop_by_hop: false,
            reassembly: grid::Reassembly::PerSender,
            ..grid::Config::default()
        },
        MacProfile::Contiki => grid::Config::default(),
    };
    GridRunSpec {
        network,
        coap: Default::default(),
        workload: GridWorkload {
            period_s: period,
            ..GridWorkload::default()
        },
        algorithm: AlgorithmSpec {
            ack_timeout: Some(3.0),
            ..AlgorithmSpec::named("default")
        },
        seed,
    }
}

/// `coapcc bench --network grid`: one 800 s run of the grid, timed, beside
/// the ns-3 reference's run at the same period and seed.
pub fn run_grid(
    period: f64,
    mac: MacProfile,
    repeat: usize,
    seed: u64,
    ns3: &str,
    out: &mut dyn FnMut(String) -> Result<()>,
) -> Result<()> {
    if ns3 != "none" {
        check_reference(ns3)?;
    }
    let spec = grid_reference_spec(period, mac, seed);
    coapcc_sim::grid::validate(&spec).map_err(|e| anyhow!("{e}"))?;
    let mut walls = Vec::new();
    let mut last = None;
    for _ in 0..repeat.max(1) {
        let (result, wall) = GridSim::run_timed(&spec, 0).map_err(|e| anyhow!("{e}"))?;
        walls.push(wall.as_secs_f64());
        last = Some(result);
    }
    walls.sort_by(f64::total_cmp);
    let ours = walls[walls.len() / 2];
    let result = last.expect("at least one run");
    let s = GridSummary::of("default", &spec, std::slice::from_ref(&result));
    let mac_drops: u64 = result.nodes.iter().map(|n| n.mac.mac_drops).sum();
    let overflows: u64 = result.nodes.iter().map(|n| n.mac.overflows).sum();
    let mac_name = match mac {
        MacProfile::Contiki => "contiki",
        MacProfile::Ieee802154 => "ieee802154",
    };
    out(format!(
        "coapcc: grid, {mac_name} MAC, T = {period} s, 800 s: event loop {ours:.4} s (median of {}), {} events, {:.1} M events/s; carried {:.1} B/s, {:.3} transmissions/transaction, {mac_drops} MAC drops, {overflows} MAC buffer overflows",
        walls.len(),
        result.events,
        result.events as f64 / ours / 1e6,
        s.carried.mean,
        s.tx_per_transaction.mean,
    ))?;
    if ns3 == "none" {
        return Ok(());
    }
    let line = run_reference(
        ns3,
        &[
            format!("--period={period}"),
            format!("--seed={seed}"),
            "--routing=root".into(),
        ],
    )?;
    let kv = parse_kv(&line);
    let get = |k: &str| {
        kv.get(k)
            .copied()
            .ok_or_else(|| anyhow!("ns-3 output lacks `{k}`: `{line}`"))
    };
    let (wall, events) = (get("wall_s")?, get("events")?);
    out(format!(
        "ns-3:   Simulator::Run {wall:.3} s, {events} events, {:.2} M events/s; carried {:.1} B/s, {:.3} transmissions/transaction, {} MAC drops, {} MAC queue drops",
        events / wall / 1e6,
        get("carried_Bps")?,
        get("tx_per_transaction")?,
        get("mac_tx_fail")?,
        get("mac_queue_drops")?,
    ))?;
    out(format!(
        "speed-up: coapcc is {:.1}x faster than ns-3 on the same network",
        wall / ours
    ))?;
    Ok(())
}

/// `coapcc bench --network star`: one run of the Wi-Fi star (12 stations,
/// 1000 writes each, TCP `algorithm`), timed, beside this project's ns-3
/// reference of the same star (`baselines/ns3-star`, ns-3's NewReno).
pub fn run_star(
    stations: u32,
    algorithm: &str,
    repeat: usize,
    seed: u64,
    ns3: &str,
    out: &mut dyn FnMut(String) -> Result<()>,
) -> Result<()> {
    if ns3 != "none" {
        check_reference(ns3)?;
    }
    let spec = coapcc_sim::star::StarRunSpec {
        network: coapcc_link::star::Config {
            stations,
            ..Default::default()
        },
        workload: Default::default(),
        algorithm: AlgorithmSpec::named(algorithm),
        seed,
    };
    coapcc_sim::star::validate(&spec).map_err(|e| anyhow!("{e}"))?;
    let mut walls = Vec::new();
    let mut last = None;
    for _ in 0..repeat.max(1) {
        let (result, wall) = StarSim::run_timed(&spec, 0).map_err(|e| anyhow!("{e}"))?;
        walls.push(wall.as_secs_f64());
        last = Some(result);
    }
    walls.sort_by(f64::total_cmp);
    let ours = walls[walls.len() / 2];
    let r = last.expect("at least one run");
    let rexmit: u64 = r.stations.iter().map(|s| s.retransmitted_segments).sum();
    out(format!(
        "coapcc: star, {stations} stations, {algorithm}: event loop {ours:.4} s (median of {}), {} events, {:.1} M events/s; goodput {:.0} bit/s, {rexmit} retransmitted segments, {} collisions",
        walls.len(),
        r.events,
        r.events as f64 / ours / 1e6,
        r.goodput_bps,
        r.mac.collisions,
    ))?;
    if ns3 == "none" {
        return Ok(());
    }
    let line = run_reference(
        ns3,
        &[format!("--stations={stations}"), format!("--seed={seed}")],
    )?;
    let kv = parse_kv(&line);
    let get = |k: &str| {
        kv.get(k)
            .copied()
            .ok_or_else(|| anyhow!("ns-3 output lacks `{k}`: `{line}`"))
    };
    let (wall, events) = (get("wall_s")?, get("events")?);
    out(format!(
        "ns-3:   Simulator::Run {wall:.3} s, {events} events, {:.2} M events/s; goodput {:.0} bit/s, {} retransmitted segments",
        events / wall / 1e6,
        get("goodput_bps")?,
        get("retransmissions")?,
    ))?;
    out(format!(
        "speed-up: coapcc is {:.1}x faster than ns-3 on the same network",
        wall / ours
    ))?;
    Ok(())
}

/// The dumbbell of `coapcc bench`: `clients` continuous clients of
/// `algorithm` (published settings) behind `buffer`, the testbed's defaults
/// otherwise.
pub fn dumbbell_spec(clients: u32, buffer: Buffer, algorithm: &str, seed: u64) -> RunSpec {
    RunSpec {
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
    }
}

/// Replication 0 of `spec` run `repeat` times (at least once): the last
/// result and the median wall time of the event loop (s), set-up excluded.
pub fn time_dumbbell(spec: &RunSpec, repeat: usize) -> Result<(RunResult, f64)> {
    dumbbell::validate(spec).map_err(|e| anyhow!("{e}"))?;
    let mut walls = Vec::new();
    let mut last = None;
    for _ in 0..repeat.max(1) {
        let (result, wall) = DumbbellSim::run_timed(spec, 0).map_err(|e| anyhow!("{e}"))?;
        walls.push(wall.as_secs_f64());
        last = Some(result);
    }
    walls.sort_by(f64::total_cmp);
    Ok((last.expect("at least one run"), walls[walls.len() / 2]))
}

/// Fails unless the reference script `script` exists, saying how to run
/// without it.
pub fn check_reference(script: &str) -> Result<()> {
    if !std::path::Path::new(script).is_file() {
        bail!(
            "the ns-3 reference `{script}` does not exist; give its path with --ns3 SCRIPT \
             (the dumbbell's and the grid's are ../shared/baselines/ns3/run.sh and \
             ns3-grid/run.sh, the star's baselines/ns3-star/run.sh, relative to the \
             repository's root), or pass --no-reference to time coapcc alone"
        );
    }
    Ok(())
}

/// Runs the dumbbell's ns-3 reference `script` with the same clients,
/// buffer (`inf` → 1410000 B) and seed.
pub fn ns3_dumbbell(script: &str, clients: u32, buffer: Buffer, seed: u64) -> Result<Ns3> {
    let ns3_buffer = match buffer {
        Buffer::Bytes(b) => format!("{b}B"),
        Buffer::Infinite => "1410000B".to_string(),
    };
    let line = run_reference(
        script,
        &[
            format!("--clients={clients}"),
            format!("--buffer={ns3_buffer}"),
            format!("--seed={seed}"),
        ],
    )?;
    parse_ns3(&line)
}

/// Runs the benchmark; hands each line of the comparison to `out` as it is
/// measured.
pub fn run(
    clients: u32,
    buffer: &str,
    algorithm: &str,
    repeat: usize,
    seed: u64,
    ns3: &str,
    out: &mut dyn FnMut(String) -> Result<()>,
) -> Result<()> {
    let buffer = Buffer::parse(buffer)
        .ok_or_else(|| anyhow!("--buffer: expected bytes or `inf`, found `{buffer}`"))?;
    if ns3 != "none" {
        check_reference(ns3)?;
    }
    let spec = dumbbell_spec(clients, buffer, algorithm, seed);
    let (result, ours) = time_dumbbell(&spec, repeat)?;
    let summary = coapcc_sim::Summary::of(algorithm, 0, std::slice::from_ref(&result));
    let events = result.events;
    out(format!(
        "coapcc: {clients} clients, {algorithm}, buffer {}: event loop {:.4} s (median of {}), {events} events, {:.1} M events/s; FCT median {:.1} s, unnecessary/client median {:.1}",
        buffer.label(),
        ours,
        repeat.max(1),
        events as f64 / ours / 1e6,
        summary.fct.p50,
        summary.unnecessary.p50,
    ))?;
    if ns3 == "none" {
        return Ok(());
    }
    let n = ns3_dumbbell(ns3, clients, buffer, seed)?;
    out(format!(
        "ns-3:   Simulator::Run {:.4} s, {} events, {:.1} M events/s; FCT median {:.1} s, unnecessary/client mean {:.1}",
        n.wall,
        n.events,
        n.events as f64 / n.wall / 1e6,
        n.p50,
        n.unnecessary
    ))?;
    out(format!(
        "speed-up: coapcc is {:.1}x faster than ns-3 on the same work",
        n.wall / ours
    ))?;
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
        let kv = parse_kv("period=10 carried_Bps=322.88 routing=root wall_s=7.058");
        assert_eq!(kv["carried_Bps"], 322.88);
        assert_eq!(kv["wall_s"], 7.058);
        assert!(!kv.contains_key("routing"));
    }
}
