//! The FASOR family (spec `docs/spec/algorithms-spec.md` §6): FASOR (§6.1–6.4), its development
//! variants Slow and FastSlow (§6.5), and the accurate-RTT variants FASOR+Token
//! and FASOR+Option (§6.6).
//!
//! One destination keeps FastRTO ([`estimator::FastRto`], RFC 6298 on
//! unambiguous or precise samples), SlowRTO (`SLOWRTO_FACTOR · E` of the last
//! retransmitted exchange, not smoothed) and a state ([`series::State`]). At
//! exchange start the state, the dithered FastRTO `F` and the dithered SlowRTO
//! `S` are snapshotted into the [`ExchangeTimer`] (`state`, `aux`, `aux2`); every
//! timer of that exchange is then a function of the snapshot
//! ([`series::timer`]), so parallel exchanges (NSTART > 1) are independent.
//!
//! The five registry algorithms are the one type [`Fasor`] with a zero-sized
//! flavour parameter fixing the series and the marking:
//! [`Fasor`] (`fasor`), [`FasorSlow`], [`FasorFastSlow`], [`FasorToken`],
//! [`FasorOption`].

pub mod estimator;
pub mod series;

use core::marker::PhantomData;

use crate::{
    Ack, AlgorithmParams, CongestionControl, Echo, ExchangeTimer, FirstSample, Marking, ParamError,
    Random,
};
use estimator::{sanitize, FastRto};
use series::{fsf_second, timer, Series, State};

/// How a flavour learns which transmission an acknowledgement answers (§6.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Accuracy {
    /// No marking: Karn's rule (only unambiguous samples).
    Plain,
    /// FASOR+Token: the 1-byte token carries the ordinal.
    Token,
    /// FASOR+Option: the Rexmit-Cnt option, probed on the first exchange.
    RexmitCnt,
}

/// A member of the FASOR family: its series and its marking.
pub trait Flavor {
    /// The series family (§6.4 or §6.5).
    const SERIES: Series;
    /// The marking (§6.6).
    const ACCURACY: Accuracy;
}

/// Zero-sized flavour markers.
pub mod flavor {
    use super::{Accuracy, Flavor, Series};

    /// FASOR (FastSlowFast), plain.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct Plain;
    /// The Slow development variant.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct Slow;
    /// The FastSlow development variant.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct FastSlow;
    /// FASOR+Token.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct Token;
    /// FASOR+Option (Rexmit-Cnt).
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct RexmitCnt;

    impl Flavor for Plain {
        const SERIES: Series = Series::FastSlowFast;
        const ACCURACY: Accuracy = Accuracy::Plain;
    }
    impl Flavor for Slow {
        const SERIES: Series = Series::Slow;
        const ACCURACY: Accuracy = Accuracy::Plain;
    }
    impl Flavor for FastSlow {
        const SERIES: Series = Series::FastSlow;
        const ACCURACY: Accuracy = Accuracy::Plain;
    }
    impl Flavor for Token {
        const SERIES: Series = Series::FastSlowFast;
        const ACCURACY: Accuracy = Accuracy::Token;
    }
    impl Flavor for RexmitCnt {
        const SERIES: Series = Series::FastSlowFast;
        const ACCURACY: Accuracy = Accuracy::RexmitCnt;
    }
}

/// `fasor-slow` (§6.5).
pub type FasorSlow = Fasor<flavor::Slow>;
/// `fasor-fastslow` (§6.5).
pub type FasorFastSlow = Fasor<flavor::FastSlow>;
/// `fasor-token` (§6.6).
pub type FasorToken = Fasor<flavor::Token>;
/// `fasor-option` (§6.6).
pub type FasorOption = Fasor<flavor::RexmitCnt>;

/// What is known about the peer's Rexmit-Cnt support (FASOR+Option only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Support {
    /// No piggybacked response seen yet: probe with 255.
    Unknown,
    /// The first piggybacked response echoed the option.
    Yes,
    /// It did not: stop marking, behave as plain FASOR.
    No,
}

/// SLOWRTO_FACTOR default (§6.3).
pub const SLOWRTO_FACTOR: f64 = 1.5;
/// Timer cap default (§6.1).
pub const CAP: f64 = 60.0;

/// FASOR state for one destination; `V` picks the flavour.
#[derive(Clone, Debug, PartialEq)]
pub struct Fasor<V = flavor::Plain> {
    fast: FastRto,
    /// Undithered SlowRTO (s); meaningful once the state has left `Fast`.
    slow_rto: f64,
    state: State,
    support: Support,
    /// Spurious retransmissions detected through echoes (kept across `reset`).
    spurious: u64,
    cap: f64,
    slowrto_factor: f64,
    first_sample: FirstSample,
    _flavor: PhantomData<V>,
}

impl<V: Flavor> Default for Fasor<V> {
    fn default() -> Self {
        Fasor::with(CAP, SLOWRTO_FACTOR, FirstSample::Draft)
    }
}

impl<V: Flavor> Fasor<V> {
    /// Builds with explicit parameters.
    pub fn with(cap: f64, slowrto_factor: f64, first_sample: FirstSample) -> Self {
        Fasor {
            fast: FastRto::new(),
            slow_rto: 0.0,
            state: State::Fast,
            support: Support::Unknown,
            spurious: 0,
            cap,
            slowrto_factor,
            first_sample,
            _flavor: PhantomData,
        }
    }

