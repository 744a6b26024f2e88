//! The figures of a star report (the lwIP paper's, spec `docs/spec/testbed-spec.md` §3):
//! per station count of each set, bars of goodput at the access point,
//! retransmitted segments, timeouts and the largest RTO per TCP flavour;
//! per set of several station counts, the same metrics against the number
//! of stations; and at the published and one loaded station count, the
//! cwnd, ssthresh, RTO and RTT over time of one client (station 1 of the
//! first stored replication) and their mean over clients, per flavour, with
//! the first [`ZOOM_S`] s of cwnd on their own.
//!
//! Every bar and point is a mean over replications with its 95 % confidence
//! interval (`star::Summary`).

use coapcc_sim::metrics::Estimate;
use coapcc_sim::star::{self, MeanSample, TcpSample};

use super::data::{StarReport, StarSet, ZOOM_S};
use crate::report::svg::bars::{bar_chart, Bar};
use crate::report::svg::xy::{xy_plot, Axes, Scale, Series, Style, XyPoint};
use crate::report::svg::PALETTE;
use crate::report::Figure;
use crate::report::{set_figure, stem};

/// One metric per run, drawn as bars and against the stations.
pub struct Metric {
    /// File-name part.
    pub id: &'static str,
    /// What it is (title).
    pub what: &'static str,
    /// The y axis.
    pub unit: &'static str,
    /// Its value in a summary, in the axis' unit.
    pub get: fn(&star::Summary) -> Estimate,
}

fn scaled(e: Estimate, f: f64) -> Estimate {
    Estimate {
        mean: e.mean * f,
        ci95: e.ci95 * f,
    }
}

/// The metrics of the bars and of the sweeps.
pub const METRICS: [Metric; 4] = [
    Metric {
        id: "goodput",
        what: "Goodput at the AP",
        unit: "goodput (kbit/s)",
        get: |s| scaled(s.goodput_bps, 1e-3),
    },
    Metric {
        id: "retransmissions",
        what: "Retransmitted segments",
        unit: "segments resent per run",
        get: |s| s.retransmissions,
    },
    Metric {
        id: "timeouts",
        what: "Retransmission timeouts",
        unit: "timeouts per run",
        get: |s| s.timeouts,
    },
    Metric {
        id: "max-rto",
        what: "Largest RTO",
        unit: "largest RTO in force (s)",
        get: |s| s.max_rto,
    },
];

/// One sampled variable of the time series.
pub struct Variable {
    /// File-name part.
    pub id: &'static str,
    /// Its name (title).
    pub what: &'static str,
    /// The y axis.
    pub unit: &'static str,
    /// Its value in one station's sample; `None` is not drawn (an unbounded
    /// ssthresh, no RTT sample yet).
    pub one: fn(&TcpSample) -> Option<f64>,
    /// Its value in a mean sample; `None` is not drawn (no station had a
    /// bounded ssthresh or an RTT sample).
    pub mean: fn(&MeanSample) -> Option<f64>,
}

/// The paper's traces: cwnd, ssthresh, RTO and RTT.
pub const VARIABLES: [Variable; 4] = [
    Variable {
        id: "cwnd",
        what: "cwnd",
        unit: "congestion window (bytes)",
        one: |s| Some(s.cwnd as f64),
        mean: |m| Some(m.cwnd),
    },
    Variable {
        id: "ssthresh",
        what: "ssthresh",
        unit: "slow-start threshold (bytes)",
        one: |s| (s.ssthresh < u64::from(u32::MAX)).then_some(s.ssthresh as f64),
        mean: |m| (m.ssthresh > 0.0).then_some(m.ssthresh),
    },
    Variable {
        id: "rto",
        what: "RTO",
        unit: "RTO in force (s)",
        one: |s| Some(s.rto),
        mean: |m| Some(m.rto),
    },
    Variable {
        id: "rtt",
        what: "RTT",
        unit: "smoothed RTT (s)",
        one: |s| (s.srtt > 0.0).then_some(s.srtt),
        mean: |m| (m.srtt > 0.0).then_some(m.srtt),
    },
];

/// Which time series: station 1 of one replication, or the mean.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Which {
    /// Station 1 of the first stored replication.
    One,
    /// The mean over stations and replications.
    Mean,
}

impl Which {
    /// File-name part.
    pub fn id(self) -> &'static str {
        match self {
            Which::One => "one",
            Which::Mean => "mean",
        }
    }
}

/// The colour of a flavour.
pub fn colour(r: &StarReport, label: &str) -> &'static str {
    PALETTE[r.labels.iter().position(|l| l == label).unwrap_or(0) % PALETTE.len()]
}

/// The heading of a set's station count.
pub fn point_group(set: &str, stations: u32) -> String {
    format!("{set} · {stations} stations")
}

/// The heading of a row of time series: one variable (full length or
/// zoomed) at one station count.
pub fn series_group(point_group: &str, v: &Variable, zoomed: bool) -> String {
    if zoomed {
        format!("{point_group} · {}, first {ZOOM_S} s", v.what)
    } else {
        format!("{point_group} · {}", v.what)
    }
}

/// The file-name stem of a set's station count.
pub fn point_stem(set: &str, stations: u32) -> String {
    format!("{}-{stations}", stem(set))
}

