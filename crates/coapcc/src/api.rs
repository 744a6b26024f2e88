//! A library face of `coapcc run` and `coapcc algorithms` for front-ends other
//! than the command line (the Python package `crates/coapcc-py`).
//!
//! [`run`] applies the same parsing, overrides and output functions as the
//! command line, so its [`Outcome::json`] is byte for byte what `coapcc run
//! --format json` prints (without the final newline). It also hands out the
//! raw per-client (dumbbell), per-node (grid) or per-station (star) records of
//! every replication as one JSON array, for tables.

pub mod campaign;
pub mod report;

use std::sync::atomic::AtomicBool;

use anyhow::{anyhow, Context, Result};
use serde::Serialize;

use crate::budget;

use crate::networks::AnyScenario;
use crate::scenario_file::{self, Overrides};

/// Where a scenario comes from.
#[derive(Clone, Debug)]
pub enum Source {
    /// The embedded default scenario (`coapcc run` without a file).
    Default,
    /// A scenario file.
    Path(std::path::PathBuf),
    /// TOML text; the string names it in errors.
    Toml(String, String),
    /// A JSON document with the structure of a scenario file; the string
    /// names it in errors.
    Json(String, String),
}

/// Parses a scenario from `source`; returns it and the name errors give it.
pub fn load(source: &Source) -> Result<(AnyScenario, String)> {
    match source {
        Source::Default => Ok((
            AnyScenario::parse(scenario_file::DEFAULT_SCENARIO, "<embedded default>")?,
            "<embedded default>".to_string(),
        )),
        Source::Path(p) => Ok((AnyScenario::load(p)?, p.display().to_string())),
        Source::Toml(text, origin) => Ok((AnyScenario::parse(text, origin)?, origin.clone())),
        Source::Json(text, origin) => {
            let text = json_to_toml(text).map_err(|e| anyhow!("{origin}: {e}"))?;
            Ok((AnyScenario::parse(&text, origin)?, origin.clone()))
        }
    }
}

/// A JSON document as TOML text (tables of a scenario file written as JSON
/// objects, arrays of tables as arrays of objects).
pub fn json_to_toml(json: &str) -> Result<String> {
    let value: toml::Value = serde_json::from_str(json)
        .context("expected a table of scenario fields (JSON `null` has no TOML equivalent)")?;
    if !value.is_table() {
        anyhow::bail!(
            "expected a table of scenario fields, found {}",
            value.type_str()
        );
    }
    toml::to_string(&value).context("cannot be written as TOML")
}

/// What a run produced.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// `dumbbell`, `grid` or `star`.
    pub network: &'static str,
    /// What `coapcc run --format json` prints, without the final newline.
    pub json: String,
    /// What `coapcc run` prints as its table (without the wall-time line).
    pub table: String,
    /// What `coapcc run --format markdown` prints.
    pub markdown: String,
    /// A JSON array: one object per client (dumbbell), node (grid) or
    /// station (star) per replication, each with `algorithm` (the label) and
    /// `replication` before the record's own fields.
    pub records: String,
    /// A JSON array: dumbbell scenarios, one object per algorithm,
    /// replication, group of its population and number of transmissions
    /// beyond the first (`retransmissions`: 0 = original only), with the
    /// `exchanges` that needed that many: the retransmissions histogram of each
    /// replication (spec `docs/spec/testbed-spec.md` §3; the testbed counts it per group, not
    /// per client). Empty on the grid and the star.
    pub histograms: String,
    /// Runs, and the events they processed.
    pub runs: u64,
    /// Events processed over all runs.
    pub events: u64,
}

/// How [`run`] runs: the settings of a front other than the scenario.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunOptions<'a> {
    /// Worker threads (all cores if `None` or 0; results do not depend on
    /// it), at most [`budget::THREADS_PER_CORE`] per core.
    pub threads: Option<usize>,
    /// Run even if the estimated memory or events exceed the bounds
    /// ([`budget::check_scenario`]), as `--force` does.
    pub force: bool,
    /// Once set, the run stops and fails with `cancelled`
    /// ([`coapcc_sim::stop`]).
    pub stop: Option<&'a AtomicBool>,
}

