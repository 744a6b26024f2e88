//! What the networks' campaign files read, check and hash the same way: the
//! fields every campaign file has (`campaign_file!`), an algorithm entry,
//! the campaign's and its sets' names, a sweep's points and cells (the grid's
//! and the star's), and the definition over the cells.

use std::fmt;
use std::marker::PhantomData;

use anyhow::{anyhow, bail, Result};
use coapcc_sim::spec_error::SpecError;
use coapcc_sim::AlgorithmSpec;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};

use crate::campaign::{ceiling, CampaignFile, Plan};
use crate::key::{digest, run_keys, MODEL_VERSION};

/// Checks a campaign's name and that it has sets.
pub fn check_campaign(name: &str, sets: usize) -> Result<()> {
    if name.trim().is_empty() {
        bail!("name: expected a non-empty campaign name");
    }
    if sets == 0 {
        bail!("set: expected at least one [[set]]");
    }
    Ok(())
}

/// Checks the name of set `i` (from 0) against the sets before it.
pub fn check_set_name<'a>(
    i: usize,
    name: &str,
    earlier: impl IntoIterator<Item = &'a str>,
) -> Result<()> {
    if name.trim().is_empty() {
        bail!("set {}: name: expected a non-empty set name", i + 1);
    }
    if earlier.into_iter().any(|e| e == name) {
        bail!("set `{name}`: name: listed twice; give each set its own name");
    }
    Ok(())
}

/// Checks a set's replication count against the bound every campaign and
/// scenario shares ([`crate::budget::MAX_REPLICATIONS`]).
pub fn check_replications(replications: u32) -> Result<()> {
    let max = crate::budget::MAX_REPLICATIONS;
    if !(1..=max).contains(&replications) {
        bail!("replications: expected 1 to {max}, found {replications}");
    }
    Ok(())
}

/// Checks the points of a set's sweep, written in its field `field`: at
/// least one (else `expected at least one {one}`), each as `valid` wants
/// (else `expected {expected}, found …`), none listed twice.
pub fn check_sweep<P: Copy + PartialEq + fmt::Display>(
    field: &str,
    points: &[P],
    one: &str,
    valid: impl Fn(P) -> bool,
    expected: &str,
) -> Result<()> {
    if points.is_empty() {
        bail!("{field}: expected at least one {one}");
    }
    for (i, &p) in points.iter().enumerate() {
        if !valid(p) {
            bail!("{field}: expected {expected}, found {p}");
        }
        if points[..i].contains(&p) {
            bail!("{field}: {p} is listed twice");
        }
    }
    Ok(())
}

/// The cells of a set's sweep: at each of its `points` in order, one cell
/// per algorithm of `algorithms` in order. `run` gives an algorithm's run at
/// a point, which `validate` checks (its error is prefixed with the
/// algorithm's label and the point as `point_text` writes it); `cell` makes
/// the cell of a point from the algorithm's label, the run and the run's
/// keys for `replications`.
pub fn sweep_cells<F, P: Copy, S: Serialize, C>(
    points: &[P],
    algorithms: &[AlgorithmEntry<F>],
    replications: u32,
    point_text: impl Fn(P) -> String,
    run: impl Fn(P, &AlgorithmSpec) -> S,
    validate: impl Fn(&S) -> Result<(), SpecError>,
    cell: impl Fn(P, String, S, Vec<String>) -> C,
) -> Result<Vec<C>> {
    let mut cells = Vec::new();
    for &point in points {
        for a in algorithms {
            let spec = run(point, &a.0);
            validate(&spec).map_err(|e| anyhow!("{}, {}: {e}", a.0.label(), point_text(point)))?;
            let keys = run_keys(&spec, replications);
            cells.push(cell(point, a.0.label().to_string(), spec, keys));
        }
    }
    Ok(cells)
}

/// Counts and samples the cells of a set's sweep as [`sweep_cells`] would
/// expand them (points × algorithms), without expanding it: `run` gives an
/// algorithm's run at a point, `measure` its cost and stored bytes
/// ([`crate::campaign::ceiling`]).
pub fn sample_sweep<F, P: Copy, S: Serialize>(
    points: &[P],
    algorithms: &[AlgorithmEntry<F>],
    replications: u32,
    run: impl Fn(P, &AlgorithmSpec) -> S,
    measure: impl Fn(&S) -> (crate::cost::RunCost, u64),
) -> ceiling::SetSample {
    let dims = [points.len(), algorithms.len()];
    let cells = ceiling::cells_of(&dims);
    let sampled = ceiling::sample_indices(cells)
        .into_iter()
        .map(|i| {
            let c = ceiling::coordinates(i, &dims);
            let spec = run(points[c[0]], &algorithms[c[1]].0);
            let (cost, stored) = measure(&spec);
            let text = serde_json::to_string(&spec).map_or(0, |t| t.len());
            ceiling::SampledCell {
                cost,
                stored,
                cell: ceiling::cell_bytes(text, replications),
            }
        })
        .collect();
    ceiling::SetSample {
        cells,
        replications,
        sampled,
    }
}

