//! A report's tables, each rendered both as HTML and as CSV from one value.

use std::fmt::Write;

/// A table: an id (file stem), a title, a header and rows of text cells.
#[derive(Clone, Debug)]
pub struct Table {
    /// File stem of the CSV and HTML anchor.
    pub id: &'static str,
    /// Heading.
    pub title: &'static str,
    /// Column names.
    pub header: Vec<String>,
    /// Rows.
    pub rows: Vec<Vec<String>>,
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

impl Table {
    /// RFC 4180 CSV: CRLF line ends, fields with commas, quotes or line breaks
    /// quoted, quotes doubled.
    pub fn csv(&self) -> String {
        let field = |f: &str| {
            if f.contains([',', '"', '\n', '\r']) {
                format!("\"{}\"", f.replace('"', "\"\""))
            } else {
                f.to_string()
            }
        };
        let mut s = String::new();
        for row in std::iter::once(&self.header).chain(&self.rows) {
            let line: Vec<String> = row.iter().map(|f| field(f)).collect();
            s.push_str(&line.join(","));
            s.push_str("\r\n");
        }
        s
    }

    /// An HTML `<table>`; cells that parse as numbers are right-aligned.
    pub fn html(&self) -> String {
        let mut s = format!("<table id=\"table-{}\"><thead><tr>", self.id);
        for h in &self.header {
            let _ = write!(s, "<th>{}</th>", esc(h));
        }
        s.push_str("</tr></thead><tbody>\n");
        for row in &self.rows {
            s.push_str("<tr>");
            for f in row {
                let numeric = f
                    .trim_start_matches(['+', '-'])
                    .trim_end_matches('%')
                    .parse::<f64>()
                    .is_ok();
                if numeric {
                    let _ = write!(s, "<td class=\"n\">{}</td>", esc(f));
                } else {
                    let _ = write!(s, "<td>{}</td>", esc(f));
                }
            }
            s.push_str("</tr>\n");
        }
        s.push_str("</tbody></table>\n");
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strs(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn csv_quotes_what_it_must() {
        let t = Table {
            id: "x",
            title: "x",
            header: strs(&["a", "b"]),
            rows: vec![strs(&["1,5", "say \"hi\""]), strs(&["plain", "≥6"])],
        };
        assert_eq!(t.csv(), "a,b\r\n\"1,5\",\"say \"\"hi\"\"\"\r\nplain,≥6\r\n");
        let h = t.html();
        assert!(h.contains("<td>say \"hi\"</td>"));
        assert!(h.contains("<th>a</th>"));
    }
}
