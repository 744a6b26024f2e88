//! The grid campaign file (TOML) as written: a `[network]` with
//! `kind = "grid"`, CoAP settings, a base workload, the algorithms, and one or
//! more sets, each sweeping the request period (periodic) or the interferers'
//! ON duration (bursty) with its own replication count (spec `docs/spec/testbed-spec.md` §4,
//! `docs/spec/radio-spec.md` §1.7). See `docs/campaigns.md`.

use coapcc_link::grid::Config;
use coapcc_sim::grid;

use crate::campaign::sets;
use serde::Deserialize;

use crate::published::grid_published_settings;

sets::campaign_file! {
    /// A whole grid campaign file.
    pub struct GridCampaignFile {
        /// The grid of every run (`kind = "grid"`, the rest as in grid scenario
        /// files).
        pub network: Config,
        /// CoAP settings of every run.
        #[serde(default)]
        pub coap: grid::Coap,
        /// The workload of every run; a set's sweep sets `kind` and replaces
        /// `period_s` (periodic) or `on_s` (bursty), and its `duration_s` (if
        /// given) replaces `duration_s`.
        #[serde(default)]
        pub workload: grid::Workload,
    }
    /// Algorithms of the clients under test, in every set that does not list
    /// its own.
    algorithms: GridAlgorithmEntry,
    sets: GridSetFile,
    named: grid_published_settings,
    entry: "an algorithm name or a table { name = \"…\", … }",
}

/// One sweep: exactly one of `periods_s` and `on_s`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GridSetFile {
    /// Names the set in reports (`periodic`, `bursty`, …).
    pub name: String,
    /// A periodic sweep: the request periods T (s).
    #[serde(default)]
    pub periods_s: Option<Vec<f64>>,
    /// A bursty sweep: the interferers' ON durations (s); the other clients
    /// send every `workload.period_s`.
    #[serde(default)]
    pub on_s: Option<Vec<f64>>,
    /// Traffic time after the warm-up (s); default: the workload's.
    #[serde(default)]
    pub duration_s: Option<f64>,
    /// Replications of every run of the set.
    pub replications: u32,
    /// Replaces the campaign's algorithms for this set.
    #[serde(default)]
    pub algorithms: Option<Vec<GridAlgorithmEntry>>,
}

/// An algorithm: a registry name (with the pCoCoA paper's settings,
/// [`grid_published_settings`]) or a table with explicit parameters (spec
/// defaults for the rest).
pub type GridAlgorithmEntry = sets::AlgorithmEntry<GridCampaignFile>;

#[cfg(test)]
mod tests {
    use coapcc_sim::AlgorithmSpec;

    use super::*;

    const MINIMAL: &str = "name = \"g\"\n[network]\nkind = \"grid\"\n[[set]]\nname = \"p\"\nperiods_s = [8]\nreplications = 1\n";

    #[test]
    fn names_get_the_papers_settings_and_tables_are_literal() {
        let f: GridCampaignFile = toml::from_str(&MINIMAL.replace(
            "[network]",
            "algorithms = [\"default\", \"pcocoa\", { name = \"default\", label = \"d2\", ack_timeout = 2 }]\n[network]",
        ))
        .unwrap();
        assert_eq!(f.algorithms[0].0.ack_timeout, Some(3.0));
        assert_eq!(f.algorithms[1].0, AlgorithmSpec::named("pcocoa"));
        assert_eq!(f.algorithms[2].0.ack_timeout, Some(2.0));
        assert_eq!(f.algorithms[2].0.label(), "d2");
        assert_eq!(f.seed, 1);
        assert_eq!(f.network, Config::default());
        assert_eq!(f.sets[0].periods_s.as_deref(), Some(&[8.0][..]));
    }

    #[test]
    fn unknown_fields_are_named() {
        sets::testing::assert_unknown_fields_named::<GridCampaignFile>(
            MINIMAL,
            &[
                ("periods_s = [8]", "perods_s"),
                ("replications = 1", "replicatons"),
            ],
        );
    }
}
