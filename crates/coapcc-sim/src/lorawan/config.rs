//! What one run on LoRaWAN is: the network, the CoAP settings, the
//! workload and the algorithm ([`RunSpec`]), and the checks that it can
//! run, message sizes against the payload limit included.

use coapcc_link::lorawan::{self, airtime, SfAllocation};
use coapcc_link::rng::SimRng;
use coapcc_proto::client::{Client, ClientConfig, Request};
use coapcc_proto::message::Code;
use coapcc_workload::AlgorithmSpec;
use serde::{Deserialize, Serialize};

use super::schc::Sizes;
use crate::apps::coap_server::{CoapServer, Sink};
use crate::apps::packets::PacketPool;
use crate::spec_error::SpecError;

/// Largest CoAP message a LoRaWAN frame carries: EU868's largest
/// FRMPayload (222 bytes at SF7 and SF8), with room for an algorithm's
/// marking.
pub const MAX_MESSAGE: usize = 256;

/// The method of the devices' requests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Method {
    /// A POST, answered 2.04 Changed.
    #[default]
    Post,
    /// A GET, answered 2.05 Content.
    Get,
}

impl Method {
    /// `POST` or `GET`.
    pub fn name(self) -> &'static str {
        match self {
            Method::Post => "POST",
            Method::Get => "GET",
        }
    }

    fn code(self) -> Code {
        match self {
            Method::Post => Code::POST,
            Method::Get => Code::GET,
        }
    }
}

/// CoAP settings of the devices and the server.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Coap {
    /// `POST` or `GET`.
    pub method: Method,
    /// Bytes of a request message (header, token, options, payload), before
    /// any marking an algorithm adds.
    pub request_size: usize,
    /// Uri-Path of the requests.
    pub path: String,
    /// Payload bytes of the server's piggybacked response.
    pub response_payload: usize,
    /// MAX_RETRANSMIT of the devices.
    pub max_retransmit: u8,
    /// Requests a device holds, the one in flight included.
    pub app_buffer: u32,
}

impl Default for Coap {
    fn default() -> Self {
        Coap {
            method: Method::Post,
            request_size: 24,
            path: "sense".into(),
            response_payload: 8,
            max_retransmit: 4,
            app_buffer: 1,
        }
    }
}

/// The devices' periodic workload.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Workload {
    /// Request period of every device (s); each starts at a random offset
    /// in [0, period) after the warm-up.
    pub period_s: f64,
    /// Time before any device sends (s).
    pub warmup_s: f64,
    /// Traffic time after the warm-up (s).
    pub duration_s: f64,
}

impl Default for Workload {
    fn default() -> Self {
        Workload {
            period_s: 600.0,
            warmup_s: 0.0,
            duration_s: 3600.0,
        }
    }
}

/// One run on LoRaWAN: everything but the replication index.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunSpec {
    /// The network.
    pub network: lorawan::Config,
    /// CoAP settings.
    pub coap: Coap,
    /// The workload.
    pub workload: Workload,
    /// The algorithm of every device.
    pub algorithm: AlgorithmSpec,
    /// The seed; each replication derives its own.
    pub seed: u64,
}

/// Checks that `spec` can run.
pub fn validate(spec: &RunSpec) -> Result<(), SpecError> {
    spec.network.validate().map_err(SpecError)?;
    let w = &spec.workload;
    let positive = |v: f64| v > 0.0 && v.is_finite() && v <= 1e7;
    if !positive(w.period_s) {
        return Err(SpecError(format!(
            "workload.period_s: expected a positive period up to 1e7 s, found {}",
            w.period_s
        )));
    }
    if !((0.0..=1e7).contains(&w.warmup_s) && positive(w.duration_s)) {
        return Err(SpecError(
            "workload.warmup_s, workload.duration_s: expected 0 ≤ warm-up, 0 < duration, both ≤ 1e7 s"
                .into(),
        ));
    }
    if spec.algorithm.is_tcp() {
        return Err(SpecError(
            "algorithm: CoAP over TCP does not run on LoRaWAN; use a CoAP algorithm".into(),
        ));
    }
    spec.algorithm
        .check()
        .map_err(|e| SpecError(format!("algorithm: {e}")))?;
    let c = &spec.coap;
    if c.app_buffer == 0 {
        return Err(SpecError("coap.app_buffer: expected at least 1".into()));
    }
    if c.path.len() > 64 {
        return Err(SpecError(
            "coap.path: expected at most 64 characters".into(),
        ));
    }
    check_sizes(spec)
}

