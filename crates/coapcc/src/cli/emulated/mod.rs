//! The network `coapcc emulate` relays through: `--network` or a scenario
//! file's `[network]` table, with the command line's options applied; the
//! line printed at start-up and the summary at exit; `--network`'s possible
//! values and the help ([`super::emulators`]). Each network's part is its
//! [`Emulator`](crate::emulate::Emulator) (`networks/<name>/emulate.rs` of
//! the library), reached through the registry of networks.

use std::net::SocketAddr;

use anyhow::{bail, Context, Result};

use crate::emulate::Emulator;
use coapcc_net::emulate::{EmulatedNetwork, EmulatorReport};

use super::args::EmulateArgs;
use super::emulators::{default_network, emulated, emulator_for, network_of_file, or_list};

/// The network `args` describe: `--network` or the `[network]` table of
/// `--scenario`, with the network options applied. Options that do not apply
/// to the chosen network are refused.
pub fn emulate_network(args: &EmulateArgs) -> Result<EmulatedNetwork> {
    let (name, file) = match &args.scenario {
        Some(path) => {
            let origin = path.display().to_string();
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("--scenario: cannot read `{origin}`"))?;
            let name = network_of_file(&text, &origin)?;
            if let Some(given) = args.network.as_deref().filter(|&n| n != name) {
                bail!(
                    "--network {given}: {origin} describes the {name} (its [network] table); \
                     expected the two to agree (or give only one of them)"
                );
            }
            (name, Some((text, origin)))
        }
        None => (args.network.as_deref().unwrap_or(default_network()), None),
    };
    let origin = match &file {
        Some((_, origin)) => origin.clone(),
        None => format!("--network {name}"),
    };
    let Some(emulator) = emulator_for(name) else {
        let names: Vec<String> = emulated().map(|(n, _)| n.to_string()).collect();
        bail!(
            "{origin}: `coapcc emulate` does not run the {name}; expected {}",
            or_list(&names)
        );
    };
    emulator.network(
        &args.options,
        file.as_ref().map(|(text, _)| text.as_str()),
        &origin,
    )
}

/// The emulator of `network` (one [`emulate_network`] built).
fn emulator_of(network: &EmulatedNetwork) -> &'static dyn Emulator {
    emulator_for(network.kind()).expect("the emulator that built the network")
}

/// The line `coapcc emulate` prints when it starts.
pub fn emulator_startup(
    listen: SocketAddr,
    server: SocketAddr,
    network: &EmulatedNetwork,
) -> String {
    emulator_of(network).startup(listen, server, network)
}

