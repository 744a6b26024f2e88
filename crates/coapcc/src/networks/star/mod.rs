//! The 12-station IEEE 802.11 star of the lwIP evaluation (spec
//! `docs/spec/testbed-spec.md` §5, `docs/spec/radio-spec.md` §2) in the lab layer.
//!
//! - [`output`]: what `coapcc run` prints; [`cost`]: the expected cost of
//!   a run (memory and events);
//! - [`campaign`]: campaign files ([`campaign::file`]), their expansion
//!   ([`campaign::plan`]) and the cost of a run;
//! - [`store`]: its tables in the results store (`star_cells`, `star_runs`,
//!   `star_stations`, `star_traces`);
//! - [`report`]: its report (goodput and retransmission bars, cwnd/RTO/RTT traces).

pub mod bench;
pub mod campaign;
pub mod cost;
pub mod emulate;
pub mod output;
pub mod report;
pub mod store;
pub mod trace_codec;

use std::path::Path;

use anyhow::{bail, Result};
use coapcc_sim::metrics::Conservation;
use coapcc_sim::star;
use coapcc_sim::star::StationResult;
use coapcc_sim::NetworkScenario;
use coapcc_sim::ScenarioResult;

use crate::campaign::Campaign;
use crate::cost::RunCost;
use crate::networks::LabNetwork;
use crate::report::Written;
use crate::scenario_file::{self, revalidate, Overrides};
use crate::store::NetworkTables;
use crate::store::{Definition, Store};
use campaign::plan::{StarCell, StarPlan};
use report::data::StarReport;

/// The Wi-Fi star.
pub struct Star;

impl LabNetwork for Star {
    const NAME: &'static str = "star";
    const TABLES: NetworkTables = store::TABLES;
    const ABOUT: &'static str = "the 12-station IEEE 802.11 star of the lwIP evaluation. `coapcc run` prints goodput and retransmissions per TCP flavour. Scenarios: scenarios/lwip/; campaign: scenarios/campaigns/lwip.toml.";

    type Sim = star::Sim;
    type Scenario = star::Scenario;
    type Spec = star::RunSpec;
    type RunResult = star::RunResult;
    type Item = StationResult;
    type File = campaign::file::StarCampaignFile;
    type Cell = StarCell;

    fn parse_scenario(text: &str, origin: &str) -> Result<star::Scenario> {
        scenario_file::parse_toml(text, origin, star::Scenario::validate)
    }
    fn apply(o: &Overrides, mut s: star::Scenario, origin: &str) -> Result<star::Scenario> {
        Overrides::refuse(
            &[
                ("--clients", o.clients.is_some()),
                ("--buffer", o.buffer.is_some()),
                ("--errors", o.errors.is_some()),
                ("--workload", o.workload.is_some()),
                ("--nstart", o.nstart.is_some()),
                ("--period", o.period.is_some()),
            ],
            || format!("does not apply to {origin}, which runs on the Wi-Fi star"),
        )?;
        o.apply_common(&mut s.algorithms, &mut s.replications, &mut s.seed)?;
        revalidate(s, origin, star::Scenario::validate)
    }
    /// One replication, at most 60 writes per station.
    fn reduce(s: &mut star::Scenario) -> bool {
        s.replications = 1;
        s.workload.writes = s.workload.writes.min(60);
        true
    }
    fn run_cost(spec: &star::RunSpec) -> RunCost {
        cost::run_cost(spec)
    }
    fn events(r: &star::RunResult) -> u64 {
        r.events
    }
    fn duration_and_conservation(r: &star::RunResult) -> (f64, &Conservation) {
        (r.duration, &r.conservation)
    }
    fn items(r: &star::RunResult) -> &[StationResult] {
        &r.stations
    }
    fn table(s: &star::Scenario, r: &ScenarioResult<star::Sim>) -> String {
        output::table(s, &r.summaries)
    }
    fn markdown(s: &star::Scenario, r: &ScenarioResult<star::Sim>) -> String {
        output::markdown(s, &r.summaries)
    }
    fn pcap_unit() -> Result<&'static str> {
        bail!("--pcap: not available on the Wi-Fi star yet")
    }
    fn write_pcap(_s: &star::Scenario, _i: usize, _file: &Path) -> Result<u64> {
        Self::pcap_unit().map(|_| 0)
    }

    fn parse_plan(text: &str, origin: &str) -> Result<StarPlan> {
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
    fn campaign(p: &StarPlan) -> &dyn Campaign<Result = star::RunResult> {
        p
    }
    fn cell_algorithm(c: &StarCell) -> &str {
        &c.spec.algorithm.name
    }

    fn verify(store: &Store) -> Result<()> {
        crate::networks::star::store::verify(store)
    }
    fn dump(store: &Store, out: &mut String) -> Result<()> {
        crate::networks::star::store::dump(store, out)
    }

    type Report = StarReport;
    fn gather(
        store: &Store,
        definition: Definition,
        others: Vec<Definition>,
    ) -> Result<StarReport> {
        report::data::gather(store, definition, others)
    }
    fn progress(r: &StarReport) -> (u64, u64) {
        r.progress()
    }
    fn write_report(r: &StarReport, out: &Path) -> Result<Written> {
        report::write(r, out)
    }
}
