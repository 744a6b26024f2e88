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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{grid_scenario::GridScenario, star_scenario::StarScenario, Scenario};

    fn parse<T: serde::de::DeserializeOwned>(text: &str) -> T {
        toml::from_str(text).unwrap()
    }

    /// A flag set before the start stops each network's run at its first
    /// check, deep inside the event loop, however long the run would be.
    #[test]
    fn a_set_flag_stops_every_network_at_its_first_check() {
        let stop = AtomicBool::new(true);
        let expected = format!("cancelled after {CHECK_EVERY} events");
        let dumbbell: Scenario = parse(
            "clients = 2000\n[workload]\nkind = \"continuous\"\nexchanges = 1000\n\
             [[algorithm]]\nname = \"default\"\n",
        );
        let e = crate::testbed::run_stoppable(&dumbbell.run_spec(0), 0, &stop).unwrap_err();
        assert_eq!(e.0, expected);
        let grid: GridScenario = parse(
            "[network]\nkind = \"grid\"\n[workload]\nperiod_s = 0.001\n\
             [[algorithm]]\nname = \"default\"\n",
        );
        let e = crate::grid::run_stoppable(&grid.run_spec(0), 0, &stop).unwrap_err();
        assert_eq!(e.0, expected);
        let star: StarScenario = parse(
            "[network]\nkind = \"star\"\n[workload]\nsample_s = 0.0001\n\
             [[algorithm]]\nname = \"tcp\"\n",
        );
        let e = crate::star::run_stoppable(&star.run_spec(0), 0, &stop).unwrap_err();
        assert_eq!(e.0, expected);
        // A scenario stops before its runs start.
        let e = crate::scenario::run_scenario_stoppable(&dumbbell, &|| {}, &stop).unwrap_err();
        assert_eq!(e, cancelled());
    }

    #[test]
    fn an_unset_flag_changes_nothing() {
        let s: Scenario = parse(
            "clients = 20\n[workload]\nkind = \"continuous\"\nexchanges = 5\n\
             [[algorithm]]\nname = \"cocoa\"\n",
        );
        let stop = AtomicBool::new(false);
        let a = crate::testbed::run_stoppable(&s.run_spec(0), 1, &stop).unwrap();
        let b = crate::testbed::run(&s.run_spec(0), 1).unwrap();
        assert_eq!(a, b);
    }
}
