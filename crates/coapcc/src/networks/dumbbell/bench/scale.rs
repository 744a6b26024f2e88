//! `coapcc bench --scenario FILE…`: the scale benchmarks
//! (`scenarios/scale/`). Every algorithm of every file runs replication 0 in
//! a fresh child process (`coapcc bench --child-run FILE --child-algorithm
//! I`), which times its event loop and reads its own peak resident memory
//! at the end ([`crate::bench::peak_rss`]), so one size's memory never counts in
//! another's. A size whose estimated memory exceeds the limit is not run
//! and its row says so.
//!
//! Two Markdown tables come out: the runs (events, wall, events/s, peak
//! memory, memory per client) and the linear-cost table (packets, events per
//! packet, wall per event).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{anyhow, bail, Context, Result};
use coapcc_sim::dumbbell;
use coapcc_sim::{NetworkScenario, SimNetwork};

use crate::bench::{parse_kv, peak_rss};
use crate::networks::dumbbell::Dumbbell;
use crate::networks::AnyScenario;

/// What one child reported.
#[derive(Clone, Debug, PartialEq)]
pub struct Ran {
    /// Events processed.
    pub events: u64,
    /// Wall time of the event loop (s), set-up excluded.
    pub wall: f64,
    /// Packets handed to the network by the clients and the server.
    pub packets: u64,
    /// Peak resident memory of the child process (bytes).
    pub peak_rss: u64,
}

/// One (file, algorithm) of the benchmark.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// The scenario's name.
    pub scenario: String,
    /// The algorithm's label.
    pub algorithm: String,
    /// Clients.
    pub clients: u32,
    /// What it measured, or the estimated memory that kept it from running.
    pub outcome: Result<Ran, u64>,
}

/// The dumbbell scenario of `file`; other kinds are refused.
fn load(file: &Path) -> Result<coapcc_sim::dumbbell::Scenario> {
    match AnyScenario::load(file)?.into_inner::<Dumbbell>() {
        Some(s) => Ok(s),
        None => bail!(
            "{}: --scenario takes dumbbell scenarios (such as scenarios/scale/); this one runs \
             on another network (see `coapcc bench --network`)",
            file.display()
        ),
    }
}

/// The child's side: runs replication 0 of algorithm `index` of `file`;
/// returns the line of `key=value` pairs it prints.
pub fn child(file: &Path, index: usize) -> Result<String> {
    let s = load(file)?;
    if index >= s.algorithms.len() {
        bail!(
            "--child-algorithm: {} has {} algorithm(s), found index {index}",
            file.display(),
            s.algorithms.len()
        );
    }
    let (result, wall) =
        dumbbell::Sim::run_timed(&s.run_spec(index), 0).map_err(|e| anyhow!("{e}"))?;
    let peak = peak_rss::own()?;
    Ok(format!(
        "events={} wall_s={:.6} packets={} peak_rss_bytes={peak}",
        result.events,
        wall.as_secs_f64(),
        result.conservation.sent,
    ))
}

/// Parses a child's line.
pub fn parse_child(line: &str) -> Result<Ran> {
    let kv = parse_kv(line);
    let get = |k: &str| {
        kv.get(k)
            .copied()
            .ok_or_else(|| anyhow!("benchmark child: no `{k}` in `{line}`"))
    };
    Ok(Ran {
        events: get("events")? as u64,
        wall: get("wall_s")?,
        packets: get("packets")? as u64,
        peak_rss: get("peak_rss_bytes")? as u64,
    })
}

/// The memory one run of `clients` clients is estimated to hold (bytes).
pub fn estimate(clients: u32) -> u64 {
    crate::networks::dumbbell::cost::simulation_bytes(u64::from(clients), 1, 1, true)
}

