//! The tables of a dumbbell report: measured vs published FCT
//! (`docs/spec/calibration-spec.md` §1), transmissions per exchange and the per-group
//! summary (`docs/spec/testbed-spec.md` §3).

use coapcc_sim::Summary;

use super::data::{diff_percent, CellResult, DumbbellReport};
use crate::report::tables::Table;

fn f3(v: f64) -> String {
    format!("{v:.3}")
}

fn opt3(v: Option<f64>) -> String {
    v.map_or(String::new(), f3)
}

/// A signed percentage with one decimal; differences that round to zero are
/// shown as `0.0%` whatever their sign.
fn pct(measured: f64, published: Option<f64>) -> String {
    published.map_or(String::new(), |p| {
        let d = diff_percent(measured, p);
        if (d * 10.0).round() == 0.0 {
            "0.0%".to_string()
        } else {
            format!("{d:+.1}%")
        }
    })
}

fn coords(c: &CellResult) -> Vec<String> {
    let k = &c.cell;
    vec![
        k.set.clone(),
        k.errors.name().to_string(),
        k.workload.name().to_string(),
        k.buffer.label(),
        k.clients.to_string(),
    ]
}

fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// Measured vs published flow completion times.
pub fn published(r: &DumbbellReport) -> Table {
    let mut rows = Vec::new();
    for c in &r.comparisons {
        let (m, p) = (&c.measured.fct, &c.row);
        rows.push(vec![
            c.set.clone(),
            p.errors.name().to_string(),
            p.workload.name().to_string(),
            p.buffer().label(),
            p.clients.to_string(),
            p.algorithm.to_string(),
            c.replications.to_string(),
        ]);
        // no finished run: no measurement (empty cells), not zeros
        let measured = |v: f64| (c.replications > 0).then_some(v);
        let row = rows.last_mut().expect("just pushed");
        row.extend([
            opt3(measured(m.p10)),
            opt3(measured(m.p25)),
            opt3(measured(m.p50)),
            opt3(measured(m.p75)),
            opt3(measured(m.p90)),
            opt3(p.p10),
            opt3(p.p25),
            f3(p.p50),
            opt3(p.p75),
            opt3(p.p90),
        ]);
        if c.replications > 0 {
            row.extend([
                pct(m.p10, p.p10),
                pct(m.p50, Some(p.p50)),
                pct(m.p90, p.p90),
            ]);
        } else {
            row.extend([String::new(), String::new(), String::new()]);
        }
    }
    Table {
        id: "published",
        title: "Measured vs published flow completion time (s)",
        header: strs(&[
            "set",
            "errors",
            "workload",
            "buffer",
            "clients",
            "algorithm",
            "replications",
            "measured p10",
            "measured p25",
            "measured median",
            "measured p75",
            "measured p90",
            "published p10",
            "published p25",
            "published median",
            "published p75",
            "published p90",
            "Δ p10",
            "Δ median",
            "Δ p90",
        ]),
        rows,
    }
}

/// Columns of the transmissions table: 1..=5 transmissions, then 6 or more.
pub const TRANSMISSION_COLUMNS: usize = 6;

/// Shares of exchanges by number of transmissions (1 = no retransmission), in
/// percent, the last column counting 6 or more.
pub fn transmission_shares(s: &Summary) -> (u64, [f64; TRANSMISSION_COLUMNS]) {
    let total: u64 = s.retransmissions_per_exchange.iter().sum();
    let mut out = [0.0; TRANSMISSION_COLUMNS];
    if total == 0 {
        return (0, out);
    }
    for (i, &n) in s.retransmissions_per_exchange.iter().enumerate() {
        out[i.min(TRANSMISSION_COLUMNS - 1)] += 100.0 * n as f64 / total as f64;
    }
    (total, out)
}

