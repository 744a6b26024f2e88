//! What one run on the grid produces: per node, its role and counters, the
//! network's drops, and the trace node's RTO and RTT samples.

use coapcc_link::grid::{self, NodeRecord};
use coapcc_workload::metrics::Conservation;
use serde::{Deserialize, Serialize};

/// What a node is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The border router.
    Root,
    /// The CoAP server.
    Server,
    /// A client under test.
    Client,
    /// A bursty interferer.
    Interferer,
}

/// What one node did in one run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NodeResult {
    /// Its number.
    pub node: u32,
    /// Its role.
    pub role: Role,
    /// Requests its application generated.
    pub generated: u64,
    /// Requests dropped because its application buffer was full.
    pub app_drops: u64,
    /// Requests sent at least once.
    pub sent: u64,
    /// CoAP transmissions (originals and retransmissions).
    pub transmissions: u64,
    /// Exchanges that completed with a response.
    pub completed: u64,
    /// Exchanges abandoned.
    pub failed: u64,
    /// Transmissions of the exchanges that completed.
    pub completed_transmissions: u64,
    /// Acknowledgements (responses) received, duplicates included.
    pub acks: u64,
    /// Distinct requests of this node the server received.
    pub carried: u64,
    /// Sum of the RTT samples E of completed exchanges (s).
    pub rtt_sum: f64,
    /// Its MAC and 6LoWPAN counters.
    pub mac: NodeRecord,
}

/// One traced event of the trace node.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct TracePoint {
    /// Seconds since the start of the run.
    pub t: f64,
    /// `rto`: the first timer of an exchange; `backoff`: a later one;
    /// `rtt`: the RTT sample E of a completed exchange.
    pub kind: TraceKind,
    /// Seconds.
    pub value: f64,
    /// Retransmissions of the exchange so far.
    pub retransmissions: u8,
}

/// What a [`TracePoint`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TraceKind {
    /// The timer armed for an original transmission.
    Rto,
    /// A timer armed for a retransmission.
    Backoff,
    /// An RTT sample.
    Rtt,
}

/// The outcome of one replication on the grid.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// Per node, in node order.
    pub nodes: Vec<NodeResult>,
    /// Datagrams the network dropped, by cause.
    pub drops: grid::DropCounts,
    /// Frames put on the air, and receptions destroyed by overlaps.
    pub frames: u64,
    /// Receptions destroyed by overlaps.
    pub collisions: u64,
    /// The traffic window (s).
    pub duration: f64,
    /// Bytes of a request (before marking).
    pub request_size: usize,
    /// Events processed.
    pub events: u64,
    /// Datagrams handed to the network = delivered + dropped + in flight.
    pub conservation: Conservation,
    /// The trace node's RTO and RTT samples.
    pub trace: Vec<TracePoint>,
}

/// A node's record before anything happened.
pub(super) fn node_result(index: usize, role: Role) -> NodeResult {
    NodeResult {
        node: index as u32 + 1,
        role,
        generated: 0,
        app_drops: 0,
        sent: 0,
        transmissions: 0,
        completed: 0,
        failed: 0,
        completed_transmissions: 0,
        acks: 0,
        carried: 0,
        rtt_sum: 0.0,
        mac: NodeRecord::default(),
    }
}
