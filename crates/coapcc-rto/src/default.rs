//! Default CoAP (spec `docs/spec/algorithms-spec.md` §1, RFC 7252 §4.2).
//!
//! Initial timer uniform in `[ACK_TIMEOUT, ACK_TIMEOUT·ACK_RANDOM_FACTOR]`, doubled on
//! every expiry, bounded by a cap (60 s in the published evaluations; the RFC has
//! none). No memory between exchanges.

use crate::math::min;
use crate::{Ack, AlgorithmParams, CongestionControl, ExchangeTimer, ParamError, Random};

/// Default CoAP for one destination.
#[derive(Clone, Debug, PartialEq)]
pub struct DefaultCoap {
    /// ACK_TIMEOUT (s).
    pub ack_timeout: f64,
    /// ACK_RANDOM_FACTOR.
    pub ack_random_factor: f64,
    /// Cap on backed-off timers (s).
    pub cap: f64,
}

impl Default for DefaultCoap {
    fn default() -> Self {
        DefaultCoap {
            ack_timeout: 2.0,
            ack_random_factor: 1.5,
            cap: 60.0,
        }
    }
}

impl DefaultCoap {
    /// Builds from scenario parameters (`cap`, `ack_timeout`, `ack_random_factor`).
    pub fn from_params(name: &'static str, p: &AlgorithmParams) -> Result<Self, ParamError> {
        p.check(name, &["cap", "ack_timeout", "ack_random_factor"])?;
        let d = DefaultCoap::default();
        Ok(DefaultCoap {
            ack_timeout: p.ack_timeout.unwrap_or(d.ack_timeout),
            ack_random_factor: p.ack_random_factor.unwrap_or(d.ack_random_factor),
            cap: p.cap.unwrap_or(d.cap),
        })
    }

    /// A fresh draw from `[ACK_TIMEOUT, ACK_TIMEOUT·ACK_RANDOM_FACTOR]`.
    pub fn draw(&self, rng: &mut dyn Random) -> f64 {
        rng.uniform_in(self.ack_timeout, self.ack_timeout * self.ack_random_factor)
    }
}

/// The binary backoff of RFC 7252, bounded by `cap`.
pub fn binary_backoff(current: f64, cap: f64) -> f64 {
    min(current * 2.0, cap)
}

/// The first timer of an exchange when the base timeout is `rto`: uniform in
/// `[rto, rto·random_factor]` (RFC 7252 §4.2 dithering), bounded by `cap`.
pub fn dithered_start(
    rto: f64,
    random_factor: f64,
    cap: f64,
    rng: &mut dyn Random,
) -> ExchangeTimer {
    let t = min(rng.uniform_in(rto, rto * random_factor), cap);
    ExchangeTimer {
        initial: t,
        current: t,
        ..ExchangeTimer::default()
    }
}

/// One expiry under binary backoff: count the retransmission, double the timer
/// up to `cap`.
pub fn binary_expire(ex: &mut ExchangeTimer, cap: f64) {
    ex.retransmissions = ex.retransmissions.saturating_add(1);
    ex.current = binary_backoff(ex.current, cap);
}

impl CongestionControl for DefaultCoap {
    fn start(&mut self, _now: f64, _outstanding: usize, rng: &mut dyn Random) -> ExchangeTimer {
        dithered_start(self.ack_timeout, self.ack_random_factor, self.cap, rng)
    }

    fn expire(&mut self, _now: f64, ex: &mut ExchangeTimer, _rng: &mut dyn Random) {
        binary_expire(ex, self.cap);
    }

    fn on_ack(&mut self, _ex: &ExchangeTimer, _ack: &Ack) {}

    fn reset(&mut self) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{close, Scripted};

    #[test]
    fn initial_timer_spans_two_to_three_seconds() {
        let mut d = DefaultCoap::default();
        let mut lo = Scripted::new(&[0.0]);
        let mut mid = Scripted::new(&[0.5]);
        assert!(close(d.start(0.0, 0, &mut lo).initial, 2.0));
        assert!(close(d.start(0.0, 0, &mut mid).initial, 2.5));
    }

    #[test]
    fn doubles_until_the_cap() {
        let mut d = DefaultCoap::default();
        let mut r = Scripted::new(&[0.5]);
        let mut ex = d.start(0.0, 0, &mut r);
        let mut series = [0.0; 7];
        for s in series.iter_mut() {
            d.expire(0.0, &mut ex, &mut r);
            *s = ex.current;
        }
        // 2.5 → 5, 10, 20, 40, then capped at 60.
        assert_eq!(series, [5.0, 10.0, 20.0, 40.0, 60.0, 60.0, 60.0]);
        assert_eq!(ex.retransmissions, 7);
        assert!(close(ex.initial, 2.5));
    }

    #[test]
    fn cap_and_base_are_configurable() {
        let p = AlgorithmParams {
            cap: Some(8.0),
            ack_timeout: Some(1.0),
            ..Default::default()
        };
        let mut d = DefaultCoap::from_params("default", &p).unwrap();
        let mut r = Scripted::new(&[1.0]);
        let mut ex = d.start(0.0, 0, &mut r);
        assert!(close(ex.initial, 1.5));
        for expect in [3.0, 6.0, 8.0, 8.0] {
            d.expire(0.0, &mut ex, &mut r);
            assert!(close(ex.current, expect));
        }
    }

    #[test]
    fn rejects_foreign_parameters() {
        let p = AlgorithmParams {
            aging: Some(false),
            ..Default::default()
        };
        let e = DefaultCoap::from_params("default", &p).unwrap_err();
        assert_eq!(e.field, "aging");
    }
}
