//! `coapcc emulate`'s side of a network: [`Emulator`], what the command
//! needs of a network (the network to relay through, from the command line
//! and a scenario file; the line printed at start-up; the summary at exit;
//! its words in the help), and [`EmulateOptions`], the network options of the
//! command line. Each network implements [`Emulator`] in its `emulate`
//! module (`networks/<name>/emulate.rs`); the command line reaches it by the
//! network's name and names no network itself.

use std::net::SocketAddr;

use anyhow::{anyhow, Result};
use clap::Args;
use coapcc_link::NodeId;
use coapcc_net::emulate::{DatagramCounts, EmulatedNetwork, EmulatorReport};
use serde::de::DeserializeOwned;
use serde::Deserialize;

/// What `coapcc emulate` needs of a network. Object-safe: the command line
/// holds each network's as `&'static dyn Emulator`.
pub trait Emulator: Sync {
    /// The network `options` describe, built on the `[network]` table of a
    /// scenario file (`file`: its text) if one was given, else on the
    /// network's defaults; `origin` is what errors name as the source (the
    /// file, or `--network <name>`). Options that do not apply to the network
    /// are refused by name.
    fn network(
        &self,
        options: &EmulateOptions,
        file: Option<&str>,
        origin: &str,
    ) -> Result<EmulatedNetwork>;

    /// The line `coapcc emulate` prints when it starts relaying from
    /// `listen` to `server` through `network` (one this emulator built).
    fn startup(&self, listen: SocketAddr, server: SocketAddr, network: &EmulatedNetwork) -> String;

    /// A few lines describing what crossed the relay and what the network
    /// did, ending with `mappings` (the client mappings' line).
    fn summary(&self, report: &EmulatorReport, mappings: &str) -> String;

    /// Its words in `coapcc emulate --help`.
    fn help(&self) -> EmulatorHelp;
}

/// A network's words in `coapcc emulate --help`.
#[derive(Clone, Copy, Debug)]
pub struct EmulatorHelp {
    /// What the network is, in one line (its entry in `--network`'s list of
    /// possible values).
    pub about: &'static str,
    /// `--network`'s words for it, in parentheses after its name.
    pub choice: &'static str,
    /// Its paragraph of the closing text (what happens on it), if any.
    pub notes: Option<&'static str>,
    /// Example command lines.
    pub examples: &'static [&'static str],
}

/// The network options of `coapcc emulate`: each applies to some networks,
/// and the others refuse it by name.
#[derive(Args, Debug, Clone, Default, PartialEq)]
pub struct EmulateOptions {
    /// Dumbbell: uplink (client → server) rate, bit/s [default: 60000].
    #[arg(long, value_name = "BPS")]
    pub uplink_bps: Option<u64>,
    /// Dumbbell: downlink (server → client) rate, bit/s [default: 30000].
    #[arg(long, value_name = "BPS")]
    pub downlink_bps: Option<u64>,
    /// Dumbbell: uplink one-way propagation delay, ms [default: 200].
    #[arg(long, value_name = "MS")]
    pub uplink_delay_ms: Option<f64>,
    /// Dumbbell: downlink one-way propagation delay, ms [default: 400].
    #[arg(long, value_name = "MS")]
    pub downlink_delay_ms: Option<f64>,
    /// Dumbbell: router ↔ server one-way delay, uniform in LO,HI ms per
    /// packet [default: 10,20].
    #[arg(long, value_name = "LO,HI")]
    pub path_delay_ms: Option<String>,
    /// Dumbbell: router buffer per direction, bytes of waiting IP packets, or
    /// `inf` [default: inf].
    #[arg(long, value_name = "BYTES|inf")]
    pub buffer: Option<String>,
    /// Dumbbell: link-error profile, none, low, medium or high [default:
    /// none].
    #[arg(long, value_name = "PROFILE")]
    pub errors: Option<String>,
    /// Dumbbell: speed the link up F times: rates × F, delays ÷ F (link
    /// errors keep their time scale). The grid refuses it: its timings are
    /// radio constants, not link rates.
    #[arg(long, value_name = "F")]
    pub scale: Option<f64>,
    /// Grid: the nodes clients attach to, in the order clients first send
    /// (wrapping around when there are more clients) [default: every node but
    /// the border router and the server, in node order].
    #[arg(long, value_name = "N,N,…", value_delimiter = ',')]
    pub nodes: Vec<NodeId>,
}

/// The `[network]` table of a scenario (or campaign) file; other tables are
/// ignored. A missing table is the network's defaults.
pub fn network_table<T: DeserializeOwned + Default>(text: &str, origin: &str) -> Result<T> {
    #[derive(Deserialize)]
    #[serde(bound = "T: DeserializeOwned")]
    struct File<T> {
        #[serde(default = "Option::default")]
        network: Option<T>,
    }
    let f: File<T> = toml::from_str(text).map_err(|e| anyhow!("{origin}: {e}"))?;
    Ok(f.network.unwrap_or_default())
}

/// A network's parameters: the `[network]` table of the scenario file
/// (`file`, its text) if one was given, else its defaults.
pub fn parameters<T: DeserializeOwned + Default>(file: Option<&str>, origin: &str) -> Result<T> {
    match file {
        Some(text) => network_table(text, origin),
        None => Ok(T::default()),
    }
}

/// The start-up line of a network its emulator does not recognise (not one
/// it built): the addresses and the network's name.
pub fn plain_startup(listen: SocketAddr, server: SocketAddr, network: &EmulatedNetwork) -> String {
    format!(
        "coapcc emulate: {listen} → {server} through the {}",
        network.kind()
    )
}

/// The relay's two directions on a network that names its own drops
/// ("dropped in the grid", `network` being "grid"): one line each, upstream
/// first.
pub fn relay_directions(r: &EmulatorReport, network: &str) -> String {
    let dir = |name: &str, c: &DatagramCounts| {
        format!(
            "{name}: {} datagrams ({} bytes): {} delivered, {} dropped in the {network}, {} refused (too large), {} refused (relay full), {} in flight",
            c.received,
            c.bytes,
            c.delivered,
            c.dropped,
            c.refused_too_large,
            c.refused_full,
            c.in_flight()
        )
    };
    format!(
        "{}\n{}",
        dir("upstream (clients → server)", &r.upstream),
        dir("downstream (server → clients)", &r.downstream)
    )
}
