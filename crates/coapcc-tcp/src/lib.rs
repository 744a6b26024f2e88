//! A sans-IO TCP model for the coapcc simulator, in two profiles:
//!
//! - `linux` (docs/spec/transport-tcp-spec.md §2, [`linux::TcpSocket`]): handshake with SYN /
//!   SYN-ACK retries, Linux's RTO estimator with Karn's rule and backoff,
//!   Nagle, delayed ACKs, FIN close, and Linux 4.9's loss recovery
//!   ([`linux::linux49`]; `tcp` as the thesis configured it: no SACK, early
//!   retransmit, F-RTO, PRR; SACK, RACK and the tail loss probe as switches of
//!   [`Mechanisms`], with the differences of a Linux 6.x host: quick-ACK
//!   mode, adaptive delayed ACK, 1 s initial RTO, its SYN timers and probe
//!   timeout) or, as `tcp-newreno`, model 2's NewReno ([`linux::newreno`]);
//! - `lwip` (docs/spec/transport-tcp-spec.md §3, [`lwip::LwipSocket`]): lwIP 2.1's TCP on its
//!   500 ms timer grid, and the three published variants.
//!
//! [`profile`] names them (`tcp`, `tcp-lwip`, …) and [`AnySocket`] runs
//! either behind one API; [`readings`] lists the disputed readings of the
//! models by the profile names that run them.
//!
//! Each profile lives in its own folder, [`linux`] and [`lwip`], laid out
//! alike (`mod.rs`, `config.rs`, `socket.rs`, then its own parts). A module
//! sits at the crate root only when both profiles import it ([`segment`],
//! [`reasm`], [`state`], [`stats`], the [`MS`] / [`SEC`] units) or it names
//! both ([`profile`]); the common types are re-exported here. Shaped like smoltcp and quinn-proto: time comes in
//! as `u64` nanoseconds, segments are values, nothing touches a socket or a
//! clock.
//!
//! ```
//! use coapcc_tcp::{TcpConfig, TcpSocket};
//! let mut client = TcpSocket::connect(0, TcpConfig::linux());
//! let syn = client.poll_transmit(0).unwrap();
//! // 20 IPv4 + 20 TCP + 4 MSS option + 4 NOP and window scale (`tcp` runs
//! // without SACK)
//! assert_eq!(syn.wire_len(), 48);
//! let mut server = TcpSocket::accept(0, TcpConfig::linux(), &syn).unwrap();
//! let syn_ack = server.poll_transmit(0).unwrap();
//! client.handle_segment(10, &syn_ack);
//! assert!(client.is_established());
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod linux;
pub mod lwip;
pub mod profile;
pub mod readings;
pub mod reasm;
pub mod segment;
pub mod state;
pub mod stats;

pub use linux::wheel::Due;
pub use linux::{Linux49, Mechanisms, Nagle, TcpConfig, TcpSocket};
pub use lwip::{LwipConfig, LwipSocket};
pub use profile::{AnySocket, SocketConfig, TcpProfile, PROFILES};
pub use readings::{TcpReading, READINGS};
pub use segment::{Flags, SackBlock, SackBlocks, Segment};
pub use state::TcpState;
pub use stats::{AbortReason, TcpEvent, TcpStats};

/// One millisecond in nanoseconds.
pub const MS: u64 = 1_000_000;
/// One second in nanoseconds.
pub const SEC: u64 = 1_000_000_000;
