//! `coapcc emulate` on LoRaWAN: the options it refuses, its start-up line,
//! its summary and its help.

use std::net::SocketAddr;

use anyhow::{anyhow, bail, Result};
use coapcc_link::lorawan;
use coapcc_net::emulate::{EmulatedNetwork, EmulatorReport};

use crate::emulate::{
    parameters, plain_startup, relay_directions, EmulateOptions, Emulator, EmulatorHelp,
};
use crate::networks::dumbbell::emulate::link_options;

/// LoRaWAN's [`Emulator`].
pub struct Emulate;

impl Emulator for Emulate {
    /// The network of `--network lorawan` (ns-3 `lorawan`'s defaults: 200
    /// devices in a 6400 m disc) or of a scenario with `kind = "lorawan"`:
    /// refuses the other networks' options.
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
                "{flag}: does not apply to LoRaWAN (its timings are LoRa's time on air, the duty \
                 cycles and the class-A windows; set its parameters in a scenario's [network] \
                 table with kind = \"lorawan\" and pass it with --scenario)"
            );
        }
        let config: lorawan::Config = parameters(file, origin)?;
        config.validate().map_err(|e| anyhow!("{origin}: {e}"))?;
        Ok(config.into())
    }

    fn startup(&self, listen: SocketAddr, server: SocketAddr, network: &EmulatedNetwork) -> String {
        let Some(c) = network.parameters::<lorawan::Config>() else {
            return plain_startup(listen, server, network);
        };
        format!(
            "coapcc emulate: {listen} → {server} through LoRaWAN class A (EU868): {} device(s) in a \
             {} m disc around one gateway, {} uplink channel(s), replies in RX1 (+{} s) or RX2 \
             (+{} s); the Nth client on device N (wrapping around)",
            c.devices, c.radius_m, c.uplink_channels, c.rx1_delay_s, c.rx2_delay_s
        )
    }

    /// What the relay carried and what the LoRaWAN model did.
    fn summary(&self, r: &EmulatorReport, mappings: &str) -> String {
        let s = r
            .network_part::<lorawan::LorawanRecord>()
            .cloned()
            .unwrap_or_default();
        format!(
            "{}\n\
             lorawan: {} uplink frames ({:.3} s on air, {:.3} s waiting for duty cycles and \
             windows), {} downlink frames ({} in RX2, {:.3} s on air), {} downlinks held for a \
             later uplink\n{mappings}",
            relay_directions(r, "lorawan"),
            s.uplink_frames,
            s.uplink_airtime,
            s.waiting,
            s.downlink_frames,
            s.rx2_downlinks,
            s.downlink_airtime,
            s.held_downlinks
        )
    }

    fn help(&self) -> EmulatorHelp {
        EmulatorHelp {
            about: "LoRaWAN class A (EU868) around one gateway, ns-3 lorawan's defaults",
            choice: "LoRaWAN class A (EU868): 200 devices around one gateway",
            notes: Some(
                "On LoRaWAN the Nth client address gets device N (wrapping around); a reply waits \
                 for its device's receive windows, a second or more after the request.",
            ),
            examples: &[],
        }
    }
}
