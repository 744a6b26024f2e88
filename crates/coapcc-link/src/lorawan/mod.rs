//! LoRaWAN class A in EU868: the link model and its physical and MAC
//! building blocks (`docs/lorawan.md`).
//!
//! - [`Lorawan`] (`network.rs`): the network, devices in a disc around one
//!   gateway and a backhaul to the CoAP server, as a
//!   [`Network`](crate::Network); its parameters are [`Config`]
//!   (`config.rs`);
//! - [`airtime`]: LoRa time on air (Semtech's formula) and EU868's payload
//!   limits per spreading factor;
//! - [`region`]: EU868 channels, sub-bands and per-transmitter duty cycles;
//! - [`propagation`]: log-distance path loss, per-SF sensitivities and the
//!   spreading factor allocated by distance (ns-3 `lorawan`'s defaults);
//! - [`interference`]: whether a reception survives the transmissions that
//!   overlap it (capture effect, inter-SF isolation, sensitivity);
//! - [`gateway`]: the gateway's reception paths, its half-duplex radio and
//!   the class-A downlink windows RX1 and RX2.

pub mod airtime;
mod config;
pub mod gateway;
pub mod interference;
pub mod lorasim;
mod network;
pub mod propagation;
pub mod region;

#[cfg(test)]
mod aloha;
#[cfg(test)]
mod tests;

pub use airtime::{Modulation, Sf};
pub use config::{Config, Kind, SfAllocation, MAX_DEVICES, MAX_SCHC_RESIDUE};
pub use interference::Capture;
pub use network::{Lorawan, LorawanRecord, RX_WINDOW_SYMBOLS};
pub use region::{Channel, DutyCycle, DutyCycles, SubBand};
