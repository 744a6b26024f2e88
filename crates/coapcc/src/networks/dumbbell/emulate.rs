//! `coapcc emulate` on the dumbbell: its options (rates, delays, buffer,
//! errors, `--scale`), its start-up line, its summary and its help.

use std::net::SocketAddr;

use anyhow::{anyhow, bail, Result};
use coapcc_link::dumbbell::{self, Buffer};
use coapcc_link::errors::ErrorProfile;
use coapcc_net::emulate::networks::dumbbell::DumbbellReport;
use coapcc_net::emulate::{DatagramCounts, EmulatedNetwork, EmulatorReport};

use crate::duration::delay_ms;
use crate::emulate::{parameters, plain_startup, EmulateOptions, Emulator, EmulatorHelp};

/// The dumbbell's [`Emulator`].
pub struct Emulate;

/// The dumbbell's link options, each with whether it was given (the other
/// networks refuse them by name).
pub fn link_options(o: &EmulateOptions) -> [(&'static str, bool); 7] {
    [
        ("--uplink-bps", o.uplink_bps.is_some()),
        ("--downlink-bps", o.downlink_bps.is_some()),
        ("--uplink-delay-ms", o.uplink_delay_ms.is_some()),
        ("--downlink-delay-ms", o.downlink_delay_ms.is_some()),
        ("--path-delay-ms", o.path_delay_ms.is_some()),
        ("--buffer", o.buffer.is_some()),
        ("--errors", o.errors.is_some()),
    ]
}

impl Emulator for Emulate {
    /// The dumbbell of `--network dumbbell` (the default) or of a scenario's
    /// `[network]` table, with the link options applied; refuses `--nodes`.
    fn network(
        &self,
        args: &EmulateOptions,
        file: Option<&str>,
        origin: &str,
    ) -> Result<EmulatedNetwork> {
        if !args.nodes.is_empty() {
            bail!(
                "--nodes: applies to the grid only, and the emulated network is the dumbbell \
                 (choose the grid with --network grid or a scenario with kind = \"grid\")"
            );
        }
        let mut net: dumbbell::Config = parameters(file, origin)?;
        if let Some(s) = &args.path_delay_ms {
            let parsed = s.split_once(',').and_then(|(lo, hi)| {
                Some((
                    lo.trim().parse::<f64>().ok()?,
                    hi.trim().parse::<f64>().ok()?,
                ))
            });
            let Some((lo, hi)) = parsed else {
                bail!("--path-delay-ms: expected LO,HI in ms, found `{s}`");
            };
            delay_ms("path-delay-ms", lo)?;
            delay_ms("path-delay-ms", hi)?;
            if lo > hi {
                bail!("--path-delay-ms: expected 0 <= LO <= HI, found `{s}`");
            }
            net.path_delay_ms = [lo, hi];
        }
        if let Some(b) = &args.buffer {
            net.buffer = Buffer::parse(b)
                .ok_or_else(|| anyhow!("--buffer: expected a byte count or `inf`, found `{b}`"))?;
        }
        if let Some(e) = &args.errors {
            net.errors = ErrorProfile::parse(e).ok_or_else(|| {
                anyhow!("--errors: expected none, low, medium or high, found `{e}`")
            })?;
        }
        for (flag, bps, slot) in [
            ("--uplink-bps", args.uplink_bps, &mut net.uplink_bps),
            ("--downlink-bps", args.downlink_bps, &mut net.downlink_bps),
        ] {
            if let Some(bps) = bps {
                if bps == 0 {
                    bail!("{flag}: expected a rate greater than 0 bit/s");
                }
                *slot = bps;
            }
        }
        for (flag, ms, slot) in [
            (
                "--uplink-delay-ms",
                args.uplink_delay_ms,
                &mut net.uplink_delay_ms,
            ),
            (
                "--downlink-delay-ms",
                args.downlink_delay_ms,
                &mut net.downlink_delay_ms,
            ),
        ] {
            if let Some(ms) = ms {
                *slot = delay_ms(&flag[2..], ms)?;
            }
        }
        let scale = args.scale.unwrap_or(1.0);
        if !(scale.is_finite() && scale > 0.0) {
            bail!("--scale: expected a positive number, found {scale}");
        }
        let net = EmulatedNetwork::from(net.scaled(scale));
        net.validate().map_err(|e| {
            if scale == 1.0 {
                anyhow!("{origin}: {e}")
            } else {
                anyhow!("{origin} with --scale {scale}: {e}")
            }
        })?;
        Ok(net)
    }

    fn startup(&self, listen: SocketAddr, server: SocketAddr, network: &EmulatedNetwork) -> String {
        let Some(n) = network.parameters::<dumbbell::Config>() else {
            return plain_startup(listen, server, network);
        };
        format!(
            "coapcc emulate: {listen} → {server}; up {} bit/s {} ms, down {} bit/s {} ms, path {:?} ms, buffer {}, errors {}",
            n.uplink_bps,
            n.uplink_delay_ms,
            n.downlink_bps,
            n.downlink_delay_ms,
            n.path_delay_ms,
            n.buffer.label(),
            n.errors.name()
        )
    }

    /// What the relay carried, per direction of the link and of the relay.
    fn summary(&self, r: &EmulatorReport, mappings: &str) -> String {
        let link = r
            .network_part::<DumbbellReport>()
            .cloned()
            .unwrap_or_default();
        let dir = |name: &str, l: &coapcc_sim::metrics::LinkRecord| {
            format!(
                "{name}: {} packets serialised, {} bytes, busy {:.3} s, dropped {} (buffer) + {} (link errors)",
                l.packets, l.bytes, l.busy, l.dropped_buffer, l.dropped_error
            )
        };
        let relay = |name: &str, c: &DatagramCounts| {
            format!(
                "relay {name}: {} datagrams ({} bytes): {} delivered, {} dropped by the model, \
                 {} in flight ({} IP bytes held, peak {}), {} refused (relay full: {} IP bytes), \
                 {} refused (too large)",
                c.received,
                c.bytes,
                c.delivered,
                c.dropped,
                c.in_flight(),
                c.held_bytes,
                c.peak_held_bytes,
                c.refused_full,
                c.refused_full_bytes,
                c.refused_too_large
            )
        };
        format!(
            "{}\n{}\n{}\n{}\n{mappings}",
            dir("uplink", &link.uplink),
            dir("downlink", &link.downlink),
            relay("upstream (clients → server)", &r.upstream),
            relay("downstream (server → clients)", &r.downstream),
        )
    }

    fn help(&self) -> EmulatorHelp {
        EmulatorHelp {
            about: "The constrained, asymmetric link of the Helsinki testbed",
            choice: "the constrained link",
            notes: Some("On the dumbbell the relay prints on exit what it carried, per direction."),
            examples: &["coapcc emulate --server 127.0.0.1:5683 --buffer 2500 --errors medium"],
        }
    }
}
