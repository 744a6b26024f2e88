//! Sans-IO CoAP for coapcc: RFC 7252 messages ([`message`]), the client side
//! whose retransmissions a congestion-control algorithm times ([`client`]), and
//! the server side with deduplication and option echo ([`server`]),
//! block-wise transfers ([`block`], RFC 7959), and observing resources
//! ([`observe`], RFC 7641).
//!
//! Nothing here reads a clock or touches a socket: time comes in as [`Nanos`],
//! datagrams as byte slices, and what to send comes out through `poll_*` calls.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod block;
pub mod client;
pub mod message;
pub mod observe;
pub mod server;
pub mod tcp;

/// Time in nanoseconds since an arbitrary epoch.
pub type Nanos = u64;

/// Nanoseconds → seconds.
pub fn secs(n: Nanos) -> f64 {
    n as f64 / 1e9
}

/// Seconds → nanoseconds, rounded.
pub fn to_nanos(s: f64) -> Nanos {
    // Timers are positive: adding one half and truncating rounds to nearest
    // without the libm call `f64::round` costs on the hot path.
    (s * 1e9 + 0.5) as Nanos
}
