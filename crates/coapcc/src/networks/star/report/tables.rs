//! The tables of a star report, one CSV each, holding every plotted series:
//! the metrics per set, station count and TCP flavour (every bar and every
//! point against the stations), and every sample of the time series drawn.

use coapcc_sim::metrics::Estimate;

use super::data::StarReport;
use super::figures::{Which, VARIABLES};
use crate::report::tables::Table;

fn f3(v: f64) -> String {
    format!("{v:.3}")
}

fn est(e: Estimate) -> [String; 2] {
    [f3(e.mean), f3(e.ci95)]
}

/// Every finished (set, station count, flavour): sets in order, station
/// counts ascending, flavours in campaign order — one row per bar.
pub fn points(r: &StarReport) -> Table {
    let mut rows = Vec::new();
    for set in &r.sets {
        for &p in &set.points {
            for l in &set.labels {
                let Some(c) = r.cell(&set.name, p, l) else {
                    continue;
                };
                let s = &c.summary;
                let mut row = vec![
                    set.name.clone(),
                    p.to_string(),
                    l.clone(),
                    c.cell.spec.algorithm.name.clone(),
                    c.done.to_string(),
                    f3(s.offered_bps * 1e-3),
                ];
                for e in [
                    Estimate {
                        mean: s.goodput_bps.mean * 1e-3,
                        ci95: s.goodput_bps.ci95 * 1e-3,
                    },
                    s.retransmissions,
                    s.timeouts,
                    s.fast_retransmits,
                    s.max_rto,
                    s.max_expired_rto,
                    s.complete_stations,
                    s.collisions,
                    s.mac_retries,
                    s.retry_drops,
                    s.queue_drops,
                    Estimate {
                        mean: 100.0 * s.utilisation.mean,
                        ci95: 100.0 * s.utilisation.ci95,
                    },
                ] {
                    row.extend(est(e));
                }
                rows.push(row);
            }
        }
    }
    let mut header: Vec<String> = [
        "set",
        "stations",
        "flavour",
        "algorithm",
        "replications",
        "offered (kbit/s)",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for e in [
        "goodput (kbit/s)",
        "retransmitted segments/run",
        "timeouts/run",
        "fast retransmits/run",
        "largest RTO (s)",
        "largest expired RTO (s)",
        "stations done/run",
        "802.11 collisions/run",
        "802.11 retries/run",
        "retry drops/run",
        "queue drops/run",
        "medium busy (%)",
    ] {
        header.push(e.to_string());
        header.push(format!("{e} ±95%"));
    }
    Table {
        id: "star-points",
        title: "Per station count and TCP flavour: mean per run over replications ± 95 % confidence interval",
        header,
        rows,
    }
}

/// Every sample of the time series drawn: per series point, flavour and
/// series (station 1 of one replication, or the mean over stations and
/// replications), time and the four variables (empty where not drawn: an
/// unbounded ssthresh, no RTT sample yet).
pub fn series(r: &StarReport) -> Table {
    let mut rows = Vec::new();
    for (set_name, stations) in &r.series_points {
        let Some(set) = r.sets.iter().find(|s| &s.name == set_name) else {
            continue;
        };
        for l in &set.labels {
            let Some(c) = r.cell(set_name, *stations, l) else {
                continue;
            };
            let s = &c.summary;
            let head = |which: Which| {
                vec![
                    set_name.clone(),
                    stations.to_string(),
                    l.clone(),
                    match which {
                        Which::One => "station 1".to_string(),
                        Which::Mean => "mean".to_string(),
                    },
                    match which {
                        Which::One => c.shown.map_or(String::new(), |r| r.to_string()),
                        Which::Mean => format!("all {}", c.done),
                    },
                ]
            };
            let cell = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v}"));
            for q in &s.one_station {
                let mut row = head(Which::One);
                row.push(format!("{}", q.t));
                row.extend(VARIABLES.iter().map(|v| cell((v.one)(q))));
                rows.push(row);
            }
            for q in &s.mean {
                let mut row = head(Which::Mean);
                row.push(format!("{}", q.t));
                row.extend(VARIABLES.iter().map(|v| cell((v.mean)(q))));
                rows.push(row);
            }
        }
    }
    Table {
        id: "star-series",
        title: "cwnd, ssthresh, RTO and RTT over time: station 1 of one replication, and the mean over stations and replications",
        header: [
            "set",
            "stations",
            "flavour",
            "series",
            "replication",
            "t (s)",
            "cwnd (bytes)",
            "ssthresh (bytes)",
            "RTO (s)",
            "RTT (s)",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
        rows,
    }
}

/// Every table of a star report.
pub fn all(r: &StarReport) -> Vec<Table> {
    vec![points(r), series(r)]
}
