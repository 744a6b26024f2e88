//! `coapcc calibrate --sensitivity`: every disputed reading of the models,
//! run on the published rows it touches, side by side.
//!
//! A *switch* is one place where the sources leave two or more readings open
//! (an algorithm's parameter, a TCP mechanism, a property of the link-error
//! process, the Wi-Fi star's channel). Each has its readings, the default
//! first, and the rows it touches: published rows of the constrained-link
//! testbed where there are some, otherwise the rows of the evaluation the
//! switch belongs to (the error-prone dumbbell, the pCoCoA grid, the lwIP
//! star), whose published figures the sources do not give. Every row is a
//! scenario, written as the TOML of a scenario file and run through the
//! network registry, so a row of any network is run the same way. Which
//! default was chosen and why: `docs/calibration.md`, "Readings and their
//! sensitivity".

use std::fmt::Write;
use std::sync::atomic::AtomicBool;

use anyhow::{anyhow, Context, Result};
use coapcc_link::errors::ErrorProfile;
use coapcc_sim::WorkloadKind;
use serde_json::Value;
use toml::{Table, Value as Toml};

use super::published_settings;
use crate::networks::AnyScenario;
use crate::published::{PublishedRow, PUBLISHED};

/// The embedded scenario files the rows of the radio networks start from.
const GRID_PERIODIC: &str = include_str!("../../../../scenarios/pcocoa/periodic.toml");
/// The lwIP evaluation's star (also the lossy star's, [`super::lossy_star`]).
pub(super) const STAR: &str = include_str!("../../../../scenarios/lwip/star.toml");

/// One reading of a switch: what it sets on the row's algorithm and on the
/// row's `[network]` table.
#[derive(Clone, Debug, PartialEq)]
pub struct Reading {
    /// How the table heads its column.
    pub label: String,
    /// Keys set on the row's `[[algorithm]]` table (`name` replaces the
    /// algorithm: a TCP profile by name).
    pub algorithm: Table,
    /// Keys set on the row's `[network]` table.
    pub network: Table,
}

/// What a row reads from a run's JSON.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Metric {
    /// Its name in the table.
    pub name: &'static str,
    /// The JSON pointer of the value inside the algorithm's summary.
    pub pointer: &'static str,
    /// A divisor (per-station figures of the star).
    pub per: f64,
}

/// The median flow completion time of the constrained-link testbed.
pub const FCT_MEDIAN: Metric = Metric {
    name: "FCT median (s)",
    pointer: "/fct/p50",
    per: 1.0,
};
/// The star's retransmitted segments per station per run.
pub const STAR_RETRANSMISSIONS: Metric = Metric {
    name: "retransmissions per station",
    pointer: "/retransmissions/mean",
    per: 12.0,
};
/// The star's largest RTO in force (s).
pub const STAR_MAX_RTO: Metric = Metric {
    name: "largest RTO (s)",
    pointer: "/max_rto/mean",
    per: 1.0,
};
/// The grid's CoAP transmissions per completed exchange.
pub const GRID_TX: Metric = Metric {
    name: "transmissions per exchange",
    pointer: "/tx_per_transaction/mean",
    per: 1.0,
};

/// One row a switch touches.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// How the table names it.
    pub label: String,
    /// The scenario, as a scenario file's table, with one `[[algorithm]]`.
    pub scenario: Table,
    /// What is read from the run.
    pub metric: Metric,
    /// The published figure, as the source gives it; `None` where the
    /// sources give none.
    pub published: Option<Published>,
}

/// A published figure: a value or a bound.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Published {
    /// The value.
    Value(f64),
    /// "Below" the value.
    Below(f64),
}

/// One disputed reading and the rows it touches.
#[derive(Clone, Debug, PartialEq)]
pub struct Switch {
    /// Its name (the parameter, the switch or the property).
    pub name: String,
    /// Where the ambiguity is, in one line.
    pub source: String,
    /// The readings, the model's default first.
    pub readings: Vec<Reading>,
    /// The rows.
    pub rows: Vec<Row>,
}

