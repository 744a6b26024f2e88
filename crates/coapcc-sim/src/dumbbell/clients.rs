//! Builds the dumbbell's CoAP clients from scenario algorithm specs through the
//! algorithm registry.

use std::sync::Arc;

use coapcc_link::rng::SimRng;
use coapcc_proto::client::{Client, ClientConfig, ClientSettings};
use coapcc_workload::AlgorithmSpec;

use crate::spec_error::SpecError;

/// Whether `spec` selects CoAP over TCP (run by the dumbbell's TCP world, `tcp.rs`, not by
/// a CoAP congestion-control algorithm).
pub fn is_tcp(spec: &AlgorithmSpec) -> bool {
    spec.is_tcp()
}

/// Checks that the algorithm exists and accepts its parameters.
pub fn check(spec: &AlgorithmSpec) -> Result<(), SpecError> {
    spec.check().map_err(SpecError)
}

/// The settings of a group's clients running `spec`'s algorithm toward
/// every peer, built once and shared by the group.
pub fn settings(
    spec: &AlgorithmSpec,
    config: ClientConfig,
) -> Result<Arc<ClientSettings>, SpecError> {
    let factory = spec.factory().map_err(SpecError)?;
    ClientSettings::new(config, factory)
        .map_err(|e| SpecError(format!("algorithm `{}`: {e}", factory.0.name)))
}

/// A client endpoint with a group's shared `settings`.
pub fn client(settings: &Arc<ClientSettings>, rng: SimRng, first_mid: u16) -> Client<u32, SimRng> {
    Client::with_settings(Arc::clone(settings), rng, first_mid)
}