/// Loads the scenario of `source`, applies `overrides` and checks it against
/// the resource bounds of `coapcc run` ([`budget::check_scenario`]); returns
/// it, the name errors give it, and the worker threads `threads` asks for
/// (`threads_setting` names that setting in errors: `--threads`, `threads`).
pub fn prepare(
    source: &Source,
    overrides: &Overrides,
    threads: Option<usize>,
    threads_setting: &str,
    force: bool,
) -> Result<(AnyScenario, String, usize)> {
    let (base, origin) = load(source)?;
    let threads = budget::threads_named(threads_setting, threads)?;
    let scenario = base.apply(overrides, &origin)?;
    scenario.check_budget(&origin, threads, force)?;
    Ok((scenario, origin, threads))
}

/// Applies `overrides` to the scenario of `source`, checks it against the
/// resource bounds of `coapcc run` ([`budget::check_scenario`]) and runs it
/// as `options` say; `progress` is called once per finished run.
pub fn run(
    source: &Source,
    overrides: &Overrides,
    options: &RunOptions,
    progress: &(dyn Fn() + Sync),
) -> Result<Outcome> {
    let (scenario, _, threads) =
        prepare(source, overrides, options.threads, "threads", options.force)?;
    let stop = options.stop.unwrap_or(&coapcc_sim::stop::NEVER);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .context("cannot start worker threads")?;
    let ran = scenario.run_on(&pool, progress, stop)?;
    Ok(Outcome {
        network: ran.network(),
        json: ran.json(),
        table: ran.table(),
        markdown: ran.markdown(),
        records: ran.records(),
        histograms: ran.histograms(),
        runs: ran.runs(),
        events: ran.events(),
    })
}

/// One published row of the constrained-link testbed (spec `docs/spec/calibration-spec.md`
/// §1; [`crate::published::PUBLISHED`]): flow completion times in seconds,
/// `None` where the source gives only the median.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PublishedFct {
    /// Clients.
    pub clients: u32,
    /// `continuous` or `random`.
    pub workload: &'static str,
    /// Router buffer in bytes; `None` = infinite.
    pub buffer: Option<u64>,
    /// Link-error profile (`none`, …).
    pub errors: &'static str,
    /// Registry name of the algorithm (`tcp` for CoAP over TCP).
    pub algorithm: &'static str,
    /// Replications the published evaluation ran.
    pub replications: u32,
    /// FCT percentiles (s).
    pub p10: Option<f64>,
    /// 25th percentile.
    pub p25: Option<f64>,
    /// Median.
    pub p50: f64,
    /// 75th percentile.
    pub p75: Option<f64>,
    /// 90th percentile.
    pub p90: Option<f64>,
}

/// Every published FCT row the project compares against (`coapcc
/// calibrate`, the reports), in its order.
pub fn published() -> Vec<PublishedFct> {
    crate::published::PUBLISHED
        .iter()
        .map(|r| PublishedFct {
            clients: r.clients,
            workload: r.workload.name(),
            buffer: r.buffer,
            errors: r.errors.name(),
            algorithm: r.algorithm,
            replications: r.replications(),
            p10: r.p10,
            p25: r.p25,
            p50: r.p50,
            p75: r.p75,
            p90: r.p90,
        })
        .collect()
}

/// One line of `coapcc algorithms`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AlgorithmRow {
    /// The name scenarios and `--algorithms` use.
    pub name: &'static str,
    /// The spec section it implements.
    pub section: &'static str,
    /// Bytes of state: per destination (CoAP algorithms), or of the socket a
    /// connection holds at each end (CoAP over TCP).
    pub state_bytes: usize,
    /// One line saying what it is.
    pub description: &'static str,
    /// Whether some constants are documented guesses.
    pub approximate: bool,
    /// `udp` (CoAP's own retransmission timer) or `tcp` (CoAP over TCP).
    pub transport: &'static str,
}

/// Every algorithm `coapcc algorithms` lists, in its order.
pub fn algorithms() -> Vec<AlgorithmRow> {
    let coap = coapcc_rto::registry::all().map(|a| AlgorithmRow {
        name: a.name,
        section: a.section,
        state_bytes: a.state_bytes,
        description: a.summary,
        approximate: a.approximate,
        transport: "udp",
    });
    let tcp = coapcc_tcp::PROFILES.iter().map(|p| AlgorithmRow {
        name: p.name,
        section: p.section,
        state_bytes: p.profile.state_bytes(),
        description: p.summary,
        approximate: false,
        transport: "tcp",
    });
    coap.chain(tcp).collect()
}

