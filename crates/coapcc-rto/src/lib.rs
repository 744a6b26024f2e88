//! Retransmission-timeout (RTO) and congestion-control algorithms for CoAP over UDP.
//!
//! Every algorithm of `docs/spec/algorithms-spec.md` is a **sans-IO state machine**
//! implementing [`CongestionControl`]: it never reads a clock or a global random
//! generator. Time (`now`, in seconds since an arbitrary epoch, as `f64`) and
//! randomness (a [`Random`] source) are arguments; timer values (seconds) are
//! results. One value of an algorithm type holds the state for **one destination
//! endpoint** (docs/spec/algorithms-spec.md §0.1): a CoAP endpoint keeps one per peer.
//!
//! The messaging layer (RFC 7252 retransmission counter, MAX_RETRANSMIT, matching)
//! lives in `coapcc-proto`; it calls the algorithm at four moments:
//!
//! 1. [`CongestionControl::start`] when an exchange is about to be sent for the
//!    first time: the algorithm fills an [`ExchangeTimer`] with the first timer;
//! 2. [`CongestionControl::expire`] when that timer fires and the exchange will be
//!    retransmitted: the algorithm writes the next timer into the `ExchangeTimer`;
//! 3. [`CongestionControl::on_ack`] on the first matching acknowledgement;
//! 4. [`CongestionControl::on_failure`] when the exchange is abandoned.
//!
//! Per-exchange data the algorithm needs later (its initial timer, the state it
//! started in, a backoff factor chosen once) is kept by the caller inside the
//! `ExchangeTimer`, so several exchanges may be outstanding to one destination
//! (NSTART > 1) without the algorithm holding a per-exchange table.
//!
//! The crate is `#![no_std]`; the `alloc` feature (default) adds the [`registry`],
//! which builds boxed algorithms by name, and the `std` feature the process's
//! registry, which algorithms of other crates join at run time
//! ([`registry::install`]).
#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

pub mod cocoa;
pub mod cocoa_e;
pub mod cocoa_fb;
pub mod cocoa_plus;
pub mod cocoa_s;
pub mod default;
pub mod fasor;
#[cfg(feature = "std")]
pub mod fault;
pub mod four_state;
pub mod fullbackoff;
pub mod linux_rto;
pub mod math;
pub mod params;
pub mod pcocoa;
pub mod peakhopper;
pub mod readings;
#[cfg(feature = "alloc")]
pub mod registry;
pub mod rfc6298;

pub use params::{AboveTruncation, AlgorithmParams, FirstSample, ParamError, Smoothing};

/// A source of uniform random numbers, supplied by the caller.
///
/// The simulator passes a per-client deterministic stream; a real endpoint may pass
/// any generator. Algorithms draw only through this trait.
pub trait Random {
    /// A uniform sample in `[0, 1)`.
    fn uniform(&mut self) -> f64;

    /// A uniform sample in `[lo, hi]` (for `lo <= hi`).
    fn uniform_in(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.uniform()
    }
}

/// Any `rand_core` generator is a [`Random`] source: 53 random bits of each
/// `next_u64` scaled to `[0, 1)`.
#[cfg(feature = "rand_core")]
impl<R: rand_core::RngCore + ?Sized> Random for R {
    fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// How an algorithm wants its transmissions marked so that the peer's echo
/// tells which copy was answered (docs/spec/algorithms-spec.md §4, §6.6).
///
/// The messaging layer does the encoding: the transmission *ordinal* `i`
/// (0 = original, 1 = first retransmission, …) is written as
/// - [`Marking::TransmissionCounter`]: the TC option (65052) with value `i + 1`;
/// - [`Marking::RexmitCount`]: the Rexmit-Cnt option (65020) with value `i`
///   on retransmissions; on the original 255 when `probe` is set and no
///   option otherwise (thesis §7.3: implicit 0), a response without the
///   option then reading as the original's;
/// - [`Marking::Token`]: a 1-byte token with value `i`.
///
/// The echo is decoded back to the ordinal and reported in [`Ack::echo`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Marking {
    /// Plain messages (zero-length token, no extra option).
    None,
    /// pCoCoA's Transmission Counter option.
    TransmissionCounter,
    /// FASOR's Rexmit-Cnt option; `probe` asks for the 255 probe on the original.
    RexmitCount {
        /// Send 255 on this exchange's original (support not yet known);
        /// without it the original carries no option.
        probe: bool,
    },
    /// FASOR+Token: the 1-byte token carries the ordinal.
    Token,
}

/// Per-exchange timer data, owned by the messaging layer and handed to the
/// algorithm on every call concerning that exchange.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ExchangeTimer {
    /// The first timer armed for this exchange (seconds).
    pub initial: f64,
    /// The timer armed for the most recent transmission (seconds).
    pub current: f64,
    /// Retransmissions sent so far (0 while only the original is out).
    pub retransmissions: u8,
    /// Algorithm-defined snapshot taken at `start` (e.g. FASOR's state).
    pub state: u8,
    /// Algorithm-defined value taken at `start` (e.g. a backoff factor, FASOR's F).
    pub aux: f64,
    /// Algorithm-defined value taken at `start` (e.g. FASOR's SlowRTO).
    pub aux2: f64,
}

/// The echoed transmission ordinal of an acknowledgement, with its precise RTT.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Echo {
    /// Ordinal of the answered copy (0 = original).
    pub ordinal: u8,
    /// `now - t_ordinal`: the RTT of exactly that copy (seconds).
    pub rtt: f64,
}

