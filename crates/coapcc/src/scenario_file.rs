//! Scenario files (TOML): loading, command-line overrides, and errors that name
//! the file, the field and what was expected.
//!
//! A scenario's `[network]` table says which network it runs on: `kind =
//! "dumbbell"` (the default: the constrained-link testbed) or `kind = "grid"`
//! (the 802.15.4 grid of the pCoCoA evaluation).

use std::path::Path;

use anyhow::{anyhow, bail, Context, Result};
use coapcc_link::dumbbell::Buffer;
use coapcc_link::errors::ErrorProfile;
use coapcc_sim::dumbbell::Scenario;
use coapcc_sim::grid::GridScenario;
use coapcc_sim::star::StarScenario;
use coapcc_sim::{AlgorithmSpec, NetworkScenario, WorkloadKind};
use serde::Deserialize;

/// The scenario `coapcc run` uses when no file is given: the constrained-link
/// testbed with the published evaluations' settings.
pub const DEFAULT_SCENARIO: &str = include_str!("../../../scenarios/default.toml");

/// A scenario of either network.
#[derive(Clone, Debug, PartialEq)]
pub enum AnyScenario {
    /// On the constrained-link dumbbell.
    Dumbbell(Box<Scenario>),
    /// On the 802.15.4 grid.
    Grid(Box<GridScenario>),
    /// On the Wi-Fi star.
    Star(Box<StarScenario>),
}

/// The network kinds a scenario may name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NetworkKind {
    /// `kind = "dumbbell"` (or no `kind`).
    Dumbbell,
    /// `kind = "grid"`.
    Grid,
    /// `kind = "star"`.
    Star,
}

/// Reads `[network] kind` of a TOML document (scenario or campaign), with
/// nothing else checked; `origin` names it in errors.
pub fn network_kind(text: &str, origin: &str) -> Result<NetworkKind> {
    #[derive(Deserialize)]
    struct Probe {
        #[serde(default)]
        network: Option<ProbeNetwork>,
    }
    #[derive(Deserialize)]
    struct ProbeNetwork {
        #[serde(default)]
        kind: Option<toml::Value>,
    }
    let probe: Probe = toml::from_str(text).map_err(|e| anyhow!("{origin}: {e}"))?;
    match probe.network.and_then(|n| n.kind) {
        None => Ok(NetworkKind::Dumbbell),
        Some(toml::Value::String(k)) if k == "dumbbell" => Ok(NetworkKind::Dumbbell),
        Some(toml::Value::String(k)) if k == "grid" => Ok(NetworkKind::Grid),
        Some(toml::Value::String(k)) if k == "star" => Ok(NetworkKind::Star),
        Some(other) => bail!(
            "{origin}: network.kind: expected \"dumbbell\", \"grid\" or \"star\", found {other}"
        ),
    }
}

/// Parses a scenario from TOML text; `origin` names the file in errors.
pub fn parse_any(text: &str, origin: &str) -> Result<AnyScenario> {
    match network_kind(text, origin)? {
        NetworkKind::Dumbbell => parse(text, origin).map(|s| AnyScenario::Dumbbell(Box::new(s))),
        NetworkKind::Grid => {
            let scenario: GridScenario =
                toml::from_str(text).map_err(|e| anyhow!("{origin}: {e}"))?;
            scenario.validate().map_err(|e| anyhow!("{origin}: {e}"))?;
            Ok(AnyScenario::Grid(Box::new(scenario)))
        }
        NetworkKind::Star => {
            let scenario: StarScenario =
                toml::from_str(text).map_err(|e| anyhow!("{origin}: {e}"))?;
            scenario.validate().map_err(|e| anyhow!("{origin}: {e}"))?;
            Ok(AnyScenario::Star(Box::new(scenario)))
        }
    }
}

/// Parses a dumbbell scenario from TOML text; `origin` names the file in
/// errors.
pub fn parse(text: &str, origin: &str) -> Result<Scenario> {
    let scenario: Scenario = toml::from_str(text).map_err(|e| anyhow!("{origin}: {e}"))?;
    scenario.validate().map_err(|e| anyhow!("{origin}: {e}"))?;
    Ok(scenario)
}

/// Loads and validates a scenario file of either network.
pub fn load_any(path: &Path) -> Result<AnyScenario> {
    parse_any(&read(path)?, &path.display().to_string())
}

/// Loads and validates a dumbbell scenario file.
pub fn load(path: &Path) -> Result<Scenario> {
    parse(&read(path)?, &path.display().to_string())
}

fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read the scenario file", path.display()))
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
    /// Applies the overrides to a scenario of either network.
    pub fn apply_any(&self, s: AnyScenario, origin: &str) -> Result<AnyScenario> {
        match s {
            AnyScenario::Dumbbell(s) => {
                if self.period.is_some() {
                    bail!(
                        "--period: applies to grid scenarios only; {origin} runs on the dumbbell"
                    );
                }
                self.apply(*s, origin)
                    .map(|s| AnyScenario::Dumbbell(Box::new(s)))
            }
            AnyScenario::Grid(s) => self
                .apply_grid(*s, origin)
                .map(|s| AnyScenario::Grid(Box::new(s))),
            AnyScenario::Star(s) => self
                .apply_star(*s, origin)
                .map(|s| AnyScenario::Star(Box::new(s))),
        }
    }

    /// Applies the overrides to a grid scenario and re-validates.
    pub fn apply_grid(&self, mut s: GridScenario, origin: &str) -> Result<GridScenario> {
        let dumbbell_only = [
            ("--clients", self.clients.is_some()),
            ("--buffer", self.buffer.is_some()),
            ("--errors", self.errors.is_some()),
            ("--workload", self.workload.is_some()),
        ];
        if let Some((flag, _)) = dumbbell_only.iter().find(|(_, set)| *set) {
            bail!("{flag}: applies to dumbbell scenarios only; {origin} runs on the grid (its clients are its nodes)");
        }
        if let Some(list) = &self.algorithms {
            s.algorithms = choose(&s.algorithms, list)?;
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
        if let Some(p) = self.period {
            s.workload.period_s = p;
        }
        s.validate()
            .map_err(|e| anyhow!("{origin} (with command-line overrides): {e}"))?;
        Ok(s)
    }

    /// Applies the overrides to a star scenario and re-validates.
    pub fn apply_star(&self, mut s: StarScenario, origin: &str) -> Result<StarScenario> {
        let not_here = [
            ("--clients", self.clients.is_some()),
            ("--buffer", self.buffer.is_some()),
            ("--errors", self.errors.is_some()),
            ("--workload", self.workload.is_some()),
            ("--period", self.period.is_some()),
        ];
        if let Some((flag, _)) = not_here.iter().find(|(_, set)| *set) {
            bail!("{flag}: does not apply to {origin}, which runs on the Wi-Fi star");
        }
        if let Some(list) = &self.algorithms {
            s.algorithms = choose(&s.algorithms, list)?;
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
            s.algorithms = choose(&s.algorithms, list)?;
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
