//! One replication of a point on the host kernel: `coapcc emulate --ip` puts
//! the dumbbell between two network namespaces, `coapcc server` runs in the
//! server's and `coapcc load` (CoAP over the kernel's TCP) in the clients';
//! this module builds that command, bounds it in time and reads what it
//! wrote: the load's JSON (per-client FCTs) and the emulator's report (relay
//! counters, kernel counters of both namespaces, every `net.ipv4.tcp_*`
//! value, the kernel version).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use coapcc_net::ip::signals::{self, StopSignals};
use serde_json::Value;

use super::point::Point;
use super::record::{Counters, Record, Source};

/// The CoAP port the server listens on inside its namespace.
const PORT: u16 = 5683;

/// How a kernel run is made.
#[derive(Clone, Debug)]
pub struct KernelRun {
    /// The coapcc executable (the emulator, the server and the load).
    pub exe: PathBuf,
    /// The load's own limit of wall time (s); the whole command is stopped
    /// 60 s after it.
    pub time_limit: f64,
    /// The base seed: replication `r` uses `seed + r` for the link and for
    /// the clients' start offsets and batches.
    pub seed: u64,
    /// SIGINT, SIGTERM or SIGHUP to this process: the run in progress is
    /// asked to stop at once (SIGTERM: the emulator tears its namespaces
    /// down) and the run fails.
    pub stop: Option<StopSignals>,
}

/// What a kernel run left, read back.
#[derive(Clone, Debug)]
pub struct KernelResult {
    /// The reduced record.
    pub record: Record,
    /// The kernel version.
    pub kernel: String,
    /// Every `net.ipv4.tcp_*` value of the clients' namespace (the server's
    /// is the same: both get the same settings).
    pub sysctl: Value,
    /// Everything read: `{"load": …, "emulator": …}`.
    pub raw: Value,
}

/// Quotes `s` for `sh -c`.
/// The last [`LOG_TAIL`] bytes of the emulator's log (what an error shows),
/// or a note that it could not be read.
fn log_tail(path: &Path) -> String {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut f) = std::fs::File::open(path) else {
        return format!("({} could not be read)", path.display());
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let _ = f.seek(SeekFrom::Start(len.saturating_sub(LOG_TAIL)));
    let mut tail = Vec::new();
    let _ = f.read_to_end(&mut tail);
    let text = String::from_utf8_lossy(&tail).into_owned();
    if len > LOG_TAIL {
        format!("(… the last {LOG_TAIL} bytes of {len})\n{text}")
    } else {
        text
    }
}

/// How much of the emulator's log an error shows.
const LOG_TAIL: u64 = 16 * 1024;

fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

impl KernelRun {
    /// The command line of replication `replication` of `point`, writing the
    /// load's JSON to `load_json` and the emulator's report to `report_json`.
    pub fn command(
        &self,
        point: &Point,
        replication: u32,
        load_json: &Path,
        report_json: &Path,
    ) -> Command {
        let exe = sh_quote(&self.exe.to_string_lossy());
        let seed = self.seed + u64::from(replication);
        let mut c = Command::new(&self.exe);
        c.arg("emulate")
            .arg("--ip")
            .args(["--buffer", &point.buffer_text()])
            .args(["--seed", &seed.to_string()])
            .arg("--report-json")
            .arg(report_json);
        for (k, v) in point.config.sysctls() {
            c.args(["--sysctl", &format!("{k}={v}")]);
        }
        let nodelay = if point.config.nodelay() {
            " --nodelay"
        } else {
            ""
        };
        c.arg("--server-cmd").arg(format!(
            "exec {exe} server --listen \"$COAPCC_SERVER_ADDR:{PORT}\" --tcp-congestion reno --max-connections {}{nodelay}",
            point.clients.max(1) * 2
        ));
        let load = format!(
            "exec {exe} load \"coap+tcp://$COAPCC_SERVER_ADDR:{PORT}/sense\" --clients {} \
             --exchanges {} --workload {} --tcp-congestion reno --seed {seed} --time-limit {} \
             --no-fail --format json{nodelay} > {}",
            point.clients,
            point.exchanges,
            point.workload.name(),
            self.time_limit,
            sh_quote(&load_json.to_string_lossy()),
        );
        c.args(["--", "sh", "-c", &load]);
        c
    }

