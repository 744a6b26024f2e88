//! The coapcc testbed: a deterministic discrete-event simulation of the networks
//! of the published CoAP congestion-control evaluations (spec `testbed.md`).
//!
//! A run is a pure function of its [`config::RunSpec`] and replication index:
//! virtual time is integer nanoseconds, every random stream is derived from the
//! scenario seed ([`rng`]), and the CoAP endpoints are the real sans-IO state
//! machines of `coapcc-proto` exchanging real encoded messages.
//!
//! - [`testbed`]: clients and a server on the constrained-link network
//!   ([`coapcc_link::dumbbell`]), and the event loop;
//! - [`grid`], [`grid_scenario`]: the pCoCoA evaluation on the 802.15.4 grid
//!   ([`coapcc_link::grid`]): periodic clients, bursty interferers, and its
//!   metrics;
//! - [`star`]: the lwIP evaluation on the Wi-Fi star ([`coapcc_link::star`]):
//!   bulk TCP senders and a sink;
//! - [`tcp_endpoint`]: CoAP over TCP clients and server connections (algorithms
//!   `tcp`, `tcp-lwip`, `tcp-lwip-backoff`, `tcp-lwip-cwnd`,
//!   `tcp-lwip-backoff-cwnd`);
//! - [`packets`]: the testbed's packets in flight, in slots sized by what they
//!   carry;
//! - [`config`], [`scenario`]: what to run; [`metrics`]: what comes out.
//! - [`spec_error`]: the error of a run that cannot run, for every network.
//!
//! The network model lives in `coapcc-link` and the workloads' vocabulary and
//! metrics in `coapcc-workload`; the modules re-exported below keep their
//! names here.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod client_factory;
pub mod config;
pub mod grid;
pub mod grid_scenario;
pub mod packets;
pub mod scenario;
pub mod spec_error;
pub mod star;
pub mod star_scenario;
pub mod stop;
pub mod tcp_endpoint;
pub mod testbed;

pub use coapcc_link::errors as link_errors;
pub use coapcc_link::{agenda, rng, time};
pub use coapcc_workload::{metrics, tcp_metrics};

pub use coapcc_link::dumbbell::Buffer;
pub use coapcc_link::errors::ErrorProfile;
pub use coapcc_workload::metrics::{Percentiles, RunResult, Summary};
pub use coapcc_workload::{AlgorithmSpec, Workload, WorkloadKind};
pub use config::{Coap, Group, Network, RunSpec};
pub use grid_scenario::{run_grid_scenario, GridScenario, GridScenarioResult, GridSummary};
pub use scenario::{run_scenario, Scenario, ScenarioResult};
pub use star_scenario::{run_star_scenario, StarScenario, StarScenarioResult, StarSummary};

/// Names the simulation model in result stores: change it whenever a change to
/// the simulator, the protocol code or an algorithm changes what a run
/// produces, so stored results of the old model are never mixed with new ones.
/// Model 3: the link errors' sojourns are clamped to their bounds, the server
/// answers a duplicate with the copy's own token (FASOR+Token), and `tcp` runs
/// Linux 4.9's loss recovery (SACK, RACK, TLP, F-RTO, PRR; model 2's `tcp` is
/// `tcp-newreno`). Model 4: `tcp` is Linux 4.9 as the thesis configured it
/// (SACK off: NewReno-style recovery, F-RTO, PRR; transport-tcp.md §2,
/// corrected); model 3's `tcp` is `tcp-linux49-debian9`. Model 5: the second
/// algorithm audit (pCoCoA smooths toward the previous undithered RTO, Alg. 2
/// line 19; CoCoA's estimate is no longer clamped, only the backed-off timer;
/// FASOR+Option leaves the original unmarked and FASOR+Token takes every echo
/// as unambiguous; FAST_SLOW_FAST at i = 1 uses the undithered FastRTO; the
/// lwIP cwnd variant halves the ssthresh in force on every retransmission and
/// on reaching it; CoCoA-S is built on CoCoA+), and the run's
/// `retransmissions_per_exchange` key. Model 6: the Linux profiles' timers
/// run on Linux's timer wheel at HZ = 250 (`coapcc_tcp::linux::wheel`): whole
/// jiffies, each timer firing at the end of its wheel bucket; and they
/// answer repeated SYNs at most once per 500 ms, restarting the SYN-ACK timer.
/// Model 7: the tail loss probe sends new data past a full cwnd (every Linux
/// profile with the probe), and `tcp-linux6` re-arms the probe and RTO only
/// on ACKs of data and keeps one probe per flight (the `tlp1` switch).
pub const MODEL_VERSION: &str = concat!("coapcc ", env!("CARGO_PKG_VERSION"), " model 7");
