//! The command line, as a library: [`main`] runs `coapcc` with the
//! built-in algorithms, [`main_with`] with a registry of one's own, so that
//! a crate of one's own runs the whole command line with its algorithms
//! beside the published ones (`docs/guides/your-own-algorithm.md`). The
//! modules are its argument types, progress on stderr and printing on
//! stdout, around the rest of the library.

use std::process::ExitCode;

use coapcc_rto::registry::Registry;

pub mod args;
pub mod calibrate;
pub mod campaign;
mod commands;
pub mod emulated;
pub mod emulators;
pub mod ip;
pub mod net;
pub mod observe;
pub mod progress;
pub mod report;
pub mod stdout;
pub mod tcp;

/// Runs `coapcc` on this process's arguments with the built-in algorithms.
/// An error is printed on stderr and exits with status 2.
pub fn main() -> ExitCode {
    exit_code(run())
}

/// The command, an algorithm's fault ([`coapcc_rto::fault`]) anywhere in
/// it (a simulated run, a real client) being its error.
fn run() -> anyhow::Result<()> {
    coapcc_rto::fault::catch(commands::run)?
}

/// Runs `coapcc` on this process's arguments with the algorithms of
/// `registry` (the built-ins and those registered beside them): scenario
/// files, `--algorithms`, campaigns, `coapcc algorithms`, `client --cc`,
/// `load --cc` and `server --notify-cc` name them all. The registry is
/// installed as the process's first (`coapcc_workload::algorithm::install`);
/// a registry that cannot be, or an error of the command, is printed on
/// stderr and exits with status 2.
pub fn main_with(registry: Registry) -> ExitCode {
    let installed = coapcc_workload::algorithm::install(registry).map_err(anyhow::Error::msg);
    exit_code(installed.and_then(|()| run()))
}

/// The exit status of a command's outcome, its error printed.
fn exit_code(outcome: anyhow::Result<()>) -> ExitCode {
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}