/// Runs `coapcc load` on `args`, the words that follow `coapcc load` on a
/// command line, and returns what `--format json` prints: real clients on
/// real sockets, timed by any algorithm of the process's registry. Bad
/// arguments fail with the command line's message.
pub fn load_real(args: &[String]) -> Result<String> {
    use clap::Parser;

    /// `coapcc load`'s arguments alone.
    #[derive(Parser)]
    #[command(name = "coapcc load", no_binary_name = true)]
    struct Load {
        #[command(flatten)]
        args: crate::cli::args::LoadArgs,
    }
    let parsed = Load::try_parse_from(args).map_err(|e| anyhow::anyhow!("{}", e.render()))?;
    let outcome = crate::cli::net::load(parsed.args)?;
    Ok(crate::cli::net::load_json(&outcome))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one_thread() -> RunOptions<'static> {
        RunOptions {
            threads: Some(1),
            ..RunOptions::default()
        }
    }

    fn tiny() -> Overrides {
        Overrides {
            clients: Some(3),
            replications: Some(2),
            algorithms: Some("default,cocoa".into()),
            ..Overrides::default()
        }
    }

    #[test]
    fn records_cover_every_client_of_every_replication() {
        let o = run(&Source::Default, &tiny(), &one_thread(), &|| {}).unwrap();
        assert_eq!(o.network, "dumbbell");
        assert_eq!(o.runs, 4);
        let rows: Vec<serde_json::Value> = serde_json::from_str(&o.records).unwrap();
        assert_eq!(rows.len(), 2 * 2 * 3);
        assert_eq!(rows[0]["algorithm"], "default");
        assert_eq!(rows[11]["algorithm"], "cocoa");
        assert_eq!(rows[11]["replication"], 1);
        assert!(rows.iter().all(|r| r["fct"].is_number()));
    }

    #[test]
    fn histograms_count_every_completed_exchange_of_each_replication() {
        let o = run(&Source::Default, &tiny(), &one_thread(), &|| {}).unwrap();
        let rows: Vec<serde_json::Value> = serde_json::from_str(&o.records).unwrap();
        let bins: Vec<serde_json::Value> = serde_json::from_str(&o.histograms).unwrap();
        for alg in ["default", "cocoa"] {
            for rep in 0..2u64 {
                let completed: u64 = rows
                    .iter()
                    .filter(|r| r["algorithm"] == alg && r["replication"] == rep)
                    .map(|r| r["completed"].as_u64().unwrap())
                    .sum();
                let mine: Vec<_> = bins
                    .iter()
                    .filter(|b| b["algorithm"] == alg && b["replication"] == rep)
                    .collect();
                let counted: u64 = mine.iter().map(|b| b["exchanges"].as_u64().unwrap()).sum();
                assert_eq!(counted, completed, "{alg} replication {rep}");
                assert!(mine.iter().all(|b| b["group"] == 0));
                assert_eq!(mine[0]["retransmissions"], 0);
            }
        }
    }

    #[test]
    fn json_text_is_what_the_command_line_prints() {
        let o = run(
            &Source::Default,
            &tiny(),
            &RunOptions {
                threads: Some(2),
                ..RunOptions::default()
            },
            &|| {},
        )
        .unwrap();
        let (s, _) = load(&Source::Default).unwrap();
        let Some(s) = s
            .apply(&tiny(), "x")
            .unwrap()
            .into_inner::<crate::networks::dumbbell::Dumbbell>()
        else {
            panic!("the default runs on the dumbbell")
        };
        let r = coapcc_sim::run_scenario(&s, &|| {}).unwrap();
        assert_eq!(o.json, crate::networks::run_json(&s, &r.summaries));
    }

    #[test]
    fn a_json_scenario_is_the_same_as_its_toml() {
        let toml_text = scenario_file::DEFAULT_SCENARIO;
        let value: toml::Value = toml::from_str(toml_text).unwrap();
        let json = serde_json::to_string(&value).unwrap();
        let (from_json, origin) = load(&Source::Json(json, "<dict>".into())).unwrap();
        let (from_toml, _) = load(&Source::Default).unwrap();
        assert_eq!(from_json, from_toml);
        assert_eq!(origin, "<dict>");
    }

    #[test]
    fn errors_name_the_origin_and_the_field() {
        let e = load(&Source::Json(
            r#"{"clients": "many"}"#.into(),
            "<dict>".into(),
        ))
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("<dict>: "), "{e}");
        assert!(e.contains("clients"), "{e}");
        let e = load(&Source::Json("[1, 2]".into(), "<dict>".into()))
            .unwrap_err()
            .to_string();
        assert!(e.contains("expected a table"), "{e}");
    }

    fn refusal(source: &Source, overrides: Overrides, options: RunOptions) -> String {
        run(source, &overrides, &options, &|| panic!("nothing may run"))
            .unwrap_err()
            .to_string()
    }

    /// The checks of `coapcc run`, for every front: memory, replications,
    /// threads.
    #[test]
    fn resources_are_checked_as_the_command_line_does() {
        let e = refusal(
            &Source::Default,
            Overrides {
                clients: Some(1_000_000_000),
                ..Overrides::default()
            },
            RunOptions::default(),
        );
        assert!(
            e.starts_with("<embedded default>: clients: ")
                && e.contains("available")
                && e.contains("force=True"),
            "{e}"
        );
        let e = refusal(
            &Source::Default,
            Overrides {
                replications: Some(10_001),
                ..Overrides::default()
            },
            RunOptions::default(),
        );
        assert_eq!(
            e,
            "<embedded default>: replications: expected 1 to 10000, found 10001"
        );
        let e = refusal(
            &Source::Default,
            Overrides::default(),
            RunOptions {
                threads: Some(1000),
                ..RunOptions::default()
            },
        );
        assert!(e.starts_with("threads: expected 1 to"), "{e}");
    }

    /// Values that pass validation but would never finish or would exhaust
    /// memory are refused before anything runs, naming the field.
    #[test]
    fn runaway_work_and_memory_are_refused_by_field() {
        let grid = "[network]\nkind = \"grid\"\n[workload]\nperiod_s = 1e-9\n\
                    [[algorithm]]\nname = \"default\"\n";
        let star = |w: &str| {
            format!("[network]\nkind = \"star\"\n[workload]\n{w}\n[[algorithm]]\nname = \"tcp\"\n")
        };
        for (text, needles) in [
            (
                grid.to_string(),
                &["g.toml: workload.period_s: ", "events", "--force"][..],
            ),
            (
                star("sample_s = 1e-9"),
                &["g.toml: workload.sample_s: ", "memory", "--force"],
            ),
            (
                star("writes = 100000000"),
                &["g.toml: workload.writes: ", "--force"],
            ),
            (
                star("writes = 4000000000\nsample_s = 1e7"),
                &["g.toml: workload.writes: ", "events"],
            ),
        ] {
            let e = refusal(
                &Source::Toml(text.clone(), "g.toml".into()),
                Overrides::default(),
                RunOptions::default(),
            );
            for n in needles {
                assert!(e.contains(n), "{text}: `{n}` not in {e}");
            }
        }
    }

    #[test]
    fn a_stopped_run_fails_as_cancelled() {
        let stop = AtomicBool::new(true);
        let options = RunOptions {
            stop: Some(&stop),
            ..one_thread()
        };
        let e = run(&Source::Default, &tiny(), &options, &|| {}).unwrap_err();
        assert_eq!(e.to_string(), "cancelled");
    }

    #[test]
    fn published_rows_are_the_calibration_tables() {
        let rows = published();
        assert_eq!(rows.len(), crate::published::PUBLISHED.len());
        // docs/spec/calibration-spec.md §1: one Default CoAP client, continuous, 2500 B.
        let first = &rows[0];
        assert_eq!(
            (first.clients, first.workload, first.buffer, first.errors),
            (1, "continuous", Some(2500), "none")
        );
        assert_eq!((first.algorithm, first.replications), ("default", 20));
        assert_eq!((first.p10, first.p50), (Some(33.003), 33.003));
        assert!(rows.iter().any(|r| r.buffer.is_none() && r.p10.is_none()));
    }

    #[test]
    fn algorithms_list_the_coap_and_tcp_ones() {
        let all = algorithms();
        assert_eq!(
            all.len(),
            coapcc_rto::registry::all().count() + coapcc_tcp::PROFILES.len()
        );
        assert_eq!(all[0].name, "default");
        assert!(all
            .iter()
            .any(|a| a.name == "tcp-lwip" && a.transport == "tcp"));
        assert!(all.iter().all(|a| a.state_bytes > 0));
    }
}
