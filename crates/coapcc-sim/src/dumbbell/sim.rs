//! The dumbbell as a network of the simulator: [`Sim`], its types
//! and how a run is set up and summarised; and [`AnyWorld`], the world of
//! one run, chosen by the run's workload.

use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use coapcc_link::dumbbell::Dumbbell;
use coapcc_link::time::Nanos;
use coapcc_link::{NodeId, PacketId};
use coapcc_workload::metrics::{RunResult, Summary};
use coapcc_workload::WorkloadKind;

use super::config::{validate, RunSpec};
use super::world::{self, Event, Tap};
use super::{blockwise, observe};
use crate::event_loop::{drive, Core, World};
use crate::network::{SimNetwork, Tapped};
use crate::spec_error::SpecError;
use crate::stop;

/// The dumbbell, as a network of the simulator.
#[derive(Clone, Copy, Debug)]
pub struct Sim;

/// The world of one dumbbell run: request/response clients (continuous and
/// random, over UDP or TCP), observers, or block-wise clients. A run's
/// groups share one of these kinds (`validate`), so the world is chosen
/// once per run; each of its calls goes to that world. [`Sim`]'s runs
/// match on it once and drive the chosen world itself, so the event loop
/// of each world is its own monomorphised copy, with no dispatch per event.
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

/// Drives `world` to its end (or until `stop` is set) and returns its
/// result and the wall time of its event loop.
fn run_one<W: World<Result = RunResult>>(
    mut world: W,
    stop: &AtomicBool,
) -> Result<(RunResult, Duration), SpecError> {
    let t0 = Instant::now();
    let processed = drive(&mut world, stop);
    let wall = t0.elapsed();
    stop::check(stop, processed)?;
    Ok((world.finish(processed), wall))
}

/// [`run_one`] on the world `world` holds.
fn run_any(world: AnyWorld<'_>, stop: &AtomicBool) -> Result<(RunResult, Duration), SpecError> {
    match world {
        AnyWorld::Request(w) => run_one(w, stop),
        AnyWorld::Observe(w) => run_one(w, stop),
        AnyWorld::Blockwise(w) => run_one(w, stop),
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

    fn run_stoppable(
        spec: &RunSpec,
        replication: u32,
        stop: &AtomicBool,
    ) -> Result<RunResult, SpecError> {
        Ok(run_any(AnyWorld::new(spec, replication)?, stop)?.0)
    }

    fn run_timed(spec: &RunSpec, replication: u32) -> Result<(RunResult, Duration), SpecError> {
        run_any(AnyWorld::new(spec, replication)?, &stop::NEVER)
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

    fn run_with_tap<'a>(
        spec: &'a RunSpec,
        replication: u32,
        tap: &'a mut (dyn Tap + 'a),
    ) -> Result<RunResult, SpecError> {
        let mut world = AnyWorld::new(spec, replication)?;
        Self::attach(&mut world, tap);
        Ok(run_any(world, &stop::NEVER)?.0)
    }
}
