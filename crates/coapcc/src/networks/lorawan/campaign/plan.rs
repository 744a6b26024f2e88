//! Expanding a LoRaWAN campaign file into its cells (one algorithm at one
//! number of devices and one period of a set) and their runs, checking
//! everything a run would reject before any run starts.
//!
//! Order: sets as written; within a set, devices as written × periods as
//! written × algorithms.

use anyhow::Result;
use coapcc_sim::lorawan;

use super::file::{LorawanCampaignFile, LorawanSetFile};
use crate::campaign::sets;

/// One algorithm at one point of a set's sweep, replicated.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LorawanCell {
    /// The set's name.
    pub set: String,
    /// Devices.
    pub devices: u32,
    /// The request period T (s).
    pub period: f64,
    /// The algorithm's label.
    pub label: String,
    /// The run (its `algorithm` is the cell's).
    pub spec: lorawan::RunSpec,
    /// One key per replication.
    pub keys: Vec<String>,
}

impl crate::campaign::PlanCell for LorawanCell {
    type Spec = lorawan::RunSpec;
    fn keys(&self) -> &[String] {
        &self.keys
    }
    fn spec(&self) -> &lorawan::RunSpec {
        &self.spec
    }
}

/// A LoRaWAN campaign ready to run.
pub type LorawanPlan = crate::campaign::Plan<LorawanCampaignFile, LorawanCell>;

/// Parses and expands LoRaWAN campaign text; `origin` names it in errors.
pub fn parse(text: &str, origin: &str) -> Result<LorawanPlan> {
    sets::expand_sets(
        sets::from_toml(text, origin)?,
        text,
        origin,
        MARKER,
        expand_set,
    )
}

/// What the definition hashes first: the network's marker.
const MARKER: &str = "coapcc-lorawan-campaign";

/// A point of a sweep: devices and period.
type Point = (u32, f64);

/// A set's points (devices × periods) and algorithms, checked.
fn sweep_of<'a>(
    file: &'a LorawanCampaignFile,
    set: &'a LorawanSetFile,
) -> Result<(Vec<Point>, &'a [sets::AlgorithmEntry<LorawanCampaignFile>])> {
    sets::check_replications(set.replications)?;
    sets::check_sweep(
        "devices",
        &set.devices,
        "value",
        |n| (1..=coapcc_link::lorawan::MAX_DEVICES).contains(&n),
        "numbers of devices from 1 to 100000",
    )?;
    sets::check_sweep(
        "periods_s",
        &set.periods_s,
        "value (s)",
        |p| p > 0.0 && p.is_finite(),
        "positive durations in seconds",
    )?;
    let algorithms =
        sets::set_algorithms(set.algorithms.as_deref(), &file.algorithms, "algorithm")?;
    let points = set
        .devices
        .iter()
        .flat_map(|&n| set.periods_s.iter().map(move |&p| (n, p)))
        .collect();
    Ok((points, algorithms))
}

/// The run of `algorithm` at `point` of a set.
fn run_at(
    file: &LorawanCampaignFile,
    set: &LorawanSetFile,
    (devices, period): Point,
    algorithm: &coapcc_sim::AlgorithmSpec,
) -> lorawan::RunSpec {
    let mut workload = file.workload.clone();
    workload.period_s = period;
    if let Some(d) = set.duration_s {
        workload.duration_s = d;
    }
    lorawan::RunSpec {
        network: coapcc_link::lorawan::Config {
            devices,
            ..file.network.clone()
        },
        coap: file.coap.clone(),
        workload,
        algorithm: algorithm.clone(),
        seed: file.seed,
    }
}

/// Counts and samples a LoRaWAN campaign file's cells without expanding
/// them ([`crate::campaign::ceiling`]).
pub fn sample(text: &str, origin: &str) -> Result<Vec<crate::campaign::ceiling::SetSample>> {
    let file: LorawanCampaignFile = sets::from_toml(text, origin)?;
    sets::sample_sets(&file, origin, |file, set| {
        let (points, algorithms) = sweep_of(file, set)?;
        Ok(sets::sample_sweep(
            &points,
            algorithms,
            set.replications,
            |point, algorithm| run_at(file, set, point, algorithm),
            |spec| {
                (
                    super::super::cost::run_cost(spec),
                    super::super::cost::stored_bytes(spec),
                )
            },
        ))
    })
}

