//! Builds simulated CoAP clients from scenario algorithm specs through the
//! algorithm registry.

use coapcc_proto::client::{Client, ClientConfig};
use coapcc_rto::registry;

use crate::config::AlgorithmSpec;
use crate::rng::SimRng;
use crate::testbed::SpecError;

/// The name that selects CoAP over TCP with the `linux` profile (spec
/// `algorithms.md` §8, `transport-tcp.md` §2).
pub const TCP: &str = "tcp";

/// Whether `spec` selects CoAP over TCP (run by [`crate::tcp_endpoint`], not by
/// a CoAP congestion-control algorithm).
pub fn is_tcp(spec: &AlgorithmSpec) -> bool {
    spec.name == TCP
}

/// CoAP over TCP takes none of the CoAP timer parameters.
fn check_tcp(spec: &AlgorithmSpec) -> Result<(), SpecError> {
    let set = [
        ("cap", spec.cap.is_some()),
        ("aging", spec.aging.is_some()),
        ("first_sample", spec.first_sample.is_some()),
        ("slowrto_factor", spec.slowrto_factor.is_some()),
        ("ack_timeout", spec.ack_timeout.is_some()),
        ("ack_random_factor", spec.ack_random_factor.is_some()),
    ];
    match set.iter().find(|(_, on)| *on) {
        Some((name, _)) => Err(SpecError(format!(
            "algorithm `tcp`: parameter `{name}` does not apply to CoAP over TCP"
        ))),
        None => Ok(()),
    }
}

/// Checks that the algorithm exists and accepts its parameters.
pub fn check(spec: &AlgorithmSpec) -> Result<(), SpecError> {
    if is_tcp(spec) {
        return check_tcp(spec);
    }
    if spec.name.starts_with("tcp-lwip") {
        return Err(SpecError(format!(
            "algorithm `{}`: the lwIP TCP profiles (transport-tcp.md §3) are not implemented \
             in the testbed yet; `tcp` (the linux profile) is",
            spec.name
        )));
    }
    let info = registry::find(&spec.name).ok_or_else(|| {
        SpecError(format!(
            "algorithm `{}`: unknown; expected one of: {}, {TCP}",
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
    if is_tcp(spec) {
        return Err(SpecError(
            "algorithm `tcp`: CoAP over TCP has no UDP client (see tcp_endpoint)".into(),
        ));
    }
    check(spec)?;
    let info = registry::find(&spec.name).expect("checked");
    let params = spec.params().expect("checked");
    Ok(Client::new(config, (info, params), rng, first_mid))
}
