//! The kernel cross-check (`coapcc kernel-check`): CoAP over the host
//! kernel's TCP through the IP-level dumbbell, next to the simulator's TCP
//! model with the same mechanisms, replication by replication, into the
//! results store, and the side-by-side table of both.
//!
//! A kernel run is a measurement, not a pure function: its key holds the
//! point, the base seed, the replication, the kernel version and the
//! `net.ipv4` values the cross-check sets; the full snapshot of every
//! `net.ipv4.tcp_*` value the run saw is stored with it, and the tables
//! group kernel runs by kernel version and snapshot, so runs made under
//! other settings never mix. The model's runs are keyed by the model version.

pub mod kernel;
pub mod model;
pub mod point;
pub mod record;
pub mod report;
pub mod store;
pub mod table;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use coapcc_net::ip::signals::{self, StopSignals};

use crate::kernel_check::store::{sysctl_digest, KernelCheckRun};
use crate::key::{digest, MODEL_VERSION};
use crate::store::Store;
use point::Point;
use record::Record;
use table::Group;

/// What `coapcc kernel-check` runs.
#[derive(Clone, Debug)]
pub struct Options {
    /// The points.
    pub points: Vec<Point>,
    /// Replications per point and source.
    pub replications: u32,
    /// Base seed.
    pub seed: u64,
    /// Make the kernel runs.
    pub kernel: bool,
    /// Make the model's runs.
    pub model: bool,
    /// The coapcc executable the kernel runs use.
    pub exe: PathBuf,
    /// Wall-time limit of one kernel run's load (s).
    pub time_limit: f64,
    /// Kernel runs at once (each in its own namespaces), 1 to
    /// [`MAX_PARALLEL`].
    pub parallel: usize,
}

/// The most kernel runs at once. Each run holds two network namespaces, two
/// TUN devices, a relay thread that must wake on time for the link model's
/// events, a server and a load of up to 2 × clients sockets; 64 runs of 100
/// clients are 128 namespaces and some 13 000 sockets, beyond which a run's
/// timing (and so its FCTs) would depend on how busy the machine is rather
/// than on the point. It is the bound the command used to apply silently.
pub const MAX_PARALLEL: usize = 64;

/// `--parallel N`: 1 to [`MAX_PARALLEL`], or a clear error.
pub fn check_parallel(n: usize) -> Result<usize> {
    if !(1..=MAX_PARALLEL).contains(&n) {
        bail!(
            "--parallel {n}: expected 1 to {MAX_PARALLEL} kernel runs at once (each holds two \
             network namespaces, a relay thread and up to 2 × clients sockets)"
        );
    }
    Ok(n)
}

/// Every sysctl the points set must be one the emulator keeps inside its
/// namespaces (`coapcc_net::ip::sysctl::check_key`).
pub fn check_sysctls(points: &[Point]) -> Result<()> {
    for p in points {
        for (k, _) in p.config.sysctls() {
            coapcc_net::ip::sysctl::check_key(k)?;
        }
    }
    Ok(())
}

/// The running kernel's version (`/proc/sys/kernel/osrelease`).
pub fn kernel_version() -> Result<String> {
    Ok(std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .context("cannot read the kernel version (/proc/sys/kernel/osrelease)")?
        .trim()
        .to_string())
}

fn kernel_key(point: &Point, seed: u64, replication: u32, kernel: &str) -> String {
    let sysctls: Vec<String> = point
        .config
        .sysctls()
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    digest([
        "coapcc-kernel-check-kernel",
        &point.canonical(),
        &seed.to_string(),
        &replication.to_string(),
        kernel,
        &sysctls.join(","),
    ])
}

fn model_key(point: &Point, profile: &str, seed: u64, replication: u32) -> String {
    digest([
        "coapcc-kernel-check-model",
        MODEL_VERSION,
        &point.canonical(),
        profile,
        &seed.to_string(),
        &replication.to_string(),
    ])
}

