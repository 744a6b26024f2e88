//! Scenario files (TOML): loading, command-line overrides, and errors that name
//! the file, the field and what was expected.

use std::path::Path;

use anyhow::{anyhow, bail, Context, Result};
use coapcc_sim::{AlgorithmSpec, Buffer, ErrorProfile, Scenario, WorkloadKind};

/// The scenario `coapcc run` uses when no file is given: the constrained-link
/// testbed with the published evaluations' settings.
pub const DEFAULT_SCENARIO: &str = include_str!("../../../scenarios/default.toml");

/// Parses a scenario from TOML text; `origin` names the file in errors.
pub fn parse(text: &str, origin: &str) -> Result<Scenario> {
    let scenario: Scenario = toml::from_str(text).map_err(|e| anyhow!("{origin}: {e}"))?;
    scenario.validate().map_err(|e| anyhow!("{origin}: {e}"))?;
    Ok(scenario)
}

/// Loads and validates a scenario file.
pub fn load(path: &Path) -> Result<Scenario> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read the scenario file", path.display()))?;
    parse(&text, &path.display().to_string())
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
}

impl Overrides {
    /// Applies the overrides to `s` and re-validates; `origin` names the scenario.
    ///
    /// `--algorithms` keeps the parameters the scenario gives an algorithm of the
    /// same name (so the published settings stay), and uses the spec defaults for
    /// names the scenario does not list.
    pub fn apply(&self, mut s: Scenario, origin: &str) -> Result<Scenario> {
        if let Some(n) = self.clients {
            if n == 0 {
                bail!("--clients: expected at least 1");
            }
            s.clients = n;
        }
        if let Some(b) = &self.buffer {
            s.network.buffer = Buffer::parse(b).ok_or_else(|| {
                anyhow!("--buffer: expected a size in bytes (e.g. 2500) or `inf`, found `{b}`")
            })?;
        }
        if let Some(e) = &self.errors {
            s.network.errors = ErrorProfile::parse(e).ok_or_else(|| {
                anyhow!("--errors: expected none, low, medium or high, found `{e}`")
            })?;
        }
        if let Some(w) = &self.workload {
            s.workload.kind = WorkloadKind::parse(w)
                .ok_or_else(|| anyhow!("--workload: expected continuous or random, found `{w}`"))?;
        }
        if let Some(list) = &self.algorithms {
            let mut chosen = Vec::new();
            for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                let spec = s
                    .algorithms
                    .iter()
                    .find(|a| a.label() == name || a.name == name)
                    .cloned()
                    .unwrap_or_else(|| AlgorithmSpec::named(name));
                chosen.push(spec);
            }
            if chosen.is_empty() {
                bail!("--algorithms: expected a comma-separated list of algorithm names");
            }
            s.algorithms = chosen;
        }
        if let Some(r) = self.replications {
            if r == 0 {
                bail!("--replications: expected at least 1");
            }
            s.replications = r;
        }
        if let Some(seed) = self.seed {
            s.seed = seed;
        }
        s.validate()
            .map_err(|e| anyhow!("{origin} (with command-line overrides): {e}"))?;
        Ok(s)
    }
}
