//! The list of files a report wrote into its directory (`.coapcc-report`),
//! so the next report into the same directory removes the ones it does not
//! write again — and nothing else.
//!
//! A whole report is written by [`replace`]: every file into a new folder
//! beside them first; only once all are written are the previous report's
//! files moved aside and the new ones renamed into place, so a failure
//! leaves the previous report whole and no file of the new one behind. A
//! single file is written by [`put`]: into a new file beside it, renamed
//! over it. A symbolic link planted under one of the report's names is
//! replaced, never written through, so a report writes only inside its
//! directory.

use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context, Result};

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
                // the folders a report writes through are its own, never
                // the previous report's files
                .filter(|l| !l.starts_with(&format!("{MANIFEST}.")))
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
    put(out, MANIFEST, &manifest_text(written)).map(drop)
}

/// The manifest's text for the files `written`.
fn manifest_text(written: &[&str]) -> String {
    let mut text =
        String::from("# files written by `coapcc report`; the next report removes them\n");
    for w in written {
        text.push_str(w);
        text.push('\n');
    }
    text
}

/// Removes `path` if it exists — a file, a link (never followed) or a
/// folder with what it holds.
fn remove_any(path: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(path),
        Ok(_) => std::fs::remove_file(path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// A folder of `out` only this process uses: `.coapcc-report.<what>.<pid>`,
/// created empty (a leftover of a killed report under that name is removed
/// first, a link there is removed, never followed).
fn private_dir(out: &Path, what: &str) -> std::io::Result<PathBuf> {
    let dir = out.join(format!("{MANIFEST}.{what}.{}", std::process::id()));
    remove_any(&dir)?;
    std::fs::create_dir(&dir)?;
    Ok(dir)
}

/// Writes the report `files` (plain names and their text) and their manifest
/// into `out`, replacing the previous report there as a whole; returns the
/// paths of the previous report's files this one does not write (removed).
///
/// 1. Every file is written into a new folder beside them (`O_EXCL`: no
///    link is followed). A failure here removes that folder: nothing else
///    was touched.
/// 2. The previous report's files (its manifest says which) and whatever
///    stands under the new names are moved aside into a second folder, and
///    the new files renamed into place. A failure here moves every file
///    back: the previous report is whole again.
/// 3. Only then is the folder of the previous files removed.
///
/// Files of `out` that neither report wrote are never touched.
pub fn replace(out: &Path, files: &[(&str, &str)]) -> Result<Vec<PathBuf>> {
    for (name, _) in files {
        if name.is_empty() || name.contains(['/', '\\']) || *name == "." || *name == ".." {
            return Err(anyhow!(
                "{}: `{name}` is not a plain file name",
                out.display()
            ));
        }
    }
    let previous = previous(out);
    let mut names: Vec<&str> = Vec::new();
    for (n, _) in files {
        if !names.contains(n) {
            names.push(n);
        }
    }
    let manifest = manifest_text(&names);
    let new = private_dir(out, "new")
        .with_context(|| format!("{}: cannot write the report", out.display()))?;
    let staged = stage(&new, files, &manifest);
    if let Err(e) = staged {
        let _ = remove_any(&new);
        return Err(e).with_context(|| format!("{}: cannot write the report", out.display()));
    }
    let mut all: Vec<&str> = names.clone();
    all.push(MANIFEST);
    let swapped = swap(out, &new, &previous, &all);
    let _ = remove_any(&new);
    let old = swapped?;
    let removed = previous
        .iter()
        .filter(|n| !all.contains(&n.as_str()) && old.1.contains(n.as_str()))
        .map(|n| out.join(n))
        .collect();
    remove_any(&old.0).with_context(|| {
        format!(
            "{}: the report is written, but the previous report's files moved there cannot \
             be removed",
            old.0.display()
        )
    })?;
    Ok(removed)
}

/// Step 1 of [`replace`]: every file, and the manifest, into `dir`.
fn stage(dir: &Path, files: &[(&str, &str)], manifest: &str) -> Result<()> {
    use std::io::Write;
    let mut seen = HashSet::new();
    for (name, text) in files.iter().copied().chain([(MANIFEST, manifest)]) {
        let p = dir.join(name);
        let write = || -> std::io::Result<()> {
            // a name given twice: the last text, as writing them in turn gives
            let mut f = if seen.contains(name) {
                std::fs::File::create(&p)?
            } else {
                std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(&p)?
            };
            f.write_all(text.as_bytes())?;
            f.flush()
        };
        write().with_context(|| format!("{}: cannot write", p.display()))?;
        seen.insert(name);
    }
    Ok(())
}

/// Step 2 of [`replace`]: moves what stands in `out` under the `previous`
/// report's names and the new names `all` aside, then the new files from
/// `new` into `out`; on a failure, puts everything back as it was. Returns
/// the folder the old files are in and the names moved there.
fn swap<'a>(
    out: &Path,
    new: &Path,
    previous: &'a BTreeSet<String>,
    all: &[&'a str],
) -> Result<(PathBuf, HashSet<&'a str>)> {
    let aside = private_dir(out, "old")
        .with_context(|| format!("{}: cannot write the report", out.display()))?;
    let mut moved: Vec<&str> = Vec::new();
    let mut placed: Vec<&str> = Vec::new();
    let mut go = || -> Result<()> {
        let mut targets: Vec<&str> = previous.iter().map(String::as_str).collect();
        targets.extend(all.iter().filter(|n| !previous.contains(**n)));
        for name in targets {
            let from = out.join(name);
            if std::fs::symlink_metadata(&from).is_err() {
                continue;
            }
            std::fs::rename(&from, aside.join(name)).with_context(|| {
                format!(
                    "{}: cannot move this file of the previous report aside",
                    from.display()
                )
            })?;
            moved.push(name);
        }
        for &name in all {
            let to = out.join(name);
            std::fs::rename(new.join(name), &to)
                .with_context(|| format!("{}: cannot write", to.display()))?;
            placed.push(name);
        }
        Ok(())
    };
    if let Err(e) = go() {
        for name in placed {
            let _ = std::fs::remove_file(out.join(name));
        }
        for &name in &moved {
            let _ = std::fs::rename(aside.join(name), out.join(name));
        }
        let _ = remove_any(&aside);
        return Err(e);
    }
    Ok((aside, moved.into_iter().collect()))
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
