//! `docs/security.md` names, for each promise, the test that holds it. This
//! checks that every test it names exists: a renamed or removed test would
//! otherwise leave a promise that nothing holds while the page still claims
//! one.
//!
//! A test is named in the page as a backticked path whose last segment is a
//! test's name (at least three words joined by `_`): `module::…::name` for a
//! Rust test, found as `fn name` in a `.rs` file whose path contains
//! `module` (a file or folder of that name); `file.py::name` for a Python
//! test, found as `def name` in that file of the Python package's tests.

use std::fs;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n == "target") {
                continue;
            }
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The backticked test paths of `text`: (first segment, last segment).
fn named_tests(text: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for (i, piece) in text.split('`').enumerate() {
        // Odd pieces lie between backticks.
        if i % 2 == 0 || !piece.contains("::") {
            continue;
        }
        let segments: Vec<&str> = piece.split("::").collect();
        let well_formed = segments.iter().all(|s| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '.')
        });
        let last = segments[segments.len() - 1];
        if well_formed && last.matches('_').count() >= 2 {
            found.push((segments[0].to_string(), last.to_string()));
        }
    }
    found
}

#[test]
fn every_test_the_security_page_names_exists() {
    let root = repo();
    let page = fs::read_to_string(root.join("docs/security.md")).unwrap();
    let named = named_tests(&page);
    assert!(
        named.len() >= 50,
        "expected the page to name its tests, found {}",
        named.len()
    );

    let mut files = Vec::new();
    rust_files(&root.join("crates"), &mut files);
    let sources: Vec<(String, String)> = files
        .iter()
        .map(|f| {
            (
                f.to_string_lossy().into_owned(),
                fs::read_to_string(f).unwrap(),
            )
        })
        .collect();

    let mut missing = Vec::new();
    for (module, name) in &named {
        let exists = if let Some(py) = module.strip_suffix(".py") {
            let file = root.join(format!("crates/coapcc-py/tests/{py}.py"));
            fs::read_to_string(file)
                .map(|t| t.contains(&format!("def {name}(")))
                .unwrap_or(false)
        } else {
            let as_file = format!("/{module}.rs");
            let as_folder = format!("/{module}/");
            let needle = format!("fn {name}(");
            sources.iter().any(|(path, text)| {
                (path.contains(&as_file) || path.contains(&as_folder)) && text.contains(&needle)
            })
        };
        if !exists {
            missing.push(format!("{module}::…::{name}"));
        }
    }
    assert!(
        missing.is_empty(),
        "docs/security.md names tests that do not exist: {missing:#?}"
    );
}

#[test]
fn a_misnamed_test_is_not_found() {
    let named = named_tests("held by `hardening::a_test_that_is_not_there` and `coapcc::budget`");
    assert_eq!(
        named,
        vec![(
            "hardening".to_string(),
            "a_test_that_is_not_there".to_string()
        )]
    );
}
