//! The coap+tcp side of `coapcc client | server | load` (RFC 8323 on kernel
//! TCP; `coapcc_net::tcp`): what each subcommand runs when its URI's scheme
//! is `coap+tcp://`, and the TCP listener `coapcc server` runs beside UDP.

use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};

use anyhow::{bail, Context, Result};
use coapcc_net::blockwise;
use coapcc_net::resources::Resources;
use coapcc_net::target;
use coapcc_net::tcp::client::TcpClient;
use coapcc_net::tcp::load::{self as tcp_load, TcpLoadSpec};
use coapcc_net::tcp::server::{self as tcp_server, TcpServerHandle, TcpServerOptions, TcpSnapshot};
use coapcc_net::tcp::socket::SocketOptions;
use coapcc_net::tokio;
use coapcc_proto::message::Code;
use coapcc_proto::tcp::Csm;
use coapcc_sim::metrics::{Percentiles, Summary};

use crate::cli::args::{ClientArgs, LoadArgs, LoadOutcome, ServerArgs, Transport};
use crate::duration::seconds;

const STDOUT: &str = "cannot write to standard output";

/// Socket options from `--nodelay` and `--tcp-congestion`.
pub fn socket_options(nodelay: bool, congestion: &Option<String>) -> Result<SocketOptions> {
    if let Some(name) = congestion {
        if name.is_empty() || name.len() > 15 || !name.bytes().all(|b| b.is_ascii_graphic()) {
            bail!("--tcp-congestion: expected a module name such as `reno` or `cubic`, found `{name}`");
        }
    }
    Ok(SocketOptions {
        nodelay,
        congestion: congestion.clone(),
        bind: None,
    })
}

/// Refuses the options that mean nothing over TCP.
fn udp_only(flag: &str, set: bool) -> Result<()> {
    if set {
        bail!(
            "{flag}: applies to coap:// (UDP) only; over coap+tcp:// every request is sent \
             once and TCP retransmits below CoAP"
        );
    }
    Ok(())
}

/// `coapcc client coap+tcp://…`.
pub fn client(
    rt: &tokio::runtime::Runtime,
    args: &ClientArgs,
    method: Code,
    payload: &[u8],
) -> Result<()> {
    udp_only("--non", args.non)?;
    udp_only("--cc", args.cc != "default")?;
    udp_only("--max-retransmit", args.max_retransmit != 4)?;
    let limit = seconds("timeout", args.timeout)?;
    let sock = socket_options(args.nodelay, &args.tcp_congestion)?;
    rt.block_on(async move {
        let t = target::resolve_tcp(&args.uri).await?;
        let until = tokio::time::Instant::now() + limit;
        let began = tokio::time::Instant::now();
        let mut c = tokio::time::timeout(
            limit,
            TcpClient::connect(t.addr, &sock, Csm::default(), usize::from(args.token_len)),
        )
        .await
        .with_context(|| {
            format!(
                "no TCP connection to {} within {:.1} s",
                t.addr,
                limit.as_secs_f64()
            )
        })??;
        c.keep_payload(true);
        // Wait for the server's CSM so that its Max-Message-Size is honoured.
        let csm = c.wait_csm(until).await?;
        eprintln!(
            "connected to {} over TCP (Nagle {}) and exchanged CSMs in {:.3} ms; server's \
             Max-Message-Size {} bytes",
            t.addr,
            if args.nodelay { "off" } else { "on" },
            began.elapsed().as_secs_f64() * 1e3,
            csm.max_message_size
        );
        if let Some(size) = args.block_size {
            let r = if method == Code::GET {
                blockwise::tcp_download(
                    &mut c,
                    &t.path,
                    Some(size),
                    crate::cli::net::MAX_BLOCKWISE,
                    limit,
                )
                .await?
            } else {
                let body = payload.to_vec();
                blockwise::tcp_upload(&mut c, method, &t.path, body, size, limit).await?
            };
            c.close().await;
            return crate::cli::net::print_transfer(
                &r,
                method,
                t.addr,
                payload.len(),
                args.no_fail,
            );
        }
        let mut stdout = std::io::stdout().lock();
        if args.count > 1 {
            writeln!(stdout, "{:>6}  {:<8} {:>10}", "#", "code", "rtt (ms)").context(STDOUT)?;
        }
        let mut rtts = Vec::new();
        let mut errors = 0u32;
        for i in 0..args.count {
            let r = c.exchange(method, &t.path, payload, limit).await?;
            let ms = r.rtt.as_secs_f64() * 1e3;
            if coapcc_net::load::is_error(r.code) {
                errors += 1;
            }
            if args.count == 1 {
                eprintln!("{} from {} in {ms:.3} ms", r.code, t.addr);
                stdout.write_all(&r.payload).context(STDOUT)?;
                if !r.payload.is_empty() && r.payload.last() != Some(&b'\n') {
                    writeln!(stdout).context(STDOUT)?;
                }
            } else {
                writeln!(stdout, "{i:>6}  {:<8} {ms:>10.3}", r.code.to_string()).context(STDOUT)?;
                rtts.push(ms);
            }
        }
        c.close().await;
        if args.count > 1 {
            let p = Percentiles::of(&mut rtts);
            writeln!(
                stdout,
                "{} exchanges on one connection, {errors} error responses; RTT (ms) min {:.3} \
                 median {:.3} p90 {:.3} max {:.3}",
                args.count, p.min, p.p50, p.p90, p.max
            )
            .context(STDOUT)?;
        }
        stdout.flush().context(STDOUT)?;
        if errors > 0 && !args.no_fail {
            bail!("{errors} error response(s) (4.xx or 5.xx; exit 0 with --no-fail)");
        }
        Ok(())
    })
}

