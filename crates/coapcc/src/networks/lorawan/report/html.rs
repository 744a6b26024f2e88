//! The self-contained HTML page of a LoRaWAN report: provenance, then point
//! by point the figures inline, the tables, and the campaign file. No
//! external resources.

use std::fmt::Write;

use super::data::LorawanReport;
use crate::report::html::{esc, figure_row, footer, header, tables_section};
use crate::report::tables::Table;
use crate::report::{stem, Figure};

/// The whole page.
pub fn page(r: &LorawanReport, figures: &[Figure], tables: &[Table]) -> String {
    let (done, planned) = r.progress();
    let mut s = header(&r.definition, &r.others, done, planned);
    s.push_str(
        "<p>CoAP over LoRaWAN class A (EU868, one gateway; <code>docs/lorawan.md</code>). \
         Every device sends a Confirmable request every T seconds; the server's piggybacked \
         response rides the device's RX windows. Each bar is the mean over the finished \
         replications with its 95 % confidence interval (Student's t). The delivery ratio is \
         exchanges completed / started; completion time runs from a request's first \
         transmission to its response; boxes show the completion-time percentiles (10th, \
         25th, median, 75th, 90th, min and max), each averaged over the replications. Every \
         figure is also an SVG file and every table a CSV file beside this page.</p>\n<ul>",
    );
    for p in &r.points {
        let _ = write!(
            s,
            "<li><a href=\"#{}\">{}</a></li>",
            stem(&p.name()),
            esc(&p.name())
        );
    }
    s.push_str("<li><a href=\"#tables\">Tables</a></li><li><a href=\"#file\">Campaign file</a></li></ul>\n");
    for p in &r.points {
        let _ = writeln!(s, "<h2 id=\"{}\">{}</h2>", stem(&p.name()), esc(&p.name()));
        figure_row(&mut s, figures, "point", &p.name());
    }
    tables_section(&mut s, tables, |_| true);
    s.push_str(&footer(&r.definition));
    s
}
