//! The coapcc lab: scenario files, running them, campaigns into a results
//! store, reports, and comparing them with the published figures — the
//! library behind the `coapcc` command line ([`cli`]; a crate of one's own
//! runs it with its own algorithms through [`main_with`]) and the Python
//! package (`crates/coapcc-py`).
//!
//! Each network's part is a folder of [`networks`]; the rest names no
//! network.
#![forbid(unsafe_code)]

pub mod api;
pub mod bench;
pub mod budget;
pub mod calibrate;
pub mod campaign;
pub mod cli;
pub mod cost;
pub mod duration;
pub mod emulate;
pub mod kernel_check;
pub mod key;
pub mod networks;
pub mod pcap;
pub mod published;
pub mod report;
pub mod scenario_file;
pub mod store;

pub use cli::main_with;
