//! Expanding a grid campaign file into its cells (one algorithm at one point
//! of a set's sweep) and their runs, checking everything a run would reject
//! before any run starts.
//!
//! Order: sets as written; within a set, points as written × algorithms.

use anyhow::{bail, Result};
use coapcc_sim::grid;

use super::file::{GridCampaignFile, GridSetFile};
use crate::campaign::sets;

/// One algorithm at one point of a set's sweep, replicated.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GridCell {
    /// The set's name.
    pub set: String,
    /// The sweep: periodic (the point is the period T) or bursty (the point is
    /// the interferers' ON duration).
    pub kind: grid::WorkloadKind,
    /// The period T or the ON duration (s).
    pub point: f64,
    /// The algorithm's label.
    pub label: String,
    /// The run (its `algorithm` is the cell's).
    pub spec: grid::RunSpec,
    /// One key per replication.
    pub keys: Vec<String>,
}

impl crate::campaign::PlanCell for GridCell {
    type Spec = grid::RunSpec;
    fn keys(&self) -> &[String] {
        &self.keys
    }
    fn spec(&self) -> &grid::RunSpec {
        &self.spec
    }
}

/// A grid campaign ready to run.
pub type GridPlan = crate::campaign::Plan<GridCampaignFile, GridCell>;

/// Parses and expands grid campaign text; `origin` names it in errors.
pub fn parse(text: &str, origin: &str) -> Result<GridPlan> {
    sets::expand_sets(
        sets::from_toml(text, origin)?,
        text,
        origin,
        MARKER,
        expand_set,
    )
}

/// `0.5` → `0.5`, `8.0` → `8`: how points are written in messages and labels.
pub fn point_text(v: f64) -> String {
    format!("{v}")
}

/// What the definition hashes first: the network's marker.
const MARKER: &str = "coapcc-grid-campaign";

/// A set's sweep, checked: its kind, the field it sweeps, its points and
/// its algorithms.
type Sweep<'a> = (
    grid::WorkloadKind,
    &'static str,
    &'a [f64],
    &'a [sets::AlgorithmEntry<GridCampaignFile>],
);

/// A set's sweep ([`Sweep`]), checked.
fn sweep_of<'a>(file: &'a GridCampaignFile, set: &'a GridSetFile) -> Result<Sweep<'a>> {
    sets::check_replications(set.replications)?;
    let (kind, field, points) = match (&set.periods_s, &set.on_s) {
        (Some(p), None) => (grid::WorkloadKind::Periodic, "periods_s", p),
        (None, Some(o)) => (grid::WorkloadKind::Bursty, "on_s", o),
        _ => {
            bail!(
                "expected exactly one of `periods_s` (a periodic sweep of the request period) \
                 and `on_s` (a bursty sweep of the interferers' ON duration)"
            )
        }
    };
    sets::check_sweep(
        field,
        points,
        "value (s)",
        |p| p > 0.0 && p.is_finite(),
        "positive durations in seconds",
    )?;
    let algorithms =
        sets::set_algorithms(set.algorithms.as_deref(), &file.algorithms, "algorithm")?;
    Ok((kind, field, points, algorithms))
}

/// The run of `algorithm` at `point` of a set's sweep of `kind`.
fn run_at(
    file: &GridCampaignFile,
    set: &GridSetFile,
    kind: grid::WorkloadKind,
    point: f64,
    algorithm: &coapcc_sim::AlgorithmSpec,
) -> grid::RunSpec {
    let mut workload = file.workload.clone();
    workload.kind = kind;
    match kind {
        grid::WorkloadKind::Periodic => workload.period_s = point,
        grid::WorkloadKind::Bursty => workload.on_s = point,
    }
    if let Some(d) = set.duration_s {
        workload.duration_s = d;
    }
    grid::RunSpec {
        network: file.network.clone(),
        coap: file.coap.clone(),
        workload,
        algorithm: algorithm.clone(),
        seed: file.seed,
    }
}

/// Counts and samples a grid campaign file's cells without expanding them
/// ([`crate::campaign::ceiling`]).
pub fn sample(text: &str, origin: &str) -> Result<Vec<crate::campaign::ceiling::SetSample>> {
    let file: GridCampaignFile = sets::from_toml(text, origin)?;
    sets::sample_sets(&file, origin, |file, set| {
        let (kind, _, points, algorithms) = sweep_of(file, set)?;
        Ok(sets::sample_sweep(
            points,
            algorithms,
            set.replications,
            |point, algorithm| run_at(file, set, kind, point, algorithm),
            |spec| {
                (
                    super::super::cost::run_cost(spec),
                    super::super::cost::stored_bytes(spec),
                )
            },
        ))
    })
}

