//! The dumbbell as a network of the simulator: [`Sim`], its types
//! and how a run is set up and summarised; and [`AnyWorld`], the world of
//! one run, chosen by the run's workload.

use coapcc_link::dumbbell::Dumbbell;
use coapcc_link::time::Nanos;
use coapcc_link::{NodeId, PacketId};
use coapcc_workload::metrics::{RunResult, Summary};
use coapcc_workload::WorkloadKind;

use super::config::{validate, RunSpec};
use super::world::{self, Event, Tap};
use super::{blockwise, observe};
use crate::event_loop::{Core, World};
use crate::network::{SimNetwork, Tapped};
use crate::spec_error::SpecError;

/// The dumbbell, as a network of the simulator.
#[derive(Clone, Copy, Debug)]
pub struct Sim;

/// The world of one dumbbell run: request/response clients (continuous and
/// random, over UDP or TCP), observers, or block-wise clients. A run's
/// groups share one of these kinds (`validate`), so the world is chosen
/// once per run; each of its calls goes to that world through a `match`
/// that takes the same arm throughout the run.
///
/// One event loop for the three worlds, not one per world: with a copy of
/// the loop per world, the network's and the agenda's code (`poll`,
/// `pop_due`), which every copy calls, was no longer inlined into the
/// request world's loop, and a 400-client run took 2.6 % more instructions
/// than with the match (`docs/performance.md`).
#[allow(clippy::large_enum_variant)]
pub enum AnyWorld<'a> {
    /// Continuous and random clients (`world.rs`).
    Request(world::World<'a>),
    /// Observers (`observe.rs`).
    Observe(observe::World<'a>),
    /// Block-wise transfers (`blockwise.rs`).
    Blockwise(blockwise::World<'a>),
}

impl<'a> AnyWorld<'a> {
    /// Replication `replication` of `spec`, before time 0.
    fn new(spec: &'a RunSpec, replication: u32) -> Result<Self, SpecError> {
        let kind = spec.groups.first().map(|g| g.workload.kind);
        Ok(match kind {
            Some(WorkloadKind::Observe) => {
                AnyWorld::Observe(observe::World::new(spec, replication)?)
            }
            Some(WorkloadKind::Blockwise) => {
                AnyWorld::Blockwise(blockwise::World::new(spec, replication)?)
            }
            _ => AnyWorld::Request(world::World::new(spec, replication)?),
        })
    }
}

impl World for AnyWorld<'_> {
    type Net = Dumbbell;
    type Timer = Event;
    type Result = RunResult;

    #[inline]
    fn start(&mut self) {
        match self {
            AnyWorld::Request(w) => w.start(),
            AnyWorld::Observe(w) => w.start(),
            AnyWorld::Blockwise(w) => w.start(),
        }
    }

    #[inline]
    fn core(&mut self) -> &mut Core<Dumbbell, Event> {
        match self {
            AnyWorld::Request(w) => w.core(),
            AnyWorld::Observe(w) => w.core(),
            AnyWorld::Blockwise(w) => w.core(),
        }
    }

    #[inline]
    fn done(&self) -> bool {
        match self {
            AnyWorld::Request(w) => w.done(),
            AnyWorld::Observe(w) => w.done(),
            AnyWorld::Blockwise(w) => w.done(),
        }
    }

    #[inline]
    fn on_network_event(&mut self) {
        match self {
            AnyWorld::Request(w) => w.on_network_event(),
            AnyWorld::Observe(w) => w.on_network_event(),
            AnyWorld::Blockwise(w) => w.on_network_event(),
        }
    }

    #[inline]
    fn on_delivered(&mut self, id: PacketId, node: NodeId) {
        match self {
            AnyWorld::Request(w) => w.on_delivered(id, node),
            AnyWorld::Observe(w) => w.on_delivered(id, node),
            AnyWorld::Blockwise(w) => w.on_delivered(id, node),
        }
    }

    #[inline]
    fn on_dropped(&mut self, id: PacketId) {
        match self {
            AnyWorld::Request(w) => w.on_dropped(id),
            AnyWorld::Observe(w) => w.on_dropped(id),
            AnyWorld::Blockwise(w) => w.on_dropped(id),
        }
    }

    #[inline]
    fn on_timer(&mut self, at: Nanos, timer: Event) {
        match self {
            AnyWorld::Request(w) => w.on_timer(at, timer),
            AnyWorld::Observe(w) => w.on_timer(at, timer),
            AnyWorld::Blockwise(w) => w.on_timer(at, timer),
        }
    }

    fn finish(self, processed: u64) -> RunResult {
        match self {
            AnyWorld::Request(w) => w.finish(processed),
            AnyWorld::Observe(w) => w.finish(processed),
            AnyWorld::Blockwise(w) => w.finish(processed),
        }
    }
}

impl SimNetwork for Sim {
    type RunSpec = RunSpec;
    type RunResult = RunResult;
    type Summary = Summary;
    type World<'a> = AnyWorld<'a>;

    fn validate(spec: &RunSpec) -> Result<(), SpecError> {
        validate(spec)
    }

    fn world(spec: &RunSpec, replication: u32) -> Result<Self::World<'_>, SpecError> {
        AnyWorld::new(spec, replication)
    }

    /// The summary of a scenario's algorithm: its one group (group 0).
    fn summary(label: &str, _spec: &RunSpec, runs: &[RunResult]) -> Summary {
        Summary::of(label, 0, runs)
    }
}

impl Tapped for Sim {
    type Tap<'a> = dyn Tap + 'a;

    fn attach<'a>(world: &mut AnyWorld<'a>, tap: &'a mut (dyn Tap + 'a)) {
        match world {
            AnyWorld::Request(w) => w.attach(tap),
            AnyWorld::Observe(w) => w.attach(tap),
            AnyWorld::Blockwise(w) => w.attach(tap),
        }
    }
}
