//! Property tests over **every** entry of the registry (spec `docs/spec/algorithms-spec.md` §8):
//! random sequences of events — exchange starts (with NSTART > 1), expiries,
//! acknowledgements after any number of retransmissions, with and without
//! echoed transmission marks, failures, time jumps and resets — driven the way
//! the messaging layer drives an algorithm (MAX_RETRANSMIT = 20, send times
//! tracked per transmission).
//!
//! Checked for each algorithm and each accepted parameter set:
//! - every timer is finite and positive, and within the algorithm's bound when
//!   the spec fixes one ([`bound`]; initial and backed-off timers separately);
//! - `start` returns `initial == current` and no retransmission; `expire` adds
//!   exactly one retransmission;
//! - nothing panics;
//! - the same inputs give the same outputs (bit for bit);
//! - after `reset`, the algorithm behaves exactly like a freshly built one.

use coapcc_rto::registry::{AlgorithmInfo, BoxedAlgorithm, ALGORITHMS};
use coapcc_rto::{
    AboveTruncation, Ack, AlgorithmParams, Echo, ExchangeTimer, FirstSample, Marking, Random,
    Smoothing,
};
use proptest::prelude::*;

/// The messaging layer's MAX_RETRANSMIT in the published evaluations.
const MAX_RETRANSMIT: u8 = 20;

/// Which timer of an exchange is checked.
#[derive(Clone, Copy, PartialEq)]
enum Timer {
    Initial,
    BackedOff,
}

/// The largest timer an algorithm may arm with the parameter sets below, where
/// the sources fix one, given `r_max`, the longest elapsed time any
/// acknowledgement has carried so far; `None` = no bound (only finiteness and
/// positivity are checked).
fn bound(name: &str, timer: Timer, r_max: f64) -> Option<f64> {
    match (name, timer) {
        // Default CoAP and its Full Backoff variants: cap 60 (§1, §2).
        ("default" | "default-fb1" | "default-fb2", _) => Some(60.0),
        // CoCoA (§3.1, §3.2): the overall RTO has no cap (thesis §3.3:
        // "The RTO estimator can have values larger than 32 seconds and that
        // is not limited"), but it is bounded by the samples. Every sample
        // R ≤ r_max; RFC 6298 keeps SRTT a weighted mean of samples, so
        // 0 ≤ SRTT ≤ r_max and |SRTT − R| ≤ r_max, and RTTVAR (R/2 first, then
        // a weighted mean of its old value and |SRTT − R|) ≤ r_max. Hence
        // E_s = SRTT + 4·RTTVAR ≤ 5·r_max and E_w = SRTT + RTTVAR ≤ 2·r_max.
        // The overall RTO is a weighted mean of its old value (2 at first)
        // and E, so RTO ≤ max(2, 5·r_max); aging only moves an RTO toward
        // [1, 3] (doubling one below 1 gives < 2; 1 + RTO/2 < RTO above 2).
        // The blind RTO of k parallel exchanges is min(2·k, 60). Dithered by
        // up to ×1.5: initial ≤ 1.5·max(60, 5·r_max). Backoff: t ↦ max(t,
        // min(t·VBF, 32)), never above max(initial, 32); FB1 re-arms such a
        // timer and FB2 backs off max(initial, RTO) the same way (§3.2), so
        // the same bound holds for their initial timers.
        ("cocoa" | "cocoa-fb1" | "cocoa-fb2", _) => Some(1.5 * f64::max(60.0, 5.0 * r_max)),
        // CoCoA+ and the algorithms of the pCoCoA paper that back off as it
        // does (§3.3, §3.5, §3.6, §4): only the initial RTO is capped (60 s,
        // paper §V.F); backed-off timers grow uncapped up to the overflow guard
        // (10¹⁰ s, `cocoa_plus::BACKOFF_CEILING`), which MAX_RETRANSMIT = 20
        // backoffs from an initial timer ≤ 60 s never reach. The largest such
        // timer: initial just below 1 s, ×3 twenty times, < 3^20 =
        // 3 486 784 401 s < 3.5·10⁹ (from [1, 3] s: ≤ 3·2^20 ≈ 3.1·10⁶; from
        // (3, 60] s: ≤ 60·1.5^20 ≈ 2.0·10⁵).
        // CoCoA-S is built on CoCoA+ (§3.4, Table I of the pCoCoA paper).
        ("cocoa-plus" | "cocoa-s" | "cocoa-e" | "4-state-strong" | "pcocoa", Timer::Initial) => {
            Some(60.0)
        }
        ("cocoa-plus" | "cocoa-s" | "cocoa-e" | "4-state-strong" | "pcocoa", Timer::BackedOff) => {
            Some(3.5e9)
        }
        // FASOR: every value capped at 60 (§6.4–6.6).
        (n, _) if n.starts_with("fasor") => Some(60.0),
        _ => None,
    }
}

