//! The wall clock as the state machines see it: nanoseconds since a start
//! instant (`coapcc_proto::Nanos`), on tokio's monotonic clock.

use std::time::Duration;

use coapcc_proto::Nanos;
use tokio::time::Instant;

/// Maps tokio instants to nanoseconds since `start` and back.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    start: Instant,
}

impl Clock {
    /// A clock whose zero is now.
    pub fn start() -> Self {
        Clock {
            start: Instant::now(),
        }
    }

    /// A clock whose zero is `start`.
    pub fn at(start: Instant) -> Self {
        Clock { start }
    }

    /// Nanoseconds since the start.
    pub fn now(&self) -> Nanos {
        self.since(Instant::now())
    }

    /// Nanoseconds from the start to `t` (0 if `t` is earlier).
    pub fn since(&self, t: Instant) -> Nanos {
        t.saturating_duration_since(self.start).as_nanos() as Nanos
    }

    /// The instant `n` nanoseconds after the start.
    pub fn instant(&self, n: Nanos) -> Instant {
        self.start + Duration::from_nanos(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let c = Clock::start();
        let t = c.instant(1_500_000_000);
        assert_eq!(c.since(t), 1_500_000_000);
        assert_eq!(c.since(c.instant(0) - Duration::from_secs(1)), 0);
    }
}