/// The first matching acknowledgement of an exchange (docs/spec/algorithms-spec.md §0.2).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ack {
    /// Arrival time (seconds).
    pub now: f64,
    /// `E`: time since the *original* transmission (seconds).
    pub elapsed: f64,
    /// The echoed ordinal, when the algorithm marks transmissions and the peer
    /// echoed the mark; `None` when nothing (or nothing decodable) was echoed.
    pub echo: Option<Echo>,
    /// Whether the acknowledgement was a piggybacked response (Rexmit-Cnt is
    /// echoed only in those; an Empty ACK says nothing about support).
    pub piggybacked: bool,
}

/// One retransmission-timeout / congestion-control algorithm, for one destination.
///
/// Implementations document the spec section they implement. All timers are in
/// seconds, finite and positive.
pub trait CongestionControl {
    /// A new exchange to this destination is about to be transmitted.
    /// `now` is the send time, `outstanding` the number of other exchanges to this
    /// destination still unacknowledged (0 with NSTART = 1). Returns the first timer
    /// in `initial` and `current`, `retransmissions = 0`, plus any per-exchange data.
    fn start(&mut self, now: f64, outstanding: usize, rng: &mut dyn Random) -> ExchangeTimer;

    /// The timer of `ex` expired and the exchange is retransmitted: increment
    /// `ex.retransmissions` and set `ex.current` to the timer armed for the new
    /// transmission.
    fn expire(&mut self, now: f64, ex: &mut ExchangeTimer, rng: &mut dyn Random);

    /// The first matching acknowledgement of `ex` arrived.
    fn on_ack(&mut self, ex: &ExchangeTimer, ack: &Ack);

    /// The exchange was abandoned (MAX_RETRANSMIT reached, or RST).
    fn on_failure(&mut self, _now: f64, _ex: &ExchangeTimer) {}

    /// Forget everything learnt about this destination (a "random" client starting
    /// a new batch, spec testbed §2). The result must equal a freshly built value.
    fn reset(&mut self);

    /// How transmissions of the next exchange must be marked (see [`Marking`]).
    fn marking(&self) -> Marking {
        Marking::None
    }

    /// Spurious retransmissions detected so far through echoed transmission
    /// marks (pCoCoA, FASOR+Option/Token); 0 for algorithms that cannot tell.
    fn spurious_detected(&self) -> u64 {
        0
    }
}

impl<T: CongestionControl + ?Sized> CongestionControl for &mut T {
    fn start(&mut self, now: f64, outstanding: usize, rng: &mut dyn Random) -> ExchangeTimer {
        (**self).start(now, outstanding, rng)
    }
    fn expire(&mut self, now: f64, ex: &mut ExchangeTimer, rng: &mut dyn Random) {
        (**self).expire(now, ex, rng)
    }
    fn on_ack(&mut self, ex: &ExchangeTimer, ack: &Ack) {
        (**self).on_ack(ex, ack)
    }
    fn on_failure(&mut self, now: f64, ex: &ExchangeTimer) {
        (**self).on_failure(now, ex)
    }
    fn reset(&mut self) {
        (**self).reset()
    }
    fn marking(&self) -> Marking {
        (**self).marking()
    }
    fn spurious_detected(&self) -> u64 {
        (**self).spurious_detected()
    }
}

#[cfg(feature = "alloc")]
impl<T: CongestionControl + ?Sized> CongestionControl for alloc::boxed::Box<T> {
    fn start(&mut self, now: f64, outstanding: usize, rng: &mut dyn Random) -> ExchangeTimer {
        (**self).start(now, outstanding, rng)
    }
    fn expire(&mut self, now: f64, ex: &mut ExchangeTimer, rng: &mut dyn Random) {
        (**self).expire(now, ex, rng)
    }
    fn on_ack(&mut self, ex: &ExchangeTimer, ack: &Ack) {
        (**self).on_ack(ex, ack)
    }
    fn on_failure(&mut self, now: f64, ex: &ExchangeTimer) {
        (**self).on_failure(now, ex)
    }
    fn reset(&mut self) {
        (**self).reset()
    }
    fn marking(&self) -> Marking {
        (**self).marking()
    }
    fn spurious_detected(&self) -> u64 {
        (**self).spurious_detected()
    }
}

/// Shared test helpers (a deterministic [`Random`] and a scripted one).
#[cfg(test)]
pub(crate) mod testutil {
    use super::Random;

    /// Returns the scripted values in turn, then repeats the last one.
    pub struct Scripted {
        pub values: &'static [f64],
        pub next: usize,
    }
    impl Scripted {
        pub fn new(values: &'static [f64]) -> Self {
            Scripted { values, next: 0 }
        }
    }
    impl Random for Scripted {
        fn uniform(&mut self) -> f64 {
            let i = self.next.min(self.values.len() - 1);
            self.next += 1;
            self.values[i]
        }
    }

    /// SplitMix64, for property tests.
    pub struct Mix(pub u64);
    impl Random for Mix {
        fn uniform(&mut self) -> f64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            (z >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    /// Feeds `alg` the piggybacked, unmarked acknowledgement of an exchange that
    /// was retransmitted `n` times and took `elapsed` seconds.
    pub fn ack_after(alg: &mut impl super::CongestionControl, n: u8, elapsed: f64) {
        let ex = super::ExchangeTimer {
            retransmissions: n,
            ..super::ExchangeTimer::default()
        };
        let ack = super::Ack {
            now: 0.0,
            elapsed,
            echo: None,
            piggybacked: true,
        };
        alg.on_ack(&ex, &ack);
    }

    pub fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }
}
