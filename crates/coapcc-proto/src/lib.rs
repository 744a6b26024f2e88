//! Sans-IO CoAP for coapcc: RFC 7252 messages ([`message`]), the client side
//! whose retransmissions a congestion-control algorithm times ([`client`]), and
//! the server side with deduplication and option echo ([`server`]),
//! block-wise transfers ([`block`], RFC 7959), observing resources
//! ([`observe`], RFC 7641), and SCHC header compression of IPv6/UDP/CoAP as
//! LoRaWAN carries it ([`schc`], RFC 8724, RFC 8824, RFC 9011;
//! `docs/schc.md`).
//!
//! Nothing here reads a clock or touches a socket: time comes in as [`Nanos`],
//! datagrams as byte slices, and what to send comes out through `poll_*` calls.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod block;
pub mod client;
pub mod message;
pub mod observe;
pub mod schc;
pub mod server;
pub mod tcp;

/// Time in nanoseconds since an arbitrary epoch.
pub type Nanos = u64;

/// Nanoseconds → seconds.
pub fn secs(n: Nanos) -> f64 {
    n as f64 / 1e9
}

/// The longest timer an algorithm may arm (seconds): 1.8·10¹⁰ s, just below
/// the ≈ 1.845·10¹⁰ s a `u64` count of nanoseconds holds. The built-in
/// algorithms stay far below it (their overflow guards are at most 10¹⁰ s).
pub const MAX_TIMER: f64 = 1.8e10;

/// The deadline of a timer of `timer` seconds armed at `now` by the method
/// `method` (`start`, `expire`) of the algorithm named `algorithm`.
///
/// A `timer` that is not a number of seconds greater than 0 and at most
/// [`MAX_TIMER`] (NaN, negative, zero, infinite, 10³⁰) is an algorithm's
/// fault no exchange can go on from: it is raised
/// ([`coapcc_rto::fault::raise`]), naming the algorithm, the method, the
/// value and the time, and the run's boundary turns it into an error.
#[inline]
pub fn timer_deadline(now: Nanos, timer: f64, algorithm: &str, method: &'static str) -> Nanos {
    // NaN fails both comparisons.
    if !(timer > 0.0 && timer <= MAX_TIMER) {
        bad_timer(now, timer, algorithm, method);
    }
    now.saturating_add(to_nanos(timer))
}

#[cold]
#[inline(never)]
fn bad_timer(now: Nanos, timer: f64, algorithm: &str, method: &'static str) -> ! {
    coapcc_rto::fault::raise(coapcc_rto::fault::AlgorithmFault::new(
        algorithm,
        method,
        Some(secs(now)),
        format!(
            "armed a timer of {timer:?} s; a timer must be a number of seconds greater than 0 \
             and at most {MAX_TIMER:e}"
        ),
    ))
}

/// Seconds → nanoseconds, rounded.
pub fn to_nanos(s: f64) -> Nanos {
    // Timers are positive: adding one half and truncating rounds to nearest
    // without the libm call `f64::round` costs on the hot path.
    (s * 1e9 + 0.5) as Nanos
}
