//! CoAP over TCP (RFC 8323; spec `docs/spec/transport-tcp-spec.md` §1–2) on kernel TCP
//! sockets: the sans-IO [`coapcc_proto::tcp::CoapTcpConnection`] driven by
//! tokio, as the UDP side drives the sans-IO client and server.
//!
//! - [`socket`]: socket set-up (Nagle, congestion control, source address);
//! - [`connection`]: the driver of one connection (reads into the state
//!   machine, writes what it queues, with bounded buffers);
//! - [`server`]: `coapcc server`'s coap+tcp listener;
//! - [`client`]: one client connection (`coapcc client coap+tcp://…`);
//! - [`load`]: the testbed's workloads over TCP (`coapcc load coap+tcp://…`),
//!   timed as the simulator's TCP clients are.
//!
//! The byte stream is the kernel's: what TCP does below CoAP (handshake,
//! retransmissions, congestion control) is the host's, chosen per socket with
//! [`socket::SocketOptions`].

pub mod client;
pub mod connection;
pub mod load;
pub mod server;
pub mod socket;

/// The URI scheme of CoAP over TCP (RFC 8323 §8.2).
pub const SCHEME: &str = "coap+tcp";
