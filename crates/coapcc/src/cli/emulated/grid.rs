//! `coapcc emulate` on the 802.15.4 grid: `--nodes`, the options it
//! refuses, its start-up line and its summary.

use std::net::SocketAddr;

use anyhow::{anyhow, bail, Result};
use coapcc_link::grid;
use coapcc_link::NodeId;
use coapcc_net::emulate::{self, EmulatedNetwork, EmulatorReport, GridReport};

use super::{parameters, relay_directions};
use crate::cli::args::EmulateArgs;

/// The grid of `--network grid` or of a scenario with `kind = "grid"`, with
/// `--nodes`; refuses the dumbbell's options.
pub(super) fn build(args: &EmulateArgs, file: Option<(String, String)>) -> Result<EmulatedNetwork> {
    if let Some((flag, _)) = args.dumbbell_options().iter().find(|(_, set)| *set) {
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
    let (config, origin) = parameters::<grid::Config>(&file, "grid")?;
    config.validate().map_err(|e| anyhow!("{origin}: {e}"))?;
    if !args.nodes.is_empty() {
        emulate::grid_client_nodes(&config, &args.nodes).map_err(|e| anyhow!("--nodes: {e}"))?;
    }
    let net = EmulatedNetwork::Grid {
        config,
        client_nodes: args.nodes.clone(),
    };
    net.validate().map_err(|e| anyhow!("{origin}: {e}"))?;
    Ok(net)
}

/// `a, b, c` for a few nodes, `a, b, c, …, z` for many.
fn node_list(nodes: &[NodeId]) -> String {
    let names: Vec<String> = nodes.iter().map(u32::to_string).collect();
    if names.len() <= 8 {
        names.join(", ")
    } else {
        format!("{}, …, {}", names[..3].join(", "), names[names.len() - 1])
    }
}

/// The line `coapcc emulate` prints when it starts.
pub(super) fn startup(
    listen: SocketAddr,
    server: SocketAddr,
    c: &grid::Config,
    client_nodes: &[NodeId],
) -> String {
    let nodes = emulate::grid_client_nodes(c, client_nodes).unwrap_or_default();
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
pub(super) fn summary(r: &EmulatorReport, g: &GridReport, mappings: &str) -> String {
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
