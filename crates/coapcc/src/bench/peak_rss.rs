//! The peak resident memory of this process, as the kernel counts it
//! (`VmHWM` of `/proc/self/status`, Linux's proc(5)): read by a benchmark
//! child at the end of its one run, so the figure is that run's alone.

use anyhow::{anyhow, Context, Result};

/// This process's peak resident set size so far (bytes).
pub fn own() -> Result<u64> {
    let text = std::fs::read_to_string("/proc/self/status")
        .context("cannot read /proc/self/status for the peak memory (Linux only)")?;
    parse(&text).ok_or_else(|| anyhow!("/proc/self/status: no `VmHWM: N kB` line"))
}

/// `VmHWM: N kB` of a `/proc/PID/status` text, in bytes.
pub fn parse(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let mut words = line.split_whitespace().skip(1);
    let kib: u64 = words.next()?.parse().ok()?;
    (words.next()? == "kB").then_some(kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_high_water_mark_in_bytes() {
        let status =
            "Name:\tcoapcc\nVmPeak:\t  900000 kB\nVmHWM:\t   12345 kB\nVmRSS:\t   12000 kB\n";
        assert_eq!(parse(status), Some(12345 * 1024));
        assert_eq!(parse("VmRSS:\t 5 kB\n"), None);
        assert_eq!(parse("VmHWM:\t 5 MB\n"), None);
    }

    #[test]
    fn this_process_has_a_peak() {
        // a running test binary holds at least its own pages
        assert!(own().unwrap() > 0);
    }
}
