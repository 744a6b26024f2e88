//! The LoRaWAN campaign file (TOML) as written: a `[network]` with
//! `kind = "lorawan"`, CoAP settings, a base workload, the algorithms, and
//! one or more sets, each sweeping the number of devices × the request
//! period with its own replication count. See `docs/campaigns.md`.

use coapcc_link::lorawan::Config;
use coapcc_sim::lorawan;
use coapcc_sim::AlgorithmSpec;
use serde::Deserialize;

use crate::campaign::sets;

sets::campaign_file! {
    /// A whole LoRaWAN campaign file.
    pub struct LorawanCampaignFile {
        /// The network of every run (`kind = "lorawan"`, the rest as in
        /// LoRaWAN scenario files); a set's sweep replaces `devices`.
        pub network: Config,
        /// CoAP settings of every run.
        #[serde(default)]
        pub coap: lorawan::Coap,
        /// The workload of every run; a set's sweep replaces `period_s`, and
        /// its `duration_s` (if given) replaces `duration_s`.
        #[serde(default)]
        pub workload: lorawan::Workload,
    }
    /// Algorithms of the devices, in every set that does not list its own.
    algorithms: LorawanAlgorithmEntry,
    sets: LorawanSetFile,
    named: AlgorithmSpec::named,
    entry: "an algorithm name or a table { name = \"…\", … }",
}

/// One sweep: every number of devices × every period.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LorawanSetFile {
    /// Names the set in reports.
    pub name: String,
    /// The numbers of devices.
    pub devices: Vec<u32>,
    /// The request periods T (s).
    pub periods_s: Vec<f64>,
    /// Traffic time after the warm-up (s); default: the workload's.
    #[serde(default)]
    pub duration_s: Option<f64>,
    /// Replications of every run of the set.
    pub replications: u32,
    /// Replaces the campaign's algorithms for this set.
    #[serde(default)]
    pub algorithms: Option<Vec<LorawanAlgorithmEntry>>,
}

/// An algorithm: a registry name (its defaults) or a table with explicit
/// parameters.
pub type LorawanAlgorithmEntry = sets::AlgorithmEntry<LorawanCampaignFile>;

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = "name = \"l\"\n[network]\nkind = \"lorawan\"\n[[set]]\nname = \"s\"\ndevices = [10]\nperiods_s = [60]\nreplications = 1\n";

    #[test]
    fn names_get_their_defaults_and_tables_are_literal() {
        let f: LorawanCampaignFile = toml::from_str(&MINIMAL.replace(
            "[network]",
            "algorithms = [\"cocoa\", { name = \"default\", label = \"d2\", ack_timeout = 2 }]\n[network]",
        ))
        .unwrap();
        assert_eq!(f.algorithms[0].0, AlgorithmSpec::named("cocoa"));
        assert_eq!(f.algorithms[1].0.ack_timeout, Some(2.0));
        assert_eq!(f.algorithms[1].0.label(), "d2");
        assert_eq!(f.network, Config::default());
        assert_eq!(f.sets[0].devices, [10]);
    }

    #[test]
    fn unknown_fields_are_named() {
        sets::testing::assert_unknown_fields_named::<LorawanCampaignFile>(
            MINIMAL,
            &[
                ("periods_s = [60]", "perods_s"),
                ("devices = [10]", "device"),
            ],
        );
    }
}
