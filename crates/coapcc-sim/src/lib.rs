//! The coapcc testbed: a deterministic discrete-event simulation of the networks
//! of the published CoAP congestion-control evaluations (spec `docs/spec/testbed-spec.md`).
//!
//! A run is a pure function of its run spec and replication index: virtual
//! time is integer nanoseconds, every random stream is derived from the
//! scenario seed ([`coapcc_link::rng`]), and the CoAP endpoints are the real
//! sans-IO state machines of `coapcc-proto` exchanging real encoded messages.
//!
//! Each network is a folder implementing [`network::SimNetwork`]:
//! - [`dumbbell`]: the constrained-link testbed of the Helsinki evaluations
//!   ([`coapcc_link::dumbbell`]): CoAP clients over UDP or TCP and a server;
//! - [`grid`]: the pCoCoA evaluation on the 802.15.4 grid
//!   ([`coapcc_link::grid`]): periodic clients, bursty interferers, and its
//!   metrics;
//! - [`star`]: the lwIP evaluation on the Wi-Fi star ([`coapcc_link::star`]):
//!   bulk TCP senders and a sink.
//!
//! Each network's folder has the same files for the same roles: `config.rs`
//! (its [`dumbbell::RunSpec`] and checks), `scenario.rs` (its scenario file,
//! `Scenario`), `world.rs` (the `World` of one run), `sim.rs` (the unit type
//! `Sim` implementing [`network::SimNetwork`]) and, where the network has
//! its own, `result.rs` (`RunResult`) and `summary.rs` (`Summary`).
//!
//! Shared by all of them:
//! - [`apps`]: the applications a world places on its nodes (the packet and
//!   segment pools, the CoAP client endpoint, the CoAP server);
//! - [`network`]: what a network provides, and the run entry points;
//! - [`event_loop`]: the one event loop, driving any `coapcc_link` network;
//! - [`scenario`]: running a scenario file's algorithms and replications;
//! - [`stop`]: stopping runs from outside; [`spec_error`]: the error of a run
//!   that cannot run.
//!
//! The network models live in `coapcc-link`; the workloads' vocabulary and the
//! dumbbell's metrics live in `coapcc-workload` and are re-exported below for
//! the front-ends.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod apps;
pub mod dumbbell;
pub mod event_loop;
pub mod grid;
pub mod lorawan;
pub mod network;
pub mod scenario;
pub mod spec_error;
pub mod star;
pub mod stop;

pub use coapcc_workload::metrics::{Percentiles, RunResult, Summary};
pub use coapcc_workload::{metrics, observe_metrics, tcp_metrics, transfer_metrics};
pub use coapcc_workload::{AlgorithmSpec, Workload, WorkloadKind};
pub use network::{SimNetwork, Tapped};
pub use scenario::{
    run_scenario, run_scenario_stoppable, Comparison, NetworkScenario, ScenarioResult,
};

/// Names the simulation model in result stores: change it whenever a change to
/// the simulator, the protocol code or an algorithm changes what a run
/// produces, so stored results of the old model are never mixed with new ones.
/// Model 3: the link errors' sojourns are clamped to their bounds, the server
/// answers a duplicate with the copy's own token (FASOR+Token), and `tcp` runs
/// Linux 4.9's loss recovery (SACK, RACK, TLP, F-RTO, PRR; model 2's `tcp` is
/// `tcp-newreno`). Model 4: `tcp` is Linux 4.9 as the thesis configured it
/// (SACK off: NewReno-style recovery, F-RTO, PRR; docs/spec/transport-tcp-spec.md §2,
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
/// Model 8: `tcp-linux6` and `tcp-linux6-nosack` send the window-scale
/// option on SYN and SYN-ACK (the `wscale` switch: 4 bytes each).
/// Model 9: the dumbbell's timers on Linux's wheel (`tcp` and every
/// `tcp-linux*` profile) run at one jiffy by level from the highest and,
/// within a bucket, last armed first (`coapcc_tcp::linux::wheel::Due`).
/// Model 10: `tcp` runs what Linux 4.9 does by default and the thesis did
/// not change: early retransmit on Reno's duplicate ACKs, the window-scale
/// option on SYN and SYN-ACK, and a fresh rate-limit stamp for the accepted
/// connection (`er`, `wscale`, `oowreset`; `tcp-linux49-debian9` gains the
/// last two, `tcp-linux6` and `tcp-linux6-nosack` the last); and the lwIP
/// cwnd variants set cwnd = min(cwnd, ssthresh)/2 after a timeout (the
/// `min` reading; model 5–9's is `:prior`).
pub const MODEL_VERSION: &str = concat!("coapcc ", env!("CARGO_PKG_VERSION"), " model 10");