/// Counts and samples a campaign file whose sets each expand on their own
/// (the grid's and the star's), as [`expand_sets`] would expand it: checks
/// the campaign's and the sets' names, and samples each set with
/// `sample_set` (whose errors are prefixed with the set's name). Errors
/// name `origin`.
pub fn sample_sets<F: CampaignFile>(
    file: &F,
    origin: &str,
    sample_set: impl Fn(&F, &F::Set) -> Result<ceiling::SetSample>,
) -> Result<Vec<ceiling::SetSample>> {
    let sample = || -> Result<Vec<ceiling::SetSample>> {
        let sets = file.sets();
        check_campaign(file.name(), sets.len())?;
        let mut out = Vec::new();
        for (i, set) in sets.iter().enumerate() {
            let name = F::set_name(set);
            check_set_name(i, name, sets[..i].iter().map(F::set_name))?;
            out.push(sample_set(file, set).map_err(|e| anyhow!("set `{name}`: {e:#}"))?);
        }
        Ok(out)
    };
    sample().map_err(|e| anyhow!("{origin}: {e:#}"))
}

/// The seed of a campaign file that gives none.
pub fn default_seed() -> u64 {
    1
}

/// Declares a network's campaign file as written and implements
/// [`CampaignFile`] for it. The struct has, in this order (the order of the
/// fields in errors): the `name`, `title`, `description` and `seed` every
/// campaign file has, the network's own fields given in the braces, the
/// `algorithms` (of the entry type given, documented with the doc comment
/// given), the network's fields given after them, and the `set`s (of the set
/// type given); it denies unknown fields. `named` and `entry` are the
/// network's [`CampaignFile::NAMED`] and [`CampaignFile::ENTRY`].
///
/// Why a macro: the shared fields cannot come from a shared struct through
/// `#[serde(flatten)]`, because serde does not support `deny_unknown_fields`
/// together with `flatten`, and a misspelt field must be refused by name.
macro_rules! campaign_file {
    (
        $(#[$attr:meta])*
        pub struct $name:ident {
            $($fields:tt)*
        }
        $(#[doc = $algorithms_doc:literal])+
        algorithms: $entry:ty,
        $($(#[$after_attr:meta])* pub $after:ident: $after_ty:ty,)*
        sets: $set:ty,
        named: $named:expr,
        entry: $expecting:literal $(,)?
    ) => {
        $(#[$attr])*
        #[derive(Clone, Debug, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            /// A short name; names the campaign in the store and reports.
            pub name: String,
            /// The published work it reproduces (title, authors, venue).
            #[serde(default)]
            pub title: String,
            /// What it runs, in a sentence or two.
            #[serde(default)]
            pub description: String,
            /// The seed of every run; each replication derives its own.
            #[serde(default = "crate::campaign::sets::default_seed")]
            pub seed: u64,
            $($fields)*
            $(#[doc = $algorithms_doc])+
            #[serde(default)]
            pub algorithms: Vec<$entry>,
            $($(#[$after_attr])* pub $after: $after_ty,)*
            /// The sets (at least one).
            #[serde(rename = "set")]
            pub sets: Vec<$set>,
        }

        impl crate::campaign::CampaignFile for $name {
            const NAMED: fn(&str) -> coapcc_sim::AlgorithmSpec = $named;
            const ENTRY: &'static str = $expecting;

            type Set = $set;

            fn about(&self) -> (&str, &str, &str) {
                (&self.name, &self.title, &self.description)
            }

            fn sets(&self) -> &[$set] {
                &self.sets
            }

            fn set_name(set: &$set) -> &str {
                &set.name
            }
        }
    };
}
pub(crate) use campaign_file;

/// Reads a campaign file's fields from TOML `text`; errors name `origin`.
pub fn from_toml<F: serde::de::DeserializeOwned>(text: &str, origin: &str) -> anyhow::Result<F> {
    toml::from_str(text).map_err(|e| crate::scenario_file::toml_error(origin, text, &e))
}

/// Expands a campaign file whose sets each expand to cells on their own
/// (the grid's and the star's) into its plan: checks the campaign's name and
/// the sets' names, expands the sets in order with `expand_set` (whose
/// errors are prefixed with the set's name), and hashes the cells under the
/// network's `marker` ([`plan`]). Errors name `origin`.
pub fn expand_sets<F: CampaignFile, C: Serialize>(
    file: F,
    text: &str,
    origin: &str,
    marker: &str,
    expand_set: impl Fn(&F, &F::Set) -> Result<Vec<C>>,
) -> Result<Plan<F, C>> {
    let expand = || -> Result<Vec<C>> {
        let sets = file.sets();
        check_campaign(file.name(), sets.len())?;
        let mut cells = Vec::new();
        for (i, set) in sets.iter().enumerate() {
            let name = F::set_name(set);
            check_set_name(i, name, sets[..i].iter().map(F::set_name))?;
            cells.extend(expand_set(&file, set).map_err(|e| anyhow!("set `{name}`: {e:#}"))?);
        }
        Ok(cells)
    };
    let cells = expand().map_err(|e| anyhow!("{origin}: {e:#}"))?;
    Ok(plan(file, text, origin, marker, cells))
}

/// The algorithms of a set: its `own`, or else the `campaign`'s, checked
/// ([`check_algorithms`], `what` as there).
pub fn set_algorithms<'a, F>(
    own: Option<&'a [AlgorithmEntry<F>]>,
    campaign: &'a [AlgorithmEntry<F>],
    what: &str,
) -> Result<&'a [AlgorithmEntry<F>]> {
    let algorithms = own.unwrap_or(campaign);
    let specs: Vec<&AlgorithmSpec> = algorithms.iter().map(|a| &a.0).collect();
    check_algorithms(&specs, what).map_err(|e| anyhow!(e))?;
    Ok(algorithms)
}

/// The plan of `file` (read from `text`, named `origin`) with its `cells`
/// and nothing skipped; its definition hashes the cells under the network's
/// `marker`.
pub fn plan<F: CampaignFile, C: Serialize>(
    file: F,
    text: &str,
    origin: &str,
    marker: &str,
    cells: Vec<C>,
) -> Plan<F, C> {
    let definition = definition(marker, file.name(), &cells);
    Plan {
        file,
        text: text.to_string(),
        source: origin.to_string(),
        cells,
        skipped: Vec::new(),
        definition,
    }
}

/// Checks a set's algorithms: at least one (`what`: `algorithm`, `TCP
/// flavour`, …) and no label twice. The error is the set's message.
pub fn check_algorithms(algorithms: &[&AlgorithmSpec], what: &str) -> Result<(), String> {
    if algorithms.is_empty() {
        return Err(format!(
            "algorithms: expected at least one {what} (in the set or the campaign)"
        ));
    }
    for (i, a) in algorithms.iter().enumerate() {
        if algorithms[..i].iter().any(|b| b.label() == a.label()) {
            return Err(format!(
                "algorithm `{}` is listed twice; give one a distinct `label`",
                a.label()
            ));
        }
    }
    Ok(())
}

/// The definition of a campaign: SHA-256 over its network's `marker`, the
/// model version, the campaign's name and every cell as JSON.
pub fn definition<C: Serialize>(marker: &str, name: &str, cells: &[C]) -> String {
    let cell_texts: Vec<String> = cells
        .iter()
        .map(|c| serde_json::to_string(c).expect("a cell serialises"))
        .collect();
    digest(
        [marker, MODEL_VERSION, name]
            .into_iter()
            .chain(cell_texts.iter().map(String::as_str)),
    )
}

/// An algorithm entry of `F`'s campaign files: a registry name, with `F`'s
/// published settings of that name ([`CampaignFile::NAMED`]), or a table with
/// explicit parameters (spec defaults for the rest).
pub struct AlgorithmEntry<F>(pub AlgorithmSpec, PhantomData<fn() -> F>);

impl<F> Clone for AlgorithmEntry<F> {
    fn clone(&self) -> Self {
        AlgorithmEntry(self.0.clone(), PhantomData)
    }
}

impl<F> fmt::Debug for AlgorithmEntry<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("AlgorithmEntry").field(&self.0).finish()
    }
}

impl<F> PartialEq for AlgorithmEntry<F> {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

impl<'de, F: CampaignFile> Deserialize<'de> for AlgorithmEntry<F> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        algorithm_entry(d, F::NAMED, F::ENTRY).map(|spec| AlgorithmEntry(spec, PhantomData))
    }
}

/// Reads an algorithm entry of a campaign file: a registry name, whose spec
/// `named` gives (a network's published settings), or a table with explicit
/// parameters (spec defaults for the rest); `expecting` says what is
/// expected in errors.
pub fn algorithm_entry<'de, D: Deserializer<'de>>(
    d: D,
    named: fn(&str) -> AlgorithmSpec,
    expecting: &'static str,
) -> std::result::Result<AlgorithmSpec, D::Error> {
    struct V {
        named: fn(&str) -> AlgorithmSpec,
        expecting: &'static str,
    }
    impl<'de> Visitor<'de> for V {
        type Value = AlgorithmSpec;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str(self.expecting)
        }
        fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<AlgorithmSpec, E> {
            Ok((self.named)(v))
        }
        fn visit_map<A: MapAccess<'de>>(
            self,
            map: A,
        ) -> std::result::Result<AlgorithmSpec, A::Error> {
            AlgorithmSpec::deserialize(de::value::MapAccessDeserializer::new(map))
        }
    }
    d.deserialize_any(V { named, expecting })
}

