//! Printing the results of a LoRaWAN scenario: a table per algorithm, or
//! one Markdown table (the JSON document is every network's,
//! [`crate::networks::run_json`]).

use std::fmt::Write;

use coapcc_sim::lorawan;
use coapcc_sim::ScenarioResult;

use crate::networks::estimate_text as est;

/// The line describing the scenario.
pub fn header(s: &lorawan::Scenario) -> String {
    let (n, w, c) = (&s.network, &s.workload, &s.coap);
    format!(
        "{} — LoRaWAN class A, {} devices within {} m of one gateway, a {} every {} s, {} s after {} s warm-up, {}-byte requests, {}-byte response payloads, {} replication(s), seed {}",
        if s.name.is_empty() { "scenario" } else { &s.name },
        n.devices,
        n.radius_m,
        c.method.name(),
        w.period_s,
        w.duration_s,
        w.warmup_s,
        c.request_size,
        c.response_payload,
        s.replications,
        s.seed
    )
}

/// The drops of a summary as text: `cause mean` for every cause not zero.
fn drops_text(d: &std::collections::BTreeMap<String, coapcc_sim::metrics::Estimate>) -> String {
    let parts: Vec<String> = d
        .iter()
        .filter(|(_, e)| e.mean > 0.0)
        .map(|(k, e)| format!("{k} {}", est(e, 1)))
        .collect();
    if parts.is_empty() {
        "none".into()
    } else {
        parts.join(", ")
    }
}

/// A table per algorithm.
pub fn table(scenario: &lorawan::Scenario, result: &ScenarioResult<lorawan::Sim>) -> String {
    let mut out = header(scenario);
    out.push('\n');
    for s in &result.summaries {
        let _ = writeln!(
            out,
            "\n{}  ({} devices, {} replication(s); mean ± 95 % confidence interval)",
            s.label, s.devices, s.replications
        );
        let c = &s.completion;
        let rows: [(&str, String); 10] = [
            ("delivery ratio", est(&s.delivery_ratio, 4)),
            ("exchanges started/run", est(&s.started, 1)),
            ("failed exchanges/run", est(&s.failed, 1)),
            (
                "mean completion time",
                format!("{} s", est(&s.completion_mean, 3)),
            ),
            (
                "completion p10/p50/p90",
                format!("{:.3} / {:.3} / {:.3} s", c.p10, c.p50, c.p90),
            ),
            (
                "retransmissions/exchange",
                est(&s.retransmissions_per_exchange, 3),
            ),
            (
                "retransmission air time",
                format!("{} s/exchange", est(&s.retransmission_airtime, 4)),
            ),
            (
                "waiting/uplink frame",
                format!("{} s", est(&s.waiting_per_uplink, 3)),
            ),
            ("uplink drops/run", drops_text(&s.uplink_drops)),
            ("downlink drops/run", drops_text(&s.downlink_drops)),
        ];
        for (name, value) in rows {
            let _ = writeln!(out, "  {name:<28}{value}");
        }
    }
    out
}

/// One Markdown table, a row per algorithm.
pub fn markdown(scenario: &lorawan::Scenario, summaries: &[lorawan::Summary]) -> String {
    let head = [
        "algorithm",
        "delivery ratio",
        "mean completion (s)",
        "median completion (s)",
        "p90 completion (s)",
        "retransmissions/exchange",
        "retransmission air time (s/exchange)",
        "downlinks dropped/run",
    ];
    let rows = summaries.iter().map(|s| {
        vec![
            s.label.clone(),
            est(&s.delivery_ratio, 4),
            est(&s.completion_mean, 3),
            format!("{:.3}", s.completion.p50),
            format!("{:.3}", s.completion.p90),
            est(&s.retransmissions_per_exchange, 3),
            est(&s.retransmission_airtime, 4),
            est(&s.downlinks_dropped, 1),
        ]
    });
    crate::networks::markdown_table(&header(scenario), &head, rows)
}
