//! `my-rto`: a retransmission-timeout algorithm of one's own, in a crate
//! that depends on `coapcc-rto` only (`docs/guides/your-own-algorithm.md`).
//!
//! **An example, not a published algorithm**: RFC 6298's estimator fed
//! with Karn's samples (exchanges acknowledged without a retransmission),
//! no dithering, binary backoff capped at `cap`.

use coapcc_rto::registry::{BoxedAlgorithm, NewAlgorithm};
use coapcc_rto::{Ack, AlgorithmParams, CongestionControl, ExchangeTimer, ParamError, Random};

/// The name scenario files, `--algorithms` and `--cc` use.
pub const NAME: &str = "my-rto";

/// The timer before any sample and the backoff's cap (seconds), unless a
/// scenario sets `ack_timeout` or `cap`.
pub const INITIAL: f64 = 2.0;
/// See [`INITIAL`].
pub const CAP: f64 = 60.0;
/// RFC 6298 (2.4): the RTO is never below 1 s.
pub const MIN_RTO: f64 = 1.0;

/// The state for one destination: RFC 6298's SRTT, RTTVAR and RTO.
#[derive(Clone, Debug, PartialEq)]
pub struct MyRto {
    srtt: Option<f64>,
    rttvar: f64,
    rto: f64,
    initial: f64,
    cap: f64,
}

impl MyRto {
    /// Builds from a scenario's parameters: `ack_timeout` (the RTO before
    /// any sample) and `cap`; any other parameter is refused.
    pub fn from_params(p: &AlgorithmParams) -> Result<Self, ParamError> {
        p.check(NAME, &["ack_timeout", "cap"])?;
        let initial = p.ack_timeout.unwrap_or(INITIAL);
        Ok(MyRto {
            srtt: None,
            rttvar: 0.0,
            rto: initial,
            initial,
            cap: p.cap.unwrap_or(CAP),
        })
    }

    /// The current RTO (seconds).
    pub fn rto(&self) -> f64 {
        self.rto
    }
}

impl CongestionControl for MyRto {
    fn start(&mut self, _now: f64, _outstanding: usize, _rng: &mut dyn Random) -> ExchangeTimer {
        let t = self.rto.min(self.cap);
        ExchangeTimer {
            initial: t,
            current: t,
            ..ExchangeTimer::default()
        }
    }

    fn expire(&mut self, _now: f64, ex: &mut ExchangeTimer, _rng: &mut dyn Random) {
        ex.retransmissions += 1;
        ex.current = (2.0 * ex.current).min(self.cap);
    }

    fn on_ack(&mut self, ex: &ExchangeTimer, ack: &Ack) {
        // Karn: the sample of a retransmitted exchange is ambiguous.
        if ex.retransmissions > 0 {
            return;
        }
        let r = ack.elapsed;
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = r / 2.0;
            }
            Some(srtt) => {
                self.rttvar = 0.75 * self.rttvar + 0.25 * (srtt - r).abs();
                self.srtt = Some(0.875 * srtt + 0.125 * r);
            }
        }
        self.rto = (self.srtt.unwrap_or(r) + 4.0 * self.rttvar).max(MIN_RTO);
    }

    fn reset(&mut self) {
        self.srtt = None;
        self.rttvar = 0.0;
        self.rto = self.initial;
    }
}

/// The registry entry: `Registry::builtin().with(my_rto::algorithm())`.
pub fn algorithm() -> NewAlgorithm {
    NewAlgorithm::new(NAME, |p| Ok(Box::new(MyRto::from_params(p)?) as BoxedAlgorithm))
        .summary("An example, not a published algorithm: RFC 6298 on Karn's samples, binary backoff capped at 60 s")
        .section("example")
        .state_bytes(std::mem::size_of::<MyRto>())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Never drawn from: the algorithm does not dither.
    struct NoRandom;
    impl Random for NoRandom {
        fn uniform(&mut self) -> f64 {
            unreachable!("my-rto draws nothing")
        }
    }

    fn ack(elapsed: f64) -> Ack {
        Ack {
            now: 0.0,
            elapsed,
            echo: None,
            piggybacked: true,
        }
    }

    fn built() -> MyRto {
        MyRto::from_params(&AlgorithmParams::default()).unwrap()
    }

    #[test]
    fn before_any_sample_2_s_doubling_up_to_the_cap() {
        let mut a = built();
        let mut ex = a.start(0.0, 0, &mut NoRandom);
        assert_eq!((ex.initial, ex.current, ex.retransmissions), (2.0, 2.0, 0));
        let mut timers = Vec::new();
        for _ in 0..6 {
            a.expire(0.0, &mut ex, &mut NoRandom);
            timers.push(ex.current);
        }
        assert_eq!(timers, [4.0, 8.0, 16.0, 32.0, 60.0, 60.0]);
        assert_eq!(ex.retransmissions, 6);
    }

    #[test]
    fn rfc_6298_on_clean_samples() {
        let mut a = built();
        let ex = a.start(0.0, 0, &mut NoRandom);
        // First sample 0.5: SRTT 0.5, RTTVAR 0.25, RTO 0.5 + 4·0.25 = 1.5.
        a.on_ack(&ex, &ack(0.5));
        assert_eq!(a.rto(), 1.5);
        assert_eq!(a.start(1.0, 0, &mut NoRandom).current, 1.5);
        // Second sample 1.0: RTTVAR 0.75·0.25 + 0.25·0.5 = 0.3125,
        // SRTT 0.875·0.5 + 0.125·1.0 = 0.5625, RTO 0.5625 + 1.25 = 1.8125.
        a.on_ack(&ex, &ack(1.0));
        assert_eq!(a.rto(), 1.8125);
        // Third sample 0.1: RTTVAR 0.75·0.3125 + 0.25·0.4625 = 0.35,
        // SRTT 0.875·0.5625 + 0.125·0.1 = 0.5046875, RTO 1.9046875.
        a.on_ack(&ex, &ack(0.1));
        assert!((a.rto() - 1.904_687_5).abs() < 1e-12, "{}", a.rto());
    }

    #[test]
    fn samples_of_retransmitted_exchanges_and_the_floor() {
        let mut a = built();
        let mut ex = a.start(0.0, 0, &mut NoRandom);
        a.expire(2.0, &mut ex, &mut NoRandom);
        a.on_ack(&ex, &ack(2.5));
        assert_eq!(a.rto(), 2.0, "Karn: no sample");
        let ex = a.start(10.0, 0, &mut NoRandom);
        // 0.1 s: 0.1 + 4·0.05 = 0.3, raised to the 1 s floor.
        a.on_ack(&ex, &ack(0.1));
        assert_eq!(a.rto(), 1.0);
        a.reset();
        assert_eq!(a, built());
    }

    #[test]
    fn parameters_set_the_start_and_the_cap_and_others_are_refused() {
        let p = AlgorithmParams {
            ack_timeout: Some(3.0),
            cap: Some(10.0),
            ..AlgorithmParams::default()
        };
        let mut a = MyRto::from_params(&p).unwrap();
        let mut ex = a.start(0.0, 0, &mut NoRandom);
        a.expire(0.0, &mut ex, &mut NoRandom);
        assert_eq!((ex.initial, ex.current), (3.0, 6.0));
        a.expire(0.0, &mut ex, &mut NoRandom);
        assert_eq!(ex.current, 10.0);
        let e = MyRto::from_params(&AlgorithmParams {
            aging: Some(true),
            ..AlgorithmParams::default()
        })
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "algorithm `my-rto`: parameter `aging`: not a parameter of this algorithm"
        );
    }
}
