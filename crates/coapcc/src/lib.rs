//! The coapcc command-line front: scenario files, running them, printing the
//! published metrics, and comparing them with the published figures.
#![forbid(unsafe_code)]

pub mod api;
pub mod bench;
pub mod budget;
pub mod calibrate;
pub mod campaign;
pub mod cost;
pub mod duration;
pub mod grid_output;
pub mod ip_cli;
pub mod kernel_check;
pub mod net_cli;
pub mod output;
pub mod pcap;
pub mod published;
pub mod report;
pub mod run_progress;
pub mod scenario_file;
pub mod star_output;
pub mod stdout;
pub mod store;
pub mod tcp_cli;