/// Transmissions per exchange, per group.
pub fn transmissions(r: &DumbbellReport) -> Table {
    let mut rows = Vec::new();
    for c in &r.cells {
        for g in &c.groups {
            let (total, shares) = transmission_shares(&g.summary);
            let mut row = coords(c);
            row.push(g.label.clone());
            if c.done == 0 {
                // no finished run: empty cells, not zeros
                row.extend(std::iter::repeat_n(String::new(), TRANSMISSION_COLUMNS + 2));
            } else {
                row.push(total.to_string());
                row.extend(shares.iter().map(|v| format!("{v:.2}")));
                row.push(g.summary.retransmissions_per_exchange.len().to_string());
            }
            rows.push(row);
        }
    }
    let mut header = strs(&[
        "set",
        "errors",
        "workload",
        "buffer",
        "clients",
        "algorithm",
        "exchanges",
    ]);
    for i in 1..TRANSMISSION_COLUMNS {
        header.push(format!("{i} tx %"));
    }
    header.push(format!("≥{TRANSMISSION_COLUMNS} tx %"));
    header.push("most tx".into());
    Table {
        id: "transmissions",
        title: "Transmissions per exchange (share of exchanges, %)",
        header,
        rows,
    }
}

/// The summary table's columns.
const SUMMARY_HEADER: [&str; 32] = [
    "set",
    "errors",
    "workload",
    "buffer",
    "clients",
    "algorithm",
    "replications",
    "clients summarised",
    "FCT min",
    "FCT p10",
    "FCT p25",
    "FCT median",
    "FCT p75",
    "FCT p90",
    "FCT max",
    "unnecessary p10",
    "unnecessary median",
    "unnecessary p90",
    "failed exchanges",
    "unfinished clients",
    "mean RTT",
    "largest timer median",
    "buffer drops up",
    "buffer drops down",
    "error drops up",
    "error drops down",
    "utilisation up",
    "utilisation down",
    "unnecessary share down",
    "TCP connections",
    "TCP connections aborted",
    "TCP unnecessary SYN, SYN-ACK and CSM copies",
];

/// Metric columns of the summary table (after the coordinates, the
/// algorithm and the replications).
const SUMMARY_METRICS: usize = SUMMARY_HEADER.len() - 7;

/// Every metric per group.
pub fn summary(r: &DumbbellReport) -> Table {
    let mut rows = Vec::new();
    for c in &r.cells {
        for g in &c.groups {
            let s = &g.summary;
            let mut row = coords(c);
            row.extend([g.label.clone(), format!("{}/{}", c.done, c.cell.keys.len())]);
            if c.done == 0 {
                // no finished run: empty cells, not zeros
                row.extend(std::iter::repeat_n(String::new(), SUMMARY_METRICS));
                rows.push(row);
                continue;
            }
            row.extend([
                s.clients.to_string(),
                f3(s.fct.min),
                f3(s.fct.p10),
                f3(s.fct.p25),
                f3(s.fct.p50),
                f3(s.fct.p75),
                f3(s.fct.p90),
                f3(s.fct.max),
                f3(s.unnecessary.p10),
                f3(s.unnecessary.p50),
                f3(s.unnecessary.p90),
                s.failed_exchanges.to_string(),
                s.unfinished_clients.to_string(),
                f3(s.mean_rtt),
                f3(s.max_expired_timer.p50),
                s.drops.buffer_up.to_string(),
                s.drops.buffer_down.to_string(),
                s.drops.error_up.to_string(),
                s.drops.error_down.to_string(),
                f3(s.utilisation_up),
                f3(s.utilisation_down),
                f3(s.unnecessary_share_down),
                s.tcp
                    .as_ref()
                    .map_or(String::new(), |t| t.connections.to_string()),
                s.tcp
                    .as_ref()
                    .map_or(String::new(), |t| t.aborted.to_string()),
                s.tcp.as_ref().map_or(String::new(), |t| {
                    (t.unnecessary_syn + t.unnecessary_synack + t.unnecessary_csm).to_string()
                }),
            ]);
            rows.push(row);
        }
    }
    Table {
        id: "summary",
        title: "Summary per algorithm",
        header: strs(&SUMMARY_HEADER),
        rows,
    }
}

