//! What one simulated run of the constrained-link testbed is made of: the
//! network, the CoAP settings, and the groups of clients (workload × algorithm ×
//! count). Plain data, serialisable, so
//! that scenario files, campaigns and result stores share one description.

use serde::{Deserialize, Serialize};

pub use coapcc_link::dumbbell::Buffer;
pub use coapcc_workload::{AlgorithmSpec, Workload, WorkloadKind};

/// The dumbbell's parameters: the `[network]` table of a constrained-link
/// scenario (spec `testbed.md` §1; [`coapcc_link::dumbbell`]).
pub type Network = coapcc_link::dumbbell::Config;

/// CoAP settings shared by every client of a run (spec `algorithms.md` §0.1, §7;
/// `testbed.md` §1.2).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Coap {
    /// MAX_RETRANSMIT (the evaluations: 20).
    pub max_retransmit: u8,
    /// Uri-Path of the request (5 characters in the testbed: a 6-byte option).
    pub path: String,
    /// Payload bytes of the server's 2.05 response.
    pub response_payload: usize,
}

impl Default for Coap {
    fn default() -> Self {
        Coap {
            max_retransmit: 20,
            path: "sense".into(),
            response_payload: 60,
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
    /// The network.
    pub network: Network,
    /// CoAP settings.
    pub coap: Coap,
    /// The client population (one group, or several for mixed populations).
    pub groups: Vec<Group>,
    /// The scenario seed; each replication derives its own.
    pub seed: u64,
}
