//! Printing results: a plain-text table per algorithm (the JSON document is
//! every network's, [`crate::networks::run_json`]).

use std::fmt::Write;

use coapcc_sim::dumbbell::Scenario;
use coapcc_sim::observe_metrics::ObserveSummary;
use coapcc_sim::transfer_metrics::TransferSummary;
use coapcc_sim::{Percentiles, RunResult, Summary};
use serde::Serialize;

fn row(out: &mut String, name: &str, p: &Percentiles, decimals: usize) {
    let _ = write!(out, "  {name:<22}");
    for v in [p.min, p.p10, p.p25, p.p50, p.p75, p.p90, p.max] {
        let _ = write!(out, "{v:>10.decimals$}");
    }
    out.push('\n');
}

/// A human-readable table per algorithm, under a line describing the scenario.
pub fn table(scenario: &Scenario, summaries: &[Summary]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} — {} clients, {} workload, buffer {}, link errors {}, {} replication(s), seed {}{}",
        if scenario.name.is_empty() {
            "scenario"
        } else {
            &scenario.name
        },
        scenario.clients,
        scenario.workload.describe(),
        scenario.network.buffer.label(),
        scenario.network.errors.name(),
        scenario.replications,
        scenario.seed,
        nstart(scenario)
    );
    out.push_str(&summary_tables(summaries));
    out
}

/// `, NSTART k` when a client keeps more than one exchange outstanding.
fn nstart(scenario: &Scenario) -> String {
    match scenario.coap.nstart {
        1 => String::new(),
        k => format!(", NSTART {k}"),
    }
}

/// The rows of an observing group: what became of the resource's changes
/// at the observers, their delays and the age of the observers' views.
fn observe_rows(out: &mut String, o: &ObserveSummary) {
    row(out, "notification delay (s)", &o.delay, 3);
    row(out, "mean age of view (s)", &o.age, 3);
    let share = |n: u64| 100.0 * n as f64 / o.generated.max(1) as f64;
    let _ = writeln!(
        out,
        "  changes                 {} generated: {} delivered ({:.1}%), {} superseded ({:.1}%), {} lost ({:.1}%); {} discarded as older",
        o.generated,
        o.delivered,
        share(o.delivered),
        o.superseded,
        share(o.superseded),
        o.lost,
        share(o.lost),
        o.discarded
    );
    let _ = writeln!(
        out,
        "  notifications sent      {} confirmable, {} non-confirmable; {} re-registrations",
        o.confirmable, o.non_confirmable, o.reregistrations
    );
}

/// The rows of a block-wise group: its transfers' completion times and
/// goodput.
fn transfer_rows(out: &mut String, t: &TransferSummary) {
    row(out, "transfer time (s)", &t.completion, 3);
    row(out, "goodput (bit/s)", &t.goodput, 0);
    let _ = writeln!(
        out,
        "  transfers               {} completed, {} failed",
        t.completed, t.failed
    );
}

/// The per-algorithm tables alone.
pub fn summary_tables(summaries: &[Summary]) -> String {
    let mut out = String::new();
    for s in summaries {
        client_rows(&mut out, s);
        if let Some(o) = &s.observe {
            observe_rows(&mut out, o);
        }
        if let Some(t) = &s.transfers {
            transfer_rows(&mut out, t);
        }
        let d = &s.drops;
        let _ = writeln!(
            out,
            "  drops                   buffer up {} / down {}, link errors up {} / down {}",
            d.buffer_up, d.buffer_down, d.error_up, d.error_down
        );
        let _ = writeln!(
            out,
            "  bottleneck utilisation  up {:.1}% / down {:.1}%; unnecessary copies up {:.1}% / down {:.1}% of bytes",
            100.0 * s.utilisation_up,
            100.0 * s.utilisation_down,
            100.0 * s.unnecessary_share_up,
            100.0 * s.unnecessary_share_down
        );
        let _ = writeln!(
            out,
            "  mean RTT {:.3} s; failed exchanges {}; unfinished clients {}",
            s.mean_rtt, s.failed_exchanges, s.unfinished_clients
        );
    }
    out
}

