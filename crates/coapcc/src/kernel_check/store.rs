//! The kernel cross-check's runs in the results store (layout 4): one row per
//! replication of a point, on the kernel or in the model, keyed so that a run
//! of the same point on another kernel, with other `net.ipv4.tcp_*` settings
//! or another model version is another run. Each row is written in one
//! statement, so an interrupted cross-check resumes where it stopped.

use anyhow::{Context, Result};
use rusqlite::{params, OptionalExtension};
use serde_json::Value;

use super::record::Record;
use crate::store::Store;

/// A stored cross-check run.
#[derive(Clone, Debug)]
pub struct KernelCheckRun {
    /// Its key.
    pub key: String,
    /// The point (canonical JSON of [`crate::kernel_check::point::Point`]).
    pub point: String,
    /// `kernel 6.18.44` or `model tcp-linux6`.
    pub label: String,
    /// Kernel runs: the kernel version.
    pub kernel: Option<String>,
    /// Kernel runs: every `net.ipv4.tcp_*` value of the run (JSON object).
    pub sysctl: Option<String>,
    /// Model runs: the model version.
    pub model_version: Option<String>,
    /// The record.
    pub record: Record,
    /// Everything the run produced (JSON).
    pub raw: String,
}

impl Store {
    /// Whether a cross-check run with this key is stored.
    pub fn kernel_check_has(&self, key: &str) -> Result<bool> {
        Ok(self
            .conn
            .query_row(
                "SELECT 1 FROM kernel_check_runs WHERE key = ?1",
                [key],
                |_| Ok(()),
            )
            .optional()?
            .is_some())
    }

    /// Stores a cross-check run (once: a key already stored is left as it is).
    pub fn kernel_check_put(&self, run: &KernelCheckRun) -> Result<()> {
        let record = serde_json::to_string(&run.record)?;
        self.conn
            .execute(
                "INSERT OR IGNORE INTO kernel_check_runs (key, point, label, kernel, sysctl, \
                 model_version, replication, record, raw, created) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                params![
                    run.key,
                    run.point,
                    run.label,
                    run.kernel,
                    run.sysctl,
                    run.model_version,
                    run.record.replication,
                    record,
                    run.raw,
                    crate::store::now(),
                ],
            )
            .context("cannot store the cross-check run")?;
        Ok(())
    }

    /// Every stored cross-check run, oldest first (none in a store of layout
    /// 3 or older).
    pub fn kernel_check_runs(&self) -> Result<Vec<KernelCheckRun>> {
        if self.layout() < 4 {
            return Ok(Vec::new());
        }
        let mut stmt = self.conn.prepare(
            "SELECT key, point, label, kernel, sysctl, model_version, record, raw \
             FROM kernel_check_runs ORDER BY created, key",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, Option<String>>(3)?,
                r.get::<_, Option<String>>(4)?,
                r.get::<_, Option<String>>(5)?,
                r.get::<_, String>(6)?,
                r.get::<_, String>(7)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (key, point, label, kernel, sysctl, model_version, record, raw) = row?;
            let mut record: Record = serde_json::from_str(&record)
                .with_context(|| format!("kernel_check_runs, key {key}: column record"))?;
            if kernel.is_some() {
                rereduce_bytes(&mut record, &raw)
                    .with_context(|| format!("kernel_check_runs, key {key}: column raw"))?;
            }
            out.push(KernelCheckRun {
                key,
                point,
                label,
                kernel,
                sysctl,
                model_version,
                record,
                raw,
            });
        }
        Ok(out)
    }
}

/// Sets a kernel run's bytes per direction from its raw emulator report, so
/// that runs stored before the bytes were read past the bottleneck
/// ([`super::kernel::bytes_past_bottleneck`]) are counted as the newer ones.
fn rereduce_bytes(record: &mut Record, raw: &str) -> Result<()> {
    let raw: Value = serde_json::from_str(raw)?;
    let emulator = &raw["emulator"];
    record.counters.bytes_up = super::kernel::bytes_past_bottleneck(emulator, "uplink");
    record.counters.bytes_down = super::kernel::bytes_past_bottleneck(emulator, "downlink");
    Ok(())
}

/// A short digest of a sysctl snapshot, to tell kernel runs with different
/// settings apart in tables.
pub fn sysctl_digest(sysctl: &Value) -> String {
    let text = serde_json::to_string(sysctl).unwrap_or_default();
    crate::key::digest([text.as_str()])[..8].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel_check::record::{Counters, Source};

    fn run(key: &str, kernel: bool, bytes: (u64, u64), raw: &str) -> KernelCheckRun {
        KernelCheckRun {
            key: key.into(),
            point: "{}".into(),
            label: if kernel { "kernel 6" } else { "model tcp" }.into(),
            kernel: kernel.then(|| "6".to_string()),
            sysctl: kernel.then(|| "{}".to_string()),
            model_version: (!kernel).then(|| "7".to_string()),
            record: Record {
                source: if kernel {
                    Source::Kernel("6".into())
                } else {
                    Source::Model("tcp".into())
                },
                replication: 0,
                fct: vec![Some(1.0)],
                counters: Counters {
                    bytes_up: bytes.0,
                    bytes_down: bytes.1,
                    downlink_drops: 5,
                    ..Counters::default()
                },
            },
            raw: raw.into(),
        }
    }

    #[test]
    fn kernel_runs_are_read_with_the_bytes_that_crossed_the_bottleneck() {
        let dir = tempfile::tempdir().unwrap();
        let store = crate::networks::open_store(&dir.path().join("s.sqlite")).unwrap();
        // A kernel run stored as before: the relay's offered bytes (which
        // include the 5 dropped packets) in its record.
        let raw = r#"{"load": {}, "emulator": {"relay": {
            "uplink": {"bytes": 1200, "delivered_bytes": 1100},
            "downlink": {"bytes": 3525, "delivered_bytes": 3000}}}}"#;
        store
            .kernel_check_put(&run("k", true, (1200, 3525), raw))
            .unwrap();
        store
            .kernel_check_put(&run("m", false, (900, 2900), "{}"))
            .unwrap();
        let runs = store.kernel_check_runs().unwrap();
        let bytes = |key: &str| {
            let r = runs.iter().find(|r| r.key == key).unwrap();
            (r.record.counters.bytes_up, r.record.counters.bytes_down)
        };
        assert_eq!(bytes("k"), (1100, 3000));
        assert_eq!(bytes("m"), (900, 2900), "model runs are read as stored");
    }
}
