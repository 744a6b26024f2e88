//! The figures of a LoRaWAN report: per point (devices × period), the
//! algorithms side by side — delivery ratio, mean completion time and
//! retransmissions per exchange as bars with their 95 % confidence
//! intervals, and the completion-time percentiles as boxes.

use coapcc_sim::lorawan;
use coapcc_sim::metrics::Estimate;

use super::data::{LorawanReport, Point};
use crate::report::svg::bars::{bar_chart, Bar};
use crate::report::svg::{box_plot, BoxItem, PALETTE};
use crate::report::{stem, Figure};

/// One metric drawn as bars: file-name part, title, y axis, value.
type Metric = (
    &'static str,
    &'static str,
    &'static str,
    fn(&lorawan::Summary) -> Estimate,
);

const BARS: [Metric; 3] = [
    (
        "delivery",
        "Delivery ratio",
        "exchanges completed / started",
        |s| s.delivery_ratio,
    ),
    (
        "completion",
        "Mean completion time",
        "completion time (s)",
        |s| s.completion_mean,
    ),
    (
        "retransmissions",
        "Retransmissions per exchange",
        "retransmissions per started exchange",
        |s| s.retransmissions_per_exchange,
    ),
];

/// The colour of an algorithm, by its first appearance in the campaign.
fn colour(r: &LorawanReport, label: &str) -> &'static str {
    let i = r.labels.iter().position(|l| l == label).unwrap_or(0);
    PALETTE[i % PALETTE.len()]
}

fn figure(p: &Point, id: &str, svg: String) -> Figure {
    Figure {
        kind: "point",
        group: p.name(),
        file: format!(
            "lorawan-{}-{}-{}-{}.svg",
            stem(&p.set),
            p.devices,
            stem(&p.period.to_string()),
            id
        ),
        svg,
    }
}

/// Every figure of the report.
pub fn figures(r: &LorawanReport) -> Vec<Figure> {
    let mut out = Vec::new();
    for p in &r.points {
        for (id, what, unit, get) in BARS {
            let bars: Vec<Bar> = r
                .cells_at(p)
                .map(|c| Bar {
                    label: c.cell.label.clone(),
                    value: (c.done > 0).then(|| {
                        let e = get(&c.summary);
                        (e.mean, e.ci95)
                    }),
                    colour: colour(r, &c.cell.label),
                })
                .collect();
            let title = format!("{what} — {} devices, T = {} s", p.devices, p.period);
            out.push(figure(p, id, bar_chart(&title, unit, &bars)));
        }
        let boxes: Vec<BoxItem> = r
            .cells_at(p)
            .map(|c| BoxItem {
                label: c.cell.label.clone(),
                stats: (c.done > 0 && c.summary.completion.max > 0.0)
                    .then_some(c.summary.completion),
                colour: colour(r, &c.cell.label),
                dashed: false,
            })
            .collect();
        let title = format!(
            "Completion time percentiles — {} devices, T = {} s",
            p.devices, p.period
        );
        out.push(figure(
            p,
            "percentiles",
            box_plot(&title, "completion time (s)", &boxes),
        ));
    }
    out
}
