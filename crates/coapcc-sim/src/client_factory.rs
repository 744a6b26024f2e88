//! Builds simulated CoAP clients from scenario algorithm specs through the
//! algorithm registry.

use coapcc_proto::client::{Client, ClientConfig};
use coapcc_rto::registry;

use crate::config::AlgorithmSpec;
use crate::rng::SimRng;
use crate::testbed::SpecError;

/// Checks that the algorithm exists and accepts its parameters.
pub fn check(spec: &AlgorithmSpec) -> Result<(), SpecError> {
    let info = registry::find(&spec.name).ok_or_else(|| {
        SpecError(format!(
            "algorithm `{}`: unknown; expected one of: {}",
            spec.name,
            registry::names()
        ))
    })?;
    let params = spec
        .params()
        .map_err(|e| SpecError(format!("algorithm `{}`: {e}", spec.name)))?;
    (info.build)(&params).map_err(|e| SpecError(e.to_string()))?;
    Ok(())
}

/// A client endpoint running `spec`'s algorithm toward every peer.
pub fn client(
    spec: &AlgorithmSpec,
    config: ClientConfig,
    rng: SimRng,
    first_mid: u16,
) -> Result<Client<u32, SimRng>, SpecError> {
    check(spec)?;
    let info = registry::find(&spec.name).expect("checked");
    let params = spec.params().expect("checked");
    Ok(Client::new(config, (info, params), rng, first_mid))
}
