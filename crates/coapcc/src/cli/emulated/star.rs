//! `coapcc emulate` on the Wi-Fi star: the options it refuses, its start-up
//! line and its summary.

use std::net::SocketAddr;

use anyhow::{anyhow, bail, Result};
use coapcc_link::star;
use coapcc_net::emulate::{EmulatedNetwork, EmulatorReport};

use super::{parameters, relay_directions};
use crate::cli::args::EmulateArgs;

/// The star of `--network star` or of a scenario with `kind = "star"`:
/// refuses the dumbbell's and the grid's options.
pub(super) fn build(args: &EmulateArgs, file: Option<(String, String)>) -> Result<EmulatedNetwork> {
    let others = [
        ("--scale", args.scale.is_some_and(|f| f != 1.0)),
        ("--nodes", !args.nodes.is_empty()),
    ];
    if let Some((flag, _)) = args
        .dumbbell_options()
        .iter()
        .chain(&others)
        .find(|(_, set)| *set)
    {
        bail!(
            "{flag}: does not apply to the Wi-Fi star (its timings are 802.11 constants and its \
             buffers the nodes' queues; set its parameters in a scenario's [network] table with \
             kind = \"star\" and pass it with --scenario)"
        );
    }
    let (config, origin) = parameters::<star::Config>(&file, "star")?;
    config.validate().map_err(|e| anyhow!("{origin}: {e}"))?;
    Ok(EmulatedNetwork::Star(config))
}

/// The line `coapcc emulate` prints when it starts.
pub(super) fn startup(listen: SocketAddr, server: SocketAddr, c: &star::Config) -> String {
    format!(
        "coapcc emulate: {listen} → {server} through the {}-station 802.11 star ({} bit/s, queue {} packets, \
         wired hop {} bit/s); the Nth client on station N (wrapping around)",
        c.stations, c.rate_bps, c.queue, c.wired_bps
    )
}

/// What the relay carried and what the star did.
pub(super) fn summary(r: &EmulatorReport, s: &star::StarRecord, mappings: &str) -> String {
    format!(
        "{}\n\
         star frames: {} data frames ({} delivered, {} collided in {} collisions), {} retries, \
         {:.3} s of airtime; drops: {} after the retry limit, {} at full queues\n{mappings}",
        relay_directions(r, "star"),
        s.data_frames,
        s.delivered_frames,
        s.collided_frames,
        s.collisions,
        s.retries,
        s.busy,
        s.retry_drops,
        s.queue_drops
    )
}
