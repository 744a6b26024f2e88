//! The constrained-link dumbbell of the Helsinki evaluations (spec
//! `docs/spec/testbed-spec.md` §1–2) in the simulator: CoAP clients (over UDP, or over TCP
//! with the `tcp*` algorithms) and one server on the network of
//! [`coapcc_link::dumbbell`].
//!
//! - `config.rs`: what one run is ([`RunSpec`]) and its checks;
//! - `scenario.rs`: a dumbbell scenario file ([`Scenario`]);
//! - `world.rs`: the [`World`] of one run and the [`Tap`] that sees its
//!   packets. It places the shared applications ([`crate::apps`]) on the
//!   nodes: a CoAP client endpoint on each UDP client, the CoAP server on
//!   the server node, their datagrams in the packet pool; and runs the
//!   clients' workloads and records;
//! - `observe.rs`: the world of observers (`workload.kind = "observe"`,
//!   RFC 7641): a server whose observed resource changes periodically and
//!   notifies every client;
//! - `blockwise.rs`: the world of block-wise transfers
//!   (`workload.kind = "blockwise"`, RFC 7959);
//! - `tcp.rs`: the CoAP-over-TCP clients and the server's connections
//!   (their segments in a segment pool), which the world drives;
//! - `sim.rs`: [`Sim`], the network for
//!   [`crate::network::SimNetwork`], and [`AnyWorld`], which hands each
//!   run to the world of its workload.
//!
//! Its run result, summary and workload are those of `coapcc-workload`
//! ([`RunResult`], [`Summary`], [`Workload`]), shared with the emulator and
//! re-exported here under the names every network uses.

mod blockwise;
mod config;
mod observe;
mod records;
mod scenario;
mod sim;
mod tcp;
mod world;

pub use coapcc_workload::metrics::{RunResult, Summary};
pub use coapcc_workload::{Workload, WorkloadKind};
pub use config::{is_tcp, validate, Coap, Group, RunSpec, MAX_NSTART, UDP_HEADER};
pub use scenario::Scenario;
pub use sim::{AnyWorld, Sim};
pub use tcp::{TcpNote, TcpTrace};
pub use world::{Tap, World, MAX_DATAGRAM, SERVER};
