//! CoAP congestion control over LoRaWAN class A (`docs/lorawan.md`): a
//! CoAP client on every end device of [`coapcc_link::lorawan`], the CoAP
//! server behind the gateway, a periodic Confirmable workload, and the
//! metrics of confirmed traffic.
//!
//! - Every device runs a client of the algorithm under test. After the
//!   warm-up each starts at a random offset in [0, T) and generates a
//!   Confirmable request (POST or GET) every T seconds. A device holds at
//!   most `app_buffer` requests, the one in flight included; a request that
//!   finds them all taken is dropped at the device. NSTART 1.
//! - The server answers every request with a piggybacked response; the
//!   network carries it in the device's RX windows (or holds it for its
//!   next uplink).
//! - Requests and responses past the frame limit of the largest spreading
//!   factor of the disc are refused before the run.
//! - The run ends `duration` seconds after the warm-up; open exchanges are
//!   counted unfinished.
//!
//! - `config.rs`: what one run is ([`RunSpec`]) and its checks;
//! - `scenario.rs`: a LoRaWAN scenario file ([`Scenario`]);
//! - `world.rs`: the [`World`] of one run;
//! - `result.rs`: what one run produces ([`RunResult`]);
//! - `summary.rs`: an algorithm's metrics over replications ([`Summary`]);
//! - `sim.rs`: [`Sim`], the network for [`crate::network::SimNetwork`];
//! - `schc.rs`: the frames' sizes, by SCHC compression of each message.

mod config;
mod result;
mod scenario;
mod schc;
mod sim;
mod summary;
mod world;

pub use config::{
    payload_limit, response_size, validate, Coap, Method, RunSpec, Workload, MAX_MESSAGE,
};
pub use result::{DeviceResult, Drops, RunResult};
pub use scenario::Scenario;
pub use sim::Sim;
pub use summary::Summary;
pub use world::{Event, Observed, World};
