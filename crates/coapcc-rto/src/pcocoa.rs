//! pCoCoA (Bolettieri et al. 2018; spec `docs/spec/algorithms-spec.md` §4): precise
//! request/response matching with the Transmission Counter (TC) option and a
//! single RTT estimator.
//!
//! Transmissions are marked with TC ([`Marking::TransmissionCounter`]); the echo
//! gives the precise RTT of the answered copy. If the echoed copy is not the last
//! one sent, a retransmission was spurious (counted, and k = 6 instead of 4 for
//! that sample). The estimator ([`PreciseEstimator`]):
//!
//! - first sample R: `SRTT = R`, `RTTVAR = R/2`, `mdev_max = max(R/2, 0.25)`,
//!   `RTO = SRTT + mdev_max`;
//! - later samples: `SRTT = 7/8·SRTT + R/8`; RTTVAR with gain γ = 1/32 when
//!   `R < SRTT − RTTVAR`, β = 1/4 when `|SRTT − R| > RTTVAR`, else α = 1/8; when
//!   `R > SRTT`, `mdev_max` becomes the mean of the last three RTTVAR after three
//!   consecutive samples above it, or moves a quarter of the way to RTTVAR after
//!   eight consecutive samples below it; `SRTO = SRTT + max(k·RTTVAR, mdev_max)`,
//!   `RTO = (1-δ)·SRTO + δ·RTO` with δ = 1/2, where the right-hand `RTO` is
//!   the previous *undithered* output of the estimator: Algorithm 2 is called
//!   as `RTOCalculation(R, spurious)` with no dithered value passed in, its
//!   line 19 result is stored per destination (Algorithm 1, line 26) and only
//!   dithered at the next exchange (Algorithm 1, line 7); §VI.C calls it "a
//!   two-step procedure as in the CoCoA+ algorithm" (`docs/decisions/algorithms-choices.md`,
//!   "Second audit", "1. pCoCoA, Algorithm 2 line 19 smooths the previous
//!   *undithered* RTO"). That is the default; the paper's §II.A names the
//!   *dithered* value `RTO_init`, the name line 19 uses, and the parameter
//!   `smoothing = "dithered"` ([`Smoothing::Dithered`]) smooths toward the
//!   dithered initial timer of the exchange the sample comes from instead.
//!
//! Initial timer uniform in `[RTO, 1.5·RTO]` (2 s for an unknown destination),
//! backoff by CoCoA+'s variable backoff factor (chosen once from the initial
//! timer). The cap (`cap`, 60 s) limits the initial RTO only — the RTO and the
//! dithered initial timer — not backed-off timers (paper §V.F; see
//! [`crate::cocoa_plus`]). Until the first echo arrives (a server without TC
//! support), the destination is run entirely by an embedded [`CocoaPlus`].

use crate::cocoa::{clamp_rto, dither, INITIAL_RTO};
use crate::cocoa_plus::CocoaPlus;
use crate::fasor::estimator::sanitize;
use crate::math::{abs, max, min};
use crate::{
    Ack, AlgorithmParams, CongestionControl, ExchangeTimer, Marking, ParamError, Random, Smoothing,
};

/// SRTT gain α (also RTTVAR's gain for small deviations).
pub const ALPHA: f64 = 1.0 / 8.0;
/// RTTVAR gain β for deviations above RTTVAR (also mdev_max's decay gain).
pub const BETA: f64 = 1.0 / 4.0;
/// RTTVAR gain γ for samples well below SRTT.
pub const GAMMA: f64 = 1.0 / 32.0;
/// RTO smoothing weight δ (of the previous RTO, undithered by default: [`Smoothing`]).
pub const DELTA: f64 = 1.0 / 2.0;
/// Lower bound of the first `mdev_max` (s).
pub const MDEV_MAX_MIN: f64 = 0.25;
/// Variance multiplier.
pub const K: f64 = 4.0;
/// Variance multiplier after a spurious retransmission.
pub const K_SPURIOUS: f64 = 6.0;
/// Consecutive samples with RTTVAR above mdev_max that raise it.
pub const RAISE_AFTER: u8 = 3;
/// Consecutive samples with RTTVAR below mdev_max that lower it.
pub const LOWER_AFTER: u8 = 8;

/// The scenario parameters pCoCoA accepts: CoCoA+'s and `smoothing`.
pub const PCOCOA_PARAMS: &[&str] = &[
    "cap",
    "aging",
    "ack_timeout",
    "ack_random_factor",
    "smoothing",
];

