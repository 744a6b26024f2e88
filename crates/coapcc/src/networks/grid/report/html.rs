//! The self-contained HTML page of a grid report: provenance, then set by set
//! the figures inline, the tables, and the campaign file. No external
//! resources.

use std::fmt::Write;

use coapcc_sim::grid;

use super::data::{GridReport, GridSet};
use crate::networks::grid::campaign::plan::point_text;
use crate::report::html::{esc, figure_row, footer, header, tables_section};
use crate::report::stem;
use crate::report::tables::Table;
use crate::report::Figure;

/// A line saying what a set runs.
fn describe(r: &GridReport, set: &GridSet) -> String {
    let Some(c) = r.cells.iter().find(|c| c.cell.set == set.name) else {
        return String::new();
    };
    let w = &c.cell.spec.workload;
    let points: Vec<String> = set.points.iter().map(|&p| point_text(p)).collect();
    let what = match set.kind {
        grid::WorkloadKind::Periodic => format!(
            "Every client under test sends a {}-byte Confirmable POST every T ∈ {{{}}} s",
            c.cell.spec.coap.request_size,
            points.join(", ")
        ),
        grid::WorkloadKind::Bursty => format!(
            "Nodes {:?} interfere ON {{{}}} s / OFF {} s; the other clients send every {} s",
            w.interferers,
            points.join(", "),
            point_text(w.off_s),
            point_text(w.period_s)
        ),
    };
    format!(
        "{what}; {} s of traffic after a {} s warm-up; {} replications per point and algorithm.",
        point_text(w.duration_s),
        point_text(w.warmup_s),
        c.cell.keys.len()
    )
}

/// The whole page.
pub fn page(r: &GridReport, figures: &[Figure], tables: &[Table]) -> String {
    let (done, planned) = r.progress();
    let mut s = header(&r.definition, &r.others, done, planned);
    s.push_str(
        "<p>The 802.15.4 grid of the pCoCoA evaluation. Every point is the mean over the \
         finished replications, with its 95 % confidence interval (Student's t) as error bar. \
         Loads are bytes per second of request messages: the <i>nominal offered</i> load is \
         clients × request size / T (the x axis of the periodic figures, on a log scale), the \
         <i>actual offered</i> load counts requests sent at least once, the <i>carried</i> load \
         distinct requests the server received. Per transaction: over exchanges that \
         completed. MAC figures count every node. Every figure is also an SVG file and every \
         table a CSV file beside this page.</p>\n<ul>",
    );
    for set in &r.sets {
        let _ = write!(
            s,
            "<li><a href=\"#set-{}\">{} sweep <code>{}</code></a></li>",
            stem(&set.name),
            if set.kind == grid::WorkloadKind::Periodic {
                "Periodic"
            } else {
                "Bursty"
            },
            esc(&set.name)
        );
    }
    s.push_str("<li><a href=\"#tables\">Tables</a></li><li><a href=\"#file\">Campaign file</a></li></ul>\n");
    for set in &r.sets {
        let _ = writeln!(
            s,
            "<h2 id=\"set-{}\">{} sweep <code>{}</code></h2>\n<p>{}</p>",
            stem(&set.name),
            if set.kind == grid::WorkloadKind::Periodic {
                "Periodic"
            } else {
                "Bursty"
            },
            esc(&set.name),
            esc(&describe(r, set))
        );
        match set.kind {
            grid::WorkloadKind::Periodic => {
                s.push_str("<h3>Loads, transmissions and MAC losses vs offered load</h3>\n");
                figure_row(&mut s, figures, "periodic", &set.name);
                s.push_str(
                    "<h3>Carried load per node (B/s)</h3>\n<p>One colour scale per period; \
                     BR = border router, S = server; hover for the confidence interval.</p>\n",
                );
                for &p in &set.heat_points {
                    let g = format!("{} · T = {} s", set.name, point_text(p));
                    let _ = writeln!(s, "<h4>T = {} s</h4>", point_text(p));
                    figure_row(&mut s, figures, "nodes", &g);
                }
                let node = r
                    .cells
                    .iter()
                    .find(|c| c.cell.set == set.name)
                    .and_then(|c| c.cell.spec.workload.trace_node);
                match node {
                    Some(n) => {
                        let _ = writeln!(
                            s,
                            "<h3>RTO and RTT of node {n}</h3>\n<p>One replication: the timer \
                             armed for each original transmission (RTO), each backed-off \
                             timer, and each RTT sample, over time.</p>"
                        );
                        for &p in &set.trace_points {
                            let g = format!("{} · T = {} s", set.name, point_text(p));
                            let _ = writeln!(s, "<h4>T = {} s</h4>", point_text(p));
                            figure_row(&mut s, figures, "trace", &g);
                        }
                    }
                    None => s.push_str(
                        "<p>No node is traced (set <code>trace_node</code> in the campaign's \
                         <code>[workload]</code> to draw RTO/RTT traces).</p>\n",
                    ),
                }
            }
            grid::WorkloadKind::Bursty => {
                s.push_str(
                    "<h3>Transmissions per transaction and carried load vs ON duration</h3>\n",
                );
                figure_row(&mut s, figures, "bursty", &set.name);
            }
        }
    }
    // The long per-node and trace tables stay in their CSV files.
    tables_section(&mut s, tables, |id| {
        id == "grid-periodic" || id == "grid-bursty"
    });
    s.push_str(&footer(&r.definition));
    s
}