/// The frame limit: the largest FRMPayload every device can carry, at the
/// largest spreading factor a device of the disc may get (the disc's edge,
/// or the fixed SF); with that SF.
pub fn payload_limit(net: &lorawan::Config) -> (usize, airtime::Sf) {
    let sf = match net.spreading_factor {
        SfAllocation::Distance => net.path_loss.allocate_sf(net.radius_m).sf,
        SfAllocation::Fixed(sf) => sf,
    };
    (airtime::max_frm_payload(sf), sf)
}

/// Refuses a request or response whose SCHC compression (`schc.rs`) is
/// past the frame limit ([`payload_limit`]), and a `schc_residue` other
/// than the default: the simulator sizes frames by compressing each
/// message, the fixed residue is the emulator's.
fn check_sizes(spec: &RunSpec) -> Result<(), SpecError> {
    let c = &spec.coap;
    if spec.network.schc_residue != lorawan::Config::default().schc_residue {
        return Err(SpecError(
            "network.schc_residue: the simulator sizes each frame by compressing its CoAP \
             message with the SCHC rule set (docs/schc.md); the fixed residue is for \
             `coapcc emulate`, which carries datagrams, not CoAP messages"
                .into(),
        ));
    }
    let (limit, sf) = payload_limit(&spec.network);
    let base = request_base(c);
    if c.request_size < base || c.request_size > MAX_MESSAGE {
        return Err(SpecError(format!(
            "coap.request_size: expected {base} to {MAX_MESSAGE} bytes (a {:?} to `{}` with no \
             payload is {base}), found {}",
            c.method, c.path, c.request_size
        )));
    }
    if c.response_payload > MAX_MESSAGE {
        return Err(SpecError(format!(
            "coap.response_payload: expected at most {MAX_MESSAGE} bytes, found {}",
            c.response_payload
        )));
    }
    let mut sizes = Sizes::default();
    let why = format!(
        "SF{}'s frame limit ({limit} bytes of FRMPayload, the largest SF of the disc)",
        sf.get()
    );
    let request = sizes.frame(&probe_request(c), true);
    if request > limit {
        return Err(SpecError(format!(
            "coap.request_size: a request of {} bytes compresses (SCHC) to {request} bytes, \
             past {why}",
            c.request_size
        )));
    }
    let response = sizes.frame(&response(c), false);
    if response > limit {
        return Err(SpecError(format!(
            "coap.response_payload: a response with {} payload bytes compresses (SCHC) to \
             {response} bytes, past {why}",
            c.response_payload
        )));
    }
    Ok(())
}

/// A request of `coap` with `payload`, encoded by a real client (no
/// marking: default CoAP).
fn probe(coap: &Coap, payload: &[u8]) -> Vec<u8> {
    let factory = AlgorithmSpec::named("default")
        .factory()
        .expect("default CoAP exists");
    let mut c: Client<u32, SimRng> =
        Client::new(ClientConfig::default(), factory, SimRng::new(0), 0);
    c.request(0, 0, &request(coap, payload))
        .expect("a probe request encodes");
    let mut buf = [0u8; 1200];
    let len = c.poll_transmit(&mut buf).expect("the probe is sent").len;
    buf[..len].to_vec()
}

/// The request every device sends, encoded (no marking).
pub(super) fn probe_request(coap: &Coap) -> Vec<u8> {
    probe(coap, &request_payload(coap))
}

/// Bytes of a request with no payload and no marking.
fn request_base(coap: &Coap) -> usize {
    probe(coap, &[]).len()
}

/// Bytes of the server's response to a request of `coap` (a real
/// encoding: the shared server answers an encoded request).
pub fn response_size(coap: &Coap) -> usize {
    response(coap).len()
}