/// Makes every kernel run of `opts` missing from `store`, `opts.parallel`
/// at a time (each in namespaces of its own), storing each as it finishes.
fn run_kernel(
    opts: &Options,
    store: &Store,
    kernel: &str,
    scratch: &Path,
    stop: &StopSignals,
    done: &mut Done,
    progress: &mut dyn FnMut(&str),
) -> Result<()> {
    let mut jobs = Vec::new();
    for point in &opts.points {
        for r in 0..opts.replications {
            let key = kernel_key(point, opts.seed, r, kernel);
            if store.kernel_check_has(&key)? {
                done.reused += 1;
            } else {
                jobs.push((key, *point, r));
            }
        }
    }
    let total = jobs.len();
    let runner = kernel::KernelRun {
        exe: opts.exe.clone(),
        time_limit: opts.time_limit,
        seed: opts.seed,
        stop: Some(stop.clone()),
    };
    let queue = std::sync::Mutex::new(jobs.into_iter());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::scope(|s| -> Result<()> {
        for _ in 0..opts.parallel.clamp(1, total.max(1)) {
            let tx = tx.clone();
            let (queue, runner) = (&queue, &runner);
            s.spawn(move || loop {
                if runner.stop.as_ref().is_some_and(|s| s.received().is_some()) {
                    break;
                }
                let Some((key, point, r)) = queue.lock().expect("queue").next() else {
                    break;
                };
                let started = std::time::Instant::now();
                let dir = scratch.join(&key[..16]);
                let res = std::fs::create_dir_all(&dir)
                    .map_err(anyhow::Error::from)
                    .and_then(|_| runner.run(&point, r, &dir));
                let failed = res.is_err();
                if tx.send((key, point, r, started.elapsed(), res)).is_err() || failed {
                    // Stop taking work after a failure: the main thread
                    // reports it once the runs in progress end.
                    queue.lock().expect("queue").by_ref().for_each(drop);
                    break;
                }
            });
        }
        drop(tx);
        let mut first_error = None;
        let mut finished = 0;
        for (key, point, r, took, res) in rx {
            finished += 1;
            let res = match res {
                Ok(res) => res,
                Err(e) => {
                    first_error.get_or_insert(e);
                    continue;
                }
            };
            let median = res.record.spread().map_or(f64::NAN, |s| s.median);
            store.kernel_check_put(&KernelCheckRun {
                key,
                point: point.canonical(),
                label: res.record.source.label(),
                kernel: Some(res.kernel.clone()),
                sysctl: Some(serde_json::to_string(&res.sysctl)?),
                model_version: None,
                raw: serde_json::to_string(&res.raw)?,
                record: res.record,
            })?;
            done.kernel_runs += 1;
            progress(&format!(
                "[{finished}/{total}] kernel {}: {point}, replication {r}: median FCT {median:.1} s \
                 ({:.0} s)",
                res.kernel,
                took.as_secs_f64()
            ));
        }
        if let Some(n) = stop.received() {
            bail!(
                "stopped by {}: the {} kernel run(s) finished are stored; run again to resume",
                signals::name(n),
                done.kernel_runs
            );
        }
        first_error.map_or(Ok(()), Err)
    })
}

/// What [`run`] did.
#[derive(Clone, Debug, Default)]
pub struct Done {
    /// Kernel runs made now.
    pub kernel_runs: usize,
    /// Model runs made now.
    pub model_runs: usize,
    /// Runs found in the store.
    pub reused: usize,
}

