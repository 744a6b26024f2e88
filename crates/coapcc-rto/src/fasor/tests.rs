//! FASOR family: state transitions and timer series against hand-computed values.

use super::*;
use crate::testutil::{close, Scripted};

fn ack(elapsed: f64) -> Ack {
    Ack {
        now: 100.0,
        elapsed,
        echo: None,
        piggybacked: true,
    }
}

fn echoed(elapsed: f64, ordinal: u8, rtt: f64) -> Ack {
    Ack {
        echo: Some(Echo { ordinal, rtt }),
        ..ack(elapsed)
    }
}

/// Runs one exchange: start, `n` expiries, then the acknowledgement.
fn exchange<V: Flavor>(a: &mut Fasor<V>, n: u8, ack: Ack) -> ExchangeTimer {
    let mut r = Scripted::new(&[0.0]);
    let mut ex = a.start(0.0, 0, &mut r);
    for _ in 0..n {
        a.expire(0.0, &mut ex, &mut r);
    }
    a.on_ack(&ex, &ack);
    ex
}

/// The first `N` timers of a new exchange, drawing dithers from `dither`.
fn series<V: Flavor, const N: usize>(a: &mut Fasor<V>, dither: &'static [f64]) -> [f64; N] {
    let mut r = Scripted::new(dither);
    let mut ex = a.start(0.0, 0, &mut r);
    let mut out = [0.0; N];
    out[0] = ex.current;
    assert_eq!(ex.initial, ex.current);
    for (i, o) in out.iter_mut().enumerate().skip(1) {
        a.expire(0.0, &mut ex, &mut r);
        assert_eq!(ex.retransmissions as usize, i);
        *o = ex.current;
    }
    out
}

fn all_close(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| close(*x, *y))
}

#[test]
fn very_first_timer_is_dithered_into_its_bounds() {
    let mut a = Fasor::<flavor::Plain>::default();
    let lo = a.start(0.0, 0, &mut Scripted::new(&[0.0])).initial;
    let hi = a.start(0.0, 0, &mut Scripted::new(&[1.0])).initial;
    assert!(close(lo, 2.0 + 1.0 / 6.0), "{lo}");
    assert!(close(hi, 2.0 + 2.0 / 3.0), "{hi}");
    assert!(lo > 2.1666 && hi < 2.6667);
}

#[test]
fn fast_series_of_an_unknown_destination() {
    // Dither 0.5 → F = 2 + 1/6 + 0.5·(2/3 − 1/6) = 2 + 5/12; ×2 until the 60 s cap.
    let mut a = Fasor::<flavor::Plain>::default();
    let f = 2.0 + 5.0 / 12.0;
    let s: [f64; 7] = series(&mut a, &[0.5]);
    assert!(
        all_close(&s, &[f, 2.0 * f, 4.0 * f, 8.0 * f, 16.0 * f, 60.0, 60.0]),
        "{s:?}"
    );
}

#[test]
fn full_state_walk_with_hand_computed_series() {
    let mut a = Fasor::<flavor::Plain>::default();

    // Unambiguous E = 0.4 (draft rule): SRTT 0.4, RTTVAR 0.05, FastRTO 0.6.
    exchange(&mut a, 0, ack(0.4));
    assert_eq!(a.state(), State::Fast);
    assert!(close(a.fast_rto().rto, 0.6));
    // FAST: F = 0.6 + U(0.1, 0.4); with 0 → 0.7: 0.7, 1.4, 2.8, 5.6.
    let s: [f64; 4] = series(&mut a, &[0.0]);
    assert!(all_close(&s, &[0.7, 1.4, 2.8, 5.6]), "{s:?}");

    // Retransmitted once, E = 1.2: SlowRTO = 1.8, FAST → FAST_SLOW_FAST.
    exchange(&mut a, 1, ack(1.2));
    assert_eq!(a.state(), State::FastSlowFast);
    assert!(close(a.slow_rto(), 1.8));
    assert!(
        close(a.fast_rto().rto, 0.6),
        "an ambiguous ACK leaves FastRTO alone"
    );
    // F = 0.7 (dither 0), S = 1.8 + 0.4 (dither 1): F, max(S, 2F), 2F, 4F, 8F.
    let s: [f64; 5] = series(&mut a, &[0.0, 1.0]);
    assert!(all_close(&s, &[0.7, 2.2, 1.4, 2.8, 5.6]), "{s:?}");

    // Retransmitted twice, E = 2.0: SlowRTO = 3.0, → SLOW_FAST.
    exchange(&mut a, 2, ack(2.0));
    assert_eq!(a.state(), State::SlowFast);
    assert!(close(a.slow_rto(), 3.0));
    // S = 3.0 + 0.1, F = 0.7: S, F, 2F, 4F.
    let s: [f64; 4] = series(&mut a, &[0.0, 0.0]);
    assert!(all_close(&s, &[3.1, 0.7, 1.4, 2.8]), "{s:?}");

    // Another ambiguous ACK stays in SLOW_FAST, SlowRTO not smoothed: 1.5·0.8.
    exchange(&mut a, 1, ack(0.8));
    assert_eq!(a.state(), State::SlowFast);
    assert!(close(a.slow_rto(), 1.2));

    // Unambiguous → FAST; FastRTO: RTTVAR = 0.75·0.05 = 0.0375, SRTT 0.4 → 0.55.
    exchange(&mut a, 0, ack(0.4));
    assert_eq!(a.state(), State::Fast);
    assert!(close(a.fast_rto().rto, 0.55));
    assert!(close(a.fast_rto().rttvar, 0.0375));
}

