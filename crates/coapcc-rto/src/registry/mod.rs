//! The registry: every algorithm by its name (spec `docs/spec/algorithms-spec.md` §8).
//!
//! Adding a published algorithm is one new module and one entry in
//! [`ALGORITHMS`], the built-ins. An algorithm of one's own, in a crate of
//! its own, is added at run time instead: a [`Registry`] holds the built-ins
//! and what was registered beside them ([`Registry::with`]), and with the
//! `std` feature the process's registry is installed once ([`install`])
//! before anything is looked up. The command line, the scenario files and
//! the reports list what [`find`] and [`names`] see: the installed
//! registry with `std`, the built-ins without it. A front-end that learns
//! algorithms while it runs (the Python package) adds them to the installed
//! registry with [`register`]; names only ever join it.

use alloc::boxed::Box;

use crate::{AlgorithmParams, CongestionControl, ParamError};

mod entries;
#[cfg(feature = "std")]
mod process;

pub use entries::{NewAlgorithm, Registry, RegistryError};
#[cfg(feature = "std")]
pub use process::{install, installed, register};

/// A boxed algorithm for one destination.
pub type BoxedAlgorithm = Box<dyn CongestionControl + Send>;

/// What builds one destination's state from the scenario's parameters: a
/// function or a closure, shared by every thread.
pub type Build = dyn Fn(&AlgorithmParams) -> Result<BoxedAlgorithm, ParamError> + Send + Sync;

/// One entry of the registry.
pub struct AlgorithmInfo {
    /// The name used in scenario files, on the command line and in reports.
    pub name: &'static str,
    /// One line saying what it is.
    pub summary: &'static str,
    /// Where it is described: for a built-in, the section of
    /// `docs/spec/algorithms-spec.md` it implements.
    pub section: &'static str,
    /// Whether the source leaves constants open and ours are a documented guess.
    pub approximate: bool,
    /// Builds one destination's state from the scenario's parameters.
    pub build: &'static Build,
    /// Size in bytes of one destination's state.
    pub state_bytes: usize,
}

impl core::fmt::Debug for AlgorithmInfo {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("AlgorithmInfo")
            .field("name", &self.name)
            .field("section", &self.section)
            .field("state_bytes", &self.state_bytes)
            .finish_non_exhaustive()
    }
}

/// One registry line: the entry of algorithm type `$ty` under `$name`.
/// Why a macro: `build` must be a closure without captures (the built-ins
/// are a `static`, usable without an allocator's run-time set-up) that
/// knows both the type and the name, and a closure given the name by a
/// generic function would capture it; this keeps each algorithm one line.
macro_rules! entry {
    ($name:literal, $ty:ty, $section:literal, $summary:literal) => {
        entry!($name, $ty, $section, $summary, false)
    };
    ($name:literal, $ty:ty, $section:literal, $summary:literal, $approx:expr) => {
        AlgorithmInfo {
            name: $name,
            summary: $summary,
            section: $section,
            approximate: $approx,
            build: &|p: &AlgorithmParams| Ok(Box::new(<$ty>::from_params($name, p)?)),
            state_bytes: core::mem::size_of::<$ty>(),
        }
    };
}

