//! The network of coapcc as sans-IO state machines (spec `docs/spec/architecture-spec.md`, the
//! network-model row): packets and time go in; deliveries, drops and the time of
//! the next internal event come out. Nothing here reads a clock, a socket or a
//! global random generator, so the same model runs in virtual time inside the
//! simulator (`coapcc-sim`) and on the wall clock in the real-time emulator
//! (`coapcc-net`).
//!
//! - [`dumbbell`]: the constrained, asymmetric bottleneck of the Helsinki
//!   evaluations (spec `docs/spec/testbed-spec.md` §1);
//! - [`grid`]: the IEEE 802.15.4 multi-hop grid of the pCoCoA evaluation
//!   (`docs/spec/radio-spec.md` §1): unit-disk medium, MACs, 6LoWPAN, routing;
//! - [`star`]: the IEEE 802.11 star of the lwIP evaluation (`docs/spec/radio-spec.md` §2):
//!   DCF in one collision domain, and a wired hop to the server;
//! - [`lorawan`]: LoRaWAN class A in EU868 (`docs/lorawan.md`): devices in a
//!   disc around one gateway with 8 reception paths, duty cycles, capture,
//!   RX1/RX2 downlinks, CoAP over SCHC, and a backhaul to the server;
//! - [`errors`]: the two-state bursty link-error model (`docs/spec/testbed-spec.md` §1.1);
//! - [`agenda`]: the event queue both the models and the simulator use (its
//!   timers in a calendar queue);
//! - [`time`], [`rng`]: integer-nanosecond time and deterministic random streams.
//!
//! # Driving a network
//!
//! A driver owns the packets (their bytes, their endpoints' state); the network
//! sees only a [`Datagram`]: the driver's handle for the packet, its endpoints
//! and its size. The driver
//!
//! 1. hands a packet over with [`Network::send`] at the current time (which may
//!    refuse it at once, e.g. a full buffer);
//! 2. asks [`Network::next_wakeup`] when the network next has something to do;
//! 3. at that time calls [`Network::poll`], which handles exactly that one
//!    internal event and returns what it produced, if anything: a packet
//!    [`Output::Delivered`] to a node or [`Output::Dropped`] with a cause.
//!
//! Times passed in never decrease. A delivered or dropped handle is never
//! mentioned again, so the driver can recycle it.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod agenda;
mod calendar;
pub mod dumbbell;
pub mod errors;
pub mod grid;
pub mod lorawan;
pub mod rng;
pub mod star;
pub mod time;

pub use time::Nanos;

/// A node of a topology: an endpoint (client or server) or a forwarder.
pub type NodeId = u32;

/// The driver's handle for a packet, returned in every [`Output`] about it.
pub type PacketId = u32;

/// What a network needs to know of a packet. Sizes are those of the real
/// encoded headers and payload; each network adds its own lower-layer headers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Datagram {
    /// The driver's handle.
    pub id: PacketId,
    /// Sending node.
    pub src: NodeId,
    /// Destination node.
    pub dst: NodeId,
    /// Transport header bytes (8 for UDP; 20 and options for TCP).
    pub transport_header: u16,
    /// Transport payload bytes (over UDP, the CoAP message).
    pub payload: u16,
    /// The sender knows the receiver already has this copy (a response to a
    /// duplicate request): links count its bytes as unnecessary.
    pub unnecessary: bool,
}

/// Why a network dropped a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropCause {
    /// Tail drop at a full buffer.
    Buffer,
    /// Lost to a link error.
    LinkError,
    /// Refused by a full MAC buffer (radio networks).
    MacQueue,
    /// A frame's last transmission went unacknowledged.
    MacRetries,
    /// The MAC found the channel busy too often (802.15.4 CSMA/CA).
    ChannelAccess,
    /// Reassembly refused a fragment or discarded the datagram.
    Reassembly,
    /// 6LoWPAN stopped sending the datagram's fragments after a buffer error.
    FragmentsAborted,
    /// The hop limit ran out.
    HopLimit,
    /// The frame carrying it would exceed the link's payload limit
    /// (LoRaWAN: EU868's FRMPayload limit at the spreading factor).
    PayloadTooLarge,
    /// Destroyed by interference with overlapping frames (LoRaWAN).
    Collision,
    /// Received below the receiver's sensitivity (LoRaWAN).
    BelowSensitivity,
    /// The LoRaWAN gateway was transmitting or had no free reception path
    /// (an uplink), or its radio was booked over the receive windows (a
    /// downlink given up).
    GatewayBusy,
    /// A LoRaWAN downlink found no receive window of its device (none
    /// ahead, or the network server's hold for the device full or timed out).
    NoWindow,
    /// A LoRaWAN downlink given up because the gateway's duty cycle kept it
    /// out of the receive windows.
    DutyCycle,
}

/// What handling one internal event produced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    /// The packet reached its destination node.
    Delivered {
        /// The driver's handle.
        id: PacketId,
        /// Where it arrived (the datagram's `dst`).
        node: NodeId,
    },
    /// The packet was lost in the network.
    Dropped {
        /// The driver's handle.
        id: PacketId,
        /// Why.
        cause: DropCause,
    },
}

/// A network model, driven in virtual or wall-clock time (see the crate docs).
pub trait Network {
    /// `d` enters the network at `now`. `Err` means it was dropped at once
    /// (and will not be mentioned again).
    fn send(&mut self, now: Nanos, d: Datagram) -> Result<(), DropCause>;

    /// When the next internal event is due, if any.
    fn next_wakeup(&self) -> Option<Nanos>;

    /// Handles the earliest internal event if it is due by `until`, returning
    /// its time and what it produced. `None` if nothing is due by `until`.
    fn poll(&mut self, until: Nanos) -> Option<(Nanos, Option<Output>)>;

    /// Packets inside the network now (queued, being sent, propagating).
    fn in_flight(&self) -> u64;

    /// Internal events handled so far.
    fn events(&self) -> u64;
}
