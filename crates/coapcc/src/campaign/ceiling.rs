//! Campaign ceilings: the size of a whole plan — its runs, their events,
//! the memory the plan holds while it runs and the store it leaves —
//! estimated from the campaign file before a single cell is expanded, and
//! refused above the [`Ceilings`] unless forced.
//!
//! The cells are counted from the sets' sizes (a set's matrix or sweep is
//! the product of its lists), never listed; the figures of a set come from
//! a bounded sample of its cells ([`SAMPLE_PER_SET`], evenly spread over
//! its matrix; every cell of a smaller set), whose runs are costed by the
//! networks' cost models ([`crate::cost`]) and scaled to the set's cells.
//! A 2·10⁶-cell file is thus judged in the time of a few hundred cells.

use anyhow::{bail, Result};

use crate::cost::RunCost;

/// Cells of a set whose runs are costed; larger sets are sampled.
pub const SAMPLE_PER_SET: u64 = 256;

/// Bytes a plan holds per run besides its cells while it runs: the run's
/// key in its cell, its unit to compute, the key in the set of stored
/// runs (measured on the plan's types, rounded up).
pub const PLAN_BYTES_PER_RUN: u64 = 512;

/// The bounds of a whole campaign, each overridable (`--max-runs`,
/// `--max-events`, `--max-memory-mib`, `--max-store-mib`) or ignored with
/// `--force`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ceilings {
    /// Runs in all (cells × replications).
    pub runs: u64,
    /// Events of all runs together.
    pub events: u64,
    /// Bytes the plan holds while it runs (its cells, its units and the
    /// runs computed at once).
    pub memory: u64,
    /// Bytes of the store it writes (runs, their records, the cells).
    pub store: u64,
}

impl Ceilings {
    /// 10⁵ runs (the largest shipped campaign has 5 920), 10¹¹ events (1.5
    /// to 28 hours at the simulator's 1–20·10⁶ events/s; the shipped
    /// campaigns have at most about 10⁹), 4 GiB of memory, 16 GiB of store.
    pub const DEFAULT: Ceilings = Ceilings {
        runs: 100_000,
        events: 100_000_000_000,
        memory: 4 << 30,
        store: 16 << 30,
    };
}

impl Ceilings {
    /// Only the runs bounded, as [`Ceilings::DEFAULT`] bounds them: what
    /// expanding a plan without running it needs (the Python package's
    /// `Campaign(path)`, which lists the runs; running it is held to all).
    pub const EXPANSION: Ceilings = Ceilings {
        runs: Ceilings::DEFAULT.runs,
        events: u64::MAX,
        memory: u64::MAX,
        store: u64::MAX,
    };
}

impl Default for Ceilings {
    fn default() -> Self {
        Ceilings::DEFAULT
    }
}

/// Bytes a run leaves in the store besides its records: its row (spec,
/// link figures, histograms, summaries), its digest, the indexes (measured
/// on the dumbbell: 4.4 KB a run of one client, of which 4 KiB fixed).
pub const STORED_BYTES_PER_RUN: u64 = 4096;

/// Bytes of a cell whose spec and labels are `text` bytes of JSON, with a
/// key per replication (64 hex digits, as a string and in the JSON): the
/// text, the keys and the row's other columns.
pub fn cell_bytes(text: usize, replications: u32) -> u64 {
    (text as u64)
        .saturating_add(256)
        .saturating_add(u64::from(replications).saturating_mul(96))
}

/// One sampled cell: the cost of one of its runs, the bytes one of its runs
/// leaves in the store, and the bytes of the cell itself (in memory and in
/// the store: its spec, labels and keys).
#[derive(Clone, Debug, Default)]
pub struct SampledCell {
    /// One run's cost.
    pub cost: RunCost,
    /// One run's rows in the store.
    pub stored: u64,
    /// The cell's bytes.
    pub cell: u64,
}

/// A set of a campaign file, counted and sampled.
#[derive(Clone, Debug, Default)]
pub struct SetSample {
    /// Its cells (from its lists' sizes).
    pub cells: u64,
    /// Replications of each.
    pub replications: u32,
    /// Its sampled cells ([`sample_indices`]).
    pub sampled: Vec<SampledCell>,
}

/// Which of `n` cells to sample: all if at most [`SAMPLE_PER_SET`], else
/// that many spread evenly (the first and the last included).
pub fn sample_indices(n: u64) -> Vec<u64> {
    if n <= SAMPLE_PER_SET {
        return (0..n).collect();
    }
    let k = SAMPLE_PER_SET;
    (0..k)
        .map(|i| ((i as u128 * (n - 1) as u128) / (k - 1) as u128) as u64)
        .collect()
}

/// Index `i` of a matrix of sizes `dims` (the outermost first) as its
/// coordinates.
pub fn coordinates(mut i: u64, dims: &[usize]) -> Vec<usize> {
    let mut out = vec![0; dims.len()];
    for (d, &size) in dims.iter().enumerate().rev() {
        let size = size.max(1) as u64;
        out[d] = (i % size) as usize;
        i /= size;
    }
    out
}

/// The product of a matrix's sizes, saturating.
pub fn cells_of(dims: &[usize]) -> u64 {
    dims.iter().fold(1u64, |n, &d| n.saturating_mul(d as u64))
}

