//! Printing the results of a grid scenario (the pCoCoA metrics, spec
//! `docs/spec/testbed-spec.md` §3): a table per algorithm with a map of the per-node carried
//! load, or one Markdown table (the JSON document is every network's,
//! [`crate::networks::run_json`]).

use std::fmt::Write;

use coapcc_sim::grid;
use coapcc_sim::ScenarioResult;

use crate::networks::estimate_text as est;

/// The line describing the scenario.
pub fn header(s: &grid::Scenario) -> String {
    let w = &s.workload;
    let what = match w.kind {
        coapcc_sim::grid::WorkloadKind::Periodic => format!("periodic T = {} s", w.period_s),
        coapcc_sim::grid::WorkloadKind::Bursty => format!(
            "bursty: nodes {:?} ON {} s / OFF {} s, the others T = {} s",
            w.interferers, w.on_s, w.off_s, w.period_s
        ),
    };
    format!(
        "{} — {}-node grid, {} MAC, {} routing, {what}, {} s after {} s warm-up, {}-byte requests, {} replication(s), seed {}",
        if s.name.is_empty() { "scenario" } else { &s.name },
        s.network.nodes(),
        mac_name(s),
        match s.network.routing {
            coapcc_link::grid::layout::Routing::Root => "root",
            coapcc_link::grid::layout::Routing::Storing => "storing",
        },
        w.duration_s,
        w.warmup_s,
        s.coap.request_size,
        s.replications,
        s.seed
    )
}

fn mac_name(s: &grid::Scenario) -> &'static str {
    match s.network.mac {
        coapcc_link::grid::MacProfile::Contiki => "contiki",
        coapcc_link::grid::MacProfile::Ieee802154 => "ieee802154",
    }
}

/// A table per algorithm.
pub fn table(scenario: &grid::Scenario, result: &ScenarioResult<grid::Sim>) -> String {
    let mut out = header(scenario);
    out.push('\n');
    let cols = scenario.network.cols.max(1) as usize;
    for s in &result.summaries {
        let _ = writeln!(
            out,
            "\n{}  ({} clients, {} replication(s); mean ± 95 % confidence interval)",
            s.label, s.clients, s.replications
        );
        let rows: [(&str, String); 13] = [
            ("offered load (nominal)", format!("{:.1} B/s", s.offered)),
            (
                "actual offered load",
                format!("{} B/s", est(&s.actual_offered, 1)),
            ),
            ("carried load", format!("{} B/s", est(&s.carried, 1))),
            ("transmissions/transaction", est(&s.tx_per_transaction, 3)),
            ("ACKs/transaction", est(&s.acks_per_transaction, 3)),
            ("app-buffer drops/run", est(&s.app_drops, 1)),
            ("failed exchanges/run", est(&s.failed, 1)),
            ("MAC buffer overflows/run", est(&s.mac_overflows, 1)),
            ("MAC drops (last retry)/run", est(&s.mac_drops, 1)),
            ("reassembly drops/run", est(&s.reassembly_drops, 1)),
            ("data frames/transaction", est(&s.frames_per_transaction, 2)),
            ("mean RTT", format!("{:.3} s", s.mean_rtt)),
            (
                "interferers' carried load",
                s.interferer_carried
                    .map_or("—".into(), |e| format!("{} B/s", est(&e, 1))),
            ),
        ];
        for (name, value) in rows {
            let _ = writeln!(out, "  {name:<28}{value}");
        }
        if scenario.network.positions.is_none()
            && s.node_carried.len() == cols * scenario.network.rows as usize
        {
            let _ = writeln!(
                out,
                "  carried load per node (B/s; row by row from node 1):"
            );
            for row in s.node_carried.chunks(cols) {
                let _ = write!(out, "   ");
                for e in row {
                    let _ = write!(out, "{:>7.1}", e.mean);
                }
                out.push('\n');
            }
        }
    }
    out
}

/// One Markdown table, a row per algorithm.
pub fn markdown(scenario: &grid::Scenario, summaries: &[grid::Summary]) -> String {
    let head = [
        "algorithm",
        "offered (B/s)",
        "actual offered (B/s)",
        "carried (B/s)",
        "transmissions/transaction",
        "ACKs/transaction",
        "app drops/run",
        "MAC overflows/run",
        "MAC drops/run",
        "reassembly drops/run",
    ];
    let rows = summaries.iter().map(|s| {
        vec![
            s.label.clone(),
            format!("{:.1}", s.offered),
            est(&s.actual_offered, 1),
            est(&s.carried, 1),
            est(&s.tx_per_transaction, 3),
            est(&s.acks_per_transaction, 3),
            est(&s.app_drops, 1),
            est(&s.mac_overflows, 1),
            est(&s.mac_drops, 1),
            est(&s.reassembly_drops, 1),
        ]
    });
    crate::networks::markdown_table(&header(scenario), &head, rows)
}
