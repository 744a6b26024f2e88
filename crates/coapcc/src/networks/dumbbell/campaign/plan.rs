//! Expanding a campaign file into its cells (one population at one point of a
//! set's matrix) and their runs, checking everything a run would reject before
//! any run starts.
//!
//! Order: sets as written; within a set, errors × buffers × workloads × clients
//! × populations (the single algorithms, then the mixed ones), outermost first.

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::{anyhow, bail, Result};
use coapcc_link::dumbbell::Buffer;
use coapcc_link::errors::ErrorProfile;
use coapcc_sim::dumbbell::{Group, RunSpec};
use coapcc_sim::{AlgorithmSpec, WorkloadKind};
use serde::{Deserialize, Serialize};

use super::file::{AlgorithmEntry, DumbbellCampaignFile, MixedEntry};
use crate::campaign::ceiling::{self, SampledCell, SetSample};
use crate::campaign::sets;
use crate::key::{digest, run_keys, MODEL_VERSION};

/// One group of a cell's population, as reports name it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GroupInfo {
    /// The group's label in reports: the algorithm's label, prefixed by the
    /// population's for mixed populations (`default+default-fb2: default`).
    pub label: String,
    /// The algorithm.
    pub algorithm: AlgorithmSpec,
    /// Its clients.
    pub clients: u32,
}

/// One population at one point of a set's matrix, replicated.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DumbbellCell {
    /// The set's name.
    pub set: String,
    /// Clients in all.
    pub clients: u32,
    /// Router buffer.
    pub buffer: Buffer,
    /// Workload kind.
    pub workload: WorkloadKind,
    /// Link-error profile.
    pub errors: ErrorProfile,
    /// The population's label (an algorithm label or a mixed population's).
    pub population: String,
    /// Whether the population is mixed.
    pub mixed: bool,
    /// Its groups, in run-spec order.
    pub groups: Vec<GroupInfo>,
    /// The run.
    pub spec: RunSpec,
    /// One key per replication.
    pub keys: Vec<String>,
}

impl crate::campaign::PlanCell for DumbbellCell {
    type Spec = RunSpec;
    fn keys(&self) -> &[String] {
        &self.keys
    }
    fn spec(&self) -> &RunSpec {
        &self.spec
    }
}

pub use crate::store::Skipped;

/// A dumbbell campaign ready to run.
pub type DumbbellPlan = crate::campaign::Plan<DumbbellCampaignFile, DumbbellCell>;

/// Loads and expands a dumbbell campaign file.
pub fn load(path: &Path) -> Result<DumbbellPlan> {
    crate::campaign::plan::load(path, parse)
}

/// Parses and expands campaign text; `origin` names it in errors.
pub fn parse(text: &str, origin: &str) -> Result<DumbbellPlan> {
    let file: DumbbellCampaignFile =
        toml::from_str(text).map_err(|e| crate::scenario_file::toml_error(origin, text, &e))?;
    expand(file, text, origin).map_err(|e| anyhow!("{origin}: {e:#}"))
}

/// Splits `clients` between groups in proportion to `shares`: each group gets
/// the floor of its share, and the clients left over go one each to the groups
/// with the largest remainders (earlier groups first on ties).
pub fn split(clients: u32, shares: &[u32]) -> Vec<u32> {
    let total: u64 = shares.iter().map(|&s| u64::from(s)).sum();
    if total == 0 {
        return vec![0; shares.len()];
    }
    let exact: Vec<(u32, u64)> = shares
        .iter()
        .map(|&s| {
            let num = u64::from(clients) * u64::from(s);
            ((num / total) as u32, num % total)
        })
        .collect();
    let mut out: Vec<u32> = exact.iter().map(|e| e.0).collect();
    let left = clients - out.iter().sum::<u32>();
    let mut order: Vec<usize> = (0..shares.len()).collect();
    order.sort_by(|&a, &b| exact[b].1.cmp(&exact[a].1).then(a.cmp(&b)));
    for &i in order.iter().take(left as usize) {
        out[i] += 1;
    }
    out
}

