//! The figures of a grid report (the pCoCoA paper's, spec `docs/spec/testbed-spec.md` §3):
//! per periodic set, carried load (with the actual offered load and y = x),
//! transmissions and ACKs per transaction, MAC buffer overflows and MAC drops
//! against the nominal offered load; per-node carried load maps; the trace
//! node's RTO and RTT over time; per bursty set, transmissions per
//! transaction and carried load against the ON duration. Every point is a
//! mean over replications with its 95 % confidence interval.

use coapcc_sim::grid::{self, TraceKind};
use coapcc_sim::metrics::Estimate;

use super::data::{GridReport, GridSet};
use crate::networks::grid::campaign::plan::point_text;
use crate::report::svg::heat::{heat_map, HeatCell};
use crate::report::svg::xy::{xy_plot, Axes, Scale, Series, Style, XyPoint};
use crate::report::svg::PALETTE;
use crate::report::{set_figure, stem, Figure};

/// One metric drawn against the sweep.
struct Metric {
    /// File-name part.
    id: &'static str,
    /// What it is (title).
    what: &'static str,
    /// The y axis.
    unit: &'static str,
    /// Its value in a summary.
    get: fn(&grid::Summary) -> Estimate,
    /// Whether the y axis starts at zero.
    from_zero: bool,
}

const PERIODIC: [Metric; 5] = [
    Metric {
        id: "carried",
        what: "Carried load",
        unit: "carried load (B/s)",
        get: |s| s.carried,
        from_zero: true,
    },
    Metric {
        id: "tx",
        what: "Transmissions per transaction",
        unit: "CoAP transmissions per transaction",
        get: |s| s.tx_per_transaction,
        from_zero: false,
    },
    Metric {
        id: "acks",
        what: "ACKs per transaction",
        unit: "ACKs received per transaction",
        get: |s| s.acks_per_transaction,
        from_zero: false,
    },
    Metric {
        id: "overflows",
        what: "MAC buffer overflows",
        unit: "datagrams refused per run",
        get: |s| s.mac_overflows,
        from_zero: true,
    },
    Metric {
        id: "mac-drops",
        what: "MAC drops",
        unit: "frames dropped after the last retry, per run",
        get: |s| s.mac_drops,
        from_zero: true,
    },
];

const BURSTY: [Metric; 2] = [
    Metric {
        id: "tx",
        what: "Transmissions per transaction",
        unit: "CoAP transmissions per transaction",
        get: |s| s.tx_per_transaction,
        from_zero: false,
    },
    Metric {
        id: "carried",
        what: "Carried load",
        unit: "carried load (B/s)",
        get: |s| s.carried,
        from_zero: true,
    },
];

fn colour(r: &GridReport, label: &str) -> &'static str {
    PALETTE[r.labels.iter().position(|l| l == label).unwrap_or(0) % PALETTE.len()]
}

/// The series of `label` in `set`: one point per finished point of the
/// sweep, at x = `x(point, summary)`.
fn series_of(
    r: &GridReport,
    set: &GridSet,
    label: &str,
    x: &dyn Fn(f64, &grid::Summary) -> f64,
    y: fn(&grid::Summary) -> Estimate,
    legend: String,
    dashed: bool,
) -> Series {
    let mut points: Vec<XyPoint> = set
        .points
        .iter()
        .filter_map(|&p| r.cell(&set.name, p, label))
        .map(|c| {
            let e = y(&c.summary);
            XyPoint {
                x: x(c.cell.point, &c.summary),
                y: e.mean,
                ci: e.ci95,
            }
        })
        .collect();
    points.sort_by(|a, b| a.x.total_cmp(&b.x));
    Series {
        label: legend,
        colour: colour(r, label),
        style: Style::Line { dashed },
        points,
    }
}