#[test]
fn fast_slow_fast_takes_twice_the_undithered_fastrto_when_slowrto_is_smaller() {
    let mut a = Fasor::<flavor::Plain>::default();
    exchange(&mut a, 0, ack(0.4)); // FastRTO 0.6 (SRTT 0.4)
    exchange(&mut a, 1, ack(0.5)); // SlowRTO 1.5·0.5 = 0.75, FAST_SLOW_FAST
                                   // Listing 1: i = 0 fastrto + dither() = 0.6 + 0.1 = 0.7 (U = 0: SRTT/4);
                                   // i = 1 MAX(slowrto, 2*fastrto) = MAX(0.75 + 0.1, 2·0.6) = 1.2 (not
                                   // 2·0.7 = 1.4: fastrto is the estimator's value, undithered);
                                   // i = 2 backoff_series_timer·2 = 1.4; i = 3: 2.8.
    let s: [f64; 4] = series(&mut a, &[0.0, 0.0]);
    assert!(all_close(&s, &[0.7, 1.2, 1.4, 2.8]), "{s:?}");
}

#[test]
fn failure_changes_nothing() {
    let mut a = Fasor::<flavor::Plain>::default();
    exchange(&mut a, 0, ack(0.4));
    exchange(&mut a, 1, ack(1.2));
    let before = a.clone();
    let mut r = Scripted::new(&[0.3]);
    let mut ex = a.start(0.0, 0, &mut r);
    for _ in 0..20 {
        a.expire(0.0, &mut ex, &mut r);
    }
    a.on_failure(90.0, &ex);
    assert_eq!(a, before);
    assert_eq!(ex.current, 60.0, "backed off to the cap");
}

#[test]
fn slowrto_factor_and_cap_are_parameters() {
    let p = AlgorithmParams {
        cap: Some(5.0),
        slowrto_factor: Some(2.0),
        ..Default::default()
    };
    let mut a = Fasor::<flavor::Plain>::from_params("fasor", &p).unwrap();
    exchange(&mut a, 0, ack(0.4)); // FastRTO 0.6
    exchange(&mut a, 3, ack(1.5)); // SlowRTO = 2·1.5 = 3
    assert!(close(a.slow_rto(), 3.0));
    // F = 0.7, S = 3.1: 0.7, 3.1, 1.4, 2.8, 5 (cap), 5.
    let s: [f64; 6] = series(&mut a, &[0.0]);
    assert!(all_close(&s, &[0.7, 3.1, 1.4, 2.8, 5.0, 5.0]), "{s:?}");
    // A SlowRTO above the cap is capped where armed.
    exchange(&mut a, 1, ack(10.0)); // SlowRTO 20, SLOW_FAST
    let s: [f64; 2] = series(&mut a, &[0.0]);
    assert!(all_close(&s, &[5.0, 0.7]), "{s:?}");
}

#[test]
fn rejects_foreign_parameters() {
    let p = AlgorithmParams {
        aging: Some(true),
        ..Default::default()
    };
    assert_eq!(
        FasorToken::from_params("fasor-token", &p)
            .unwrap_err()
            .field,
        "aging"
    );
}