/// Runs every algorithm of every file, one child each; sizes estimated
/// above `limit` bytes are not run.
pub fn run(files: &[PathBuf], limit: Option<u64>) -> Result<Vec<Row>> {
    let scenarios = files
        .iter()
        .map(|f| load(f).map(|s| (f, s)))
        .collect::<Result<Vec<_>>>()?;
    let exe = std::env::current_exe().context("cannot find the coapcc executable")?;
    let mut rows = Vec::new();
    for (file, s) in &scenarios {
        for (i, alg) in s.algorithms.iter().enumerate() {
            let estimated = estimate(s.clients);
            let outcome = if limit.is_some_and(|l| estimated > l) {
                eprintln!(
                    "bench: {} {}: not run, estimated {:.1} GB",
                    s.name,
                    alg.label(),
                    estimated as f64 / 1e9
                );
                Err(estimated)
            } else {
                let out = Command::new(&exe)
                    .arg("bench")
                    .arg("--child-run")
                    .arg(file)
                    .arg("--child-algorithm")
                    .arg(i.to_string())
                    .output()
                    .context("cannot start a benchmark child")?;
                if !out.status.success() {
                    bail!(
                        "{} ({}): the benchmark child failed ({}): {}",
                        file.display(),
                        alg.label(),
                        out.status,
                        String::from_utf8_lossy(&out.stderr).trim()
                    );
                }
                let text = String::from_utf8_lossy(&out.stdout);
                let ran = parse_child(text.lines().last().unwrap_or_default())?;
                eprintln!(
                    "bench: {} {}: {} events in {:.3} s, peak {:.0} MB",
                    s.name,
                    alg.label(),
                    ran.events,
                    ran.wall,
                    ran.peak_rss as f64 / 1e6
                );
                Ok(ran)
            };
            rows.push(Row {
                scenario: s.name.clone(),
                algorithm: alg.label().to_string(),
                clients: s.clients,
                outcome,
            });
        }
    }
    Ok(rows)
}

/// The two tables.
pub fn markdown(rows: &[Row]) -> String {
    let mut out = String::from(
        "| scenario | algorithm | clients | events | loop wall (s) | M events/s | peak RSS (MB) | RSS/client (KiB) |\n\
         | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n",
    );
    for r in rows {
        let cells = match &r.outcome {
            Ok(m) => format!(
                "{} | {:.4} | {:.2} | {:.0} | {:.2}",
                m.events,
                m.wall,
                m.events as f64 / m.wall / 1e6,
                m.peak_rss as f64 / 1e6,
                m.peak_rss as f64 / 1024.0 / f64::from(r.clients),
            ),
            Err(est) => format!("not run: estimated {:.1} GB | | | |", *est as f64 / 1e9),
        };
        out.push_str(&format!(
            "| {} | {} | {} | {cells} |\n",
            r.scenario, r.algorithm, r.clients
        ));
    }
    out.push_str(
        "\n| scenario | algorithm | clients | packets | events | events/packet | loop wall (s) | wall/event (ns) |\n\
         | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n",
    );
    for r in rows {
        let cells = match &r.outcome {
            Ok(m) => format!(
                "{} | {} | {:.2} | {:.4} | {:.0}",
                m.packets,
                m.events,
                m.events as f64 / m.packets.max(1) as f64,
                m.wall,
                m.wall * 1e9 / m.events.max(1) as f64,
            ),
            Err(_) => "not run | | | |".to_string(),
        };
        out.push_str(&format!(
            "| {} | {} | {} | {cells} |\n",
            r.scenario, r.algorithm, r.clients
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_child_line() {
        let r =
            parse_child("events=120 wall_s=0.500000 packets=40 peak_rss_bytes=1048576").unwrap();
        assert_eq!(
            r,
            Ran {
                events: 120,
                wall: 0.5,
                packets: 40,
                peak_rss: 1_048_576
            }
        );
        let e = parse_child("events=1 wall_s=2").unwrap_err().to_string();
        assert!(e.contains("packets"), "{e}");
    }

    #[test]
    fn the_tables_carry_the_hand_computed_ratios() {
        let rows = [
            Row {
                scenario: "s".into(),
                algorithm: "cocoa".into(),
                clients: 1000,
                outcome: Ok(Ran {
                    events: 3_000_000,
                    wall: 1.5,
                    packets: 500_000,
                    peak_rss: 2_048_000,
                }),
            },
            Row {
                scenario: "big".into(),
                algorithm: "default".into(),
                clients: 1_000_000,
                outcome: Err(8_500_000_000),
            },
        ];
        let t = markdown(&rows);
        let lines: Vec<&str> = t.lines().collect();
        // 3e6 / 1.5 s = 2 M/s; 2.048 MB; 2 048 000 B / 1024 / 1000 = 2 KiB
        assert_eq!(
            lines[2],
            "| s | cocoa | 1000 | 3000000 | 1.5000 | 2.00 | 2 | 2.00 |"
        );
        assert_eq!(
            lines[3],
            "| big | default | 1000000 | not run: estimated 8.5 GB | | | | |"
        );
        // 3e6 / 5e5 = 6 events/packet; 1.5 s / 3e6 = 500 ns
        assert_eq!(
            lines[7],
            "| s | cocoa | 1000 | 500000 | 3000000 | 6.00 | 1.5000 | 500 |"
        );
        assert_eq!(lines[8], "| big | default | 1000000 | not run | | | | |");
    }
}
