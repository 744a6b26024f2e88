//! Measures the link-error process alone (spec `docs/spec/testbed-spec.md` §1.1): for each
//! profile and both truncation rules, the time share of the bad state, the mean
//! sojourns, the loss rate and the burst-length distribution seen by a stream
//! of probe packets, and how losses of packets a fixed time apart correlate
//! (a request and its response, an original and its retransmission).
//!
//! ```sh
//! cargo run --release -p coapcc-link --example error_profiles [SECONDS]
//! ```
//!
//! `SECONDS` is the simulated duration per row (default 200 000). The figures
//! are those of `docs/calibration.md` ("The link-error model").

use coapcc_link::errors::{ErrorProfile, LinkErrors, Truncation};
use coapcc_link::rng::{derive, Stream};
use coapcc_link::time::{from_secs, to_secs, Nanos};

/// Serialisation time of a 38-byte request at 60 kbit/s and of a 93-byte
/// response at 30 kbit/s: the closest two packets can follow each other.
const PROBES: [(&str, f64); 2] = [
    ("38 B up, 5.07 ms", 38.0 / 7500.0),
    ("93 B down, 24.8 ms", 93.0 / 3750.0),
];

/// Time from a request leaving the uplink serialiser to its response leaving
/// the downlink serialiser with empty buffers: 200 ms propagation, 2 × 15 ms
/// mean path delay, 24.8 ms serialisation of the response.
const EXCHANGE_LAG: f64 = 0.2548;

/// The burst lengths tabulated: 1, 2, 3, 4, 5–9, ≥ 10.
const BINS: usize = 6;

fn bin(len: u64) -> usize {
    match len {
        1..=4 => len as usize - 1,
        5..=9 => 4,
        _ => 5,
    }
}

struct Probe {
    sent: u64,
    lost: u64,
    bursts: [u64; BINS],
    burst_count: u64,
    burst_total: u64,
}

/// Probes one direction's process every `spacing` seconds for `secs` seconds.
fn probe(profile: ErrorProfile, rule: Truncation, spacing: f64, secs: f64, seed: u64) -> Probe {
    let mut e = LinkErrors::with_truncation(
        profile,
        rule,
        derive(seed, Stream::ErrorState, 0),
        derive(seed, Stream::ErrorLoss, 0),
    );
    let step = from_secs(spacing);
    let n = (secs / spacing) as u64;
    let mut p = Probe {
        sent: n,
        lost: 0,
        bursts: [0; BINS],
        burst_count: 0,
        burst_total: 0,
    };
    let mut run = 0u64;
    let close = |p: &mut Probe, run: u64| {
        if run > 0 {
            p.bursts[bin(run)] += 1;
            p.burst_count += 1;
            p.burst_total += run;
        }
    };
    for i in 1..=n {
        if e.loses(i * step) {
            p.lost += 1;
            run += 1;
        } else {
            close(&mut p, run);
            run = 0;
        }
    }
    close(&mut p, run);
    p
}

/// The probability that at least one of two packets `lag` seconds apart is
/// lost, the first on one process and the second on either an independent
/// process (`shared` false: the model's two directions) or the same one; and
/// the probability that the second is lost given that the first was.
fn pair(
    profile: ErrorProfile,
    rule: Truncation,
    lag: f64,
    shared: bool,
    secs: f64,
    seed: u64,
) -> (f64, f64) {
    let mk = |i: u64| {
        LinkErrors::with_truncation(
            profile,
            rule,
            derive(seed, Stream::ErrorState, i),
            derive(seed, Stream::ErrorLoss, i),
        )
    };
    let mut first = mk(0);
    let mut second = mk(1);
    // a pair starts 1.37 s after the previous one ended (no common period
    // with the sojourns; each process is only asked about later instants)
    let every: Nanos = from_secs(lag + 1.37);
    let n = (secs / (lag + 1.37)) as u64;
    let lag = from_secs(lag);
    let (mut either, mut both, mut first_lost) = (0u64, 0u64, 0u64);
    for i in 1..=n {
        let t = i * every;
        let a = first.loses(t);
        let b = if shared {
            first.loses(t + lag)
        } else {
            second.loses(t + lag)
        };
        either += u64::from(a || b);
        both += u64::from(a && b);
        first_lost += u64::from(a);
    }
    (
        either as f64 / n as f64,
        both as f64 / first_lost.max(1) as f64,
    )
}

