//! `coapcc client --observe`: observing a resource (RFC 7641) through
//! [`coapcc_net::observe`], one line per notification on standard output
//! and a summary at the end.

use std::io::Write;
use std::net::SocketAddr;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use coapcc_net::observe::{self, Notification, ObserveOptions};
use coapcc_net::{target, tokio};
use coapcc_proto::message::{Code, MessageType};

use crate::duration::seconds;

use crate::cli::args::ClientArgs;

/// The most notifications `--notifications` asks for.
const MAX_NOTIFICATIONS: u64 = 1_000_000;

/// The longest `--duration` of an observation (one day).
const MAX_DURATION: f64 = 86_400.0;

const STDOUT: &str = "cannot write to standard output";

/// Checks the options that do not go with `--observe`.
fn check(args: &ClientArgs) -> Result<()> {
    if target::is_tcp(&args.uri) {
        bail!("--observe: applies to coap:// URIs only (Observe over UDP)");
    }
    if args.method.code() != Code::GET {
        bail!("--observe: registers with a GET; not with --method");
    }
    let unused = [
        ("--count", args.count != 1),
        ("--block-size", args.block_size.is_some()),
        ("--non", args.non),
        ("--payload", args.payload.is_some()),
        ("--payload-file", args.payload_file.is_some()),
        ("--payload-size", args.payload_size.is_some()),
        ("--nodelay", args.nodelay),
        ("--tcp-congestion", args.tcp_congestion.is_some()),
    ];
    if let Some((flag, _)) = unused.iter().find(|(_, set)| *set) {
        bail!("{flag}: not with --observe");
    }
    if args.token_len == 0 {
        bail!("--token-len: --observe needs a token (1 to 8 bytes)");
    }
    if let Some(n) = args.notifications {
        if n == 0 || n > MAX_NOTIFICATIONS {
            bail!("--notifications: expected 1 to {MAX_NOTIFICATIONS}, found {n}");
        }
    }
    if let Some(d) = args.duration {
        if !(d.is_finite() && d > 0.0 && d <= MAX_DURATION) {
            bail!(
                "--duration: expected a positive number of seconds up to {MAX_DURATION}, found {d}"
            );
        }
    }
    Ok(())
}

/// One line per notification.
fn line(n: &Notification) -> String {
    let mtype = match n.mtype {
        MessageType::Con => "CON",
        MessageType::Non => "NON",
        MessageType::Ack => "ACK",
        MessageType::Rst => "RST",
    };
    let delay = n
        .delay
        .map_or("-".to_string(), |d| format!("{:.3}", d * 1e3));
    let text: String = String::from_utf8_lossy(&n.payload)
        .chars()
        .take(80)
        .flat_map(char::escape_debug)
        .collect();
    format!(
        "{:>8}  {:>9.3}  {mtype}  {:<8} {:>6}  {delay:>10}  {text}",
        n.seq,
        n.at.as_secs_f64(),
        n.code.to_string(),
        n.payload.len()
    )
}

/// Runs `coapcc client --observe`.
pub fn client(rt: &tokio::runtime::Runtime, args: &ClientArgs) -> Result<()> {
    check(args)?;
    let opts = ObserveOptions {
        notifications: args.notifications,
        duration: args.duration.map(Duration::from_secs_f64),
        first_response: seconds("timeout", args.timeout)?,
        token_len: args.token_len.min(8),
        seed: args.seed.unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
        }),
    };
    rt.block_on(async {
        let t = target::resolve(&args.uri).await?;
        let local: SocketAddr = if t.addr.is_ipv4() {
            "0.0.0.0:0".parse().expect("valid")
        } else {
            "[::]:0".parse().expect("valid")
        };
        let socket = tokio::net::UdpSocket::bind(local).await?;
        let mut stdout = std::io::stdout().lock();
        writeln!(
            stdout,
            "{:>8}  {:>9}  type  {:<8} {:>6}  {:>10}  payload",
            "observe", "at (s)", "code", "bytes", "delay (ms)"
        )
        .context(STDOUT)?;
        let mut write_error = None;
        let stop = async {
            let _ = tokio::signal::ctrl_c().await;
        };
        let r = observe::observe(
            &socket,
            t.addr,
            &t.path,
            &opts,
            |n| {
                if let Err(e) = writeln!(stdout, "{}", line(n)).and_then(|_| stdout.flush()) {
                    write_error.get_or_insert(e);
                }
            },
            stop,
        )
        .await?;
        if let Some(e) = write_error {
            return Err(e).context(STDOUT);
        }
        let end = match (r.ended_by, r.deregistered) {
            (Some(code), _) => format!("the server ended the observation ({code})"),
            (None, true) => "deregistered".to_string(),
            (None, false) => format!(
                "deregistration unanswered within {} s",
                observe::DEREGISTER_WAIT.as_secs()
            ),
        };
        writeln!(
            stdout,
            "{} notifications, {} discarded as older, {} re-registrations; {end}",
            r.notifications, r.discarded, r.reregistrations
        )
        .context(STDOUT)?;
        if let Some(code) = r.ended_by {
            if coapcc_net::load::is_error(code) && !args.no_fail {
                bail!("error response {code} (exit 0 with --no-fail)");
            }
        }
        Ok(())
    })
}
