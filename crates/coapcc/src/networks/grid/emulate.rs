//! `coapcc emulate` on the 802.15.4 grid: `--nodes`, the options it
//! refuses, its start-up line, its summary and its help.

use std::net::SocketAddr;

use anyhow::{anyhow, bail, Result};
use coapcc_link::grid;
use coapcc_link::NodeId;
use coapcc_net::emulate::networks::grid::{grid_client_nodes, EmulatedGrid, GridReport};
use coapcc_net::emulate::{EmulatedNetwork, EmulatorReport};

use crate::emulate::{
    parameters, plain_startup, relay_directions, EmulateOptions, Emulator, EmulatorHelp,
};
use crate::networks::dumbbell::emulate::link_options;

/// The grid's [`Emulator`].
pub struct Emulate;

/// `a, b, c` for a few nodes, `a, b, c, …, z` for many.
fn node_list(nodes: &[NodeId]) -> String {
    let names: Vec<String> = nodes.iter().map(u32::to_string).collect();
    if names.len() <= 8 {
        names.join(", ")
    } else {
        format!("{}, …, {}", names[..3].join(", "), names[names.len() - 1])
    }
}

impl Emulator for Emulate {
    /// The grid of `--network grid` or of a scenario with `kind = "grid"`,
    /// with `--nodes`; refuses the dumbbell's options.
    fn network(
        &self,
        args: &EmulateOptions,
        file: Option<&str>,
        origin: &str,
    ) -> Result<EmulatedNetwork> {
        if let Some((flag, _)) = link_options(args).iter().find(|(_, set)| *set) {
            bail!(
                "{flag}: applies to the dumbbell only, and the emulated network is the grid \
                 (its buffers are the nodes' MAC queues and it has no link-error model; set the \
                 grid's parameters in a scenario's [network] table and pass it with --scenario)"
            );
        }
        if let Some(f) = args.scale.filter(|&f| f != 1.0) {
            bail!(
                "--scale {f}: applies to the dumbbell only; the grid's timings (250 kbit/s airtime, \
                 turnarounds, acknowledgement waits, CSMA backoffs, the reassembly timeout) are \
                 radio constants, not link rates, and speeding them all up would leave the real \
                 clients' CoAP timers behind"
            );
        }
        let config: grid::Config = parameters(file, origin)?;
        config.validate().map_err(|e| anyhow!("{origin}: {e}"))?;
        if !args.nodes.is_empty() {
            grid_client_nodes(&config, &args.nodes).map_err(|e| anyhow!("--nodes: {e}"))?;
        }
        let net = EmulatedNetwork::from(EmulatedGrid {
            config,
            client_nodes: args.nodes.clone(),
        });
        net.validate().map_err(|e| anyhow!("{origin}: {e}"))?;
        Ok(net)
    }

    fn startup(&self, listen: SocketAddr, server: SocketAddr, network: &EmulatedNetwork) -> String {
        let Some(g) = network.parameters::<EmulatedGrid>() else {
            return plain_startup(listen, server, network);
        };
        let c = &g.config;
        let nodes = grid_client_nodes(c, &g.client_nodes).unwrap_or_default();
        format!(
            "coapcc emulate: {listen} → {server} through the {}-node 802.15.4 grid: {} MAC, {} routing, \
             MAC queue {} frames, {} transmissions; border router node {}, server on node {}; \
             clients on nodes {} in order of arrival (wrapping around); CoAP messages up to {} bytes",
            c.nodes(),
            match c.mac {
                grid::MacProfile::Contiki => "contiki",
                grid::MacProfile::Ieee802154 => "ieee802154",
            },
            match c.routing {
                grid::layout::Routing::Storing => "storing",
                grid::layout::Routing::Root => "root",
            },
            c.queue,
            c.transmissions,
            c.root,
            c.server,
            node_list(&nodes),
            grid::sixlowpan::max_coap(c.addressing, c.hop_by_hop)
        )
    }

    /// What the relay carried and what the grid did.
    fn summary(&self, r: &EmulatorReport, mappings: &str) -> String {
        let g = r.network_part::<GridReport>().cloned().unwrap_or_default();
        let t = g.totals();
        let d = &g.drops;
        let on: Vec<String> = g
            .nodes
            .iter()
            .filter(|n| n.clients > 0)
            .map(|n| format!("{} ({})", n.node, n.clients))
            .collect();
        format!(
            "{}\n\
             grid frames: {} on the air ({} data, {} acknowledgements, {:.3} s of airtime), {} receptions destroyed by collisions, {} deferrals, {} duplicates filtered, {} datagrams forwarded\n\
             grid drops: {} datagrams — MAC queue full {}, MAC retries {}, channel access {}, reassembly {}, fragments aborted {}, hop limit {}\n\
             MAC buffer overflows: {} (frames refused), MAC drops after the last transmission: {}, reassembly drops: {}\n\
             clients on nodes (mappings): {}\n{mappings}",
            relay_directions(r, "grid"),
            g.frames_on_air,
            t.data_frames,
            t.ack_frames,
            t.airtime,
            g.collisions,
            t.deferrals,
            t.duplicates,
            t.forwarded,
            d.total(),
            d.mac_queue,
            d.mac_retries,
            d.channel_access,
            d.reassembly,
            d.fragments_aborted,
            d.hop_limit,
            t.overflows,
            t.mac_drops,
            t.reassembly_drops,
            if on.is_empty() { "none".to_string() } else { on.join(", ") },
        )
    }

    fn help(&self) -> EmulatorHelp {
        EmulatorHelp {
            about: "The 6 × 6 IEEE 802.15.4 grid of the pCoCoA paper",
            choice: "the 6 × 6 IEEE 802.15.4 grid of the pCoCoA paper with its defaults: Contiki \
                     MAC, storing routing, border router on node 1, server on node 3",
            notes: Some(
                "On the grid the server runs on the grid's server node and the Nth client address \
                 to send (from the relay's start) gets the Nth client node: by default every node \
                 but the border router and the server, in node order (on the 6 × 6 grid: 2, 4, 5, \
                 …, 36, then 2 again). A client whose mapping expired counts as a new client. \
                 Datagrams larger than eight 6LoWPAN fragments carry are refused and counted. On \
                 exit the relay prints what it carried: frames, drops by cause and MAC buffer \
                 overflows.",
            ),
            examples: &["coapcc emulate --server 127.0.0.1:5683 --network grid --nodes 36,35,30"],
        }
    }
}