/// Parameter sets tried on every algorithm; those an algorithm rejects are
/// skipped (the default set is accepted by all, see the registry's own test).
fn param_sets() -> [AlgorithmParams; 6] {
    [
        AlgorithmParams::default(),
        AlgorithmParams {
            smoothing: Some(Smoothing::Dithered),
            ..Default::default()
        },
        AlgorithmParams {
            above_truncation: Some(AboveTruncation::Truncate),
            ..Default::default()
        },
        AlgorithmParams {
            aging: Some(false),
            ..Default::default()
        },
        AlgorithmParams {
            first_sample: Some(FirstSample::InitK4),
            ..Default::default()
        },
        AlgorithmParams {
            first_sample: Some(FirstSample::Pseudocode),
            ..Default::default()
        },
    ]
}

/// SplitMix64 as the algorithms' random source.
struct Mix(u64);
impl Random for Mix {
    fn uniform(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// One event of a script. Indices pick an outstanding exchange modulo their count.
#[derive(Clone, Debug)]
enum Event {
    /// Time passes.
    Advance(f64),
    /// A new exchange is sent now.
    Start,
    /// The timer of an exchange fires (time moves to its expiry).
    Expire(usize),
    /// The first acknowledgement of an exchange arrives after `delay`.
    Ack {
        pick: usize,
        delay: f64,
        /// Whether the peer echoes the mark (when the exchange was marked).
        echo: bool,
        /// Which copy is answered (modulo the copies sent).
        copy: u8,
        piggybacked: bool,
    },
    /// The exchange is abandoned (RST).
    Fail(usize),
    /// The client starts a new batch.
    Reset,
}

fn event() -> impl Strategy<Value = Event> {
    prop_oneof![
        2 => prop_oneof![0.0..2.0f64, 0.0..3000.0f64].prop_map(Event::Advance),
        3 => Just(Event::Start),
        6 => any::<usize>().prop_map(Event::Expire),
        4 => (any::<usize>(), prop_oneof![0.0..0.5f64, 0.0..40.0f64], any::<bool>(), any::<u8>(), any::<bool>())
            .prop_map(|(pick, delay, echo, copy, piggybacked)| Event::Ack { pick, delay, echo, copy, piggybacked }),
        1 => any::<usize>().prop_map(Event::Fail),
        1 => Just(Event::Reset),
    ]
}

fn marking_code(m: Marking) -> u64 {
    match m {
        Marking::None => 1000,
        Marking::TransmissionCounter => 1001,
        Marking::RexmitCount { probe } => 1002 + probe as u64,
        Marking::Token => 1004,
    }
}

struct Outstanding {
    ex: ExchangeTimer,
    marking: Marking,
    sends: Vec<f64>,
}

/// Drives `alg` through `events`, checking the invariants; returns the trace of
/// everything the algorithm produced (timers as bits, markings).
fn run(info: &AlgorithmInfo, alg: &mut BoxedAlgorithm, events: &[Event], seed: u64) -> Vec<u64> {
    let name = info.name;
    let check = |t: f64, timer: Timer, r_max: f64| {
        let what = match timer {
            Timer::Initial => "initial",
            Timer::BackedOff => "backed-off",
        };
        assert!(
            t.is_finite() && t > 0.0,
            "{name}: {what} timer {t} not finite and positive"
        );
        if let Some(b) = bound(name, timer, r_max) {
            assert!(
                t <= b + 1e-9,
                "{name}: {what} timer {t} above the bound {b}"
            );
        }
    };
    let mut rng = Mix(seed);
    let mut now = 0.0f64;
    let mut r_max = 0.0f64;
    let mut out: Vec<Outstanding> = Vec::new();
    let mut trace = Vec::new();
    for e in events {
        match *e {
            Event::Advance(dt) => now += dt,
            Event::Start => {
                let marking = alg.marking();
                let ex = alg.start(now, out.len(), &mut rng);
                check(ex.initial, Timer::Initial, r_max);
                assert_eq!(
                    ex.initial.to_bits(),
                    ex.current.to_bits(),
                    "{name}: initial != current"
                );
                assert_eq!(ex.retransmissions, 0, "{name}: start with retransmissions");
                trace.push(ex.initial.to_bits());
                trace.push(marking_code(marking));
                out.push(Outstanding {
                    ex,
                    marking,
                    sends: vec![now],
                });
            }
            Event::Expire(pick) if !out.is_empty() => {
                let i = pick % out.len();
                let o = &mut out[i];
                now = now.max(o.sends[o.sends.len() - 1] + o.ex.current);
                if o.ex.retransmissions >= MAX_RETRANSMIT {
                    let o = out.swap_remove(i);
                    alg.on_failure(now, &o.ex);
                    continue;
                }
                let before = o.ex.retransmissions;
                alg.expire(now, &mut o.ex, &mut rng);
                assert_eq!(
                    o.ex.retransmissions,
                    before + 1,
                    "{name}: expire must count one retransmission"
                );
                check(o.ex.current, Timer::BackedOff, r_max);
                o.sends.push(now);
                trace.push(o.ex.current.to_bits());
            }
            Event::Ack {
                pick,
                delay,
                echo,
                copy,
                piggybacked,
            } if !out.is_empty() => {
                now += delay;
                let o = out.swap_remove(pick % out.len());
                let ordinal = copy % o.sends.len() as u8;
                let echo = (echo && o.marking != Marking::None).then(|| Echo {
                    ordinal,
                    rtt: now - o.sends[ordinal as usize],
                });
                r_max = r_max.max(now - o.sends[0]);
                let ack = Ack {
                    now,
                    elapsed: now - o.sends[0],
                    echo,
                    piggybacked,
                };
                let spurious = alg.spurious_detected();
                alg.on_ack(&o.ex, &ack);
                // The counter is a cumulative statistic: trace what this ACK added.
                trace.push(alg.spurious_detected().wrapping_sub(spurious));
            }
            Event::Fail(pick) if !out.is_empty() => {
                let o = out.swap_remove(pick % out.len());
                alg.on_failure(now, &o.ex);
            }
            Event::Reset => {
                alg.reset();
                out.clear();
                trace.push(u64::MAX);
            }
            _ => {}
        }
    }
    trace
}

/// Asserts two traces are equal, reporting the first difference only.
fn same(a: &[u64], b: &[u64], name: &str, what: &str) {
    if let Some(i) = a.iter().zip(b).position(|(x, y)| x != y) {
        panic!("{name}: {what}: trace item {i}: {:#x} vs {:#x}", a[i], b[i]);
    }
    assert_eq!(a.len(), b.len(), "{name}: {what}: trace lengths");
}

/// Runs `f` for every registry entry and every parameter set it accepts.
fn for_each_algorithm(mut f: impl FnMut(&AlgorithmInfo, &AlgorithmParams)) {
    for info in ALGORITHMS {
        for p in param_sets() {
            if (info.build)(&p).is_ok() {
                f(info, &p);
            }
        }
    }
}

fn build(info: &AlgorithmInfo, p: &AlgorithmParams) -> BoxedAlgorithm {
    (info.build)(p).expect("accepted above")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn timers_are_finite_positive_bounded_and_deterministic(
        events in prop::collection::vec(event(), 1..300),
        seed in any::<u64>(),
    ) {
        for_each_algorithm(|info, p| {
            let a = run(info, &mut build(info, p), &events, seed);
            let b = run(info, &mut build(info, p), &events, seed);
            same(&a, &b, info.name, "same inputs, different outputs");
        });
    }

    #[test]
    fn reset_behaves_like_a_fresh_algorithm(
        before in prop::collection::vec(event(), 0..150),
        after in prop::collection::vec(event(), 1..150),
        seed in any::<u64>(),
    ) {
        for_each_algorithm(|info, p| {
            let mut used = build(info, p);
            run(info, &mut used, &before, seed);
            used.reset();
            let fresh = build(info, p);
            assert_eq!(used.marking(), fresh.marking(), "{}: marking after reset", info.name);
            let a = run(info, &mut used, &after, seed ^ 1);
            let b = run(info, &mut build(info, p), &after, seed ^ 1);
            same(&a, &b, info.name, "after reset, behaviour differs from a fresh one");
        });
    }
}

/// A long run of congestion-like traffic per algorithm: many heavily
/// retransmitted exchanges, then a quiet period, then fast ones.
#[test]
fn long_runs_stay_within_bounds() {
    let mut gen = Mix(7);
    let mut events = Vec::new();
    for phase in 0..3 {
        for _ in 0..3000 {
            let u = gen.uniform();
            let e = match phase {
                // Congestion: most timers expire, ACKs are slow.
                0 if u < 0.6 => Event::Expire((gen.uniform() * 1e6) as usize),
                0 if u < 0.85 => Event::Start,
                0 => Event::Ack {
                    pick: (gen.uniform() * 1e6) as usize,
                    delay: gen.uniform() * 30.0,
                    echo: gen.uniform() < 0.5,
                    copy: (gen.uniform() * 255.0) as u8,
                    piggybacked: true,
                },
                // Idle: long silences between single exchanges.
                1 if u < 0.3 => Event::Advance(gen.uniform() * 5000.0),
                1 if u < 0.6 => Event::Start,
                1 => Event::Ack {
                    pick: 0,
                    delay: gen.uniform() * 0.2,
                    echo: true,
                    copy: 0,
                    piggybacked: false,
                },
                // Fast: stop-and-wait with tiny RTTs.
                _ if u < 0.5 => Event::Start,
                _ => Event::Ack {
                    pick: 0,
                    delay: gen.uniform() * 0.01,
                    echo: true,
                    copy: 0,
                    piggybacked: true,
                },
            };
            events.push(e);
        }
    }
    for_each_algorithm(|info, p| {
        run(info, &mut build(info, p), &events, 11);
    });
}

/// Says which entries have no spec bound (only finiteness is checked there).
#[test]
fn every_entry_is_exercised() {
    let mut unbounded = Vec::new();
    let mut count = 0;
    for_each_algorithm(|info, _| {
        count += 1;
        if bound(info.name, Timer::BackedOff, 0.0).is_none() && !unbounded.contains(&info.name) {
            unbounded.push(info.name);
        }
    });
    assert!(count >= ALGORITHMS.len());
    for a in ALGORITHMS {
        eprintln!(
            "{:<16} {:>4} B{}",
            a.name,
            a.state_bytes,
            if a.approximate { " (approximate)" } else { "" }
        );
    }
    eprintln!("property harness: {count} algorithm/parameter combinations; no spec bound for {unbounded:?}");
}