fn expand_set(file: &LorawanCampaignFile, set: &LorawanSetFile) -> Result<Vec<LorawanCell>> {
    let (points, algorithms) = sweep_of(file, set)?;
    sets::sweep_cells(
        &points,
        algorithms,
        set.replications,
        |(n, p)| format!("devices = {n}, periods_s = {p}"),
        |point, algorithm| run_at(file, set, point, algorithm),
        lorawan::validate,
        |(devices, period), label, spec, keys| LorawanCell {
            set: set.name.clone(),
            devices,
            period,
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
        name = "l"
        seed = 9
        algorithms = ["default", "cocoa"]
        [network]
        kind = "lorawan"
        [workload]
        duration_s = 600
        [[set]]
        name = "sweep"
        devices = [10, 50]
        periods_s = [60, 300]
        replications = 2
        [[set]]
        name = "long"
        devices = [20]
        periods_s = [120]
        duration_s = 1200
        replications = 1
        algorithms = ["fasor"]
    "#;

    #[test]
    fn sweeps_expand_in_order() {
        let p = parse(BASE, "l.toml").unwrap();
        assert_eq!(p.cells.len(), 2 * 2 * 2 + 1);
        assert_eq!(p.runs(), 2 * 2 * 2 * 2 + 1);
        assert_eq!(p.distinct_keys().len(), p.runs());
        let c = &p.cells[3];
        assert_eq!(
            (c.set.as_str(), c.devices, c.period, c.label.as_str()),
            ("sweep", 10, 300.0, "cocoa")
        );
        assert_eq!(c.spec.network.devices, 10);
        assert_eq!(c.spec.workload.period_s, 300.0);
        assert_eq!(c.spec.workload.duration_s, 600.0);
        assert_eq!(c.spec.seed, 9);
        let l = &p.cells[8];
        assert_eq!((l.devices, l.label.as_str()), (20, "fasor"));
        assert_eq!(l.spec.workload.duration_s, 1200.0);
        assert_eq!(l.keys, [run_key(&l.spec, 0)]);
    }

    #[test]
    fn the_definition_ignores_comments_and_follows_parameters() {
        sets::testing::assert_definition_ignores_comments_and_follows_parameters(BASE, parse);
    }

    #[test]
    fn bad_sets_are_refused_with_file_and_field() {
        let cases = [
            (
                "devices = [10, 50]",
                "devices = []",
                "devices: expected at least one",
            ),
            (
                "devices = [10, 50]",
                "devices = [10, 0]",
                "devices: expected numbers of devices from 1 to 100000, found 0",
            ),
            (
                "periods_s = [60, 300]",
                "periods_s = [60, -1]",
                "periods_s: expected positive durations in seconds, found -1",
            ),
            (
                "periods_s = [60, 300]",
                "periods_s = [60, 60]",
                "periods_s: 60 is listed twice",
            ),
            (
                "replications = 2",
                "replications = 0",
                "replications: expected 1 to 10000, found 0",
            ),
            ("name = \"long\"", "name = \"sweep\"", "name: listed twice"),
            (
                "algorithms = [\"fasor\"]",
                "algorithms = [\"no-such\"]",
                "no-such",
            ),
            (
                "duration_s = 1200",
                "duration_s = -1",
                "workload.duration_s",
            ),
            (
                "kind = \"lorawan\"",
                "kind = \"lorawan\"\nduty_cycle = { g1 = 2.0 }",
                "network.duty_cycle.g1",
            ),
            (
                "duration_s = 600",
                // 62 bytes compress (SCHC) to 53, past SF12's 51.
                "duration_s = 600\n[coap]\nrequest_size = 62",
                "coap.request_size",
            ),
        ];
        sets::testing::assert_refused_with_file_and_field(BASE, "l.toml", parse, &cases);
    }
}
