//! Campaigns for front-ends other than the command line: the plan as rows,
//! running it into a store without printing, and its units one by one for
//! executors that compute them elsewhere (the Python package's Ray
//! executor): [`prepare`] on the driver, [`compute`] on a worker, [`commit`]
//! on the driver again — the very functions `coapcc campaign` runs
//! ([`crate::campaign::unit`]).

use std::collections::HashSet;
use std::path::Path;

use anyhow::Result;
use serde_json::Value;

use crate::campaign::ceiling::Ceilings;
use crate::campaign::{self, Campaign, Unit};
use crate::cost::RunCost;
use crate::networks::{AnyPlan, UnitResult};
use crate::store::Store;

/// A campaign file, expanded.
pub fn load(path: &Path) -> Result<AnyPlan> {
    AnyPlan::load(path)
}

/// A campaign file, held to `ceilings` before it is expanded (the size of
/// its whole plan, `threads` runs at a time: [`crate::campaign::ceiling`];
/// skipped if `force`), then expanded and held to the bounds of its largest
/// run ([`check_budget`]). Nothing is written anywhere.
pub fn load_checked(
    path: &Path,
    threads: usize,
    ceilings: &Ceilings,
    force: bool,
) -> Result<AnyPlan> {
    crate::campaign::plan::load(path, |text, origin| {
        let estimate = AnyPlan::estimate(text, origin, threads)?;
        // A plan above the ceilings is refused by them without being
        // expanded, unless it is small enough to expand at no cost: then it
        // is first held to the bounds of its largest run, whose refusal names
        // the field that makes one run too large (what the user has to change).
        match estimate.check(ceilings, origin, force) {
            Err(over) if estimate.cells > EXPANDED_TO_NAME_THE_FIELD => Err(over),
            held => {
                let plan = AnyPlan::parse(text, origin)?;
                check_largest(&plan, origin, threads, force)?;
                held.map(|()| plan)
            }
        }
    })
}

/// A campaign file whose runs are counted and held to `ceilings` before it
/// is expanded (unless `force`), without the bounds of its largest run: for
/// listing a plan, not running it.
pub fn load_counted(path: &Path, ceilings: &Ceilings, force: bool) -> Result<AnyPlan> {
    crate::campaign::plan::load(path, |text, origin| {
        AnyPlan::estimate(text, origin, 1)?.check(ceilings, origin, force)?;
        AnyPlan::parse(text, origin)
    })
}

/// Cells up to which a plan above the ceilings is expanded to check its
/// largest run first (expanding 10⁴ cells takes milliseconds).
const EXPANDED_TO_NAME_THE_FIELD: u64 = 10_000;

/// `dumbbell`, `grid` or `star`.
pub fn network(plan: &AnyPlan) -> &'static str {
    plan.network()
}

/// The campaign's name and definition hash.
pub fn identity(plan: &AnyPlan) -> (&str, &str) {
    plan.identity()
}

/// One JSON object per run of the plan (cell × replication), in plan order:
/// the cell's fields (without its run spec), `cell` (its index),
/// `replication`, `key`, and `stored` (whether `store` already holds it; false
/// without a store).
pub fn plan_rows(plan: &AnyPlan, store: Option<&Path>) -> Result<String> {
    let done: HashSet<String> = match store {
        Some(path) if path.exists() => {
            let db = crate::networks::open_store_read_only(path)?;
            plan.kind().done_keys(&db)?
        }
        _ => HashSet::new(),
    };
    let mut rows = Vec::new();
    for (i, (fields, keys)) in plan.cell_rows().into_iter().enumerate() {
        for (r, key) in keys.iter().enumerate() {
            let mut row = fields.clone();
            row.insert("cell".into(), Value::from(i));
            row.insert("replication".into(), Value::from(r));
            row.insert("key".into(), Value::from(key.as_str()));
            row.insert("stored".into(), Value::from(done.contains(key)));
            rows.push(Value::Object(row));
        }
    }
    Ok(serde_json::to_string(&rows).expect("rows serialise"))
}

