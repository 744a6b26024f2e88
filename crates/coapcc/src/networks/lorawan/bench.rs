//! `coapcc bench --network lorawan`: one run of the shipped LoRaWAN
//! scenario's network and workload, timed. No reference simulator is wired
//! in yet (LoRaSim and ns-3 `lorawan` are the candidates,
//! `docs/decisions/lorawan-choices.md`): `--ns3` is refused.

use anyhow::{anyhow, bail, Result};
use coapcc_sim::lorawan;
use coapcc_sim::AlgorithmSpec;

use crate::bench::{time_runs, BenchOptions};

/// The benchmarked run: the defaults of the network (200 devices in
/// 6400 m), CoAP and the workload, Default CoAP, every `period` seconds.
pub fn bench_spec(period: f64, seed: u64) -> lorawan::RunSpec {
    lorawan::RunSpec {
        network: Default::default(),
        coap: Default::default(),
        workload: lorawan::Workload {
            period_s: period,
            ..lorawan::Workload::default()
        },
        algorithm: AlgorithmSpec::named("default"),
        seed,
    }
}

/// `coapcc bench --network lorawan`: one run at `--period` (with
/// `--clients` devices and `--algorithm`, if given), timed;
/// `--buffer` and a reference (`--ns3`) are refused.
pub fn bench(o: &BenchOptions, out: &mut dyn FnMut(String) -> Result<()>) -> Result<()> {
    if o.buffer.is_some() {
        bail!("--buffer: applies to the dumbbell only");
    }
    if o.ns3.as_deref().is_some_and(|r| r != "none") {
        bail!("--ns3: LoRaWAN has no reference simulator wired in yet; pass --ns3 none");
    }
    let mut spec = bench_spec(o.period, o.seed);
    if let Some(n) = o.clients {
        spec.network.devices = n;
    }
    if let Some(a) = &o.algorithm {
        spec.algorithm = AlgorithmSpec::named(a);
    }
    lorawan::validate(&spec).map_err(|e| anyhow!("{e}"))?;
    let (result, ours, runs) = time_runs::<lorawan::Sim>(&spec, o.repeat)?;
    let s = lorawan::Summary::of("default", &spec, std::slice::from_ref(&result));
    out(format!(
        "coapcc: lorawan, {}, {} devices, T = {} s, {} s: event loop {ours:.4} s (median of {runs}), {} events, {:.1} M events/s; delivery ratio {:.4}, median completion {:.3} s, {:.3} retransmissions/exchange",
        spec.algorithm.label(),
        spec.network.devices,
        o.period,
        spec.workload.duration_s,
        result.events,
        result.events as f64 / ours / 1e6,
        s.delivery_ratio.mean,
        s.completion.p50,
        s.retransmissions_per_exchange.mean,
    ))
}
