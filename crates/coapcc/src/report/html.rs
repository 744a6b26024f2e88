//! The self-contained HTML page of a report: provenance, measured vs published,
//! the FCT and unnecessary-retransmission box plots inline, the tables, and the
//! campaign file. No external resources.

use std::fmt::Write;

use super::data::Report;
use super::tables::Table;
use super::Figure;
use crate::store::Definition;

/// Escapes text for HTML.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// `YYYY-MM-DD HH:MM UTC` from Unix seconds (proleptic Gregorian calendar).
pub fn utc(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Days to civil date (the well-known era-based conversion).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02} UTC",
        rem / 3600,
        (rem % 3600) / 60
    )
}

/// The page's style sheet.
pub const STYLE: &str = "
body{font-family:Helvetica,Arial,sans-serif;margin:24px;color:#222;max-width:1900px}
h1{font-size:24px;margin-bottom:4px}h2{border-bottom:1px solid #ccc;padding-bottom:4px;margin-top:32px}
h3{font-size:15px;margin:18px 0 6px}
.meta{background:#f6f6f6;border:1px solid #ddd;padding:8px 14px;font-size:13px}
.meta td{padding:2px 10px 2px 0;vertical-align:top}.warn{color:#a40}
.figs{display:flex;flex-wrap:wrap;gap:8px}figure{margin:0;border:1px solid #eee}
figcaption{font-size:11px;text-align:center;color:#666;padding-bottom:3px}
table{border-collapse:collapse;font-size:12px;margin:6px 0}
th,td{border:1px solid #ddd;padding:2px 6px}td{white-space:nowrap}th{background:#eee;position:sticky;top:0}
td.n{text-align:right;font-variant-numeric:tabular-nums}tr:nth-child(even){background:#fafafa}
pre{background:#f6f6f6;padding:8px;font-size:12px;overflow:auto}
.scroll{max-height:640px;overflow:auto}
";

/// The top of a report page: the document head, the campaign's name, title
/// and description, and its provenance (definition, model version, file,
/// times, runs in the store, skipped algorithms, definitions not shown).
pub fn header(d: &Definition, others: &[Definition], done: u64, planned: u64) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>coapcc report: {}</title><style>{STYLE}</style></head><body>",
        esc(&d.name)
    );
    let _ = writeln!(s, "<h1>Campaign <code>{}</code></h1>", esc(&d.name));
    if !d.title.is_empty() {
        let _ = writeln!(s, "<p><b>Reproduces:</b> {}</p>", esc(&d.title));
    }
    if !d.description.is_empty() {
        let _ = writeln!(s, "<p>{}</p>", esc(&d.description));
    }
    let _ = write!(
        s,
        "<div class=\"meta\"><table><tr><td>definition</td><td><code>{}</code></td></tr>\
         <tr><td>model version</td><td>{}</td></tr>\
         <tr><td>campaign file</td><td>{}</td></tr>\
         <tr><td>first run / last run</td><td>{} / {}</td></tr>\
         <tr><td>runs in the store</td><td{}>{done} of {planned}{}</td></tr>",
        esc(&d.hash),
        esc(&d.model_version),
        esc(&d.source),
        utc(d.first_seen),
        utc(d.last_run),
        if done < planned {
            " class=\"warn\""
        } else {
            ""
        },
        if done < planned {
            " — incomplete: figures use the replications finished so far"
        } else {
            ""
        }
    );
    if !d.skipped.is_empty() {
        let names: Vec<String> = d
            .skipped
            .iter()
            .map(|k| format!("<code>{}</code>", esc(&k.name)))
            .collect();
        let _ = write!(
            s,
            "<tr><td>skipped</td><td class=\"warn\">{} (not available in the build that ran it)</td></tr>",
            names.join(", ")
        );
    }
    if !others.is_empty() {
        let others: Vec<String> = others
            .iter()
            .map(|o| {
                format!(
                    "<code>{}</code> {} (last run {})",
                    esc(&o.name),
                    &o.hash[..12],
                    utc(o.last_run)
                )
            })
            .collect();
        let _ = write!(
            s,
            "<tr><td>not shown</td><td>other definitions in this store: {}</td></tr>",
            others.join("; ")
        );
    }
    s.push_str("</table></div>\n");
    s
}

/// The end of a report page: the campaign file as run.
pub fn footer(d: &Definition) -> String {
    format!(
        "<h2 id=\"file\">Campaign file</h2>\n<pre>{}</pre>\n</body></html>\n",
        esc(&d.text)
    )
}

/// The whole page.
pub fn page(r: &Report, figures: &[Figure], tables: &[Table]) -> String {
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
        ("transmissions", "Transmissions per exchange"),
        ("summary", "Summary"),
        ("file", "Campaign file"),
    ] {
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
            "<p>Published figures of the constrained-link testbed (shared spec \
             <code>calibration.md</code> §1) beside the measured ones; Δ = (measured − \
             published) / published.</p>\n",
        );
        s.push_str(&t.html());
    }
    for (kind, heading) in [
        ("fct", "Flow completion time"),
        ("unnecessary", "Unnecessary retransmissions per client"),
    ] {
        let _ = writeln!(s, "<h2 id=\"{kind}\">{heading}</h2>");
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_dates() {
        assert_eq!(utc(0), "1970-01-01 00:00 UTC");
        assert_eq!(utc(951_782_400), "2000-02-29 00:00 UTC");
        assert_eq!(utc(1_700_000_000), "2023-11-14 22:13 UTC");
    }
}
