//! The tables of a grid report, one CSV each, holding every plotted series:
//! the periodic metrics (one row per set, algorithm and period), the bursty
//! ones (per ON duration), the per-node carried load at the mapped periods,
//! and the traces drawn.

use coapcc_sim::metrics::Estimate;

use super::data::GridReport;
use crate::networks::grid::campaign::plan::point_text;
use crate::networks::grid::store::trace_kind_name;
use crate::report::tables::Table;
use coapcc_sim::grid;

fn f3(v: f64) -> String {
    format!("{v:.3}")
}

fn est(e: Estimate) -> [String; 2] {
    [f3(e.mean), f3(e.ci95)]
}

fn header(fixed: &[&str], estimates: &[&str], tail: &[&str]) -> Vec<String> {
    let mut h: Vec<String> = fixed.iter().map(|s| s.to_string()).collect();
    for e in estimates {
        h.push(e.to_string());
        h.push(format!("{e} ±95%"));
    }
    h.extend(tail.iter().map(|s| s.to_string()));
    h
}

/// Every finished (set, algorithm, point) of sets of `kind`, sets in order,
/// then algorithms, then points ascending.
fn rows_of<'a>(
    r: &'a GridReport,
    kind: grid::WorkloadKind,
) -> impl Iterator<Item = &'a super::data::GridCellResult> + 'a {
    r.sets
        .iter()
        .filter(move |s| s.kind == kind)
        .flat_map(move |s| {
            s.labels
                .iter()
                .flat_map(move |l| s.points.iter().filter_map(move |&p| r.cell(&s.name, p, l)))
        })
}

/// The periodic sets' metrics against the period and the nominal offered load.
pub fn periodic(r: &GridReport) -> Table {
    let rows = rows_of(r, grid::WorkloadKind::Periodic)
        .map(|c| {
            let s = &c.summary;
            let mut row = vec![
                c.cell.set.clone(),
                c.cell.label.clone(),
                point_text(c.cell.point),
                f3(s.offered),
                c.done.to_string(),
            ];
            for e in [
                s.actual_offered,
                s.carried,
                s.tx_per_transaction,
                s.acks_per_transaction,
                s.mac_overflows,
                s.mac_drops,
                s.app_drops,
                s.failed,
                s.reassembly_drops,
                s.frames_per_transaction,
            ] {
                row.extend(est(e));
            }
            row.push(f3(s.mean_rtt));
            row
        })
        .collect();
    Table {
        id: "grid-periodic",
        title: "Periodic sweeps: mean over replications ± 95 % confidence interval",
        header: header(
            &[
                "set",
                "algorithm",
                "T (s)",
                "nominal offered (B/s)",
                "replications",
            ],
            &[
                "actual offered (B/s)",
                "carried (B/s)",
                "tx/transaction",
                "ACKs/transaction",
                "MAC overflows/run",
                "MAC drops/run",
                "app-buffer drops/run",
                "failed/run",
                "reassembly drops/run",
                "frames/transaction",
            ],
            &["mean RTT (s)"],
        ),
        rows,
    }
}

/// The bursty sets' metrics against the ON duration.
pub fn bursty(r: &GridReport) -> Table {
    let rows = rows_of(r, grid::WorkloadKind::Bursty)
        .map(|c| {
            let s = &c.summary;
            let w = &c.cell.spec.workload;
            let mut row = vec![
                c.cell.set.clone(),
                c.cell.label.clone(),
                point_text(c.cell.point),
                point_text(w.off_s),
                point_text(w.period_s),
                c.done.to_string(),
            ];
            for e in [
                s.tx_per_transaction,
                s.carried,
                s.acks_per_transaction,
                s.interferer_carried.unwrap_or_default(),
                s.mac_overflows,
                s.mac_drops,
            ] {
                row.extend(est(e));
            }
            row
        })
        .collect();
    Table {
        id: "grid-bursty",
        title: "Bursty sweeps: mean over replications ± 95 % confidence interval",
        header: header(
            &[
                "set",
                "algorithm",
                "ON (s)",
                "OFF (s)",
                "others' T (s)",
                "replications",
            ],
            &[
                "tx/transaction",
                "carried (B/s)",
                "ACKs/transaction",
                "interferers' carried (B/s)",
                "MAC overflows/run",
                "MAC drops/run",
            ],
            &[],
        ),
        rows,
    }
}

/// Per-node carried load at the mapped periods.
pub fn nodes(r: &GridReport) -> Table {
    let mut rows = Vec::new();
    for s in &r.sets {
        for &p in &s.heat_points {
            for l in &s.labels {
                let Some(c) = r.cell(&s.name, p, l) else {
                    continue;
                };
                for (i, e) in c.summary.node_carried.iter().enumerate() {
                    let mut row = vec![
                        s.name.clone(),
                        point_text(p),
                        l.clone(),
                        (i + 1).to_string(),
                    ];
                    row.extend(est(*e));
                    rows.push(row);
                }
            }
        }
    }
    Table {
        id: "grid-nodes",
        title: "Carried load per node (B/s; 0 for the border router and the server)",
        header: header(
            &["set", "T (s)", "algorithm", "node"],
            &["carried (B/s)"],
            &[],
        ),
        rows,
    }
}

/// The traces drawn: every sample of the trace node in the replication shown.
pub fn traces(r: &GridReport) -> Table {
    let mut rows = Vec::new();
    for t in &r.traces {
        let c = &r.cells[t.cell].cell;
        for q in &t.points {
            rows.push(vec![
                c.set.clone(),
                point_text(c.point),
                c.label.clone(),
                t.node.to_string(),
                t.replication.to_string(),
                format!("{:.6}", q.t),
                trace_kind_name(q.kind).to_string(),
                format!("{:.6}", q.value),
                q.retransmissions.to_string(),
            ]);
        }
    }
    Table {
        id: "grid-traces",
        title: "RTO and RTT traces of the trace node (s)",
        header: [
            "set",
            "T (s)",
            "algorithm",
            "node",
            "replication",
            "t (s)",
            "kind",
            "value (s)",
            "retransmissions",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
        rows,
    }
}

/// Every table of a grid report.
pub fn all(r: &GridReport) -> Vec<Table> {
    vec![periodic(r), bursty(r), nodes(r), traces(r)]
}