/// Whether `a` runs in this build: `Ok(true)` if the simulator accepts it,
/// `Ok(false)` if it is missing (not in the registry), `Err` if it exists but its
/// parameters are wrong.
fn available(a: &AlgorithmSpec) -> Result<Option<String>> {
    let probe = RunSpec {
        network: Default::default(),
        coap: Default::default(),
        groups: vec![Group {
            algorithm: a.clone(),
            workload: Default::default(),
            clients: 1,
        }],
        seed: 1,
    };
    match coapcc_sim::dumbbell::validate(&probe) {
        Ok(()) => Ok(None),
        // Only a name the build does not know is "unavailable"; a known one
        // (a registered algorithm, or CoAP over TCP) with a bad parameter is an
        // error, never silently skipped.
        Err(e)
            if coapcc_rto::registry::find(&a.name).is_none()
                && !coapcc_sim::dumbbell::is_tcp(a) =>
        {
            Ok(Some(e.0))
        }
        Err(e) => bail!("algorithm `{}`: {e}", a.label()),
    }
}

/// A population before expansion: its label and groups (algorithm, share).
struct Population {
    label: String,
    mixed: bool,
    members: Vec<(AlgorithmSpec, u32)>,
}

/// Whether `a` may run: `Ok(true)` if available, `Ok(false)` if missing
/// and skipped (recorded in `skipped`), an error if missing and not skipped.
fn usable(
    file: &DumbbellCampaignFile,
    a: &AlgorithmSpec,
    skipped: &mut Vec<Skipped>,
) -> Result<bool> {
    match available(a)? {
        None => Ok(true),
        Some(reason) if file.skip_unavailable.allows(&a.name) => {
            if !skipped.iter().any(|s| s.name == a.name) {
                skipped.push(Skipped {
                    name: a.name.clone(),
                    reason,
                });
            }
            Ok(false)
        }
        Some(reason) => bail!(
            "algorithm `{}` is not available in this build ({reason}); remove it, or allow \
             skipping it with `skip_unavailable = [\"{}\"]`",
            a.name,
            a.name
        ),
    }
}

/// Checks a set's replications and clients and gives its populations (the
/// single algorithms, then the mixed ones), the unavailable ones skipped.
fn set_populations(
    file: &DumbbellCampaignFile,
    set: &super::file::SetFile,
    skipped: &mut Vec<Skipped>,
) -> Result<Vec<Population>> {
    let ctx = |what: &str| format!("set `{}`: {what}", set.name);
    sets::check_replications(set.replications).map_err(|e| anyhow!("{}", ctx(&e.to_string())))?;
    if set.clients.is_empty() || set.clients.contains(&0) {
        bail!(
            "{}",
            ctx("clients: expected a list of counts, each at least 1")
        );
    }
    let algorithms: &[AlgorithmEntry] = set.algorithms.as_deref().unwrap_or(&file.algorithms);
    let mixes: &[MixedEntry] = set.mixed.as_deref().unwrap_or(&file.mixed);
    let mut populations: Vec<Population> = Vec::new();
    for a in algorithms {
        if usable(file, &a.0, skipped)? {
            populations.push(Population {
                label: a.0.label().to_string(),
                mixed: false,
                members: vec![(a.0.clone(), 1)],
            });
        }
    }
    for m in mixes {
        let shares = m.shares.clone().unwrap_or_else(|| vec![1; m.of.len()]);
        if m.of.len() < 2 || shares.len() != m.of.len() || shares.contains(&0) {
            bail!(
                "{}",
                ctx(&format!(
                    "mixed `{}`: expected at least two algorithms in `of` and, if given, \
                     one positive share each",
                    m.label
                ))
            );
        }
        let mut ok = true;
        for a in &m.of {
            ok &= usable(file, &a.0, skipped)?;
        }
        if ok {
            populations.push(Population {
                label: m.label.clone(),
                mixed: true,
                members: m.of.iter().map(|a| a.0.clone()).zip(shares).collect(),
            });
        }
    }
    if populations.is_empty() && skipped.is_empty() {
        bail!(
            "{}",
            ctx("expected at least one algorithm or mixed population")
        );
    }
    for (i, p) in populations.iter().enumerate() {
        if populations[..i].iter().any(|q| q.label == p.label) {
            bail!(
                "{}",
                ctx(&format!(
                    "`{}` is listed twice; give one a distinct `label`",
                    p.label
                ))
            );
        }
    }
    Ok(populations)
}

