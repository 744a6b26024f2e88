//! `coapcc report <store> --out DIR [--campaign NAME|HASH]`.

use std::path::Path;

use crate::api::report::{self, Wrote};
use anyhow::Result;

/// Writes the report of a store's campaign (or of its kernel cross-check)
/// and says what it wrote.
pub fn run(store: &Path, out: &Path, campaign: Option<&str>) -> Result<()> {
    match report::write(store, out, campaign, &mut |note| eprintln!("{note}"))? {
        Wrote::KernelCheck(w) => crate::outln!(
            "report of the kernel cross-check: {} (1 table)",
            w.html.display()
        ),
        Wrote::Campaign {
            name,
            hash,
            done,
            planned,
            written: w,
        } => {
            crate::outln!(
                "report of campaign `{name}` (definition {}, {done}/{planned} runs): {} ({} figures, {} tables)",
                &hash[..12],
                w.html.display(),
                w.svgs.len(),
                w.csvs.len()
            )?;
            if !w.removed.is_empty() {
                let names: Vec<String> =
                    w.removed.iter().map(|p| p.display().to_string()).collect();
                eprintln!(
                    "removed {} file(s) the previous report in {} wrote and this one does not: {}",
                    names.len(),
                    out.display(),
                    names.join(", ")
                );
            }
            Ok(())
        }
    }
}
