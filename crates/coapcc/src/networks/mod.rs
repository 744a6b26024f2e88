//! The networks of the lab layer, and the one list that names them all.
//!
//! Each network has a folder here — [`dumbbell`] (the constrained-link
//! testbed), [`grid`] (the 802.15.4 grid of the pCoCoA evaluation), [`star`]
//! (the Wi-Fi star of the lwIP evaluation) — holding its output printing,
//! its campaign file and plan, its store tables and its report, and one type
//! implementing [`LabNetwork`] ([`lab`]): what the shared code (scenario
//! files, campaigns, the store, reports, the API and the command line)
//! needs of a network.
//!
//! [`NETWORKS`] lists them; everything else reads that list. The shared code
//! holds a value of any network behind one type ([`AnyScenario`],
//! [`AnyPlan`], [`UnitResult`], [`Ran`]; see [`any`]) and names no network.
//! A new network is a folder here, its `pub mod` line and one line in
//! [`NETWORKS`].

pub mod any;
pub mod dumbbell;
pub mod grid;
pub mod lab;
pub mod lorawan;
pub mod star;

use std::collections::HashSet;
use std::fmt;
use std::path::Path;
use std::sync::OnceLock;

use anyhow::{anyhow, bail, Result};
use serde::{Deserialize, Serialize};

pub use any::{AnyPlan, AnyScenario, Network, Ran, UnitResult};
pub use lab::{LabNetwork, Reported, ScenarioOutcome};

use crate::store::digest::{CellsCheck, DigestCheck, RunTables};
use crate::store::{Definition, NetworkTables, Store};

/// Every network, in the order their store tables arrived: the one list of
/// them.
pub static NETWORKS: &[&dyn Network] = &[
    &any::Entry::<dumbbell::Dumbbell>::NEW,
    &any::Entry::<grid::Grid>::NEW,
    &any::Entry::<star::Star>::NEW,
    &any::Entry::<lorawan::Lorawan>::NEW,
];

/// A network of the registry, by the name `[network] kind` gives it and the
/// store records.
#[derive(Clone, Copy)]
pub struct NetworkKind(&'static dyn Network);

impl PartialEq for NetworkKind {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name()
    }
}

impl Eq for NetworkKind {}

impl fmt::Debug for NetworkKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl NetworkKind {
    /// Every network, in registry order.
    pub fn all() -> impl Iterator<Item = NetworkKind> {
        NETWORKS.iter().map(|n| NetworkKind(*n))
    }

    /// The names of every network, in registry order.
    pub fn names() -> Vec<&'static str> {
        Self::all().map(NetworkKind::name).collect()
    }

    /// The names of every network as a list for errors and help texts:
    /// `"dumbbell", "grid" or "star"`.
    pub fn names_text() -> String {
        let names: Vec<String> = Self::all().map(|k| format!("\"{}\"", k.name())).collect();
        match names.split_last() {
            Some((last, first)) if !first.is_empty() => format!("{} or {last}", first.join(", ")),
            _ => names.concat(),
        }
    }

    /// The network `N`; panics if the registry lacks it (a network is
    /// reached through the registry only, so this cannot happen for one in
    /// use).
    pub fn of<N: LabNetwork>() -> NetworkKind {
        Self::named(N::NAME)
            .unwrap_or_else(|| panic!("network `{}` is not in networks::NETWORKS", N::NAME))
    }

    /// The default network of a scenario or campaign file without `kind`:
    /// the first of the registry.
    pub fn default_kind() -> NetworkKind {
        NetworkKind(NETWORKS[0])
    }

    /// Its `[network] kind` and the store's `definitions.network`.
    pub fn name(self) -> &'static str {
        self.0.name()
    }

    /// The network of that [`NetworkKind::name`].
    pub fn named(name: &str) -> Option<NetworkKind> {
        Self::all().find(|k| k.name() == name)
    }

    /// The network's entry in the registry.
    pub fn network(self) -> &'static dyn Network {
        self.0
    }

    /// Reads `[network] kind` of a TOML document (scenario or campaign), with
    /// nothing else checked; `origin` names it in errors.
    pub fn of_toml(text: &str, origin: &str) -> Result<NetworkKind> {
        #[derive(Deserialize)]
        struct Probe {
            #[serde(default)]
            network: Option<ProbeNetwork>,
        }
        #[derive(Deserialize)]
        struct ProbeNetwork {
            #[serde(default)]
            kind: Option<toml::Value>,
        }
        let probe: Probe =
            toml::from_str(text).map_err(|e| crate::scenario_file::toml_error(origin, text, &e))?;
        match probe.network.and_then(|n| n.kind) {
            None => Ok(Self::default_kind()),
            Some(toml::Value::String(k)) if Self::named(&k).is_some() => {
                Ok(Self::named(&k).expect("checked"))
            }
            Some(other) => bail!(
                "{origin}: network.kind: expected {}, found {other}",
                Self::names_text()
            ),
        }
    }

    /// Every network as `--help` lists them: one paragraph each, its
    /// `[network] kind` first.
    pub fn help() -> String {
        let mut out = String::from("Networks (a scenario or campaign file's `[network] kind`):");
        for k in Self::all() {
            out.push_str(&format!("\n\n  {}: {}", k.name(), k.network().about()));
        }
        out
    }

    /// Its tables in the store.
    pub fn tables(self) -> &'static NetworkTables {
        self.0.tables()
    }

    /// The first store layout that holds this network's runs.
    pub fn since_layout(self) -> u32 {
        self.tables().since_layout
    }

    /// The store tables of this network's runs ([`crate::store::digest`]).
    pub fn run_tables(self) -> &'static RunTables {
        &self.tables().runs
    }

    /// Its table of definitions' cells in the store.
    pub fn cells_table(self) -> &'static str {
        self.tables().cells
    }

    /// The keys of every run of this network `store` holds.
    pub fn done_keys(self, store: &Store) -> Result<HashSet<String>> {
        self.0.done_keys(store)
    }
}

