//! The networks `coapcc emulate` runs, from the registry of networks (each
//! network's [`Emulator`], if it has one): `--network`'s possible values and
//! help, and the command's closing help text.

use anyhow::Result;
use clap::builder::{PossibleValue, PossibleValuesParser};

use crate::emulate::Emulator;
use crate::networks::NetworkKind;

/// The emulator of the network named `name` (its `[network] kind`), if
/// `coapcc emulate` runs it.
pub(crate) fn emulator_for(name: &str) -> Option<&'static dyn Emulator> {
    NetworkKind::named(name)?.network().emulator()
}

/// Every network `coapcc emulate` runs, by name, in the order of the
/// networks; the first is the default.
pub(crate) fn emulated() -> impl Iterator<Item = (&'static str, &'static dyn Emulator)> {
    NetworkKind::all().filter_map(|k| Some((k.name(), k.network().emulator()?)))
}

/// The network `coapcc emulate` runs without `--network` or `--scenario`.
pub(crate) fn default_network() -> &'static str {
    emulated().next().map_or("", |(name, _)| name)
}

/// The network a scenario file's `[network]` table names (its `kind`; the
/// default network without one), by name.
pub(crate) fn network_of_file(text: &str, origin: &str) -> Result<&'static str> {
    Ok(NetworkKind::of_toml(text, origin)?.name())
}

/// `--network`'s parser: the emulated networks' names, each with its
/// [`about`](crate::emulate::EmulatorHelp::about) line.
pub(crate) fn network_parser() -> PossibleValuesParser {
    PossibleValuesParser::new(
        emulated().map(|(name, e)| PossibleValue::new(name).help(e.help().about)),
    )
}

/// `--network`'s help: what each network is, from its
/// [`choice`](crate::emulate::EmulatorHelp::choice) words.
pub(crate) fn network_help() -> String {
    let default = default_network();
    let choices: Vec<String> = emulated()
        .map(|(name, e)| {
            let words = e.help().choice;
            if name == default {
                format!("`{name}` ({words}; the default)")
            } else {
                format!("`{name}` ({words})")
            }
        })
        .collect();
    format!("The network model: {}", or_list(&choices))
}

/// `a`, `a or b`, `a, b or c`.
pub(crate) fn or_list(items: &[String]) -> String {
    match items.split_last() {
        Some((last, first)) if !first.is_empty() => format!("{} or {last}", first.join(", ")),
        Some((last, _)) => last.clone(),
        None => String::new(),
    }
}

/// `coapcc emulate --help`'s closing text: what happens on each network
/// (its [`notes`](crate::emulate::EmulatorHelp::notes)), the IP mode and
/// examples (each network's among them).
pub(crate) fn emulate_help() -> String {
    let mut text = String::from(
        "Each client address gets its own upstream socket, so the server sees one endpoint per \
         client.\n\n",
    );
    for (_, e) in emulated() {
        if let Some(notes) = e.help().notes {
            text += notes;
            text += "\n\n";
        }
    }
    text +=
        "IP mode (--ip): two network namespaces joined by TUN devices with the network between \
             them; the server command runs in one (address 10.0.0.1), the client command in the \
             other (10.0.0.2; on a network whose clients attach to nodes also 10.1.H.L for node \
             256·H+L), with COAPCC_SERVER_ADDR, COAPCC_CLIENT_ADDR and COAPCC_CLIENT_ADDRS set; \
             everything is torn down when the client command ends, the server command ends (exit \
             125) or on Ctrl-C (exit 130). See docs/real-network.md, \"IP mode\".\n\n\
             Examples:\n  \
             coapcc emulate --ip --server-cmd 'coap-server-notls -A $COAPCC_SERVER_ADDR' -- \
             coap-client-notls coap+tcp://10.0.0.1/.well-known/core\n";
    for (_, e) in emulated() {
        for example in e.help().examples {
            text += &format!("  {example}\n");
        }
    }
    text +=
        "  coapcc emulate --server 127.0.0.1:5683 --scenario scenarios/pcocoa/ns3-reference.toml";
    text
}