/// A set's matrix: its errors, buffers, workloads (each its own or the
/// campaign's), outermost first.
fn set_axes(
    file: &DumbbellCampaignFile,
    set: &super::file::SetFile,
) -> (Vec<ErrorProfile>, Vec<Buffer>, Vec<WorkloadKind>) {
    (
        set.errors.clone().unwrap_or(vec![file.network.errors]),
        set.buffers.clone().unwrap_or(vec![file.network.buffer]),
        set.workloads.clone().unwrap_or(vec![file.workload.kind]),
    )
}

/// Counts and samples the cells of a campaign file without expanding it
/// ([`crate::campaign::ceiling`]).
pub fn sample(text: &str, origin: &str) -> Result<Vec<SetSample>> {
    let file: DumbbellCampaignFile =
        toml::from_str(text).map_err(|e| crate::scenario_file::toml_error(origin, text, &e))?;
    let sample = || -> Result<Vec<SetSample>> {
        sets::check_campaign(&file.name, file.sets.len())?;
        let mut skipped = Vec::new();
        let mut out = Vec::new();
        for set in &file.sets {
            let populations = set_populations(&file, set, &mut skipped)?;
            let (errors, buffers, workloads) = set_axes(&file, set);
            let dims = [
                errors.len(),
                buffers.len(),
                workloads.len(),
                set.clients.len(),
                populations.len(),
            ];
            let cells = ceiling::cells_of(&dims);
            let sampled = ceiling::sample_indices(cells)
                .into_iter()
                .map(|i| {
                    let c = ceiling::coordinates(i, &dims);
                    let p = &populations[c[4]];
                    let (groups, spec) = spec_of(
                        &file,
                        set,
                        p,
                        set.clients[c[3]],
                        buffers[c[1]],
                        workloads[c[2]],
                        errors[c[0]],
                    );
                    let text = serde_json::to_string(&(&groups, &spec)).map_or(0, |t| t.len());
                    SampledCell {
                        stored: super::super::cost::stored_bytes(&spec),
                        cost: super::super::cost::run_cost(&spec),
                        cell: ceiling::cell_bytes(text, set.replications),
                    }
                })
                .collect();
            out.push(SetSample {
                cells,
                replications: set.replications,
                sampled,
            });
        }
        Ok(out)
    };
    sample().map_err(|e| anyhow!("{origin}: {e:#}"))
}