// ----- the store --------------------------------------------------------------

/// Every network's tables, in registry order: what a store is opened with.
pub fn store_tables() -> &'static [&'static NetworkTables] {
    static TABLES: OnceLock<Vec<&'static NetworkTables>> = OnceLock::new();
    TABLES.get_or_init(|| NETWORKS.iter().map(|n| n.tables()).collect())
}

/// Opens (creating if needed) the store at `path` for writing, with every
/// network's tables ([`Store::open`]).
pub fn open_store(path: &Path) -> Result<Store> {
    Store::open(path, store_tables())
}

/// Opens the existing store at `path` without writing to it
/// ([`Store::open_read_only`]).
pub fn open_store_read_only(path: &Path) -> Result<Store> {
    Store::open_read_only(path, store_tables())
}

/// The layout of the stores this build writes.
pub fn store_layout() -> u32 {
    crate::store::layout::current(store_tables())
}

/// Checks that `store` is whole: SQLite's integrity check passes, every
/// stored run of every network has its item rows (one client row per client
/// of its spec, one node row per node, one station row per station with a
/// readable trace), every run's rows match their digest, and so does every
/// definition's cells.
pub fn verify(store: &Store) -> Result<()> {
    store.integrity_check()?;
    for kind in NetworkKind::all() {
        if store.layout() >= kind.since_layout() {
            kind.network().verify(store)?;
        }
    }
    for kind in NetworkKind::all() {
        let check = check_all_digests(store, kind)?;
        if let Some(key) = check.altered.first() {
            bail!(
                "{} run {key}: its rows in table {} do not match the digest stored with \
                 them ({} run(s) so)",
                kind.name(),
                kind.run_tables().runs,
                check.altered.len()
            );
        }
    }
    for d in store.definitions()? {
        let table = network_of(&d)?.cells_table();
        if store.check_cells(table, &d.hash)? == CellsCheck::Altered {
            bail!(
                "campaign `{}` (definition {}): its rows in table {table} do not match the \
                 digest stored with them",
                d.name,
                d.hash
            );
        }
    }
    Ok(())
}

/// A canonical text of every result and cell in `store` (not the times at
/// which definitions were run), for comparing two stores exactly: every
/// value is printed in full (floats by their shortest exact form).
pub fn dump(store: &Store) -> Result<String> {
    let mut out = String::new();
    for kind in NetworkKind::all() {
        if store.layout() >= kind.since_layout() {
            kind.network().dump(store, &mut out)?;
        }
    }
    store.dump_definitions(&mut out)?;
    Ok(out)
}

/// Checks the digests of every stored run of `network`.
pub fn check_all_digests(store: &Store, network: NetworkKind) -> Result<DigestCheck> {
    let keys: Vec<String> = network.done_keys(store)?.into_iter().collect();
    store.check_digests(
        network.run_tables(),
        network.since_layout(),
        keys.iter().map(String::as_str),
    )
}

/// The network of a stored definition.
pub fn network_of(d: &Definition) -> Result<NetworkKind> {
    NetworkKind::named(&d.network).ok_or_else(|| {
        anyhow!(
            "definition {} of campaign `{}` is on network `{}`, which this build does not know",
            d.hash,
            d.name,
            d.network
        )
    })
}

/// The run keys of a stored definition's cells.
pub fn definition_keys(store: &Store, d: &Definition) -> Result<Vec<String>> {
    network_of(d)?.network().definition_keys(store, &d.hash)
}

/// Gathers the report of `definition` from `store` and, if a run of it is
/// finished, writes it into `out`.
pub fn report(
    store: &Store,
    definition: Definition,
    others: Vec<Definition>,
    out: &Path,
) -> Result<Reported> {
    network_of(&definition)?
        .network()
        .report(store, definition, others, out)
}

// ----- what the networks' outputs share ---------------------------------------

/// The JSON document `coapcc run --format json` prints for a scenario of any
/// network: the scenario `S` as run and its per-algorithm summaries `A`.
#[derive(Serialize)]
pub struct RunReport<'a, S, A> {
    /// The scenario as run (after overrides).
    pub scenario: &'a S,
    /// Per algorithm, in scenario order.
    pub algorithms: &'a [A],
}

/// One JSON document for a scenario's results ([`RunReport`]).
pub fn run_json<S: Serialize, A: Serialize>(scenario: &S, summaries: &[A]) -> String {
    serde_json::to_string_pretty(&RunReport {
        scenario,
        algorithms: summaries,
    })
    .expect("results serialise")
}

/// `mean ± ci95` with `decimals` decimals: how the grid's and the star's
/// printed tables write an estimate.
pub fn estimate_text(e: &coapcc_sim::metrics::Estimate, decimals: usize) -> String {
    format!("{:.decimals$} ± {:.decimals$}", e.mean, e.ci95)
}

/// One Markdown table under the line `title`: the `head` row, its separator
/// and one row of cells a summary.
pub fn markdown_table(
    title: &str,
    head: &[&str],
    rows: impl IntoIterator<Item = Vec<String>>,
) -> String {
    let mut out = format!(
        "{title}\n\n| {} |\n|{}\n",
        head.join(" | "),
        " --- |".repeat(head.len())
    );
    for row in rows {
        out.push_str(&format!("| {} |\n", row.join(" | ")));
    }
    out
}