    /// Runs replication `replication` of `point` and reads its results.
    pub fn run(&self, point: &Point, replication: u32, scratch: &Path) -> Result<KernelResult> {
        let load_json = scratch.join(format!("load-{replication}.json"));
        let report_json = scratch.join(format!("emulator-{replication}.json"));
        // The emulator's stderr goes to a file, not a pipe: nothing reads a
        // pipe while the run lasts, and an emulator that wrote more than a
        // pipe holds would block until the time limit.
        let log = scratch.join(format!("emulator-{replication}.log"));
        let log_file = std::fs::File::create(&log)
            .with_context(|| format!("cannot create {}", log.display()))?;
        let mut cmd = self.command(point, replication, &load_json, &report_json);
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::from(log_file));
        let mut child = cmd.spawn().with_context(|| {
            format!(
                "cannot start {} emulate --ip for {point}",
                self.exe.display()
            )
        })?;
        // Bounded: the load stops itself after its time limit; the emulator
        // is asked to stop (SIGTERM: it tears its namespaces down) 60 s later
        // and killed 30 s after that.
        // A signal to this process asks it to stop at once the same way.
        let mut deadline = Instant::now() + Duration::from_secs_f64(self.time_limit + 60.0);
        let mut asked = false;
        let mut stopped_by = None;
        let status = loop {
            if let Some(s) = child.try_wait()? {
                break s;
            }
            let now = Instant::now();
            if !asked {
                stopped_by = self.stop.as_ref().and_then(StopSignals::received);
                if stopped_by.is_some() {
                    deadline = now;
                }
            }
            if now >= deadline && !asked {
                let _ = Command::new("kill")
                    .args(["-TERM", &child.id().to_string()])
                    .status();
                asked = true;
            } else if asked && now >= deadline + Duration::from_secs(30) {
                let _ = child.kill();
            }
            std::thread::sleep(Duration::from_millis(200));
        };
        let stderr = log_tail(&log);
        let _ = std::fs::remove_file(&log);
        if let Some(n) = stopped_by {
            let _ = std::fs::remove_file(&load_json);
            let _ = std::fs::remove_file(&report_json);
            bail!(
                "{point}, replication {replication}: stopped by {} (`coapcc emulate --ip` exited \
                 with {status} after tearing down)",
                signals::name(n)
            );
        }
        if !status.success() {
            bail!(
                "{point}, replication {replication}: `coapcc emulate --ip` exited with {status}{}:\n{}",
                if asked { " after the time limit" } else { "" },
                stderr.trim_end()
            );
        }
        let read = |p: &Path| -> Result<Value> {
            let text = std::fs::read_to_string(p)
                .with_context(|| format!("{point}: {} was not written", p.display()))?;
            serde_json::from_str(&text).with_context(|| format!("{}: not JSON", p.display()))
        };
        let load = read(&load_json)?;
        let emulator = read(&report_json)?;
        let _ = std::fs::remove_file(&load_json);
        let _ = std::fs::remove_file(&report_json);
        reduce(point, replication, load, emulator)
    }
}

/// A non-negative integer at `path` of `v`, 0 where absent.
fn count(v: &Value, path: &[&str]) -> u64 {
    let mut at = v;
    for k in path {
        match at.get(k) {
            Some(x) => at = x,
            None => return 0,
        }
    }
    at.as_u64().unwrap_or(0)
}

/// The sum of a kernel counter over both namespaces.
fn kernel_counter(emulator: &Value, name: &str) -> u64 {
    ["client", "server"]
        .iter()
        .map(|ns| count(emulator, &["counters", ns, name]))
        .sum()
}

/// The IP bytes that crossed direction `dir` (`uplink` / `downlink`) of the
/// relay's bottleneck: `delivered_bytes`, as the model counts the bytes its
/// link serialised. The relay's `bytes` also count what the router buffer
/// dropped, and so are not comparable with the model's where it drops.
pub fn bytes_past_bottleneck(emulator: &Value, dir: &str) -> u64 {
    count(emulator, &["relay", dir, "delivered_bytes"])
}

