//! `coapcc calibrate`: every published row of the constrained-link testbed
//! (`published::PUBLISHED`) run with the published replication counts and the
//! published evaluations' settings, shown beside the published figures.

use std::fmt::Write;

use anyhow::Result;
use coapcc_link::dumbbell::Config;
use coapcc_sim::dumbbell::Scenario;
use coapcc_sim::{AlgorithmSpec, NetworkScenario, Summary, Workload};

use crate::published::{PublishedRow, PUBLISHED};

pub mod lossy_star;
pub mod sensitivity;

/// The settings the published evaluations used for an algorithm (spec
/// `docs/spec/algorithms-spec.md` §7): Default CoAP capped at 60 s, CoCoA with aging off, the
/// FASOR development variants with the `initk4` first sample.
pub fn published_settings(name: &str) -> AlgorithmSpec {
    let mut a = AlgorithmSpec::named(name);
    match name {
        "default" | "default-fb1" | "default-fb2" => a.cap = Some(60.0),
        "cocoa" | "cocoa-fb1" | "cocoa-fb2" => a.aging = Some(false),
        "fasor-slow" | "fasor-fastslow" => a.first_sample = Some("initk4".into()),
        _ => {}
    }
    a
}

/// The scenario of one published row.
pub fn scenario_of(row: &PublishedRow, seed: u64, replications: Option<u32>) -> Scenario {
    Scenario {
        name: format!("calibration-{}", row.algorithm),
        description: String::new(),
        network: Config {
            buffer: row.buffer(),
            errors: row.errors,
            ..Config::default()
        },
        coap: Default::default(),
        workload: Workload {
            kind: row.workload,
            ..Workload::default()
        },
        clients: row.clients,
        algorithms: vec![published_settings(row.algorithm)],
        replications: replications.unwrap_or_else(|| row.replications()),
        seed,
    }
}

/// A measured row beside its published one.
pub struct Compared {
    /// The published row.
    pub row: PublishedRow,
    /// The measured summary; `None` when the algorithm is not available.
    pub measured: Option<Summary>,
}

/// Runs every published row whose algorithm coapcc has.
pub fn run(
    seed: u64,
    replications: Option<u32>,
    progress: &(dyn Fn() + Sync),
) -> Result<Vec<Compared>> {
    let mut out = Vec::new();
    for row in PUBLISHED {
        let scenario = scenario_of(row, seed, replications);
        let measured = if scenario.validate().is_ok() {
            Some(
                coapcc_sim::run_scenario(&scenario, progress)?
                    .summaries
                    .remove(0),
            )
        } else {
            None
        };
        out.push(Compared {
            row: *row,
            measured,
        });
    }
    Ok(out)
}

fn cell(v: Option<f64>) -> String {
    v.map_or("—".into(), |x| format!("{x:.3}"))
}

fn diff(measured: f64, published: Option<f64>) -> String {
    published.map_or("—".into(), |p| {
        format!("{:+.1}%", 100.0 * (measured - p) / p)
    })
}

/// A Markdown table: measured and published percentiles, and the difference.
pub fn markdown(rows: &[Compared]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "| clients | workload | buffer | algorithm | reps | measured p10 / p25 / **median** / p75 / p90 | published p10 / p25 / **median** / p75 / p90 | Δ p10 | Δ median | Δ p90 |"
    );
    let _ = writeln!(
        s,
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    );
    for c in rows {
        let r = &c.row;
        let published = format!(
            "{} / {} / **{:.3}** / {} / {}",
            cell(r.p10),
            cell(r.p25),
            r.p50,
            cell(r.p75),
            cell(r.p90)
        );
        let (measured, reps, d10, d50, d90) = match &c.measured {
            Some(m) => (
                format!(
                    "{:.3} / {:.3} / **{:.3}** / {:.3} / {:.3}",
                    m.fct.p10, m.fct.p25, m.fct.p50, m.fct.p75, m.fct.p90
                ),
                m.replications.to_string(),
                diff(m.fct.p10, r.p10),
                diff(m.fct.p50, Some(r.p50)),
                diff(m.fct.p90, r.p90),
            ),
            None => (
                "not available".into(),
                "—".into(),
                "—".into(),
                "—".into(),
                "—".into(),
            ),
        };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            r.clients,
            r.workload.name(),
            r.buffer().label(),
            r.algorithm,
            reps,
            measured,
            published,
            d10,
            d50,
            d90
        );
    }
    s
}
