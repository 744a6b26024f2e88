//! `coapcc campaign <file> --store … --threads …`.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::campaign;
use crate::campaign::ceiling::Ceilings;
use crate::networks::AnyPlan;
use anyhow::{bail, Context, Result};

/// `coapcc campaign <file> --store … --threads …`: a dumbbell, grid or star
/// campaign, as the file's `[network] kind` says.
///
/// The whole plan is held to `ceilings` before it is expanded and before the
/// store is opened ([`crate::campaign::ceiling`]), unless `force`.
pub fn run(
    file: &Path,
    store: &Path,
    threads: Option<usize>,
    pause_ms: Option<u64>,
    ceilings: &Ceilings,
    force: bool,
) -> Result<()> {
    let threads = crate::budget::threads(threads)?;
    let plan = crate::api::campaign::load_checked(file, threads, ceilings, force)?;
    if crate::store::read_only(store) {
        return complete_read_only(&plan, store);
    }
    let mut db = crate::networks::open_store(store)?;
    if let Some(old) = db.upgraded_from() {
        eprintln!(
            "note: upgraded {} from store layout {old} to {} (tables added, nothing changed)",
            store.display(),
            db.current_layout()
        );
    }
    for note in plan.notes() {
        eprintln!("{note}");
    }
    let (name, definition) = plan.identity();
    let others: Vec<_> = db
        .definitions()?
        .into_iter()
        .filter(|d| d.name == name && d.hash != definition)
        .collect();
    if !others.is_empty() {
        eprintln!(
            "note: {} holds {} other definition(s) of campaign `{name}` (changed parameters or \
             model version); their runs are reused only where a run's full spec is unchanged, \
             and `coapcc report` shows only the definition run last",
            store.display(),
            others.len(),
        );
    }
    let started = Instant::now();
    let pause = pause_ms.map(Duration::from_millis);
    let out = campaign::run(&plan, &mut db, threads, pause, true)
        .with_context(|| format!("results store {}", store.display()))?;
    crate::outln!(
        "campaign `{name}` (definition {}): {} runs, {} already in {}, {} computed in {:.1} s",
        &definition[..12],
        out.total,
        out.reused,
        store.display(),
        out.computed,
        started.elapsed().as_secs_f64()
    )?;
    Ok(())
}

/// `coapcc campaign` on a store it cannot write: fine if every run of `plan`
/// is already there (nothing to write), else an error saying how many are
/// missing.
fn complete_read_only(plan: &AnyPlan, store: &Path) -> Result<()> {
    let (name, definition, total) = {
        let db = crate::networks::open_store_read_only(store)?;
        let (name, definition) = plan.identity();
        let keys = plan.distinct_keys();
        let done = plan.kind().done_keys(&db)?;
        let registered = db.definitions()?.iter().any(|d| d.hash == definition);
        let missing = keys.iter().filter(|k| !done.contains(**k)).count();
        if !registered || missing > 0 {
            bail!(
                "{}: the store is read-only and {missing} of {} runs of campaign `{name}` are \
                 missing{}",
                store.display(),
                keys.len(),
                if registered {
                    ""
                } else {
                    " (its definition is not recorded)"
                }
            );
        }
        (name.to_string(), definition.to_string(), keys.len())
    };
    crate::outln!(
        "campaign `{name}` (definition {}): {total} runs, {total} already in {} (read-only; \
         nothing to write), 0 computed",
        &definition[..12],
        store.display()
    )
}
