//! `docs/guides/your-own-algorithm.md`, its Rust half ("From Rust")
//! followed from top to bottom (the Python half is followed by
//! `crates/coapcc-py/tests/test_guide.py`): a
//! block under a path of `examples/` must appear in that file as written, a
//! block under another name is written to a fresh directory, every `sh`
//! block runs there with `my-coapcc` on the `PATH`, and a `text` block
//! right after one is what it must print.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A fenced block of the guide: the file named (`` `path`: `` on the line
/// before), its language and its text.
struct Block {
    file: Option<String>,
    lang: String,
    text: String,
}

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..")
}

fn blocks(guide: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut last_line = "";
    let mut lines = guide.lines();
    while let Some(line) = lines.next() {
        let Some(lang) = line.strip_prefix("```") else {
            if !line.trim().is_empty() {
                last_line = line;
            }
            continue;
        };
        let file = last_line
            .strip_prefix('`')
            .and_then(|l| l.strip_suffix("`:"))
            .map(str::to_string);
        let mut text = String::new();
        for l in lines.by_ref().take_while(|l| *l != "```") {
            text.push_str(l);
            text.push('\n');
        }
        out.push(Block {
            file,
            lang: lang.to_string(),
            text,
        });
        last_line = "";
    }
    out
}

#[test]
fn the_guide_is_followed_from_scratch() {
    let guide = std::fs::read_to_string(repository().join("docs/guides/your-own-algorithm.md"))
        .expect("the guide");
    let rust = guide.split("\n## From Python").next().unwrap_or_default();
    let blocks = blocks(rust);
    let dir = tempfile::tempdir().unwrap();
    let bin = Path::new(env!("CARGO_BIN_EXE_my-coapcc"));
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut ran = 0;
    let mut i = 0;
    while i < blocks.len() {
        let b = &blocks[i];
        i += 1;
        match (&b.file, b.lang.as_str()) {
            (Some(file), _) if file.starts_with("examples/") => {
                let source = std::fs::read_to_string(repository().join(file)).expect(file);
                assert!(source.contains(&b.text), "{file} lacks:\n{}", b.text);
            }
            (Some(file), _) => std::fs::write(dir.path().join(file), &b.text).unwrap(),
            (None, "sh") => {
                let out = Command::new("sh")
                    .args(["-ec", &b.text])
                    .current_dir(dir.path())
                    .env("PATH", &path)
                    .output()
                    .unwrap();
                let stdout = String::from_utf8_lossy(&out.stdout);
                assert!(
                    out.status.success(),
                    "{}\nstdout:\n{stdout}\nstderr:\n{}",
                    b.text,
                    String::from_utf8_lossy(&out.stderr)
                );
                ran += 1;
                if let Some(expected) = blocks.get(i).filter(|n| n.lang == "text") {
                    assert_eq!(stdout, expected.text, "{}", b.text);
                    i += 1;
                }
            }
            (None, lang) => panic!("a {lang} block names no file:\n{}", b.text),
        }
    }
    assert_eq!(ran, 4, "the guide's sh blocks");
    let report = std::fs::read_to_string(dir.path().join("report/report.html")).unwrap();
    assert!(report.contains("my-rto") && report.contains("fasor"));
}