fn table(pairs: &[(&str, Toml)]) -> Table {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_string(), v.clone()))
        .collect()
}

fn text(s: &str) -> Toml {
    Toml::String(s.to_string())
}

/// A reading that only renames the algorithm (a TCP profile).
fn profile(name: &str) -> Reading {
    Reading {
        label: name.to_string(),
        algorithm: table(&[("name", text(name))]),
        network: Table::new(),
    }
}

/// A reading that sets one algorithm parameter.
fn parameter(key: &str, value: &str) -> Reading {
    Reading {
        label: format!("{key} = {value}"),
        algorithm: table(&[(key, text(value))]),
        network: Table::new(),
    }
}

/// A reading that sets `[network.error_structure] key = value` (the
/// default: nothing set).
fn error_structure(key: &str, value: Option<&str>) -> Reading {
    let mut network = Table::new();
    if let Some(v) = value {
        network.insert(
            "error_structure".into(),
            Toml::Table(table(&[(key, text(v))])),
        );
    }
    Reading {
        label: value.map_or_else(|| "model".to_string(), |v| format!("{key} = {v}")),
        algorithm: Table::new(),
        network,
    }
}

/// The scenario table of a published row with `algorithm` (its published
/// settings) and `replications`.
fn dumbbell_table(
    clients: u32,
    workload: WorkloadKind,
    buffer: Option<u64>,
    errors: ErrorProfile,
    algorithm: &str,
    replications: u32,
    seed: u64,
) -> Table {
    let mut network = table(&[("errors", text(errors.name()))]);
    network.insert(
        "buffer".into(),
        buffer.map_or_else(|| text("inf"), |b| Toml::Integer(b as i64)),
    );
    let alg = Toml::try_from(published_settings(algorithm)).expect("an algorithm serialises");
    let mut t = table(&[
        ("name", text(&format!("sensitivity-{algorithm}"))),
        ("clients", Toml::Integer(i64::from(clients))),
        ("replications", Toml::Integer(i64::from(replications))),
        ("seed", Toml::Integer(seed as i64)),
        ("algorithm", Toml::Array(vec![alg])),
    ]);
    t.insert("network".into(), Toml::Table(network));
    t.insert(
        "workload".into(),
        Toml::Table(table(&[("kind", text(workload.name()))])),
    );
    t
}

/// "1 client", "10 clients".
fn clients(n: u32) -> String {
    if n == 1 {
        "1 client".into()
    } else {
        format!("{n} clients")
    }
}

fn published_row(r: &PublishedRow, seed: u64) -> Row {
    Row {
        label: format!(
            "{}, {}, buffer {}, {}",
            r.algorithm,
            clients(r.clients),
            r.buffer().label(),
            r.workload.name()
        ),
        scenario: dumbbell_table(
            r.clients,
            r.workload,
            r.buffer,
            r.errors,
            r.algorithm,
            r.replications(),
            seed,
        ),
        metric: FCT_MEDIAN,
        published: Some(Published::Value(r.p50)),
    }
}

/// The published rows of `algorithm`.
fn published_rows(algorithm: &str, seed: u64) -> Vec<Row> {
    PUBLISHED
        .iter()
        .filter(|r| r.algorithm == algorithm)
        .map(|r| published_row(r, seed))
        .collect()
}

/// The error-prone rows of the thesis's FASOR sets (10 clients, 40
/// replications, both workloads; the buffer does not matter with 10
/// clients, so the infinite one) for `algorithms` under `profile`. The
/// sources give no figures for them (the thesis's result chapters are not
/// among them).
fn error_rows(profile: ErrorProfile, algorithms: &[&str], seed: u64) -> Vec<Row> {
    let mut rows = Vec::new();
    for workload in [WorkloadKind::Continuous, WorkloadKind::Random] {
        for a in algorithms {
            rows.push(Row {
                label: format!(
                    "{a}, 10 clients, {} errors, {}",
                    profile.name(),
                    workload.name()
                ),
                scenario: dumbbell_table(10, workload, None, profile, a, 40, seed),
                metric: FCT_MEDIAN,
                published: None,
            });
        }
    }
    rows
}

