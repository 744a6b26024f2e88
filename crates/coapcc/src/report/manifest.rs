//! The list of files a report wrote into its directory (`.coapcc-report`),
//! so the next report into the same directory removes the ones it does not
//! write again — and nothing else.
//!
//! Every file is written by [`put`]: into a new file beside it, renamed over
//! it. A symbolic link planted under one of the report's names is replaced,
//! never written through, so a report writes only inside its directory.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// The manifest's file name, in the report directory.
pub const MANIFEST: &str = ".coapcc-report";

/// The files the previous report in `out` wrote (none without a manifest).
/// Only plain file names are taken: a manifest cannot point outside `out`;
/// a manifest that is a symbolic link is not read.
pub fn previous(out: &Path) -> BTreeSet<String> {
    let p = out.join(MANIFEST);
    if std::fs::symlink_metadata(&p).is_ok_and(|m| !m.is_file()) {
        return BTreeSet::new();
    }
    std::fs::read_to_string(p)
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
    put(out, MANIFEST, &text).map(drop)
}

/// Writes `text` as the file `name` (a plain name) of `dir`: into a new file
/// created beside it (never through a link: `O_EXCL`), then renamed over
/// `name`, which replaces whatever `name` was — a link included — instead of
/// following it. A reader sees the old file or the new one, never half of it.
pub fn put(dir: &Path, name: &str, text: &str) -> Result<PathBuf> {
    use std::io::Write;
    let p = dir.join(name);
    let tmp = dir.join(format!(".{name}.{}.part", std::process::id()));
    let write = || -> std::io::Result<()> {
        // a leftover of a killed report, or a link planted there: removed,
        // never followed
        match std::fs::remove_file(&tmp) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        f.write_all(text.as_bytes())?;
        drop(f);
        std::fs::rename(&tmp, &p)
    };
    write()
        .inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })
        .with_context(|| format!("{}: cannot write", p.display()))?;
    Ok(p)
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
