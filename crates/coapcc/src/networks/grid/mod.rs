//! The 6 × 6 IEEE 802.15.4 grid of the pCoCoA evaluation (spec `docs/spec/testbed-spec.md`
//! §4, `docs/spec/radio-spec.md` §1) in the lab layer.
//!
//! - [`output`]: what `coapcc run` prints; [`cost`]: the expected cost of
//!   a run (memory and events);
//! - [`campaign`]: campaign files ([`campaign::file`]), their expansion
//!   ([`campaign::plan`]) and the cost of a run;
//! - [`store`]: its tables in the results store (`grid_cells`, `grid_runs`,
//!   `grid_nodes`, `grid_traces`);
//! - [`report`]: its report (the paper's figures with 95 % confidence intervals).

pub mod bench;
pub mod campaign;
pub mod cost;
pub mod emulate;
pub mod output;
pub mod report;
pub mod store;

use std::path::Path;

use anyhow::Result;
use coapcc_sim::grid;
use coapcc_sim::metrics::Conservation;
use coapcc_sim::NetworkScenario;
use coapcc_sim::{ScenarioResult, Tapped};

use crate::campaign::Campaign;
use crate::cost::RunCost;
use crate::networks::LabNetwork;
use crate::report::Written;
use crate::scenario_file::{self, revalidate, Overrides};
use crate::store::NetworkTables;
use crate::store::{Definition, Store};
use campaign::plan::{GridCell, GridPlan};
use report::data::GridReport;

/// The 802.15.4 grid.
pub struct Grid;

impl LabNetwork for Grid {
    const NAME: &'static str = "grid";
    const TABLES: NetworkTables = store::TABLES;
    const ABOUT: &'static str = "the 6 × 6 IEEE 802.15.4 grid of the pCoCoA evaluation. `coapcc run` prints offered and carried load, transmissions and ACKs per transaction, MAC overflows and drops, with 95 % confidence intervals. Scenarios: scenarios/pcocoa/; campaign: scenarios/campaigns/pcocoa.toml.";

    type Sim = grid::Sim;
    type Scenario = grid::Scenario;
    type Spec = grid::RunSpec;
    type RunResult = grid::RunResult;
    type Item = grid::NodeResult;
    type File = campaign::file::GridCampaignFile;
    type Cell = GridCell;

    fn parse_scenario(text: &str, origin: &str) -> Result<grid::Scenario> {
        scenario_file::parse_toml(text, origin, grid::Scenario::validate)
    }
    fn apply(o: &Overrides, mut s: grid::Scenario, origin: &str) -> Result<grid::Scenario> {
        Overrides::refuse(
            &[
                ("--clients", o.clients.is_some()),
                ("--buffer", o.buffer.is_some()),
                ("--errors", o.errors.is_some()),
                ("--workload", o.workload.is_some()),
                ("--nstart", o.nstart.is_some()),
            ],
            || {
                format!(
                    "applies to dumbbell scenarios only; {origin} runs on the grid (its clients \
                     are its nodes)"
                )
            },
        )?;
        o.apply_common(&mut s.algorithms, &mut s.replications, &mut s.seed)?;
        if let Some(p) = o.period {
            s.workload.period_s = p;
        }
        revalidate(s, origin, grid::Scenario::validate)
    }
    /// One replication, a traffic window of at most 240 s (one ON/OFF cycle
    /// of the bursty interferers).
    fn reduce(s: &mut grid::Scenario) -> bool {
        s.replications = 1;
        s.workload.duration_s = s.workload.duration_s.min(240.0);
        true
    }
    fn run_cost(spec: &grid::RunSpec) -> RunCost {
        cost::run_cost(spec)
    }
    fn events(r: &grid::RunResult) -> u64 {
        r.events
    }
    fn duration_and_conservation(r: &grid::RunResult) -> (f64, &Conservation) {
        (r.duration, &r.conservation)
    }
    fn items(r: &grid::RunResult) -> &[grid::NodeResult] {
        &r.nodes
    }
    fn table(s: &grid::Scenario, r: &ScenarioResult<grid::Sim>) -> String {
        output::table(s, r)
    }
    fn markdown(s: &grid::Scenario, r: &ScenarioResult<grid::Sim>) -> String {
        output::markdown(s, &r.summaries)
    }
    fn pcap_unit() -> Result<&'static str> {
        Ok("frames")
    }
    fn write_pcap(s: &grid::Scenario, i: usize, file: &Path) -> Result<u64> {
        let mut tap = crate::pcap::Ieee802154Tap::create(file)?;
        grid::Sim::run_with_tap(&s.run_spec(i), 0, &mut tap)?;
        tap.finish()
    }

    fn parse_plan(text: &str, origin: &str) -> Result<GridPlan> {
        campaign::plan::parse(text, origin)
    }
    fn sample_plan(text: &str, origin: &str) -> Result<Vec<crate::campaign::ceiling::SetSample>> {
        campaign::plan::sample(text, origin)
    }
    fn bench(
        o: &crate::bench::BenchOptions,
        out: &mut dyn FnMut(String) -> Result<()>,
    ) -> Result<()> {
        bench::bench(o, out)
    }
    fn emulator() -> Option<&'static dyn crate::emulate::Emulator> {
        Some(&emulate::Emulate)
    }
    fn campaign(p: &GridPlan) -> &dyn Campaign<Result = grid::RunResult> {
        p
    }
    fn cell_algorithm(c: &GridCell) -> &str {
        &c.spec.algorithm.name
    }

    fn verify(store: &Store) -> Result<()> {
        crate::networks::grid::store::verify(store)
    }
    fn dump(store: &Store, out: &mut String) -> Result<()> {
        crate::networks::grid::store::dump(store, out)
    }

    type Report = GridReport;
    fn gather(
        store: &Store,
        definition: Definition,
        others: Vec<Definition>,
    ) -> Result<GridReport> {
        report::data::gather(store, definition, others)
    }
    fn progress(r: &GridReport) -> (u64, u64) {
        r.progress()
    }
    fn write_report(r: &GridReport, out: &Path) -> Result<Written> {
        report::write(r, out)
    }
}