fn expand(file: DumbbellCampaignFile, text: &str, origin: &str) -> Result<DumbbellPlan> {
    sets::check_campaign(&file.name, file.sets.len())?;
    let mut skipped: Vec<Skipped> = Vec::new();
    let mut cells = Vec::new();
    for set in &file.sets {
        let populations = set_populations(&file, set, &mut skipped)?;
        let (errors, buffers, workloads) = set_axes(&file, set);
        for &e in &errors {
            for &b in &buffers {
                for &w in &workloads {
                    for &n in &set.clients {
                        for p in &populations {
                            cells.push(cell(&file, set, p, n, b, w, e)?);
                        }
                    }
                }
            }
        }
    }
    let mut seen = BTreeSet::new();
    for c in &cells {
        let coord = (
            c.set.as_str(),
            c.clients,
            c.buffer.label(),
            c.workload.name(),
            c.errors.name(),
            c.population.as_str(),
        );
        if !seen.insert(coord) {
            bail!(
                "set `{}` lists {} clients, buffer {}, {} workload, errors {} twice",
                c.set,
                c.clients,
                c.buffer.label(),
                c.workload.name(),
                c.errors.name()
            );
        }
    }
    let cell_texts: Vec<String> = cells
        .iter()
        .map(|c| serde_json::to_string(c).expect("a cell serialises"))
        .collect();
    let definition = digest(
        ["coapcc-campaign", MODEL_VERSION, file.name.as_str()]
            .into_iter()
            .chain(cell_texts.iter().map(String::as_str)),
    );
    Ok(DumbbellPlan {
        file,
        text: text.to_string(),
        source: origin.to_string(),
        cells,
        skipped,
        definition,
    })
}

/// The groups and run spec of population `p` at one point of a set's
/// matrix (not validated).
fn spec_of(
    file: &DumbbellCampaignFile,
    set: &super::file::SetFile,
    p: &Population,
    clients: u32,
    buffer: Buffer,
    workload: WorkloadKind,
    errors: ErrorProfile,
) -> (Vec<GroupInfo>, RunSpec) {
    let shares: Vec<u32> = p.members.iter().map(|m| m.1).collect();
    let counts = split(clients, &shares);
    let mut network = file.network.clone();
    network.buffer = buffer;
    network.errors = errors;
    let mut wl = file.workload.with_kind(workload);
    wl.exchanges = set.exchanges.unwrap_or(wl.exchanges);
    let mut coap = file.coap.clone();
    coap.nstart = set.nstart.unwrap_or(coap.nstart);
    let groups: Vec<GroupInfo> = p
        .members
        .iter()
        .zip(&counts)
        .map(|((a, _), &n)| GroupInfo {
            label: if p.mixed {
                format!("{}: {}", p.label, a.label())
            } else {
                a.label().to_string()
            },
            algorithm: a.clone(),
            clients: n,
        })
        .collect();
    let spec = RunSpec {
        network,
        coap,
        groups: groups
            .iter()
            .map(|g| Group {
                algorithm: g.algorithm.clone(),
                workload: wl.clone(),
                clients: g.clients,
            })
            .collect(),
        seed: file.seed,
    };
    (groups, spec)
}

