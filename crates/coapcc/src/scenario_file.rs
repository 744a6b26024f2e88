//! Scenario files (TOML): loading, command-line overrides, and errors that name
//! the file, the field and what was expected.
//!
//! A scenario's `[network]` table says which network it runs on
//! ([`crate::networks::NetworkKind`]); each network parses and overrides its
//! own scenarios in its folder, with the helpers here.

use std::path::Path;

use anyhow::{anyhow, bail, Context, Result};
use coapcc_sim::AlgorithmSpec;

/// The scenario `coapcc run` uses when no file is given: the constrained-link
/// testbed with the published evaluations' settings.
pub const DEFAULT_SCENARIO: &str = include_str!("../../../scenarios/default.toml");

/// Reads a scenario file.
pub fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read the scenario file", path.display()))
}

/// Parses a scenario of type `S` from TOML text and validates it
/// (`validate`); `origin` names the file in errors.
pub fn parse_toml<S: serde::de::DeserializeOwned, E: std::fmt::Display>(
    text: &str,
    origin: &str,
    validate: impl FnOnce(&S) -> std::result::Result<(), E>,
) -> Result<S> {
    let scenario: S = toml::from_str(text).map_err(|e| toml_error(origin, text, &e))?;
    validate(&scenario).map_err(|e| anyhow!("{origin}: {e}"))?;
    Ok(scenario)
}

/// At most this many characters of the offending line are shown in a parse
/// error, around the error's column.
pub const EXCERPT_CHARS: usize = 120;

/// At most this many characters of the parser's message are shown (it may
/// quote a value of the file).
pub const MESSAGE_CHARS: usize = 300;

/// `s` cut to its first `max` characters, with `…` if cut.
fn bounded(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s.to_string(),
    }
}

/// The line and column (from 0, the column in characters) of byte `index`
/// of `input`, as the TOML parser counts them for its errors.
fn position(input: &[u8], index: usize) -> (usize, usize) {
    if input.is_empty() {
        return (0, index);
    }
    let safe = index.min(input.len() - 1);
    let line_start = input[..safe]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let line = input[..line_start].iter().filter(|&&b| b == b'\n').count();
    let column = std::str::from_utf8(&input[line_start..=safe])
        .map(|s| s.chars().count() - 1)
        .unwrap_or(safe - line_start);
    (line, column + (index - safe))
}

/// A TOML parse error of `text` (from file `origin`) as the parser words
/// it — line, column, the line with the error marked, the message naming the
/// field — but bounded whatever the file: at most [`EXCERPT_CHARS`] of the
/// line around the column (`…` where cut) and [`MESSAGE_CHARS`] of the
/// message. Errors on short lines read exactly as the parser's own.
pub fn toml_error(origin: &str, text: &str, e: &toml::de::Error) -> anyhow::Error {
    let Some(span) = e.span() else {
        return anyhow!("{origin}: {}", bounded(&e.to_string(), MESSAGE_CHARS * 2));
    };
    let (line, column) = position(text.as_bytes(), span.start);
    let content = text.split('\n').nth(line).unwrap_or("");
    let chars = content.chars().count();
    // as the parser: the span's bytes, at most to the end of the line
    let highlight = (span.end - span.start).min(content.len().saturating_sub(column));
    // the window of the line shown, in characters
    let (from, to) = if chars <= EXCERPT_CHARS {
        (0, chars)
    } else {
        let from = column
            .saturating_sub(EXCERPT_CHARS / 2)
            .min(chars - EXCERPT_CHARS);
        (from, from + EXCERPT_CHARS)
    };
    let mut excerpt: String = content.chars().skip(from).take(to - from).collect();
    let mut marker_at = column - from;
    if from > 0 {
        excerpt.insert(0, '…');
        marker_at += 1;
    }
    if to < chars {
        excerpt.push('…');
    }
    // within the window shown (a short line is shown whole, as the parser
    // shows it)
    let highlight = if chars <= EXCERPT_CHARS {
        highlight.max(1)
    } else {
        highlight.min(to - column.min(to)).max(1)
    };
    let line_num = line + 1;
    let gutter = " ".repeat(line_num.to_string().len() + 1);
    anyhow!(
        "{origin}: TOML parse error at line {line_num}, column {}\n{gutter}|\n{line_num} | \
         {excerpt}\n{gutter}|{}{}\n{}\n",
        column + 1,
        " ".repeat(marker_at + 1),
        "^".repeat(highlight),
        bounded(e.message(), MESSAGE_CHARS)
    )
}

/// Values given on the command line that replace the file's.
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    /// `--clients N`.
    pub clients: Option<u32>,
    /// `--buffer BYTES|inf`.
    pub buffer: Option<String>,
    /// `--errors none|low|medium|high`.
    pub errors: Option<String>,
    /// `--workload continuous|random|observe|blockwise`.
    pub workload: Option<String>,
    /// `--nstart K` (dumbbell scenarios).
    pub nstart: Option<u32>,
    /// `--algorithms a,b,…`.
    pub algorithms: Option<String>,
    /// `--replications N`.
    pub replications: Option<u32>,
    /// `--seed S`.
    pub seed: Option<u64>,
    /// `--period SECONDS` (grid scenarios; dumbbell scenarios of the
    /// observe workload).
    pub period: Option<f64>,
}

