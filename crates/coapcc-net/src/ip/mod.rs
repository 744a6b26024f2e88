//! The IP mode of the emulator: two network namespaces, one for the clients
//! and one for the server, each with a TUN device (`cc0`) whose other end is
//! a relay in this process that puts the network model of `coapcc-link`
//! (dumbbell, grid or star) between them on the wall clock — the model the
//! simulator runs. Real kernels, real sockets, real CoAP (over UDP or TCP)
//! on both sides.
//!
//! [`IpEmulation::start`] sets it all up; dropping it (or
//! [`IpEmulation::stop`]) stops the relay, kills every process left in the
//! namespaces and deletes them; the TUN devices are not persistent and vanish
//! with the relay's file descriptors, also if this process dies.
//! [`session::run_session`] runs a server command and a client command in
//! them. See docs/real-network.md, "IP mode".

pub mod addressing;
pub mod counters;
pub mod log;
mod model;
pub mod netns;
pub mod packet;
pub mod relay;
pub mod session;
pub mod signals;
mod sys;
pub mod sysctl;

use std::net::Ipv4Addr;
use std::process::Command;
use std::sync::Arc;

use anyhow::{bail, Context, Result};

pub use addressing::Addressing;
pub use netns::Netns;
pub use relay::{DirectionReport, IpRelayOptions, RelayMonitor, RelayReport};

use crate::background::Background;
use crate::emulate::EmulatedNetwork;

/// The name of the TUN device inside each namespace.
pub const TUN_NAME: &str = "cc0";

/// How an IP-level emulation is set up.
#[derive(Clone, Debug, Default)]
pub struct IpOptions {
    /// The relay: network model, seed, bounds, packet log.
    pub relay: IpRelayOptions,
    /// Sysctls (`net.ipv4.tcp_sack`, `0`) set in both namespaces before
    /// anything runs in them: per-namespace `net.*` keys only
    /// ([`sysctl::check_key`]); they vanish with the namespaces.
    pub sysctls: Vec<(String, String)>,
}

/// The IP MTU of the TUN devices for `net`, as its hook says (under
/// `emulate/networks/`): the dumbbell's `mtu` (296 by default); the grid's
/// largest unfragmented UDP datagram, 20 + 8 + the largest CoAP message
/// eight 6LoWPAN fragments carry (756 by default), so the kernel fragments
/// anything larger and the relay refuses the fragments; the star's 1500
/// (Ethernet/802.11 MSDU).
pub fn mtu_of(net: &EmulatedNetwork) -> usize {
    net.ip_mtu()
}

/// A running IP-level emulation (see the module docs).
pub struct IpEmulation {
    // dropped first: the relay closes the TUN devices before the namespaces go
    relay: Option<Background<Result<RelayReport>>>,
    monitor: Arc<RelayMonitor>,
    network: EmulatedNetwork,
    addressing: Addressing,
    node_addrs: Vec<Ipv4Addr>,
    mtu: usize,
    client: Netns,
    server: Netns,
}

fn ip(args: &[&str], what: &str) -> Result<()> {
    let out = Command::new("ip")
        .args(args)
        .output()
        .with_context(|| format!("{what}: cannot run `ip`"))?;
    if !out.status.success() {
        bail!("{what}: {}", String::from_utf8_lossy(&out.stderr).trim());
    }
    Ok(())
}

