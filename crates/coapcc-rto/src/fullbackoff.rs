//! Default CoAP with Full Backoff (Järvinen et al. 2018; spec `docs/spec/algorithms-spec.md` §2):
//! Karn-style retention of the backed-off timer on top of [`DefaultCoap`].
//!
//! - **DefaultFB1** ([`DefaultFb1`]): after an exchange completes with
//!   retransmissions, the timer armed when its acknowledgement arrived is
//!   *retained*; the next exchange starts with it (not re-dithered, no random
//!   draw) and backs off from it as usual (×2, cap). An exchange completing
//!   without retransmission forgets it.
//! - **DefaultFB2** ([`DefaultFb2`]): as FB1, but an exchange completing without
//!   retransmission halves the retained value instead. Each exchange draws its
//!   fresh `d` from [2, 3] and starts with `max(retained, d)`; once
//!   `retained ≤ d`, the retained value is forgotten.
//!
//! A failed exchange changes nothing (decision: it did not complete).

use crate::default::{binary_backoff, DefaultCoap};
use crate::math::min;
use crate::{Ack, AlgorithmParams, CongestionControl, ExchangeTimer, ParamError, Random};

/// DefaultFB1 for one destination (§2).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DefaultFb1 {
    /// The Default CoAP parameters (ACK_TIMEOUT, ACK_RANDOM_FACTOR, cap).
    pub base: DefaultCoap,
    /// The retained timer (s), if the last completed exchange was retransmitted.
    pub retained: Option<f64>,
}

/// DefaultFB2 for one destination (§2).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DefaultFb2 {
    /// The Default CoAP parameters (ACK_TIMEOUT, ACK_RANDOM_FACTOR, cap).
    pub base: DefaultCoap,
    /// The retained timer (s), halved by each exchange completed without
    /// retransmission until a fresh draw exceeds it.
    pub retained: Option<f64>,
}

impl DefaultFb1 {
    /// Builds from scenario parameters (those of Default CoAP: `cap`,
    /// `ack_timeout`, `ack_random_factor`).
    pub fn from_params(name: &'static str, p: &AlgorithmParams) -> Result<Self, ParamError> {
        Ok(DefaultFb1 {
            base: DefaultCoap::from_params(name, p)?,
            retained: None,
        })
    }
}

impl DefaultFb2 {
    /// Builds from scenario parameters (those of Default CoAP: `cap`,
    /// `ack_timeout`, `ack_random_factor`).
    pub fn from_params(name: &'static str, p: &AlgorithmParams) -> Result<Self, ParamError> {
        Ok(DefaultFb2 {
            base: DefaultCoap::from_params(name, p)?,
            retained: None,
        })
    }
}

fn first_timer(t: f64) -> ExchangeTimer {
    ExchangeTimer {
        initial: t,
        current: t,
        ..ExchangeTimer::default()
    }
}

impl CongestionControl for DefaultFb1 {
    fn start(&mut self, _now: f64, _outstanding: usize, rng: &mut dyn Random) -> ExchangeTimer {
        let t = match self.retained {
            Some(r) => r,
            None => self.base.draw(rng),
        };
        first_timer(min(t, self.base.cap))
    }

    fn expire(&mut self, _now: f64, ex: &mut ExchangeTimer, _rng: &mut dyn Random) {
        ex.retransmissions = ex.retransmissions.saturating_add(1);
        ex.current = binary_backoff(ex.current, self.base.cap);
    }

    fn on_ack(&mut self, ex: &ExchangeTimer, _ack: &Ack) {
        self.retained = (ex.retransmissions > 0).then_some(ex.current);
    }

    fn reset(&mut self) {
        self.retained = None;
    }
}

impl CongestionControl for DefaultFb2 {
    fn start(&mut self, _now: f64, _outstanding: usize, rng: &mut dyn Random) -> ExchangeTimer {
        let d = self.base.draw(rng);
        let t = match self.retained {
            Some(r) if r > d => r,
            _ => {
                self.retained = None;
                d
            }
        };
        first_timer(min(t, self.base.cap))
    }

    fn expire(&mut self, _now: f64, ex: &mut ExchangeTimer, _rng: &mut dyn Random) {
        ex.retransmissions = ex.retransmissions.saturating_add(1);
        ex.current = binary_backoff(ex.current, self.base.cap);
    }

    fn on_ack(&mut self, ex: &ExchangeTimer, _ack: &Ack) {
        self.retained = if ex.retransmissions > 0 {
            Some(ex.current)
        } else {
            self.retained.map(|r| r / 2.0)
        };
    }

