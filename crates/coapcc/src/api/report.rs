//! Reports for front-ends (the command line's `coapcc report`): the report
//! of a store's campaign, of whichever network it ran on.

use std::path::Path;

use anyhow::{bail, Context, Result};

use crate::networks::{self, Reported};
use crate::report;
use crate::store::digest::CellsCheck;
use crate::store::{Definition, Store};

/// Refuses to report a definition whose cells, or one of whose runs, no
/// longer match the digest written with them ([`crate::store::digest`]);
/// returns a note saying what was stored before digests existed, if
/// anything was.
pub fn check_digests(db: &Store, def: &Definition) -> Result<Option<String>> {
    let network = networks::network_of(def)?;
    let cells_note = match db.check_cells(network.cells_table(), &def.hash)? {
        CellsCheck::Checked => None,
        CellsCheck::Unchecked => Some(format!(
            "note: the cells of campaign `{}` in {} were stored before coapcc kept cell \
             digests (store layout 5 or older); whether their parameters or labels were edited \
             since cannot be checked",
            def.name,
            db.path().display()
        )),
        CellsCheck::Altered => bail!(
            "{}: the cells of campaign `{}` (definition {}) do not match the digest stored with \
             them — their rows in table {} were changed after coapcc stored them; refusing to \
             report edited parameters or labels as measured (nothing written). Run the campaign \
             file again into a new store",
            db.path().display(),
            def.name,
            &def.hash[..12.min(def.hash.len())],
            network.cells_table()
        ),
    };
    let keys = networks::definition_keys(db, def)?;
    let t = network.run_tables();
    let check = db.check_digests(t, network.since_layout(), keys.iter().map(String::as_str))?;
    if !check.altered.is_empty() {
        let items: Vec<&str> = t.items.iter().map(|(n, _)| *n).collect();
        bail!(
            "{}: {} run(s) of campaign `{}` do not match the digest stored with them — their \
             rows in table {} or {} were changed after coapcc stored them: {}{}; refusing to \
             report edited values as measured (nothing written). Compute them again into a new \
             store",
            db.path().display(),
            check.altered.len(),
            def.name,
            t.runs,
            items.join(", "),
            check
                .altered
                .iter()
                .take(3)
                .cloned()
                .collect::<Vec<_>>()
                .join(", "),
            if check.altered.len() > 3 { ", …" } else { "" }
        );
    }
    let runs_note = (check.unchecked > 0).then(|| {
        format!(
            "note: {} of the {} stored runs of campaign `{}` in {} were stored before coapcc kept \
             run digests (store layout 4 or older); whether their values were edited since \
             cannot be checked",
            check.unchecked,
            check.unchecked + check.checked,
            def.name,
            db.path().display()
        )
    });
    Ok(match (cells_note, runs_note) {
        (Some(a), Some(b)) => Some(format!("{a}\n{b}")),
        (a, b) => a.or(b),
    })
}

/// What [`fn@write`] wrote.
#[derive(Clone, Debug)]
pub enum Wrote {
    /// The report of the kernel cross-check (a store without campaigns).
    KernelCheck(report::Written),
    /// The report of a campaign definition.
    Campaign {
        /// The campaign's name.
        name: String,
        /// Its definition hash.
        hash: String,
        /// Finished runs.
        done: u64,
        /// Runs it comprises.
        planned: u64,
        /// The files written.
        written: report::Written,
    },
}

/// Writes the report of the campaign `campaign` (a name or a hash prefix;
/// the one run last without) of the store at `store` into `out`; `note`
/// receives what is worth saying on the way (runs whose digests cannot be
/// checked).
pub fn write(
    store: &Path,
    out: &Path,
    campaign: Option<&str>,
    note: &mut dyn FnMut(&str),
) -> Result<Wrote> {
    let db = crate::networks::open_store_read_only(store)?;
    if campaign.is_none() && db.definitions()?.is_empty() && !db.kernel_check_runs()?.is_empty() {
        return Ok(Wrote::KernelCheck(crate::kernel_check::report::write(
            &db, out,
        )?));
    }
    let (def, others) = report::choose(&db, campaign)
        .with_context(|| format!("results store {}", store.display()))?;
    if let Some(n) = check_digests(&db, &def)? {
        note(&n);
    }
    let (name, hash) = (def.name.clone(), def.hash.clone());
    let Reported {
        done,
        planned,
        written,
    } = networks::report(&db, def, others, out)?;
    let Some(written) = written else {
        bail!(
            "{}: campaign `{name}` has no finished run (0/{planned}); run `coapcc campaign` to \
             compute them (nothing written)",
            store.display()
        );
    };
    Ok(Wrote::Campaign {
        name,
        hash,
        done,
        planned,
        written,
    })
}
