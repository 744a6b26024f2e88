//! What one run on LoRaWAN produces: per device, its place, spreading
//! factor and counters; the network's drops by cause and direction, its
//! record, and the completion times of the run's exchanges.

use coapcc_link::lorawan::LorawanRecord;
use coapcc_link::DropCause;
use coapcc_workload::metrics::{Conservation, Percentiles};
use serde::{Deserialize, Serialize};

/// Datagrams the network dropped in one direction, by cause.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Drops {
    /// Past the frame limit at the device's SF.
    pub payload_too_large: u64,
    /// A full device queue (uplinks only).
    pub mac_queue: u64,
    /// Lost to overlapping frames.
    pub collision: u64,
    /// Below the receiver's sensitivity.
    pub below_sensitivity: u64,
    /// The gateway transmitting or out of reception paths (uplinks), or its
    /// radio booked over the windows (downlinks).
    pub gateway_busy: u64,
    /// No receive window (downlinks).
    pub no_window: u64,
    /// The gateway's duty cycle kept it out of the windows (downlinks).
    pub duty_cycle: u64,
}

impl Drops {
    /// Counts a drop for `cause`.
    pub fn count(&mut self, cause: DropCause) {
        let slot = match cause {
            DropCause::PayloadTooLarge => &mut self.payload_too_large,
            DropCause::Collision => &mut self.collision,
            DropCause::BelowSensitivity => &mut self.below_sensitivity,
            DropCause::GatewayBusy => &mut self.gateway_busy,
            DropCause::NoWindow => &mut self.no_window,
            DropCause::DutyCycle => &mut self.duty_cycle,
            _ => &mut self.mac_queue,
        };
        *slot += 1;
    }

    /// Each cause with its name, in the order of the fields.
    pub fn named(&self) -> [(&'static str, u64); 7] {
        [
            ("payload_too_large", self.payload_too_large),
            ("mac_queue", self.mac_queue),
            ("collision", self.collision),
            ("below_sensitivity", self.below_sensitivity),
            ("gateway_busy", self.gateway_busy),
            ("no_window", self.no_window),
            ("duty_cycle", self.duty_cycle),
        ]
    }

    /// All of them.
    pub fn total(&self) -> u64 {
        self.named().iter().map(|(_, n)| n).sum()
    }
}

/// What one device did in one run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceResult {
    /// Its node id (0 … devices − 1).
    pub device: u32,
    /// Its distance to the gateway (m).
    pub distance_m: f64,
    /// Its spreading factor.
    pub sf: u8,
    /// Requests its application generated.
    pub generated: u64,
    /// Requests dropped because its application buffer was full.
    pub app_drops: u64,
    /// Exchanges started (requests sent at least once).
    pub started: u64,
    /// Exchanges completed with a response.
    pub completed: u64,
    /// Exchanges abandoned.
    pub failed: u64,
    /// Exchanges still open at the end of the run.
    pub unfinished: u64,
    /// CoAP transmissions (originals and retransmissions).
    pub transmissions: u64,
    /// Time on air of its retransmissions (s).
    pub retransmission_airtime: f64,
    /// Sum of the completion times of its completed exchanges (s).
    pub completion_sum: f64,
    /// Its uplinks the network dropped.
    pub uplinks_dropped: u64,
    /// Downlinks to it the network dropped.
    pub downlinks_dropped: u64,
}

/// The outcome of one replication on LoRaWAN.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// Per device, in node order.
    pub devices: Vec<DeviceResult>,
    /// Uplinks dropped, by cause.
    pub uplink_drops: Drops,
    /// Downlinks dropped, by cause.
    pub downlink_drops: Drops,
    /// The network's frames, times on air and waiting.
    pub record: LorawanRecord,
    /// Completion times of the run's completed exchanges (s).
    pub completion: Percentiles,
    /// The traffic window (s).
    pub duration: f64,
    /// Events processed.
    pub events: u64,
    /// Datagrams handed to the network = delivered + dropped + in flight.
    pub conservation: Conservation,
}

impl RunResult {
    /// Exchanges started, completed, failed and unfinished, over every
    /// device.
    pub fn exchanges(&self) -> [u64; 4] {
        self.devices.iter().fold([0; 4], |a, d| {
            [
                a[0] + d.started,
                a[1] + d.completed,
                a[2] + d.failed,
                a[3] + d.unfinished,
            ]
        })
    }
}
