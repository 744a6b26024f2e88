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
//! Every world keeps its network, agenda and clock in a [`Core`], which also
//! counts packets for the conservation check (sent = delivered + dropped + in
//! flight): a world sends through [`Core::send`], and the loop counts what the
//! network delivers and drops before handing it over.
//!
//! [`drive`] is generic over the world, so each network gets its own
//! monomorphised copy: the dumbbell's loop pays nothing for what the grid or
//! the star need.

use std::sync::atomic::AtomicBool;

use coapcc_link::agenda::Agenda;
use coapcc_link::time::Nanos;
use coapcc_link::{Datagram, Network, NodeId, Output, PacketId};
use coapcc_workload::metrics::Conservation;

/// What every world has and the loop keeps up to date: the network, the
/// timer agenda, the current time, and the packet conservation count
/// (handed to the network = delivered + dropped + in flight).
pub struct Core<N, T> {
    /// The network model.
    pub net: N,
    /// The endpoints' and the workload's timers.
    pub agenda: Agenda<T>,
    /// The time of the event being handled.
    pub now: Nanos,
    /// Packets sent, delivered, dropped (and, at the end, in flight).
    pub conservation: Conservation,
}

impl<N: Network, T: Copy> Core<N, T> {
    /// A run at time 0 on `net`, with `agenda` for its timers.
    pub fn new(net: N, agenda: Agenda<T>) -> Self {
        Core {
            net,
            agenda,
            now: 0,
            conservation: Conservation::default(),
        }
    }

    /// Hands `d` to the network now and counts it sent. `false` if the
    /// network refused it at once (counted dropped; the caller recycles it).
    #[inline]
    pub fn send(&mut self, d: Datagram) -> bool {
        self.conservation.sent += 1;
        if self.net.send(self.now, d).is_err() {
            self.conservation.dropped += 1;
            return false;
        }
        true
    }

    /// The conservation count at the end of a run, with what is still in the
    /// network (counted by the network itself, independently of the
    /// counters). Panics if packets were lost or made up.
    pub fn conservation(&mut self) -> Conservation {
        self.conservation.in_flight = self.net.in_flight();
        assert!(
            self.conservation.holds(),
            "packet conservation violated: {:?}",
            self.conservation
        );
        self.conservation.clone()
    }

    /// Every event of a run that handled `processed` timer events: those and
    /// the network's own.
    pub fn events(&self, processed: u64) -> u64 {
        processed + self.net.events()
    }
}

/// The endpoints, workload and records of one run on one network: what the
/// event loop hands events to. A world owns a [`Core`] (its network model,
/// timer agenda and clock); the loop looks into it to find the next event,
/// sets the clock, and counts deliveries and drops.
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

    /// The network, the agenda and the clock.
    fn core(&mut self) -> &mut Core<Self::Net, Self::Timer>;

    /// Whether the run is over (checked before every event).
    fn done(&self) -> bool;

    /// The network handled one of its events (the clock is set), before what
    /// it produced, if anything, is handed over. Nothing by default.
    fn on_network_event(&mut self) {}

    /// Packet `id` reached node `node` (counted delivered).
    fn on_delivered(&mut self, id: PacketId, node: NodeId);

    /// The network dropped packet `id` (counted dropped): recycle it.
    fn on_dropped(&mut self, id: PacketId);

    /// Timer event `timer`, scheduled for `at`, is due (the clock is `at`).
    fn on_timer(&mut self, at: Nanos, timer: Self::Timer);

    /// The run's result; `processed` is the count of timer events handled.
    fn finish(self, processed: u64) -> Self::Result;
}

/// Runs `world` until it is done, its sources are empty, or `stop` is found
/// set; returns the timer events processed.
pub fn drive<W: World>(world: &mut W, stop: &AtomicBool) -> u64 {
    world.start();
    let mut processed = 0;
    while !world.done() {
        let core = world.core();
        let net_at = core.net.next_wakeup();
        let timer_at = core.agenda.peek_time();
        if net_at.is_some_and(|n| timer_at.is_none_or(|t| n <= t)) {
            let (at, out) = core
                .net
                .poll(Nanos::MAX)
                .expect("the network has an event due");
            core.now = at;
            world.on_network_event();
            match out {
                Some(Output::Delivered { id, node }) => {
                    world.core().conservation.delivered += 1;
                    world.on_delivered(id, node);
                }
                Some(Output::Dropped { id, .. }) => {
                    world.core().conservation.dropped += 1;
                    world.on_dropped(id);
                }
                None => {}
            }
            continue;
        }
        let Some((at, timer)) = core.agenda.pop() else {
            break;
        };
        core.now = at;
        processed += 1;
        if crate::stop::due(processed, stop) {
            break;
        }
        world.on_timer(at, timer);
    }
    processed
}
