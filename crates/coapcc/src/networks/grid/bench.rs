//! `coapcc bench --network grid`: the grid beside the ns-3 reference of the
//! same grid (`../shared/baselines/ns3-grid`).

use anyhow::{anyhow, bail, Result};
use coapcc_link::grid::{layout::Routing, sixlowpan::Addressing, Config, MacProfile, Reassembly};
use coapcc_sim::grid;
use coapcc_sim::AlgorithmSpec;

use crate::bench::{check_reference, time_runs, BenchOptions, Reference};

/// The grid as the ns-3 reference runs it (`ns3-grid/README.md`): 16-bit
/// addresses, no RPL option, root routing, 8 transmissions, 8-frame
/// queues, Default CoAP with RTO [3, 4.5] s and MAX_RETRANSMIT 4, period
/// `period`, 60 s warm-up, 800 s; the MAC profile `mac`. With the `contiki`
/// profile, the pCoCoA paper's grid instead (the defaults of the grid).
pub fn grid_reference_spec(period: f64, mac: MacProfile, seed: u64) -> grid::RunSpec {
    let network = match mac {
        MacProfile::Ieee802154 => Config {
            mac,
            routing: Routing::Root,
            addressing: Addressing::Short,
            hop_by_hop: false,
            reassembly: Reassembly::PerSender,
            ..Config::default()
        },
        MacProfile::Contiki => Config::default(),
    };
    grid::RunSpec {
        network,
        coap: Default::default(),
        workload: grid::Workload {
            period_s: period,
            ..grid::Workload::default()
        },
        algorithm: AlgorithmSpec {
            ack_timeout: Some(3.0),
            ..AlgorithmSpec::named("default")
        },
        seed,
    }
}

/// `coapcc bench --network grid`: [`run`] at `--period` with `--mac`,
/// beside the ns-3 reference (default `../shared/baselines/ns3-grid/run.sh`);
/// `--buffer` is refused.
pub fn bench(o: &BenchOptions, out: &mut dyn FnMut(String) -> Result<()>) -> Result<()> {
    if o.buffer.is_some() {
        bail!("--buffer: applies to the dumbbell only");
    }
    run(
        o.period,
        o.mac,
        o.repeat,
        o.seed,
        o.ns3
            .as_deref()
            .unwrap_or("../shared/baselines/ns3-grid/run.sh"),
        out,
    )
}

/// One 800 s run of the grid, timed, beside the ns-3 reference's run at the
/// same period and seed.
pub fn run(
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
    grid::validate(&spec).map_err(|e| anyhow!("{e}"))?;
    let (result, ours, runs) = time_runs::<grid::Sim>(&spec, repeat)?;
    let s = grid::Summary::of("default", &spec, std::slice::from_ref(&result));
    let mac_drops: u64 = result.nodes.iter().map(|n| n.mac.mac_drops).sum();
    let overflows: u64 = result.nodes.iter().map(|n| n.mac.overflows).sum();
    let mac_name = match mac {
        MacProfile::Contiki => "contiki",
        MacProfile::Ieee802154 => "ieee802154",
    };
    out(format!(
        "coapcc: grid, {mac_name} MAC, T = {period} s, 800 s: event loop {ours:.4} s (median of {}), {} events, {:.1} M events/s; carried {:.1} B/s, {:.3} transmissions/transaction, {mac_drops} MAC drops, {overflows} MAC buffer overflows",
        runs,
        result.events,
        result.events as f64 / ours / 1e6,
        s.carried.mean,
        s.tx_per_transaction.mean,
    ))?;
    if ns3 == "none" {
        return Ok(());
    }
    let reference = Reference::run(
        ns3,
        &[
            format!("--period={period}"),
            format!("--seed={seed}"),
            "--routing=root".into(),
        ],
    )?;
    let get = |k: &str| reference.get(k);
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
