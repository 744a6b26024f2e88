//! coapcc on real sockets: the sans-IO CoAP endpoints of `coapcc-proto` and the
//! algorithms of `coapcc-rto`, driven by tokio UDP sockets and the wall clock
//! (spec `docs/spec/architecture-spec.md`, the `coapcc-net` row; `docs/spec/README.md` item 4).
//!
//! - [`client`]: one CoAP client endpoint on a socket — exchanges with any CoAP
//!   server, timed by any registered algorithm;
//! - [`server`]: a CoAP server on a socket — configurable resources,
//!   deduplication, TC / Rexmit-Cnt echo, bounded memory;
//! - [`blockwise`]: block-wise downloads and uploads (RFC 7959) through the
//!   client, one Confirmable exchange per block, or over a CoAP-over-TCP
//!   connection (RFC 8323 §6);
//! - [`observe`]: observing a resource from the client (RFC 7641);
//! - [`observed`]: observable resources on the server (RFC 7641);
//! - [`load`]: many concurrent clients with the testbed's workloads
//!   (`docs/spec/testbed-spec.md` §2), reporting the testbed's metrics (§3);
//! - [`emulate`]: a real-time UDP relay that drives the network model of
//!   `coapcc-link` (the simulator's own: the constrained-link dumbbell or the
//!   802.15.4 grid) on the wall clock between clients and a server;
//! - [`tcp`]: CoAP over TCP (RFC 8323) on kernel TCP sockets: server, client
//!   and load generator;
//! - [`ip`]: the same models between two network namespaces joined by TUN
//!   devices (the IP mode: real kernels on both sides, TCP or UDP).
//!
//! The crate has no `unsafe` code but the TUN and signal system calls of
//! `ip::sys` (one small module).
//!
//! Time handed to the state machines is nanoseconds since a [`clock::Clock`]'s
//! start; nothing in this crate changes what the state machines decide.
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod amplification;
mod background;
pub mod blockwise;
pub mod client;
pub mod clock;
mod drive;
pub mod emulate;
pub mod ip;
pub mod load;
pub mod observe;
pub mod observed;
pub mod resources;
pub mod server;
pub mod target;
pub mod tcp;
pub mod uploads;

/// The tokio this crate is built on, for callers that drive its async API
/// without depending on tokio themselves.
pub use tokio;

/// Largest UDP payload this crate's client and server read (a CoAP message
/// is at most 1152 bytes); the server ignores and counts longer datagrams
/// rather than reading them cut short. The emulator relays up to
/// [`emulate::MAX_DATAGRAM`].
pub const RECV_BUFFER: usize = 1500;
