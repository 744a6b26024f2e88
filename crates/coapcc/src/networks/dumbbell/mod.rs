//! The constrained-link dumbbell of the Helsinki evaluations (spec
//! `docs/spec/testbed-spec.md` §1–3) in the lab layer.
//!
//! - [`output`]: what `coapcc run` prints; [`cost`]: the expected cost of
//!   a run (memory and events);
//! - [`campaign`]: campaign files ([`campaign::file`]), their expansion
//!   ([`campaign::plan`]) and the cost of a run;
//! - [`store`]: its tables in the results store (`cells`, `runs`, `clients`);
//! - [`report`]: its report (FCT and unnecessary-retransmission box plots,
//!   measured vs published).

pub mod bench;
pub mod campaign;
pub mod cost;
pub mod emulate;
pub mod output;
pub mod report;
pub mod store;

use std::path::Path;

use anyhow::{anyhow, bail, Result};
use coapcc_link::dumbbell::Buffer;
use coapcc_link::errors::ErrorProfile;
use coapcc_sim::dumbbell::{self, RunSpec, Scenario};
use coapcc_sim::metrics::ClientRecord;
use coapcc_sim::metrics::Conservation;
use coapcc_sim::NetworkScenario;
use coapcc_sim::{RunResult, ScenarioResult, Tapped, WorkloadKind};

use crate::campaign::Campaign;
use crate::cost::RunCost;
use crate::networks::LabNetwork;
use crate::report::Written;
use crate::scenario_file::{self, revalidate, Overrides};
use crate::store::NetworkTables;
use crate::store::{Definition, Store};
use campaign::plan::{DumbbellCell, DumbbellPlan};
use report::data::DumbbellReport;

/// The dumbbell.
pub struct Dumbbell;

/// Parses a dumbbell scenario from TOML text; `origin` names the file in
/// errors.
pub fn parse_scenario(text: &str, origin: &str) -> Result<Scenario> {
    scenario_file::parse_toml(text, origin, Scenario::validate)
}

/// Loads and validates a dumbbell scenario file.
pub fn load_scenario(path: &Path) -> Result<Scenario> {
    parse_scenario(&scenario_file::read(path)?, &path.display().to_string())
}

impl LabNetwork for Dumbbell {
    const NAME: &'static str = "dumbbell";
    const TABLES: NetworkTables = store::TABLES;
    const ABOUT: &'static str = "the constrained, asymmetric link of the Helsinki testbed (60/30 kbit/s, 200/400 ms, MTU 296; the default when `[network]` gives no `kind`). `coapcc run` prints flow completion times, retransmissions and link figures per algorithm. Scenarios: scenarios/*.toml; campaigns: scenarios/campaigns/ (all but pcocoa.toml and lwip.toml).";

    type Sim = dumbbell::Sim;
    type Scenario = Scenario;
    type Spec = RunSpec;
    type RunResult = RunResult;
    type Item = ClientRecord;
    type File = campaign::file::DumbbellCampaignFile;
    type Cell = DumbbellCell;

    fn parse_scenario(text: &str, origin: &str) -> Result<Scenario> {
        parse_scenario(text, origin)
    }

    /// `--algorithms` keeps the parameters the scenario gives an algorithm of
    /// the same name (so the published settings stay), and uses the spec
    /// defaults for names the scenario does not list.
    fn apply(o: &Overrides, mut s: Scenario, origin: &str) -> Result<Scenario> {
        if let Some(n) = o.clients {
            if n == 0 {
                bail!("--clients: expected at least 1");
            }
            s.clients = n;
        }
        if let Some(b) = &o.buffer {
            s.network.buffer = Buffer::parse(b).ok_or_else(|| {
                anyhow!("--buffer: expected a size in bytes (e.g. 2500) or `inf`, found `{b}`")
            })?;
        }
        if let Some(e) = &o.errors {
            s.network.errors = ErrorProfile::parse(e).ok_or_else(|| {
                anyhow!("--errors: expected none, low, medium or high, found `{e}`")
            })?;
        }
        if let Some(w) = &o.workload {
            let kind = WorkloadKind::parse(w).ok_or_else(|| {
                anyhow!(
                    "--workload: expected continuous, random, observe or blockwise, found `{w}`"
                )
            })?;
            s.workload = s.workload.with_kind(kind);
        }
        if let Some(p) = o.period {
            if s.workload.kind != WorkloadKind::Observe {
                bail!(
                    "--period: applies to grid scenarios and to the observe workload; {origin} \
                     runs the {} workload on the dumbbell",
                    s.workload.kind.name()
                );
            }
            s.workload.period = Some(p);
        }
        if let Some(n) = o.nstart {
            s.coap.nstart = n;
        }
        o.apply_common(&mut s.algorithms, &mut s.replications, &mut s.seed)?;
        revalidate(s, origin, Scenario::validate)
    }

    /// One replication, at most 5 exchanges per client (the population,
    /// buffer, errors and workload kind stay the file's); none above 1000
    /// clients.
    fn reduce(s: &mut Scenario) -> bool {
        if s.clients > 1000 {
            return false;
        }
        s.replications = 1;
        s.workload.exchanges = s.workload.exchanges.min(5);
        true
    }
    fn run_cost(spec: &RunSpec) -> RunCost {
        cost::run_cost(spec)
    }
    fn events(r: &RunResult) -> u64 {
        r.events
    }
    fn duration_and_conservation(r: &RunResult) -> (f64, &Conservation) {
        (r.duration, &r.conservation)
    }
    fn items(r: &RunResult) -> &[ClientRecord] {
        &r.clients
    }
    fn table(s: &Scenario, r: &ScenarioResult<dumbbell::Sim>) -> String {
        output::table(s, &r.summaries)
    }
    fn markdown(s: &Scenario, r: &ScenarioResult<dumbbell::Sim>) -> String {
        output::markdown(s, &r.summaries)
    }
    fn histograms(s: &Scenario, r: &ScenarioResult<dumbbell::Sim>) -> String {
        output::histograms(s, &r.runs)
    }
    fn pcap_unit() -> Result<&'static str> {
        Ok("packets")
    }
    fn write_pcap(s: &Scenario, i: usize, file: &Path) -> Result<u64> {
        let mut tap = crate::pcap::PcapTap::create(file)?;
        dumbbell::Sim::run_with_tap(&s.run_spec(i), 0, &mut tap)?;
        tap.finish()
    }

    fn parse_plan(text: &str, origin: &str) -> Result<DumbbellPlan> {
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
    fn campaign(p: &DumbbellPlan) -> &dyn Campaign<Result = RunResult> {
        p
    }
    fn cell_algorithm(c: &DumbbellCell) -> &str {
        c.groups.first().map_or("", |g| g.algorithm.name.as_str())
    }

    fn definition_keys(store: &Store, hash: &str) -> Result<Vec<String>> {
        Ok(store::cells(store, hash)?
            .into_iter()
            .flat_map(|c| c.keys)
            .collect())
    }
    fn verify(store: &Store) -> Result<()> {
        store::verify(store)
    }
    fn dump(store: &Store, out: &mut String) -> Result<()> {
        store::dump(store, out)
    }

    type Report = DumbbellReport;
    fn gather(
        store: &Store,
        definition: Definition,
        others: Vec<Definition>,
    ) -> Result<DumbbellReport> {
        report::data::gather(store, definition, others)
    }
    fn progress(r: &DumbbellReport) -> (u64, u64) {
        r.progress()
    }
    fn write_report(r: &DumbbellReport, out: &Path) -> Result<Written> {
        report::write(r, out)
    }
}