/// A whole plan's estimated size.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Estimate {
    /// Cells.
    pub cells: u64,
    /// Runs (cells × replications).
    pub runs: u64,
    /// Events of all runs.
    pub events: u64,
    /// Bytes held while it runs on the given threads.
    pub memory: u64,
    /// Bytes of store it writes.
    pub store: u64,
}

fn scale(sum: u128, sampled: usize, n: u64) -> u128 {
    if sampled == 0 {
        0
    } else {
        sum * u128::from(n) / sampled as u128
    }
}

fn sat(x: u128) -> u64 {
    u64::try_from(x).unwrap_or(u64::MAX)
}

impl Estimate {
    /// The estimate of a plan of `sets`, `threads` runs at a time.
    pub fn of(sets: &[SetSample], threads: usize) -> Estimate {
        let (mut cells, mut runs, mut events, mut store, mut cell_bytes) =
            (0u128, 0u128, 0u128, 0u128, 0u128);
        let mut largest = 0u64;
        for s in sets {
            let reps = u128::from(s.replications);
            let n = s.sampled.len();
            let sum = |f: &dyn Fn(&SampledCell) -> u64| -> u128 {
                s.sampled.iter().map(|c| u128::from(f(c))).sum()
            };
            cells += u128::from(s.cells);
            runs += u128::from(s.cells) * reps;
            events += scale(sum(&|c| c.cost.events), n, s.cells) * reps;
            store += scale(sum(&|c| c.stored), n, s.cells) * reps;
            let cb = scale(sum(&|c| c.cell), n, s.cells);
            store += cb;
            cell_bytes += cb;
            largest = s
                .sampled
                .iter()
                .map(|c| c.cost.bytes())
                .fold(largest, u64::max);
        }
        // The cells are held as values and, once, as the text the
        // definition hashes and the store records.
        let memory = cell_bytes * 2
            + runs * u128::from(PLAN_BYTES_PER_RUN)
            + u128::from(largest) * (threads.max(1) as u128).min(runs.max(1));
        Estimate {
            cells: sat(cells),
            runs: sat(runs),
            events: sat(events),
            memory: sat(memory),
            store: sat(store),
        }
    }

    /// Refuses the plan of `origin` if it is above any of `ceilings`,
    /// unless `force`; the error gives every figure, every ceiling, and how
    /// to override.
    pub fn check(&self, ceilings: &Ceilings, origin: &str, force: bool) -> Result<()> {
        let over: Vec<&str> = [
            (self.runs > ceilings.runs, "runs"),
            (self.events > ceilings.events, "events"),
            (self.memory > ceilings.memory, "memory"),
            (self.store > ceilings.store, "store"),
        ]
        .into_iter()
        .filter_map(|(o, what)| o.then_some(what))
        .collect();
        if over.is_empty() || force {
            return Ok(());
        }
        bail!(
            "{origin}: the campaign is too large ({} above the ceiling): {} cells, {} runs \
             (ceiling {}), about {:.1e} events (ceiling {:.1e}), about {} of memory (ceiling {}) \
             and {} of store (ceiling {}); nothing was run and the store was not touched. \
             Shrink its sets, raise the ceiling (--max-runs, --max-events, --max-memory-mib, \
             --max-store-mib) or pass --force (force=True from Python) to run it anyway",
            over.join(", "),
            self.cells,
            self.runs,
            ceilings.runs,
            self.events as f64,
            ceilings.events as f64,
            human(self.memory),
            human(ceilings.memory),
            human(self.store),
            human(ceilings.store),
        )
    }
}

/// `12.5 GiB`, `300 MiB`.
pub fn human(bytes: u64) -> String {
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

    fn cell(events: u64) -> SampledCell {
        SampledCell {
            cost: RunCost {
                live: 100,
                events,
                ..RunCost::default()
            },
            stored: 10,
            cell: 1,
        }
    }

    #[test]
    fn samples_are_bounded_and_spread() {
        assert_eq!(sample_indices(3), vec![0, 1, 2]);
        let big = sample_indices(2_000_000);
        assert_eq!(big.len() as u64, SAMPLE_PER_SET);
        assert_eq!((big[0], *big.last().unwrap()), (0, 1_999_999));
        assert!(big.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(coordinates(7, &[2, 2, 2]), vec![1, 1, 1]);
        assert_eq!(coordinates(4, &[3, 2]), vec![2, 0]);
        assert_eq!(cells_of(&[1000, 1000, 2]), 2_000_000);
    }

    #[test]
    fn a_set_is_scaled_from_its_sample() {
        let s = SetSample {
            cells: 1000,
            replications: 3,
            sampled: vec![cell(10), cell(30)],
        };
        let e = Estimate::of(&[s], 4);
        assert_eq!((e.cells, e.runs, e.events), (1000, 3000, 20 * 3000));
        assert_eq!(e.store, 10 * 3000 + 1000);
        assert_eq!(e.memory, 2 * 1000 + 3000 * PLAN_BYTES_PER_RUN + 4 * 100);
        let c = Ceilings {
            runs: 2999,
            ..Ceilings::DEFAULT
        };
        let err = e.check(&c, "f.toml", false).unwrap_err().to_string();
        assert!(
            err.starts_with("f.toml: the campaign is too large (runs above the ceiling)")
                && err.contains("3000 runs (ceiling 2999)")
                && err.contains("--max-runs")
                && err.contains("--force"),
            "{err}"
        );
        assert!(e.check(&c, "f.toml", true).is_ok());
        assert!(e.check(&Ceilings::DEFAULT, "f.toml", false).is_ok());
    }
}