/// Reduces what a kernel run wrote to a [`Record`].
pub fn reduce(
    point: &Point,
    replication: u32,
    load: Value,
    emulator: Value,
) -> Result<KernelResult> {
    let fct: Vec<Option<f64>> = load
        .get("fct_s")
        .and_then(Value::as_array)
        .ok_or_else(|| anyhow!("{point}: the load's JSON has no `fct_s` list"))?
        .iter()
        .map(Value::as_f64)
        .collect();
    if fct.len() != point.clients as usize {
        bail!(
            "{point}: the load reported {} clients, expected {}",
            fct.len(),
            point.clients
        );
    }
    let kernel = emulator
        .get("kernel")
        .and_then(Value::as_str)
        .ok_or_else(|| anyhow!("{point}: the emulator's report has no `kernel`"))?
        .to_string();
    let sysctl = emulator
        .pointer("/sysctl/client")
        .cloned()
        .ok_or_else(|| anyhow!("{point}: the emulator's report has no `sysctl.client`"))?;
    let dropped = |dir: &str| count(&emulator, &["relay", dir, "dropped", "buffer"]);
    let counters = Counters {
        retransmitted_segments: kernel_counter(&emulator, "Tcp.RetransSegs"),
        loss_probes: kernel_counter(&emulator, "TcpExt.TCPLossProbes"),
        timeouts: kernel_counter(&emulator, "TcpExt.TCPTimeouts"),
        spurious_rtos: kernel_counter(&emulator, "TcpExt.TCPSpuriousRTOs"),
        dsacks: kernel_counter(&emulator, "TcpExt.TCPDSACKRecv"),
        bytes_up: bytes_past_bottleneck(&emulator, "uplink"),
        bytes_down: bytes_past_bottleneck(&emulator, "downlink"),
        downlink_drops: dropped("downlink"),
        uplink_drops: dropped("uplink"),
        connections: count(&load, &["connections"]),
        failed_exchanges: count(&load, &["failed_exchanges"]),
    };
    let record = Record {
        source: Source::Kernel(kernel.clone()),
        replication,
        fct,
        counters,
    };
    Ok(KernelResult {
        record,
        kernel,
        sysctl,
        raw: serde_json::json!({ "load": load, "emulator": emulator }),
    })
}