#[test]
fn first_sample_variants_change_the_first_fast_rto() {
    for (rule, rto, next) in [
        (FirstSample::Draft, 0.6, 0.7),
        (FirstSample::Pseudocode, 0.6, 0.7),
        (FirstSample::InitK4, 1.2, 1.3),
    ] {
        let p = AlgorithmParams {
            first_sample: Some(rule),
            ..Default::default()
        };
        let mut a = Fasor::<flavor::Plain>::from_params("fasor", &p).unwrap();
        exchange(&mut a, 0, ack(0.4));
        assert!(close(a.fast_rto().rto, rto), "{rule:?}");
        let s: [f64; 1] = series(&mut a, &[0.0]);
        assert!(close(s[0], next), "{rule:?}: {s:?}");
    }
    // The default is the draft text.
    assert_eq!(
        Fasor::<flavor::Plain>::default().first_sample,
        FirstSample::Draft
    );
}

#[test]
fn slow_variant_series() {
    let mut a = FasorSlow::default();
    exchange(&mut a, 0, ack(0.4));
    exchange(&mut a, 1, ack(2.0)); // SlowRTO 3.0 → SLOW
    assert_eq!(a.state(), State::Slow);
    // S = 3.0 + 0.1: S, 2S, 4S, 8S, 16S (capped).
    let s: [f64; 5] = series(&mut a, &[0.0, 0.0]);
    assert!(all_close(&s, &[3.1, 6.2, 12.4, 24.8, 49.6]), "{s:?}");
    exchange(&mut a, 2, ack(2.0));
    assert_eq!(a.state(), State::Slow);
    exchange(&mut a, 0, ack(0.4));
    assert_eq!(a.state(), State::Fast);
    let s: [f64; 2] = series(&mut a, &[0.0]);
    assert!(all_close(&s, &[0.55 + 0.1, 1.3]), "{s:?}");
}

#[test]
fn fastslow_variant_series() {
    let mut a = FasorFastSlow::default();
    exchange(&mut a, 0, ack(0.4));
    exchange(&mut a, 1, ack(2.0)); // → FAST_SLOW, SlowRTO 3.0
    assert_eq!(a.state(), State::FastSlow);
    // F = 0.7, S = 3.1: F, S, 2S, 4S.
    let s: [f64; 4] = series(&mut a, &[0.0, 0.0]);
    assert!(all_close(&s, &[0.7, 3.1, 6.2, 12.4]), "{s:?}");
    exchange(&mut a, 1, ack(2.0)); // → SLOW
    assert_eq!(a.state(), State::Slow);
    let s: [f64; 3] = series(&mut a, &[0.0, 0.0]);
    assert!(all_close(&s, &[3.1, 6.2, 12.4]), "{s:?}");
    exchange(&mut a, 3, ack(2.0));
    assert_eq!(a.state(), State::Slow);
    exchange(&mut a, 0, ack(0.4));
    assert_eq!(a.state(), State::Fast);
}

#[test]
fn plain_fasor_ignores_echoes() {
    let mut a = Fasor::<flavor::Plain>::default();
    assert_eq!(a.marking(), Marking::None);
    exchange(&mut a, 2, echoed(3.0, 0, 3.0));
    assert_eq!(a.state(), State::FastSlowFast);
    assert!(!a.fast_rto().sampled);
    assert_eq!(a.spurious_detected(), 0);
}

#[test]
fn token_echo_of_the_last_copy_is_a_precise_unambiguous_sample() {
    let mut a = FasorToken::default();
    assert_eq!(a.marking(), Marking::Token);
    // Two retransmissions, the second one answered after 0.3 s: losses repaired.
    exchange(&mut a, 2, echoed(7.0, 2, 0.3));
    assert_eq!(a.state(), State::Fast);
    assert!(close(a.fast_rto().rto, 0.45), "first sample 0.3 → 1.5·0.3");
    assert_eq!(a.spurious_detected(), 0);
    // F = FastRTO + U(SRTT/4, SRTT) = 0.45 + 0.075 = 0.525 with dither 0.
    let s: [f64; 2] = series(&mut a, &[0.0]);
    assert!(all_close(&s, &[0.525, 1.05]), "{s:?}");
}