/// Test support shared by the networks' campaign plans.
#[cfg(test)]
pub(crate) mod testing {
    use anyhow::Result;

    use crate::campaign::{CampaignFile, Plan, PlanCell};

    /// Checks that the definition of the campaign `base` (read by `parse`)
    /// ignores comments and follows its parameters: more replications
    /// (`base` holds `replications = 2`) change it and keep the keys there
    /// were; another seed (`base` holds `seed = 9`) changes every key.
    pub(crate) fn assert_definition_ignores_comments_and_follows_parameters<F, C>(
        base: &str,
        parse: fn(&str, &str) -> Result<Plan<F, C>>,
    ) where
        F: CampaignFile,
        C: PlanCell,
    {
        let a = parse(base, "g").unwrap();
        assert_eq!(
            a.definition,
            parse(&format!("# c\n{base}"), "g").unwrap().definition
        );
        let more = parse(&base.replace("replications = 2", "replications = 3"), "g").unwrap();
        assert_ne!(a.definition, more.definition);
        assert!(a.distinct_keys().is_subset(&more.distinct_keys()));
        let reseeded = parse(&base.replace("seed = 9", "seed = 10"), "g").unwrap();
        assert!(a.distinct_keys().is_disjoint(&reseeded.distinct_keys()));
    }

