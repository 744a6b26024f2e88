//! What one simulated run of the constrained-link testbed is made of: the
//! network, the CoAP settings, and the groups of clients (workload × algorithm ×
//! count); and the checks that it can run. Plain data, serialisable, so
//! that scenario files, campaigns and result stores share one description.

use coapcc_link::dumbbell::{self, IPV4_HEADER};
use coapcc_workload::{AlgorithmSpec, Workload, WorkloadKind};
use serde::{Deserialize, Serialize};

use crate::apps::coap_client;
use crate::spec_error::SpecError;

/// UDP header bytes.
pub const UDP_HEADER: usize = 8;

/// Whether `spec` selects CoAP over TCP (run by the dumbbell's TCP world,
/// `tcp.rs`, not by a CoAP congestion-control algorithm).
pub fn is_tcp(spec: &AlgorithmSpec) -> bool {
    spec.is_tcp()
}

/// CoAP settings shared by every client of a run (spec `docs/spec/algorithms-spec.md` §0.1, §7;
/// `docs/spec/testbed-spec.md` §1.2).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Coap {
    /// MAX_RETRANSMIT (the evaluations: 20).
    pub max_retransmit: u8,
    /// Uri-Path of the request (5 characters in the testbed: a 6-byte option).
    pub path: String,
    /// Payload bytes of the server's 2.05 response.
    pub response_payload: usize,
    /// NSTART (RFC 7252 §4.7): how many exchanges a UDP client keeps
    /// outstanding to the server at once, 1..=[`MAX_NSTART`] (the testbed:
    /// 1). With more than one, a client's exchanges are pipelined through
    /// its one algorithm state toward the server
    /// (`docs/decisions/algorithms-choices.md`, "Parallel exchanges (NSTART > 1)").
    /// Left out of the serialised spec when 1.
    #[serde(skip_serializing_if = "is_one")]
    pub nstart: u32,
}

/// The largest [`Coap::nstart`] a scenario may ask for.
pub const MAX_NSTART: u32 = 16;

fn is_one(n: &u32) -> bool {
    *n == 1
}

impl Default for Coap {
    fn default() -> Self {
        Coap {
            max_retransmit: 20,
            path: "sense".into(),
            response_payload: 60,
            nstart: 1,
        }
    }
}

/// A set of identical clients.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Group {
    /// The algorithm every client of the group runs.
    pub algorithm: AlgorithmSpec,
    /// Their workload.
    pub workload: Workload,
    /// How many clients.
    pub clients: u32,
}

/// Everything one simulated run needs, apart from the replication index.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunSpec {
    /// The network: the `[network]` table of a constrained-link scenario
    /// (spec `docs/spec/testbed-spec.md` §1).
    pub network: dumbbell::Config,
    /// CoAP settings.
    pub coap: Coap,
    /// The client population (one group, or several for mixed populations).
    pub groups: Vec<Group>,
    /// The scenario seed; each replication derives its own.
    pub seed: u64,
}

/// Checks that `spec` can run: algorithms known and parameters valid, messages fit
/// the MTU, rates positive.
pub fn validate(spec: &RunSpec) -> Result<(), SpecError> {
    let n = &spec.network;
    for (field, bps) in [
        ("uplink_bps", n.uplink_bps),
        ("downlink_bps", n.downlink_bps),
    ] {
        if bps == 0 {
            return Err(SpecError(format!(
                "network.{field}: expected a link rate greater than 0"
            )));
        }
    }
    if n.mtu < IPV4_HEADER + UDP_HEADER + 4 || n.mtu > 296 {
        return Err(SpecError(format!(
            "network.mtu: expected 32..=296 bytes, found {}",
            n.mtu
        )));
    }
    n.validate_delays().map_err(SpecError)?;
    let any_tcp = spec.groups.iter().any(|g| is_tcp(&g.algorithm));
    let nstart = spec.coap.nstart;
    if !(1..=MAX_NSTART).contains(&nstart) {
        return Err(SpecError(format!(
            "coap.nstart: expected 1..={MAX_NSTART} exchanges outstanding per client, found {nstart}"
        )));
    }
    if nstart > 1 && any_tcp {
        return Err(SpecError(format!(
            "coap.nstart: expected 1 with the tcp algorithms (NSTART is a rule of CoAP over \
             UDP), found {nstart}"
        )));
    }
    let any_udp = spec.groups.iter().any(|g| !is_tcp(&g.algorithm));
    let largest = IPV4_HEADER + UDP_HEADER + 4 + 8 + 1 + spec.coap.response_payload + 8;
    if any_udp && largest > n.mtu {
        return Err(SpecError(format!(
            "coap.response_payload: {} bytes do not fit the {}-byte MTU with headers",
            spec.coap.response_payload, n.mtu
        )));
    }
    if any_tcp {
        // The MSS is the MTU less 40 bytes of IPv4 and TCP headers; the response
        // must fit the client's Max-Message-Size (RFC 8323 base value 1152).
        if n.mtu < 48 {
            return Err(SpecError(format!(
                "network.mtu: CoAP over TCP needs at least 48 bytes, found {}",
                n.mtu
            )));
        }
        let frame = coapcc_proto::tcp::frame_len(0, &[], &vec![0; spec.coap.response_payload]);
        if frame > 1152 {
            return Err(SpecError(format!(
                "coap.response_payload: a {frame}-byte response exceeds the 1152-byte \
                 Max-Message-Size of CoAP over TCP"
            )));
        }
    }
    if spec.coap.path.len() > 200 {
        return Err(SpecError(
            "coap.path: expected at most 200 characters".into(),
        ));
    }
    if spec.groups.is_empty() || spec.groups.iter().all(|g| g.clients == 0) {
        return Err(SpecError("the population has no clients".into()));
    }
    for g in &spec.groups {
        g.algorithm.check_label().map_err(SpecError)?;
        coap_client::check(&g.algorithm)?;
        g.workload.check().map_err(SpecError)?;
        let kind = g.workload.kind;
        if !kind.is_request_response() {
            if is_tcp(&g.algorithm) {
                return Err(SpecError(format!(
                    "workload.kind: \"{}\" runs over CoAP over UDP; expected a UDP algorithm, \
                     found `{}`",
                    kind.name(),
                    g.algorithm.label()
                )));
            }
            if spec.groups.iter().any(|o| o.workload.kind != kind) {
                return Err(SpecError(format!(
                    "workload.kind: a run of \"{}\" clients cannot mix in other workloads",
                    kind.name()
                )));
            }
            if nstart > 1 {
                return Err(SpecError(format!(
                    "coap.nstart: expected 1 with workload.kind = \"{}\" (one block exchange or \
                     one notification in flight at a time), found {nstart}",
                    kind.name()
                )));
            }
        }
        match kind {
            WorkloadKind::Observe => super::observe::check(&g.workload)?,
            WorkloadKind::Blockwise => super::blockwise::check(&g.workload, spec)?,
            WorkloadKind::Continuous | WorkloadKind::Random => {}
        }
        let [a, b] = g.workload.batch;
        if g.workload.kind == WorkloadKind::Random && (a == 0 || b < a) {
            return Err(SpecError(
                "workload.batch: expected [lo, hi] with 1 <= lo <= hi".into(),
            ));
        }
        if g.workload.exchanges == 0 {
            return Err(SpecError("workload.exchanges: expected at least 1".into()));
        }
    }
    Ok(())
}