impl Overrides {
    /// Fails naming the first of `flags` that is set: `why` says why it does
    /// not apply.
    pub fn refuse(flags: &[(&str, bool)], why: impl FnOnce() -> String) -> Result<()> {
        if let Some((flag, _)) = flags.iter().find(|(_, set)| *set) {
            bail!("{flag}: {}", why());
        }
        Ok(())
    }

    /// Applies what every network shares: `--algorithms` (keeping the
    /// parameters the scenario gives an algorithm of the same name, so the
    /// published settings stay, and the spec defaults for names it does not
    /// list), `--replications` and `--seed`.
    pub fn apply_common(
        &self,
        algorithms: &mut Vec<AlgorithmSpec>,
        replications: &mut u32,
        seed: &mut u64,
    ) -> Result<()> {
        if let Some(list) = &self.algorithms {
            *algorithms = choose(algorithms, list)?;
        }
        if let Some(r) = self.replications {
            if r == 0 {
                bail!("--replications: expected at least 1");
            }
            *replications = r;
        }
        if let Some(s) = self.seed {
            *seed = s;
        }
        Ok(())
    }
}

/// A scenario changed by command-line overrides, validated again (`validate`);
/// `origin` names it.
pub fn revalidate<S, E: std::fmt::Display>(
    s: S,
    origin: &str,
    validate: impl FnOnce(&S) -> std::result::Result<(), E>,
) -> Result<S> {
    validate(&s).map_err(|e| anyhow!("{origin} (with command-line overrides): {e}"))?;
    Ok(s)
}

/// `--algorithms a,b,…`: keeps the parameters the scenario gives an algorithm
/// of the same name or label, and uses the spec defaults for names it does
/// not list.
fn choose(listed: &[AlgorithmSpec], list: &str) -> Result<Vec<AlgorithmSpec>> {
    let chosen: Vec<AlgorithmSpec> = list
        .split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(|name| {
            listed
                .iter()
                .find(|a| a.label() == name || a.name == name)
                .cloned()
                .unwrap_or_else(|| AlgorithmSpec::named(name))
        })
        .collect();
    if chosen.is_empty() {
        bail!("--algorithms: expected a comma-separated list of algorithm names");
    }
    Ok(chosen)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct S {
        clients: Option<u32>,
        name: Option<String>,
    }

    fn both(text: &str) -> (String, String) {
        let e = toml::from_str::<S>(text).unwrap_err();
        (
            format!("f.toml: {e}"),
            toml_error("f.toml", text, &e).to_string(),
        )
    }

    #[test]
    fn errors_on_short_lines_read_as_the_parsers() {
        for text in [
            "clients = 5\nnope = 1\n",
            "clients = \"x\"\n",
            "clients = 5\nname = \"a\n",
            "clients = 5\n[",
            "clients = 5\n[\n",
            "clients = 5 junk",
            "name = \"é\" é\n",
        ] {
            let (theirs, ours) = both(text);
            assert_eq!(ours, theirs, "{text:?}");
        }
    }

    #[test]
    fn a_long_line_is_shown_around_the_column_only() {
        let text = format!(
            "name = \"{}\" junk {}\n",
            "a".repeat(1_000_000),
            "b".repeat(1000)
        );
        let (theirs, ours) = both(&text);
        assert!(theirs.len() > 2_000_000);
        assert!(ours.len() < 600, "{}", ours.len());
        assert!(
            ours.starts_with("f.toml: TOML parse error at line 1, column 1000011\n"),
            "{ours}"
        );
        let lines: Vec<&str> = ours.lines().collect();
        // the excerpt: 120 characters around the column, cut on both sides
        let excerpt = lines[2].strip_prefix("1 | ").unwrap();
        assert!(excerpt.starts_with('…') && excerpt.ends_with('…'), "{ours}");
        assert_eq!(excerpt.chars().count(), EXCERPT_CHARS + 2);
        assert!(excerpt.contains("\" junk"), "{excerpt}");
        // the marker points at `junk`
        let at = lines[3].chars().count() - 1 - "1 | ".len();
        assert_eq!(excerpt.chars().nth(at), Some('j'), "{ours}");
        assert_eq!(lines[4], toml::from_str::<S>(&text).unwrap_err().message());
    }

    #[test]
    fn a_long_value_in_the_message_is_cut() {
        let text = format!("clients = \"{}\"\n", "b".repeat(1_000_000));
        let (_, ours) = both(&text);
        assert!(ours.len() < 1000, "{}", ours.len());
        assert!(ours.contains("line 1, column 11"), "{ours}");
        assert!(ours.contains("invalid type: string"), "{ours}");
        assert!(ours.contains('…'));
    }
}
