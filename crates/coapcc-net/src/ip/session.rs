//! One run of a server command and a client command across an
//! [`IpEmulation`]: the server command (`sh -c`) in the server namespace, the
//! client command (an argv) in the client namespace, each in a process group
//! of its own, with the addresses in their environment.
//!
//! - The server starts first; the client starts once a socket listens in the
//!   server namespace (TCP listening or UDP bound, read from
//!   `/proc/net/{tcp,udp}{,6}` there) and 100 ms more (for a server's other
//!   sockets), or after [`SessionSpec::listen_wait`].
//! - When the client command ends, the server's group gets SIGTERM, then
//!   SIGKILL after [`SessionSpec::grace`].
//! - When the server command ends first (a crash), the client's group is
//!   stopped the same way and the outcome says so.
//! - SIGINT, SIGTERM or SIGHUP to this process stops both groups the same
//!   way.
//!
//! The server's standard output and error go to this process's standard
//! error; the client's pass through unchanged.

use std::collections::BTreeMap;
use std::os::fd::AsFd;
use std::os::unix::process::ExitStatusExt;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use serde::Serialize;
use tokio::process::Child;

use super::counters::{self, Counters};
use super::{signals, sys, IpEmulation, Netns};

/// How long the client waits after the server's first socket appears.
const SETTLE: Duration = Duration::from_millis(100);

/// The two commands and their bounds.
#[derive(Clone, Debug)]
pub struct SessionSpec {
    /// Run by `sh -c` in the server namespace.
    pub server_cmd: String,
    /// Program and arguments run in the client namespace.
    pub client_argv: Vec<String>,
    /// Longest wait for the server to listen before the client starts.
    pub listen_wait: Duration,
    /// Between SIGTERM and SIGKILL when a command is stopped.
    pub grace: Duration,
}

impl SessionSpec {
    /// The commands with the default bounds: 1 s to listen, 2 s of grace.
    pub fn new(server_cmd: &str, client_argv: &[String]) -> Self {
        SessionSpec {
            server_cmd: server_cmd.into(),
            client_argv: client_argv.to_vec(),
            listen_wait: Duration::from_secs(1),
            grace: Duration::from_secs(2),
        }
    }
}

/// How the session ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Ending {
    /// The client command ended.
    ClientEnded,
    /// The server command ended while the client command ran.
    ServerEnded,
    /// SIGINT to this process.
    Interrupted,
    /// SIGTERM to this process.
    Terminated,
    /// SIGHUP to this process (its terminal closed).
    HungUp,
}

impl Ending {
    /// How a session stopped by signal `n` (SIGINT, SIGTERM or SIGHUP) ends.
    pub fn of_signal(n: i32) -> Ending {
        match n {
            libc::SIGINT => Ending::Interrupted,
            libc::SIGHUP => Ending::HungUp,
            _ => Ending::Terminated,
        }
    }
}

/// Per-namespace values, `client` and `server`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PerNs<T> {
    /// The client namespace's.
    pub client: T,
    /// The server namespace's.
    pub server: T,
}

/// What a session did.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SessionOutcome {
    /// How it ended.
    pub ending: Ending,
    /// The client command's exit code (128 + signal if killed by one);
    /// `None` if it never started.
    pub client_status: Option<i32>,
    /// The server command's.
    pub server_status: Option<i32>,
    /// Every `net.ipv4.tcp_*` sysctl of each namespace, read before the
    /// commands started.
    pub sysctl: PerNs<BTreeMap<String, String>>,
    /// Every counter of `/proc/net/netstat` and `/proc/net/snmp` that changed
    /// between the start of the commands and their end, per namespace.
    pub counters: PerNs<Counters>,
}

/// An exit status as one code: the exit code, or 128 + the signal.
pub fn status_code(s: ExitStatus) -> i32 {
    s.code()
        .or_else(|| s.signal().map(|sig| 128 + sig))
        .unwrap_or(1)
}

fn read_counters(ns: &Netns) -> Result<Counters> {
    Ok(counters::parse(
        &ns.read_files(&["/proc/net/netstat", "/proc/net/snmp"])?,
    ))
}

/// Whether a socket listens (TCP) or is bound (UDP) in `ns`.
fn listening(ns: &Netns) -> bool {
    let text = ns
        .read_files(&[
            "/proc/net/tcp",
            "/proc/net/tcp6",
            "/proc/net/udp",
            "/proc/net/udp6",
        ])
        .unwrap_or_default();
    // rows: "sl local_address rem_address st ..."; a header row per file
    text.lines().any(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        f.len() > 3 && f[0].ends_with(':') && (f[3] == "0A" || f[3] == "07")
    })
}