fn main() {
    let secs: f64 = std::env::args()
        .nth(1)
        .map(|s| s.parse().expect("SECONDS: a number"))
        .unwrap_or(200_000.0);
    let rules = [(Truncation::Clamp, "clamp"), (Truncation::Redraw, "redraw")];
    let profiles = [ErrorProfile::Low, ErrorProfile::Medium, ErrorProfile::High];
    let published = |p: ErrorProfile| match p {
        ErrorProfile::Low => "2 %",
        ErrorProfile::Medium => "≈ 10 %",
        ErrorProfile::High => "≈ 18 %",
        ErrorProfile::None => "0",
    };

    println!("Simulated {secs} s per row; seed 1.\n");
    println!("## The state process\n");
    println!("| profile | truncation | published average | analytic average | bad-state time share | mean good / bad sojourn (s) | sojourns at the bounds, good lo / hi, bad lo / hi |");
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    for profile in profiles {
        for (rule, name) in rules {
            let mut e = LinkErrors::with_truncation(profile, rule, 1, 2);
            e.is_bad(from_secs(secs));
            let log = &e.sojourns;
            let (share, means, bounds) = if log.good.0 == 0 {
                ("—".to_string(), "—".to_string(), "—".to_string())
            } else {
                let g = to_secs(log.good.1);
                let b = to_secs(log.bad.1);
                let (ng, nb) = (log.good.0 as f64, log.bad.0 as f64);
                (
                    format!("{:.4}", b / (g + b)),
                    format!("{:.4} / {:.4}", g / ng, b / nb),
                    format!(
                        "{:.3} / {:.3}, {:.3} / {:.3}",
                        log.good_at_bounds.0 as f64 / ng,
                        log.good_at_bounds.1 as f64 / ng,
                        log.bad_at_bounds.0 as f64 / nb,
                        log.bad_at_bounds.1 as f64 / nb
                    ),
                )
            };
            println!(
                "| {} | {name} | {} | {:.2} % | {share} | {means} | {bounds} |",
                profile.name(),
                published(profile),
                100.0 * profile.average_loss_with(rule),
            );
        }
    }

    println!("\n## Probe packets back to back: loss rate and loss bursts\n");
    println!("A burst is a run of consecutive lost probes; shares of bursts by length.\n");
    println!(
        "| profile | truncation | probes | loss rate | mean burst | 1 | 2 | 3 | 4 | 5–9 | ≥ 10 |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    for profile in profiles {
        for (rule, name) in rules {
            for (label, spacing) in PROBES {
                let p = probe(profile, rule, spacing, secs, 1);
                let share = |k: usize| 100.0 * p.bursts[k] as f64 / p.burst_count as f64;
                println!(
                    "| {} | {name} | {label} | {:.2} % | {:.2} | {:.1} % | {:.1} % | {:.1} % | {:.1} % | {:.1} % | {:.1} % |",
                    profile.name(),
                    100.0 * p.lost as f64 / p.sent as f64,
                    p.burst_total as f64 / p.burst_count as f64,
                    share(0),
                    share(1),
                    share(2),
                    share(3),
                    share(4),
                    share(5)
                );
            }
        }
    }

    println!("\n## Packets a fixed time apart\n");
    println!(
        "Request and response: {EXCHANGE_LAG} s apart, on two independent processes (the model) \
         or on one process shared by both directions. Original and retransmission: 2 s apart \
         (ACK_TIMEOUT), same direction.\n"
    );
    println!("| profile | truncation | P(request or response lost), independent | same, shared process | P(retransmission lost given original lost) |");
    println!("| --- | --- | --- | --- | --- |");
    for profile in profiles {
        for (rule, name) in rules {
            let (ind, _) = pair(profile, rule, EXCHANGE_LAG, false, secs, 3);
            let (shared, _) = pair(profile, rule, EXCHANGE_LAG, true, secs, 3);
            let (_, again) = pair(profile, rule, 2.0, true, secs, 4);
            println!(
                "| {} | {name} | {:.4} | {:.4} | {:.4} |",
                profile.name(),
                ind,
                shared,
                again
            );
        }
    }
}
