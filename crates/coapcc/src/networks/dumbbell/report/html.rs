//! The self-contained HTML page of a dumbbell report: provenance, measured
//! vs published, the FCT and unnecessary-retransmission box plots inline, the
//! tables, and the campaign file. No external resources.

use std::fmt::Write;

use super::data::DumbbellReport;
use crate::report::html::{esc, footer, header};
use crate::report::tables::Table;
use crate::report::Figure;

/// Whether the page has section `id`: the observe and block-wise sections
/// only when the campaign has such cells (then they have figures).
fn has_section(id: &str, figures: &[Figure]) -> bool {
    match id {
        "delay" | "transfer" => figures.iter().any(|f| f.kind == id),
        _ => true,
    }
}

/// The table shown in a workload's section.
fn workload_table(kind: &str) -> Option<&'static str> {
    match kind {
        "delay" => Some("observe"),
        "transfer" => Some("transfers"),
        _ => None,
    }
}

/// The whole page.
pub fn page(r: &DumbbellReport, figures: &[Figure], tables: &[Table]) -> String {
    let (done, planned) = r.progress();
    let mut s = header(&r.definition, &r.others, done, planned);
    s.push_str(
        "<p>Box plots: box = 25th–75th percentile, whiskers = 10th and 90th percentile, \
         line = median, over all clients of all replications. Dashed boxes are groups of a \
         mixed population. Every figure is also an SVG file and every table a CSV file beside \
         this page.</p>\n<ul>",
    );
    for (id, name) in [
        ("published", "Measured vs published"),
        ("fct", "Flow completion time"),
        ("unnecessary", "Unnecessary retransmissions per client"),
        ("delay", "Observe"),
        ("transfer", "Block-wise transfers"),
        ("transmissions", "Transmissions per exchange"),
        ("summary", "Summary"),
        ("file", "Campaign file"),
    ] {
        if !has_section(id, figures) {
            continue;
        }
        let _ = write!(s, "<li><a href=\"#{id}\">{name}</a></li>");
    }
    s.push_str("</ul>\n");

    let table = |id: &str| tables.iter().find(|t| t.id == id).expect("table exists");
    let t = table("published");
    let _ = writeln!(s, "<h2 id=\"published\">{}</h2>", t.title);
    if t.rows.is_empty() {
        s.push_str("<p>No published figure matches a cell of this campaign.</p>\n");
    } else {
        s.push_str(
            "<p>Published figures of the constrained-link testbed (the project's specification, \
             <code>docs/spec/calibration-spec.md</code> §1) beside the measured ones; Δ = (measured − \
             published) / published.</p>\n",
        );
        s.push_str(&t.html());
    }
    for (kind, heading) in [
        ("fct", "Flow completion time"),
        ("unnecessary", "Unnecessary retransmissions per client"),
        ("delay", "Observe: notification delay"),
        ("transfer", "Block-wise transfers: completion time"),
    ] {
        if !has_section(kind, figures) {
            continue;
        }
        let _ = writeln!(s, "<h2 id=\"{kind}\">{heading}</h2>");
        if let Some(t) = workload_table(kind).and_then(|id| tables.iter().find(|t| t.id == id)) {
            let _ = writeln!(
                s,
                "<p>{}; percentiles are means over replications. <a href=\"{id}.csv\">{id}.csv</a></p><div class=\"scroll\">{}</div>",
                t.title,
                t.html(),
                id = t.id
            );
        }
        // One row per heading, in order of first appearance.
        let of_kind: Vec<&Figure> = figures.iter().filter(|f| f.kind == kind).collect();
        let mut groups: Vec<&str> = Vec::new();
        for f in &of_kind {
            if !groups.contains(&f.group.as_str()) {
                groups.push(&f.group);
            }
        }
        for g in groups {
            let _ = writeln!(s, "<h3>{}</h3><div class=\"figs\">", esc(g));
            for f in of_kind.iter().filter(|f| f.group == g) {
                let _ = writeln!(
                    s,
                    "<figure>{}<figcaption><a href=\"{}\">{}</a></figcaption></figure>",
                    f.svg,
                    esc(&f.file),
                    esc(&f.file)
                );
            }
            s.push_str("</div>\n");
        }
    }
    for id in ["transmissions", "summary"] {
        let t = table(id);
        let _ = writeln!(
            s,
            "<h2 id=\"{id}\">{}</h2>\n<p><a href=\"{id}.csv\">{id}.csv</a></p><div class=\"scroll\">{}</div>",
            t.title,
            t.html()
        );
    }
    s.push_str(&footer(&r.definition));
    s
}
