//! Expanding a star campaign file into its cells (one TCP flavour at one
//! station count of a set) and their runs, checking everything a run would
//! reject before any run starts.
//!
//! Order: sets as written; within a set, station counts as written × flavours.

use anyhow::{bail, Result};
use coapcc_link::star::Config;
use coapcc_sim::star;

use super::file::{StarCampaignFile, StarSetFile};
use crate::campaign::sets;

/// One TCP flavour at one station count of a set, replicated.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StarCell {
    /// The set's name.
    pub set: String,
    /// The number of stations.
    pub stations: u32,
    /// The flavour's label.
    pub label: String,
    /// The run (its `network.stations` and `algorithm` are the cell's).
    pub spec: star::RunSpec,
    /// One key per replication.
    pub keys: Vec<String>,
}

impl crate::campaign::PlanCell for StarCell {
    type Spec = star::RunSpec;
    fn keys(&self) -> &[String] {
        &self.keys
    }
    fn spec(&self) -> &star::RunSpec {
        &self.spec
    }
}

/// A star campaign ready to run.
pub type StarPlan = crate::campaign::Plan<StarCampaignFile, StarCell>;

/// Parses and expands star campaign text; `origin` names it in errors.
pub fn parse(text: &str, origin: &str) -> Result<StarPlan> {
    let file: StarCampaignFile = sets::from_toml(text, origin)?;
    // The sets sweep the station count: one written in [network] would be
    // silently replaced, so it is refused.
    let probe: toml::Table =
        toml::from_str(text).map_err(|e| crate::scenario_file::toml_error(origin, text, &e))?;
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
    sets::expand_sets(file, text, origin, MARKER, expand_set)
}

/// What the definition hashes first: the network's marker.
const MARKER: &str = "coapcc-star-campaign";

/// A set's station counts and flavours, checked.
fn sweep_of<'a>(
    file: &'a StarCampaignFile,
    set: &'a StarSetFile,
) -> Result<&'a [sets::AlgorithmEntry<StarCampaignFile>]> {
    sets::check_replications(set.replications)?;
    sets::check_sweep(
        "stations",
        &set.stations,
        "station count",
        |n| n > 0,
        "station counts of at least 1",
    )?;
    sets::set_algorithms(set.algorithms.as_deref(), &file.algorithms, "TCP flavour")
}

/// The run of `algorithm` with `stations` stations.
fn run_at(
    file: &StarCampaignFile,
    stations: u32,
    algorithm: &coapcc_sim::AlgorithmSpec,
) -> star::RunSpec {
    star::RunSpec {
        network: Config {
            stations,
            ..file.network.clone()
        },
        workload: file.workload.clone(),
        algorithm: algorithm.clone(),
        seed: file.seed,
    }
}

/// Counts and samples a star campaign file's cells without expanding them
/// ([`crate::campaign::ceiling`]).
pub fn sample(text: &str, origin: &str) -> Result<Vec<crate::campaign::ceiling::SetSample>> {
    let file: StarCampaignFile = sets::from_toml(text, origin)?;
    sets::sample_sets(&file, origin, |file, set| {
        let algorithms = sweep_of(file, set)?;
        Ok(sets::sample_sweep(
            &set.stations,
            algorithms,
            set.replications,
            |stations, algorithm| run_at(file, stations, algorithm),
            |spec| {
                (
                    super::super::cost::run_cost(spec),
                    super::super::cost::stored_bytes(spec),
                )
            },
        ))
    })
}

fn expand_set(file: &StarCampaignFile, set: &StarSetFile) -> Result<Vec<StarCell>> {
    let algorithms = sweep_of(file, set)?;
    sets::sweep_cells(
        &set.stations,
        algorithms,
        set.replications,
        |stations| format!("stations = {stations}"),
        |stations, algorithm| run_at(file, stations, algorithm),
        star::validate,
        |stations, label, spec, keys| StarCell {
            set: set.name.clone(),
            stations,
            label,
            spec,
            keys,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::run_key;

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
        sets::testing::assert_definition_ignores_comments_and_follows_parameters(BASE, parse);
    }

    #[test]
    fn bad_sets_are_refused_with_file_and_field() {
        let cases = [
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
        ];
        sets::testing::assert_refused_with_file_and_field(BASE, "s.toml", parse, &cases);
    }
}