#[test]
fn token_echo_of_an_earlier_copy_is_spurious() {
    // Thesis §7.3: the token makes "all samples unambiguous": an echo of an
    // earlier copy is a precise sample like any other (FastRTO updated, state
    // FAST, no SlowRTO); it is only counted as a spurious retransmission.
    let mut a = FasorToken::default();
    // Draft first-sample rule, R = 0.4: SRTT 0.4, RTTVAR 0.4/8 = 0.05,
    // FastRTO = 0.4 + 4·0.05 = 0.6.
    exchange(&mut a, 0, echoed(0.4, 0, 0.4));
    assert!(close(a.fast_rto().rto, 0.6));
    // Retransmitted twice, but the original was answered after 3.0 s (RFC
    // 6298: RTTVAR first, against the old SRTT):
    // RTTVAR = 0.75·0.05 + 0.25·|0.4 − 3| = 0.0375 + 0.65 = 0.6875,
    // SRTT = 0.875·0.4 + 0.125·3 = 0.35 + 0.375 = 0.725,
    // FastRTO = 0.725 + 4·0.6875 = 3.475.
    exchange(&mut a, 2, echoed(3.0, 0, 3.0));
    assert_eq!(a.spurious_detected(), 1);
    assert_eq!(a.state(), State::Fast);
    assert_eq!(a.slow_rto(), 0.0, "no SlowRTO from a precise sample");
    assert!(close(a.fast_rto().rto, 3.475));
    // Answered copy 1 of 3 after 2.0 s: spurious again, still FAST;
    // RTTVAR = 0.75·0.6875 + 0.25·|0.725 − 2| = 0.515625 + 0.31875 = 0.834375,
    // SRTT = 0.875·0.725 + 0.25 = 0.884375, FastRTO = 0.884375 + 3.3375 = 4.221875.
    exchange(&mut a, 2, echoed(4.0, 1, 2.0));
    assert_eq!(a.spurious_detected(), 2);
    assert_eq!(a.state(), State::Fast);
    assert!(close(a.fast_rto().rto, 4.221875), "{}", a.fast_rto().rto);
    // The next series is FAST from FastRTO itself (no max with the last
    // sample): F = 4.221875 + 0.884375/4 = 4.44296875, then 2F, 4F.
    let s: [f64; 3] = series(&mut a, &[0.0]);
    assert!(all_close(&s, &[4.44296875, 8.8859375, 17.771875]), "{s:?}");
}

#[test]
fn token_without_echo_falls_back_to_karn() {
    // An Empty ACK carries no token: no echo.
    let mut a = FasorToken::default();
    exchange(
        &mut a,
        1,
        Ack {
            piggybacked: false,
            ..ack(1.0)
        },
    );
    assert_eq!(a.state(), State::FastSlowFast);
    assert!(close(a.slow_rto(), 1.5));
    exchange(
        &mut a,
        0,
        Ack {
            piggybacked: false,
            ..ack(0.4)
        },
    );
    assert_eq!(a.state(), State::Fast);
    assert!(close(a.fast_rto().rto, 0.6));
}

#[test]
fn option_probes_until_the_first_piggybacked_response() {
    let mut a = FasorOption::default();
    assert_eq!(a.marking(), Marking::RexmitCount { probe: true });
    // An Empty ACK tells nothing about support: keep probing.
    exchange(
        &mut a,
        0,
        Ack {
            piggybacked: false,
            ..ack(0.4)
        },
    );
    assert_eq!(a.support(), Support::Unknown);
    assert_eq!(a.marking(), Marking::RexmitCount { probe: true });
    // A piggybacked response with the echo: supported, stop probing.
    exchange(&mut a, 1, echoed(1.0, 1, 0.5));
    assert_eq!(a.support(), Support::Yes);
    assert_eq!(a.marking(), Marking::RexmitCount { probe: false });
    assert_eq!(a.state(), State::Fast);
    // Later piggybacked responses don't change the verdict.
    exchange(&mut a, 0, ack(0.4));
    assert_eq!(a.support(), Support::Yes);
}

#[test]
fn option_spurious_detection() {
    let mut a = FasorOption::default();
    exchange(&mut a, 0, echoed(0.4, 0, 0.4)); // FastRTO 0.6, support confirmed
    assert_eq!(a.support(), Support::Yes);
    // The original answered after one retransmission: precise sample 3.0,
    // FastRTO 3.475 (as in `token_echo_of_an_earlier_copy_is_spurious`), FAST.
    exchange(&mut a, 1, echoed(3.0, 0, 3.0));
    assert_eq!(a.spurious_detected(), 1);
    assert_eq!(a.state(), State::Fast);
    assert!(close(a.fast_rto().rto, 3.475));
}

