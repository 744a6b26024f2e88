//! The process's registry (feature `std`): installed once, before anything
//! is looked up; the built-ins when nothing was installed.

use std::sync::OnceLock;

use super::{Registry, RegistryError};

static INSTALLED: OnceLock<Registry> = OnceLock::new();

/// Makes `registry` the one [`super::find`], [`super::names`] and
/// [`super::all`] see for the rest of the process. Fails with
/// [`RegistryError::AlreadyInstalled`] if a registry was installed, or
/// an algorithm looked up (which fixes the built-ins as the registry),
/// before: install first thing in `main`.
pub fn install(registry: Registry) -> Result<(), RegistryError> {
    INSTALLED
        .set(registry)
        .map_err(|_| RegistryError::AlreadyInstalled)
}

/// The process's registry: the one installed, or the built-ins (from then
/// on) if none was.
pub fn installed() -> &'static Registry {
    INSTALLED.get_or_init(Registry::builtin)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_registry_read_once_can_no_longer_be_installed() {
        let before = installed().len();
        assert_eq!(
            install(Registry::builtin()),
            Err(RegistryError::AlreadyInstalled)
        );
        assert_eq!(installed().len(), before);
    }
}