    /// Checks that `parse` refuses the campaign `base` (named `origin`) with,
    /// in each case `(from, to, want)`, the first `from` replaced by `to`:
    /// the error starts with the origin and holds `want`.
    pub(crate) fn assert_refused_with_file_and_field<T>(
        base: &str,
        origin: &str,
        parse: fn(&str, &str) -> Result<T>,
        cases: &[(&str, &str, &str)],
    ) {
        for &(from, to, want) in cases {
            assert!(base.contains(from), "{from}");
            let e = parse(&base.replacen(from, to, 1), origin)
                .err()
                .unwrap_or_else(|| panic!("{from} -> {to}: not refused"));
            let e = format!("{e:#}");
            assert!(e.starts_with(&format!("{origin}: ")), "{e}");
            assert!(e.contains(want), "{want} not in {e}");
        }
    }

    /// Checks that a campaign file `F` names the fields it does not know:
    /// `minimal` (a valid file with a `[network]` table) with each line
    /// `line` of `misspelt` written with the field name `field`, and with a
    /// `clients` field before its `[network]`, is refused with `unknown
    /// field` and the name.
    pub(crate) fn assert_unknown_fields_named<F: serde::de::DeserializeOwned + std::fmt::Debug>(
        minimal: &str,
        misspelt: &[(&str, &str)],
    ) {
        for &(line, field) in misspelt {
            let text = minimal.replace(line, &line.replace(line.split(' ').next().unwrap(), field));
            let e = toml::from_str::<F>(&text).unwrap_err().to_string();
            assert!(e.contains(&format!("unknown field `{field}`")), "{e}");
        }
        let text = minimal.replace("[network]", "clients = 4\n[network]");
        let e = toml::from_str::<F>(&text).unwrap_err().to_string();
        assert!(e.contains("unknown field `clients`"), "{e}");
    }
}
