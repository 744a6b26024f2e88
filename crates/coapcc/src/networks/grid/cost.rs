//! What one grid run will cost, estimated from its spec before it starts
//! (checked by [`crate::budget`]; [`crate::cost`] says what is measured).

use coapcc_sim::grid;

use crate::cost::{count, size, RunCost, LIVE_BYTES_PER_NODE};

/// Events the grid processes per request generated (measured: 76 on the
/// pCoCoA periodic grid).
pub const EVENTS_PER_REQUEST: u64 = 80;

/// One run on the grid.
pub fn run_cost(spec: &grid::RunSpec) -> RunCost {
    let nodes = spec.network.nodes() as u64;
    let w = &spec.workload;
    let requests_per_node = count(w.duration_s / w.period_s);
    RunCost {
        live: nodes.saturating_mul(LIVE_BYTES_PER_NODE),
        result: nodes.saturating_mul(size::<grid::NodeResult>()),
        memory_field: "network",
        events: nodes
            .saturating_mul(requests_per_node)
            .saturating_mul(EVENTS_PER_REQUEST),
        events_field: "workload.period_s",
    }
}

/// Bytes one node's row adds to the store (about 25 columns).
pub const STORED_BYTES_PER_NODE: u64 = 256;

/// Bytes one traced event adds to the store (a row of `grid_traces`).
pub const STORED_BYTES_PER_TRACE: u64 = 48;

/// The bytes a grid run leaves in the store: its row, one row per node and,
/// with a traced node, a row per traced request and response of it.
pub fn stored_bytes(spec: &grid::RunSpec) -> u64 {
    let nodes = spec.network.nodes() as u64;
    let w = &spec.workload;
    let traced = if w.trace_node.is_some() {
        count(w.duration_s / w.period_s)
            .saturating_mul(2)
            .saturating_mul(STORED_BYTES_PER_TRACE)
    } else {
        0
    };
    crate::campaign::ceiling::STORED_BYTES_PER_RUN
        .saturating_add(nodes.saturating_mul(STORED_BYTES_PER_NODE))
        .saturating_add(traced)
}
