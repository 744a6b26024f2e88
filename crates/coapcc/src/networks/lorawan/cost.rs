//! What one LoRaWAN run will cost, estimated from its spec before it
//! starts (checked by [`crate::budget`]; [`crate::cost`] says what is
//! measured).

use coapcc_sim::lorawan;

use crate::cost::{count, size, RunCost, LIVE_BYTES_PER_NODE};

/// Events per request generated: the request's frame, its windows, the
/// response and the timers, retransmissions included (measured: about 12
/// on the shipped scenario; rounded up).
pub const EVENTS_PER_REQUEST: u64 = 20;

/// One run on LoRaWAN.
pub fn run_cost(spec: &lorawan::RunSpec) -> RunCost {
    let devices = u64::from(spec.network.devices);
    let w = &spec.workload;
    let requests_per_device = count(w.duration_s / w.period_s);
    RunCost {
        live: devices.saturating_mul(LIVE_BYTES_PER_NODE),
        result: devices.saturating_mul(size::<lorawan::DeviceResult>()),
        memory_field: "network.devices",
        events: devices
            .saturating_mul(requests_per_device)
            .saturating_mul(EVENTS_PER_REQUEST),
        events_field: "workload.period_s",
    }
}

/// Bytes one device's row adds to the store (15 columns).
pub const STORED_BYTES_PER_DEVICE: u64 = 160;

/// The bytes a LoRaWAN run leaves in the store: its row and one row per
/// device.
pub fn stored_bytes(spec: &lorawan::RunSpec) -> u64 {
    crate::campaign::ceiling::STORED_BYTES_PER_RUN
        .saturating_add(u64::from(spec.network.devices).saturating_mul(STORED_BYTES_PER_DEVICE))
}
