//! Resource bounds checked before a run or campaign starts: worker threads,
//! replications, and an estimate of the memory a simulation will hold and
//! the events it will process ([`crate::cost`]), compared with what the
//! machine has available and with [`MAX_EVENTS`].
//!
//! The same checks serve every front: `coapcc run` and `coapcc campaign`,
//! and the library face the Python package uses ([`crate::api`]). Above the
//! memory the machine has available (`MemAvailable` of `/proc/meminfo`) or
//! above [`MAX_EVENTS`] events in one run, they refuse, naming the scenario
//! field that drives the figure, unless forced (`--force`, `force=True`).

use anyhow::{bail, Result};

use crate::cost::RunCost;

/// The most events one run may be expected to process: at the 1–20 M
/// events/s the simulator runs, between 8 minutes and 3 hours. Far above
/// any published experiment (the default run: 6·10⁴; 10⁷ clients of ten
/// exchanges: about 10⁹), far below the 10¹³ and more of a period or sample
/// interval of a nanosecond.
pub const MAX_EVENTS: u64 = 10_000_000_000;

/// How to override a refusal, as both fronts spell it.
const FORCE: &str = "pass --force (force=True from Python) to try anyway";

/// Worker threads allowed per core: more only adds contention.
pub const THREADS_PER_CORE: usize = 4;

/// The most replications a scenario or campaign set may ask for.
pub const MAX_REPLICATIONS: u32 = 10_000;

/// The cores of this machine.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// `--threads N`: `None` (or 0) is every core; more than
/// [`THREADS_PER_CORE`] × cores is refused.
pub fn threads(requested: Option<usize>) -> Result<usize> {
    threads_named("--threads", requested)
}

/// [`threads`] for a front that calls the setting `name` (`threads` in
/// Python).
pub fn threads_named(name: &str, requested: Option<usize>) -> Result<usize> {
    let max = THREADS_PER_CORE * cores();
    match requested {
        None | Some(0) => Ok(cores()),
        Some(n) if n > max => bail!(
            "{name}: expected 1 to {max} ({THREADS_PER_CORE} per core on this machine's {} \
             core(s)), found {n}",
            cores()
        ),
        Some(n) => Ok(n),
    }
}

/// `replications` of `what` (a field name): 1 to [`MAX_REPLICATIONS`].
pub fn check_replications(what: &str, n: u32) -> Result<()> {
    if !(1..=MAX_REPLICATIONS).contains(&n) {
        bail!("{what}: expected 1 to {MAX_REPLICATIONS}, found {n}");
    }
    Ok(())
}

/// The memory available to new processes (bytes), from `/proc/meminfo`;
/// `None` where it cannot be read (the check is then skipped).
pub fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    parse_meminfo(&text)
}

fn parse_meminfo(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib.saturating_mul(1024))
}

/// Refuses `estimate` bytes for `what` if the machine has less available,
/// unless `force`.
pub fn check_memory(estimate: u64, what: &str, force: bool) -> Result<()> {
    check_memory_against(estimate, available_memory(), what, force)
}

fn check_memory_against(
    estimate: u64,
    available: Option<u64>,
    what: &str,
    force: bool,
) -> Result<()> {
    let Some(avail) = available else {
        return Ok(());
    };
    if estimate > avail && !force {
        bail!(
            "{what} would need about {} of memory and this machine has {} available; \
             reduce the clients, replications or threads, or {FORCE}",
            human(estimate),
            human(avail)
        );
    }
    Ok(())
}

/// Refuses a run of `events` events above [`MAX_EVENTS`], unless `force`;
/// `what` names the scenario and its field.
pub fn check_events(events: u64, what: &str, force: bool) -> Result<()> {
    if events > MAX_EVENTS && !force {
        bail!(
            "{what}: one run would process about {:.1e} events, more than the {:.0e} \
             allowed (hours of computing at the least); expected a value that generates fewer, \
             or {FORCE}",
            events as f64,
            MAX_EVENTS as f64
        );
    }
    Ok(())
}

/// The estimated peak memory of `runs` runs of cost `cost`, `concurrent` at a
/// time, every result kept until the end (`keep_results`, as `coapcc run`
/// does) or each dropped once stored (campaigns).
pub fn runs_bytes(cost: &RunCost, runs: u64, concurrent: u64, keep_results: bool) -> u64 {
    let at_once = concurrent.min(runs);
    let live = at_once.saturating_mul(cost.live.saturating_add(cost.result));
    if keep_results {
        live.saturating_add(runs.saturating_sub(at_once).saturating_mul(cost.result))
    } else {
        live
    }
}

/// Everything checked before a scenario runs on `threads` threads: its
/// replications, and the memory and events of its `runs` runs, the most
/// expensive of which costs `cost` ([`crate::networks::AnyScenario::cost`]);
/// each error names `origin` and the field; memory and events are skipped if
/// `force`.
pub fn check_scenario(
    cost: RunCost,
    runs: u64,
    replications: u32,
    origin: &str,
    threads: usize,
    force: bool,
) -> Result<()> {
    check_replications(&format!("{origin}: replications"), replications)?;
    check_memory(
        runs_bytes(&cost, runs, threads as u64, true),
        &format!(
            "{origin}: {}: {runs} run(s) on {threads} thread(s)",
            cost.memory_field
        ),
        force,
    )?;
    check_events(
        cost.events,
        &format!("{origin}: {}", cost.events_field),
        force,
    )
}

/// `12.5 GiB`.
fn human(bytes: u64) -> String {
    let gib = bytes as f64 / (1u64 << 30) as f64;
    if gib >= 1.0 {
        format!("{gib:.1} GiB")
    } else {
        format!("{:.0} MiB", bytes as f64 / (1u64 << 20) as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meminfo_and_the_check() {
        let text = "MemTotal:       24000000 kB\nMemAvailable:    2000000 kB\n";
        assert_eq!(parse_meminfo(text), Some(2_048_000_000));
        assert_eq!(parse_meminfo("MemTotal: 1 kB\n"), None);
        let e = check_memory_against(3 << 30, Some(2 << 30), "the run", false)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("about 3.0 GiB") && e.contains("2.0 GiB available") && e.contains("--force"),
            "{e}"
        );
        assert!(check_memory_against(3 << 30, Some(2 << 30), "x", true).is_ok());
        assert!(check_memory_against(1 << 30, Some(2 << 30), "x", false).is_ok());
        assert!(check_memory_against(u64::MAX, None, "x", false).is_ok());
    }

    #[test]
    fn events_above_the_bound_are_refused_unless_forced() {
        assert!(check_events(MAX_EVENTS, "f.toml: workload.period_s", false).is_ok());
        let e = check_events(MAX_EVENTS + 1, "f.toml: workload.period_s", false)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("f.toml: workload.period_s: one run would process about 1.0e10 events")
                && e.contains("--force"),
            "{e}"
        );
        assert!(check_events(u64::MAX, "x", true).is_ok());
    }

    #[test]
    fn threads_are_capped_per_core() {
        assert_eq!(threads(None).unwrap(), cores());
        assert_eq!(threads(Some(1)).unwrap(), 1);
        let e = threads(Some(100_000)).unwrap_err().to_string();
        assert!(e.starts_with("--threads: expected 1 to"), "{e}");
    }
}
