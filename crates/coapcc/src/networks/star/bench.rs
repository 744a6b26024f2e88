//! `coapcc bench --network star`: the Wi-Fi star beside this project's ns-3
//! reference of the same star (`baselines/ns3-star`).

use anyhow::{anyhow, bail, Result};
use coapcc_sim::star;
use coapcc_sim::AlgorithmSpec;

use crate::bench::{check_reference, time_runs, BenchOptions, Reference};

/// `coapcc bench --network star`: [`run`] with `--clients` stations (default
/// 12) and `--algorithm` (default `tcp`), beside the ns-3 reference (default
/// `baselines/ns3-star/run.sh`); `--buffer` is refused.
pub fn bench(o: &BenchOptions, out: &mut dyn FnMut(String) -> Result<()>) -> Result<()> {
    if o.buffer.is_some() {
        bail!("--buffer: applies to the dumbbell only");
    }
    run(
        o.clients.unwrap_or(12),
        o.algorithm.as_deref().unwrap_or("tcp"),
        o.repeat,
        o.seed,
        o.ns3.as_deref().unwrap_or("baselines/ns3-star/run.sh"),
        out,
    )
}

/// One run of the Wi-Fi star (`stations` stations, 1000 writes each, TCP
/// `algorithm`), timed, beside this project's ns-3 reference of the same
/// star (`baselines/ns3-star`, ns-3's NewReno).
pub fn run(
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
    let spec = coapcc_sim::star::RunSpec {
        network: coapcc_link::star::Config {
            stations,
            ..Default::default()
        },
        workload: Default::default(),
        algorithm: AlgorithmSpec::named(algorithm),
        seed,
    };
    coapcc_sim::star::validate(&spec).map_err(|e| anyhow!("{e}"))?;
    let (r, ours, runs) = time_runs::<star::Sim>(&spec, repeat)?;
    let rexmit: u64 = r.stations.iter().map(|s| s.retransmitted_segments).sum();
    out(format!(
        "coapcc: star, {stations} stations, {algorithm}: event loop {ours:.4} s (median of {}), {} events, {:.1} M events/s; goodput {:.0} bit/s, {rexmit} retransmitted segments, {} collisions",
        runs,
        r.events,
        r.events as f64 / ours / 1e6,
        r.goodput_bps,
        r.mac.collisions,
    ))?;
    if ns3 == "none" {
        return Ok(());
    }
    let reference = Reference::run(
        ns3,
        &[format!("--stations={stations}"), format!("--seed={seed}")],
    )?;
    let get = |k: &str| reference.get(k);
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
