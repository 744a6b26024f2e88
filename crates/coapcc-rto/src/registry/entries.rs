//! A registry value: the built-ins and the algorithms registered beside them.
//!
//! Registered entries live as long as the process: registering one leaks
//! its name, texts and builder once (a few hundred bytes), so that every
//! entry is a `&'static AlgorithmInfo` like the built-ins and whatever
//! holds one (a client's settings, a scenario) needs no reference count
//! (`docs/decisions/algorithms-choices.md`, "Algorithms registered at run
//! time").

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use super::{AlgorithmInfo, BoxedAlgorithm, Build, ALGORITHMS};
use crate::{AlgorithmParams, ParamError};

/// The longest algorithm name, in bytes.
pub const MAX_NAME: usize = 64;

/// Algorithms by name: the built-ins ([`ALGORITHMS`]) and those registered
/// after them, in order. Cloning one is cheap (a list of references).
#[derive(Clone)]
pub struct Registry {
    entries: Vec<&'static AlgorithmInfo>,
}

impl Default for Registry {
    /// The built-ins.
    fn default() -> Self {
        Registry::builtin()
    }
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.entries.iter().map(|a| a.name))
            .finish()
    }
}

impl Registry {
    /// The built-in algorithms, in the order of the spec.
    pub fn builtin() -> Self {
        Registry {
            entries: ALGORITHMS.iter().collect(),
        }
    }

    /// This registry with `algorithm` added after the others; fails, adding
    /// nothing, if its name is not valid ([`Registry::valid_name`]) or
    /// already taken.
    pub fn with(mut self, algorithm: NewAlgorithm) -> Result<Self, RegistryError> {
        self.register(algorithm)?;
        Ok(self)
    }

    /// Adds `algorithm` after the others and returns its entry; fails,
    /// adding nothing, if its name is not valid ([`Registry::valid_name`])
    /// or already taken.
    pub fn register(
        &mut self,
        algorithm: NewAlgorithm,
    ) -> Result<&'static AlgorithmInfo, RegistryError> {
        Registry::valid_name(&algorithm.name)?;
        if let Some(taken) = self.find(&algorithm.name) {
            return Err(RegistryError::Taken {
                name: algorithm.name,
                builtin: ALGORITHMS.iter().any(|a| core::ptr::eq(a, taken)),
            });
        }
        let entry: &'static AlgorithmInfo = Box::leak(Box::new(algorithm.into_info()));
        self.entries.push(entry);
        Ok(entry)
    }

    /// Checks a name: 1 to [`MAX_NAME`] ASCII letters, digits, `-`, `_` or
    /// `.`, beginning with a letter or a digit (names appear in scenario
    /// files, on command lines, in reports and in file names).
    pub fn valid_name(name: &str) -> Result<(), RegistryError> {
        let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
        let first_ok = name.starts_with(|c: char| c.is_ascii_alphanumeric());
        if name.len() <= MAX_NAME && first_ok && name.chars().all(allowed) {
            Ok(())
        } else {
            Err(RegistryError::InvalidName { name: name.into() })
        }
    }

    /// The algorithm named `name`.
    pub fn find(&self, name: &str) -> Option<&'static AlgorithmInfo> {
        self.entries.iter().copied().find(|a| a.name == name)
    }

    /// Every algorithm, built-ins first, in the order they were added.
    pub fn iter(&self) -> impl Iterator<Item = &'static AlgorithmInfo> + '_ {
        self.entries.iter().copied()
    }

    /// The entries, in order.
    pub(super) fn into_entries(self) -> Vec<&'static AlgorithmInfo> {
        self.entries
    }

    /// The number of algorithms.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there is none (never true of a registry with the built-ins).
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The names, comma-separated, for error messages.
    pub fn names(&self) -> String {
        join_names(self.iter())
    }
}

/// `a, b, c`: the names of `algorithms`.
pub(super) fn join_names(algorithms: impl Iterator<Item = &'static AlgorithmInfo>) -> String {
    let mut s = String::new();
    for (i, a) in algorithms.enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        s.push_str(a.name);
    }
    s
}

/// An algorithm to register: its name, a builder (a function or a closure)
/// and what `coapcc algorithms` shows of it.
pub struct NewAlgorithm {
    name: String,
    summary: String,
    section: String,
    approximate: bool,
    state_bytes: usize,
    build: Box<Build>,
}

