//! Star scenarios (the lwIP evaluation, spec `testbed.md` §3, §5): what a
//! scenario file with `kind = "star"` describes, running its replications,
//! and the paper's metrics — goodput at the access point, retransmissions,
//! and the stations' cwnd, ssthresh, RTO and RTT over time — with 95 %
//! confidence intervals over replications.

use coapcc_workload::metrics::Estimate;
use coapcc_workload::AlgorithmSpec;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::spec_error::SpecError;
use crate::star::{self, StarRunResult, StarRunSpec, StarWorkload, TcpSample};

/// A star scenario as written in a scenario file (`[network] kind = "star"`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StarScenario {
    /// A short name.
    #[serde(default)]
    pub name: String,
    /// What it reproduces.
    #[serde(default)]
    pub description: String,
    /// The star.
    #[serde(default)]
    pub network: coapcc_link::star::Config,
    /// The bulk senders.
    #[serde(default)]
    pub workload: StarWorkload,
    /// The TCP flavours to compare; each runs on every station.
    #[serde(rename = "algorithm")]
    pub algorithms: Vec<AlgorithmSpec>,
    /// Replications per flavour.
    #[serde(default = "one")]
    pub replications: u32,
    /// The scenario seed.
    #[serde(default = "one64")]
    pub seed: u64,
}

fn one() -> u32 {
    1
}
fn one64() -> u64 {
    1
}

impl StarScenario {
    /// The run of flavour `i`.
    pub fn run_spec(&self, i: usize) -> StarRunSpec {
        StarRunSpec {
            network: self.network.clone(),
            workload: self.workload.clone(),
            algorithm: self.algorithms[i].clone(),
            seed: self.seed,
        }
    }

    /// Checks everything a run would reject.
    pub fn validate(&self) -> Result<(), SpecError> {
        if self.algorithms.is_empty() {
            return Err(SpecError(
                "algorithm: expected at least one TCP flavour".into(),
            ));
        }
        if self.replications == 0 {
            return Err(SpecError("replications: expected at least 1".into()));
        }
        for (i, a) in self.algorithms.iter().enumerate() {
            a.check_label().map_err(SpecError)?;
            if self.algorithms[..i].iter().any(|b| b.label() == a.label()) {
                return Err(SpecError(format!(
                    "algorithm `{}`: listed twice; give one a distinct `label`",
                    a.label()
                )));
            }
            star::validate(&self.run_spec(i))?;
        }
        Ok(())
    }
}

/// The results of a star scenario.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StarScenarioResult {
    /// One summary per flavour.
    pub summaries: Vec<StarSummary>,
    /// Per flavour, one result per replication.
    #[serde(skip)]
    pub runs: Vec<Vec<StarRunResult>>,
}

/// Runs every (flavour, replication) of `scenario` on the current rayon
/// pool; results do not depend on the thread count.
pub fn run_star_scenario(
    scenario: &StarScenario,
    progress: &(dyn Fn() + Sync),
) -> Result<StarScenarioResult, SpecError> {
    run_star_scenario_stoppable(scenario, progress, &crate::stop::NEVER)
}

/// [`run_star_scenario`], stopped with [`crate::stop::cancelled`] soon after `stop` is
/// set: runs not started are skipped, runs under way stop within
/// [`crate::stop::CHECK_EVERY`] events.
pub fn run_star_scenario_stoppable(
    scenario: &StarScenario,
    progress: &(dyn Fn() + Sync),
    stop: &std::sync::atomic::AtomicBool,
) -> Result<StarScenarioResult, SpecError> {
    scenario.validate()?;
    let specs: Vec<StarRunSpec> = (0..scenario.algorithms.len())
        .map(|i| scenario.run_spec(i))
        .collect();
    let jobs: Vec<(usize, u32)> = (0..specs.len())
        .flat_map(|a| (0..scenario.replications).map(move |r| (a, r)))
        .collect();
    let results: Vec<StarRunResult> = jobs
        .par_iter()
        .map(|&(a, r)| {
            if crate::stop::requested(stop) {
                return Err(crate::stop::cancelled());
            }
            let out = star::run_stoppable(&specs[a], r, stop);
            progress();
            out
        })
        .collect::<Result<_, _>>()?;
    let mut runs: Vec<Vec<StarRunResult>> = vec![Vec::new(); specs.len()];
    for ((a, _), res) in jobs.into_iter().zip(results) {
        runs[a].push(res);
    }
    let summaries = specs
        .iter()
        .zip(&runs)
        .map(|(spec, r)| StarSummary::of(spec.algorithm.label(), spec, r))
        .collect();
    Ok(StarScenarioResult { summaries, runs })
}

/// The mean over stations and replications of the sampled TCP state at one
/// sample time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MeanSample {
    /// Seconds since the start of the run.
    pub t: f64,
    /// Mean congestion window (bytes).
    pub cwnd: f64,
    /// Mean slow-start threshold (bytes; stations with an unbounded one
    /// are left out).
    pub ssthresh: f64,
    /// Mean RTO (s).
    pub rto: f64,
    /// Mean smoothed RTT (s; stations without a sample left out).
    pub srtt: f64,
}

