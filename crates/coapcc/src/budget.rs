//! Resource bounds checked before a run or campaign starts: worker threads,
//! replications, and an estimate of the memory a simulation will hold,
//! compared with what the machine has available.
//!
//! The estimate is deliberately simple (see `docs/decisions.md`,
//! "Hardening"): a run holds about [`LIVE_BYTES_PER_CLIENT`] per simulated
//! client while it runs (measured on the dumbbell's scale set: 1.5–1.9 KiB at
//! 10⁵–10⁶ clients, `docs/performance.md`), and a finished
//! run keeps one [`ClientRecord`] per client until the results are printed.
//! Above the memory the machine has available (`MemAvailable` of
//! `/proc/meminfo`), the command refuses unless given `--force`.

use anyhow::{bail, Result};
use coapcc_sim::metrics::ClientRecord;

/// Memory a running simulation holds per client (bytes), measured.
pub const LIVE_BYTES_PER_CLIENT: u64 = 2 * 1024;

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
    let max = THREADS_PER_CORE * cores();
    match requested {
        None | Some(0) => Ok(cores()),
        Some(n) if n > max => bail!(
            "--threads: expected 1 to {max} ({THREADS_PER_CORE} per core on this machine's {} \
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

/// The estimated peak memory of simulating `runs` runs of at most `clients`
/// clients each, `concurrent` at a time, keeping every finished run's
/// per-client records (`keep_results`) or not (a campaign stores each run as
/// it finishes).
pub fn simulation_bytes(clients: u64, runs: u64, concurrent: u64, keep_results: bool) -> u64 {
    let live = concurrent
        .min(runs)
        .saturating_mul(clients)
        .saturating_mul(LIVE_BYTES_PER_CLIENT);
    let kept = if keep_results {
        runs.saturating_mul(clients)
            .saturating_mul(std::mem::size_of::<ClientRecord>() as u64)
    } else {
        0
    };
    live.saturating_add(kept)
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
             reduce the clients, replications or --threads, or pass --force to try anyway",
            human(estimate),
            human(avail)
        );
    }
    Ok(())
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
    fn estimates_grow_with_clients_runs_and_threads() {
        let one = simulation_bytes(100, 1, 1, false);
        assert_eq!(one, 100 * LIVE_BYTES_PER_CLIENT);
        assert_eq!(simulation_bytes(100, 10, 2, false), 2 * one);
        assert_eq!(
            simulation_bytes(100, 1, 8, false),
            one,
            "no more concurrent than runs"
        );
        assert!(simulation_bytes(100, 10, 2, true) > 2 * one);
        assert_eq!(simulation_bytes(u64::MAX, u64::MAX, 2, true), u64::MAX);
    }

    #[test]
    fn threads_are_capped_per_core() {
        assert_eq!(threads(None).unwrap(), cores());
        assert_eq!(threads(Some(1)).unwrap(), 1);
        let e = threads(Some(100_000)).unwrap_err().to_string();
        assert!(e.starts_with("--threads: expected 1 to"), "{e}");
    }
}