/// Refuses a campaign above the default ceilings of a whole plan
/// ([`Ceilings::DEFAULT`]), or whose most expensive run, `threads` at a
/// time, would need more memory than the machine has available, or more
/// events than [`crate::budget::MAX_EVENTS`] (unless `force`); errors name
/// `origin` and the field. Every front runs it before the first run.
pub fn check_budget(plan: &AnyPlan, origin: &str, threads: usize, force: bool) -> Result<()> {
    check_largest(plan, origin, threads, force)?;
    let (text, _) = plan.text();
    AnyPlan::estimate(text, origin, threads)?.check(&Ceilings::DEFAULT, origin, force)
}

/// The bounds of a plan's largest run, `threads` at a time ([`check_budget`]).
fn check_largest(plan: &AnyPlan, origin: &str, threads: usize, force: bool) -> Result<()> {
    let largest = plan
        .costs()
        .into_iter()
        .fold(RunCost::default(), RunCost::max);
    crate::budget::check_memory(
        crate::budget::runs_bytes(&largest, u64::MAX, threads as u64, false),
        &format!(
            "{origin}: {}: its largest runs on {threads} thread(s)",
            largest.memory_field
        ),
        force,
    )?;
    crate::budget::check_events(
        largest.events,
        &format!("{origin}: {}", largest.events_field),
        force,
    )
}

/// Runs every run of `plan` missing from the store at `store` (created if
/// missing) on `threads` workers (`None` or 0: all cores), committing each as
/// it finishes, exactly as `coapcc campaign` does, after the same resource
/// checks (threads, memory, events; the last two skipped if `force`);
/// `progress` draws its bar on stderr.
pub fn run(
    plan: &AnyPlan,
    store: &Path,
    threads: Option<usize>,
    force: bool,
    progress: bool,
) -> Result<campaign::Outcome> {
    let threads = crate::budget::threads_named("threads", threads)?;
    let (_, origin) = plan_text(plan);
    check_budget(plan, origin, threads, force)?;
    let mut db = crate::networks::open_store(store)?;
    campaign::run(plan, &mut db, threads, None, progress)
}

/// Parses campaign text (what [`plan_text`] gives) as a worker does; `origin`
/// is the file it came from, for errors and the store's record.
pub fn parse(text: &str, origin: &str) -> Result<AnyPlan> {
    AnyPlan::parse(text, origin)
}

/// The campaign file's text and where it came from: all a worker needs to
/// expand the same plan ([`parse`]).
pub fn plan_text(plan: &AnyPlan) -> (&str, &str) {
    plan.text()
}

/// Registers `plan` in `store` and lists the units it lacks, heaviest first,
/// as `coapcc campaign` does before running; returns the campaign's distinct
/// runs and those units.
pub fn prepare(plan: &AnyPlan, store: &mut Store) -> Result<(usize, Vec<Unit>)> {
    campaign::prepare(plan, store)
}

/// Runs one unit of `plan`; its result as bytes for [`commit`].
pub fn compute(plan: &AnyPlan, unit: &Unit) -> Result<Vec<u8>> {
    Ok(plan.compute(unit)?.encode())
}