#[test]
fn option_less_response_answers_the_original_once_support_is_known() {
    // Thesis §7.3: "From this point on messages missing the option are
    // inferred as original transmissions."
    let mut a = FasorOption::default();
    exchange(&mut a, 0, echoed(0.4, 0, 0.4)); // FastRTO 0.6, SRTT 0.4
                                              // A piggybacked response without the option after one retransmission:
                                              // the original's, RTT = E = 3.0 → FastRTO 3.475, FAST, spurious.
    exchange(&mut a, 1, ack(3.0));
    assert_eq!(a.state(), State::Fast);
    assert!(close(a.fast_rto().rto, 3.475));
    assert_eq!(a.spurious_detected(), 1);
    // An Empty ACK never carries the option: Karn's rule, SlowRTO 1.5·2 = 3.
    exchange(
        &mut a,
        1,
        Ack {
            piggybacked: false,
            ..ack(2.0)
        },
    );
    assert_eq!(a.state(), State::FastSlowFast);
    assert!(close(a.slow_rto(), 3.0));
}

#[test]
fn option_falls_back_to_plain_fasor_without_echo() {
    let mut a = FasorOption::default();
    assert_eq!(a.marking(), Marking::RexmitCount { probe: true });
    // First exchange, U = 0.25: F = 2 + (2/3)/4 + 0.25·(2/3 − 1/6) = 2 + 1/6
    // + 1/8 = 2.291667; one expiry: 2F = 4.583333.
    let mut r = Scripted::new(&[0.25]);
    let mut ex = a.start(0.0, 0, &mut r);
    assert!(close(ex.current, 2.0 + 1.0 / 6.0 + 0.125));
    a.expire(1.0, &mut ex, &mut r);
    assert!(close(ex.current, 2.0 * (2.0 + 1.0 / 6.0 + 0.125)));
    // The first piggybacked response lacks the echo: no support; this ACK
    // is ambiguous (n = 1): SlowRTO = 1.5·2.0 = 3.0, → FAST_SLOW_FAST.
    a.on_ack(&ex, &ack(2.0));
    assert_eq!(a.support(), Support::No);
    assert_eq!(a.marking(), Marking::None);
    assert_eq!(a.state(), State::FastSlowFast);
    assert!(close(a.slow_rto(), 3.0));
    // From now on echoes are ignored (Karn's rule, plain FASOR):
    // n = 0, E = 0.4 (echo ignored): FastRTO 0.6 (draft first sample), FAST.
    exchange(&mut a, 0, echoed(0.4, 0, 0.4));
    assert_eq!(a.state(), State::Fast);
    assert!(close(a.fast_rto().rto, 0.6));
    // n = 2, E = 3.0, an echo of copy 0 ignored: SlowRTO 4.5, FAST_SLOW_FAST,
    // FastRTO untouched, nothing counted as spurious.
    exchange(&mut a, 2, echoed(3.0, 0, 3.0));
    assert_eq!(a.state(), State::FastSlowFast);
    assert!(close(a.slow_rto(), 4.5) && close(a.fast_rto().rto, 0.6));
    // n = 1, E = 0.9, no echo: SlowRTO 1.35, SLOW_FAST.
    exchange(&mut a, 1, ack(0.9));
    assert_eq!(a.state(), State::SlowFast);
    assert!(close(a.slow_rto(), 1.35));
    assert_eq!(a.spurious_detected(), 0);
    // SLOW_FAST series, dithers U = 0 (SRTT/4 = 0.1): S = 1.35 + 0.1 = 1.45,
    // then F = 0.6 + 0.1 = 0.7, 1.4, 2.8.
    let s: [f64; 4] = series(&mut a, &[0.0]);
    assert!(all_close(&s, &[1.45, 0.7, 1.4, 2.8]), "{s:?}");
}