/// An embedded scenario file's table with its algorithms replaced by
/// `algorithms` (registry names), `network` keys set and `seed`.
pub(super) fn file_table(file: &str, algorithms: &[&str], network: Table, seed: u64) -> Table {
    let mut scenario: Table = file.parse().expect("an embedded scenario parses");
    let algorithms = algorithms
        .iter()
        .map(|a| Toml::Table(table(&[("name", text(a))])))
        .collect();
    scenario.insert("algorithm".into(), Toml::Array(algorithms));
    scenario.insert("seed".into(), Toml::Integer(seed as i64));
    if let Some(Toml::Table(n)) = scenario.get_mut("network") {
        n.extend(network);
    }
    scenario
}

/// A row of an embedded scenario file with its algorithms replaced by
/// `algorithm` (a registry name) and `network` keys set.
fn file_row(
    file: &str,
    label: String,
    algorithm: &str,
    network: Table,
    metric: Metric,
    published: Option<Published>,
    seed: u64,
) -> Row {
    Row {
        label,
        scenario: file_table(file, &[algorithm], network, seed),
        metric,
        published,
    }
}

/// The lwIP paper's figures for the star's flavours (Mhamdi and Abdul
/// Khalek 2023, §5.2, Figures 5, 6 and 12): retransmissions of one client
/// over the 400 s, and its largest RTO.
fn lwip_published(profile: &str, metric: Metric) -> Option<Published> {
    let base = profile.split(':').next().unwrap_or(profile);
    match (base, metric.pointer) {
        ("tcp-lwip", "/retransmissions/mean") => Some(Published::Value(136.0)),
        ("tcp-lwip-backoff-cwnd", "/retransmissions/mean") => Some(Published::Value(10.0)),
        (_, "/retransmissions/mean") if base.starts_with("tcp-lwip-") => {
            Some(Published::Below(27.0))
        }
        ("tcp-lwip", "/max_rto/mean") => Some(Published::Value(24.0)),
        ("tcp-lwip-backoff", "/max_rto/mean") => Some(Published::Value(7.0)),
        _ => None,
    }
}

/// The star's rows for `algorithm`: per-station retransmissions and the
/// largest RTO, on the lossless star and on the lossy one at `ber`.
fn star_rows(algorithm: &str, ber: f64, seed: u64) -> Vec<Row> {
    let mut rows = Vec::new();
    for (channel, b) in [("lossless", 0.0), ("lossy", ber)] {
        for metric in [STAR_RETRANSMISSIONS, STAR_MAX_RTO] {
            let network = if b > 0.0 {
                table(&[("bit_error_rate", Toml::Float(b))])
            } else {
                Table::new()
            };
            rows.push(file_row(
                STAR,
                format!("{algorithm}, {channel} star"),
                algorithm,
                network,
                metric,
                lwip_published(algorithm, metric),
                seed,
            ));
        }
    }
    rows
}

