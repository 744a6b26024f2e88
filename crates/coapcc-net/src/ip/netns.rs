//! Network namespaces made with iproute2 (`ip netns add`), each owned by a
//! guard that kills every process left in it and deletes it when dropped.
//!
//! Names carry the creating process's id (`coapcc-<pid>-<n>-client`), so
//! concurrent runs never collide, and [`remove_stale`] can delete the
//! namespaces of a run that died without cleaning up (its pid is gone).

use std::collections::BTreeMap;
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};

use super::sys;

/// Prefix of every namespace this crate creates.
pub const PREFIX: &str = "coapcc-";

static NEXT: AtomicU32 = AtomicU32::new(0);

/// A fresh, unique pair index for this process.
pub(crate) fn next_index() -> u32 {
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// Runs `cmd`, returning its output; an error names `what` and quotes the
/// command's standard error.
fn run(mut cmd: Command, what: &str) -> Result<Output> {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("{what}: cannot run `{:?}`", cmd.get_program()))?;
    if !out.status.success() {
        bail!(
            "{what}: {}",
            String::from_utf8_lossy(&out.stderr)
                .trim()
                .replace('\n', "; ")
        );
    }
    Ok(out)
}

/// A network namespace, deleted (with every process in it) on drop.
#[derive(Debug)]
pub struct Netns {
    name: String,
}

impl Netns {
    /// Creates the namespace `name` (`ip netns add`).
    pub fn create(name: &str) -> Result<Netns> {
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "add", name]);
        run(cmd, &format!("creating network namespace {name}"))?;
        Ok(Netns { name: name.into() })
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// `ip -n NAME -batch -` with `script` (one iproute2 command a line).
    pub fn ip_batch(&self, script: &str) -> Result<()> {
        use std::io::Write;
        let mut child = Command::new("ip")
            .args(["-n", &self.name, "-batch", "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .context("cannot run `ip`")?;
        child
            .stdin
            .take()
            .expect("piped")
            .write_all(script.as_bytes())?;
        let out = child.wait_with_output()?;
        if !out.status.success() {
            bail!(
                "configuring namespace {}: {}",
                self.name,
                String::from_utf8_lossy(&out.stderr)
                    .trim()
                    .replace('\n', "; ")
            );
        }
        Ok(())
    }

    /// A command that runs `program` inside the namespace
    /// (`ip netns exec NAME program`).
    pub fn command(&self, program: &str) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.name, program]);
        c
    }

    /// The same as a tokio command.
    pub fn tokio_command(&self, program: &str) -> tokio::process::Command {
        let mut c = tokio::process::Command::new("ip");
        c.args(["netns", "exec", &self.name, program]);
        c
    }

    /// Sets the sysctl `key` to `value` in the namespace; an error names the
    /// key and says why the kernel refused it.
    pub fn set_sysctl(&self, key: &str, value: &str) -> Result<()> {
        let mut c = self.command("sysctl");
        c.args(["-q", "-w", &format!("{key}={value}")]);
        run(
            c,
            &format!("--sysctl {key}={value} refused in {}", self.name),
        )
        .map(|_| ())
    }

    /// Every sysctl whose name starts with `prefix` (e.g. `net.ipv4.tcp_`),
    /// as `sysctl -a` prints it (several numbers are separated by tabs).
    pub fn sysctls(&self, prefix: &str) -> Result<BTreeMap<String, String>> {
        let mut c = self.command("sysctl");
        c.args(["-a", "-r", &format!("^{}", prefix.replace('.', "\\."))]);
        let out = run(c, &format!("reading sysctls in {}", self.name))?;
        Ok(String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.split_once(" = "))
            .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
            .collect())
    }

    /// The contents of `paths` read inside the namespace (`cat`), e.g.
    /// `/proc/net/netstat`, which show the namespace's own counters. Missing
    /// files are skipped.
    pub fn read_files(&self, paths: &[&str]) -> Result<String> {
        let out = self
            .command("cat")
            .args(paths)
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .with_context(|| format!("reading {paths:?} in {}", self.name))?;
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// The ids of the processes inside the namespace (`ip netns pids`).
    pub fn pids(&self) -> Vec<u32> {
        pids_of(&self.name)
    }

    /// Kills (SIGKILL) every process in the namespace and waits, bounded,
    /// until none is left. Returns the ids still there after the bound.
    pub fn kill_all(&self) -> Vec<u32> {
        kill_all(&self.name)
    }
}

fn pids_of(name: &str) -> Vec<u32> {
    Command::new("ip")
        .args(["netns", "pids", name])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

fn kill_all(name: &str) -> Vec<u32> {
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        let pids = pids_of(name);
        if pids.is_empty() || Instant::now() >= deadline {
            return pids;
        }
        for &pid in &pids {
            let _ = sys::kill_pid(pid, libc::SIGKILL);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn delete(name: &str) {
    let left = kill_all(name);
    if !left.is_empty() {
        eprintln!("coapcc: processes {left:?} are still in namespace {name} after SIGKILL");
    }
    let _ = Command::new("ip")
        .args(["netns", "del", name])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

impl Drop for Netns {
    fn drop(&mut self) {
        delete(&self.name);
    }
}

/// The pid a namespace name of ours carries (`coapcc-<pid>-…`).
fn owner_pid(name: &str) -> Option<u32> {
    name.strip_prefix(PREFIX)?.split('-').next()?.parse().ok()
}

/// Whether process `pid` exists and is not a zombie.
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        // "pid (comm) S …": the state follows the last ')'
        stat.rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X")
    })
}

/// The namespaces iproute2 knows (`ip netns list`, first word of each line).
pub fn list() -> Vec<String> {
    Command::new("ip")
        .args(["netns", "list"])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .filter_map(|l| l.split_whitespace().next().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// Deletes the namespaces of ours whose creating process is gone (a run
/// killed before it could clean up), killing what still runs in them.
/// Returns their names.
pub fn remove_stale() -> Vec<String> {
    let mut removed = Vec::new();
    for name in list() {
        let Some(pid) = owner_pid(&name) else {
            continue;
        };
        if pid == std::process::id() || alive(pid) {
            continue;
        }
        delete(&name);
        removed.push(name);
    }
    removed
}

/// Checks what the IP mode needs, with a one-line error naming what is
/// missing: CAP_NET_ADMIN, /dev/net/tun, the `ip` command (iproute2).
pub fn check_requirements() -> Result<()> {
    if !sys::has_net_admin() {
        bail!(
            "the IP mode needs CAP_NET_ADMIN (run as root, or grant the capability) to create \
             network namespaces and TUN devices; this process does not have it"
        );
    }
    if !std::path::Path::new("/dev/net/tun").exists() {
        bail!(
            "the IP mode needs /dev/net/tun (the TUN driver: `modprobe tun`, or pass the device \
             into the container); it is missing"
        );
    }
    Command::new("ip")
        .arg("-V")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_err(|_| anyhow!("the IP mode needs the `ip` command (iproute2); it was not found"))?;
    Command::new("sysctl")
        .arg("-V")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_err(|_| {
            anyhow!("the IP mode needs the `sysctl` command (procps); it was not found")
        })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owner_pids_are_read_from_our_names_only() {
        assert_eq!(owner_pid("coapcc-4242-0-client"), Some(4242));
        assert_eq!(owner_pid("coapcc-x-0-client"), None);
        assert_eq!(owner_pid("other-4242"), None);
        assert!(alive(std::process::id()));
        assert!(!alive(u32::MAX));
    }
}