/// Every algorithm, in the order of the spec.
pub static ALGORITHMS: &[AlgorithmInfo] = &[
    entry!("default", crate::default::DefaultCoap, "§1", "Default CoAP (RFC 7252): [2,3] s dithered timer, binary backoff, capped"),
    entry!("default-fb1", crate::fullbackoff::DefaultFb1, "§2", "Default CoAP with Full Backoff 1: next exchange starts from the retained backed-off timer"),
    entry!("default-fb2", crate::fullbackoff::DefaultFb2, "§2", "Default CoAP with Full Backoff 2: retained timer halved after clean exchanges, max with a fresh draw"),
    entry!("cocoa", crate::cocoa::Cocoa, "§3.1", "CoCoA (draft-ietf-core-cocoa-03): strong/weak estimators, [RTO,1.5RTO] dithering, VBF, 32 s truncation, aging"),
    entry!("cocoa-fb1", crate::cocoa_fb::CocoaFb1, "§3.2", "CoCoA with Full Backoff 1: next exchange starts from the retained backed-off timer"),
    entry!("cocoa-fb2", crate::cocoa_fb::CocoaFb2, "§3.2", "CoCoA with Full Backoff 2: retained max(initial, RTO) backed off as the finished exchange was"),
    entry!("cocoa-plus", crate::cocoa_plus::CocoaPlus, "§3.3", "CoCoA+: CoCoA estimators (SRTT-first order), VBF fixed per exchange by its initial timer, 30 s / 16·RTO aging, initial RTO capped at 60, backoff uncapped"),
    entry!("cocoa-s", crate::cocoa_s::CocoaS, "§3.4", "CoCoA-S: CoCoA+ (the pCoCoA paper's CoCoA) with the strong estimator only"),
    entry!("cocoa-e", crate::cocoa_e::CocoaE, "§3.5", "CoCoA-E: strong/weak estimators with a per-sample gain R/RTO; CoCoA+ backoff, dithering, aging and initial-RTO cap"),
    entry!("4-state-strong", crate::four_state::FourStateStrong, "§3.6", "4-state-strong: per-state RFC 6298 estimators and weights, samples also after retransmissions, CoCoA+ aging (the source gives no constants; ours are documented guesses)", true),
    // -- further algorithms are added below, one line each --
    entry!("pcocoa", crate::pcocoa::Pcocoa, "§4", "pCoCoA: Transmission Counter echoes, single precise estimator with mdev_max, k = 6 after spurious, RTO smoothed with the previous undithered RTO; CoCoA+ without echoes"),
    entry!("linux-rto", crate::linux_rto::LinuxRto, "§5", "Linux-RTO (Betzler's model of Linux TCP's estimator): strong samples, binary backoff, Default dithering"),
    entry!("peakhopper", crate::peakhopper::PeakHopper, "§5", "Peak-Hopper RTO: strong samples, booster over the last two samples, binary backoff"),
    entry!("fasor", crate::fasor::Fasor, "§6.1–6.4", "FASOR: FastRTO (RFC 6298, unambiguous samples), SlowRTO, FAST/FAST_SLOW_FAST/SLOW_FAST series, cap 60"),
    entry!("fasor-slow", crate::fasor::FasorSlow, "§6.5", "FASOR development variant Slow: FAST series, SlowRTO series after any ambiguous ACK"),
    entry!("fasor-fastslow", crate::fasor::FasorFastSlow, "§6.5", "FASOR development variant FastSlow: FAST, FAST_SLOW, SLOW; backs off SlowRTO"),
    entry!("fasor-token", crate::fasor::FasorToken, "§6.6", "FASOR+Token: 1-byte token carries the ordinal; precise samples, spurious detection"),
    entry!("fasor-option", crate::fasor::FasorOption, "§6.6", "FASOR+Option: Rexmit-Cnt option (255 probe); precise samples, plain FASOR without support"),
];

/// Looks an algorithm up by name among those [`all`] gives.
#[cfg(feature = "std")]
pub fn find(name: &str) -> Option<&'static AlgorithmInfo> {
    process::find(name)
}

/// Looks an algorithm up by name among those [`all`] gives.
#[cfg(not(feature = "std"))]
pub fn find(name: &str) -> Option<&'static AlgorithmInfo> {
    ALGORITHMS.iter().find(|a| a.name == name)
}

/// The names of all algorithms [`find`] sees, comma-separated, for error
/// messages.
pub fn names() -> alloc::string::String {
    entries::join_names(all())
}

/// Every algorithm, in order: those of the installed registry with the
/// `std` feature ([`installed`]): the built-ins, then those registered.
#[cfg(feature = "std")]
pub fn all() -> impl Iterator<Item = &'static AlgorithmInfo> {
    installed().into_entries().into_iter()
}

/// Every algorithm, in order: the built-ins (without the `std` feature no
/// registry is installed).
#[cfg(not(feature = "std"))]
pub fn all() -> impl Iterator<Item = &'static AlgorithmInfo> {
    ALGORITHMS.iter()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_buildable_with_defaults() {
        for (i, a) in ALGORITHMS.iter().enumerate() {
            assert!(
                ALGORITHMS[..i].iter().all(|b| b.name != a.name),
                "{}",
                a.name
            );
            assert!(Registry::valid_name(a.name).is_ok(), "{}", a.name);
            assert!((a.build)(&AlgorithmParams::default()).is_ok(), "{}", a.name);
            assert!(find(a.name).is_some());
        }
        assert!(find("no-such").is_none());
    }
}
