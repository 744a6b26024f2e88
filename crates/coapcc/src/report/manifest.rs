//! The list of files a report wrote into its directory (`.coapcc-report`),
//! so the next report into the same directory removes the ones it does not
//! write again — and nothing else.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// The manifest's file name, in the report directory.
pub const MANIFEST: &str = ".coapcc-report";

/// The files the previous report in `out` wrote (none without a manifest).
/// Only plain file names are taken: a manifest cannot point outside `out`.
pub fn previous(out: &Path) -> BTreeSet<String> {
    std::fs::read_to_string(out.join(MANIFEST))
        .map(|text| {
            text.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .filter(|l| !l.contains(['/', '\\']) && *l != "." && *l != "..")
                .map(String::from)
                .collect()
        })
        .unwrap_or_default()
}

/// Removes the files of `previous` that `written` does not contain; returns
/// their paths.
pub fn prune(out: &Path, previous: &BTreeSet<String>, written: &[&str]) -> Result<Vec<PathBuf>> {
    let mut removed = Vec::new();
    for name in previous.iter().filter(|n| !written.contains(&n.as_str())) {
        let p = out.join(name);
        match std::fs::remove_file(&p) {
            Ok(()) => removed.push(p),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(e).with_context(|| {
                    format!(
                        "{}: cannot remove this file of the previous report",
                        p.display()
                    )
                })
            }
        }
    }
    Ok(removed)
}

/// Records `written` as the files of the report in `out`.
pub fn record(out: &Path, written: &[&str]) -> Result<()> {
    let mut text =
        String::from("# files written by `coapcc report`; the next report removes them\n");
    for w in written {
        text.push_str(w);
        text.push('\n');
    }
    let p = out.join(MANIFEST);
    std::fs::write(&p, text).with_context(|| format!("{}: cannot write", p.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prunes_only_what_the_previous_report_wrote() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        for f in ["a.svg", "b.svg", "mine.txt"] {
            std::fs::write(d.join(f), "x").unwrap();
        }
        std::fs::write(
            d.join(MANIFEST),
            "# comment\na.svg\nb.svg\n../escape.svg\n/etc/passwd\ngone.svg\n",
        )
        .unwrap();
        let prev = previous(d);
        assert_eq!(prev.len(), 3, "{prev:?}");
        let removed = prune(d, &prev, &["a.svg"]).unwrap();
        assert_eq!(removed, vec![d.join("b.svg")]);
        assert!(d.join("a.svg").exists() && d.join("mine.txt").exists());
        record(d, &["a.svg"]).unwrap();
        assert_eq!(previous(d).into_iter().collect::<Vec<_>>(), vec!["a.svg"]);
        assert!(previous(&d.join("none")).is_empty());
    }
}
