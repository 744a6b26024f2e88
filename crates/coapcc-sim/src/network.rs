//! What a network must provide to be simulated: the [`SimNetwork`] trait, and
//! the run entry points every network gets from it (run, stoppable, timed,
//! and with a tap for the networks that show their traffic, [`Tapped`]).
//!
//! A network of the simulator is a folder (`dumbbell/`, `grid/`, `star/`)
//! holding its run spec (what to run, plain serialisable data), its run result
//! and summary, its checks, and its [`World`]: the endpoints and workload on
//! top of its `coapcc_link` model, driven by the one event loop
//! ([`crate::event_loop`]). A unit type names the network (`dumbbell::Sim`,
//! `grid::Sim`, `star::Sim`) and implements [`SimNetwork`].

use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use crate::event_loop::{drive, World};
use crate::spec_error::SpecError;
use crate::stop;

/// A network the simulator runs: its types, its checks, how a run is set up,
/// and how runs are summarised.
///
/// A network provides
/// - [`Self::RunSpec`]: everything one run needs apart from the replication
///   index (a pure function of the two is the run);
/// - [`Self::RunResult`]: what one replication produces;
/// - [`Self::Summary`]: what the replications of one algorithm come to;
/// - [`Self::validate`]: every configuration error, before any run starts,
///   with the field and what was expected;
/// - [`Self::world`]: one replication set up and ready to be driven (it
///   validates first);
/// - [`Self::summary`]: the summary of one algorithm's runs.
///
/// The provided methods run a replication through the event loop.
pub trait SimNetwork {
    /// One run: everything but the replication index.
    type RunSpec: Sync;
    /// The outcome of one replication.
    type RunResult: Send;
    /// One algorithm's runs summarised.
    type Summary;
    /// One replication in progress; borrows its spec.
    type World<'a>: World<Result = Self::RunResult>;

    /// Checks that `spec` can run.
    fn validate(spec: &Self::RunSpec) -> Result<(), SpecError>;

    /// Replication `replication` of `spec`, set up at time 0 (after
    /// [`Self::validate`]).
    fn world(spec: &Self::RunSpec, replication: u32) -> Result<Self::World<'_>, SpecError>;

    /// Summarises the runs of `spec` of the algorithm labelled `label`.
    fn summary(label: &str, spec: &Self::RunSpec, runs: &[Self::RunResult]) -> Self::Summary;

    /// Runs one replication of `spec`.
    fn run(spec: &Self::RunSpec, replication: u32) -> Result<Self::RunResult, SpecError> {
        Self::run_stoppable(spec, replication, &stop::NEVER)
    }

    /// Runs one replication of `spec`, stopping early with an error
    /// (`cancelled after N events`) once `stop` is set.
    fn run_stoppable(
        spec: &Self::RunSpec,
        replication: u32,
        stop: &AtomicBool,
    ) -> Result<Self::RunResult, SpecError> {
        let mut world = Self::world(spec, replication)?;
        let processed = drive(&mut world, stop);
        stop::check(stop, processed)?;
        Ok(world.finish(processed))
    }

    /// Runs one replication of `spec` and also returns the wall time of the
    /// event loop alone (set-up and result collection excluded), for
    /// benchmarks.
    fn run_timed(
        spec: &Self::RunSpec,
        replication: u32,
    ) -> Result<(Self::RunResult, Duration), SpecError> {
        let mut world = Self::world(spec, replication)?;
        let t0 = Instant::now();
        let processed = drive(&mut world, &stop::NEVER);
        let wall = t0.elapsed();
        Ok((world.finish(processed), wall))
    }
}

/// A network that can show what it carries to a tap (e.g. to write a pcap).
pub trait Tapped: SimNetwork {
    /// What sees the traffic.
    type Tap<'a>: ?Sized + 'a;

    /// Makes `world` show its traffic to `tap`.
    fn attach<'a>(world: &mut Self::World<'a>, tap: &'a mut Self::Tap<'a>);

    /// Runs one replication of `spec`, showing its traffic to `tap`.
    fn run_with_tap<'a>(
        spec: &'a Self::RunSpec,
        replication: u32,
        tap: &'a mut Self::Tap<'a>,
    ) -> Result<Self::RunResult, SpecError> {
        let mut world = Self::world(spec, replication)?;
        Self::attach(&mut world, tap);
        let processed = drive(&mut world, &stop::NEVER);
        Ok(world.finish(processed))
    }
}
