//! What the observe and block-wise worlds record alike: an exchange in its
//! group's histogram, and a run's result from its records and network.

use coapcc_link::dumbbell::{Direction, Dumbbell};
use coapcc_link::time::to_secs;
use coapcc_workload::metrics::{ClientRecord, RunResult};

use super::world::Event;
use crate::event_loop::Core;

/// Counts an exchange that took `retransmissions` in histogram `h`.
pub(super) fn count(h: &mut Vec<u64>, retransmissions: u8) {
    let n = usize::from(retransmissions);
    if h.len() <= n {
        h.resize(n + 1, 0);
    }
    h[n] += 1;
}

/// The result of a run that ended now, after `processed` timer events
/// (checks packet conservation).
pub(super) fn result(
    core: &mut Core<Dumbbell, Event>,
    clients: Vec<ClientRecord>,
    histograms: Vec<Vec<u64>>,
    processed: u64,
) -> RunResult {
    let conservation = core.conservation();
    RunResult {
        clients,
        histograms,
        uplink: core.net.record(Direction::Up),
        downlink: core.net.record(Direction::Down),
        duration: to_secs(core.now),
        events: core.events(processed),
        conservation,
    }
}
