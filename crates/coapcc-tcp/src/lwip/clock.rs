//! The device's TCP timer grid (docs/spec/transport-tcp-spec.md §3: "timers tick every
//! 500 ms").
//!
//! lwIP has no per-connection timers. One cyclic timer per device calls
//! `tcp_tmr` every `TCP_TMR_INTERVAL` (250 ms); each call runs `tcp_fasttmr`
//! (delayed ACKs) and every other call also `tcp_slowtmr` (retransmission,
//! give-up and state timers), which increments the device's `tcp_ticks`. The
//! timer is started by `tcp_timer_needed` (`timeouts.c`) 250 ms after the
//! first connection becomes active, and `tcp_tmr`'s call counter starts odd,
//! so its first call runs both.
//!
//! [`TickClock`] is that grid for one device: fast tick k at
//! `origin + k·250 ms`, slow ticks at the even k. Every connection of a
//! device shares it ([`crate::lwip::LwipConfig::timer_origin`]).
//!
//! Convention at an instant that is also a tick: the tick comes first. A
//! socket runs every tick due at or before `now` before it handles an input
//! at `now`, so `tcp_ticks` seen by an input at `now` counts the ticks at
//! times `<= now` ([`TickClock::slow_count`]).

use super::TICK;

/// lwIP's `TCP_FAST_INTERVAL` / `TCP_TMR_INTERVAL` (ns): 250 ms.
pub const FAST_TICK: u64 = 250_000_000;

/// Delay from a device's first active connection to its first timer call
/// (`tcp_timer_needed` schedules `tcpip_tcp_timer` after `TCP_TMR_INTERVAL`).
pub const FIRST_TIMER_DELAY: u64 = FAST_TICK;

/// One device's timer grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TickClock {
    /// Time of the first `tcp_tmr` call (ns): fast tick 0 and slow tick 1.
    pub origin: u64,
}

impl TickClock {
    /// The grid whose first call is at `origin`.
    pub fn new(origin: u64) -> Self {
        TickClock { origin }
    }

    /// `tcp_ticks` at `t`: the slow ticks at times `<= t`.
    pub fn slow_count(&self, t: u64) -> u64 {
        if t < self.origin {
            0
        } else {
            (t - self.origin) / TICK + 1
        }
    }

    /// Time of slow tick number `n` (`n >= 1`; tick 1 is at the origin).
    pub fn slow_time(&self, n: u64) -> u64 {
        self.origin + n.saturating_sub(1) * TICK
    }

    /// The first fast tick strictly after `t` (the tick at `t` itself, if
    /// any, has already run).
    pub fn next_fast_after(&self, t: u64) -> u64 {
        if t < self.origin {
            self.origin
        } else {
            self.origin + ((t - self.origin) / FAST_TICK + 1) * FAST_TICK
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const MS: u64 = 1_000_000;

    #[test]
    fn grid() {
        // A device whose first connection opened at t = 0: first timer call
        // at 250 ms.
        let c = TickClock::new(FIRST_TIMER_DELAY);
        assert_eq!(c.slow_count(0), 0);
        assert_eq!(c.slow_count(249 * MS), 0);
        assert_eq!(c.slow_count(250 * MS), 1);
        assert_eq!(c.slow_count(749 * MS), 1);
        assert_eq!(c.slow_count(750 * MS), 2);
        assert_eq!(c.slow_time(1), 250 * MS);
        assert_eq!(c.slow_time(6), 2750 * MS);
        assert_eq!(c.next_fast_after(0), 250 * MS);
        assert_eq!(c.next_fast_after(250 * MS), 500 * MS);
        assert_eq!(c.next_fast_after(260 * MS), 500 * MS);
    }
}
