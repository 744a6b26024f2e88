//! The campaign file (TOML) as written: a base network, CoAP settings and
//! workload, the algorithms and mixed populations, and one or more sets, each a
//! matrix of client counts × buffers × workloads × error profiles with its own
//! replication count (spec `docs/spec/testbed-spec.md` §1.3, §2). See `docs/campaigns.md`.

use std::fmt;

use coapcc_link::dumbbell::{Buffer, Config};
use coapcc_link::errors::ErrorProfile;
use coapcc_sim::dumbbell::Coap;
use coapcc_sim::{Workload, WorkloadKind};
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::Deserialize;

use crate::calibrate::published_settings;
use crate::campaign::sets;

sets::campaign_file! {
    /// A whole campaign file.
    pub struct DumbbellCampaignFile {
        /// Algorithms that may be missing from this build and are then skipped.
        #[serde(default)]
        pub skip_unavailable: SkipUnavailable,
        /// The network of every run; a set's `buffers` and `errors` replace its
        /// `buffer` and `errors`.
        #[serde(default)]
        pub network: Config,
        /// CoAP settings of every run.
        #[serde(default)]
        pub coap: Coap,
        /// The workload of every client; a set's `workloads` replace its `kind`
        /// (each cell keeps only the settings of its own kind, so one table may
        /// hold the observe and the blockwise settings of a campaign that runs
        /// both).
        #[serde(default)]
        pub workload: Workload,
    }
    /// Algorithms each run on the whole population, in every set that does not
    /// list its own.
    algorithms: AlgorithmEntry,
    /// Mixed populations, in every set that does not list its own.
    #[serde(default)]
    pub mixed: Vec<MixedEntry>,
    sets: SetFile,
    named: published_settings,
    entry: "an algorithm name or a table { name = \"…\", … }",
}

/// One matrix of runs.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetFile {
    /// Names the set in reports (`error-free`, `error-prone`, …).
    pub name: String,
    /// Client counts.
    pub clients: Vec<u32>,
    /// Router buffers (bytes or `"inf"`); default: the network's.
    #[serde(default)]
    pub buffers: Option<Vec<Buffer>>,
    /// Workload kinds; default: the workload's.
    #[serde(default)]
    pub workloads: Option<Vec<WorkloadKind>>,
    /// NSTART of every run of the set; default: the campaign's `[coap]
    /// nstart`.
    #[serde(default)]
    pub nstart: Option<u32>,
    /// Exchanges per client (changes of an observed resource, transfers of
    /// a block-wise client) in every run of the set; default: the
    /// workload's.
    #[serde(default)]
    pub exchanges: Option<u32>,
    /// Link-error profiles; default: the network's.
    #[serde(default)]
    pub errors: Option<Vec<ErrorProfile>>,
    /// Replications of every run of the set.
    pub replications: u32,
    /// Replaces the campaign's algorithms for this set.
    #[serde(default)]
    pub algorithms: Option<Vec<AlgorithmEntry>>,
    /// Replaces the campaign's mixed populations for this set.
    #[serde(default)]
    pub mixed: Option<Vec<MixedEntry>>,
}

/// A mixed population: the clients of a run split between algorithms.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MixedEntry {
    /// Names the population in reports (`default+default-fb2`).
    pub label: String,
    /// The algorithms sharing the clients, in group order.
    pub of: Vec<AlgorithmEntry>,
    /// Relative shares of the clients (default: equal).
    #[serde(default)]
    pub shares: Option<Vec<u32>>,
}

/// An algorithm: a registry name (with the published evaluations' settings,
/// `docs/spec/algorithms-spec.md` §7) or a table with explicit parameters (spec defaults for
/// the rest).
pub type AlgorithmEntry = sets::AlgorithmEntry<DumbbellCampaignFile>;

/// Which algorithms missing from this build are skipped instead of failing the
/// campaign: none (`false`, the default), any (`true`), or the listed names.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum SkipUnavailable {
    /// Every algorithm must be available.
    #[default]
    None,
    /// Any unavailable algorithm is skipped.
    All,
    /// Only these may be skipped.
    Listed(Vec<String>),
}

impl SkipUnavailable {
    /// Whether an unavailable `name` may be skipped.
    pub fn allows(&self, name: &str) -> bool {
        match self {
            SkipUnavailable::None => false,
            SkipUnavailable::All => true,
            SkipUnavailable::Listed(names) => names.iter().any(|n| n == name),
        }
    }
}

impl<'de> Deserialize<'de> for SkipUnavailable {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = SkipUnavailable;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("true, false, or a list of algorithm names")
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<SkipUnavailable, E> {
                Ok(if v {
                    SkipUnavailable::All
                } else {
                    SkipUnavailable::None
                })
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<SkipUnavailable, A::Error> {
                let mut names = Vec::new();
                while let Some(n) = seq.next_element::<String>()? {
                    names.push(n);
                }
                Ok(SkipUnavailable::Listed(names))
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_get_published_settings_and_tables_are_literal() {
        let f: DumbbellCampaignFile = toml::from_str(
            r#"
            name = "t"
            algorithms = ["default", "cocoa", { name = "cocoa", aging = true, label = "cocoa-aging" }]
            [[set]]
            name = "s"
            clients = [1]
            replications = 1
            "#,
        )
        .unwrap();
        assert_eq!(f.algorithms[0].0.cap, Some(60.0));
        assert_eq!(f.algorithms[1].0.aging, Some(false));
        assert_eq!(f.algorithms[2].0.aging, Some(true));
        assert_eq!(f.algorithms[2].0.label(), "cocoa-aging");
        assert_eq!(f.skip_unavailable, SkipUnavailable::None);
        assert_eq!(f.seed, 1);
    }

    #[test]
    fn skip_unavailable_forms() {
        let parse = |v: &str| -> SkipUnavailable {
            let f: DumbbellCampaignFile = toml::from_str(&format!(
                "name = \"t\"\nskip_unavailable = {v}\n[[set]]\nname = \"s\"\nclients = [1]\nreplications = 1\n"
            ))
            .unwrap();
            f.skip_unavailable
        };
        assert_eq!(parse("true"), SkipUnavailable::All);
        assert_eq!(parse("false"), SkipUnavailable::None);
        let l = parse("[\"tcp\"]");
        assert!(l.allows("tcp") && !l.allows("fasor"));
    }

    #[test]
    fn unknown_fields_are_named() {
        let e = toml::from_str::<DumbbellCampaignFile>(
            "name = \"t\"\n[[set]]\nname = \"s\"\nclients = [1]\nreplications = 1\nbufers = [2500]\n",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("bufers"), "{e}");
        let e = toml::from_str::<DumbbellCampaignFile>(
            "name = \"t\"\nalgorithms = [{ name = \"cocoa\", agin = true }]\n[[set]]\nname = \"s\"\nclients = [1]\nreplications = 1\n",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("agin"), "{e}");
    }
}