#[test]
fn reset_returns_to_a_fresh_value_but_keeps_the_spurious_count() {
    let p = AlgorithmParams {
        first_sample: Some(FirstSample::InitK4),
        cap: Some(30.0),
        ..Default::default()
    };
    let fresh = FasorOption::from_params("fasor-option", &p).unwrap();
    let mut a = fresh.clone();
    exchange(&mut a, 0, echoed(0.4, 0, 0.4));
    exchange(&mut a, 2, echoed(3.0, 0, 3.0));
    assert_ne!(a, fresh);
    a.reset();
    assert_eq!(a.spurious_detected(), 1);
    let mut expect = fresh.clone();
    expect.spurious = 1;
    assert_eq!(a, expect);
    // Same inputs, same outputs as the fresh value.
    let mut f2 = fresh.clone();
    let s1: [f64; 4] = series(&mut a, &[0.4]);
    let s2: [f64; 4] = series(&mut f2, &[0.4]);
    assert_eq!(s1, s2);
}

#[test]
fn nstart_above_one_uses_each_exchange_snapshot() {
    let mut a = Fasor::<flavor::Plain>::default();
    exchange(&mut a, 0, ack(0.4));
    let mut r = Scripted::new(&[0.0]);
    let mut first = a.start(0.0, 0, &mut r); // FAST, F = 0.7
                                             // A different exchange completes ambiguously meanwhile.
    exchange(&mut a, 1, ack(2.0));
    a.expire(1.0, &mut first, &mut r);
    assert!(
        close(first.current, 1.4),
        "still the FAST series it started with"
    );
}

#[test]
fn degenerate_samples_keep_timers_positive() {
    let mut a = Fasor::<flavor::Plain>::default();
    exchange(&mut a, 0, ack(0.0));
    exchange(&mut a, 1, ack(-1.0));
    let s: [f64; 3] = series(&mut a, &[0.0]);
    assert!(s.iter().all(|t| t.is_finite() && *t > 0.0), "{s:?}");
    exchange(&mut a, 0, ack(f64::INFINITY));
    let s: [f64; 3] = series(&mut a, &[0.0]);
    assert!(
        s.iter().all(|t| t.is_finite() && *t > 0.0 && *t <= 60.0),
        "{s:?}"
    );
}

/// Random event sequences over every flavour: timers stay finite, positive and
/// within the cap, and the same inputs give the same outputs.
fn random_walk<V: Flavor>(seed: u64) -> ([f64; 64], u64) {
    use crate::testutil::Mix;
    let mut a = Fasor::<V>::default();
    let mut ev = Mix(seed);
    let mut rng = Mix(seed ^ 0x5555);
    let mut trace = [0.0; 64];
    let mut k = 0;
    let mut now = 0.0;
    for round in 0..200 {
        let mut ex = a.start(now, 0, &mut rng);
        let n = (ev.uniform() * 8.0) as u8;
        for _ in 0..n {
            a.expire(now, &mut ex, &mut rng);
        }
        for t in [ex.initial, ex.current] {
            assert!(t.is_finite() && t > 0.0 && t <= CAP, "{t}");
        }
        if k < trace.len() {
            trace[k] = ex.current;
            k += 1;
        }
        now += ev.uniform() * 100.0;
        let e = ev.uniform() * 20.0;
        let echo = (ev.uniform() < 0.5).then(|| Echo {
            ordinal: (ev.uniform() * f64::from(n + 1)) as u8,
            rtt: e * ev.uniform(),
        });
        match round % 7 {
            6 => a.on_failure(now, &ex),
            5 => a.reset(),
            _ => a.on_ack(
                &ex,
                &Ack {
                    now,
                    elapsed: e,
                    echo,
                    piggybacked: ev.uniform() < 0.7,
                },
            ),
        }
    }
    (trace, a.spurious_detected())
}

#[test]
fn random_walks_are_bounded_and_deterministic() {
    for seed in 1..20 {
        assert_eq!(
            random_walk::<flavor::Plain>(seed),
            random_walk::<flavor::Plain>(seed)
        );
        assert_eq!(
            random_walk::<flavor::Token>(seed),
            random_walk::<flavor::Token>(seed)
        );
        random_walk::<flavor::Slow>(seed);
        random_walk::<flavor::FastSlow>(seed);
        random_walk::<flavor::RexmitCnt>(seed);
        assert_eq!(random_walk::<flavor::Plain>(seed).1, 0);
    }
    assert!(
        (1..20)
            .map(|s| random_walk::<flavor::Token>(s).1)
            .sum::<u64>()
            > 0
    );
}
