//! The figures of a dumbbell report: FCT and unnecessary-retransmission box
//! plots, one per panel (client count and buffer).

use coapcc_sim::Summary;

use super::data::DumbbellReport;
use crate::report::svg::{self, BoxItem, PALETTE};
use crate::report::Figure;

/// The box of one group: FCT or unnecessary retransmissions.
fn item(
    r: &DumbbellReport,
    label: &str,
    alg: &str,
    dashed: bool,
    s: &Summary,
    kind: &str,
) -> BoxItem {
    let colour = PALETTE[r.labels.iter().position(|l| l == alg).unwrap_or(0) % PALETTE.len()];
    let finished = s.clients - s.unfinished_clients;
    let stats = match kind {
        "fct" if finished > 0 => Some(s.fct),
        "unnecessary" if s.clients > 0 => Some(s.unnecessary),
        _ => None,
    };
    BoxItem {
        label: label.to_string(),
        stats,
        colour,
        dashed,
    }
}

/// Every figure of the report, in campaign order.
pub fn figures(r: &DumbbellReport) -> Vec<Figure> {
    let mut out = Vec::new();
    for (kind, unit, what) in [
        ("fct", "flow completion time (s)", "FCT"),
        (
            "unnecessary",
            "unnecessary retransmissions per client",
            "unnecessary",
        ),
    ] {
        for p in &r.panels {
            let mut items = Vec::new();
            for &i in &p.cells {
                let c = &r.cells[i];
                for g in &c.groups {
                    items.push(item(
                        r,
                        &g.label,
                        g.algorithm.label(),
                        c.cell.mixed,
                        &g.summary,
                        kind,
                    ));
                }
            }
            let title = p.title();
            out.push(Figure {
                kind,
                group: p.row_title(),
                file: format!("{kind}-{}.svg", p.stem()),
                svg: svg::box_plot(&format!("{what}: {title}"), unit, &items),
            });
        }
    }
    out
}