/// Stores the result [`compute`] gave for `unit` in one transaction (a unit
/// already stored is left as it is).
pub fn commit(plan: &AnyPlan, store: &mut Store, unit: &Unit, result: &[u8]) -> Result<()> {
    let result = UnitResult::decode(result)?;
    plan.commit(store, unit, &result)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CAMPAIGN: &str = "name = \"u\"\nseed = 7\nalgorithms = [\"default\", \"cocoa\"]\n\
        [workload]\nexchanges = 5\n[[set]]\nname = \"s\"\nclients = [2, 3]\n\
        buffers = [\"inf\"]\nworkloads = [\"continuous\"]\nreplications = 2\n";

    fn plan() -> AnyPlan {
        parse(CAMPAIGN, "u.toml").unwrap()
    }

    #[test]
    fn units_computed_apart_store_what_the_local_runner_stores() {
        let dir = tempfile::tempdir().unwrap();
        let plan = plan();
        let local_path = dir.path().join("local.sqlite");
        run(&plan, &local_path, Some(2), false, false).unwrap();

        let apart_path = dir.path().join("apart.sqlite");
        let mut apart = crate::networks::open_store(&apart_path).unwrap();
        let (total, units) = prepare(&plan, &mut apart).unwrap();
        assert_eq!(
            total,
            2 * 2 * 2,
            "2 client counts × 2 algorithms × 2 replications"
        );
        assert_eq!(units.len(), total);
        // A worker expands the plan from the text alone.
        let (text, origin) = plan_text(&plan);
        let worker = parse(text, origin).unwrap();
        for u in units.iter().rev() {
            let bytes = compute(&worker, u).unwrap();
            commit(&plan, &mut apart, u, &bytes).unwrap();
        }
        let local = crate::networks::open_store_read_only(&local_path).unwrap();
        assert_eq!(
            crate::networks::dump(&apart).unwrap(),
            crate::networks::dump(&local).unwrap()
        );
        // Resuming finds nothing left to do.
        assert!(prepare(&plan, &mut apart).unwrap().1.is_empty());
    }

    #[test]
    fn results_cross_as_bytes_exactly() {
        let plan = plan();
        let (_, units) = prepare(
            &plan,
            &mut crate::networks::open_store(&tempfile::tempdir().unwrap().path().join("s"))
                .unwrap(),
        )
        .unwrap();
        let direct = plan.compute(&units[0]).unwrap();
        let bytes = compute(&plan, &units[0]).unwrap();
        assert_eq!(UnitResult::decode(&bytes).unwrap(), direct);
        let mut nan = direct.clone();
        let Some(r) = nan.get_mut::<crate::networks::dumbbell::Dumbbell>() else {
            panic!("a dumbbell campaign")
        };
        r.uplink.busy = f64::NAN;
        r.duration = f64::from_bits(0x3FB9_9999_9999_999A); // 0.1, not a short float
        let back = UnitResult::decode(&nan.encode()).unwrap();
        let Some(b) = back.get::<crate::networks::dumbbell::Dumbbell>() else {
            panic!("decodes as it was")
        };
        assert!(b.uplink.busy.is_nan());
        assert_eq!(b.duration.to_bits(), 0x3FB9_9999_9999_999A);
    }

    #[test]
    fn foreign_units_and_results_are_refused() {
        let plan = plan();
        let (_, units) = prepare(
            &plan,
            &mut crate::networks::open_store(&tempfile::tempdir().unwrap().path().join("s"))
                .unwrap(),
        )
        .unwrap();
        let mut wrong = units[0].clone();
        wrong.replication = 1 - wrong.replication;
        let e = compute(&plan, &wrong).unwrap_err().to_string();
        assert!(e.contains("another definition"), "{e}");
        wrong = units[0].clone();
        wrong.cell = 99;
        let e = compute(&plan, &wrong).unwrap_err().to_string();
        assert!(e.contains("4 cells"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let mut store = crate::networks::open_store(&dir.path().join("s")).unwrap();
        let e = commit(&plan, &mut store, &units[0], b"not cbor")
            .unwrap_err()
            .to_string();
        assert!(e.contains("expected the CBOR encoding"), "{e}");
        let star = parse(
            "name = \"w\"\nalgorithms = [\"tcp-lwip\"]\n[network]\nkind = \"star\"\n\
             [[set]]\nname = \"a\"\nstations = [12]\nreplications = 1\n",
            "w.toml",
        )
        .unwrap();
        let (_, star_units) = prepare(&star, &mut store).unwrap();
        let dumbbell = plan.compute(&units[0]).unwrap();
        let e = star
            .commit(&mut store, &star_units[0], &dumbbell)
            .unwrap_err()
            .to_string();
        assert_eq!(e, "a dumbbell run result for a star campaign");
    }
}

#[cfg(test)]
mod budget_tests {
    use super::*;

    /// The library face refuses what `coapcc campaign` refuses.
    #[test]
    fn campaigns_are_held_to_the_command_lines_bounds() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("s.sqlite");
        let big = parse(
            "name = \"big\"\nalgorithms = [\"default\"]\n[[set]]\nname = \"s\"\n\
             clients = [1000000000]\nreplications = 1\n",
            "big.toml",
        )
        .unwrap();
        let e = run(&big, &store, None, false, false)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("big.toml: clients: ") && e.contains("available") && e.contains("force"),
            "{e}"
        );
        let e = run(&big, &store, Some(100_000), false, false)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("threads: expected 1 to"), "{e}");
        assert!(!store.exists(), "nothing written before the checks");
    }
}