/// Why this machine cannot make kernel runs, if it cannot: the emulator
/// needs root (CAP_NET_ADMIN) and /dev/net/tun.
pub fn unavailable() -> Option<String> {
    if !Path::new("/dev/net/tun").exists() {
        return Some("/dev/net/tun is missing (load the tun module)".into());
    }
    let uid = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).map(str::to_string))
        });
    if uid.as_deref() != Some("0") {
        return Some("kernel runs need root (CAP_NET_ADMIN) to create network namespaces".into());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel_check::point::{KernelConfig, Workload};

    fn point() -> Point {
        Point {
            config: KernelConfig::Thesis,
            workload: Workload::Random,
            buffer: Some(2500),
            clients: 2,
            exchanges: 50,
        }
    }

    #[test]
    fn the_command_sets_the_point_and_the_sysctls() {
        let k = KernelRun {
            exe: PathBuf::from("/opt/it's/coapcc"),
            time_limit: 900.0,
            seed: 10,
            stop: None,
        };
        let c = k.command(
            &point(),
            3,
            Path::new("/tmp/l.json"),
            Path::new("/tmp/e.json"),
        );
        let args: Vec<String> = c.get_args().map(|a| a.to_string_lossy().into()).collect();
        let joined = args.join(" ");
        assert!(
            joined.starts_with("emulate --ip --buffer 2500 --seed 13 --report-json /tmp/e.json")
        );
        assert!(joined.contains("--sysctl net.ipv4.tcp_sack=0"));
        let load = args.last().unwrap();
        assert!(
            load.contains("--workload random") && load.contains("--seed 13"),
            "{load}"
        );
        assert!(load.contains(r"'/opt/it'\''s/coapcc' load"), "{load}");
        assert!(load.ends_with("> '/tmp/l.json'"), "{load}");
        // Nagle stays on (no --nodelay) except in `thesis-nodelay`, where
        // both the server and the load set TCP_NODELAY.
        assert!(!joined.contains("--nodelay"), "{joined}");
        let nodelay = Point {
            config: KernelConfig::ThesisNodelay,
            ..point()
        };
        let c = k.command(
            &nodelay,
            3,
            Path::new("/tmp/l.json"),
            Path::new("/tmp/e.json"),
        );
        let args: Vec<String> = c.get_args().map(|a| a.to_string_lossy().into()).collect();
        let server = args
            .iter()
            .find(|a| a.contains(" server --listen"))
            .expect("a server command");
        assert!(server.ends_with(" --nodelay"), "{server}");
        assert!(args.last().unwrap().contains("--format json --nodelay >"));
        assert!(args.join(" ").contains("--sysctl net.ipv4.tcp_sack=0"));
    }

    /// An emulator that writes far more to stderr than a pipe holds (1 MiB)
    /// and fails is reported at once with the end of what it wrote: its
    /// stderr goes to a file, so it never blocks on a full pipe until the
    /// time limit (which would add "after the time limit" to the error).
    #[test]
    fn a_chatty_failing_emulator_is_reported_with_its_last_words() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("coapcc-kc-chatty-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let exe = dir.join("chatty.sh");
        std::fs::write(
            &exe,
            "#!/bin/sh\nhead -c 1048576 /dev/zero | tr '\\0' x >&2\necho >&2\necho 'the last words' >&2\nexit 3\n",
        )
        .unwrap();
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        let k = KernelRun {
            exe,
            time_limit: 0.0,
            seed: 1,
            stop: None,
        };
        let Err(e) = k.run(&point(), 0, &dir) else {
            panic!("the emulator failed, but the run succeeded")
        };
        let msg = format!("{e:#}");
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(
            msg.contains("exited with exit status: 3:"),
            "{}",
            &msg[..200.min(msg.len())]
        );
        assert!(!msg.contains("after the time limit"));
        assert!(msg.trim_end().ends_with("the last words"));
        assert!(msg.contains("the last 16384 bytes of 1048592"));
    }

    #[test]
    fn reduce_sums_both_namespaces_and_reads_the_relay() {
        let load =
            serde_json::json!({"fct_s": [12.5, null], "connections": 9, "failed_exchanges": 1});
        let emulator = serde_json::json!({
            "kernel": "6.18.44",
            "sysctl": {"client": {"net.ipv4.tcp_sack": "0"}, "server": {}},
            "relay": {"uplink": {"bytes": 1090, "delivered_bytes": 1000, "dropped": {"buffer": 2}},
                      "downlink": {"bytes": 3525, "delivered_bytes": 3000, "dropped": {"buffer": 5}}},
            "counters": {"client": {"Tcp.RetransSegs": 4, "TcpExt.TCPTimeouts": 3},
                         "server": {"Tcp.RetransSegs": 6, "TcpExt.TCPLossProbes": 7}}
        });
        let r = reduce(&point(), 0, load, emulator).unwrap();
        let c = &r.record.counters;
        assert_eq!(
            (c.retransmitted_segments, c.timeouts, c.loss_probes),
            (10, 3, 7)
        );
        assert_eq!(
            (c.bytes_up, c.bytes_down, c.uplink_drops, c.downlink_drops),
            (1000, 3000, 2, 5)
        );
        assert_eq!((c.connections, c.failed_exchanges), (9, 1));
        assert_eq!(r.record.fct, vec![Some(12.5), None]);
        assert_eq!(r.kernel, "6.18.44");
    }

    #[test]
    fn reduce_refuses_a_load_with_the_wrong_number_of_clients() {
        let load = serde_json::json!({"fct_s": [1.0]});
        let emulator = serde_json::json!({"kernel": "6", "sysctl": {"client": {}}});
        let e = reduce(&point(), 0, load, emulator).unwrap_err().to_string();
        assert!(e.contains("1 clients, expected 2"), "{e}");
    }
}
