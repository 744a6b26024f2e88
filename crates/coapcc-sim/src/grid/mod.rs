//! The pCoCoA evaluation (spec `docs/spec/testbed-spec.md` §2–4, `docs/spec/radio-spec.md` §1.7): CoAP
//! clients on the nodes of the 802.15.4 grid of [`coapcc_link::grid`], one
//! CoAP server, periodic clients and bursty interferers, and the paper's
//! metrics.
//!
//! - Every node but the border router and the server runs a client. After a
//!   warm-up (when the paper's RPL formed its tree; ours is static) each
//!   periodic client starts at a random offset in [0, T) and generates a
//!   Confirmable POST every T seconds. A client holds at most `app_buffer`
//!   requests, the one in flight included (Erbium's open transactions); a
//!   request that finds them all taken is dropped at the client. NSTART 1:
//!   the next held request is sent when the current one completes or fails.
//! - Bursty interferers alternate OFF and ON periods: after a random offset in
//!   [0, OFF) they send back to back for ON seconds, then stay silent for OFF
//!   seconds, and so on; they run their own algorithm (the paper: Default
//!   CoAP with ACK_TIMEOUT 1 s, ACK_RANDOM_FACTOR 1, MAX_RETRANSMIT 1).
//! - The server answers every request with a piggybacked 2.04 Changed.
//! - The run ends `duration` seconds after the warm-up; what is still in
//!   flight then is not counted.
//!
//! - `config.rs`: what one run is ([`RunSpec`]) and its checks;
//! - `scenario.rs`: a grid scenario file ([`Scenario`]);
//! - `world.rs`: the [`World`] of one run, and the [`Tap`] that sees its
//!   frames. It places the shared applications ([`crate::apps`]) on the
//!   nodes: a CoAP client endpoint on every client and interferer, the
//!   CoAP server with the sink handler on the server node, their datagrams
//!   in the packet pool; and runs the periodic and bursty workloads and
//!   the records;
//! - `result.rs`: what one run produces ([`RunResult`]);
//! - `summary.rs`: the paper's metrics over replications ([`Summary`]);
//! - `sim.rs`: [`Sim`], the network for [`crate::network::SimNetwork`].

mod config;
mod result;
mod scenario;
mod sim;
mod summary;
mod world;

pub use config::{validate, Coap, RunSpec, Workload, WorkloadKind, MAX_MESSAGE};
pub use result::{NodeResult, Role, RunResult, TraceKind, TracePoint};
pub use scenario::Scenario;
pub use sim::Sim;
pub use summary::Summary;
pub use world::{Tap, World};