fn periodic(r: &GridReport, set: &GridSet, out: &mut Vec<Figure>) {
    let offered = |_: f64, s: &grid::Summary| s.offered;
    for m in &PERIODIC {
        let mut series = Vec::new();
        for label in &set.labels {
            let legend = if m.id == "carried" {
                format!("{label}: carried")
            } else {
                label.clone()
            };
            series.push(series_of(r, set, label, &offered, m.get, legend, false));
        }
        if m.id == "carried" {
            for label in &set.labels {
                series.push(series_of(
                    r,
                    set,
                    label,
                    &offered,
                    |s| s.actual_offered,
                    format!("{label}: actual offered"),
                    true,
                ));
            }
        }
        let axes = Axes {
            title: format!("{} · {}", m.what, set.name),
            x_label: "nominal offered load (B/s, log scale)".into(),
            y_label: m.unit.into(),
            x_scale: Scale::Log,
            y_from_zero: m.from_zero,
            diagonal: m.id == "carried",
        };
        out.push(set_figure("periodic", &set.name, m.id, &axes, &series));
    }
    for &p in &set.heat_points {
        let cells: Vec<_> = set
            .labels
            .iter()
            .filter_map(|l| r.cell(&set.name, p, l))
            .collect();
        // One colour scale for every algorithm at this period.
        let max = cells
            .iter()
            .flat_map(|c| c.summary.node_carried.iter().map(|e| e.mean))
            .fold(0.0, f64::max);
        for c in cells {
            let net = &c.cell.spec.network;
            let heat: Vec<HeatCell> = net
                .node_positions()
                .iter()
                .enumerate()
                .map(|(i, &position)| {
                    let node = i as u32 + 1;
                    let e = c.summary.node_carried.get(i).copied().unwrap_or_default();
                    let tag = if node == net.root {
                        "BR"
                    } else if node == net.server {
                        "S"
                    } else {
                        ""
                    };
                    HeatCell {
                        node,
                        position,
                        value: tag.is_empty().then_some((e.mean, e.ci95)),
                        tag,
                    }
                })
                .collect();
            out.push(Figure {
                kind: "nodes",
                group: format!("{} · T = {} s", set.name, point_text(p)),
                file: format!(
                    "{}-nodes-t{}-{}.svg",
                    stem(&set.name),
                    stem(&point_text(p)),
                    stem(&c.cell.label)
                ),
                svg: heat_map(
                    &format!("{} · T = {} s", c.cell.label, point_text(p)),
                    "B/s",
                    &heat,
                    max,
                ),
            });
        }
    }
    for &p in &set.trace_points {
        for label in &set.labels {
            let Some(t) = r.trace(&set.name, p, label) else {
                continue;
            };
            let kinds = [
                (TraceKind::Rto, "RTO (first timer)", PALETTE[0]),
                (TraceKind::Backoff, "backed-off timer", PALETTE[1]),
                (TraceKind::Rtt, "RTT sample", PALETTE[2]),
            ];
            let series: Vec<Series> = kinds
                .iter()
                .map(|&(k, name, colour)| Series {
                    label: name.into(),
                    colour,
                    style: Style::Dots,
                    points: t
                        .points
                        .iter()
                        .filter(|q| q.kind == k)
                        .map(|q| XyPoint {
                            x: q.t,
                            y: q.value,
                            ci: 0.0,
                        })
                        .collect(),
                })
                .collect();
            let axes = Axes {
                title: format!(
                    "{label} · node {} · T = {} s · replication {}",
                    t.node,
                    point_text(p),
                    t.replication
                ),
                x_label: "time since the start of the run (s)".into(),
                y_label: "seconds".into(),
                x_scale: Scale::Linear,
                y_from_zero: true,
                diagonal: false,
            };
            out.push(Figure {
                kind: "trace",
                group: format!("{} · T = {} s", set.name, point_text(p)),
                file: format!(
                    "{}-trace-t{}-{}.svg",
                    stem(&set.name),
                    stem(&point_text(p)),
                    stem(label)
                ),
                svg: xy_plot(&axes, &series),
            });
        }
    }
}

fn bursty(r: &GridReport, set: &GridSet, out: &mut Vec<Figure>) {
    let on = |p: f64, _: &grid::Summary| p;
    for m in &BURSTY {
        let series: Vec<Series> = set
            .labels
            .iter()
            .map(|l| series_of(r, set, l, &on, m.get, l.clone(), false))
            .collect();
        let axes = Axes {
            title: format!("{} · {}", m.what, set.name),
            x_label: "interferers' ON duration (s)".into(),
            y_label: m.unit.into(),
            x_scale: Scale::Linear,
            y_from_zero: m.from_zero,
            diagonal: false,
        };
        out.push(set_figure("bursty", &set.name, m.id, &axes, &series));
    }
}

/// Every figure of a grid report, set by set.
pub fn figures(r: &GridReport) -> Vec<Figure> {
    let mut out = Vec::new();
    for set in &r.sets {
        match set.kind {
            grid::WorkloadKind::Periodic => periodic(r, set, &mut out),
            grid::WorkloadKind::Bursty => bursty(r, set, &mut out),
        }
    }
    out
}
