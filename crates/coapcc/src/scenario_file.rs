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
    let scenario: S = toml::from_str(text).map_err(|e| anyhow!("{origin}: {e}"))?;
    validate(&scenario).map_err(|e| anyhow!("{origin}: {e}"))?;
    Ok(scenario)
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
    /// `--workload continuous|random`.
    pub workload: Option<String>,
    /// `--algorithms a,b,…`.
    pub algorithms: Option<String>,
    /// `--replications N`.
    pub replications: Option<u32>,
    /// `--seed S`.
    pub seed: Option<u64>,
    /// `--period SECONDS` (grid scenarios).
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