/// The paper's metrics for one TCP flavour, over its replications.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StarSummary {
    /// The flavour's label.
    pub label: String,
    /// Replications summarised.
    pub replications: u32,
    /// Offered load (bit/s): stations × write size × 8 / interval.
    pub offered_bps: f64,
    /// Goodput at the access point (bit/s).
    pub goodput_bps: Estimate,
    /// Segments the stations resent, per run.
    pub retransmissions: Estimate,
    /// Retransmission timeouts, per run.
    pub timeouts: Estimate,
    /// Fast retransmits, per run.
    pub fast_retransmits: Estimate,
    /// The largest RTO any station had in force, per run (s).
    pub max_rto: Estimate,
    /// The largest RTO that expired, per run (s).
    pub max_expired_rto: Estimate,
    /// Stations that had every byte acknowledged, per run.
    pub complete_stations: Estimate,
    /// 802.11 collisions, per run.
    pub collisions: Estimate,
    /// 802.11 retries, per run.
    pub mac_retries: Estimate,
    /// Frames dropped after the last retry, per run.
    pub retry_drops: Estimate,
    /// Packets dropped at full queues (stations and access point), per run.
    pub queue_drops: Estimate,
    /// Share of time the medium was busy.
    pub utilisation: Estimate,
    /// Station 1 of replication 0, sample by sample.
    pub one_station: Vec<TcpSample>,
    /// The mean over stations and replications, sample by sample.
    pub mean: Vec<MeanSample>,
}

impl StarSummary {
    /// Summarises the runs of `spec`.
    pub fn of(label: &str, spec: &StarRunSpec, runs: &[StarRunResult]) -> Self {
        let per_run = |f: &dyn Fn(&StarRunResult) -> f64| -> Estimate {
            Estimate::of(&runs.iter().map(f).collect::<Vec<_>>())
        };
        let sum = |r: &StarRunResult, f: &dyn Fn(&star::StationResult) -> u64| -> f64 {
            r.stations.iter().map(f).sum::<u64>() as f64
        };
        let max = |r: &StarRunResult, f: &dyn Fn(&star::StationResult) -> f64| -> f64 {
            r.stations.iter().map(f).fold(0.0, f64::max)
        };
        let w = &spec.workload;
        StarSummary {
            label: label.to_string(),
            replications: runs.len() as u32,
            offered_bps: f64::from(spec.network.stations) * f64::from(w.write_bytes) * 8.0
                / w.interval_s,
            goodput_bps: per_run(&|r| r.goodput_bps),
            retransmissions: per_run(&|r| sum(r, &|s| s.retransmitted_segments)),
            timeouts: per_run(&|r| sum(r, &|s| s.timeouts)),
            fast_retransmits: per_run(&|r| sum(r, &|s| s.fast_retransmits)),
            max_rto: per_run(&|r| max(r, &|s| s.max_rto)),
            max_expired_rto: per_run(&|r| max(r, &|s| s.max_expired_rto)),
            complete_stations: per_run(&|r| {
                r.stations.iter().filter(|s| s.complete).count() as f64
            }),
            collisions: per_run(&|r| r.mac.collisions as f64),
            mac_retries: per_run(&|r| r.mac.retries as f64),
            retry_drops: per_run(&|r| r.mac.retry_drops as f64),
            queue_drops: per_run(&|r| r.mac.queue_drops as f64),
            utilisation: per_run(&|r| {
                if r.duration > 0.0 {
                    r.mac.busy / r.duration
                } else {
                    0.0
                }
            }),
            one_station: runs
                .first()
                .and_then(|r| r.stations.first())
                .map_or_else(Vec::new, |s| s.trace.clone()),
            mean: mean_series(runs),
        }
    }
}

/// The mean over every station of every run at each sample time (every run
/// samples at the same times; a station is sampled once it has connected).
fn mean_series(runs: &[StarRunResult]) -> Vec<MeanSample> {
    let mut by_time: std::collections::BTreeMap<u64, Vec<&TcpSample>> = Default::default();
    for s in runs
        .iter()
        .flat_map(|r| r.stations.iter().flat_map(|s| s.trace.iter()))
    {
        by_time
            .entry((s.t * 1e9).round() as u64)
            .or_default()
            .push(s);
    }
    by_time
        .into_values()
        .map(|samples| {
            let mean = |f: &dyn Fn(&TcpSample) -> Option<f64>| {
                let v: Vec<f64> = samples.iter().filter_map(|s| f(s)).collect();
                if v.is_empty() {
                    0.0
                } else {
                    v.iter().sum::<f64>() / v.len() as f64
                }
            };
            MeanSample {
                t: samples[0].t,
                cwnd: mean(&|s| Some(s.cwnd as f64)),
                ssthresh: mean(&|s| {
                    (s.ssthresh < u64::from(u32::MAX)).then_some(s.ssthresh as f64)
                }),
                rto: mean(&|s| Some(s.rto)),
                srtt: mean(&|s| (s.srtt > 0.0).then_some(s.srtt)),
            }
        })
        .collect()
}