/// The tables of a load generator (`coapcc load`): what its clients measure
/// (FCT, unnecessary retransmissions, timers, transmissions, RTT, failures,
/// responses with another token), without the bottleneck's drops,
/// utilisation and unnecessary share, which only a network element sees.
pub fn load_tables(summaries: &[Summary]) -> String {
    let mut out = String::new();
    for s in summaries {
        client_rows(&mut out, s);
        let _ = writeln!(
            out,
            "  mean RTT {:.3} s; failed exchanges {}; unfinished clients {}; responses with another token {}",
            s.mean_rtt, s.failed_exchanges, s.unfinished_clients, s.mismatched_responses
        );
    }
    out
}

/// `coapcc load`'s tables over coap+tcp: the FCT row and the exchange
/// counts; CoAP sends each request once over TCP, so the rows of CoAP
/// retransmissions are replaced by a line saying so.
pub fn tcp_load_tables(summaries: &[Summary]) -> String {
    let mut out = String::new();
    for s in summaries {
        let _ = writeln!(out, "\n{}  ({} clients summarised)", s.label, s.clients);
        let _ = writeln!(
            out,
            "  {:<22}{:>10}{:>10}{:>10}{:>10}{:>10}{:>10}{:>10}",
            "", "min", "p10", "p25", "median", "p75", "p90", "max"
        );
        row(&mut out, "FCT (s)", &s.fct, 3);
        let _ = writeln!(
            out,
            "  unnecessary rexmits, timers, transmissions/exchange: not at the CoAP layer over TCP"
        );
        let (conns, broken) = s
            .tcp
            .as_ref()
            .map_or((0, 0), |t| (t.connections, t.aborted));
        let _ = writeln!(
            out,
            "  mean RTT {:.3} s; failed exchanges {}; unfinished clients {}; connections opened {}, broken or refused {}",
            s.mean_rtt, s.failed_exchanges, s.unfinished_clients, conns, broken
        );
    }
    out
}

/// The keys of a [`Summary`] that only the bottleneck measures.
pub const NETWORK_KEYS: [&str; 5] = [
    "drops",
    "utilisation_up",
    "utilisation_down",
    "unnecessary_share_up",
    "unnecessary_share_down",
];

/// The rows every client measures: FCT, unnecessary retransmissions, the
/// largest expired timer and exchanges by retransmissions (`n:count` = count
/// exchanges completed after n retransmissions).
fn client_rows(out: &mut String, s: &Summary) {
    let _ = writeln!(out, "\n{}  ({} clients summarised)", s.label, s.clients);
    let _ = writeln!(
        out,
        "  {:<22}{:>10}{:>10}{:>10}{:>10}{:>10}{:>10}{:>10}",
        "", "min", "p10", "p25", "median", "p75", "p90", "max"
    );
    row(out, "FCT (s)", &s.fct, 3);
    row(out, "unnecessary rexmits", &s.unnecessary, 1);
    row(out, "largest expired timer", &s.max_expired_timer, 2);
    let total: u64 = s.retransmissions_per_exchange.iter().sum();
    let _ = write!(out, "  retransmissions/exchange");
    for (i, n) in s.retransmissions_per_exchange.iter().enumerate() {
        if *n > 0 {
            let pct = 100.0 * *n as f64 / total.max(1) as f64;
            let _ = write!(out, "  {i}:{n} ({pct:.1}%)");
        }
    }
    out.push('\n');
}

