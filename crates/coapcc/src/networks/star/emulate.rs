//! `coapcc emulate` on the Wi-Fi star: the options it refuses, its start-up
//! line, its summary and its help.

use std::net::SocketAddr;

use anyhow::{anyhow, bail, Result};
use coapcc_link::star;
use coapcc_net::emulate::{EmulatedNetwork, EmulatorReport};

use crate::emulate::{
    parameters, plain_startup, relay_directions, EmulateOptions, Emulator, EmulatorHelp,
};
use crate::networks::dumbbell::emulate::link_options;

/// The star's [`Emulator`].
pub struct Emulate;

impl Emulator for Emulate {
    /// The star of `--network star` or of a scenario with `kind = "star"`:
    /// refuses the dumbbell's and the grid's options.
    fn network(
        &self,
        args: &EmulateOptions,
        file: Option<&str>,
        origin: &str,
    ) -> Result<EmulatedNetwork> {
        let others = [
            ("--scale", args.scale.is_some_and(|f| f != 1.0)),
            ("--nodes", !args.nodes.is_empty()),
        ];
        if let Some((flag, _)) = link_options(args)
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
        let config: star::Config = parameters(file, origin)?;
        config.validate().map_err(|e| anyhow!("{origin}: {e}"))?;
        Ok(config.into())
    }

    fn startup(&self, listen: SocketAddr, server: SocketAddr, network: &EmulatedNetwork) -> String {
        let Some(c) = network.parameters::<star::Config>() else {
            return plain_startup(listen, server, network);
        };
        format!(
            "coapcc emulate: {listen} → {server} through the {}-station 802.11 star ({} bit/s, queue {} packets, \
             wired hop {} bit/s); the Nth client on station N (wrapping around)",
            c.stations, c.rate_bps, c.queue, c.wired_bps
        )
    }

    /// What the relay carried and what the star did.
    fn summary(&self, r: &EmulatorReport, mappings: &str) -> String {
        let s = r
            .network_part::<star::StarRecord>()
            .cloned()
            .unwrap_or_default();
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

    fn help(&self) -> EmulatorHelp {
        EmulatorHelp {
            about: "The 12-station IEEE 802.11 star of the lwIP evaluation",
            choice: "the 12-station 802.11 star of the lwIP evaluation",
            notes: Some("On the star the Nth client address gets station N (wrapping around)."),
            examples: &[],
        }
    }
}