/// Every switch, with its rows. `star_ber` is the lossy star's bit-error
/// rate (`super::lossy_star::FITTED_BER`).
pub fn switches(seed: u64, star_ber: f64) -> Vec<Switch> {
    let mut out = Vec::new();
    for r in coapcc_tcp::READINGS {
        let rows = if r.default == "tcp" {
            published_rows("tcp", seed)
        } else {
            star_rows(r.default, star_ber, seed)
        };
        out.push(Switch {
            name: format!("TCP: {}", r.switch),
            source: r.source.to_string(),
            readings: r.profiles.iter().map(|p| profile(p)).collect(),
            rows,
        });
    }
    for r in coapcc_rto::readings::READINGS {
        let mut rows = Vec::new();
        for a in r.algorithms {
            rows.extend(published_rows(a, seed));
            if *a == "pcocoa" {
                rows.push(file_row(
                    GRID_PERIODIC,
                    "pcocoa, grid T = 8 s".into(),
                    a,
                    Table::new(),
                    GRID_TX,
                    None,
                    seed,
                ));
            }
        }
        if r.algorithms.contains(&"cocoa") {
            // Where CoCoA's timers pass the 32 s truncation: short-lived
            // clients behind a bloated buffer (the Full Backoff study's
            // setting; no published figure here).
            rows.push(Row {
                label: "cocoa, 400 clients, buffer 28200, random".into(),
                scenario: dumbbell_table(
                    400,
                    WorkloadKind::Random,
                    Some(28200),
                    ErrorProfile::None,
                    "cocoa",
                    20,
                    seed,
                ),
                metric: FCT_MEDIAN,
                published: None,
            });
        }
        let dumbbell: Vec<&str> = r
            .algorithms
            .iter()
            .copied()
            .filter(|a| ["cocoa", "fasor", "fasor-token"].contains(a))
            .collect();
        rows.extend(error_rows(ErrorProfile::High, &dumbbell, seed));
        out.push(Switch {
            name: format!("{}: {}", r.algorithms.join(", "), r.parameter),
            source: r.source.to_string(),
            readings: r.values.iter().map(|v| parameter(r.parameter, v)).collect(),
            rows,
        });
    }
    const ERROR_ALGORITHMS: [&str; 4] = ["default", "cocoa", "fasor", "fasor-token"];
    for (key, values, source) in ERROR_STRUCTURE {
        let mut readings = vec![error_structure(key, None)];
        readings.extend(values.iter().map(|v| error_structure(key, Some(v))));
        let mut rows = error_rows(ErrorProfile::High, &ERROR_ALGORITHMS, seed);
        rows.extend(error_rows(ErrorProfile::Medium, &ERROR_ALGORITHMS, seed));
        out.push(Switch {
            name: format!("link errors: {key}"),
            source: source.to_string(),
            readings,
            rows,
        });
    }
    out
}

/// The link-error process's open properties (`[network.error_structure]`):
/// each key, its readings other than the model's, and what the sources say.
const ERROR_STRUCTURE: [(&str, &[&str], &str); 5] = [
    (
        "truncation",
        &["redraw", "none"],
        "VTC 2018 §IV.A: sojourns \"truncated at both ends\" (clamped or conditioned)",
    ),
    (
        "directions",
        &["shared", "up-only", "down-only"],
        "thesis §5.2: the second emulator drops packets \"independent of the direction\"",
    ),
    (
        "start",
        &["stationary"],
        "no source says in which state a run starts",
    ),
    (
        "read_at",
        &["start", "arrival"],
        "thesis §5.2: loss after the rate and buffer emulator; the instant within a packet is open",
    ),
    (
        "unit",
        &["byte"],
        "thesis §5.2, VTC 2018 §IV.A: a \"packet-error rate\" (per byte is the physical alternative)",
    ),
];

/// One measured cell.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cell {
    /// The value read.
    pub value: f64,
}

/// A switch's measurements: per row, one cell per reading.
#[derive(Clone, Debug, PartialEq)]
pub struct Measured {
    /// The switch.
    pub switch: Switch,
    /// Per row, per reading.
    pub cells: Vec<Vec<Cell>>,
}

/// The scenario of `row` under `reading`, with `replications` if given.
pub fn scenario_of(row: &Row, reading: &Reading, replications: Option<u32>) -> Result<AnyScenario> {
    let mut t = row.scenario.clone();
    if let Some(Toml::Array(algs)) = t.get_mut("algorithm") {
        if let Some(Toml::Table(a)) = algs.first_mut() {
            a.extend(reading.algorithm.clone());
        }
    }
    if let Some(Toml::Table(n)) = t.get_mut("network") {
        for (k, v) in &reading.network {
            match (n.get_mut(k), v) {
                (Some(Toml::Table(old)), Toml::Table(new)) => old.extend(new.clone()),
                _ => {
                    n.insert(k.clone(), v.clone());
                }
            }
        }
    }
    if let Some(r) = replications {
        t.insert("replications".into(), Toml::Integer(i64::from(r)));
    }
    let text = toml::to_string(&t).context("a sensitivity row serialises")?;
    let origin = format!(
        "sensitivity row `{}`, reading `{}`",
        row.label, reading.label
    );
    AnyScenario::parse(&text, &origin)
}

