//! Expanding a star campaign file into its cells (one TCP flavour at one
//! station count of a set) and their runs, checking everything a run would
//! reject before any run starts.
//!
//! Order: sets as written; within a set, station counts as written × flavours.

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::{anyhow, bail, Context, Result};
use coapcc_sim::star::StarRunSpec;
use coapcc_sim::{star, AlgorithmSpec};
use serde::{Deserialize, Serialize};

use super::file::{StarAlgorithmEntry, StarCampaignFile, StarSetFile};
use crate::campaign::key::run_key;
use crate::campaign::sets;

/// One TCP flavour at one station count of a set, replicated.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StarCell {
    /// The set's name.
    pub set: String,
    /// The number of stations.
    pub stations: u32,
    /// The flavour's label.
    pub label: String,
    /// The run (its `network.stations` and `algorithm` are the cell's).
    pub spec: StarRunSpec,
    /// One key per replication.
    pub keys: Vec<String>,
}

impl StarCell {
    /// The stations' TCP.
    pub fn algorithm(&self) -> &AlgorithmSpec {
        &self.spec.algorithm
    }
}

/// A star campaign ready to run.
#[derive(Clone, Debug)]
pub struct StarPlan {
    /// The file's fields as written.
    pub file: StarCampaignFile,
    /// The file's text.
    pub text: String,
    /// Where it was read from.
    pub source: String,
    /// Every cell.
    pub cells: Vec<StarCell>,
    /// The definition: SHA-256 over a star marker, the model version, the
    /// campaign's name and every cell with its run keys.
    pub definition: String,
}

impl StarPlan {
    /// Runs in all (cells × replications; a key shared by two cells counts twice).
    pub fn runs(&self) -> usize {
        self.cells.iter().map(|c| c.keys.len()).sum()
    }

    /// Distinct run keys.
    pub fn distinct_keys(&self) -> BTreeSet<&str> {
        self.cells
            .iter()
            .flat_map(|c| c.keys.iter().map(String::as_str))
            .collect()
    }
}

/// Loads and expands a star campaign file.
pub fn load(path: &Path) -> Result<StarPlan> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read the campaign file", path.display()))?;
    parse(&text, &path.display().to_string())
}

/// Parses and expands star campaign text; `origin` names it in errors.
pub fn parse(text: &str, origin: &str) -> Result<StarPlan> {
    let file: StarCampaignFile = toml::from_str(text).map_err(|e| anyhow!("{origin}: {e}"))?;
    // The sets sweep the station count: one written in [network] would be
    // silently replaced, so it is refused.
    let probe: toml::Table = toml::from_str(text).map_err(|e| anyhow!("{origin}: {e}"))?;
    if probe
        .get("network")
        .and_then(|n| n.as_table())
        .is_some_and(|n| n.contains_key("stations"))
    {
        bail!(
            "{origin}: network.stations: each [[set]]'s `stations` gives the station counts; \
             remove it from [network]"
        );
    }
    expand(file, text, origin).map_err(|e| anyhow!("{origin}: {e:#}"))
}

fn expand(file: StarCampaignFile, text: &str, origin: &str) -> Result<StarPlan> {
    sets::check_campaign(&file.name, file.sets.len())?;
    let mut cells = Vec::new();
    for (i, set) in file.sets.iter().enumerate() {
        sets::check_set_name(i, &set.name, file.sets[..i].iter().map(|s| s.name.as_str()))?;
        cells.extend(expand_set(&file, set)?);
    }
    let definition = sets::definition("coapcc-star-campaign", &file.name, &cells);
    Ok(StarPlan {
        file,
        text: text.to_string(),
        source: origin.to_string(),
        cells,
        definition,
    })
}

