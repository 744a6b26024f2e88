//! `coapcc`: congestion control for CoAP — run the testbed, list the algorithms.

fn main() -> std::process::ExitCode {
    coapcc::cli::main()
}