fn cell(
    file: &DumbbellCampaignFile,
    set: &super::file::SetFile,
    p: &Population,
    clients: u32,
    buffer: Buffer,
    workload: WorkloadKind,
    errors: ErrorProfile,
) -> Result<DumbbellCell> {
    let shares: Vec<u32> = p.members.iter().map(|m| m.1).collect();
    let counts = split(clients, &shares);
    if counts.contains(&0) {
        bail!(
            "set `{}`: mixed `{}` cannot split {clients} clients between {} algorithms; \
             use client counts of at least {} in a set of its own",
            set.name,
            p.label,
            p.members.len(),
            p.members.len()
        );
    }
    let (groups, spec) = spec_of(file, set, p, clients, buffer, workload, errors);
    coapcc_sim::dumbbell::validate(&spec).map_err(|e| {
        anyhow!(
            "set `{}`, {} ({clients} clients, buffer {}, {}, errors {}): {e}",
            set.name,
            p.label,
            buffer.label(),
            workload.name(),
            errors.name()
        )
    })?;
    let keys = run_keys(&spec, set.replications);
    Ok(DumbbellCell {
        set: set.name.clone(),
        clients,
        buffer,
        workload,
        errors,
        population: p.label.clone(),
        mixed: p.mixed,
        groups,
        spec,
        keys,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = r#"
        name = "t"
        seed = 7
        algorithms = ["default", { name = "default", label = "default-cap30", cap = 30 }]
        [workload]
        exchanges = 5
        [[set]]
        name = "a"
        clients = [2, 5]
        buffers = [2500, "inf"]
        workloads = ["continuous", "random"]
        replications = 3
        mixed = [{ label = "mix", of = ["default", { name = "default", label = "d30", cap = 30 }], shares = [1, 2] }]
        [[set]]
        name = "b"
        clients = [10]
        errors = ["low", "high"]
        replications = 4
    "#;

    #[test]
    fn split_follows_the_largest_remainder() {
        assert_eq!(split(10, &[1, 1]), [5, 5]);
        assert_eq!(split(5, &[1, 1]), [3, 2]);
        assert_eq!(split(5, &[1, 2]), [2, 3]);
        assert_eq!(split(7, &[1, 1, 1]), [3, 2, 2]);
        assert_eq!(split(1, &[1, 1]), [1, 0]);
        assert_eq!(split(400, &[1, 1]), [200, 200]);
    }

    #[test]
    fn the_matrix_expands_in_order() {
        let p = parse(BASE, "t.toml").unwrap();
        // set a: 2 clients × 2 buffers × 2 workloads × 3 populations; set b: 2 errors × 2.
        assert_eq!(p.cells.len(), 2 * 2 * 2 * 3 + 2 * 2);
        assert_eq!(p.runs(), 24 * 3 + 4 * 4);
        assert_eq!(p.distinct_keys().len(), p.runs());
        let c = &p.cells[0];
        assert_eq!(
            (
                c.set.as_str(),
                c.clients,
                c.buffer,
                c.workload,
                c.population.as_str()
            ),
            (
                "a",
                2,
                Buffer::Bytes(2500),
                WorkloadKind::Continuous,
                "default"
            )
        );
        assert_eq!(c.spec.seed, 7);
        assert_eq!(c.spec.groups[0].workload.exchanges, 5);
        assert_eq!(c.spec.groups[0].algorithm.cap, Some(60.0));
        let mix = &p.cells[2];
        assert!(mix.mixed);
        assert_eq!(
            mix.groups
                .iter()
                .map(|g| (g.label.as_str(), g.clients))
                .collect::<Vec<_>>(),
            [("mix: default", 1), ("mix: d30", 1)]
        );
        let mix5 = &p.cells[5];
        assert_eq!((mix5.clients, mix5.groups[1].clients), (5, 3));
        let b = &p.cells[24];
        assert_eq!(
            (b.set.as_str(), b.errors, b.buffer),
            ("b", ErrorProfile::Low, Buffer::Infinite)
        );
        assert_eq!(b.keys.len(), 4);
        assert_eq!(p.cells[25].population, "default-cap30");
        assert_eq!(p.cells.last().unwrap().errors, ErrorProfile::High);
    }

    #[test]
    fn each_cell_keeps_its_own_kinds_settings_and_its_sets_overrides() {
        let text = r#"
            name = "w"
            algorithms = ["cocoa"]
            [workload]
            period = 2.0
            block_size = 64
            [[set]]
            name = "o"
            workloads = ["observe", "blockwise", "continuous"]
            exchanges = 7
            clients = [3]
            replications = 1
            [[set]]
            name = "n"
            nstart = 4
            clients = [3]
            replications = 1
        "#;
        let p = parse(text, "w.toml").unwrap();
        let w = |i: usize| &p.cells[i].spec.groups[0].workload;
        assert_eq!(
            (w(0).kind, w(0).period, w(0).block_size),
            (WorkloadKind::Observe, Some(2.0), None)
        );
        assert_eq!(
            (w(1).kind, w(1).period, w(1).block_size),
            (WorkloadKind::Blockwise, None, Some(64))
        );
        assert_eq!(
            (w(2).period, w(2).block_size, w(2).exchanges),
            (None, None, 7)
        );
        assert_eq!(p.cells[2].spec.coap.nstart, 1);
        // Set n: the file's workload (continuous) with its default exchanges, NSTART 4.
        assert_eq!((w(3).exchanges, p.cells[3].spec.coap.nstart), (50, 4));
        let e = parse(&text.replace("nstart = 4", "nstart = 40"), "w.toml").unwrap_err();
        assert!(format!("{e:#}").contains("coap.nstart"), "{e:#}");
    }

    #[test]
    fn the_definition_ignores_comments_and_follows_parameters() {
        let a = parse(BASE, "t").unwrap().definition;
        let commented = format!("# a comment\n{BASE}");
        assert_eq!(a, parse(&commented, "t").unwrap().definition);
        let more = BASE.replace("replications = 4", "replications = 5");
        let b = parse(&more, "t").unwrap();
        assert_ne!(a, b.definition);
        let old = parse(BASE, "t").unwrap();
        // The first 4 replications of set b keep their keys: they are reused.
        assert!(old.distinct_keys().is_subset(&b.distinct_keys()));
        let seed = BASE.replace("seed = 7", "seed = 8");
        let c = parse(&seed, "t").unwrap();
        assert!(old.distinct_keys().is_disjoint(&c.distinct_keys()));
    }

    #[test]
    fn unavailable_algorithms_fail_unless_skipped() {
        let text = BASE.replace("algorithms = [", "algorithms = [\"no-such-algorithm\", ");
        let e = format!("{:#}", parse(&text, "t.toml").unwrap_err());
        assert!(
            e.contains("t.toml") && e.contains("`no-such-algorithm` is not available"),
            "{e}"
        );
        assert!(e.contains("skip_unavailable"), "{e}");
        let listed = format!("skip_unavailable = [\"no-such-algorithm\"]\n{text}");
        let p = parse(&listed, "t").unwrap();
        assert_eq!(p.skipped.len(), 1);
        assert_eq!(p.skipped[0].name, "no-such-algorithm");
        assert!(p.cells.iter().all(|c| c.population != "no-such-algorithm"));
        assert_eq!(p.cells.len(), 28);
        let other = format!("skip_unavailable = [\"tcp\"]\n{text}");
        assert!(parse(&other, "t").is_err());
        let all = format!("skip_unavailable = true\n{text}");
        assert_eq!(parse(&all, "t").unwrap().skipped.len(), 1);
    }

    #[test]
    fn bad_parameters_of_an_available_algorithm_always_fail() {
        let text = format!(
            "skip_unavailable = true\n{}",
            BASE.replace(
                "cap = 30 }]\n        [workload]",
                "cap = 30, first_sample = \"sometimes\" }]\n        [workload]"
            )
        );
        let e = format!("{:#}", parse(&text, "t").unwrap_err());
        assert!(e.contains("first_sample"), "{e}");
    }

    #[test]
    fn mixed_populations_need_enough_clients() {
        let text = BASE.replace("clients = [2, 5]", "clients = [1, 5]");
        let e = format!("{:#}", parse(&text, "t").unwrap_err());
        assert!(e.contains("mixed `mix` cannot split 1 clients"), "{e}");
    }

    #[test]
    fn the_campaign_name_and_replications_are_checked() {
        let text = BASE.replacen("name = \"t\"", "name = \" \"", 1);
        let e = format!("{:#}", parse(&text, "t.toml").unwrap_err());
        assert_eq!(e, "t.toml: name: expected a non-empty campaign name");
        let text = BASE.replace("replications = 4", "replications = 0");
        let e = format!("{:#}", parse(&text, "t.toml").unwrap_err());
        assert_eq!(
            e,
            "t.toml: set `b`: replications: expected 1 to 10000, found 0"
        );
    }

    #[test]
    fn duplicate_labels_are_refused() {
        let text = BASE.replace("label = \"default-cap30\", ", "");
        let e = format!("{:#}", parse(&text, "t").unwrap_err());
        assert!(e.contains("`default` is listed twice"), "{e}");
    }
}
