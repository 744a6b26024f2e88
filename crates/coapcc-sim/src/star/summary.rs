//! The lwIP paper's metrics for one TCP flavour over its replications on the
//! star (spec `docs/spec/testbed-spec.md` §5): goodput at the access point, retransmissions,
//! and the stations' cwnd, ssthresh, RTO and RTT over time, with 95 %
//! confidence intervals.

use coapcc_workload::metrics::Estimate;
use serde::{Deserialize, Serialize};

use super::config::RunSpec;
use super::result::{RunResult, StationResult, TcpSample};

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
pub struct Summary {
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

impl Summary {
    /// Summarises the runs of `spec`.
    pub fn of(label: &str, spec: &RunSpec, runs: &[RunResult]) -> Self {
        let per_run = |f: &dyn Fn(&RunResult) -> f64| -> Estimate {
            Estimate::of(&runs.iter().map(f).collect::<Vec<_>>())
        };
        let sum = |r: &RunResult, f: &dyn Fn(&StationResult) -> u64| -> f64 {
            r.stations.iter().map(f).sum::<u64>() as f64
        };
        let max = |r: &RunResult, f: &dyn Fn(&StationResult) -> f64| -> f64 {
            r.stations.iter().map(f).fold(0.0, f64::max)
        };
        let w = &spec.workload;
        Summary {
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
fn mean_series(runs: &[RunResult]) -> Vec<MeanSample> {
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
