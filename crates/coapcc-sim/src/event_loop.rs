//! The one event loop of the simulator: it drives any [`coapcc_link::Network`]
//! together with the endpoints' timers, in time order, and hands every event
//! to the network's [`World`].
//!
//! Two sources are interleaved: the network's own events
//! ([`Network::next_wakeup`] / [`Network::poll`]: serialisation ends,
//! arrivals, MAC timers, drops) and the world's timer agenda ([`Agenda`]:
//! retransmission timers, workload ticks, the end of the run). At equal times
//! the network's event goes first. Only timer events count as processed
//! events (the network counts its own, [`Network::events`]); the stop flag
//! ([`crate::stop`]) is read once every [`crate::stop::CHECK_EVERY`] of them.
//! The loop ends when the world says it is done, or when neither source has
//! anything left.
//!
//! [`drive`] is generic over the world, so each network gets its own
//! monomorphised copy: the dumbbell's loop pays nothing for what the grid or
//! the star need.

use std::sync::atomic::AtomicBool;

use coapcc_link::agenda::Agenda;
use coapcc_link::time::Nanos;
use coapcc_link::{Network, Output};

/// The endpoints, workload and records of one run on one network: what the
/// event loop hands events to. A world owns its network model and its timer
/// agenda; the loop only looks at them to find the next event.
pub trait World {
    /// The network model.
    type Net: Network;
    /// A timer event of the endpoints or the workload.
    type Timer: Copy;
    /// What the run produces.
    type Result;

    /// Called once before the first event, at time 0 (e.g. clients that start
    /// at once send their first packets). Nothing by default.
    fn start(&mut self) {}

    /// The network model.
    fn net(&mut self) -> &mut Self::Net;

    /// The timer agenda.
    fn agenda(&mut self) -> &mut Agenda<Self::Timer>;

    /// Whether the run is over (checked before every event).
    fn done(&self) -> bool;

    /// The network handled an internal event at `at`; `out` is what it
    /// produced, if anything.
    fn on_network_output(&mut self, at: Nanos, out: Option<Output>);

    /// Timer event `timer`, scheduled for `at`, is due.
    fn on_timer(&mut self, at: Nanos, timer: Self::Timer);

    /// The run's result; `processed` is the count of timer events handled.
    fn finish(self, processed: u64) -> Self::Result;
}

/// Runs `world` until it is done, its sources are empty, or `stop` is found
/// set; returns the timer events processed.
#[inline]
pub fn drive<W: World>(world: &mut W, stop: &AtomicBool) -> u64 {
    world.start();
    let mut processed = 0;
    while !world.done() {
        let net_at = world.net().next_wakeup();
        let timer_at = world.agenda().peek_time();
        if net_at.is_some_and(|n| timer_at.is_none_or(|t| n <= t)) {
            let (at, out) = world
                .net()
                .poll(Nanos::MAX)
                .expect("the network has an event due");
            world.on_network_output(at, out);
            continue;
        }
        let Some((at, timer)) = world.agenda().pop() else {
            break;
        };
        processed += 1;
        if crate::stop::due(processed, stop) {
            break;
        }
        world.on_timer(at, timer);
    }
    processed
}