/// Stops process group `pgid` (SIGTERM, then SIGKILL after `grace`) and
/// returns the child's status.
async fn stop_group(child: &mut Child, grace: Duration) -> Option<ExitStatus> {
    if let Ok(Some(s)) = child.try_wait() {
        // the leader is gone; its group may not be
        if let Some(pgid) = child.id() {
            let _ = sys::kill_group(pgid, libc::SIGKILL);
        }
        return Some(s);
    }
    let pgid = child.id()?;
    let _ = sys::kill_group(pgid, libc::SIGTERM);
    match tokio::time::timeout(grace, child.wait()).await {
        Ok(r) => {
            let _ = sys::kill_group(pgid, libc::SIGKILL);
            r.ok()
        }
        Err(_) => {
            let _ = sys::kill_group(pgid, libc::SIGKILL);
            tokio::time::timeout(Duration::from_secs(2), child.wait())
                .await
                .ok()
                .and_then(Result::ok)
        }
    }
}

/// Runs `spec` across `emu` (see the module docs).
pub async fn run_session(emu: &IpEmulation, spec: &SessionSpec) -> Result<SessionOutcome> {
    let Some(program) = spec.client_argv.first() else {
        bail!("no client command: give it after `--`");
    };
    let mut stop = signals::listen()?;
    let (cns, sns) = (emu.client_ns(), emu.server_ns());
    let sysctl = PerNs {
        client: cns.sysctls("net.ipv4.tcp_")?,
        server: sns.sysctls("net.ipv4.tcp_")?,
    };
    let before = PerNs {
        client: read_counters(cns)?,
        server: read_counters(sns)?,
    };
    let env = emu.env();
    let stderr = std::io::stderr().as_fd().try_clone_to_owned()?;
    let mut server = sns
        .tokio_command("sh")
        .args(["-c", &spec.server_cmd])
        .envs(env.iter().map(|(k, v)| (k, v)))
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::from(stderr.try_clone()?))
        .stderr(Stdio::from(stderr))
        .spawn()
        .context("cannot start the server command")?;
    let deadline = tokio::time::Instant::now() + spec.listen_wait;
    let mut server_status = None;
    while tokio::time::Instant::now() < deadline {
        if let Ok(Some(s)) = server.try_wait() {
            server_status = Some(s);
            break;
        }
        if listening(sns) {
            // a server opening several sockets (UDP and TCP) gets a moment
            // for the others
            tokio::time::sleep(SETTLE).await;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut client_status = None;
    let ending;
    if let Some(s) = server_status {
        eprintln!(
            "coapcc emulate: the server command `{}` exited with status {} before the client command started",
            spec.server_cmd,
            status_code(s)
        );
        ending = Ending::ServerEnded;
    } else {
        let mut client = cns
            .tokio_command(program)
            .args(&spec.client_argv[1..])
            .envs(env.iter().map(|(k, v)| (k, v)))
            .process_group(0)
            .spawn()
            .with_context(|| format!("cannot start the client command `{program}`"))?;
        tokio::select! {
            s = client.wait() => {
                client_status = s.ok();
                ending = Ending::ClientEnded;
                server_status = stop_group(&mut server, spec.grace).await;
            }
            s = server.wait() => {
                server_status = s.ok();
                ending = Ending::ServerEnded;
                eprintln!(
                    "coapcc emulate: the server command `{}` exited with status {} while the client command ran; stopping the client",
                    spec.server_cmd,
                    server_status.map_or(-1, status_code)
                );
                client_status = stop_group(&mut client, spec.grace).await;
            }
            n = signals::first(&mut stop) => {
                ending = Ending::of_signal(n);
                client_status = stop_group(&mut client, spec.grace).await;
                server_status = stop_group(&mut server, spec.grace).await;
            }
        }
    }
    if server_status.is_none() {
        server_status = stop_group(&mut server, spec.grace).await;
    }
    let after = PerNs {
        client: read_counters(cns)?,
        server: read_counters(sns)?,
    };
    Ok(SessionOutcome {
        ending,
        client_status: client_status.map(status_code),
        server_status: server_status.map(status_code),
        sysctl,
        counters: PerNs {
            client: counters::delta(&before.client, &after.client),
            server: counters::delta(&before.server, &after.server),
        },
    })
}
