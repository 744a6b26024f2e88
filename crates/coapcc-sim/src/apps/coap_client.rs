//! The CoAP client application: the real sans-IO client of `coapcc-proto`
//! ([`Client`]), running the congestion-control algorithm a scenario's
//! algorithm spec names, through the algorithm registry.
//!
//! A world builds a group's [`settings`] once (the algorithm and the
//! client configuration, shared by every client of the group) and one
//! [`endpoint`] per node; it then drives each endpoint with its workload
//! (requests, arriving datagrams, timeouts) and reads its transmissions and
//! events. Peers are the world's addresses (`u32`).

use std::sync::Arc;

use coapcc_link::rng::SimRng;
use coapcc_proto::client::{Client, ClientConfig, ClientSettings};
use coapcc_workload::AlgorithmSpec;

use crate::spec_error::SpecError;

/// A CoAP client endpoint of the simulator: peers are addresses, its
/// random stream is the simulator's.
pub type CoapClient = Client<u32, SimRng>;

/// Checks that the algorithm exists and accepts its parameters.
pub fn check(spec: &AlgorithmSpec) -> Result<(), SpecError> {
    spec.check().map_err(SpecError)
}

/// The settings of clients running `spec`'s algorithm with `config`,
/// built once and shared by a group of clients.
pub fn settings(
    spec: &AlgorithmSpec,
    config: ClientConfig,
) -> Result<Arc<ClientSettings>, SpecError> {
    let factory = spec.factory().map_err(SpecError)?;
    ClientSettings::new(config, factory)
        .map_err(|e| SpecError(format!("algorithm `{}`: {e}", factory.0.name)))
}

/// A client endpoint with `settings`, seeded from the node's own stream
/// `rng`: its random stream, then its first message ID, are the next two
/// draws of `rng`. Its peers are of type `P` (a world whose clients are of
/// another type than [`CoapClient`] gets its own copy of the client's code:
/// see `dumbbell/blockwise.rs`).
pub fn endpoint<P: Copy + Eq>(
    settings: &Arc<ClientSettings>,
    rng: &mut SimRng,
) -> Client<P, SimRng> {
    let coap_rng = SimRng::new(rng.next_u64());
    let first_mid = rng.next_u64() as u16;
    Client::with_settings(Arc::clone(settings), coap_rng, first_mid)
}
