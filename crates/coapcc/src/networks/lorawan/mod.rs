//! CoAP congestion control over LoRaWAN class A (`docs/lorawan.md`) in the
//! lab layer.
//!
//! - [`output`]: what `coapcc run` prints; [`cost`]: the expected cost of
//!   a run (memory and events); [`bench`]: `coapcc bench --network lorawan`;
//! - [`campaign`]: campaign files ([`campaign::file`]), their expansion
//!   ([`campaign::plan`]) and the weight of a run;
//! - [`store`]: its tables in the results store (`lorawan_cells`,
//!   `lorawan_runs`, `lorawan_devices`);
//! - [`report`]: its report (delivery ratio and completion time per cell).

pub mod bench;
pub mod campaign;
pub mod cost;
pub mod emulate;
pub mod output;
pub mod report;
pub mod store;

use std::path::Path;

use anyhow::{bail, Result};
use coapcc_sim::lorawan;
use coapcc_sim::metrics::Conservation;
use coapcc_sim::{NetworkScenario, ScenarioResult};

use crate::campaign::Campaign;
use crate::cost::RunCost;
use crate::networks::LabNetwork;
use crate::report::Written;
use crate::scenario_file::{self, revalidate, Overrides};
use crate::store::NetworkTables;
use crate::store::{Definition, Store};
use campaign::plan::{LorawanCell, LorawanPlan};
use report::data::LorawanReport;

/// LoRaWAN class A (EU868).
pub struct Lorawan;

impl LabNetwork for Lorawan {
    const NAME: &'static str = "lorawan";
    const TABLES: NetworkTables = store::TABLES;
    const ABOUT: &'static str = "LoRaWAN class A in EU868: devices in a disc around one gateway, duty cycles, capture, RX1/RX2 downlinks, CoAP over SCHC. `coapcc run` prints the delivery ratio, exchange completion times, retransmissions and their air time, and drops by cause, with 95 % confidence intervals. Scenarios: scenarios/lorawan/; campaign: scenarios/campaigns/lorawan.toml.";

    type Sim = lorawan::Sim;
    type Scenario = lorawan::Scenario;
    type Spec = lorawan::RunSpec;
    type RunResult = lorawan::RunResult;
    type Item = lorawan::DeviceResult;
    type File = campaign::file::LorawanCampaignFile;
    type Cell = LorawanCell;

    fn parse_scenario(text: &str, origin: &str) -> Result<lorawan::Scenario> {
        scenario_file::parse_toml(text, origin, lorawan::Scenario::validate)
    }
    fn apply(o: &Overrides, mut s: lorawan::Scenario, origin: &str) -> Result<lorawan::Scenario> {
        Overrides::refuse(
            &[
                ("--buffer", o.buffer.is_some()),
                ("--errors", o.errors.is_some()),
                ("--workload", o.workload.is_some()),
                ("--nstart", o.nstart.is_some()),
            ],
            || format!("applies to dumbbell scenarios only; {origin} runs on LoRaWAN"),
        )?;
        o.apply_common(&mut s.algorithms, &mut s.replications, &mut s.seed)?;
        if let Some(c) = o.clients {
            s.network.devices = c;
        }
        if let Some(p) = o.period {
            s.workload.period_s = p;
        }
        revalidate(s, origin, lorawan::Scenario::validate)
    }
    /// One replication, a traffic window of at most 1200 s.
    fn reduce(s: &mut lorawan::Scenario) -> bool {
        s.replications = 1;
        s.workload.duration_s = s.workload.duration_s.min(1200.0);
        true
    }
    fn run_cost(spec: &lorawan::RunSpec) -> RunCost {
        cost::run_cost(spec)
    }
    fn events(r: &lorawan::RunResult) -> u64 {
        r.events
    }
    fn duration_and_conservation(r: &lorawan::RunResult) -> (f64, &Conservation) {
        (r.duration, &r.conservation)
    }
    fn items(r: &lorawan::RunResult) -> &[lorawan::DeviceResult] {
        &r.devices
    }
    fn table(s: &lorawan::Scenario, r: &ScenarioResult<lorawan::Sim>) -> String {
        output::table(s, r)
    }
    fn markdown(s: &lorawan::Scenario, r: &ScenarioResult<lorawan::Sim>) -> String {
        output::markdown(s, &r.summaries)
    }
    fn pcap_unit() -> Result<&'static str> {
        bail!("--pcap: LoRaWAN has no pcap tap")
    }
    fn write_pcap(_s: &lorawan::Scenario, _i: usize, _file: &Path) -> Result<u64> {
        Self::pcap_unit().map(|_| 0)
    }

    fn parse_plan(text: &str, origin: &str) -> Result<LorawanPlan> {
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
    fn campaign(p: &LorawanPlan) -> &dyn Campaign<Result = lorawan::RunResult> {
        p
    }
    fn cell_algorithm(c: &LorawanCell) -> &str {
        &c.spec.algorithm.name
    }

    fn verify(store: &Store) -> Result<()> {
        store::verify(store)
    }
    fn dump(store: &Store, out: &mut String) -> Result<()> {
        store::dump(store, out)
    }

    type Report = LorawanReport;
    fn gather(
        store: &Store,
        definition: Definition,
        others: Vec<Definition>,
    ) -> Result<LorawanReport> {
        report::data::gather(store, definition, others)
    }
    fn progress(r: &LorawanReport) -> (u64, u64) {
        r.progress()
    }
    fn write_report(r: &LorawanReport, out: &Path) -> Result<Written> {
        report::write(r, out)
    }
}