impl NewAlgorithm {
    /// The algorithm `name`, whose destinations' state `build` makes from
    /// a scenario's parameters (refusing those it does not take with a
    /// [`ParamError`]). Its summary and section are empty and its state
    /// size 0 until set.
    pub fn new(
        name: impl Into<String>,
        build: impl Fn(&AlgorithmParams) -> Result<BoxedAlgorithm, ParamError> + Send + Sync + 'static,
    ) -> Self {
        NewAlgorithm {
            name: name.into(),
            summary: String::new(),
            section: String::new(),
            approximate: false,
            state_bytes: 0,
            build: Box::new(build),
        }
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// One line saying what it is.
    pub fn summary(mut self, summary: impl Into<String>) -> Self {
        self.summary = summary.into();
        self
    }

    /// Where it is described (a paper's section, a file, an address).
    pub fn section(mut self, section: impl Into<String>) -> Self {
        self.section = section.into();
        self
    }

    /// Size in bytes of one destination's state (`core::mem::size_of` of
    /// the algorithm's type).
    pub fn state_bytes(mut self, bytes: usize) -> Self {
        self.state_bytes = bytes;
        self
    }

    /// Whether some of its constants are guesses where its source is silent.
    pub fn approximate(mut self, approximate: bool) -> Self {
        self.approximate = approximate;
        self
    }

    /// The entry, its strings and builder made to last as long as the
    /// process.
    fn into_info(self) -> AlgorithmInfo {
        AlgorithmInfo {
            name: String::leak(self.name),
            summary: String::leak(self.summary),
            section: String::leak(self.section),
            approximate: self.approximate,
            build: Box::leak(self.build),
            state_bytes: self.state_bytes,
        }
    }
}

impl fmt::Debug for NewAlgorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NewAlgorithm")
            .field("name", &self.name)
            .field("section", &self.section)
            .finish_non_exhaustive()
    }
}

/// Why an algorithm was not registered, or a registry not installed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RegistryError {
    /// The name is empty, too long or has characters a name may not have.
    InvalidName {
        /// The name given.
        name: String,
    },
    /// An algorithm of that name is already there.
    Taken {
        /// The name given.
        name: String,
        /// Whether it is a built-in's name.
        builtin: bool,
    },
    /// The process's registry was installed already, or read by a lookup
    /// before [`super::install`] was called.
    AlreadyInstalled,
}

impl fmt::Display for RegistryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegistryError::InvalidName { name } => write!(
                f,
                "algorithm name {name:?}: expected 1 to {MAX_NAME} ASCII letters, digits, \
                 `-`, `_` or `.`, beginning with a letter or a digit"
            ),
            RegistryError::Taken { name, builtin } => write!(
                f,
                "algorithm `{name}`: the name is taken by {}",
                if *builtin {
                    "a built-in algorithm"
                } else {
                    "an algorithm registered before"
                }
            ),
            RegistryError::AlreadyInstalled => f.write_str(
                "the algorithm registry is already installed or in use: install it once, \
                 before any algorithm is looked up",
            ),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for RegistryError {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::default::DefaultCoap;
    use alloc::string::ToString;

    fn default_named(name: &str) -> NewAlgorithm {
        NewAlgorithm::new(name, |p| {
            Ok(Box::new(DefaultCoap::from_params("mine", p)?) as BoxedAlgorithm)
        })
    }

    #[test]
    fn registered_algorithms_come_after_the_builtins_and_build() {
        let r = Registry::builtin()
            .with(
                default_named("mine")
                    .summary("one line")
                    .section("a paper §2"),
            )
            .unwrap();
        assert_eq!(r.len(), ALGORITHMS.len() + 1);
        let a = r.find("mine").unwrap();
        assert_eq!(
            (a.name, a.summary, a.section),
            ("mine", "one line", "a paper §2")
        );
        assert!((a.build)(&AlgorithmParams::default()).is_ok());
        assert!(r.names().ends_with(", fasor-option, mine"));
        assert!(Registry::builtin().find("mine").is_none());
    }

    #[test]
    fn a_builder_may_capture() {
        let cap = 7.0;
        let r = Registry::builtin()
            .with(NewAlgorithm::new("capped", move |p| {
                let p = AlgorithmParams {
                    cap: Some(cap),
                    ..*p
                };
                Ok(Box::new(DefaultCoap::from_params("capped", &p)?) as BoxedAlgorithm)
            }))
            .unwrap();
        assert!((r.find("capped").unwrap().build)(&AlgorithmParams::default()).is_ok());
    }

    #[test]
    fn taken_and_invalid_names_are_refused_and_nothing_is_added() {
        let mut r = Registry::builtin();
        let e = r.register(default_named("cocoa")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "algorithm `cocoa`: the name is taken by a built-in algorithm"
        );
        r.register(default_named("mine")).unwrap();
        let e = r.register(default_named("mine")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "algorithm `mine`: the name is taken by an algorithm registered before"
        );
        let long = "a".repeat(MAX_NAME + 1);
        for bad in [
            "", " mine", "-mine", "my rto", "my/rto", "mïne", "a,b", &long,
        ] {
            let e = r.register(default_named(bad)).unwrap_err();
            assert_eq!(e, RegistryError::InvalidName { name: bad.into() });
        }
        assert_eq!(
            RegistryError::InvalidName { name: "".into() }.to_string(),
            "algorithm name \"\": expected 1 to 64 ASCII letters, digits, `-`, `_` or `.`, \
             beginning with a letter or a digit"
        );
        assert!(Registry::valid_name(&"a".repeat(MAX_NAME)).is_ok());
        assert_eq!(r.len(), ALGORITHMS.len() + 1);
    }
}