/// The precise estimator of pCoCoA (§4), fed with echoed samples.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PreciseEstimator {
    /// Smoothed RTT (meaningless until `sampled`).
    pub srtt: f64,
    /// RTT variation.
    pub rttvar: f64,
    /// The variation floor / ceiling tracker `mdev_max`.
    pub mdev_max: f64,
    /// The smoothed RTO (s), undithered; [`INITIAL_RTO`] before any sample.
    pub rto: f64,
    /// Consecutive samples with `RTTVAR > mdev_max`.
    pub above: u8,
    /// Consecutive samples with `RTTVAR < mdev_max`.
    pub below: u8,
    /// The last three RTTVAR values, most recent at `recent[0]`.
    pub recent: [f64; 3],
    /// Whether any sample has been taken.
    pub sampled: bool,
}

impl Default for PreciseEstimator {
    fn default() -> Self {
        PreciseEstimator::new()
    }
}

impl PreciseEstimator {
    /// The estimator of an unknown destination (RTO = 2 s).
    pub const fn new() -> Self {
        PreciseEstimator {
            srtt: 0.0,
            rttvar: 0.0,
            mdev_max: 0.0,
            rto: INITIAL_RTO,
            above: 0,
            below: 0,
            recent: [0.0; 3],
            sampled: false,
        }
    }

    /// Feeds the precise sample `r` (already sanitized); `spurious` selects
    /// k = 6 for this sample's SRTO (Algorithm 2, `RTOCalculation(R,
    /// spurious)`). The first sample sets `RTO = SRTT + mdev_max` (eq. 10);
    /// later ones `RTO = (1-δ)·SRTO + δ·RTO` with the previous, undithered
    /// RTO (line 19). Returns the new RTO.
    pub fn update(&mut self, r: f64, spurious: bool) -> f64 {
        self.update_toward(r, spurious, self.rto)
    }

    /// [`PreciseEstimator::update`] with the RTO that line 19 smooths with
    /// given: `previous` (the stored RTO in [`PreciseEstimator::update`], the
    /// dithered timer under `smoothing = "dithered"`). The first sample
    /// ignores it (eq. 10).
    pub fn update_toward(&mut self, r: f64, spurious: bool, previous: f64) -> f64 {
        if !self.sampled {
            self.srtt = r;
            self.rttvar = r / 2.0;
            self.mdev_max = max(r / 2.0, MDEV_MAX_MIN);
            self.rto = self.srtt + self.mdev_max;
            self.sampled = true;
            return self.rto;
        }
        self.srtt = (1.0 - ALPHA) * self.srtt + ALPHA * r;
        let err = abs(self.srtt - r);
        let gain = if r < self.srtt - self.rttvar {
            GAMMA
        } else if err > self.rttvar {
            BETA
        } else {
            ALPHA
        };
        self.rttvar = (1.0 - gain) * self.rttvar + gain * err;
        self.recent = [self.rttvar, self.recent[0], self.recent[1]];
        if self.rttvar > self.mdev_max {
            self.above = self.above.saturating_add(1);
            self.below = 0;
        } else if self.rttvar < self.mdev_max {
            self.below = self.below.saturating_add(1);
            self.above = 0;
        } else {
            self.above = 0;
            self.below = 0;
        }
        if r > self.srtt {
            if self.above >= RAISE_AFTER {
                self.mdev_max = (self.recent[0] + self.recent[1] + self.recent[2]) / 3.0;
                self.above = 0;
            } else if self.below >= LOWER_AFTER {
                self.mdev_max = (1.0 - BETA) * self.mdev_max + BETA * self.rttvar;
                self.below = 0;
            }
        }
        let k = if spurious { K_SPURIOUS } else { K };
        let srto = self.srtt + max(k * self.rttvar, self.mdev_max);
        self.rto = (1.0 - DELTA) * srto + DELTA * previous;
        self.rto
    }
}

/// pCoCoA for one destination.
#[derive(Clone, Debug, PartialEq)]
pub struct Pcocoa {
    /// CoCoA+ state, in charge until the first TC echo.
    fallback: CocoaPlus,
    /// The precise estimator, in charge once an echo has been seen.
    precise: PreciseEstimator,
    /// Whether the peer has echoed TC.
    echoed: bool,
    /// Spurious retransmissions detected (kept across `reset`).
    spurious: u64,
    /// Which RTO line 19 smooths with (parameter `smoothing`).
    smoothing: Smoothing,
}

