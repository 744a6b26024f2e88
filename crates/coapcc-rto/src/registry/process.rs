//! The process's registry (feature `std`): installed once, before anything
//! is looked up (the built-ins when nothing was installed), and grown later
//! only by [`register`], for front-ends that learn algorithms while they
//! run (the Python package).

use std::sync::{OnceLock, PoisonError, RwLock};

use super::{AlgorithmInfo, NewAlgorithm, Registry, RegistryError};

static INSTALLED: OnceLock<RwLock<Registry>> = OnceLock::new();

/// Makes `registry` the one [`super::find`], [`super::names`] and
/// [`super::all`] see for the rest of the process. Fails with
/// [`RegistryError::AlreadyInstalled`] if a registry was installed, or
/// an algorithm looked up (which fixes the built-ins as the registry),
/// before: install first thing in `main`.
pub fn install(registry: Registry) -> Result<(), RegistryError> {
    INSTALLED
        .set(RwLock::new(registry))
        .map_err(|_| RegistryError::AlreadyInstalled)
}

/// The process's registry.
fn process() -> &'static RwLock<Registry> {
    INSTALLED.get_or_init(|| RwLock::new(Registry::builtin()))
}

/// The process's registry as it is now: the one installed, or the
/// built-ins (from then on) if none was, with what [`register`] added.
pub fn installed() -> Registry {
    process()
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()
}

/// Looks `name` up in the process's registry.
pub(super) fn find(name: &str) -> Option<&'static AlgorithmInfo> {
    process()
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .find(name)
}

/// Adds `algorithm` to the process's registry, after everything in it, and
/// returns its entry; fails, adding nothing, if its name is not valid or
/// already taken ([`Registry::register`]). Names only ever join: an
/// algorithm found once is found, the same, for the rest of the process.
pub fn register(algorithm: NewAlgorithm) -> Result<&'static AlgorithmInfo, RegistryError> {
    process()
        .write()
        .unwrap_or_else(PoisonError::into_inner)
        .register(algorithm)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::default::DefaultCoap;

    #[test]
    fn a_registry_read_once_can_no_longer_be_installed() {
        let before = installed().len();
        assert_eq!(
            install(Registry::builtin()),
            Err(RegistryError::AlreadyInstalled)
        );
        assert_eq!(installed().len(), before);
    }

    #[test]
    fn registered_algorithms_join_the_process_registry_once() {
        let build = |_: &crate::AlgorithmParams| -> Result<super::super::BoxedAlgorithm, crate::ParamError> {
            Ok(alloc::boxed::Box::new(DefaultCoap::default()))
        };
        assert!(find("late-joiner").is_none());
        let entry = register(NewAlgorithm::new("late-joiner", build)).unwrap();
        assert!(core::ptr::eq(find("late-joiner").unwrap(), entry));
        assert!(super::super::find("late-joiner").is_some());
        assert!(installed().iter().any(|a| a.name == "late-joiner"));
        assert!(matches!(
            register(NewAlgorithm::new("late-joiner", build)),
            Err(RegistryError::Taken { builtin: false, .. })
        ));
        assert!(matches!(
            register(NewAlgorithm::new("cocoa", build)),
            Err(RegistryError::Taken { builtin: true, .. })
        ));
    }
}