/// Runs `row` under `reading` and reads its metric.
pub fn measure(
    row: &Row,
    reading: &Reading,
    replications: Option<u32>,
    pool: &rayon::ThreadPool,
    progress: &(dyn Fn() + Sync),
) -> Result<Cell> {
    let scenario = scenario_of(row, reading, replications)?;
    let ran = scenario.run_on(pool, progress, &AtomicBool::new(false))?;
    let json: Value = serde_json::from_str(&ran.json()).context("a run's JSON parses")?;
    let value = json
        .pointer("/algorithms/0")
        .and_then(|a| a.pointer(row.metric.pointer))
        .and_then(Value::as_f64)
        .ok_or_else(|| {
            anyhow!(
                "sensitivity row `{}`: no `{}` in the run's results",
                row.label,
                row.metric.pointer
            )
        })?;
    Ok(Cell {
        value: value / row.metric.per,
    })
}

/// The planned runs of `switches` (for a progress bar).
pub fn planned_runs(switches: &[Switch], replications: Option<u32>) -> Result<u64> {
    let mut n = 0;
    for s in switches {
        for row in &s.rows {
            for reading in &s.readings {
                n += scenario_of(row, reading, replications)?.planned_runs();
            }
        }
    }
    Ok(n)
}

/// Runs every row of every switch under every reading.
pub fn run(
    switches: Vec<Switch>,
    replications: Option<u32>,
    pool: &rayon::ThreadPool,
    progress: &(dyn Fn() + Sync),
) -> Result<Vec<Measured>> {
    let mut out = Vec::new();
    for switch in switches {
        let mut cells = Vec::new();
        for row in &switch.rows {
            let mut line = Vec::new();
            for reading in &switch.readings {
                line.push(measure(row, reading, replications, pool, progress)?);
            }
            cells.push(line);
        }
        out.push(Measured { switch, cells });
    }
    Ok(out)
}

fn published_text(p: Option<Published>) -> String {
    match p {
        Some(Published::Value(v)) => format!("{v:.3}"),
        Some(Published::Below(v)) => format!("< {v}"),
        None => "—".into(),
    }
}

/// Markdown: per switch, a heading, its source, and a table of rows ×
/// readings; each reading's cell with its difference from the published
/// value where there is one, else from the default reading.
pub fn markdown(measured: &[Measured]) -> String {
    let mut s = String::new();
    for m in measured {
        let sw = &m.switch;
        let _ = writeln!(s, "### {}\n\n{}.\n", sw.name, sw.source);
        let _ = write!(s, "| row | published |");
        for (i, r) in sw.readings.iter().enumerate() {
            let mark = if i == 0 { " (default)" } else { "" };
            let _ = write!(s, " {}{mark} |", r.label);
        }
        let _ = write!(s, "\n| --- | --- |");
        for _ in &sw.readings {
            let _ = write!(s, " --- |");
        }
        s.push('\n');
        for (row, cells) in sw.rows.iter().zip(&m.cells) {
            let _ = write!(
                s,
                "| {} ({}) | {} |",
                row.label,
                row.metric.name,
                published_text(row.published)
            );
            let base = cells.first().map(|c| c.value);
            for (i, c) in cells.iter().enumerate() {
                let delta = match row.published {
                    Some(Published::Value(p)) if p != 0.0 => {
                        format!(" ({:+.1} %)", 100.0 * (c.value - p) / p)
                    }
                    _ => match base {
                        Some(b) if i > 0 && b != 0.0 => {
                            format!(" ({:+.1} % vs default)", 100.0 * (c.value - b) / b)
                        }
                        _ => String::new(),
                    },
                };
                let _ = write!(s, " {:.3}{delta} |", c.value);
            }
            s.push('\n');
        }
        s.push('\n');
    }
    s
}