impl Default for Pcocoa {
    fn default() -> Self {
        Pcocoa::new(CocoaPlus::default())
    }
}

impl Pcocoa {
    /// Builds around a configured CoCoA+ (its cap, dithering, base RTO and aging
    /// serve the fallback; cap, dithering and base RTO serve pCoCoA too).
    pub fn new(fallback: CocoaPlus) -> Self {
        Pcocoa::with(fallback, Smoothing::Undithered)
    }

    /// [`Pcocoa::new`] with the reading of line 19 given.
    pub fn with(fallback: CocoaPlus, smoothing: Smoothing) -> Self {
        let mut precise = PreciseEstimator::new();
        precise.rto = fallback.initial_rto;
        Pcocoa {
            fallback,
            precise,
            echoed: false,
            spurious: 0,
            smoothing,
        }
    }

    /// Builds from scenario parameters: those of CoCoA+ (`cap`, `aging`,
    /// `ack_timeout`, `ack_random_factor`) and `smoothing` (default
    /// undithered).
    pub fn from_params(name: &'static str, p: &AlgorithmParams) -> Result<Self, ParamError> {
        p.check(name, PCOCOA_PARAMS)?;
        let fallback = AlgorithmParams {
            smoothing: None,
            ..*p
        };
        Ok(Pcocoa::with(
            CocoaPlus::from_params(name, &fallback)?,
            p.smoothing.unwrap_or(Smoothing::Undithered),
        ))
    }

    /// Whether the peer echoed TC (pCoCoA proper) or not yet (CoCoA+ fallback).
    pub fn precise_mode(&self) -> bool {
        self.echoed
    }

    /// The precise estimator.
    pub fn estimator(&self) -> &PreciseEstimator {
        &self.precise
    }

    /// The embedded CoCoA+ fallback.
    pub fn fallback(&self) -> &CocoaPlus {
        &self.fallback
    }

    /// The RTO the next exchange starts from.
    pub fn rto(&self) -> f64 {
        if self.echoed {
            self.precise.rto
        } else {
            self.fallback.est.rto
        }
    }

    /// Line 19 of Algorithm 2 for a sample of the exchange `ex`.
    fn precise_sample(&mut self, ex: &ExchangeTimer, r: f64, spurious: bool) {
        let previous = match self.smoothing {
            Smoothing::Undithered => self.precise.rto,
            Smoothing::Dithered => ex.initial,
        };
        let rto = self.precise.update_toward(sanitize(r), spurious, previous);
        self.precise.rto = clamp_rto(rto, self.fallback.cap);
    }
}

impl CongestionControl for Pcocoa {
    fn start(&mut self, now: f64, outstanding: usize, rng: &mut dyn Random) -> ExchangeTimer {
        if !self.echoed {
            return self.fallback.start(now, outstanding, rng);
        }
        let cap = self.fallback.cap;
        let t = min(dither(self.precise.rto, self.fallback.dither, rng), cap);
        ExchangeTimer {
            initial: t,
            current: t,
            ..ExchangeTimer::default()
        }
    }

    fn expire(&mut self, _now: f64, ex: &mut ExchangeTimer, _rng: &mut dyn Random) {
        self.fallback.expire_exchange(ex);
    }

    fn on_ack(&mut self, ex: &ExchangeTimer, ack: &Ack) {
        let n = ex.retransmissions;
        match ack.echo {
            Some(echo) => {
                self.echoed = true;
                let spurious = echo.ordinal < n;
                if spurious {
                    self.spurious += 1;
                }
                self.precise_sample(ex, echo.rtt, spurious);
            }
            None if !self.echoed => self.fallback.on_ack(ex, ack),
            None if n == 0 => self.precise_sample(ex, ack.elapsed, false),
            None => {}
        }
    }

    fn reset(&mut self) {
        let spurious = self.spurious;
        self.fallback.reset();
        *self = Pcocoa::with(self.fallback.clone(), self.smoothing);
        self.spurious = spurious;
    }

    fn marking(&self) -> Marking {
        Marking::TransmissionCounter
    }

