//! An algorithm's fault (feature `std`): what stops a run when an
//! algorithm, built in or registered, cannot go on — a timer that is not a
//! positive number of seconds, an exception raised in a Python algorithm.
//!
//! Algorithms return values, not errors ([`crate::CongestionControl`]), and
//! the simulator's event loops have no error path from inside a client, so
//! a fault is *raised*: [`raise`] unwinds the stack (without the panic
//! message a `panic!` prints) and [`catch`], at the boundary of one run, a
//! campaign's unit or a command, turns it back into an error. Any other
//! panic goes on unwinding as before. `docs/decisions/algorithms-choices.md`,
//! "An algorithm's fault stops the run", says why.

use std::boxed::Box;
use std::fmt;
use std::panic::{self, AssertUnwindSafe};
use std::string::String;

/// What an algorithm did wrong, where and when.
#[derive(Debug)]
pub struct AlgorithmFault {
    /// The algorithm's registry name.
    pub algorithm: String,
    /// The method that failed (`start`, `expire`, `on_ack`, …).
    pub method: &'static str,
    /// The run's clock when it failed (seconds), if known.
    pub time: Option<f64>,
    /// What went wrong, with the offending value.
    pub message: String,
    /// The error behind it (a Python exception with its traceback), kept
    /// for the front-end that can show it.
    pub cause: Option<Box<dyn std::error::Error + Send + Sync>>,
}

impl AlgorithmFault {
    /// A fault of `algorithm` in `method` at `time`, saying `message`.
    pub fn new(
        algorithm: impl Into<String>,
        method: &'static str,
        time: Option<f64>,
        message: impl Into<String>,
    ) -> Self {
        AlgorithmFault {
            algorithm: algorithm.into(),
            method,
            time,
            message: message.into(),
            cause: None,
        }
    }
}

impl fmt::Display for AlgorithmFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "algorithm `{}`: `{}`", self.algorithm, self.method)?;
        if let Some(t) = self.time {
            write!(f, " at t = {t:.6} s of the run")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for AlgorithmFault {}

/// Stops the run under way with `fault`: unwinds to the nearest [`catch`].
pub fn raise(fault: AlgorithmFault) -> ! {
    panic::resume_unwind(Box::new(fault))
}

/// Runs `f`; a fault [`raise`]d inside it becomes `Err`. Other panics
/// unwind on.
pub fn catch<R>(f: impl FnOnce() -> R) -> Result<R, AlgorithmFault> {
    match panic::catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => Ok(r),
        Err(payload) => match payload.downcast::<AlgorithmFault>() {
            Ok(fault) => Err(*fault),
            Err(other) => panic::resume_unwind(other),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::string::ToString;

    #[test]
    fn a_raised_fault_is_caught_with_its_message() {
        let r: Result<u32, _> = catch(|| {
            raise(AlgorithmFault::new(
                "mine",
                "expire",
                Some(1.5),
                "timer NaN",
            ))
        });
        let e = r.unwrap_err();
        assert_eq!(e.method, "expire");
        assert_eq!(
            e.to_string(),
            "algorithm `mine`: `expire` at t = 1.500000 s of the run: timer NaN"
        );
        assert_eq!(catch(|| 7).unwrap(), 7);
    }

    #[test]
    fn other_panics_unwind_on() {
        let outer = panic::catch_unwind(|| catch(|| panic::resume_unwind(Box::new(3u8))));
        assert_eq!(*outer.unwrap_err().downcast::<u8>().unwrap(), 3);
    }
}