/// A Markdown table, one row per algorithm: FCT percentiles, unnecessary
/// retransmissions per client, and the share of exchanges that needed
/// retransmissions.
pub fn markdown(scenario: &Scenario, summaries: &[Summary]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} clients, {} workload, buffer {}, link errors {}, {} replication(s), seed {}{}\n",
        scenario.clients,
        scenario.workload.describe(),
        scenario.network.buffer.label(),
        scenario.network.errors.name(),
        scenario.replications,
        scenario.seed,
        nstart(scenario)
    );
    let _ = writeln!(
        out,
        "| algorithm | FCT p10 | p25 | median | p75 | p90 | max | unnecessary/client median | p90 | max | exchanges retransmitted | failed |"
    );
    let _ = writeln!(
        out,
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    );
    for s in summaries {
        let total: u64 = s.retransmissions_per_exchange.iter().sum();
        let retransmitted = total - s.retransmissions_per_exchange.first().copied().unwrap_or(0);
        let f = &s.fct;
        let u = &s.unnecessary;
        let _ = writeln!(
            out,
            "| {} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.0} | {:.1}% | {} |",
            s.label,
            f.p10,
            f.p25,
            f.p50,
            f.p75,
            f.p90,
            f.max,
            u.p50,
            u.p90,
            u.max,
            100.0 * retransmitted as f64 / total.max(1) as f64,
            s.failed_exchanges
        );
    }
    markdown_workloads(&mut out, summaries);
    out
}

/// The Markdown tables of observing and block-wise groups, after the main
/// one.
fn markdown_workloads(out: &mut String, summaries: &[Summary]) {
    let observers: Vec<_> = summaries
        .iter()
        .filter_map(|s| s.observe.as_ref().map(|o| (&s.label, o)))
        .collect();
    if !observers.is_empty() {
        let _ = writeln!(
            out,
            "\n| algorithm | delivered | superseded | lost | delay median (s) | p90 | max | mean age median (s) |"
        );
        let _ = writeln!(out, "| --- | --- | --- | --- | --- | --- | --- | --- |");
        for (label, o) in observers {
            let pct = |n: u64| 100.0 * n as f64 / o.generated.max(1) as f64;
            let _ = writeln!(
                out,
                "| {label} | {:.1}% | {:.1}% | {:.1}% | {:.3} | {:.3} | {:.3} | {:.3} |",
                pct(o.delivered),
                pct(o.superseded),
                pct(o.lost),
                o.delay.p50,
                o.delay.p90,
                o.delay.max,
                o.age.p50
            );
        }
    }
    let transfers: Vec<_> = summaries
        .iter()
        .filter_map(|s| s.transfers.as_ref().map(|t| (&s.label, t)))
        .collect();
    if !transfers.is_empty() {
        let _ = writeln!(
            out,
            "\n| algorithm | transfers | failed | time median (s) | p90 | max | goodput median (bit/s) |"
        );
        let _ = writeln!(out, "| --- | --- | --- | --- | --- | --- | --- |");
        for (label, t) in transfers {
            let c = &t.completion;
            let _ = writeln!(
                out,
                "| {label} | {} | {} | {:.3} | {:.3} | {:.3} | {:.0} |",
                t.completed, t.failed, c.p50, c.p90, c.max, t.goodput.p50
            );
        }
    }
}

#[derive(Serialize)]
struct HistogramRow<'a> {
    algorithm: &'a str,
    replication: usize,
    group: usize,
    retransmissions: usize,
    exchanges: u64,
}

/// The retransmissions histogram of every replication, one row per bin
/// ([`crate::api::Outcome::histograms`]).
pub fn histograms(scenario: &Scenario, runs: &[Vec<RunResult>]) -> String {
    let mut rows = Vec::new();
    for (alg, runs) in scenario.algorithms.iter().zip(runs) {
        for (replication, run) in runs.iter().enumerate() {
            for (group, h) in run.histograms.iter().enumerate() {
                for (retransmissions, &exchanges) in h.iter().enumerate() {
                    rows.push(HistogramRow {
                        algorithm: alg.label(),
                        replication,
                        group,
                        retransmissions,
                        exchanges,
                    });
                }
            }
        }
    }
    serde_json::to_string(&rows).expect("histograms serialise")
}
