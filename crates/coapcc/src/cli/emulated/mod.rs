//! The network `coapcc emulate` relays through: `--network` or a scenario
//! file's `[network]` table, with the command line's options applied; the
//! line printed at start-up and the summary at exit. Each network's part is
//! in its own file (`dumbbell.rs`, `grid.rs`, `star.rs`); this file is the
//! one place that names them: [`NetworkChoice`], [`NETWORK_HELP`],
//! [`EMULATE_HELP`] and the three dispatches below.

mod dumbbell;
mod grid;
mod star;

use std::net::SocketAddr;

use anyhow::{anyhow, bail, Context, Result};
use clap::ValueEnum;
use serde::de::DeserializeOwned;
use serde::Deserialize;

use coapcc_net::emulate::{DatagramCounts, EmulatedNetwork, EmulatorReport};

use coapcc::networks::NetworkKind;

use super::args::EmulateArgs;

/// The network `coapcc emulate --network` names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum NetworkChoice {
    /// The constrained, asymmetric link of the Helsinki testbed.
    Dumbbell,
    /// The 6 × 6 IEEE 802.15.4 grid of the pCoCoA paper.
    Grid,
    /// The 12-station IEEE 802.11 star of the lwIP evaluation.
    Star,
}

impl NetworkChoice {
    pub fn kind(self) -> NetworkKind {
        match self {
            NetworkChoice::Dumbbell => NetworkKind::of::<coapcc::networks::dumbbell::Dumbbell>(),
            NetworkChoice::Grid => NetworkKind::of::<coapcc::networks::grid::Grid>(),
            NetworkChoice::Star => NetworkKind::of::<coapcc::networks::star::Star>(),
        }
    }
}

/// `--network`'s help: what each network is.
pub(crate) const NETWORK_HELP: &str =
    "The network model: `dumbbell` (the constrained link; the default) or \
`grid` (the 6 × 6 IEEE 802.15.4 grid of the pCoCoA paper with its defaults: Contiki MAC, storing \
routing, border router on node 1, server on node 3), or `star` (the 12-station 802.11 star of the \
lwIP evaluation)";

/// `coapcc emulate --help`'s closing text: what happens on each network.
pub(crate) const EMULATE_HELP: &str = "\
Each client address gets its own upstream socket, so the server sees one endpoint per client.

On the grid the server runs on the grid's server node and the Nth client address to send (from \
the relay's start) gets the Nth client node: by default every node but the border router and the \
server, in node order (on the 6 × 6 grid: 2, 4, 5, …, 36, then 2 again). A client whose mapping \
expired counts as a new client. Datagrams larger than eight 6LoWPAN fragments carry are refused and \
counted. On exit the relay prints what it carried: per direction for the dumbbell; frames, drops by \
cause and MAC buffer overflows for the grid.

On the star the Nth client address gets station N (wrapping around).

IP mode (--ip): two network namespaces joined by TUN devices with the network between them; the \
server command runs in one (address 10.0.0.1), the client command in the other (10.0.0.2; on the \
grid and the star also 10.1.H.L for node 256·H+L), with COAPCC_SERVER_ADDR, COAPCC_CLIENT_ADDR and \
COAPCC_CLIENT_ADDRS set; everything is torn down when the client command ends, the server command \
ends (exit 125) or on Ctrl-C (exit 130). See docs/real-network.md, \"IP mode\".

Examples:
  coapcc emulate --ip --server-cmd 'coap-server-notls -A $COAPCC_SERVER_ADDR' -- \
    coap-client-notls coap+tcp://10.0.0.1/.well-known/core
  coapcc emulate --server 127.0.0.1:5683 --buffer 2500 --errors medium
  coapcc emulate --server 127.0.0.1:5683 --network grid --nodes 36,35,30
  coapcc emulate --server 127.0.0.1:5683 --scenario scenarios/pcocoa/ns3-reference.toml";

