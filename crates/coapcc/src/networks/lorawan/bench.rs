//! `coapcc bench --network lorawan`: one run of the LoRaWAN network's CoAP
//! workload, timed; then LoRaSim's experiment 4 (*Do LoRa Low-Power
//! Wide-Area Networks Scale?*, Bor et al.) on the link model
//! ([`coapcc_link::lorawan::lorasim`]) beside pure ALOHA and, when
//! `--ns3` names LoRaSim's `loraDir.py`, beside LoRaSim itself run with
//! `python3` on the same settings (results and wall times side by side).

use std::process::Command;
use std::time::Instant;

use anyhow::{anyhow, bail, Context, Result};
use coapcc_link::lorawan::lorasim;
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

/// LoRaSim's experiment 4 as the bench runs it: a mean wait of 1000 s,
/// 50 000 s simulated.
pub fn experiment(devices: u32) -> lorasim::Experiment {
    lorasim::Experiment {
        devices,
        mean_interval_s: 1000.0,
        duration_s: 50_000.0,
    }
}

/// `coapcc bench --network lorawan`: one run at `--period` (with
/// `--clients` devices and `--algorithm`, if given), timed; then LoRaSim's
/// experiment 4 with as many devices on the link model, and on LoRaSim
/// itself if `--ns3` names its script. `--buffer` is refused.
pub fn bench(o: &BenchOptions, out: &mut dyn FnMut(String) -> Result<()>) -> Result<()> {
    if o.buffer.is_some() {
        bail!("--buffer: applies to the dumbbell only");
    }
    let reference = match o.ns3.as_deref() {
        None | Some("none") => None,
        Some(script) => Some(
            std::fs::canonicalize(script)
                .with_context(|| format!("--ns3: cannot find LoRaSim's script `{script}`"))?,
        ),
    };
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
    ))?;
    let e = experiment(spec.network.devices);
    let began = Instant::now();
    let ours = lorasim::run(&e, o.seed).map_err(|e| anyhow!("{e}"))?;
    let wall = began.elapsed().as_secs_f64();
    out(format!(
        "coapcc: LoRaSim experiment 4 (SF12, one channel, no capture, no duty cycle), {} devices, \
         mean wait {} s, {} s: DER {:.4} ({} of {} frames; pure ALOHA {:.4}), {} events in {wall:.4} s",
        e.devices,
        e.mean_interval_s,
        e.duration_s,
        ours.der(),
        ours.received,
        ours.sent,
        lorasim::aloha(&e),
        ours.events,
    ))?;
    match reference {
        None => Ok(()),
        Some(script) => {
            let theirs = run_lorasim(&script, &e)?;
            out(format!(
                "LoRaSim ({}): DER {:.4} ({} of {} frames) in {:.3} s; coapcc {:.0}x faster",
                script.display(),
                theirs.der(),
                theirs.received,
                theirs.sent,
                theirs.wall,
                theirs.wall / wall.max(1e-9)
            ))
        }
    }
}

/// What LoRaSim printed, and its wall time.
struct LoraSim {
    sent: u64,
    received: u64,
    wall: f64,
}

impl LoraSim {
    fn der(&self) -> f64 {
        self.received as f64 / self.sent.max(1) as f64
    }
}

/// Runs LoRaSim's `script` (`python3 script NODES AVGSEND 4 SIMTIME`, times
/// in ms) in a scratch directory (it appends to `exp4.dat` where it runs)
/// and reads its `sent packets:` and `received packets:` lines.
fn run_lorasim(script: &std::path::Path, e: &lorasim::Experiment) -> Result<LoraSim> {
    let scratch = tempfile::tempdir().context("cannot make a scratch directory for LoRaSim")?;
    let began = Instant::now();
    let run = Command::new("python3")
        .arg(script)
        .args([
            e.devices.to_string(),
            format!("{}", e.mean_interval_s * 1000.0),
            "4".into(),
            format!("{}", e.duration_s * 1000.0),
        ])
        .current_dir(scratch.path())
        .output()
        .with_context(|| format!("cannot run python3 {}", script.display()))?;
    let wall = began.elapsed().as_secs_f64();
    let text = String::from_utf8_lossy(&run.stdout);
    if !run.status.success() {
        bail!(
            "LoRaSim ({}) failed ({}): {}",
            script.display(),
            run.status,
            String::from_utf8_lossy(&run.stderr)
        );
    }
    let count = |label: &str| -> Result<u64> {
        text.lines()
            .find_map(|l| l.strip_prefix(label))
            .and_then(|v| v.trim().parse().ok())
            .ok_or_else(|| anyhow!("LoRaSim's output has no `{label}` line"))
    };
    Ok(LoraSim {
        sent: count("sent packets:")?,
        received: count("received packets:")?,
        wall,
    })
}
