//! What one simulated run will cost, estimated from its spec before it
//! starts: the memory it holds and the events it processes, each with the
//! scenario field that drives it (checked by [`crate::budget`]).
//!
//! Each network estimates its own runs (`networks/<network>/cost.rs`, from
//! measured figures: `docs/decisions/hardening-choices.md`, "Runs that fit
//! the machine"); this module holds
//! what they share.

/// Memory a running simulation of a radio network holds per node or station
/// (bytes): its MAC queue, CoAP or TCP state and buffers.
pub const LIVE_BYTES_PER_NODE: u64 = 16 * 1024;

/// The estimated cost of one run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunCost {
    /// Bytes held while the run goes on, besides its result.
    pub live: u64,
    /// Bytes of its result, kept until the results are printed or stored.
    pub result: u64,
    /// The scenario field that drives the memory.
    pub memory_field: &'static str,
    /// Events it will process.
    pub events: u64,
    /// The scenario field that drives the events.
    pub events_field: &'static str,
}

impl RunCost {
    /// Bytes while it runs, its result included.
    pub fn bytes(&self) -> u64 {
        self.live.saturating_add(self.result)
    }

    /// The larger cost of `self` and `other`, field by field (each figure
    /// keeps the field that drives it).
    pub fn max(self, other: RunCost) -> RunCost {
        let (live, result, memory_field) = if other.bytes() > self.bytes() {
            (other.live, other.result, other.memory_field)
        } else {
            (self.live, self.result, self.memory_field)
        };
        let (events, events_field) = if other.events > self.events {
            (other.events, other.events_field)
        } else {
            (self.events, self.events_field)
        };
        RunCost {
            live,
            result,
            memory_field,
            events,
            events_field,
        }
    }
}

/// The size of a `T` in bytes.
pub fn size<T>() -> u64 {
    std::mem::size_of::<T>() as u64
}

/// A finite, non-negative float as a count, saturating.
pub fn count(x: f64) -> u64 {
    if x.is_nan() || x <= 0.0 {
        0
    } else if x >= u64::MAX as f64 {
        u64::MAX
    } else {
        x.ceil() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_larger_cost_keeps_its_field() {
        let a = RunCost {
            live: 10,
            result: 0,
            memory_field: "a",
            events: 1,
            events_field: "a",
        };
        let b = RunCost {
            live: 1,
            result: 1,
            memory_field: "b",
            events: 5,
            events_field: "b",
        };
        let m = a.clone().max(b.clone());
        assert_eq!((m.live, m.memory_field), (10, "a"));
        assert_eq!((m.events, m.events_field), (5, "b"));
        assert_eq!(b.max(a), m);
    }
}