fn expand_set(file: &StarCampaignFile, set: &StarSetFile) -> Result<Vec<StarCell>> {
    let ctx = |what: String| anyhow!("set `{}`: {what}", set.name);
    sets::check_replications(set.replications).map_err(|e| ctx(e.to_string()))?;
    if set.stations.is_empty() {
        return Err(ctx("stations: expected at least one station count".into()));
    }
    for (i, &n) in set.stations.iter().enumerate() {
        if n == 0 {
            return Err(ctx(
                "stations: expected station counts of at least 1, found 0".into(),
            ));
        }
        if set.stations[..i].contains(&n) {
            return Err(ctx(format!("stations: {n} is listed twice")));
        }
    }
    let algorithms: &[StarAlgorithmEntry] = set.algorithms.as_deref().unwrap_or(&file.algorithms);
    if algorithms.is_empty() {
        return Err(ctx(
            "algorithms: expected at least one TCP flavour (in the set or the campaign)".into(),
        ));
    }
    for (i, a) in algorithms.iter().enumerate() {
        if algorithms[..i].iter().any(|b| b.0.label() == a.0.label()) {
            return Err(ctx(format!(
                "algorithm `{}` is listed twice; give one a distinct `label`",
                a.0.label()
            )));
        }
    }
    let mut cells = Vec::new();
    for &stations in &set.stations {
        let mut network = file.network.clone();
        network.stations = stations;
        for a in algorithms {
            let spec = StarRunSpec {
                network: network.clone(),
                workload: file.workload.clone(),
                algorithm: a.0.clone(),
                seed: file.seed,
            };
            star::validate(&spec)
                .map_err(|e| ctx(format!("{}, stations = {stations}: {e}", a.0.label())))?;
            let keys = (0..set.replications).map(|r| run_key(&spec, r)).collect();
            cells.push(StarCell {
                set: set.name.clone(),
                stations,
                label: a.0.label().to_string(),
                spec,
                keys,
            });
        }
    }
    Ok(cells)
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = r#"
        name = "s"
        seed = 9
        algorithms = ["tcp-lwip", { name = "tcp", label = "full TCP" }]
        [network]
        kind = "star"
        queue = 4
        [workload]
        writes = 20
        [[set]]
        name = "published"
        stations = [12]
        replications = 3
        [[set]]
        name = "loaded"
        stations = [36, 24]
        replications = 2
        algorithms = ["tcp-lwip-backoff"]
    "#;

    #[test]
    fn sweeps_expand_in_order() {
        let p = parse(BASE, "s.toml").unwrap();
        let coords: Vec<(&str, u32, &str)> = p
            .cells
            .iter()
            .map(|c| (c.set.as_str(), c.stations, c.label.as_str()))
            .collect();
        assert_eq!(
            coords,
            [
                ("published", 12, "tcp-lwip"),
                ("published", 12, "full TCP"),
                ("loaded", 36, "tcp-lwip-backoff"),
                ("loaded", 24, "tcp-lwip-backoff"),
            ]
        );
        assert_eq!(p.runs(), 2 * 3 + 2 * 2);
        assert_eq!(p.distinct_keys().len(), p.runs());
        let c = &p.cells[2];
        assert_eq!(c.spec.network.stations, 36);
        assert_eq!(c.spec.network.queue, 4);
        assert_eq!(c.spec.workload.writes, 20);
        assert_eq!(c.spec.seed, 9);
        assert_eq!(c.keys, [run_key(&c.spec, 0), run_key(&c.spec, 1)]);
    }

    #[test]
    fn the_definition_ignores_comments_and_follows_parameters() {
        let a = parse(BASE, "s").unwrap();
        assert_eq!(
            a.definition,
            parse(&format!("# c\n{BASE}"), "s").unwrap().definition
        );
        let more = parse(&BASE.replace("replications = 2", "replications = 3"), "s").unwrap();
        assert_ne!(a.definition, more.definition);
        assert!(a.distinct_keys().is_subset(&more.distinct_keys()));
        let reseeded = parse(&BASE.replace("seed = 9", "seed = 10"), "s").unwrap();
        assert!(a.distinct_keys().is_disjoint(&reseeded.distinct_keys()));
    }

    #[test]
    fn bad_sets_are_refused_with_file_and_field() {
        for (from, to, want) in [
            (
                "stations = [36, 24]",
                "stations = []",
                "stations: expected at least one",
            ),
            ("stations = [36, 24]", "stations = [36, 0]", "found 0"),
            (
                "stations = [36, 24]",
                "stations = [36, 36]",
                "stations: 36 is listed twice",
            ),
            (
                "stations = [36, 24]",
                "stations = [36, 1001]",
                "tcp-lwip-backoff, stations = 1001: network.stations: expected 1 to 1000",
            ),
            (
                "replications = 3",
                "replications = 0",
                "replications: expected 1 to 10000, found 0",
            ),
            (
                "replications = 3",
                "replications = 1000000000",
                "replications: expected 1 to 10000, found 1000000000",
            ),
            (
                "name = \"loaded\"",
                "name = \"published\"",
                "name: listed twice",
            ),
            (
                "algorithms = [\"tcp-lwip-backoff\"]",
                "algorithms = [\"tcp-lwip\", \"tcp-lwip\"]",
                "`tcp-lwip` is listed twice",
            ),
            (
                "algorithms = [\"tcp-lwip-backoff\"]",
                "algorithms = [\"cocoa\"]",
                "algorithm `cocoa`: name: the star runs TCP senders",
            ),
            (
                "algorithms = [\"tcp-lwip-backoff\"]",
                "algorithms = [{ name = \"tcp-lwip\", cap = 60 }]",
                "cap",
            ),
            ("queue = 4", "queue = 0", "network.queue"),
            ("writes = 20", "writes = 0", "workload.writes"),
            (
                "queue = 4",
                "queue = 4\nstations = 12",
                "network.stations: each [[set]]",
            ),
        ] {
            assert!(BASE.contains(from), "{from}");
            let e = format!(
                "{:#}",
                parse(&BASE.replacen(from, to, 1), "s.toml").unwrap_err()
            );
            assert!(e.starts_with("s.toml: "), "{e}");
            assert!(e.contains(want), "{want} not in {e}");
        }
    }
}
