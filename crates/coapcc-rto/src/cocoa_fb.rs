//! CoCoA with Full Backoff (Järvinen et al. 2018; spec `docs/spec/algorithms-spec.md` §3.2):
//! [`Cocoa`] plus retention of the backed-off timer. The estimators keep
//! updating exactly as in §3.1; only the first timer of an exchange changes.
//!
//! - **CoCoA-FB1** ([`CocoaFb1`]): after an exchange with retransmissions, the
//!   next exchange starts with the timer armed when the acknowledgement arrived
//!   (not re-dithered), until an exchange completes without retransmission.
//! - **CoCoA-FB2** ([`CocoaFb2`]): the retained value is recomputed as
//!   `M = max(initial timer of the finished exchange, RTO after this ACK's
//!   estimator update)` backed off as many times as the finished exchange was,
//!   with CoCoA's backoff rule (VBF of the current value, 32 s truncation).
//!
//! Decisions: aging still runs (lazily, at each start) while a retained value
//! is in use, so the overall RTO ages exactly as in §3.1; a retained start draws
//! no random number; a failed exchange changes nothing.

use crate::cocoa::Cocoa;
use crate::{Ack, AlgorithmParams, CongestionControl, ExchangeTimer, ParamError, Random};

/// CoCoA-FB1 for one destination (§3.2).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CocoaFb1 {
    /// The CoCoA state and configuration.
    pub cocoa: Cocoa,
    /// The retained first timer (s), if any.
    pub retained: Option<f64>,
}

/// CoCoA-FB2 for one destination (§3.2).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CocoaFb2 {
    /// The CoCoA state and configuration.
    pub cocoa: Cocoa,
    /// The retained first timer (s), if any.
    pub retained: Option<f64>,
}

impl CocoaFb1 {
    /// Builds from the parameters of CoCoA (`cap`, `aging`, `ack_timeout`,
    /// `ack_random_factor`, `above_truncation`).
    pub fn from_params(name: &'static str, p: &AlgorithmParams) -> Result<Self, ParamError> {
        Ok(CocoaFb1 {
            cocoa: Cocoa::from_params(name, p)?,
            retained: None,
        })
    }
}

impl CocoaFb2 {
    /// Builds from the parameters of CoCoA (`cap`, `aging`, `ack_timeout`,
    /// `ack_random_factor`, `above_truncation`).
    pub fn from_params(name: &'static str, p: &AlgorithmParams) -> Result<Self, ParamError> {
        Ok(CocoaFb2 {
            cocoa: Cocoa::from_params(name, p)?,
            retained: None,
        })
    }

    /// The FB2 retained value: `max(initial, rto)` backed off `retransmissions`
    /// times by CoCoA's rule.
    pub fn recompute(&self, initial: f64, retransmissions: u8) -> f64 {
        let mut t = if initial >= self.cocoa.est.rto {
            initial
        } else {
            self.cocoa.est.rto
        };
        for _ in 0..retransmissions {
            let next = self.cocoa.backoff(t);
            if next == t {
                break; // no further change: at the truncation, or kept above it
            }
            t = next;
        }
        t
    }
}

/// The first timer: the retained value if any (aging still runs), else CoCoA's.
fn start_with(
    cocoa: &mut Cocoa,
    retained: Option<f64>,
    now: f64,
    outstanding: usize,
    rng: &mut dyn Random,
) -> ExchangeTimer {
    match retained {
        Some(t) => {
            cocoa.age(now);
            ExchangeTimer {
                initial: t,
                current: t,
                ..ExchangeTimer::default()
            }
        }
        None => cocoa.start(now, outstanding, rng),
    }
}

impl CongestionControl for CocoaFb1 {
    fn start(&mut self, now: f64, outstanding: usize, rng: &mut dyn Random) -> ExchangeTimer {
        start_with(&mut self.cocoa, self.retained, now, outstanding, rng)
    }

    fn expire(&mut self, now: f64, ex: &mut ExchangeTimer, rng: &mut dyn Random) {
        self.cocoa.expire(now, ex, rng);
    }

    fn on_ack(&mut self, ex: &ExchangeTimer, ack: &Ack) {
        self.cocoa.on_ack(ex, ack);
        self.retained = (ex.retransmissions > 0).then_some(ex.current);
    }

    fn reset(&mut self) {
        self.cocoa.reset();
        self.retained = None;
    }
}

impl CongestionControl for CocoaFb2 {
    fn start(&mut self, now: f64, outstanding: usize, rng: &mut dyn Random) -> ExchangeTimer {
        start_with(&mut self.cocoa, self.retained, now, outstanding, rng)
    }

    fn expire(&mut self, now: f64, ex: &mut ExchangeTimer, rng: &mut dyn Random) {
        self.cocoa.expire(now, ex, rng);
    }

    fn on_ack(&mut self, ex: &ExchangeTimer, ack: &Ack) {
        self.cocoa.on_ack(ex, ack);
        self.retained =
            (ex.retransmissions > 0).then(|| self.recompute(ex.initial, ex.retransmissions));
    }

