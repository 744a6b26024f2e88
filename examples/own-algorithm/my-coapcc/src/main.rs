//! `my-coapcc`: the whole `coapcc` command line, with `my-rto` beside the
//! published algorithms.

use std::process::ExitCode;

use coapcc_rto::registry::Registry;

fn main() -> ExitCode {
    match Registry::builtin().with(my_rto::algorithm()) {
        Ok(registry) => coapcc::main_with(registry),
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