    /// Builds from scenario parameters (`cap`, default 60; `first_sample`,
    /// default [`FirstSample::Draft`]; `slowrto_factor`, default 1.5).
    pub fn from_params(name: &'static str, p: &AlgorithmParams) -> Result<Self, ParamError> {
        p.check(name, &["cap", "first_sample", "slowrto_factor"])?;
        Ok(Fasor::with(
            p.cap.unwrap_or(CAP),
            p.slowrto_factor.unwrap_or(SLOWRTO_FACTOR),
            p.first_sample.unwrap_or(FirstSample::Draft),
        ))
    }

    /// The FastRTO estimator.
    pub fn fast_rto(&self) -> &FastRto {
        &self.fast
    }

    /// The undithered SlowRTO (0 before any retransmitted exchange completed).
    pub fn slow_rto(&self) -> f64 {
        self.slow_rto
    }

    /// The current state.
    pub fn state(&self) -> State {
        self.state
    }

    /// What is known about Rexmit-Cnt support (always `Unknown` for other flavours).
    pub fn support(&self) -> Support {
        self.support
    }

    /// Whether transmissions are currently marked, so echoes are trusted.
    fn marks(&self) -> bool {
        match V::ACCURACY {
            Accuracy::Plain => false,
            Accuracy::Token => true,
            Accuracy::RexmitCnt => self.support != Support::No,
        }
    }

    /// An unambiguous (or, with accurate RTT, precise) sample: FastRTO is
    /// updated and the state returns to FAST (Listing 1, `unambiguous_ack`).
    fn unambiguous(&mut self, r: f64) {
        self.fast.update(sanitize(r), self.first_sample);
        self.state = State::Fast;
    }

    /// An acknowledgement that counts as ambiguous: SlowRTO, then the next state.
    fn ambiguous(&mut self, elapsed: f64) {
        self.slow_rto = self.slowrto_factor * sanitize(elapsed);
        self.state = self.state.after_ambiguous(V::SERIES);
    }
}

impl<V: Flavor> CongestionControl for Fasor<V> {
    fn start(&mut self, _now: f64, _outstanding: usize, rng: &mut dyn Random) -> ExchangeTimer {
        let f = self.fast.rto + self.fast.dither(rng);
        let s = match self.state {
            State::Fast => 0.0,
            State::FastSlowFast => fsf_second(self.slow_rto + self.fast.dither(rng), self.fast.rto),
            _ => self.slow_rto + self.fast.dither(rng),
        };
        let t = timer(self.state, 0, f, s, self.cap);
        ExchangeTimer {
            initial: t,
            current: t,
            retransmissions: 0,
            state: self.state as u8,
            aux: f,
            aux2: s,
        }
    }

    fn expire(&mut self, _now: f64, ex: &mut ExchangeTimer, _rng: &mut dyn Random) {
        ex.retransmissions = ex.retransmissions.saturating_add(1);
        ex.current = timer(
            State::from_u8(ex.state),
            ex.retransmissions,
            ex.aux,
            ex.aux2,
            self.cap,
        );
    }

    fn on_ack(&mut self, ex: &ExchangeTimer, ack: &Ack) {
        if V::ACCURACY == Accuracy::RexmitCnt && ack.piggybacked && self.support == Support::Unknown
        {
            self.support = if ack.echo.is_some() {
                Support::Yes
            } else {
                Support::No
            };
        }
        let n = ex.retransmissions;
        // Thesis §7.3: once Rexmit-Cnt support is confirmed, "messages
        // missing the option are inferred as original transmissions" (a
        // piggybacked response; an Empty ACK never carries the option).
        let inferred =
            (V::ACCURACY == Accuracy::RexmitCnt && self.support == Support::Yes && ack.piggybacked)
                .then_some(Echo {
                    ordinal: 0,
                    rtt: ack.elapsed,
                });
        match ack.echo.or(inferred).filter(|_| self.marks()) {
            // Thesis §7.3: the echo makes "all samples unambiguous": the
            // precise RTT of the answered copy updates FastRTO and the state
            // returns to FAST, whichever copy was answered. An echo of an
            // earlier copy than the last one sent is still counted as a
            // spurious retransmission (a statistic; it changes nothing).
            Some(Echo { ordinal, rtt }) => {
                if ordinal < n {
                    self.spurious += 1;
                }
                self.unambiguous(rtt);
            }
            None if n == 0 => self.unambiguous(ack.elapsed),
            None => self.ambiguous(ack.elapsed),
        }
    }

    fn reset(&mut self) {
        let spurious = self.spurious;
        *self = Fasor::with(self.cap, self.slowrto_factor, self.first_sample);
        self.spurious = spurious;
    }

    fn marking(&self) -> Marking {
        match V::ACCURACY {
            Accuracy::Plain => Marking::None,
            Accuracy::Token => Marking::Token,
            Accuracy::RexmitCnt => match self.support {
                Support::Unknown => Marking::RexmitCount { probe: true },
                Support::Yes => Marking::RexmitCount { probe: false },
                Support::No => Marking::None,
            },
        }
    }

    fn spurious_detected(&self) -> u64 {
        self.spurious
    }
}

#[cfg(test)]
mod tests;
