//! The integration tests of `coapcc`, one module per file, in one
//! test binary (one binary links once: building many took most of a fresh
//! `cargo test`). Run one module with `cargo test -p coapcc --test suite <module>::`.

mod campaign_support;
mod net_support;

mod bench_cli;
mod calibration_doc;
mod campaign;
mod cli;
mod fuzz_scenarios;
mod grid_campaign;
mod hardening;
mod identical_output;
mod interop;
mod interop_block;
mod interop_observe;
mod interop_tcp;
mod kernel_check;
mod lorawan_campaign;
mod net_cli;
mod net_emulate;
mod net_emulate_grid;
mod net_ip;
mod pcap;
mod pcap_grid;
mod security_doc;
mod sensitivity;
mod star_campaign;
mod workloads_campaign;