/// A few lines describing what crossed the relay through `network`: the
/// network's, then the client mappings'.
pub fn emulator_summary(network: &EmulatedNetwork, r: &EmulatorReport) -> String {
    let mappings = format!(
        "{} client mapping(s) opened, {} closed; delivered after their mapping closed (not sent): \
         {} upstream, {} downstream",
        r.clients_seen, r.mappings_closed, r.upstream.closed, r.downstream.closed
    );
    emulator_of(network).summary(r, &mappings)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::emulators::{emulate_help, network_help};
    use clap::Parser;
    use coapcc_link::dumbbell::Buffer;
    use coapcc_link::dumbbell::Config as DumbbellConfig;
    use coapcc_link::errors::ErrorProfile;
    use coapcc_link::{grid, star};
    use coapcc_net::emulate::networks::grid::{EmulatedGrid, GridReport};
    use coapcc_net::emulate::{EmulatorReport, NetworkPart};
    use std::net::SocketAddr;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        emulate: EmulateArgs,
    }

    fn network(args: &[&str]) -> Result<EmulatedNetwork> {
        let mut argv = vec!["emulate", "--server", "127.0.0.1:5683"];
        argv.extend_from_slice(args);
        emulate_network(&Cli::try_parse_from(argv).expect("parses").emulate)
    }

    /// The dumbbell `args` describe.
    fn dumbbell(args: &[&str]) -> DumbbellConfig {
        let net = network(args).unwrap();
        net.parameters::<DumbbellConfig>()
            .expect("the dumbbell")
            .clone()
    }

    fn error(args: &[&str]) -> String {
        format!("{:#}", network(args).expect_err("refused"))
    }

    fn scenario(name: &str) -> String {
        format!("{}/../../scenarios/{name}", env!("CARGO_MANIFEST_DIR"))
    }

    fn temp_scenario(text: &str) -> tempfile::NamedTempFile {
        use std::io::Write;
        let mut f = tempfile::Builder::new().suffix(".toml").tempfile().unwrap();
        f.write_all(text.as_bytes()).unwrap();
        f
    }

    /// `--network` takes the emulated networks' names, the default first,
    /// and refuses any other naming them; the help lists them all.
    #[test]
    fn network_names_come_from_the_emulators() {
        let argv = ["emulate", "--server", "127.0.0.1:5683", "--network", "ring"];
        let e = Cli::try_parse_from(argv)
            .err()
            .expect("refused")
            .to_string();
        assert!(
            e.contains("invalid value 'ring' for '--network <KIND>'")
                && e.contains("[possible values: dumbbell, grid, star, lorawan]"),
            "{e}"
        );
        assert_eq!(default_network(), "dumbbell");
        let help = network_help();
        assert!(
            help.starts_with(
                "The network model: `dumbbell` (the constrained link; the default), `grid` ("
            ) && help.contains(", `star` (the 12-station 802.11 star of the lwIP evaluation)")
                && help.ends_with(
                    " or `lorawan` (LoRaWAN class A (EU868): 200 devices around one gateway)"
                ),
            "{help}"
        );
        let closing = emulate_help();
        assert!(closing.contains("On the star the Nth client address gets station N"));
        assert!(closing.contains("On LoRaWAN the Nth client address gets device N"));
        assert!(closing.contains("--network grid --nodes 36,35,30\n  coapcc emulate --server"));
    }

    #[test]
    fn the_dumbbell_by_default_with_its_options_and_scale() {
        let n = dumbbell(&[]);
        assert_eq!(n, DumbbellConfig::default());
        let n = dumbbell(&[
            "--buffer",
            "2500",
            "--errors",
            "medium",
            "--uplink-bps",
            "100000",
            "--scale",
            "10",
        ]);
        assert_eq!(n.buffer, Buffer::Bytes(2500));
        assert_eq!(n.errors, ErrorProfile::Medium);
        assert_eq!((n.uplink_bps, n.downlink_bps), (1_000_000, 300_000));
        assert_eq!(n.path_delay_ms, [1.0, 2.0]);
    }

    #[test]
    fn a_scenarios_network_table_with_command_line_overrides() {
        let n = dumbbell(&[
            "--scenario",
            &scenario("fullbackoff/fb-continuous-28200.toml"),
            "--errors",
            "low",
        ]);
        assert_eq!(n.buffer, Buffer::Bytes(28_200));
        assert_eq!(n.errors, ErrorProfile::Low);

        let net = network(&["--scenario", &scenario("pcocoa/ns3-reference.toml")]).unwrap();
        let EmulatedGrid {
            config,
            client_nodes,
        } = net.parameters::<EmulatedGrid>().expect("the grid");
        assert_eq!(config.mac, grid::MacProfile::Ieee802154);
        assert!(client_nodes.is_empty());
        // a file with only a [network] table
        let f = temp_scenario("[network]\nkind = \"grid\"\nqueue = 16\n");
        let path = f.path().to_str().unwrap();
        let net = network(&["--scenario", path, "--nodes", "36,35"]).unwrap();
        assert_eq!(
            net,
            EmulatedGrid {
                config: grid::Config {
                    queue: 16,
                    ..grid::Config::default()
                },
                client_nodes: vec![36, 35],
            }
            .into()
        );
        assert_eq!(
            network(&["--network", "grid"]).unwrap(),
            grid::Config::default().into()
        );
    }

    #[test]
    fn options_that_do_not_apply_are_refused_by_name() {
        for flag in [
            "--buffer",
            "--errors",
            "--uplink-bps",
            "--downlink-delay-ms",
            "--path-delay-ms",
        ] {
            let value = match flag {
                "--buffer" => "100",
                "--errors" => "low",
                "--path-delay-ms" => "1,2",
                _ => "5",
            };
            let e = error(&["--network", "grid", flag, value]);
            assert!(
                e.starts_with(&format!("{flag}: applies to the dumbbell only")),
                "{e}"
            );
        }
        let e = error(&["--network", "grid", "--scale", "10"]);
        assert!(
            e.starts_with("--scale 10: applies to the dumbbell only"),
            "{e}"
        );
        assert!(e.contains("radio constants"), "{e}");
        assert!(network(&["--network", "grid", "--scale", "1"]).is_ok());
        let e = error(&["--nodes", "4"]);
        assert!(e.starts_with("--nodes: applies to the grid only"), "{e}");
        let e = error(&["--network", "grid", "--nodes", "3"]);
        assert!(e.starts_with("--nodes: node 3 is the server's node"), "{e}");
        let e = error(&["--network", "grid", "--nodes", "2,40"]);
        assert!(
            e.contains("expected node numbers from 1 to 36, found 40"),
            "{e}"
        );
        let e = error(&[
            "--network",
            "dumbbell",
            "--scenario",
            &scenario("pcocoa/periodic.toml"),
        ]);
        assert!(
            e.starts_with("--network dumbbell:") && e.contains("grid"),
            "{e}"
        );
        let e = error(&["--scenario", "/nonexistent/x.toml"]);
        assert!(e.starts_with("--scenario: cannot read"), "{e}");
        let f = temp_scenario("[network]\nkind = \"grid\"\nqueue = 0\n");
        let e = error(&["--scenario", f.path().to_str().unwrap()]);
        assert!(e.contains("network.queue: expected 1 to 64 frames"), "{e}");
        let f = temp_scenario("[network]\nkind = \"grid\"\nqeue = 8\n");
        let e = error(&["--scenario", f.path().to_str().unwrap()]);
        assert!(e.contains("qeue"), "{e}");
        // the star: from a scenario (its parameters) or --network star
        let f = temp_scenario("[network]\nkind = \"star\"\nstations = 4\n");
        let net = network(&["--scenario", f.path().to_str().unwrap()]).unwrap();
        assert_eq!(net.client_nodes(), vec![1, 2, 3, 4]);
        let e = error(&["--scenario", f.path().to_str().unwrap(), "--buffer", "9"]);
        assert!(
            e.starts_with("--buffer: does not apply to the Wi-Fi star"),
            "{e}"
        );
        let f = temp_scenario("[network]\nkind = \"star\"\nstations = 0\n");
        let e = error(&["--scenario", f.path().to_str().unwrap()]);
        assert!(e.contains("network.stations: expected 1 to 1000"), "{e}");
        assert!(network(&["--network", "star"])
            .unwrap()
            .parameters::<star::Config>()
            .is_some());
        let e = error(&["--uplink-bps", "0"]);
        assert!(
            e.starts_with("--uplink-bps: expected a rate greater than 0"),
            "{e}"
        );
        let e = error(&["--path-delay-ms", "5"]);
        assert!(e.starts_with("--path-delay-ms: expected LO,HI"), "{e}");
        let e = error(&["--scale", "0"]);
        assert!(e.starts_with("--scale: expected a positive number"), "{e}");
        let e = error(&["--scale", "0.000001"]);
        assert_eq!(
            e,
            "--network dumbbell with --scale 0.000001: network.uplink_bps: expected a rate greater than 0 bit/s"
        );
    }

    #[test]
    fn the_startup_line_and_summary_describe_the_grid() {
        let net = network(&["--network", "grid"]).unwrap();
        let a: SocketAddr = "127.0.0.1:5684".parse().unwrap();
        let line = emulator_startup(a, a, &net);
        assert!(
            line.contains("36-node 802.15.4 grid: contiki MAC, storing routing")
                && line.contains("server on node 3")
                && line.contains("clients on nodes 2, 4, 5, …, 36"),
            "{line}"
        );
        let r = EmulatorReport {
            network: Some(NetworkPart::new(GridReport::default())),
            ..EmulatorReport::default()
        };
        let s = emulator_summary(&net, &r);
        assert!(s.contains("grid frames: 0 on the air") && s.contains("MAC buffer overflows: 0"));
        assert!(
            emulator_summary(&network(&[]).unwrap(), &EmulatorReport::default())
                .starts_with("uplink: 0 packets serialised")
        );
    }
}
