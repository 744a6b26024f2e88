//! Builds simulated CoAP clients from scenario algorithm specs through the
//! algorithm registry.

use coapcc_proto::client::{Client, ClientConfig};

use crate::config::AlgorithmSpec;
use crate::rng::SimRng;
use crate::testbed::SpecError;

pub use coapcc_workload::TCP;

/// Whether `spec` selects CoAP over TCP (run by [`crate::tcp_endpoint`], not by
/// a CoAP congestion-control algorithm).
pub fn is_tcp(spec: &AlgorithmSpec) -> bool {
    spec.is_tcp()
}

/// Checks that the algorithm exists and accepts its parameters.
pub fn check(spec: &AlgorithmSpec) -> Result<(), SpecError> {
    spec.check().map_err(SpecError)
}

/// A client endpoint running `spec`'s algorithm toward every peer.
pub fn client(
    spec: &AlgorithmSpec,
    config: ClientConfig,
    rng: SimRng,
    first_mid: u16,
) -> Result<Client<u32, SimRng>, SpecError> {
    let factory = spec.factory().map_err(SpecError)?;
    Ok(Client::new(config, factory, rng, first_mid))
}
