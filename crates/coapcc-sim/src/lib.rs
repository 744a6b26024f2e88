//! The coapcc testbed: a deterministic discrete-event simulation of the networks
//! of the published CoAP congestion-control evaluations (spec `testbed.md`).
//!
//! A run is a pure function of its [`config::RunSpec`] and replication index:
//! virtual time is integer nanoseconds, every random stream is derived from the
//! scenario seed ([`rng`]), and the CoAP endpoints are the real sans-IO state
//! machines of `coapcc-proto` exchanging real encoded messages.
//!
//! - [`testbed`]: the constrained-link network and its event loop;
//! - [`link_errors`]: the two-state bursty error model;
//! - [`tcp_endpoint`]: CoAP over TCP clients and server connections (algorithm
//!   `tcp`); [`tcp_metrics`]: their counters by kind;
//! - [`config`], [`scenario`]: what to run; [`metrics`]: what comes out.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod agenda;
pub mod client_factory;
pub mod config;
pub mod link_errors;
pub mod metrics;
pub mod rng;
pub mod scenario;
pub mod tcp_endpoint;
pub mod tcp_metrics;
pub mod testbed;
pub mod time;

pub use config::{AlgorithmSpec, Buffer, Coap, Group, Network, RunSpec, Workload, WorkloadKind};
pub use link_errors::ErrorProfile;
pub use metrics::{Percentiles, RunResult, Summary};
pub use scenario::{run_scenario, Scenario, ScenarioResult};

/// Names the simulation model in result stores: change it whenever a change to
/// the simulator, the protocol code or an algorithm changes what a run
/// produces, so stored results of the old model are never mixed with new ones.
pub const MODEL_VERSION: &str = concat!("coapcc ", env!("CARGO_PKG_VERSION"), " model 1");
