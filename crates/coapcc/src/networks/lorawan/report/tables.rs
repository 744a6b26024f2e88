//! The tables of a LoRaWAN report: one row per cell with the metrics of
//! its algorithm (means and 95 % confidence intervals), and one row per
//! cell with its drops by direction and cause.

use coapcc_sim::metrics::Estimate;

use super::data::LorawanReport;
use crate::report::tables::Table;

fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn mean_ci(e: &Estimate, digits: usize) -> [String; 2] {
    [
        format!("{:.digits$}", e.mean),
        format!("{:.digits$}", e.ci95),
    ]
}

/// The metrics, a row per cell.
pub fn metrics(r: &LorawanReport) -> Table {
    let mut header = strs(&["set", "devices", "period_s", "algorithm", "replications"]);
    for m in [
        "delivery_ratio",
        "completion_mean_s",
        "retransmissions_per_exchange",
        "retransmission_airtime_s",
        "waiting_per_uplink_s",
        "downlinks_dropped",
    ] {
        header.push(m.to_string());
        header.push(format!("{m}_ci95"));
    }
    header.extend(strs(&[
        "completion_p10_s",
        "completion_p50_s",
        "completion_p90_s",
    ]));
    let rows = r
        .cells
        .iter()
        .map(|c| {
            let s = &c.summary;
            let mut row = vec![
                c.cell.set.clone(),
                c.cell.devices.to_string(),
                c.cell.period.to_string(),
                c.cell.label.clone(),
                c.done.to_string(),
            ];
            row.extend(mean_ci(&s.delivery_ratio, 4));
            row.extend(mean_ci(&s.completion_mean, 3));
            row.extend(mean_ci(&s.retransmissions_per_exchange, 3));
            row.extend(mean_ci(&s.retransmission_airtime, 4));
            row.extend(mean_ci(&s.waiting_per_uplink, 3));
            row.extend(mean_ci(&s.downlinks_dropped, 1));
            let p = &s.completion;
            row.extend([p.p10, p.p50, p.p90].map(|v| format!("{v:.3}")));
            row
        })
        .collect();
    Table {
        id: "lorawan-metrics",
        title: "Delivery, completion time and retransmissions per cell",
        header,
        rows,
    }
}

/// Drops per run by direction and cause, a row per cell.
pub fn drops(r: &LorawanReport) -> Table {
    let mut header = strs(&["set", "devices", "period_s", "algorithm"]);
    let causes = |c: &super::data::LorawanCellResult| {
        let s = &c.summary;
        s.uplink_drops
            .iter()
            .map(|(k, e)| (format!("up_{k}"), e.mean))
            .chain(
                s.downlink_drops
                    .iter()
                    .map(|(k, e)| (format!("down_{k}"), e.mean)),
            )
            .collect::<Vec<_>>()
    };
    if let Some(c) = r.cells.first() {
        header.extend(causes(c).into_iter().map(|(k, _)| k));
    }
    let rows = r
        .cells
        .iter()
        .map(|c| {
            let mut row = vec![
                c.cell.set.clone(),
                c.cell.devices.to_string(),
                c.cell.period.to_string(),
                c.cell.label.clone(),
            ];
            row.extend(causes(c).into_iter().map(|(_, v)| format!("{v:.1}")));
            row
        })
        .collect();
    Table {
        id: "lorawan-drops",
        title: "Drops per run by direction and cause",
        header,
        rows,
    }
}

/// Every table of the report.
pub fn all(r: &LorawanReport) -> Vec<Table> {
    vec![metrics(r), drops(r)]
}
