//! The pCoCoA paper's metrics for one algorithm over its replications on the
//! grid, with 95 % confidence intervals.
//!
//! Loads are bytes per second of request messages (the configured request
//! size, marking excluded), over the traffic window:
//! - *offered* (nominal): clients × size / T;
//! - *actual offered*: requests sent at least once × size / window;
//! - *carried*: distinct requests the server received × size / window.
//!
//! Per transaction: transmissions of the exchanges that completed, and
//! acknowledgements received (duplicates included), each divided by the
//! completed exchanges. All of these count the clients under test only (in
//! bursty runs the interferers are summarised apart).

use coapcc_workload::metrics::Estimate;
use serde::{Deserialize, Serialize};

use super::config::{RunSpec, WorkloadKind};
use super::result::{NodeResult, Role, RunResult};

/// The paper's metrics for one algorithm, over its replications.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// The algorithm's label.
    pub label: String,
    /// Replications summarised.
    pub replications: u32,
    /// Clients under test.
    pub clients: u32,
    /// Nominal offered load (B/s): clients × request size / period.
    pub offered: f64,
    /// Actual offered load (B/s): requests sent at least once.
    pub actual_offered: Estimate,
    /// Carried load (B/s): distinct requests the server received.
    pub carried: Estimate,
    /// CoAP transmissions per completed exchange.
    pub tx_per_transaction: Estimate,
    /// Acknowledgements received per completed exchange.
    pub acks_per_transaction: Estimate,
    /// Requests dropped at full client buffers, per run.
    pub app_drops: Estimate,
    /// Exchanges abandoned, per run.
    pub failed: Estimate,
    /// Datagrams refused by full MAC buffers, per run (every node).
    pub mac_overflows: Estimate,
    /// Frames dropped after their last transmission, per run (every node).
    pub mac_drops: Estimate,
    /// Fragments and datagrams dropped by reassembly, per run.
    pub reassembly_drops: Estimate,
    /// Data frames put on the air per completed exchange (every node).
    pub frames_per_transaction: Estimate,
    /// Mean RTT sample E of completed exchanges (s).
    pub mean_rtt: f64,
    /// Per node (index = number − 1): carried load (B/s); zero for the root,
    /// the server and interferers.
    pub node_carried: Vec<Estimate>,
    /// Bursty runs: the interferers' carried load (B/s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interferer_carried: Option<Estimate>,
}

impl Summary {
    /// Summarises the runs of `spec`.
    pub fn of(label: &str, spec: &RunSpec, runs: &[RunResult]) -> Self {
        fn clients(r: &RunResult) -> impl Iterator<Item = &NodeResult> {
            r.nodes.iter().filter(|n| n.role == Role::Client)
        }
        let per_run = |f: &dyn Fn(&RunResult) -> f64| -> Estimate {
            Estimate::of(&runs.iter().map(f).collect::<Vec<_>>())
        };
        let size = spec.coap.request_size as f64;
        let n_clients = runs.first().map_or(0, |r| clients(r).count()) as u32;
        let sum = |r: &RunResult, f: &dyn Fn(&NodeResult) -> u64| -> f64 {
            clients(r).map(f).sum::<u64>() as f64
        };
        let all_nodes = |r: &RunResult, f: &dyn Fn(&NodeResult) -> u64| -> f64 {
            r.nodes.iter().map(f).sum::<u64>() as f64
        };
        let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };
        let (mut rtt_sum, mut completed) = (0.0, 0u64);
        for r in runs {
            for n in clients(r) {
                rtt_sum += n.rtt_sum;
                completed += n.completed;
            }
        }
        let n_nodes = runs.first().map_or(0, |r| r.nodes.len());
        let node_carried = (0..n_nodes)
            .map(|i| {
                per_run(&|r| {
                    let n = &r.nodes[i];
                    if n.role == Role::Client {
                        n.carried as f64 * size / r.duration
                    } else {
                        0.0
                    }
                })
            })
            .collect();
        let bursty = spec.workload.kind == WorkloadKind::Bursty;
        Summary {
            label: label.to_string(),
            replications: runs.len() as u32,
            clients: n_clients,
            offered: f64::from(n_clients) * size / spec.workload.period_s,
            actual_offered: per_run(&|r| sum(r, &|n| n.sent) * size / r.duration),
            carried: per_run(&|r| sum(r, &|n| n.carried) * size / r.duration),
            tx_per_transaction: per_run(&|r| {
                ratio(
                    sum(r, &|n| n.completed_transmissions),
                    sum(r, &|n| n.completed),
                )
            }),
            acks_per_transaction: per_run(&|r| {
                ratio(sum(r, &|n| n.acks), sum(r, &|n| n.completed))
            }),
            app_drops: per_run(&|r| sum(r, &|n| n.app_drops)),
            failed: per_run(&|r| sum(r, &|n| n.failed)),
            mac_overflows: per_run(&|r| all_nodes(r, &|n| n.mac.overflows)),
            mac_drops: per_run(&|r| all_nodes(r, &|n| n.mac.mac_drops)),
            reassembly_drops: per_run(&|r| all_nodes(r, &|n| n.mac.reassembly_drops)),
            frames_per_transaction: per_run(&|r| {
                ratio(
                    all_nodes(r, &|n| n.mac.data_frames),
                    sum(r, &|n| n.completed),
                )
            }),
            mean_rtt: if completed > 0 {
                rtt_sum / completed as f64
            } else {
                0.0
            },
            node_carried,
            interferer_carried: bursty.then(|| {
                per_run(&|r| {
                    r.nodes
                        .iter()
                        .filter(|n| n.role == Role::Interferer)
                        .map(|n| n.carried)
                        .sum::<u64>() as f64
                        * size
                        / r.duration
                })
            }),
        }
    }
}
