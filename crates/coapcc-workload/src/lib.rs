//! Workloads of CoAP clients and what they measure, shared by the simulated
//! clients of `coapcc-sim` and the real-socket load generator of `coapcc-net`,
//! so that both report the same metrics from the same records (spec
//! `docs/spec/testbed-spec.md` §2–3).
//!
//! - [`algorithm`]: the algorithm a client runs, with its parameters;
//! - [`workload`]: continuous and random clients, observers and block-wise
//!   transfers;
//! - [`metrics`], [`tcp_metrics`], [`observe_metrics`],
//!   [`transfer_metrics`]: per-client records, per-run results and their
//!   summaries.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod algorithm;
pub mod metrics;
pub mod observe_metrics;
pub mod tcp_metrics;
pub mod transfer_metrics;
pub mod workload;

pub use algorithm::{AlgorithmSpec, TCP};
pub use metrics::{
    ClientRecord, Conservation, Estimate, LinkRecord, Percentiles, RunResult, Summary,
};
pub use workload::{BlockwiseSettings, ObserveSettings, TransferDirection, Workload, WorkloadKind};
