//! The constrained-link dumbbell of the Helsinki evaluations (spec
//! `docs/spec/testbed.md` §1–2) in the simulator: CoAP clients (over UDP, or over TCP
//! with the `tcp*` algorithms) and one server on the network of
//! [`coapcc_link::dumbbell`].
//!
//! - `config.rs`: what one run is ([`RunSpec`]) and its checks;
//! - `scenario.rs`: a dumbbell scenario file ([`Scenario`]);
//! - `testbed.rs`: the world of one run (clients, server, records) and the
//!   [`Tap`] that sees its packets;
//! - `tcp.rs`: the CoAP-over-TCP clients and the server's connections;
//! - `clients.rs`: CoAP clients built from algorithm specs;
//! - `packets.rs`: the packets in flight;
//! - `sim.rs`: [`DumbbellSim`], the network for
//!   [`crate::network::SimNetwork`]: its run result is
//!   [`coapcc_workload::metrics::RunResult`], its summary
//!   [`coapcc_workload::metrics::Summary`].

mod clients;
mod config;
mod packets;
mod scenario;
mod sim;
mod tcp;
mod testbed;

pub use clients::is_tcp;
pub use config::{validate, Coap, Group, Network, RunSpec, UDP_HEADER};
pub use scenario::Scenario;
pub use sim::DumbbellSim;
pub use tcp::{TcpNote, TcpTrace};
pub use testbed::{Tap, MAX_DATAGRAM, SERVER};
