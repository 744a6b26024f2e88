//! LoRaWAN class A in EU868: the physical and MAC building blocks of its
//! link model (`docs/lorawan.md`).
//!
//! - [`airtime`]: LoRa time on air (Semtech's formula) and EU868's payload
//!   limits per spreading factor;
//! - [`region`]: EU868 channels, sub-bands and per-transmitter duty cycles;
//! - [`propagation`]: log-distance path loss, per-SF sensitivities and the
//!   spreading factor allocated by distance (ns-3 `lorawan`'s defaults);
//! - [`interference`]: whether a reception survives the transmissions that
//!   overlap it (capture effect, inter-SF isolation, sensitivity);
//! - [`gateway`]: the gateway's 8 reception paths, its half-duplex radio and
//!   the class-A downlink windows RX1 and RX2.

pub mod airtime;
pub mod gateway;
pub mod interference;
pub mod propagation;
pub mod region;

#[cfg(test)]
mod aloha;

pub use airtime::{Modulation, Sf};
pub use region::{Channel, DutyCycle, DutyCycles, SubBand};