/// Runs every run of `opts` missing from `store`; `progress` gets one line
/// per finished run.
pub fn run(opts: &Options, store: &Store, progress: &mut dyn FnMut(&str)) -> Result<Done> {
    let mut done = Done::default();
    if opts.kernel {
        if let Some(why) = kernel::unavailable() {
            bail!("kernel runs cannot be made here: {why} (or pass --model-only)");
        }
    }
    if opts.model {
        for p in opts.points.iter().flat_map(|p| p.config.model_profiles()) {
            if coapcc_tcp::TcpProfile::from_name(p).is_none() {
                bail!("this build has no TCP profile `{p}` for the model's side");
            }
        }
    }
    check_parallel(opts.parallel)?;
    check_sysctls(&opts.points)?;
    let kernel = kernel_version()?;
    // With kernel runs, SIGINT, SIGTERM and SIGHUP are caught from here on:
    // the runs in progress are asked to stop (each tears its namespaces
    // down), then the scratch directory goes with its guard
    let stop = opts.kernel.then(StopSignals::install).transpose()?;
    if let Some(stop) = &stop {
        let scratch = tempfile::Builder::new()
            .prefix("coapcc-kernel-check-")
            .tempdir()
            .context("cannot create a scratch directory")?;
        run_kernel(
            opts,
            store,
            &kernel,
            scratch.path(),
            stop,
            &mut done,
            progress,
        )?;
        scratch
            .close()
            .context("cannot remove the scratch directory")?;
    }
    if opts.model {
        for point in &opts.points {
            for profile in point.config.model_profiles() {
                if let Some(n) = stop.as_ref().and_then(StopSignals::received) {
                    bail!(
                        "stopped by {}: the runs finished are stored; run again to resume",
                        signals::name(n)
                    );
                }
                let missing: Vec<u32> = (0..opts.replications)
                    .filter(|&r| {
                        !store
                            .kernel_check_has(&model_key(point, profile, opts.seed, r))
                            .unwrap_or(false)
                    })
                    .collect();
                done.reused += (opts.replications as usize) - missing.len();
                if missing.is_empty() {
                    continue;
                }
                // The model's replications derive their seeds from the scenario
                // seed and their index, so all are computed and the missing kept.
                let records = model::run(point, profile, opts.replications, opts.seed)?;
                for rec in records
                    .into_iter()
                    .filter(|r| missing.contains(&r.replication))
                {
                    store.kernel_check_put(&KernelCheckRun {
                        key: model_key(point, profile, opts.seed, rec.replication),
                        point: point.canonical(),
                        label: rec.source.label(),
                        kernel: None,
                        sysctl: None,
                        model_version: Some(MODEL_VERSION.to_string()),
                        raw: String::new(),
                        record: rec,
                    })?;
                    done.model_runs += 1;
                }
                progress(&format!(
                    "model {profile}: {point} ({} runs)",
                    missing.len()
                ));
            }
        }
    }
    Ok(done)
}

/// The side-by-side tables of every point stored in `store` (the points of
/// `only` if given), kernel runs grouped by kernel version and settings.
pub fn tables(store: &Store, only: Option<&[Point]>) -> Result<String> {
    let runs = store.kernel_check_runs()?;
    if runs.is_empty() {
        bail!("the store holds no kernel cross-check runs (run `coapcc kernel-check` first)");
    }
    // Points in the order first stored; per point, groups by label (kernel
    // runs also by settings), the kernel first.
    let mut order: Vec<String> = Vec::new();
    let mut by_point: BTreeMap<String, BTreeMap<(bool, String), Vec<&Record>>> = BTreeMap::new();
    for run in &runs {
        if run
            .model_version
            .as_deref()
            .is_some_and(|v| v != MODEL_VERSION)
        {
            continue; // another model's results
        }
        if !order.contains(&run.point) {
            order.push(run.point.clone());
        }
        let label = match &run.sysctl {
            Some(s) => {
                let v: serde_json::Value = serde_json::from_str(s).unwrap_or_default();
                format!("{} [{}]", run.label, sysctl_digest(&v))
            }
            None => run.label.clone(),
        };
        by_point
            .entry(run.point.clone())
            .or_default()
            .entry((run.kernel.is_none(), label))
            .or_default()
            .push(&run.record);
    }
    let mut sections = Vec::new();
    for p in order {
        let point: Point = serde_json::from_str(&p)?;
        if only.is_some_and(|o| !o.contains(&point)) {
            continue;
        }
        let groups = by_point
            .remove(&p)
            .unwrap_or_default()
            .into_iter()
            .map(|((_, label), records)| Group { label, records })
            .collect();
        sections.push((point, groups));
    }
    Ok(table::markdown(&sections))
}

/// The store file's parent must exist; a clear error otherwise.
pub fn check_store_path(path: &Path) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        if !dir.is_dir() {
            bail!(
                "--store {}: directory {} does not exist",
                path.display(),
                dir.display()
            );
        }
    }
    Ok(())
}