impl IpEmulation {
    /// Checks the requirements (CAP_NET_ADMIN, /dev/net/tun, iproute2),
    /// removes namespaces left by dead earlier runs, creates the two
    /// namespaces and their TUN devices, applies the sysctls and starts the
    /// relay on a thread of its own. A sysctl key the namespaces do not keep
    /// apart from the host ([`sysctl::check_key`]) is refused before anything
    /// is created.
    pub fn start(opts: IpOptions) -> Result<IpEmulation> {
        for (k, _) in &opts.sysctls {
            sysctl::check_key(k)?;
        }
        netns::check_requirements()?;
        opts.relay
            .network
            .validate()
            .map_err(|e| anyhow::anyhow!(e))?;
        for stale in netns::remove_stale() {
            eprintln!("coapcc: removed namespace {stale} left by an earlier run");
        }
        let outside = sysctl::OutsideValues::read(opts.sysctls.iter().map(|(k, _)| k.as_str()));
        let pid = std::process::id();
        let k = netns::next_index();
        let client = Netns::create(&format!("{}{pid}-{k}-client", netns::PREFIX))?;
        let server = Netns::create(&format!("{}{pid}-{k}-server", netns::PREFIX))?;
        let addressing = Addressing::default();
        let network = opts.relay.network.clone();
        // none on a network whose clients the model does not tell apart
        let node_addrs: Vec<Ipv4Addr> = network
            .client_nodes()
            .iter()
            .filter_map(|&n| addressing.node_addr(n))
            .collect();
        let mtu = mtu_of(&network);
        let mut tuns = Vec::new();
        for (ns, side, local, peer) in [
            (&client, 'c', addressing.client, addressing.server),
            (&server, 's', addressing.server, addressing.client),
        ] {
            let name = format!("cc{pid:x}n{k:x}{side}");
            let tun =
                sys::open_tun(&name).with_context(|| format!("creating TUN device {name}"))?;
            ip(
                &["link", "set", "dev", &name, "netns", ns.name()],
                &format!("moving {name} into {}", ns.name()),
            )?;
            // IPv6 off on the TUN device before it comes up (the models carry
            // IPv4; up with IPv6 it would send router solicitations and MLD
            // reports at once); loopback keeps ::1
            ns.ip_batch(&format!(
                "link set dev {name} name {TUN_NAME}\n\
                 link set dev {TUN_NAME} mtu {mtu}\n\
                 link set dev lo up\n"
            ))?;
            let _ = ns.set_sysctl(&format!("net.ipv6.conf.{TUN_NAME}.disable_ipv6"), "1");
            let mut script = format!(
                "link set dev {TUN_NAME} up\n\
                 addr add {local}/32 peer {peer}/32 dev {TUN_NAME}\n"
            );
            if side == 'c' {
                for a in &node_addrs {
                    script.push_str(&format!("addr add {a}/32 dev {TUN_NAME}\n"));
                }
            } else if !node_addrs.is_empty() {
                script.push_str(&format!(
                    "route add 10.1.0.0/16 dev {TUN_NAME} src {local}\n"
                ));
            }
            ns.ip_batch(&script)?;
            for (k, v) in &opts.sysctls {
                ns.set_sysctl(k, v)?;
            }
            tuns.push(tun);
        }
        outside.check_unchanged()?;
        let server_tun = tuns.pop().expect("two devices");
        let client_tun = tuns.pop().expect("two devices");
        let monitor = Arc::new(RelayMonitor::default());
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel();
        let (ready_tx, ready_rx) = std::sync::mpsc::channel::<Result<()>>();
        let m = monitor.clone();
        let relay_opts = opts.relay.clone();
        let thread = std::thread::Builder::new()
            .name("coapcc-ip-relay".into())
            .spawn(move || {
                let rt = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(rt) => rt,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e.into()));
                        return Err(anyhow::anyhow!("no runtime"));
                    }
                };
                rt.block_on(relay::run_relay(
                    client_tun, server_tun, addressing, relay_opts, m, stop_rx, ready_tx,
                ))
            })?;
        let mut relay = Background::new(stop_tx, thread);
        match ready_rx.recv() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(e),
            Err(_) => {
                return Err(relay
                    .shutdown()
                    .and_then(Result::err)
                    .unwrap_or_else(|| anyhow::anyhow!("the relay thread ended at once")))
            }
        }
        Ok(IpEmulation {
            relay: Some(relay),
            monitor,
            network,
            addressing,
            node_addrs,
            mtu,
            client,
            server,
        })
    }

    /// The client namespace.
    pub fn client_ns(&self) -> &Netns {
        &self.client
    }

    /// The server namespace.
    pub fn server_ns(&self) -> &Netns {
        &self.server
    }

    /// The network model.
    pub fn network(&self) -> &EmulatedNetwork {
        &self.network
    }

    /// The addresses.
    pub fn addressing(&self) -> Addressing {
        self.addressing
    }

    /// The per-node client addresses (grid and star; empty on the dumbbell),
    /// in the order of the network's client nodes.
    pub fn node_addrs(&self) -> &[Ipv4Addr] {
        &self.node_addrs
    }

    /// The TUN devices' MTU.
    pub fn mtu(&self) -> usize {
        self.mtu
    }

    /// The environment commands get: `COAPCC_SERVER_ADDR`,
    /// `COAPCC_CLIENT_ADDR`, `COAPCC_CLIENT_ADDRS` (the per-node addresses
    /// comma-separated; the primary address on the dumbbell),
    /// `COAPCC_CLIENT_NS`, `COAPCC_SERVER_NS`.
    pub fn env(&self) -> Vec<(String, String)> {
        let addrs = if self.node_addrs.is_empty() {
            self.addressing.client.to_string()
        } else {
            let v: Vec<String> = self.node_addrs.iter().map(Ipv4Addr::to_string).collect();
            v.join(",")
        };
        vec![
            (
                "COAPCC_SERVER_ADDR".into(),
                self.addressing.server.to_string(),
            ),
            (
                "COAPCC_CLIENT_ADDR".into(),
                self.addressing.client.to_string(),
            ),
            ("COAPCC_CLIENT_ADDRS".into(), addrs),
            ("COAPCC_CLIENT_NS".into(), self.client.name().into()),
            ("COAPCC_SERVER_NS".into(), self.server.name().into()),
        ]
    }

    /// The relay's counters now.
    pub fn relay_report(&self) -> RelayReport {
        self.monitor.report()
    }

    /// Stops the relay (its final counters), then kills what still runs in
    /// the namespaces and deletes them.
    pub fn stop(mut self) -> Result<RelayReport> {
        let r = self
            .relay
            .take()
            .and_then(|mut b| b.shutdown())
            .unwrap_or_else(|| Err(anyhow::anyhow!("the relay thread panicked")));
        drop(self);
        r
    }
}
