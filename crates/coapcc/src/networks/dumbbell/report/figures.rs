//! The figures of a dumbbell report: FCT and unnecessary-retransmission box
//! plots, one per panel (client count and buffer); for observing panels the
//! notification delay, for block-wise panels the transfer time.

use coapcc_sim::{Summary, WorkloadKind};

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
        "delay" => s
            .observe
            .as_ref()
            .filter(|o| o.delivered > 0)
            .map(|o| o.delay),
        "transfer" => s
            .transfers
            .as_ref()
            .filter(|t| t.completed > 0)
            .map(|t| t.completion),
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
        ("delay", "notification delay (s)", "Delay"),
        ("transfer", "transfer completion time (s)", "Transfer time"),
    ] {
        let own = |w: WorkloadKind| match kind {
            "delay" => w == WorkloadKind::Observe,
            "transfer" => w == WorkloadKind::Blockwise,
            _ => true,
        };
        for p in r.panels.iter().filter(|p| own(p.workload)) {
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