fn expand_set(file: &GridCampaignFile, set: &GridSetFile) -> Result<Vec<GridCell>> {
    let (kind, field, points, algorithms) = sweep_of(file, set)?;
    sets::sweep_cells(
        points,
        algorithms,
        set.replications,
        |point| format!("{field} = {}", point_text(point)),
        |point, algorithm| run_at(file, set, kind, point, algorithm),
        grid::validate,
        |point, label, spec, keys| GridCell {
            set: set.name.clone(),
            kind,
            point,
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
        name = "g"
        seed = 9
        algorithms = ["default", "cocoa-plus"]
        [network]
        kind = "grid"
        [workload]
        period_s = 14
        duration_s = 100
        [[set]]
        name = "periodic"
        periods_s = [2, 8, 0.5]
        replications = 3
        [[set]]
        name = "bursty"
        on_s = [10, 20]
        duration_s = 200
        replications = 2
        algorithms = ["pcocoa"]
    "#;

    #[test]
    fn sweeps_expand_in_order() {
        let p = parse(BASE, "g.toml").unwrap();
        assert_eq!(p.cells.len(), 3 * 2 + 2);
        assert_eq!(p.runs(), 3 * 2 * 3 + 2 * 2);
        assert_eq!(p.distinct_keys().len(), p.runs());
        let c = &p.cells[1];
        assert_eq!(
            (c.set.as_str(), c.kind, c.point, c.label.as_str()),
            ("periodic", grid::WorkloadKind::Periodic, 2.0, "cocoa-plus")
        );
        assert_eq!(c.spec.workload.period_s, 2.0);
        assert_eq!(c.spec.workload.duration_s, 100.0);
        assert_eq!(c.spec.seed, 9);
        assert_eq!(p.cells[0].spec.algorithm.ack_timeout, Some(3.0));
        assert_eq!(p.cells[4].point, 0.5);
        let b = &p.cells[6];
        assert_eq!(
            (b.kind, b.point, b.label.as_str()),
            (grid::WorkloadKind::Bursty, 10.0, "pcocoa")
        );
        assert_eq!(b.spec.workload.kind, grid::WorkloadKind::Bursty);
        assert_eq!(
            (b.spec.workload.period_s, b.spec.workload.on_s),
            (14.0, 10.0)
        );
        assert_eq!(b.spec.workload.duration_s, 200.0);
        assert_eq!(b.keys, [run_key(&b.spec, 0), run_key(&b.spec, 1)]);
    }

    #[test]
    fn the_definition_ignores_comments_and_follows_parameters() {
        sets::testing::assert_definition_ignores_comments_and_follows_parameters(BASE, parse);
    }

    #[test]
    fn bad_sets_are_refused_with_file_and_field() {
        let cases = [
            (
                "periods_s = [2, 8, 0.5]",
                "periods_s = [2, 8]\non_s = [1]",
                "exactly one of `periods_s`",
            ),
            (
                "periods_s = [2, 8, 0.5]",
                "periods_s = []",
                "periods_s: expected at least one",
            ),
            (
                "periods_s = [2, 8, 0.5]",
                "periods_s = [2, -8]",
                "periods_s: expected positive durations in seconds, found -8",
            ),
            (
                "periods_s = [2, 8, 0.5]",
                "periods_s = [2, 2]",
                "periods_s: 2 is listed twice",
            ),
            (
                "replications = 3",
                "replications = 0",
                "replications: expected 1 to 10000, found 0",
            ),
            (
                "name = \"bursty\"",
                "name = \"periodic\"",
                "name: listed twice",
            ),
            (
                "algorithms = [\"pcocoa\"]",
                "algorithms = [\"pcocoa\", \"pcocoa\"]",
                "`pcocoa` is listed twice",
            ),
            (
                "algorithms = [\"pcocoa\"]",
                "algorithms = [\"no-such\"]",
                "no-such",
            ),
            ("duration_s = 200", "duration_s = -1", "workload.duration_s"),
            (
                "kind = \"grid\"",
                "kind = \"grid\"\nserver = 1",
                "network.server",
            ),
            (
                "period_s = 14",
                "period_s = 14\ntrace_node = 3",
                "workload.trace_node: node 3 is not a client",
            ),
        ];
        sets::testing::assert_refused_with_file_and_field(BASE, "g.toml", parse, &cases);
    }
}