/// The server's response to a request of `coap`, encoded.
pub(super) fn response(coap: &Coap) -> Vec<u8> {
    let bytes = probe(coap, &request_payload(coap));
    let mut pool = PacketPool::default();
    let p = pool.alloc(0, 1, &bytes);
    let sink = Sink {
        payload: coap.response_payload,
    };
    let mut server = CoapServer::new(1, sink, 1, 1200);
    server
        .answer(0, &mut pool, p)
        .map_or_else(Vec::new, |reply| {
            pool.get(reply.packet).data[..reply.len].to_vec()
        })
}

/// The request payload that makes a request `request_size` bytes long: the
/// base message, a payload marker and the payload.
pub(super) fn request_payload(coap: &Coap) -> Vec<u8> {
    let base = request_base(coap);
    let n = coap.request_size.saturating_sub(base + 1);
    vec![b'p'; n]
}

/// The request every device sends.
pub(super) fn request<'a>(coap: &'a Coap, payload: &'a [u8]) -> Request<'a> {
    Request {
        method: coap.method.code(),
        path: &coap.path,
        payload,
        confirmable: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> RunSpec {
        RunSpec {
            network: lorawan::Config::default(),
            coap: Coap::default(),
            workload: Workload::default(),
            algorithm: AlgorithmSpec::named("cocoa"),
            seed: 1,
        }
    }

    fn error(f: impl FnOnce(&mut RunSpec)) -> String {
        let mut s = spec();
        f(&mut s);
        validate(&s).expect_err("refused").0
    }

    #[test]
    fn the_default_runs() {
        validate(&spec()).unwrap();
    }

    #[test]
    fn messages_past_the_frame_limit_are_refused_by_field() {
        // The default disc (6400 m) reaches SF12: 51 bytes of FRMPayload.
        assert_eq!(payload_limit(&spec().network), (51, airtime::Sf::SF12));
        // POST /sense, no token: 10 bytes of CoAP header and options,
        // compressed to a 2-byte residue; a marker and the payload follow
        // in CoAP, the payload alone after SCHC. 62 bytes: 51 of payload,
        // 53 compressed; 60 bytes: 49, 51 compressed.
        let e = error(|s| s.coap.request_size = 62);
        assert!(
            e.starts_with("coap.request_size: a request of 62 bytes compresses (SCHC) to 53 bytes, past SF12's frame limit (51 bytes"),
            "{e}"
        );
        let mut s = spec();
        s.coap.request_size = 60;
        validate(&s).unwrap();
        let e = error(|s| s.coap.response_payload = 60);
        assert!(
            e.starts_with("coap.response_payload: a response with 60"),
            "{e}"
        );
        let e = error(|s| s.coap.response_payload = 100_000);
        assert!(
            e.starts_with("coap.response_payload: expected at most"),
            "{e}"
        );
        let e = error(|s| s.network.schc_residue = 4);
        assert!(
            e.starts_with("network.schc_residue: the simulator sizes"),
            "{e}"
        );
        // At SF7 (222 bytes) a longer request fits.
        let mut s = spec();
        s.network.spreading_factor = SfAllocation::Fixed(airtime::Sf::SF7);
        s.coap.request_size = 200;
        validate(&s).unwrap();
    }

    #[test]
    fn sizes_are_real_encodings() {
        let c = Coap::default();
        // POST /sense: header 4, an empty token, Uri-Path 6.
        let base = request_base(&c);
        assert_eq!(request_payload(&c).len(), c.request_size - base - 1);
        // 2.04: header 4, a marker and 8 bytes.
        assert_eq!(response_size(&c), base - 6 + 1 + 8);
    }

    #[test]
    fn bad_workloads_and_algorithms_are_refused() {
        assert!(error(|s| s.workload.period_s = 0.0).starts_with("workload.period_s"));
        assert!(error(|s| s.workload.duration_s = -1.0).starts_with("workload.warmup_s"));
        assert!(error(|s| s.coap.app_buffer = 0).starts_with("coap.app_buffer"));
        assert!(error(|s| s.algorithm = AlgorithmSpec::named("tcp")).starts_with("algorithm:"));
        assert!(error(|s| s.algorithm = AlgorithmSpec::named("nope")).starts_with("algorithm:"));
        assert!(error(|s| s.network.devices = 0).starts_with("network.devices"));
    }
}
