//! The network `coapcc emulate` relays through: `--network` or a scenario
//! file's `[network]` table, with the command line's options applied.

use anyhow::{anyhow, bail, Context, Result};
use coapcc_link::dumbbell::Buffer;
use coapcc_link::errors::ErrorProfile;
use coapcc_sim::dumbbell::Network;
use serde::de::DeserializeOwned;
use serde::Deserialize;

use coapcc_link::grid;
use coapcc_net::emulate::{self, EmulatedNetwork};

use coapcc::duration::delay_ms;
use coapcc::networks::NetworkKind;
use coapcc_link::star;

use super::args::{EmulateArgs, NetworkChoice};

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
            args.network
                .map_or(NetworkKind::Dumbbell, NetworkChoice::kind),
            None,
        ),
    };
    match kind {
        NetworkKind::Dumbbell => dumbbell_network(args, file),
        NetworkKind::Grid => grid_network(args, file),
        NetworkKind::Star => star_network(args, file),
    }
}

fn dumbbell_network(args: &EmulateArgs, file: Option<(String, String)>) -> Result<EmulatedNetwork> {
    if !args.nodes.is_empty() {
        bail!(
            "--nodes: applies to the grid only, and the emulated network is the dumbbell \
             (choose the grid with --network grid or a scenario with kind = \"grid\")"
        );
    }
    let (mut net, origin) = match &file {
        Some((text, origin)) => (network_table::<Network>(text, origin)?, origin.as_str()),
        None => (Network::default(), "--network dumbbell"),
    };
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
        net.errors = ErrorProfile::parse(e)
            .ok_or_else(|| anyhow!("--errors: expected none, low, medium or high, found `{e}`"))?;
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
    let net = EmulatedNetwork::Dumbbell(net.scaled(scale));
    net.validate().map_err(|e| {
        if scale == 1.0 {
            anyhow!("{origin}: {e}")
        } else {
            anyhow!("{origin} with --scale {scale}: {e}")
        }
    })?;
    Ok(net)
}

impl EmulateArgs {
    /// The dumbbell's link options, each with whether it was given (the
    /// grid and the star refuse them by name).
    pub(crate) fn dumbbell_options(&self) -> [(&'static str, bool); 7] {
        [
            ("--uplink-bps", self.uplink_bps.is_some()),
            ("--downlink-bps", self.downlink_bps.is_some()),
            ("--uplink-delay-ms", self.uplink_delay_ms.is_some()),
            ("--downlink-delay-ms", self.downlink_delay_ms.is_some()),
            ("--path-delay-ms", self.path_delay_ms.is_some()),
            ("--buffer", self.buffer.is_some()),
            ("--errors", self.errors.is_some()),
        ]
    }
}

fn grid_network(args: &EmulateArgs, file: Option<(String, String)>) -> Result<EmulatedNetwork> {
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
    let (config, origin) = match &file {
        Some((text, origin)) => (
            network_table::<grid::Config>(text, origin)?,
            origin.as_str(),
        ),
        None => (grid::Config::default(), "--network grid"),
    };
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

/// The star of `--network star` or of a scenario with `kind = "star"`:
/// refuses the dumbbell's and the grid's options.
pub(crate) fn star_network(
    args: &EmulateArgs,
    file: Option<(String, String)>,
) -> Result<EmulatedNetwork> {
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
    let (config, origin) = match &file {
        Some((text, origin)) => (
            network_table::<star::Config>(text, origin)?,
            origin.as_str(),
        ),
        None => (star::Config::default(), "--network star"),
    };
    config.validate().map_err(|e| anyhow!("{origin}: {e}"))?;
    Ok(EmulatedNetwork::Star(config))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::net::{emulator_startup, emulator_summary};
    use clap::Parser;
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
        assert_eq!(n, Network::default());
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
