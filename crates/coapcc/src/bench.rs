//! `coapcc bench`: what every network's bench shares — its options, the ns-3
//! reference scripts' output and the machine's load — and the bare
//! binary-heap event loop of [`heap`] that coapcc's cost per event is held
//! to. Each network times one replication of itself beside its ns-3
//! reference in its own `bench` module (`networks/<network>/bench`).

pub mod heap;
pub mod peak_rss;

use std::collections::HashMap;
use std::process::Command;

use anyhow::{anyhow, bail, Context, Result};
use coapcc_link::grid::MacProfile;

/// What the ns-3 reference printed.
#[derive(Debug, Default)]
pub struct Ns3 {
    /// Wall time of its `Simulator::Run()` (s).
    pub wall: f64,
    /// Events it processed.
    pub events: u64,
    /// Its FCT median (s) and unnecessary retransmissions per client.
    pub p50: f64,
    /// Unnecessary retransmissions per client.
    pub unnecessary: f64,
}

/// The 1-minute load average of the machine (`/proc/loadavg`), or `?`
/// where it cannot be read: printed with the tables, since other work on
/// the machine moves every wall time.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|t| t.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

/// Parses the one line `run.sh` prints (`key=value` pairs).
pub fn parse_ns3(line: &str) -> Result<Ns3> {
    let mut out = Ns3::default();
    let mut seen = 0;
    for kv in line.split_whitespace() {
        let Some((k, v)) = kv.split_once('=') else {
            continue;
        };
        let num = || {
            v.parse::<f64>()
                .map_err(|_| anyhow!("ns-3 output: `{kv}` is not a number"))
        };
        match k {
            "wall_s" => (out.wall, seen) = (num()?, seen + 1),
            "events" => (out.events, seen) = (num()? as u64, seen + 1),
            "p50" => out.p50 = num()?,
            "unnecessary_per_client" => out.unnecessary = num()?,
            _ => {}
        }
    }
    if seen < 2 {
        bail!("ns-3 output lacks wall_s or events: `{line}`");
    }
    Ok(out)
}

/// The `key=value` pairs of the one line a reference script prints.
pub fn parse_kv(line: &str) -> HashMap<String, f64> {
    line.split_whitespace()
        .filter_map(|kv| kv.split_once('='))
        .filter_map(|(k, v)| v.parse::<f64>().ok().map(|v| (k.to_string(), v)))
        .collect()
}

/// Runs a reference script with `args`; its last output line.
pub fn run_reference(script: &str, args: &[String]) -> Result<String> {
    let out = Command::new(script)
        .args(args)
        .output()
        .with_context(|| format!("cannot run the ns-3 reference `{script}`"))?;
    if !out.status.success() {
        bail!(
            "the ns-3 reference failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let text = String::from_utf8_lossy(&out.stdout);
    Ok(text.lines().last().unwrap_or_default().to_string())
}

/// The options of `coapcc bench` for one network's run beside its ns-3
/// reference; each network reads those that apply to it and refuses the
/// others ([`crate::networks::Network::bench`]).
#[derive(Clone, Debug)]
pub struct BenchOptions {
    /// `--clients`: continuous clients (dumbbell) or stations (star).
    pub clients: Option<u32>,
    /// `--period`: the request period (grid).
    pub period: f64,
    /// `--mac`: the MAC profile (grid).
    pub mac: MacProfile,
    /// `--buffer`: the router buffer (dumbbell).
    pub buffer: Option<String>,
    /// `--algorithm`.
    pub algorithm: Option<String>,
    /// `--repeat`: repetitions of the coapcc run (the median is reported).
    pub repeat: usize,
    /// `--seed`.
    pub seed: u64,
    /// `--ns3`: the reference script, `none` to skip it, or the network's
    /// default.
    pub ns3: Option<String>,
}

/// Replication 0 of `spec` on network `N`, run `repeat` times (at least
/// once): the last result, the median wall time of the event loop (s,
/// set-up excluded) and how many runs it is the median of.
pub fn time_runs<N: coapcc_sim::SimNetwork>(
    spec: &N::RunSpec,
    repeat: usize,
) -> Result<(N::RunResult, f64, usize)> {
    let mut walls = Vec::new();
    let mut last = None;
    for _ in 0..repeat.max(1) {
        let (result, wall) = N::run_timed(spec, 0).map_err(|e| anyhow!("{e}"))?;
        walls.push(wall.as_secs_f64());
        last = Some(result);
    }
    let n = walls.len();
    Ok((last.expect("at least one run"), median(&mut walls), n))
}

/// What a reference script printed: its last line's `key=value` pairs.
pub struct Reference {
    line: String,
    values: HashMap<String, f64>,
}

impl Reference {
    /// Runs `script` with `args` and reads its last line.
    pub fn run(script: &str, args: &[String]) -> Result<Reference> {
        let line = run_reference(script, args)?;
        let values = parse_kv(&line);
        Ok(Reference { line, values })
    }

    /// The value of `key`; an error naming the line if it lacks it.
    pub fn get(&self, key: &str) -> Result<f64> {
        self.values
            .get(key)
            .copied()
            .ok_or_else(|| anyhow!("ns-3 output lacks `{key}`: `{}`", self.line))
    }
}

/// The median of `walls` (s), sorted in place; `walls` is not empty.
pub fn median(walls: &mut [f64]) -> f64 {
    walls.sort_by(f64::total_cmp);
    walls[walls.len() / 2]
}

/// Fails unless the reference script `script` exists, saying how to run
/// without it.
pub fn check_reference(script: &str) -> Result<()> {
    if !std::path::Path::new(script).is_file() {
        bail!(
            "the ns-3 reference `{script}` does not exist; give its path with --ns3 SCRIPT \
             (the dumbbell's and the grid's are ../shared/baselines/ns3/run.sh and \
             ns3-grid/run.sh, the star's baselines/ns3-star/run.sh, relative to the \
             repository's root), or pass --no-reference to time coapcc alone"
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_reference_line() {
        let n = parse_ns3("clients=400 buffer=1410000B finished=400 p10=2427.953 p50=2449.339 p90=2470.020 unnecessary_per_client=195.5 failed_exchanges=0 tx=98186 events=884486 wall_s=1.813").unwrap();
        assert_eq!(n.events, 884_486);
        assert_eq!(n.wall, 1.813);
        assert_eq!(n.p50, 2449.339);
        assert!(parse_ns3("garbage").is_err());
        let kv = parse_kv("period=10 carried_Bps=322.88 routing=root wall_s=7.058");
        assert_eq!(kv["carried_Bps"], 322.88);
        assert_eq!(kv["wall_s"], 7.058);
        assert!(!kv.contains_key("routing"));
    }
}
