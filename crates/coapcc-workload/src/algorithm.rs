//! What a client runs: its algorithm with parameters, as written in a scenario
//! (spec `docs/spec/algorithms-spec.md` §8), checked against the registry.

use coapcc_rto::registry;
use serde::{Deserialize, Serialize};

/// The name that selects CoAP over TCP with the `linux` profile (spec
/// `docs/spec/algorithms-spec.md` §8, `docs/spec/transport-tcp-spec.md` §2). `tcp-lwip`,
/// `tcp-lwip-backoff`, `tcp-lwip-cwnd` and `tcp-lwip-backoff-cwnd` select it
/// with lwIP's TCP (`docs/spec/transport-tcp-spec.md` §3); see [`coapcc_tcp::PROFILES`].
pub const TCP: &str = "tcp";

/// An algorithm with its parameters, as written in a scenario (spec
/// `docs/spec/algorithms-spec.md` §8). `label` names it in reports (defaults to `name`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct AlgorithmSpec {
    /// Registry name (`default`, `cocoa`, …).
    pub name: String,
    /// Report label; defaults to the name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Timer cap (s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cap: Option<f64>,
    /// CoCoA / CoCoA+ aging.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aging: Option<bool>,
    /// FASOR first-sample rule: `draft`, `pseudocode`, `initk4`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_sample: Option<String>,
    /// FASOR SLOWRTO_FACTOR.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slowrto_factor: Option<f64>,
    /// ACK_TIMEOUT (s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ack_timeout: Option<f64>,
    /// ACK_RANDOM_FACTOR.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ack_random_factor: Option<f64>,
}

impl AlgorithmSpec {
    /// An algorithm by name with its spec defaults.
    pub fn named(name: &str) -> Self {
        AlgorithmSpec {
            name: name.into(),
            ..Default::default()
        }
    }

    /// The label used in reports.
    pub fn label(&self) -> &str {
        self.label.as_deref().unwrap_or(&self.name)
    }

    /// Checks the label: not empty or blank, no control characters (it names
    /// table rows, figure legends and pcap files). Errors name the field.
    pub fn check_label(&self) -> Result<(), String> {
        let l = self.label();
        if l.trim().is_empty() || l.chars().any(char::is_control) {
            return Err(format!(
                "algorithm `{}`: label: expected a non-empty name without control characters, found {l:?}",
                self.name
            ));
        }
        Ok(())
    }

    /// The parameters in the algorithm crate's form.
    pub fn params(&self) -> Result<coapcc_rto::AlgorithmParams, String> {
        let first_sample = match &self.first_sample {
            None => None,
            Some(s) => Some(coapcc_rto::FirstSample::parse(s).ok_or_else(|| {
                format!(
                    "first_sample: expected \"draft\", \"pseudocode\" or \"initk4\", found \"{s}\""
                )
            })?),
        };
        Ok(coapcc_rto::AlgorithmParams {
            cap: self.cap,
            aging: self.aging,
            first_sample,
            slowrto_factor: self.slowrto_factor,
            ack_timeout: self.ack_timeout,
            ack_random_factor: self.ack_random_factor,
        })
    }

    /// Whether this selects CoAP over TCP (not a CoAP congestion-control
    /// algorithm): `tcp` or one of the lwIP names.
    pub fn is_tcp(&self) -> bool {
        self.tcp_profile().is_some()
    }

    /// The TCP profile this name selects, if it is a CoAP-over-TCP name.
    pub fn tcp_profile(&self) -> Option<coapcc_tcp::TcpProfile> {
        coapcc_tcp::TcpProfile::from_name(&self.name)
    }

    /// Checks that the algorithm exists and accepts its parameters.
    pub fn check(&self) -> Result<(), String> {
        if self.is_tcp() {
            return self.check_tcp();
        }
        if let Some(e) = coapcc_tcp::TcpProfile::switch_name_error(&self.name) {
            return Err(format!("algorithm `{}`: {e}", self.name));
        }
        let info = registry::find(&self.name).ok_or_else(|| {
            format!(
                "algorithm `{}`: unknown name; expected one of: {}, {}",
                self.name,
                registry::names(),
                coapcc_tcp::TcpProfile::names()
            )
        })?;
        let params = self
            .params()
            .map_err(|e| format!("algorithm `{}`: {e}", self.name))?;
        (info.build)(&params).map_err(|e| e.to_string())?;
        Ok(())
    }

    /// The registry entry and parameters a client is built from.
    pub fn factory(
        &self,
    ) -> Result<
        (
            &'static registry::AlgorithmInfo,
            coapcc_rto::AlgorithmParams,
        ),
        String,
    > {
        if self.is_tcp() {
            return Err(format!(
                "algorithm `{}`: CoAP over TCP has no UDP client",
                self.name
            ));
        }
        self.check()?;
        let info = registry::find(&self.name).expect("checked");
        Ok((info, self.params().expect("checked")))
    }

    /// CoAP over TCP takes none of the CoAP timer parameters.
    fn check_tcp(&self) -> Result<(), String> {
        let set = [
            ("cap", self.cap.is_some()),
            ("aging", self.aging.is_some()),
            ("first_sample", self.first_sample.is_some()),
            ("slowrto_factor", self.slowrto_factor.is_some()),
            ("ack_timeout", self.ack_timeout.is_some()),
            ("ack_random_factor", self.ack_random_factor.is_some()),
        ];
        match set.iter().find(|(_, on)| *on) {
            Some((param, _)) => Err(format!(
                "algorithm `{}`: parameter `{param}` does not apply to CoAP over TCP",
                self.name
            )),
            None => Ok(()),
        }
    }
}
