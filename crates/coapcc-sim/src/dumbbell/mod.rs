//! The constrained-link dumbbell of the Helsinki evaluations (spec
//! `testbed.md` §1–2) in the simulator: CoAP clients (over UDP, or over TCP
//! with the `tcp*` algorithms) and one server on the network of
//! [`coapcc_link::dumbbell`].
//!
//! - `config.rs`: what one run is ([`RunSpec`]) and its checks;
//! - `scenario.rs`: a dumbbell scenario file ([`Scenario`]);
//! - `testbed.rs`: the world of one run (clients, server, records) and the
//!   [`Tap`] that sees its packets;
//! - `tcp.rs`: the CoAP-over-TCP clients and the server's connections;
//! - `clients.rs`: CoAP clients built from algorithm specs;
//! - `packets.rs`: the packets in flight.
//!
//! [`DumbbellSim`] is the network for [`crate::network::SimNetwork`]: its run
//! result is [`coapcc_workload::metrics::RunResult`], its summary
//! [`coapcc_workload::metrics::Summary`].

mod clients;
mod config;
mod packets;
mod scenario;
mod tcp;
mod testbed;

use coapcc_workload::metrics::{RunResult, Summary};

use crate::network::{SimNetwork, Tapped};
use crate::spec_error::SpecError;

pub use clients::is_tcp;
pub use config::{validate, Coap, Group, Network, RunSpec, UDP_HEADER};
pub use scenario::Scenario;
pub use tcp::{TcpNote, TcpTrace};
pub use testbed::{Tap, MAX_DATAGRAM, SERVER};

/// The dumbbell, as a network of the simulator.
#[derive(Clone, Copy, Debug)]
pub struct DumbbellSim;

impl SimNetwork for DumbbellSim {
    type RunSpec = RunSpec;
    type RunResult = RunResult;
    type Summary = Summary;
    type World<'a> = testbed::Testbed<'a>;

    fn validate(spec: &RunSpec) -> Result<(), SpecError> {
        validate(spec)
    }

    fn world(spec: &RunSpec, replication: u32) -> Result<testbed::Testbed<'_>, SpecError> {
        testbed::Testbed::new(spec, replication)
    }

    fn summary(label: &str, _spec: &RunSpec, runs: &[RunResult]) -> Summary {
        Summary::of(label, 0, runs)
    }
}

impl Tapped for DumbbellSim {
    type Tap<'a> = dyn Tap + 'a;

    fn attach<'a>(world: &mut testbed::Testbed<'a>, tap: &'a mut (dyn Tap + 'a)) {
        world.attach(tap);
    }
}