    fn reset(&mut self) {
        self.retained = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{close, Scripted};

    fn ack() -> Ack {
        Ack {
            now: 0.0,
            elapsed: 1.0,
            echo: None,
            piggybacked: true,
        }
    }

    /// Runs one exchange with `n` expiries; returns its timer series.
    fn exchange(
        a: &mut dyn CongestionControl,
        n: usize,
        rng: &mut Scripted,
    ) -> ([f64; 8], ExchangeTimer) {
        let mut ex = a.start(0.0, 0, rng);
        let mut s = [0.0; 8];
        s[0] = ex.current;
        for slot in s.iter_mut().skip(1).take(n) {
            a.expire(0.0, &mut ex, rng);
            *slot = ex.current;
        }
        a.on_ack(&ex, &ack());
        (s, ex)
    }

    #[test]
    fn fb1_retains_the_backed_off_timer_until_a_clean_exchange() {
        let mut a = DefaultFb1::default();
        let mut r = Scripted::new(&[0.5]);
        let (s, _) = exchange(&mut a, 3, &mut r);
        assert_eq!(&s[..4], &[2.5, 5.0, 10.0, 20.0]);
        assert_eq!(a.retained, Some(20.0));
        // Next exchange starts at 20 without a draw, backs off to 40, 60 (cap), 60.
        let drawn = r.next;
        let (s, _) = exchange(&mut a, 3, &mut r);
        assert_eq!(r.next, drawn, "a retained start draws nothing");
        assert_eq!(&s[..4], &[20.0, 40.0, 60.0, 60.0]);
        assert_eq!(a.retained, Some(60.0));
        // Completed without retransmission: still started at 60, then forgotten.
        let (s, _) = exchange(&mut a, 0, &mut r);
        assert_eq!(s[0], 60.0);
        assert_eq!(a.retained, None);
        let (s, _) = exchange(&mut a, 0, &mut r);
        assert_eq!(s[0], 2.5);
    }

    #[test]
    fn fb2_halves_and_forgets_once_a_draw_exceeds_it() {
        let mut a = DefaultFb2::default();
        let mut r = Scripted::new(&[0.5]);
        exchange(&mut a, 3, &mut r);
        assert_eq!(a.retained, Some(20.0));
        // Start max(20, 2.5) = 20; clean → 10.
        let (s, _) = exchange(&mut a, 0, &mut r);
        assert_eq!(s[0], 20.0);
        assert_eq!(a.retained, Some(10.0));
        let (s, _) = exchange(&mut a, 0, &mut r);
        assert_eq!(s[0], 10.0);
        assert_eq!(a.retained, Some(5.0));
        // 5 > 2.5: start 5, then 2.5.
        let (s, _) = exchange(&mut a, 0, &mut r);
        assert_eq!(s[0], 5.0);
        assert_eq!(a.retained, Some(2.5));
        // 2.5 ≤ d = 2.5: forgotten, start with the draw.
        let (s, _) = exchange(&mut a, 0, &mut r);
        assert_eq!(s[0], 2.5);
        assert_eq!(a.retained, None);
    }

    #[test]
    fn fb2_backs_off_from_the_retained_value_and_retains_anew() {
        let mut a = DefaultFb2 {
            retained: Some(12.0),
            ..DefaultFb2::default()
        };
        let mut r = Scripted::new(&[0.0]);
        let (s, ex) = exchange(&mut a, 2, &mut r);
        assert_eq!(&s[..3], &[12.0, 24.0, 48.0]);
        assert!(close(ex.initial, 12.0));
        assert_eq!(a.retained, Some(48.0));
    }

    #[test]
    fn failure_keeps_the_retained_value_and_reset_forgets_it() {
        let mut a = DefaultFb1 {
            retained: Some(8.0),
            ..DefaultFb1::default()
        };
        let mut r = Scripted::new(&[0.0]);
        let ex = a.start(0.0, 0, &mut r);
        a.on_failure(1.0, &ex);
        assert_eq!(a.retained, Some(8.0));
        a.reset();
        assert_eq!(a, DefaultFb1::default());
        let mut b = DefaultFb2 {
            retained: Some(8.0),
            ..DefaultFb2::default()
        };
        b.reset();
        assert_eq!(b, DefaultFb2::default());
    }

    #[test]
    fn parameters_are_those_of_default_coap() {
        let p = AlgorithmParams {
            cap: Some(16.0),
            ..Default::default()
        };
        let mut a = DefaultFb1::from_params("default-fb1", &p).unwrap();
        let mut r = Scripted::new(&[1.0]);
        let (s, _) = exchange(&mut a, 4, &mut r);
        assert_eq!(&s[..5], &[3.0, 6.0, 12.0, 16.0, 16.0]);
        let p = AlgorithmParams {
            aging: Some(true),
            ..Default::default()
        };
        assert_eq!(
            DefaultFb2::from_params("default-fb2", &p)
                .unwrap_err()
                .field,
            "aging"
        );
    }
}
