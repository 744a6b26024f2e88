//! Printing the results of a star scenario (the lwIP evaluation's metrics,
//! spec `docs/spec/testbed-spec.md` §3): a table per TCP flavour, or one Markdown table (the
//! JSON document is every network's, [`crate::networks::run_json`]).

use std::fmt::Write;

use coapcc_sim::star;

use crate::networks::estimate_text as est;

/// The line describing the scenario.
pub fn header(s: &star::Scenario) -> String {
    let w = &s.workload;
    format!(
        "{} — {} stations around an 802.11 access point at {} Mbit/s, each writing {} bytes every {} s {} times over TCP (MSS {}), {} replication(s), seed {}",
        if s.name.is_empty() { "scenario" } else { &s.name },
        s.network.stations,
        s.network.rate_bps as f64 / 1e6,
        w.write_bytes,
        w.interval_s,
        w.writes,
        w.mss,
        s.replications,
        s.seed
    )
}

/// A table per TCP flavour.
pub fn table(scenario: &star::Scenario, summaries: &[star::Summary]) -> String {
    let mut out = header(scenario);
    out.push('\n');
    for s in summaries {
        let _ = writeln!(
            out,
            "\n{}  ({} replication(s); per run, mean ± 95 % confidence interval)",
            s.label, s.replications
        );
        let rows: [(&str, String); 12] = [
            ("offered load", format!("{:.0} bit/s", s.offered_bps)),
            (
                "goodput at the AP",
                format!("{} bit/s", est(&s.goodput_bps, 0)),
            ),
            ("stations done", est(&s.complete_stations, 1)),
            ("retransmitted segments", est(&s.retransmissions, 1)),
            ("retransmission timeouts", est(&s.timeouts, 1)),
            ("fast retransmits", est(&s.fast_retransmits, 1)),
            ("largest RTO", format!("{} s", est(&s.max_rto, 3))),
            (
                "largest expired RTO",
                format!("{} s", est(&s.max_expired_rto, 3)),
            ),
            ("802.11 collisions", est(&s.collisions, 1)),
            ("802.11 retries", est(&s.mac_retries, 1)),
            (
                "drops: queue / last retry",
                format!("{} / {}", est(&s.queue_drops, 1), est(&s.retry_drops, 1)),
            ),
            (
                "medium busy",
                format!("{:.1} %", 100.0 * s.utilisation.mean),
            ),
        ];
        for (name, value) in rows {
            let _ = writeln!(out, "  {name:<28}{value}");
        }
    }
    out
}

/// One Markdown table, a row per TCP flavour.
pub fn markdown(scenario: &star::Scenario, summaries: &[star::Summary]) -> String {
    let head = [
        "TCP",
        "goodput (bit/s)",
        "retransmitted segments",
        "timeouts",
        "fast retransmits",
        "largest RTO (s)",
        "802.11 collisions",
        "queue drops",
    ];
    let rows = summaries.iter().map(|s| {
        vec![
            s.label.clone(),
            est(&s.goodput_bps, 0),
            est(&s.retransmissions, 1),
            est(&s.timeouts, 1),
            est(&s.fast_retransmits, 1),
            est(&s.max_rto, 3),
            est(&s.collisions, 1),
            est(&s.queue_drops, 1),
        ]
    });
    crate::networks::markdown_table(&header(scenario), &head, rows)
}
