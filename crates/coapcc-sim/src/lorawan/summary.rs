//! What one algorithm's runs on LoRaWAN come to: each metric's mean over
//! the replications with its 95 % confidence interval. Exchanges count
//! every device; drops are by direction and cause.

use std::collections::BTreeMap;

use coapcc_workload::metrics::{Estimate, Percentiles};
use serde::{Deserialize, Serialize};

use super::config::RunSpec;
use super::result::{DeviceResult, Drops, RunResult};

/// One algorithm's metrics over its replications.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// The algorithm's label.
    pub label: String,
    /// Replications summarised.
    pub replications: u32,
    /// Devices.
    pub devices: u32,
    /// Exchanges completed / exchanges started.
    pub delivery_ratio: Estimate,
    /// Exchanges started, per run.
    pub started: Estimate,
    /// Exchanges abandoned, per run.
    pub failed: Estimate,
    /// Mean completion time of a completed exchange (s).
    pub completion_mean: Estimate,
    /// Completion-time percentiles (s), each averaged over the runs.
    pub completion: Percentiles,
    /// Retransmissions per started exchange.
    pub retransmissions_per_exchange: Estimate,
    /// Time on air of retransmissions per started exchange (s).
    pub retransmission_airtime: Estimate,
    /// Time frames waited in devices for the duty cycle and the class-A
    /// windows, per uplink frame (s).
    pub waiting_per_uplink: Estimate,
    /// Downlinks dropped, per run.
    pub downlinks_dropped: Estimate,
    /// Uplinks dropped per run, by cause.
    pub uplink_drops: BTreeMap<String, Estimate>,
    /// Downlinks dropped per run, by cause.
    pub downlink_drops: BTreeMap<String, Estimate>,
}

impl Summary {
    /// Summarises the runs of `spec`.
    pub fn of(label: &str, spec: &RunSpec, runs: &[RunResult]) -> Self {
        let per_run = |f: &dyn Fn(&RunResult) -> f64| -> Estimate {
            Estimate::of(&runs.iter().map(f).collect::<Vec<_>>())
        };
        let sum = |r: &RunResult, f: &dyn Fn(&DeviceResult) -> f64| -> f64 {
            r.devices.iter().map(f).sum()
        };
        let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };
        let started = |r: &RunResult| sum(r, &|d| d.started as f64);
        let by_cause = |f: fn(&RunResult) -> &Drops| -> BTreeMap<String, Estimate> {
            let names = Drops::default().named().map(|(name, _)| name);
            names
                .iter()
                .enumerate()
                .map(|(k, name)| (name.to_string(), per_run(&|r| f(r).named()[k].1 as f64)))
                .collect()
        };
        let completions: Vec<Percentiles> = runs.iter().map(|r| r.completion).collect();
        Summary {
            label: label.to_string(),
            replications: runs.len() as u32,
            devices: spec.network.devices,
            delivery_ratio: per_run(&|r| ratio(sum(r, &|d| d.completed as f64), started(r))),
            started: per_run(&started),
            failed: per_run(&|r| sum(r, &|d| d.failed as f64)),
            completion_mean: per_run(&|r| {
                ratio(
                    sum(r, &|d| d.completion_sum),
                    sum(r, &|d| d.completed as f64),
                )
            }),
            completion: Percentiles::mean_of(&completions),
            retransmissions_per_exchange: per_run(&|r| {
                ratio(sum(r, &|d| d.transmissions as f64) - started(r), started(r))
            }),
            retransmission_airtime: per_run(&|r| {
                ratio(sum(r, &|d| d.retransmission_airtime), started(r))
            }),
            waiting_per_uplink: per_run(&|r| {
                ratio(r.record.waiting, r.record.uplink_frames as f64)
            }),
            downlinks_dropped: per_run(&|r| r.downlink_drops.total() as f64),
            uplink_drops: by_cause(|r| &r.uplink_drops),
            downlink_drops: by_cause(|r| &r.downlink_drops),
        }
    }
}