fn bars(r: &StarReport, set: &StarSet, out: &mut Vec<Figure>) {
    for &p in &set.points {
        for m in &METRICS {
            let items: Vec<Bar> = set
                .labels
                .iter()
                .map(|l| Bar {
                    label: l.clone(),
                    value: r.cell(&set.name, p, l).map(|c| {
                        let e = (m.get)(&c.summary);
                        (e.mean, e.ci95)
                    }),
                    colour: colour(r, l),
                })
                .collect();
            out.push(Figure {
                kind: "bars",
                group: point_group(&set.name, p),
                file: format!("{}-{}.svg", point_stem(&set.name, p), m.id),
                svg: bar_chart(
                    &format!("{} · {}", m.what, point_group(&set.name, p)),
                    m.unit,
                    &items,
                ),
            });
        }
    }
}

fn sweep(r: &StarReport, set: &StarSet, out: &mut Vec<Figure>) {
    for m in &METRICS {
        let mut series: Vec<Series> = set
            .labels
            .iter()
            .map(|l| Series {
                label: l.clone(),
                colour: colour(r, l),
                style: Style::Line { dashed: false },
                points: set
                    .points
                    .iter()
                    .filter_map(|&p| r.cell(&set.name, p, l))
                    .map(|c| {
                        let e = (m.get)(&c.summary);
                        XyPoint {
                            x: f64::from(c.cell.stations),
                            y: e.mean,
                            ci: e.ci95,
                        }
                    })
                    .collect(),
            })
            .collect();
        if m.id == "goodput" {
            // The offered load, the same for every flavour.
            let mut offered: Vec<XyPoint> = Vec::new();
            for &p in &set.points {
                if let Some(c) = set.labels.iter().find_map(|l| r.cell(&set.name, p, l)) {
                    offered.push(XyPoint {
                        x: f64::from(p),
                        y: c.summary.offered_bps * 1e-3,
                        ci: 0.0,
                    });
                }
            }
            series.push(Series {
                label: "offered load".into(),
                colour: "#777777",
                style: Style::Line { dashed: true },
                points: offered,
            });
        }
        let axes = Axes {
            title: format!("{} · {}", m.what, set.name),
            x_label: "stations".into(),
            y_label: m.unit.into(),
            x_scale: Scale::Linear,
            y_from_zero: true,
            diagonal: false,
        };
        out.push(set_figure("sweep", &set.name, m.id, &axes, &series));
    }
}

/// The points of one flavour's time series of `v`, up to `until` s.
pub fn series_points(s: &star::Summary, v: &Variable, which: Which, until: f64) -> Vec<XyPoint> {
    let pt = |t: f64, y: Option<f64>| {
        y.filter(|_| t <= until)
            .map(|y| XyPoint { x: t, y, ci: 0.0 })
    };
    match which {
        Which::One => s
            .one_station
            .iter()
            .filter_map(|q| pt(q.t, (v.one)(q)))
            .collect(),
        Which::Mean => s.mean.iter().filter_map(|q| pt(q.t, (v.mean)(q))).collect(),
    }
}

fn time_series(r: &StarReport, set: &StarSet, stations: u32, out: &mut Vec<Figure>) {
    let group = point_group(&set.name, stations);
    let shown: Vec<String> = set
        .labels
        .iter()
        .filter_map(|l| r.cell(&set.name, stations, l))
        .filter_map(|c| {
            c.shown
                .filter(|&s| s != 0)
                .map(|s| format!("{}: {s}", c.cell.label))
        })
        .collect();
    let one_what = if shown.is_empty() {
        "station 1, replication 0".to_string()
    } else {
        format!("station 1, first stored replication ({})", shown.join(", "))
    };
    let figure = |v: &Variable, which: Which, until: f64| -> Figure {
        let series: Vec<Series> = set
            .labels
            .iter()
            .filter_map(|l| r.cell(&set.name, stations, l))
            .map(|c| Series {
                label: c.cell.label.clone(),
                colour: colour(r, &c.cell.label),
                style: Style::Trace,
                points: series_points(&c.summary, v, which, until),
            })
            .collect();
        let zoomed = until.is_finite();
        let title = format!(
            "{}{} · {} · {stations} stations",
            v.what,
            if zoomed {
                format!(", first {ZOOM_S} s")
            } else {
                String::new()
            },
            match which {
                Which::One => one_what.clone(),
                Which::Mean => "mean over stations and replications".into(),
            }
        );
        let axes = Axes {
            title,
            x_label: "time since the start of the run (s)".into(),
            y_label: v.unit.into(),
            x_scale: Scale::Linear,
            y_from_zero: true,
            diagonal: false,
        };
        Figure {
            kind: "series",
            group: series_group(&group, v, zoomed),
            file: format!(
                "{}-{}-{}{}.svg",
                point_stem(&set.name, stations),
                v.id,
                which.id(),
                if zoomed {
                    format!("-{ZOOM_S}s")
                } else {
                    String::new()
                }
            ),
            svg: xy_plot(&axes, &series),
        }
    };
    for v in &VARIABLES {
        for which in [Which::One, Which::Mean] {
            out.push(figure(v, which, f64::INFINITY));
        }
    }
    for which in [Which::One, Which::Mean] {
        out.push(figure(&VARIABLES[0], which, ZOOM_S));
    }
}

/// Every figure of a star report: set by set the bars and the sweeps, then
/// the time series.
pub fn figures(r: &StarReport) -> Vec<Figure> {
    let mut out = Vec::new();
    for set in &r.sets {
        bars(r, set, &mut out);
        if set.points.len() > 1 {
            sweep(r, set, &mut out);
        }
    }
    for (name, stations) in &r.series_points {
        if let Some(set) = r.sets.iter().find(|s| &s.name == name) {
            time_series(r, set, *stations, &mut out);
        }
    }
    out
}
