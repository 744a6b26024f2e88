//! The lwIP evaluation (spec `docs/spec/testbed-spec.md` §2, §5; `docs/spec/radio-spec.md` §2): bulk TCP
//! senders on the stations of the Wi-Fi star of [`coapcc_link::star`], a TCP
//! sink behind the access point, and the paper's metrics.
//!
//! - Station `i` connects to the sink at `start_s` + U[0, interval) and,
//!   once connected, writes `write_bytes` every `interval_s`, `writes`
//!   times. A write that does not fit the send buffer waits, and is
//!   completed as soon as there is room (the application blocks).
//! - The stations run the TCP the algorithm names (`tcp`: the `linux`
//!   profile; `tcp-lwip` and its variants: lwIP 2.1), with the workload's
//!   MSS. An lwIP station's timers tick on its own 500 ms grid, from 250 ms
//!   after it connects.
//! - The sink is the same Reno-like receiver whatever the stations run (the
//!   `linux` profile): it accepts every connection, reads everything at
//!   once, acknowledges every segment (no delayed ACK) and advertises
//!   14 · MSS (`docs/spec/radio-spec.md` §2.3).
//! - The run ends when every byte written has been acknowledged, or
//!   `drain_s` after the last write is due.
//! - Goodput at the access point: bytes the sink received × 8 / the time
//!   from the first write to the last byte received. Uncongested, that is
//!   the offered load (the ns-3 reference's figure); late bytes lower it.
//! - Every station's congestion window, slow-start threshold, RTO and
//!   smoothed RTT are sampled every `sample_s` (default 0.5 s, lwIP's slow
//!   tick).
//!
//! - `config.rs`: what one run is ([`RunSpec`]) and its checks;
//! - `scenario.rs`: a star scenario file ([`Scenario`]);
//! - `world.rs`: the [`World`] of one run: the stations' bulk senders and
//!   the sink's ends of their connections, their segments in the shared
//!   segment pool ([`crate::apps::segments`]), and the samples;
//! - `result.rs`: what one run produces ([`RunResult`]);
//! - `summary.rs`: the paper's metrics over replications ([`Summary`]);
//! - `sim.rs`: [`Sim`], the network for [`crate::network::SimNetwork`].

mod config;
mod result;
mod scenario;
mod sim;
mod summary;
mod world;

pub use config::{tcp_config, validate, RunSpec, Workload};
pub use result::{RunResult, StationResult, TcpSample};
pub use scenario::Scenario;
pub use sim::Sim;
pub use summary::{MeanSample, Summary};
pub use world::World;
