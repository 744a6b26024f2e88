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
    /// FASOR first-sample rule: `draft` (default), `pseudocode`, `initk4`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_sample: Option<String>,
    /// pCoCoA: the RTO Algorithm 2 line 19 smooths with: `undithered`
    /// (default), `dithered`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smoothing: Option<String>,
    /// CoCoA, CoCoA-FB1/FB2: a timer above the backoff truncation is kept
    /// (`keep`, default) or cut to it (`truncate`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub above_truncation: Option<String>,
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
        use coapcc_rto::{AboveTruncation, FirstSample, Smoothing};
        Ok(coapcc_rto::AlgorithmParams {
            cap: self.cap,
            aging: self.aging,
            first_sample: reading("first_sample", &self.first_sample, FirstSample::parse)?,
            smoothing: reading("smoothing", &self.smoothing, Smoothing::parse)?,
            above_truncation: reading(
                "above_truncation",
                &self.above_truncation,
                AboveTruncation::parse,
            )?,
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
            ("smoothing", self.smoothing.is_some()),
            ("above_truncation", self.above_truncation.is_some()),
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

/// Makes `registry` the process's (`coapcc_rto::registry::install`): the
/// algorithms every scenario, campaign and real client can name from then
/// on. Fails if a registered name selects CoAP over TCP (`tcp`, an lwIP
/// name, …), or if the process's registry was installed or read before.
pub fn install(registry: registry::Registry) -> Result<(), String> {
    for a in registry.iter() {
        not_tcp(a.name)?;
    }
    registry::install(registry).map_err(|e| e.to_string())
}

/// Adds `algorithm` to the process's registry while it runs
/// (`coapcc_rto::registry::register`, for front-ends such as the Python
/// package); fails, adding nothing, if its name is not valid, already
/// taken, or selects CoAP over TCP.
pub fn register(
    algorithm: registry::NewAlgorithm,
) -> Result<&'static registry::AlgorithmInfo, String> {
    not_tcp(algorithm.name())?;
    registry::register(algorithm).map_err(|e| e.to_string())
}

/// Refuses a name of CoAP over TCP (`tcp`, an lwIP name, …).
fn not_tcp(name: &str) -> Result<(), String> {
    let tcp = coapcc_tcp::TcpProfile::from_name(name).is_some()
        || coapcc_tcp::TcpProfile::switch_name_error(name).is_some();
    if tcp {
        return Err(format!(
            "algorithm `{name}`: the name selects CoAP over TCP; choose another"
        ));
    }
    Ok(())
}

/// Parses the value of the reading `field` (one of
/// [`coapcc_rto::readings::READINGS`]) with `parse`; the error names the field
/// and lists the accepted values.
fn reading<T>(
    field: &str,
    value: &Option<String>,
    parse: fn(&str) -> Option<T>,
) -> Result<Option<T>, String> {
    let Some(s) = value else {
        return Ok(None);
    };
    parse(s).map(Some).ok_or_else(|| {
        let values = coapcc_rto::readings::READINGS
            .iter()
            .find(|r| r.parameter == field)
            .map_or(&[][..], |r| r.values);
        let quoted: Vec<String> = values.iter().map(|v| format!("\"{v}\"")).collect();
        let expected = match quoted.split_last() {
            Some((last, [])) => last.clone(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
            None => "a known value".into(),
        };
        format!("{field}: expected {expected}, found \"{s}\"")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use coapcc_rto::{AboveTruncation, FirstSample, Smoothing};

    #[derive(Deserialize)]
    struct File {
        algorithms: Vec<AlgorithmSpec>,
    }

    /// The one algorithm of a scenario file's `[[algorithms]]` table.
    fn spec(table: &str) -> AlgorithmSpec {
        let mut f: File = toml::from_str(&format!("[[algorithms]]\n{table}")).unwrap();
        f.algorithms.remove(0)
    }

    #[test]
    fn readings_are_read_from_scenario_files() {
        let a = spec("name = \"pcocoa\"\nsmoothing = \"dithered\"");
        assert_eq!(a.check(), Ok(()));
        assert_eq!(a.params().unwrap().smoothing, Some(Smoothing::Dithered));
        let a = spec("name = \"cocoa-fb2\"\nabove_truncation = \"truncate\"");
        assert_eq!(a.check(), Ok(()));
        let p = a.params().unwrap();
        assert_eq!(p.above_truncation, Some(AboveTruncation::Truncate));
        let a = spec("name = \"fasor\"\nfirst_sample = \"pseudocode\"");
        assert_eq!(
            a.params().unwrap().first_sample,
            Some(FirstSample::Pseudocode)
        );
        let p = spec("name = \"pcocoa\"").params().unwrap();
        assert_eq!((p.smoothing, p.above_truncation), (None, None));
    }

    #[test]
    fn a_bad_reading_names_the_field_and_the_accepted_values() {
        let e = spec("name = \"pcocoa\"\nsmoothing = \"smooth\"").check();
        assert_eq!(
            e.unwrap_err(),
            "algorithm `pcocoa`: smoothing: expected \"undithered\" or \"dithered\", found \"smooth\""
        );
        let e = spec("name = \"cocoa\"\nabove_truncation = \"cut\"").check();
        assert_eq!(
            e.unwrap_err(),
            "algorithm `cocoa`: above_truncation: expected \"keep\" or \"truncate\", found \"cut\""
        );
        let e = spec("name = \"fasor\"\nfirst_sample = \"sometimes\"").check();
        assert_eq!(
            e.unwrap_err(),
            "algorithm `fasor`: first_sample: expected \"draft\", \"pseudocode\" or \"initk4\", found \"sometimes\""
        );
    }

    #[test]
    fn a_reading_of_another_algorithm_is_refused() {
        for (table, field) in [
            ("name = \"cocoa\"\nsmoothing = \"dithered\"", "smoothing"),
            (
                "name = \"cocoa-plus\"\nabove_truncation = \"keep\"",
                "above_truncation",
            ),
            (
                "name = \"pcocoa\"\nabove_truncation = \"keep\"",
                "above_truncation",
            ),
            ("name = \"tcp\"\nsmoothing = \"undithered\"", "smoothing"),
            (
                "name = \"tcp\"\nabove_truncation = \"keep\"",
                "above_truncation",
            ),
        ] {
            let e = spec(table).check().unwrap_err();
            assert!(e.contains(&format!("`{field}`")), "{table}: {e}");
        }
    }

    #[test]
    fn install_refuses_names_of_coap_over_tcp() {
        use registry::{BoxedAlgorithm, NewAlgorithm, Registry};
        for name in ["tcp", "tcp-lwip", "tcp-linux6"] {
            let r = Registry::builtin()
                .with(NewAlgorithm::new(name, |p| {
                    Ok(
                        Box::new(coapcc_rto::default::DefaultCoap::from_params("x", p)?)
                            as BoxedAlgorithm,
                    )
                }))
                .unwrap();
            assert_eq!(
                install(r).unwrap_err(),
                format!("algorithm `{name}`: the name selects CoAP over TCP; choose another")
            );
        }
    }

    #[test]
    fn unset_readings_are_not_written() {
        let text = toml::to_string(&AlgorithmSpec::named("pcocoa")).unwrap();
        assert_eq!(text, "name = \"pcocoa\"\n");
    }
}
