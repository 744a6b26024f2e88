//! What the networks' campaign files read, check and hash the same way: an
//! algorithm entry, the campaign's and its sets' names, and the definition
//! over the cells.

use std::fmt;

use anyhow::{bail, Result};
use coapcc_sim::AlgorithmSpec;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};

use crate::campaign::{CampaignFile, Plan};
use crate::key::{digest, MODEL_VERSION};

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

/// The seed of a campaign file that gives none.
pub fn default_seed() -> u64 {
    1
}

/// Reads a campaign file's fields from TOML `text`; errors name `origin`.
pub fn from_toml<F: serde::de::DeserializeOwned>(text: &str, origin: &str) -> anyhow::Result<F> {
    toml::from_str(text).map_err(|e| anyhow::anyhow!("{origin}: {e}"))
}

/// Expands the sets of a campaign file whose sets expand to cells each on
/// its own (the grid's and the star's): checks the campaign's and the sets'
/// names (`set_name`) and expands every set with `expand_set`, in order.
pub fn expand_sets<F: CampaignFile, S, C>(
    file: &F,
    sets: &[S],
    set_name: impl Fn(&S) -> &str,
    expand_set: impl Fn(&F, &S) -> Result<Vec<C>>,
) -> Result<Vec<C>> {
    check_campaign(file.name(), sets.len())?;
    let mut cells = Vec::new();
    for (i, set) in sets.iter().enumerate() {
        check_set_name(i, set_name(set), sets[..i].iter().map(&set_name))?;
        cells.extend(expand_set(file, set)?);
    }
    Ok(cells)
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
