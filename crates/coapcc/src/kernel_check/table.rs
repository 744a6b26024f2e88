//! The side-by-side table of the cross-check: per point, the kernel's runs
//! and each model profile's, FCT percentiles and counters, with the spread
//! over replications (a kernel run is a measurement, not a pure function).

use std::fmt::Write;

use super::point::Point;
use super::record::{Counters, Record, Spread};

/// The records of one source at one point.
#[derive(Clone, Debug)]
pub struct Group<'a> {
    /// `kernel 6.18.44` or `model tcp-linux6`.
    pub label: String,
    /// Its replications.
    pub records: Vec<&'a Record>,
}

/// Mean and range of one figure over replications.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stat {
    /// Mean over replications.
    pub mean: f64,
    /// Smallest.
    pub lo: f64,
    /// Largest.
    pub hi: f64,
}

impl Stat {
    /// Over `values`; `None` if there are none.
    pub fn of(values: impl IntoIterator<Item = f64>) -> Option<Stat> {
        let v: Vec<f64> = values.into_iter().collect();
        if v.is_empty() {
            return None;
        }
        Some(Stat {
            mean: v.iter().sum::<f64>() / v.len() as f64,
            lo: v.iter().copied().fold(f64::INFINITY, f64::min),
            hi: v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        })
    }
}

/// A group's figures.
#[derive(Clone, Debug)]
pub struct Row {
    /// The group's label.
    pub label: String,
    /// Replications.
    pub runs: usize,
    /// Per percentile (min, p10, median, p90, max): its mean and range over
    /// replications.
    pub fct: [Option<Stat>; 5],
    /// Clients that did not finish, over all replications.
    pub unfinished: usize,
    /// Counters, mean per run.
    pub counters: [f64; 9],
}

/// The counters' column names, in [`Row::counters`] order.
pub const COUNTER_COLUMNS: [&str; 9] = [
    "retx segs",
    "loss probes",
    "timeouts",
    "spurious RTOs",
    "D-SACKs",
    "bytes up",
    "bytes down",
    "down drops",
    "failed",
];

fn counter_values(c: &Counters) -> [u64; 9] {
    [
        c.retransmitted_segments,
        c.loss_probes,
        c.timeouts,
        c.spurious_rtos,
        c.dsacks,
        c.bytes_up,
        c.bytes_down,
        c.downlink_drops,
        c.failed_exchanges,
    ]
}

impl Row {
    /// The figures of `group`.
    pub fn of(group: &Group<'_>) -> Row {
        let spreads: Vec<Spread> = group.records.iter().filter_map(|r| r.spread()).collect();
        let pick: [fn(&Spread) -> f64; 5] =
            [|s| s.min, |s| s.p10, |s| s.median, |s| s.p90, |s| s.max];
        let fct = pick.map(|f| Stat::of(spreads.iter().map(f)));
        let n = group.records.len().max(1) as f64;
        let mut counters = [0.0; 9];
        for r in &group.records {
            for (sum, v) in counters.iter_mut().zip(counter_values(&r.counters)) {
                *sum += v as f64 / n;
            }
        }
        Row {
            label: group.label.clone(),
            runs: group.records.len(),
            fct,
            unfinished: group.records.iter().map(|r| r.unfinished()).sum(),
            counters,
        }
    }
}

fn stat_cell(s: Option<Stat>) -> String {
    match s {
        None => String::new(),
        Some(s) if s.lo == s.hi => format!("{:.1}", s.mean),
        Some(s) => format!("{:.1} ({:.1}–{:.1})", s.mean, s.lo, s.hi),
    }
}

/// The model's median, p10 and p90 as a fraction of the kernel's, minus one
/// (`+0.05` = 5 % above), for the goal "within 10 %".
pub fn deviation(model: &Row, kernel: &Row) -> [Option<f64>; 3] {
    [2, 1, 3].map(|i| match (model.fct[i], kernel.fct[i]) {
        (Some(m), Some(k)) if k.mean > 0.0 => Some(m.mean / k.mean - 1.0),
        _ => None,
    })
}

/// The Markdown tables: one per point, the kernel first.
pub fn markdown(points: &[(Point, Vec<Group<'_>>)]) -> String {
    let mut out = String::new();
    for (point, groups) in points {
        let rows: Vec<Row> = groups.iter().map(Row::of).collect();
        let _ = writeln!(out, "#### {point}\n");
        let _ = writeln!(
            out,
            "| TCP | runs | FCT min | p10 | median | p90 | max | unfinished | {} | median / p10 / p90 vs kernel |",
            COUNTER_COLUMNS.join(" | ")
        );
        let _ = writeln!(out, "|{}", " --- |".repeat(8 + COUNTER_COLUMNS.len() + 1));
        let kernel = rows.iter().find(|r| r.label.starts_with("kernel"));
        for row in &rows {
            let dev = match kernel {
                Some(k) if !std::ptr::eq(k, row) => deviation(row, k)
                    .map(|d| d.map_or("–".to_string(), |d| format!("{:+.0} %", d * 100.0)))
                    .join(" / "),
                _ => String::new(),
            };
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {dev} |",
                row.label,
                row.runs,
                stat_cell(row.fct[0]),
                stat_cell(row.fct[1]),
                stat_cell(row.fct[2]),
                stat_cell(row.fct[3]),
                stat_cell(row.fct[4]),
                row.unfinished,
                row.counters
                    .iter()
                    .map(|c| format!("{c:.0}"))
                    .collect::<Vec<_>>()
                    .join(" | "),
            );
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel_check::point::{KernelConfig, Workload};
    use crate::kernel_check::record::Source;

    fn rec(source: Source, fct: &[f64], retx: u64) -> Record {
        Record {
            source,
            replication: 0,
            fct: fct.iter().copied().map(Some).collect(),
            counters: Counters {
                retransmitted_segments: retx,
                ..Counters::default()
            },
        }
    }

    #[test]
    fn rows_average_over_replications_and_keep_the_range() {
        let a = rec(Source::Kernel("6".into()), &[10.0, 20.0, 30.0], 4);
        let b = rec(Source::Kernel("6".into()), &[12.0, 22.0, 32.0], 6);
        let g = Group {
            label: "kernel 6".into(),
            records: vec![&a, &b],
        };
        let row = Row::of(&g);
        let median = row.fct[2].unwrap();
        assert_eq!((median.mean, median.lo, median.hi), (21.0, 20.0, 22.0));
        assert_eq!(row.counters[0], 5.0);
    }

    #[test]
    fn the_table_shows_the_model_against_the_kernel() {
        let k = rec(Source::Kernel("6".into()), &[100.0], 0);
        let m = rec(Source::Model("tcp".into()), &[110.0], 0);
        let p = Point {
            config: KernelConfig::Thesis,
            workload: Workload::Continuous,
            buffer: None,
            clients: 1,
            exchanges: 50,
        };
        let md = markdown(&[(
            p,
            vec![
                Group {
                    label: "kernel 6".into(),
                    records: vec![&k],
                },
                Group {
                    label: "model tcp".into(),
                    records: vec![&m],
                },
            ],
        )]);
        let model_line = md.lines().find(|l| l.starts_with("| model tcp")).unwrap();
        assert!(
            model_line.ends_with("+10 % / +10 % / +10 % |"),
            "{model_line}"
        );
    }
}
