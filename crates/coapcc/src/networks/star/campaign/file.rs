//! The star campaign file (TOML) as written: a `[network]` with
//! `kind = "star"`, the bulk senders' workload, the TCP flavours, and one or
//! more sets, each sweeping the number of stations with its own replication
//! count (spec `docs/spec/testbed-spec.md` §5, `docs/spec/radio-spec.md` §2). See `docs/campaigns.md`.

use coapcc_link::star::Config;
use coapcc_sim::star;
use coapcc_sim::AlgorithmSpec;

use crate::campaign::sets;
use serde::Deserialize;

sets::campaign_file! {
    /// A whole star campaign file.
    pub struct StarCampaignFile {
        /// The star of every run (`kind = "star"`, the rest as in star scenario
        /// files, except `stations`, which each set sweeps).
        pub network: Config,
        /// The bulk senders of every run.
        #[serde(default)]
        pub workload: star::Workload,
    }
    /// The TCP flavours, in every set that does not list its own.
    algorithms: StarAlgorithmEntry,
    sets: StarSetFile,
    named: AlgorithmSpec::named,
    entry: "a TCP flavour's name or a table { name = \"…\", label = \"…\" }",
}

/// One sweep of the number of stations.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StarSetFile {
    /// Names the set in reports (`published`, `loaded`, …).
    pub name: String,
    /// The station counts.
    pub stations: Vec<u32>,
    /// Replications of every run of the set.
    pub replications: u32,
    /// Replaces the campaign's flavours for this set.
    #[serde(default)]
    pub algorithms: Option<Vec<StarAlgorithmEntry>>,
}

/// A TCP flavour: its name (`tcp-lwip`, …, `tcp`), or a table
/// `{ name = "…", label = "…" }`. The TCP names take no parameters; a table
/// that gives one is refused when the campaign is expanded.
pub type StarAlgorithmEntry = sets::AlgorithmEntry<StarCampaignFile>;

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = "name = \"s\"\n[network]\nkind = \"star\"\n[[set]]\nname = \"p\"\nstations = [12]\nreplications = 1\n";

    #[test]
    fn names_and_tables() {
        let f: StarCampaignFile = toml::from_str(&MINIMAL.replace(
            "[network]",
            "algorithms = [\"tcp\", { name = \"tcp-lwip\", label = \"lwIP\" }]\n[network]",
        ))
        .unwrap();
        assert_eq!(f.algorithms[0].0, AlgorithmSpec::named("tcp"));
        assert_eq!(f.algorithms[1].0.label(), "lwIP");
        assert_eq!(f.seed, 1);
        assert_eq!(f.network, Config::default());
        assert_eq!(f.workload, star::Workload::default());
        assert_eq!(f.sets[0].stations, [12]);
    }

    #[test]
    fn unknown_fields_are_named() {
        sets::testing::assert_unknown_fields_named::<StarCampaignFile>(
            MINIMAL,
            &[("stations = [12]", "station"), ("replications = 1", "reps")],
        );
    }
}