/// The `[network]` table of a scenario (or campaign) file; other tables are
/// ignored. A missing table is the network's defaults.
pub(crate) fn network_table<T: DeserializeOwned + Default>(text: &str, origin: &str) -> Result<T> {
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
/// (text and name) if one was given, else its defaults; with what errors
/// name as their origin (the file, or `--network <name>`).
pub(super) fn parameters<T: DeserializeOwned + Default>(
    file: &Option<(String, String)>,
    name: &str,
) -> Result<(T, String)> {
    Ok(match file {
        Some((text, origin)) => (network_table::<T>(text, origin)?, origin.clone()),
        None => (T::default(), format!("--network {name}")),
    })
}

/// The relay's two directions on a network that names its own drops
/// ("dropped in the grid"): one line each, upstream first.
pub(super) fn relay_directions(r: &EmulatorReport, network: &str) -> String {
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

/// The network `args` describe: `--network` or the `[network]` table of
/// `--scenario`, with the dumbbell options applied. Options that do not apply
/// to the chosen network are refused.
pub fn emulate_network(args: &EmulateArgs) -> Result<EmulatedNetwork> {
    let (kind, file) = match &args.scenario {
        Some(path) => {
            let origin = path.display().to_string();
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("--scenario: cannot read `{origin}`"))?;
            let kind = NetworkKind::of_toml(&text, &origin)?;
            if let Some(choice) = args.network.filter(|c| c.kind() != kind) {
                bail!(
                    "--network {}: {origin} describes the {} (its [network] table); \
                     expected the two to agree (or give only one of them)",
                    choice.kind().name(),
                    kind.name()
                );
            }
            (kind, Some((text, origin)))
        }
        None => (
            args.network.map_or(
                NetworkKind::of::<coapcc::networks::dumbbell::Dumbbell>(),
                NetworkChoice::kind,
            ),
            None,
        ),
    };
    match kind.name() {
        "grid" => grid::build(args, file),
        "star" => star::build(args, file),
        _ => dumbbell::build(args, file),
    }
}

/// The line `coapcc emulate` prints when it starts.
pub fn emulator_startup(
    listen: SocketAddr,
    server: SocketAddr,
    network: &EmulatedNetwork,
) -> String {
    match network {
        EmulatedNetwork::Dumbbell(n) => dumbbell::startup(listen, server, n),
        EmulatedNetwork::Grid {
            config,
            client_nodes,
        } => grid::startup(listen, server, config, client_nodes),
        EmulatedNetwork::Star(c) => star::startup(listen, server, c),
    }
}

/// A few lines describing what crossed the relay: the network's, then the
/// client mappings'.
pub fn emulator_summary(r: &EmulatorReport) -> String {
    let mappings = format!(
        "{} client mapping(s) opened, {} closed; delivered after their mapping closed (not sent): \
         {} upstream, {} downstream",
        r.clients_seen, r.mappings_closed, r.upstream.closed, r.downstream.closed
    );
    if let Some(s) = &r.star {
        star::summary(r, s, &mappings)
    } else if let Some(g) = &r.grid {
        grid::summary(r, g, &mappings)
    } else {
        dumbbell::summary(r, &mappings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use coapcc_link::dumbbell::Buffer;
    use coapcc_link::dumbbell::Config;
    use coapcc_link::errors::ErrorProfile;
    use coapcc_link::grid;
    use coapcc_net::emulate;
    use coapcc_net::emulate::EmulatorReport;
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

    #[test]
    fn the_dumbbell_by_default_with_its_options_and_scale() {
        let EmulatedNetwork::Dumbbell(n) = network(&[]).unwrap() else {
            panic!("the dumbbell")
        };
        assert_eq!(n, Config::default());
        let EmulatedNetwork::Dumbbell(n) = network(&[
            "--buffer",
            "2500",
            "--errors",
            "medium",
            "--uplink-bps",
            "100000",
            "--scale",
            "10",
        ])
        .unwrap() else {
            panic!("the dumbbell")
        };
        assert_eq!(n.buffer, Buffer::Bytes(2500));
        assert_eq!(n.errors, ErrorProfile::Medium);
        assert_eq!((n.uplink_bps, n.downlink_bps), (1_000_000, 300_000));
        assert_eq!(n.path_delay_ms, [1.0, 2.0]);
    }

    #[test]
    fn a_scenarios_network_table_with_command_line_overrides() {
        let EmulatedNetwork::Dumbbell(n) = network(&[
            "--scenario",
            &scenario("fullbackoff/fb-continuous-28200.toml"),
            "--errors",
            "low",
        ])
        .unwrap() else {
            panic!("the dumbbell")
        };
        assert_eq!(n.buffer, Buffer::Bytes(28_200));
        assert_eq!(n.errors, ErrorProfile::Low);

        let EmulatedNetwork::Grid {
            config,
            client_nodes,
        } = network(&["--scenario", &scenario("pcocoa/ns3-reference.toml")]).unwrap()
        else {
            panic!("the grid")
        };
        assert_eq!(config.mac, grid::MacProfile::Ieee802154);
        assert!(client_nodes.is_empty());
        // a file with only a [network] table
        let f = temp_scenario("[network]\nkind = \"grid\"\nqueue = 16\n");
        let path = f.path().to_str().unwrap();
        let net = network(&["--scenario", path, "--nodes", "36,35"]).unwrap();
        assert_eq!(
            net,
            EmulatedNetwork::Grid {
                config: grid::Config {
                    queue: 16,
                    ..grid::Config::default()
                },
                client_nodes: vec![36, 35],
            }
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
        assert!(matches!(
            network(&["--network", "star"]),
            Ok(EmulatedNetwork::Star(_))
        ));
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
            grid: Some(emulate::GridReport::default()),
            ..EmulatorReport::default()
        };
        let s = emulator_summary(&r);
        assert!(s.contains("grid frames: 0 on the air") && s.contains("MAC buffer overflows: 0"));
        assert!(emulator_summary(&EmulatorReport::default())
            .starts_with("uplink: 0 packets serialised"));
    }
}
