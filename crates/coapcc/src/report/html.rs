//! What every report page shares: its head and provenance, its figure rows,
//! its end (the campaign file), and HTML escaping. No external resources.

use std::fmt::Write;

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

/// The tables section: each table's heading, a link to its CSV file and its
/// row count, and the table itself where `inline` says so for its id (long
/// tables stay in their CSV files only).
pub fn tables_section(s: &mut String, tables: &[Table], inline: impl Fn(&str) -> bool) {
    s.push_str("<h2 id=\"tables\">Tables</h2>\n");
    for t in tables {
        let _ = write!(
            s,
            "<h3 id=\"{}\">{}</h3>\n<p><a href=\"{}.csv\">{}.csv</a> ({} rows)</p>",
            t.id,
            esc(t.title),
            t.id,
            t.id,
            t.rows.len()
        );
        if inline(t.id) {
            let _ = write!(s, "<div class=\"scroll\">{}</div>", t.html());
        }
        s.push('\n');
    }
}

/// The end of a report page: the campaign file as run.
pub fn footer(d: &Definition) -> String {
    format!(
        "<h2 id=\"file\">Campaign file</h2>\n<pre>{}</pre>\n</body></html>\n",
        esc(&d.text)
    )
}

/// The figures of `kind` and `group`, inline in one row with links to their
/// files (or a line saying there is nothing to draw).
pub fn figure_row(s: &mut String, figures: &[Figure], kind: &str, group: &str) {
    let mut any = false;
    for f in figures
        .iter()
        .filter(|f| f.kind == kind && f.group == group)
    {
        if !any {
            s.push_str("<div class=\"figs\">");
            any = true;
        }
        let _ = writeln!(
            s,
            "<figure>{}<figcaption><a href=\"{}\">{}</a></figcaption></figure>",
            f.svg,
            esc(&f.file),
            esc(&f.file)
        );
    }
    if any {
        s.push_str("</div>\n");
    } else {
        s.push_str("<p>No finished run to draw.</p>\n");
    }
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
