//! Stopping runs from outside (an interrupted front-end): a flag the event
//! loops read once every [`CHECK_EVERY`] events, so that checking costs
//! nothing measurable and a run stops within milliseconds. A run that stops
//! early returns an error (`cancelled after N events`) instead of a result; runs never stopped are
//! exactly what they were (the flag is read, never acted upon).

use std::sync::atomic::{AtomicBool, Ordering};

use crate::spec_error::SpecError;

/// Events between two reads of the flag (a power of two: the test is a mask).
pub const CHECK_EVERY: u64 = 1 << 16;

/// The flag of runs nobody stops.
pub static NEVER: AtomicBool = AtomicBool::new(false);

/// Whether a loop that has processed `processed` events should stop now.
#[inline]
pub fn due(processed: u64, flag: &AtomicBool) -> bool {
    processed & (CHECK_EVERY - 1) == 0 && flag.load(Ordering::Relaxed)
}

/// Whether `flag` is set.
pub fn requested(flag: &AtomicBool) -> bool {
    flag.load(Ordering::Relaxed)
}

/// The error of runs stopped before they started.
pub fn cancelled() -> SpecError {
    SpecError("cancelled".into())
}

/// Fails with `cancelled after N events` if `flag` was set while a run that
/// has processed `processed` events went on.
pub fn check(flag: &AtomicBool, processed: u64) -> Result<(), SpecError> {
    if requested(flag) {
        Err(SpecError(format!("cancelled after {processed} events")))
    } else {
        Ok(())
    }
}