    fn spurious_detected(&self) -> u64 {
        self.spurious
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cocoa_plus::BACKOFF_CEILING;
    use crate::testutil::{close, Mix, Scripted};
    use crate::Echo;

    fn ack(now: f64, elapsed: f64, echo: Option<(u8, f64)>) -> Ack {
        Ack {
            now,
            elapsed,
            echo: echo.map(|(ordinal, rtt)| Echo { ordinal, rtt }),
            piggybacked: true,
        }
    }

    fn ex(n: u8) -> ExchangeTimer {
        ExchangeTimer {
            retransmissions: n,
            ..ExchangeTimer::default()
        }
    }

    /// Feeds non-spurious samples in order.
    fn feed(e: &mut PreciseEstimator, samples: &[f64]) {
        for r in samples {
            e.update(*r, false);
        }
    }

    #[test]
    fn first_and_second_sample() {
        let mut e = PreciseEstimator::new();
        // 0.4: SRTT 0.4, RTTVAR 0.2, mdev_max = max(0.2, 0.25), RTO 0.65.
        assert!(close(e.update(0.4, false), 0.65));
        assert!(close(e.mdev_max, 0.25) && close(e.rttvar, 0.2));
        let mut s = e;
        // 0.6: SRTT = 7/8·0.4 + 0.6/8 = 0.425, |SRTT − R| = 0.175 ≤ RTTVAR → gain α:
        // RTTVAR = 7/8·0.2 + 0.175/8 = 0.196875; SRTO = 0.425 + 4·0.196875
        // = 1.2125; RTO = (1.2125 + 0.65)/2 = 0.93125.
        assert!(close(e.update(0.6, false), 0.93125));
        assert!(close(e.srtt, 0.425) && close(e.rttvar, 0.196875));
        assert_eq!((e.above, e.below), (0, 1));
        // Spurious: k = 6: SRTO = 0.425 + 1.18125; RTO = 1.128125.
        assert!(close(s.update(0.6, true), 1.128125));
    }

    #[test]
    fn first_mdev_max_for_long_rtts() {
        let mut e = PreciseEstimator::new();
        assert!(close(e.update(2.0, false), 3.0));
        assert!(close(e.mdev_max, 1.0));
    }

    #[test]
    fn gamma_gain_for_samples_well_below_srtt() {
        let mut e = PreciseEstimator::new();
        feed(&mut e, &[1.0, 0.2]);
        // SRTT = 0.9; 0.2 < 0.9 − 0.5 → RTTVAR = 31/32·0.5 + 0.7/32 = 0.50625.
        assert!(close(e.srtt, 0.9) && close(e.rttvar, 0.50625));
        // R < SRTT: mdev_max untouched; SRTO = 0.9 + 2.025; RTO = (2.925 + 1.5)/2.
        assert!(close(e.rto, 2.2125));
    }

    #[test]
    fn mdev_max_rises_to_the_mean_of_three_rttvars() {
        let mut e = PreciseEstimator::new();
        feed(&mut e, &[0.1, 2.0, 2.0]);
        // RTTVAR: 0.453125, then 0.703515625 (gain β both times), above 0.25.
        assert_eq!(e.above, 2);
        assert!(close(e.mdev_max, 0.25));
        e.update(2.0, false);
        // Third: RTTVAR = 0.845849609375 → mdev_max = mean of the three.
        let mean = (0.453125 + 0.703515625 + 0.845849609375) / 3.0;
        assert!(close(e.mdev_max, mean), "{}", e.mdev_max);
        assert_eq!(e.above, 0, "counted afresh after a change");
        assert!(close(e.rto, 3.2076171875));
    }

    #[test]
    fn mdev_max_decays_after_eight_samples_below() {
        let mut e = PreciseEstimator::new();
        // Eq. 8-10, first sample 1.0: SRTT 1, RTTVAR 0.5, mdev_max 0.5, RTO 1.5.
        // Ten more samples of 1.0: SRTT stays 1, |SRTT − R| = 0 ≤ RTTVAR, so
        // line 8 (α): RTTVAR_n = 0.5·(7/8)^n; R = SRTT, so line 9 keeps
        // mdev_max at 0.5 while the "below" run grows to 10.
        feed(&mut e, &[1.0; 11]);
        assert_eq!(e.below, 10);
        assert!(close(e.mdev_max, 0.5));
        // (7/8)^10 = 282475249/1073741824 = 0.26307..., RTTVAR_10 = 0.131538.
        let q10 = 282_475_249.0 / 1_073_741_824.0;
        let var10 = 0.5 * q10;
        assert!(close(e.rttvar, var10));
        // RTO (line 18-19): 4·RTTVAR_n = 2·(7/8)^n ≥ 0.526 > mdev_max for
        // n ≤ 10, so SRTO_n = 1 + 2·(7/8)^n and, writing RTO_n = 1 + a_n,
        // a_n = (2·(7/8)^n + a_(n-1))/2 with a_0 = 0.5. Unrolled:
        // a_n = 0.5·2^-n + Σ_(m=0..n-1) 2^-m·(7/8)^(n-m)
        //     = 0.5·2^-n + (7/3)·((7/8)^n − 2^-n)   (geometric sum, ratio 4/7).
        // Check n = 1: 0.25 + (7/3)·0.375 = 1.125 = (1.75 + 0.5)/2.
        let a10 = 0.5 / 1024.0 + 7.0 / 3.0 * (q10 - 1.0 / 1024.0);
        assert!(close(e.rto, 1.0 + a10), "{}", e.rto); // 1.612052646...
        e.update(1.2, false);
        // Sample 1.2: SRTT = 7/8 + 1.2/8 = 1.025; |1.025 − 1.2| = 0.175 >
        // RTTVAR_10 → line 6 (β): RTTVAR = 3/4·0.131538 + 0.175/4 = 0.142403.
        let var = 0.75 * var10 + 0.25 * 0.175;
        assert!(close(e.rttvar, var));
        // Still below 0.5: the 11th consecutive, R > SRTT → lines 12-13:
        // mdev_max = 3/4·0.5 + RTTVAR/4 = 0.410601.
        assert!(close(e.mdev_max, 0.75 * 0.5 + 0.25 * var));
        assert_eq!(e.below, 0);
        // SRTO = 1.025 + max(4·0.142403 = 0.569613, 0.410601) = 1.594613;
        // RTO = (1.594613 + 1.612053)/2 = 1.603333.
        let rto = (1.025 + 4.0 * var + 1.0 + a10) / 2.0;
        assert!(close(rto, 1.603_333_005), "{rto}");
        assert!(close(e.rto, rto), "{}", e.rto);
    }

    #[test]
    fn unknown_destination_and_marking() {
        let mut a = Pcocoa::default();
        assert_eq!(a.marking(), Marking::TransmissionCounter);
        assert!(close(
            a.start(0.0, 0, &mut Scripted::new(&[0.0])).initial,
            2.0
        ));
        assert!(close(
            a.start(0.0, 0, &mut Scripted::new(&[1.0])).initial,
            3.0
        ));
    }

    #[test]
    fn precise_timer_series_uses_cocoa_plus_vbf() {
        let mut a = Pcocoa::default();
        a.on_ack(&ex(0), &ack(1.0, 0.4, Some((0, 0.4))));
        assert!(a.precise_mode());
        assert!(close(a.rto(), 0.65));
        let mut r = Scripted::new(&[1.0]);
        let mut e = a.start(2.0, 0, &mut r);
        assert!(close(e.initial, 0.975));
        // Initial below 1 s → ×3 on every expiry: 0.975·3 = 2.925, 8.775,
        // 26.325, 78.975, 236.925. The last two used to be 60 (every timer
        // capped); only the initial RTO is capped now (paper §V.F).
        for expect in [2.925, 8.775, 26.325, 78.975, 236.925] {
            a.expire(3.0, &mut e, &mut r);
            assert!(close(e.current, expect), "{}", e.current);
        }
    }

    #[test]
    fn line_19_smooths_the_undithered_rto() {
        // Algorithm 2, line 19: RTO = (1-δ)·SRTO + δ·RTO with the previous
        // undithered RTO (Algorithm 1 stores it at line 26 and dithers it only
        // at line 7 of the next exchange). Hand computation:
        // first echoed sample 0.4 (eq. 8-10): RTO = 0.4 + max(0.2, 0.25) = 0.65.
        // next exchange, U = 1: initial timer 0.65 + 1·0.65/2 = 0.975.
        // its echoed sample 0.6: SRTT = 0.35 + 0.075 = 0.425,
        //   |0.425 − 0.6| = 0.175 ≤ 0.2 → α: RTTVAR = 0.175 + 0.021875 = 0.196875,
        //   SRTO = 0.425 + 4·0.196875 = 1.2125;
        //   RTO = 0.5·1.2125 + 0.5·0.65 = 0.60625 + 0.325 = 0.93125,
        // whatever U the exchange drew (toward the dithered 0.975 it would
        // have been 1.09375).
        for (u, mut rng) in [
            (1.0, Scripted::new(&[1.0])),
            (0.5, Scripted::new(&[0.5])),
            (0.0, Scripted::new(&[0.0])),
        ] {
            let mut a = Pcocoa::default();
            a.on_ack(&ex(0), &ack(1.0, 0.4, Some((0, 0.4))));
            assert!(close(a.rto(), 0.65));
            let e = a.start(2.0, 0, &mut rng);
            assert!(close(e.initial, 0.65 * (1.0 + u / 2.0)));
            a.on_ack(&e, &ack(2.6, 0.6, Some((0, 0.6))));
            assert!(close(a.rto(), 0.93125), "U = {u}: {}", a.rto());
        }
    }

    #[test]
    fn line_19_under_smoothing_dithered() {
        // The same exchanges as `line_19_smooths_the_undithered_rto`, with
        // line 19 smoothing toward the dithered initial timer 0.65·(1 + U/2)
        // of the exchange the sample comes from:
        //   RTO = 0.5·1.2125 + 0.5·0.65·(1 + U/2) = 0.60625 + 0.325·(1 + U/2):
        //   U = 0: 0.93125 (the timer is the RTO), U = 0.5: 0.60625 + 0.40625
        //   = 1.0125, U = 1: 0.60625 + 0.4875 = 1.09375.
        let p = AlgorithmParams {
            smoothing: Some(Smoothing::Dithered),
            ..Default::default()
        };
        for (u, expect, mut rng) in [
            (0.0, 0.93125, Scripted::new(&[0.0])),
            (0.5, 1.0125, Scripted::new(&[0.5])),
            (1.0, 1.09375, Scripted::new(&[1.0])),
        ] {
            let mut a = Pcocoa::from_params("pcocoa", &p).unwrap();
            a.on_ack(&ex(0), &ack(1.0, 0.4, Some((0, 0.4))));
            assert!(
                close(a.rto(), 0.65),
                "the first sample is eq. 10 either way"
            );
            let e = a.start(2.0, 0, &mut rng);
            a.on_ack(&e, &ack(2.6, 0.6, Some((0, 0.6))));
            assert!(close(a.rto(), expect), "U = {u}: {}", a.rto());
        }
    }

    /// The RTO after `n` lock-step exchanges answered after exactly 1 s, each
    /// echoing the original, with dither draws from `rng`; also the mean RTO
    /// over the last `n - 100`.
    fn constant_rtt(p: &AlgorithmParams, n: usize, rng: &mut dyn Random) -> (f64, f64) {
        let mut a = Pcocoa::from_params("pcocoa", p).unwrap();
        let mut sum = 0.0;
        for i in 0..n {
            let e = a.start(0.0, 0, rng);
            a.on_ack(&e, &ack(1.0, 1.0, Some((0, 1.0))));
            if i >= 100 {
                sum += a.rto();
            }
        }
        (a.rto(), sum / (n - 100) as f64)
    }

    #[test]
    fn steady_state_under_a_constant_rtt_for_both_readings() {
        // Every sample R = 1. The first (eq. 8-10): SRTT 1, RTTVAR 0.5,
        // mdev_max = max(0.5, 0.25) = 0.5, RTO 1.5. Each later one: SRTT =
        // 7/8 + 1/8 = 1; |SRTT − R| = 0 ≤ RTTVAR → gain α, RTTVAR_n =
        // 0.5·(7/8)^n; R is never above SRTT, so mdev_max stays 0.5. SRTO_n =
        // 1 + max(2·(7/8)^n, 0.5), which is 1.5 once (7/8)^n ≤ 1/4 (n ≥ 11).
        // So SRTO = 1.5 from there on, and line 19 is x' = SRTO/2 + y/2 with
        // y the RTO it smooths with:
        // - undithered, y = x: fixed point x = SRTO = 1.5, whatever is drawn;
        // - dithered, y = x·(1 + U/2) (uniform in [x, 1.5x]): with the same
        //   draw U every time, x·(1 − (1 + U/2)/2) = SRTO/2, x = SRTO/(1 − U/2):
        //   U = 0 → 1.5 (= SRTO), U = 0.5 → 2.0 (4/3·SRTO), U = 1 → 3.0
        //   (2·SRTO). With U uniform and independent of x, the mean obeys
        //   E[x] = SRTO/2 + E[x]·E[1 + U/2]/2 = 0.75 + 0.625·E[x], E[x] = 2.0
        //   = 4/3·SRTO.
        // The error shrinks by (1 + U/2)/2 ≤ 3/4 per exchange, so 200 are
        // plenty.
        let undithered = AlgorithmParams::default();
        let dithered = AlgorithmParams {
            smoothing: Some(Smoothing::Dithered),
            ..Default::default()
        };
        for (u, rng, expect) in [(0.0, &[0.0], 1.5), (0.5, &[0.5], 2.0), (1.0, &[1.0], 3.0)] {
            let (x, _) = constant_rtt(&undithered, 200, &mut Scripted::new(rng));
            assert!(close(x, 1.5), "undithered, U = {u}: {x}");
            let (x, _) = constant_rtt(&dithered, 200, &mut Scripted::new(rng));
            assert!(close(x, expect), "dithered, U = {u}: {x}");
        }
        // Uniform draws: the undithered RTO is 1.5 still; the dithered one
        // averages 2.0 (20 000 exchanges; its spread from one exchange to the
        // next is about 0.15, the mean's a few thousandths).
        let (x, mean) = constant_rtt(&undithered, 20_000, &mut Mix(7));
        assert!(close(x, 1.5) && close(mean, 1.5), "{x} {mean}");
        let (_, mean) = constant_rtt(&dithered, 20_000, &mut Mix(7));
        assert!((mean - 2.0).abs() < 0.02, "{mean}");
    }

    #[test]
    fn spurious_detection_uses_k6_and_is_counted() {
        let mut a = Pcocoa::default();
        a.on_ack(&ex(0), &ack(1.0, 0.4, Some((0, 0.4))));
        // Retransmitted twice, the original answered after 0.6 s: the values
        // of `first_and_second_sample` with k = 6 apply.
        a.on_ack(&ex(2), &ack(5.0, 0.6, Some((0, 0.6))));
        assert_eq!(a.spurious_detected(), 1);
        assert!(close(a.rto(), 1.128125));
        // The last copy answered: not spurious, precise RTT of that copy.
        let mut b = Pcocoa::default();
        b.on_ack(&ex(0), &ack(1.0, 0.4, Some((0, 0.4))));
        b.on_ack(&ex(2), &ack(5.0, 7.0, Some((2, 0.6))));
        assert_eq!(b.spurious_detected(), 0);
        assert!(close(b.rto(), 0.93125));
    }

    #[test]
    fn without_echo_it_is_cocoa_plus() {
        // A server that never echoes TC (§VI.A: "the advanced congestion
        // control features are disabled"): CoCoA+ (docs/spec/algorithms-spec.md §3.3, aging off),
        // worked by hand.
        let p = AlgorithmParams {
            aging: Some(false),
            ..Default::default()
        };
        let mut a = Pcocoa::from_params("pcocoa", &p).unwrap();
        // 1. Unknown destination, U = 0: initial timer 2 s. Answered without
        //    retransmission after 0.4 s → strong sample (RFC 6298 first
        //    sample): SRTT 0.4, RTTVAR 0.2, E_s = 0.4 + 4·0.2 = 1.2;
        //    RTO = 0.5·1.2 + 0.5·2 = 1.6.
        let e = a.start(0.0, 0, &mut Scripted::new(&[0.0]));
        assert!(close(e.initial, 2.0));
        a.on_ack(&e, &ack(0.4, 0.4, None));
        assert!(close(a.rto(), 1.6), "{}", a.rto());
        // 2. U = 1: initial 1.6·1.5 = 2.4, VBF 2 (1 ≤ 2.4 ≤ 3): 4.8, 9.6.
        //    Answered after two retransmissions, 3 s after the original →
        //    weak sample (K = 1, first): E_w = 3 + 1.5 = 4.5;
        //    RTO = 0.25·4.5 + 0.75·1.6 = 1.125 + 1.2 = 2.325.
        let mut r = Scripted::new(&[1.0]);
        let mut e = a.start(10.0, 0, &mut r);
        assert!(close(e.initial, 2.4));
        for expect in [4.8, 9.6] {
            a.expire(10.0, &mut e, &mut r);
            assert!(close(e.current, expect), "{}", e.current);
        }
        a.on_ack(&e, &ack(13.0, 3.0, None));
        assert!(close(a.rto(), 2.325), "{}", a.rto());
        // 3. U = 0: initial 2.325, three expiries (×2: 4.65, 9.3, 18.6); an
        //    answer after 3 retransmissions updates nothing.
        let mut r = Scripted::new(&[0.0]);
        let mut e = a.start(20.0, 0, &mut r);
        for expect in [4.65, 9.3, 18.6] {
            a.expire(20.0, &mut e, &mut r);
            assert!(close(e.current, expect), "{}", e.current);
        }
        a.on_ack(&e, &ack(40.0, 19.0, None));
        assert!(close(a.rto(), 2.325), "{}", a.rto());
        // 4. U = 0.5: initial 2.325·1.25 = 2.90625; answered after 0.6 s →
        //    strong: SRTT = 7/8·0.4 + 0.6/8 = 0.425, RTTVAR (against the
        //    updated SRTT) = 3/4·0.2 + |0.425 − 0.6|/4 = 0.19375,
        //    E_s = 0.425 + 0.775 = 1.2; RTO = 0.6 + 0.5·2.325 = 1.7625.
        let e = a.start(50.0, 0, &mut Scripted::new(&[0.5]));
        assert!(close(e.initial, 2.90625));
        a.on_ack(&e, &ack(50.6, 0.6, None));
        assert!(close(a.rto(), 1.7625), "{}", a.rto());
        assert!(!a.precise_mode());
        assert_eq!(a.spurious_detected(), 0);
    }

    #[test]
    fn after_support_is_seen_echo_less_acks_follow_karn() {
        let mut a = Pcocoa::default();
        a.on_ack(&ex(0), &ack(1.0, 0.4, Some((0, 0.4))));
        let before = a.clone();
        // An Empty ACK after a retransmission: ambiguous, ignored.
        a.on_ack(
            &ex(1),
            &Ack {
                piggybacked: false,
                ..ack(2.0, 1.5, None)
            },
        );
        assert_eq!(a, before);
        // Without retransmission: E is precise (as in `first_and_second_sample`).
        a.on_ack(
            &ex(0),
            &Ack {
                piggybacked: false,
                ..ack(3.0, 0.6, None)
            },
        );
        assert!(close(a.rto(), 0.93125));
    }

    #[test]
    fn rto_is_capped() {
        let mut a = Pcocoa::default();
        a.on_ack(&ex(0), &ack(1.0, 100.0, Some((0, 100.0))));
        assert!(close(a.rto(), 60.0));
        assert!(close(
            a.start(0.0, 0, &mut Scripted::new(&[1.0])).initial,
            60.0
        ));
    }

    #[test]
    fn reset_returns_to_fresh_but_keeps_the_spurious_count() {
        let p = AlgorithmParams {
            aging: Some(false),
            cap: Some(30.0),
            ..Default::default()
        };
        let fresh = Pcocoa::from_params("pcocoa", &p).unwrap();
        let mut a = fresh.clone();
        a.on_ack(&ex(0), &ack(1.0, 0.4, Some((0, 0.4))));
        a.on_ack(&ex(1), &ack(2.0, 0.9, Some((0, 0.9))));
        assert_ne!(a, fresh);
        a.reset();
        assert_eq!(a.spurious_detected(), 1);
        let mut expect = fresh.clone();
        expect.spurious = 1;
        assert_eq!(a, expect);
        assert!(!a.precise_mode());
        let bad = AlgorithmParams {
            slowrto_factor: Some(2.0),
            ..Default::default()
        };
        assert_eq!(
            Pcocoa::from_params("pcocoa", &bad).unwrap_err().field,
            "slowrto_factor"
        );
    }

    #[test]
    fn random_events_keep_timers_bounded() {
        let mut a = Pcocoa::default();
        let mut ev = Mix(3);
        let mut r = Mix(4);
        let mut now = 0.0;
        for i in 0..500 {
            let mut e = a.start(now, 0, &mut r);
            let n = (ev.uniform() * 10.0) as u8;
            for _ in 0..n {
                a.expire(now, &mut e, &mut r);
            }
            assert!(e.initial.is_finite() && e.initial > 0.0 && e.initial <= 60.0);
            assert!(e.current >= e.initial && e.current <= BACKOFF_CEILING);
            now += 30.0 * ev.uniform();
            let echo = (ev.uniform() < 0.8)
                .then(|| ((ev.uniform() * f64::from(n + 1)) as u8, 10.0 * ev.uniform()));
            if i % 50 == 49 {
                a.reset();
            } else {
                a.on_ack(&e, &ack(now, 12.0 * ev.uniform(), echo));
            }
        }
        assert!(a.spurious_detected() > 0);
    }
}
