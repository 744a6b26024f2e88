//! The report of a store holding kernel cross-check runs
//! ([`crate::kernel_check`]): one CSV row per stored run (kernel or model),
//! and a page with the side-by-side tables and that table.

use std::path::Path;

use anyhow::Result;

use super::point::Point;
use super::store::sysctl_digest;
use crate::report::tables::Table;
use crate::report::{put_all, Written};
use crate::store::Store;

/// One row per stored cross-check run.
pub fn runs_table(store: &Store) -> Result<Table> {
    let header = [
        "point",
        "workload",
        "buffer",
        "config",
        "clients",
        "tcp",
        "settings",
        "model_version",
        "replication",
        "fct_min_s",
        "fct_p10_s",
        "fct_median_s",
        "fct_p90_s",
        "fct_max_s",
        "unfinished",
        "retransmitted_segments",
        "loss_probes",
        "timeouts",
        "spurious_rtos",
        "dsacks",
        "bytes_up",
        "bytes_down",
        "downlink_drops",
        "uplink_drops",
        "connections",
        "failed_exchanges",
    ];
    let mut rows = Vec::new();
    for run in store.kernel_check_runs()? {
        let point: Point = serde_json::from_str(&run.point)?;
        let settings = match &run.sysctl {
            Some(s) => sysctl_digest(&serde_json::from_str(s)?),
            None => String::new(),
        };
        let s = run.record.spread();
        let f = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v:.3}"));
        let c = &run.record.counters;
        rows.push(vec![
            point.to_string(),
            point.workload.name().to_string(),
            point.buffer_text(),
            point.config.name().to_string(),
            point.clients.to_string(),
            run.label.clone(),
            settings,
            run.model_version.clone().unwrap_or_default(),
            run.record.replication.to_string(),
            f(s.map(|s| s.min)),
            f(s.map(|s| s.p10)),
            f(s.map(|s| s.median)),
            f(s.map(|s| s.p90)),
            f(s.map(|s| s.max)),
            run.record.unfinished().to_string(),
            c.retransmitted_segments.to_string(),
            c.loss_probes.to_string(),
            c.timeouts.to_string(),
            c.spurious_rtos.to_string(),
            c.dsacks.to_string(),
            c.bytes_up.to_string(),
            c.bytes_down.to_string(),
            c.downlink_drops.to_string(),
            c.uplink_drops.to_string(),
            c.connections.to_string(),
            c.failed_exchanges.to_string(),
        ]);
    }
    Ok(Table {
        id: "kernel-check-runs",
        title: "Kernel cross-check: every run",
        header: header.iter().map(|h| h.to_string()).collect(),
        rows,
    })
}

/// Writes `report.html` (the side-by-side tables and every run) and
/// `kernel-check-runs.csv` into `out`.
pub fn write(store: &Store, out: &Path) -> Result<Written> {
    let table = runs_table(store)?;
    let summary = super::tables(store, None)?;
    let page = format!(
        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>coapcc kernel cross-check</title>\
         </head><body>\n<h1>The TCP model held to the kernel</h1>\n\
         <p>Per point: the kernel's runs and the model's, FCT percentiles (mean over replications, \
         range in brackets) and counters (mean per run). Kernel runs are grouped by kernel version \
         and a digest of their <code>net.ipv4.tcp_*</code> values.</p>\n<pre>{}</pre>\n{}\n\
         </body></html>\n",
        crate::report::html::esc(&summary),
        table.html()
    );
    put_all(out, &[], std::slice::from_ref(&table), &page)
}