    fn reset(&mut self) {
        self.cocoa.reset();
        self.retained = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cocoa::tests::ack;
    use crate::testutil::{close, Scripted};

    fn off() -> AlgorithmParams {
        AlgorithmParams {
            aging: Some(false),
            ..Default::default()
        }
    }

    /// Starts an exchange, expires it `n` times, acknowledges it `elapsed` after
    /// its start at `now`; returns the exchange.
    fn exchange(
        a: &mut dyn CongestionControl,
        now: f64,
        n: u8,
        elapsed: f64,
        r: &mut Scripted,
    ) -> ExchangeTimer {
        let mut ex = a.start(now, 0, r);
        for _ in 0..n {
            a.expire(now, &mut ex, r);
        }
        a.on_ack(&ex, &ack(now + elapsed, elapsed));
        ex
    }

    #[test]
    fn fb1_retains_the_armed_timer_and_keeps_estimating() {
        let mut a = CocoaFb1::from_params("cocoa-fb1", &off()).unwrap();
        let mut r = Scripted::new(&[0.0]);
        // 2 → 4 → 6 (VBF 1.5 above 3); ACKed after the second retransmission.
        let ex = exchange(&mut a, 0.0, 2, 7.0, &mut r);
        assert!(close(ex.current, 6.0));
        assert_eq!(a.retained, Some(6.0));
        // The weak sample of 7 s updated the RTO: E_w = 10.5; 0.25·10.5 + 1.5.
        assert!(close(a.cocoa.est.rto, 4.125));
        // Next exchange starts at 6 (not the RTO, not dithered) and backs off 9, 13.5.
        let drawn = r.next;
        let mut ex = a.start(10.0, 0, &mut r);
        assert_eq!(r.next, drawn);
        assert!(close(ex.initial, 6.0));
        a.expire(10.0, &mut ex, &mut r);
        assert!(close(ex.current, 9.0));
        // ACKed after one retransmission: retain the armed 9.
        a.on_ack(&ex, &ack(20.0, 10.0));
        assert_eq!(a.retained, Some(9.0));
        // A clean exchange (still started at 9) forgets it; strong sample taken.
        let ex = exchange(&mut a, 30.0, 0, 0.5, &mut r);
        assert!(close(ex.initial, 9.0));
        assert_eq!(a.retained, None);
        assert!(a.cocoa.est.strong.is_seeded());
        let rto = a.cocoa.est.rto;
        assert!(close(a.start(40.0, 0, &mut r).initial, rto));
    }

    #[test]
    fn fb2_recomputes_from_the_larger_of_initial_and_rto() {
        let mut a = CocoaFb2::from_params("cocoa-fb2", &off()).unwrap();
        let mut r = Scripted::new(&[0.0]);
        // Initial 2; two expiries (4, 6); weak sample 7 s → RTO 4.125.
        // M = max(2, 4.125) = 4.125, backed off twice: 6.1875, 9.28125.
        exchange(&mut a, 0.0, 2, 7.0, &mut r);
        assert!(close(a.retained.unwrap(), 9.28125));
        let ex = a.start(10.0, 0, &mut r);
        assert!(close(ex.initial, 9.28125));
    }

    #[test]
    fn fb2_without_estimator_update_uses_the_initial_timer() {
        let mut a = CocoaFb2::from_params("cocoa-fb2", &off()).unwrap();
        let mut r = Scripted::new(&[1.0]);
        // Initial 3 → 6 → 9 → 13.5 (n = 3: no sample, RTO stays 2).
        // M = 3, backed off three times: 6, 9, 13.5.
        let ex = exchange(&mut a, 0.0, 3, 20.0, &mut r);
        assert!(close(ex.current, 13.5));
        assert!(close(a.cocoa.est.rto, 2.0));
        assert!(close(a.retained.unwrap(), 13.5));
        // Small M uses the small-timer factors: M = 0.5 → 1.5 → 3 → 6.
        a.cocoa.est.rto = 0.5;
        assert!(close(a.recompute(0.4, 3), 6.0));
        // Truncation: 20 → 30 → 32 → 32.
        assert!(close(a.recompute(20.0, 5), 32.0));
    }

    #[test]
    fn fb2_forgets_after_a_clean_exchange_and_resets() {
        let mut a = CocoaFb2::from_params("cocoa-fb2", &off()).unwrap();
        let mut r = Scripted::new(&[0.0]);
        exchange(&mut a, 0.0, 1, 3.0, &mut r);
        assert!(a.retained.is_some());
        exchange(&mut a, 10.0, 0, 0.3, &mut r);
        assert_eq!(a.retained, None);
        exchange(&mut a, 20.0, 1, 3.0, &mut r);
        a.reset();
        assert_eq!(a, CocoaFb2::from_params("cocoa-fb2", &off()).unwrap());
    }

    #[test]
    fn aging_runs_while_retaining() {
        let mut a = CocoaFb1::default();
        a.cocoa.est.set(10.0, 0.0, crate::cocoa::UNBOUNDED);
        a.retained = Some(12.0);
        let mut r = Scripted::new(&[0.0]);
        assert!(close(a.start(70.0, 0, &mut r).initial, 12.0));
        assert!(close(a.cocoa.est.rto, 4.0));
    }
}