/// The TCP listener of `coapcc server`, if on: `--tcp-listen`, else the
/// UDP address's port (the UDP server's actual port when it asked for 0).
pub fn spawn_server(
    args: &ServerArgs,
    udp: SocketAddr,
    resources: Resources,
) -> Result<Option<TcpServerHandle>> {
    if args.no_tcp {
        for (flag, set) in [
            ("--tcp-listen", args.tcp_listen.is_some()),
            ("--nodelay", args.nodelay),
            ("--tcp-congestion", args.tcp_congestion.is_some()),
        ] {
            if set {
                bail!("{flag}: applies to the coap+tcp listener, which --no-tcp turns off");
            }
        }
        return Ok(None);
    }
    if args.max_connections == 0 {
        bail!("--max-connections: expected at least 1");
    }
    let min = coapcc_proto::tcp::signal::MIN_MAX_MESSAGE_SIZE;
    if !(min..=1 << 24).contains(&args.max_message_size) {
        bail!(
            "--max-message-size: expected {min} to {} bytes, found {}",
            1 << 24,
            args.max_message_size
        );
    }
    let opts = TcpServerOptions {
        max_connections: args.max_connections,
        idle_timeout: seconds("idle-timeout", args.idle_timeout)?,
        max_message_size: args.max_message_size,
        nodelay: args.nodelay,
        congestion: socket_options(args.nodelay, &args.tcp_congestion)?.congestion,
        frame_timeout: seconds("frame-timeout", args.frame_timeout)?,
        flush_timeout: seconds("flush-timeout", args.flush_timeout)?,
    };
    let addr = args.tcp_listen.unwrap_or(udp);
    Ok(Some(tcp_server::spawn(
        addr,
        opts,
        Arc::new(Mutex::new(resources)),
    )?))
}

/// The TCP line of `coapcc server`'s exit summary.
pub fn server_summary(s: &TcpSnapshot) -> String {
    format!(
        "TCP: {} connections accepted ({} at most at once), {} refused (connection limit, \
         told with Abort), {} closed idle, {} closed mid-frame (frame timeout), {} reset for \
         not reading (flush timeout), {} reset in all; {} requests, {} pings answered; {} \
         released by the client, {} aborted by us ({} too large), {} aborted by the client",
        s.accepted,
        s.max_open,
        s.refused,
        s.idle_closed,
        s.frame_timeouts,
        s.write_stalled,
        s.reset,
        s.requests,
        s.pings,
        s.released,
        s.aborted,
        s.too_large,
        s.peer_aborted
    )
}

/// `coapcc load coap+tcp://…`.
pub fn load(
    rt: &tokio::runtime::Runtime,
    args: &LoadArgs,
    workload: coapcc_sim::Workload,
    bind: Vec<IpAddr>,
) -> Result<LoadOutcome> {
    udp_only("--cc", args.cc != "default")?;
    udp_only("--max-retransmit", args.max_retransmit != 20)?;
    udp_only("--nstart", args.nstart != 1)?;
    let t = rt.block_on(target::resolve_tcp(&args.uri))?;
    let spec = TcpLoadSpec {
        target: t.addr,
        path: t.path.clone(),
        clients: args.clients,
        workload: workload.clone(),
        token_len: args.token_len,
        seed: args.seed,
        time_limit: seconds("time-limit", args.time_limit)?,
        socket: socket_options(args.nodelay, &args.tcp_congestion)?,
        bind,
    };
    let r = rt.block_on(tcp_load::run(&spec))?;
    let label = format!(
        "coap+tcp (Nagle {}{})",
        if args.nodelay { "off" } else { "on" },
        args.tcp_congestion
            .as_ref()
            .map_or(String::new(), |c| format!(", {c}"))
    );
    let summary = Summary::of(&label, 0, std::slice::from_ref(&r.result));
    Ok(LoadOutcome {
        spec: coapcc_net::load::LoadSpec {
            target: t.addr,
            path: t.path,
            clients: args.clients,
            workload,
            algorithm: coapcc_sim::AlgorithmSpec::named("tcp"),
            max_retransmit: 0,
            token_len: args.token_len,
            nstart: 1,
            seed: args.seed,
            time_limit: spec.time_limit,
        },
        uri: args.uri.clone(),
        result: r.result,
        summary,
        codes: r.codes,
        echo_retries: 0,
        transport: Transport::Tcp,
        connections: Some(r.connections),
        max_outstanding: None,
    })
}

/// Parses `--bind ADDR[,ADDR…]`.
pub fn parse_bind(list: &[String]) -> Result<Vec<IpAddr>> {
    list.iter()
        .flat_map(|s| s.split(','))
        .filter(|s| !s.trim().is_empty())
        .map(|s| {
            s.trim().parse::<IpAddr>().with_context(|| {
                format!("--bind: expected IP addresses separated by commas, found `{s}`")
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bind_lists_and_congestion_names_are_checked() {
        let b = parse_bind(&["10.0.0.2,10.0.0.3".into(), "::1".into()]).unwrap();
        assert_eq!(b.len(), 3);
        assert_eq!(b[2], "::1".parse::<IpAddr>().unwrap());
        let e = parse_bind(&["10.0.0.2,nope".into()])
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("--bind: expected IP addresses"), "{e}");
        assert!(socket_options(false, &Some("reno".into())).is_ok());
        for bad in ["", "a b", "muchtoolongname1"] {
            let e = socket_options(false, &Some(bad.into()))
                .unwrap_err()
                .to_string();
            assert!(
                e.starts_with("--tcp-congestion: expected a module name"),
                "{e}"
            );
        }
        let e = udp_only("--non", true).unwrap_err().to_string();
        assert!(e.contains("applies to coap:// (UDP) only"), "{e}");
        assert!(udp_only("--non", false).is_ok());
    }
}
