//! What one run on the grid is: the network, the CoAP settings, the
//! workload and the algorithm ([`RunSpec`]), and the checks that it can
//! run.

use coapcc_link::grid;
use coapcc_link::rng::SimRng;
use coapcc_proto::client::{Client, ClientConfig, Request};
use coapcc_proto::message::Code;
use coapcc_workload::AlgorithmSpec;
use serde::{Deserialize, Serialize};

use crate::spec_error::SpecError;

/// Largest CoAP message a grid packet carries (marking included).
pub const MAX_MESSAGE: usize = 512;

/// CoAP settings of the grid (the pCoCoA paper, Table II).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Coap {
    /// Bytes of a request message (header, options, payload), before any
    /// marking an algorithm adds (the TC option of pCoCoA).
    pub request_size: usize,
    /// Uri-Path of the requests.
    pub path: String,
    /// Payload bytes of the server's 2.04 response.
    pub response_payload: usize,
    /// MAX_RETRANSMIT of the clients under test.
    pub max_retransmit: u8,
    /// Requests a client holds, the one in flight included.
    pub app_buffer: u32,
}

impl Default for Coap {
    fn default() -> Self {
        Coap {
            request_size: 95,
            path: "sense".into(),
            response_payload: 0,
            max_retransmit: 4,
            app_buffer: 4,
        }
    }
}

/// What the clients do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum WorkloadKind {
    /// Every client sends one request every `period_s`.
    #[default]
    Periodic,
    /// The `interferers` send in ON/OFF bursts; the others periodically.
    Bursty,
}

impl WorkloadKind {
    /// The name.
    pub fn name(self) -> &'static str {
        match self {
            WorkloadKind::Periodic => "periodic",
            WorkloadKind::Bursty => "bursty",
        }
    }
}

/// The grid's workload (spec `docs/spec/testbed-spec.md` §2, §4).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Workload {
    /// Periodic or bursty.
    pub kind: WorkloadKind,
    /// Request period of the periodic clients (s).
    pub period_s: f64,
    /// Time for the network to form before any client sends (s).
    pub warmup_s: f64,
    /// Traffic time after the warm-up (s).
    pub duration_s: f64,
    /// Bursty: the interfering nodes.
    pub interferers: Vec<u32>,
    /// Bursty: ON period (s).
    pub on_s: f64,
    /// Bursty: OFF period (s).
    pub off_s: f64,
    /// Bursty: the interferers' algorithm.
    pub interferer: AlgorithmSpec,
    /// Bursty: the interferers' MAX_RETRANSMIT.
    pub interferer_max_retransmit: u8,
    /// A node whose RTO and RTT samples are traced (none by default).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace_node: Option<u32>,
}

impl Default for Workload {
    fn default() -> Self {
        Workload {
            kind: WorkloadKind::Periodic,
            period_s: 10.0,
            warmup_s: 60.0,
            duration_s: 800.0,
            interferers: vec![2, 8, 15, 32, 34],
            on_s: 60.0,
            off_s: 120.0,
            interferer: AlgorithmSpec {
                ack_timeout: Some(1.0),
                ack_random_factor: Some(1.0),
                ..AlgorithmSpec::named("default")
            },
            interferer_max_retransmit: 1,
            trace_node: None,
        }
    }
}

/// One run on the grid: everything but the replication index.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunSpec {
    /// The network.
    pub network: grid::Config,
    /// CoAP settings.
    pub coap: Coap,
    /// The workload.
    pub workload: Workload,
    /// The algorithm of the clients (the periodic ones, in bursty runs).
    pub algorithm: AlgorithmSpec,
    /// The seed; each replication derives its own.
    pub seed: u64,
}

/// Checks that `spec` can run.
pub fn validate(spec: &RunSpec) -> Result<(), SpecError> {
    let topo = spec.network.validate().map_err(SpecError)?;
    let n = topo.len() as u32;
    let (root, server) = (spec.network.root, spec.network.server);
    if root == server {
        return Err(SpecError(
            "network.server: expected a node other than the root".into(),
        ));
    }
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
    if w.kind == WorkloadKind::Bursty {
        if !positive(w.on_s) || !positive(w.off_s) {
            return Err(SpecError(
                "workload.on_s, workload.off_s: expected positive durations up to 1e7 s".into(),
            ));
        }
        for &i in &w.interferers {
            if i == 0 || i > n || i == root || i == server {
                return Err(SpecError(format!(
                    "workload.interferers: node {i} is not a client (nodes 1 to {n}, not the root {root} or the server {server})"
                )));
            }
        }
        check_algorithm(&w.interferer, "workload.interferer")?;
    }
    if let Some(t) = w.trace_node {
        if t == 0 || t > n || t == root || t == server {
            return Err(SpecError(format!(
                "workload.trace_node: node {t} is not a client"
            )));
        }
    }
    check_algorithm(&spec.algorithm, "algorithm")?;
    let c = &spec.coap;
    if c.app_buffer == 0 {
        return Err(SpecError("coap.app_buffer: expected at least 1".into()));
    }
    if c.path.len() > 64 {
        return Err(SpecError(
            "coap.path: expected at most 64 characters".into(),
        ));
    }
    let base = request_base(&c.path);
    let largest = grid::sixlowpan::max_coap(spec.network.addressing, spec.network.hop_by_hop)
        .min(MAX_MESSAGE - 16);
    if c.request_size < base || c.request_size > largest {
        return Err(SpecError(format!(
            "coap.request_size: expected {base} to {largest} bytes (a POST to `{}` with no payload is {base}), found {}",
            c.path, c.request_size
        )));
    }
    if c.response_payload > 64 {
        return Err(SpecError(
            "coap.response_payload: expected at most 64 bytes".into(),
        ));
    }
    Ok(())
}

fn check_algorithm(a: &AlgorithmSpec, field: &str) -> Result<(), SpecError> {
    if a.is_tcp() {
        return Err(SpecError(format!(
            "{field}: CoAP over TCP does not run on the grid (it has no TCP); use a CoAP algorithm"
        )));
    }
    a.check().map_err(|e| SpecError(format!("{field}: {e}")))
}

/// Bytes of a POST to `path` with no payload and no marking.
fn request_base(path: &str) -> usize {
    let mut c = probe_client();
    let req = Request {
        method: Code::POST,
        path,
        payload: &[],
        confirmable: true,
    };
    c.request(0, 0, &req).expect("a probe request encodes");
    let mut buf = [0u8; 1200];
    c.poll_transmit(&mut buf).expect("the probe is sent").len
}

fn probe_client() -> Client<u32, SimRng> {
    let factory = AlgorithmSpec::named("default")
        .factory()
        .expect("default CoAP exists");
    Client::new(ClientConfig::default(), factory, SimRng::new(0), 0)
}

/// The request payload that makes a request `size` bytes long: the base
/// message, a payload marker and the payload.
pub(super) fn request_payload(coap: &Coap) -> Vec<u8> {
    let base = request_base(&coap.path);
    let n = coap.request_size.saturating_sub(base + 1);
    vec![b'p'; n]
}
