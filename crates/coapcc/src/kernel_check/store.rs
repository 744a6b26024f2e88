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
            let record: Record = serde_json::from_str(&record)
                .with_context(|| format!("kernel_check_runs, key {key}: column record"))?;
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

/// A short digest of a sysctl snapshot, to tell kernel runs with different
/// settings apart in tables.
pub fn sysctl_digest(sysctl: &Value) -> String {
    let text = serde_json::to_string(sysctl).unwrap_or_default();
    crate::key::digest([text.as_str()])[..8].to_string()
}