/// A table of one row per group that has `metrics` (its cell's
/// coordinates, its label and replications, then the metrics' columns).
fn per_group(
    r: &DumbbellReport,
    id: &'static str,
    title: &'static str,
    columns: &[&str],
    metrics: impl Fn(&Summary) -> Option<Vec<String>>,
) -> Table {
    let mut rows = Vec::new();
    for c in &r.cells {
        for g in &c.groups {
            if let Some(m) = metrics(&g.summary) {
                let mut row = coords(c);
                row.extend([g.label.clone(), format!("{}/{}", c.done, c.cell.keys.len())]);
                row.extend(m);
                rows.push(row);
            }
        }
    }
    let mut header = strs(&[
        "set",
        "errors",
        "workload",
        "buffer",
        "clients",
        "algorithm",
        "replications",
    ]);
    header.extend(strs(columns));
    Table {
        id,
        title,
        header,
        rows,
    }
}

/// What observers got, per observing group: changes delivered, superseded
/// and lost, notification delays and the age of the observers' views
/// (percentiles are means over replications).
pub fn observe(r: &DumbbellReport) -> Table {
    let columns = [
        "changes",
        "delivered %",
        "superseded %",
        "lost %",
        "discarded as older",
        "delay p10",
        "delay median",
        "delay p90",
        "delay max",
        "mean age median",
        "mean age p90",
        "CON sent",
        "NON sent",
        "CON retransmitted",
        "re-registrations",
    ];
    per_group(
        r,
        "observe",
        "Observe: what became of the resource's changes at the observers",
        &columns,
        |s| {
            let o = s.observe.as_ref()?;
            let share = |n: u64| format!("{:.2}", 100.0 * n as f64 / o.generated.max(1) as f64);
            let retransmitted: u64 = s.retransmissions_per_exchange.iter().skip(1).sum();
            Some(vec![
                o.generated.to_string(),
                share(o.delivered),
                share(o.superseded),
                share(o.lost),
                o.discarded.to_string(),
                f3(o.delay.p10),
                f3(o.delay.p50),
                f3(o.delay.p90),
                f3(o.delay.max),
                f3(o.age.p50),
                f3(o.age.p90),
                o.confirmable.to_string(),
                o.non_confirmable.to_string(),
                retransmitted.to_string(),
                o.reregistrations.to_string(),
            ])
        },
    )
}

/// Block-wise transfers per group: completion time and goodput
/// (percentiles are means over replications).
pub fn transfers(r: &DumbbellReport) -> Table {
    let columns = [
        "completed",
        "failed",
        "time p10",
        "time median",
        "time p90",
        "time max",
        "goodput median",
        "goodput p10",
    ];
    per_group(
        r,
        "transfers",
        "Block-wise transfers: completion time (s) and goodput (bit/s)",
        &columns,
        |s| {
            let t = s.transfers.as_ref()?;
            Some(vec![
                t.completed.to_string(),
                t.failed.to_string(),
                f3(t.completion.p10),
                f3(t.completion.p50),
                f3(t.completion.p90),
                f3(t.completion.max),
                format!("{:.0}", t.goodput.p50),
                format!("{:.0}", t.goodput.p10),
            ])
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_fold_the_tail_into_the_last_column() {
        let s = Summary {
            retransmissions_per_exchange: vec![50, 20, 10, 10, 5, 3, 1, 1],
            ..Default::default()
        };
        let (total, shares) = transmission_shares(&s);
        assert_eq!(total, 100);
        assert_eq!(shares, [50.0, 20.0, 10.0, 10.0, 5.0, 5.0]);
        assert_eq!(transmission_shares(&Summary::default()).0, 0);
    }
}
