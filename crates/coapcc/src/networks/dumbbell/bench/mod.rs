//! `coapcc bench` on the dumbbell: one point beside the ns-3 reference
//! (`../shared/baselines/ns3`), the matrix of points ([`matrix`]) and the
//! scale scenarios ([`scale`]).

pub mod matrix;
pub mod scale;

use anyhow::{anyhow, Result};
use coapcc_link::dumbbell::{Buffer, Config};
use coapcc_sim::dumbbell::{self, Group, RunSpec};
use coapcc_sim::{RunResult, Workload};

use crate::bench::{check_reference, parse_ns3, run_reference, time_runs, BenchOptions, Ns3};
use crate::calibrate::published_settings;

/// The dumbbell of `coapcc bench`: `clients` continuous clients of
/// `algorithm` (published settings) behind `buffer`, the testbed's defaults
/// otherwise.
pub fn dumbbell_spec(clients: u32, buffer: Buffer, algorithm: &str, seed: u64) -> RunSpec {
    RunSpec {
        network: Config {
            buffer,
            ..Config::default()
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
    let (result, wall, _) = time_runs::<dumbbell::Sim>(spec, repeat)?;
    Ok((result, wall))
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

/// The dumbbell's ns-3 reference, relative to the repository's root.
pub const NS3: &str = "../shared/baselines/ns3/run.sh";

/// `coapcc bench` on the dumbbell: `--clients` (default 400) continuous
/// clients of `--algorithm` (default `default`) behind `--buffer` (default
/// `inf`), beside the ns-3 reference (default `../shared/baselines/ns3/run.sh`).
pub fn bench(o: &BenchOptions, out: &mut dyn FnMut(String) -> Result<()>) -> Result<()> {
    run(
        o.clients.unwrap_or(400),
        o.buffer.as_deref().unwrap_or("inf"),
        o.algorithm.as_deref().unwrap_or("default"),
        o.repeat,
        o.seed,
        o.ns3.as_deref().unwrap_or(NS3),
        out,
    )
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
