//! The `coapcc client | server | load | emulate` subcommands: argument
//! definitions (clap) and what each one runs. Each builds its own tokio
//! runtime, so the caller stays synchronous.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::SocketAddr;
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use coapcc_net::tokio;
use coapcc_proto::client::Request;
use coapcc_sim::metrics::{Percentiles, Summary};
use coapcc_sim::{AlgorithmSpec, Workload, WorkloadKind};

use coapcc_net::client::{ClientOptions, ExchangeReport, NetClient, Outcome};
use coapcc_net::clock::Clock;
use coapcc_net::emulate::{self, EmulatorOptions, EmulatorReport};
use coapcc_net::load::{self, LoadSpec};
use coapcc_net::resources::Resources;
use coapcc_net::server::{self, ServerOptions, Snapshot};
use coapcc_net::target;

use crate::duration::seconds;

use crate::cli::args::*;
use crate::cli::emulated::{emulate_network, emulator_startup, emulator_summary};

fn runtime() -> Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?)
}

/// Waits for `duration` if given, else for Ctrl-C.
async fn until_stopped(duration: Option<Duration>) {
    match duration {
        Some(d) => tokio::time::sleep(d).await,
        None => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

/// One line per exchange for `--count`.
fn exchange_line(i: u32, r: &ExchangeReport) -> String {
    let timers: Vec<String> = r.timers.iter().map(|t| format!("{t:.3}")).collect();
    let (what, echo) = match &r.outcome {
        Outcome::Response { code, echo, .. } => (
            code.to_string(),
            echo.map_or("-".to_string(), |e| e.to_string()),
        ),
        Outcome::Failed(reason) => (format!("failed ({reason:?})"), "-".to_string()),
    };
    format!(
        "{i:>6}  {what:<8} {:>10.3}  {:>7}  {echo:>4}  {}",
        r.elapsed as f64 / 1e6,
        r.retransmissions,
        timers.join(",")
    )
}

const STDOUT: &str = "cannot write to standard output";

/// Refuses a TCP option given with a coap:// URI.
fn tcp_only(flag: &str, set: bool) -> Result<()> {
    if set {
        bail!("{flag}: applies to coap+tcp:// URIs only");
    }
    Ok(())
}

/// Runs `coapcc client`.
pub fn client(args: ClientArgs) -> Result<()> {
    let payload = match args.payload.as_deref() {
        None => Vec::new(),
        Some("-") => {
            let mut v = Vec::new();
            std::io::stdin()
                .read_to_end(&mut v)
                .context("cannot read the payload from standard input")?;
            v
        }
        Some(s) => s.as_bytes().to_vec(),
    };
    let payload = match (&args.payload_file, args.payload_size) {
        (Some(f), _) => std::fs::read(f)
            .with_context(|| format!("--payload-file: cannot read `{}`", f.display()))?,
        (None, Some(n)) => {
            if n > MAX_BLOCKWISE {
                bail!("--payload-size: expected at most {MAX_BLOCKWISE} bytes, found {n}");
            }
            coapcc_net::blockwise::pattern(n)
        }
        (None, None) => payload,
    };
    if let Some(b) = args.block_size {
        if coapcc_net::blockwise::szx_of(b).is_none() {
            bail!("--block-size: expected a power of two from 16 to 1024, found {b}");
        }
    }
    if args.count == 0 {
        bail!("--count: expected at least 1");
    }
    if args.token_len > 8 {
        bail!("--token-len: expected 0 to 8");
    }
    if args.observe {
        return crate::cli::observe::client(&runtime()?, &args);
    }
    if target::is_tcp(&args.uri) {
        if args.block_size.is_some() {
            if args.count > 1 {
                bail!("--block-size: a block-wise transfer runs once; not with --count");
            }
            if args.method == Method::Delete {
                bail!("--block-size: for GET (Block2), PUT or POST (Block1), not DELETE");
            }
        }
        return crate::cli::tcp::client(&runtime()?, &args, args.method.code(), &payload);
    }
    tcp_only("--nodelay", args.nodelay)?;
    tcp_only("--tcp-congestion", args.tcp_congestion.is_some())?;
    let limit = seconds("timeout", args.timeout)?;
    let blockwise = args.block_size.is_some() || payload.len() > MAX_BLOCK;
    if blockwise {
        if args.count > 1 {
            bail!("--block-size: a block-wise transfer runs once; not with --count");
        }
        if args.non {
            bail!("--non: block-wise transfers use Confirmable requests");
        }
        if args.method == Method::Delete {
            bail!("--block-size: for GET (Block2), PUT or POST (Block1), not DELETE");
        }
    }
    let opts = ClientOptions {
        algorithm: AlgorithmSpec::named(&args.cc),
        max_retransmit: args.max_retransmit,
        nstart: 1,
        token_len: args.token_len,
        seed: args.seed.unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
        }),
        keep_payload: true,
    };
    runtime()?.block_on(async move {
        let t = target::resolve(&args.uri).await?;
        let local: SocketAddr = if t.addr.is_ipv4() {
            "0.0.0.0:0".parse().expect("valid")
        } else {
            "[::]:0".parse().expect("valid")
        };
        let mut c = NetClient::bind(local, &opts, Clock::start()).await?;
        if blockwise {
            return block_transfer(&mut c, &args, t.addr, &t.path, payload, limit).await;
        }
        let req = Request {
            method: args.method.code(),
            path: &t.path,
            payload: &payload,
            confirmable: !args.non,
        };
        let mut stdout = std::io::stdout().lock();
        let mut rtts = Vec::new();
        let mut failed = 0u32;
        let mut errors = 0u32;
        if args.count > 1 {
            writeln!(
                stdout,
                "{:>6}  {:<8} {:>10}  {:>7}  {:>4}  timers (s)",
                "#", "code", "rtt (ms)", "rexmits", "echo"
            )
            .context(STDOUT)?;
        }
        let mut mismatched = 0u32;
        let mut echo_retries = 0u32;
        for i in 0..args.count {
            let r = c.exchange(t.addr, &req, limit).await?;
            if r.mismatched_responses > 0 {
                eprintln!(
                    "{} piggybacked response(s) with the request's Message ID but another token \
                     acknowledged it without answering it (RFC 7252 §5.3.2)",
                    r.mismatched_responses
                );
            }
            mismatched += r.mismatched_responses;
            echo_retries += r.echo_retries;
            if args.count == 1 {
                match &r.outcome {
                    Outcome::Response { code, payload, .. } => {
                        let timers: Vec<String> =
                            r.timers.iter().map(|t| format!("{t:.3}")).collect();
                        if r.echo_retries > 0 {
                            eprintln!(
                                "4.01 with an Echo option from {}: the request was sent again \
                                 with the Echo value (RFC 9175)",
                                t.addr
                            );
                        }
                        eprintln!(
                            "{code} from {} in {:.3} ms, {} retransmission(s), timers [{}] s",
                            t.addr,
                            r.elapsed as f64 / 1e6,
                            r.retransmissions,
                            timers.join(", ")
                        );
                        stdout.write_all(payload).context(STDOUT)?;
                        if !payload.is_empty() && payload.last() != Some(&b'\n') {
                            writeln!(stdout).context(STDOUT)?;
                        }
                    }
                    Outcome::Failed(reason) => {
                        let what = format!(
                            "exchange failed ({reason:?}) after {} retransmission(s)",
                            r.retransmissions
                        );
                        if !args.no_fail {
                            bail!("{what} (exit 0 with --no-fail)");
                        }
                        eprintln!("{what}");
                    }
                }
                stdout.flush().context(STDOUT)?;
                if let Outcome::Response { code, .. } = &r.outcome {
                    if load::is_error(*code) && !args.no_fail {
                        bail!("error response {code} (exit 0 with --no-fail)");
                    }
                }
                return Ok(());
            }
            writeln!(stdout, "{}", exchange_line(i, &r)).context(STDOUT)?;
            match r.outcome {
                Outcome::Response { code, .. } => {
                    rtts.push(r.elapsed as f64 / 1e6);
                    if load::is_error(code) {
                        errors += 1;
                    }
                }
                Outcome::Failed(_) => failed += 1,
            }
        }
        let p = Percentiles::of(&mut rtts);
        writeln!(
            stdout,
            "{} exchanges, {} failed, {} error responses; RTT (ms) min {:.3} median {:.3} p90 {:.3} max {:.3}",
            args.count, failed, errors, p.min, p.p50, p.p90, p.max
        )
        .context(STDOUT)?;
        if mismatched > 0 {
            writeln!(
                stdout,
                "{mismatched} piggybacked response(s) with a token not their exchange's"
            )
            .context(STDOUT)?;
        }
        if echo_retries > 0 {
            writeln!(
                stdout,
                "{echo_retries} request(s) sent again with an Echo option after a 4.01 challenge"
            )
            .context(STDOUT)?;
        }
        if failed > 0 && !args.no_fail {
            bail!("{failed} exchange(s) failed (exit 0 with --no-fail)");
        }
        if errors > 0 && !args.no_fail {
            bail!("{errors} error response(s) (4.xx or 5.xx; exit 0 with --no-fail)");
        }
        Ok(())
    })
}

/// The largest block (RFC 7959 SZX 6), and the largest payload sent in one
/// request without Block1.
const MAX_BLOCK: usize = 1024;

/// The largest body `coapcc client` downloads or uploads block-wise.
pub(crate) const MAX_BLOCKWISE: usize = 64 << 20;

/// `coapcc client` with `--block-size` (or a payload over [`MAX_BLOCK`]): a
/// Block2 download (GET) or Block1 upload (PUT, POST); the body or final
/// payload to standard output, the figures to standard error.
async fn block_transfer(
    c: &mut NetClient,
    args: &ClientArgs,
    peer: SocketAddr,
    path: &str,
    payload: Vec<u8>,
    limit: Duration,
) -> Result<()> {
    use coapcc_net::blockwise;
    let method = args.method.code();
    let sent = payload.len();
    let r = if method == coapcc_proto::message::Code::GET {
        blockwise::download(c, peer, path, args.block_size, MAX_BLOCKWISE, limit).await?
    } else {
        let size = args.block_size.unwrap_or(MAX_BLOCK);
        blockwise::upload(c, peer, method, path, payload, size, limit).await?
    };
    print_transfer(&r, method, peer, sent, args.no_fail)
}

/// Prints a block-wise transfer's result: the figures to standard error,
/// the body (GET) or the final response's payload to standard output; an
/// error code fails unless `no_fail`.
pub fn print_transfer(
    r: &coapcc_net::blockwise::TransferReport,
    method: coapcc_proto::message::Code,
    peer: SocketAddr,
    sent: usize,
    no_fail: bool,
) -> Result<()> {
    let what = if method == coapcc_proto::message::Code::GET {
        format!("{} bytes received", r.body.len())
    } else {
        format!("{sent} bytes sent")
    };
    let blocks = r
        .block_size
        .map_or(String::new(), |b| format!(" in blocks of {b} bytes"));
    eprintln!(
        "{} from {peer}: {what}{blocks}, {} exchange(s), {} retransmission(s), completed in {:.3} ms",
        r.code,
        r.exchanges,
        r.retransmissions,
        r.elapsed.as_secs_f64() * 1e3
    );
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(&r.body).context(STDOUT)?;
    if method != coapcc_proto::message::Code::GET
        && !r.body.is_empty()
        && r.body.last() != Some(&b'\n')
    {
        writeln!(stdout).context(STDOUT)?;
    }
    stdout.flush().context(STDOUT)?;
    if load::is_error(r.code) && !no_fail {
        bail!("error response {} (exit 0 with --no-fail)", r.code);
    }
    Ok(())
}

/// Runs `coapcc server`; returns its final counters.
pub fn server(args: ServerArgs) -> Result<Snapshot> {
    let mut resources = if args.resources.is_empty() {
        Resources::standard()
    } else {
        Resources::new()
    };
    for r in &args.resources {
        resources.add_spec(r).map_err(|e| anyhow!(e))?;
    }
    resources
        .set_block_size(args.block_size)
        .map_err(|e| anyhow!("--block-size: {e}"))?;
    let opts = ServerOptions {
        echo: !args.no_echo,
        max_cache_entries: args.cache.max(1),
        exchange_lifetime: seconds("lifetime", args.lifetime)?,
        amplification: coapcc_net::amplification::AmplificationLimit {
            factor: args.amplification_factor,
            exempt_loopback: true,
        },
        notify_algorithm: AlgorithmSpec::named(&args.notify_cc),
    };
    let duration = args.duration.map(|d| seconds("duration", d)).transpose()?;
    let paths: Vec<String> = resources.paths().map(|p| format!("/{p}")).collect();
    let tcp_resources = resources.clone();
    let h = server::spawn(args.listen, opts, resources)?;
    let tcp = crate::cli::tcp::spawn_server(&args, h.addr(), tcp_resources)?;
    match &tcp {
        Some(t) => eprintln!(
            "coapcc server on {} (UDP) and {} (TCP) serving {}",
            h.addr(),
            t.addr(),
            paths.join(" ")
        ),
        None => eprintln!("coapcc server on {} serving {}", h.addr(), paths.join(" ")),
    }
    runtime()?.block_on(until_stopped(duration));
    let tcp = tcp.map(|t| t.stop());
    let s = h.stop();
    eprintln!(
        "{} datagrams: {} requests, {} duplicates, {} malformed, {} rejected, {} ignored; \
         {} challenged and {} withheld (amplification bound), {} oversized; cache peak {}",
        s.datagrams,
        s.stats.requests,
        s.stats.duplicates,
        s.stats.malformed,
        s.stats.rejected,
        s.stats.ignored,
        s.challenged,
        s.withheld,
        s.oversized,
        s.max_cached
    );
    let o = s.observe;
    if o.registered + o.refused + o.notifications > 0 {
        eprintln!(
            "observe: {} registrations ({} refused), {} notifications ({} retransmissions, \
             {} acknowledged); observers removed: {} deregistered, {} reset, {} timed out; \
             {} left",
            o.registered,
            o.refused,
            o.notifications,
            o.retransmissions,
            o.acknowledged,
            o.deregistered,
            o.reset,
            o.timed_out,
            o.observers
        );
    }
    if let Some(t) = tcp {
        eprintln!("{}", crate::cli::tcp::server_summary(&t));
    }
    Ok(s)
}

/// Parses `LO-HI`.
fn parse_batch(s: &str) -> Result<[u32; 2]> {
    let (a, b) = s
        .split_once('-')
        .ok_or_else(|| anyhow!("--batch: expected LO-HI, found `{s}`"))?;
    let (a, b): (u32, u32) = (a.trim().parse()?, b.trim().parse()?);
    if a == 0 || b < a {
        bail!("--batch: expected 1 <= LO <= HI, found `{s}`");
    }
    Ok([a, b])
}

/// Runs `coapcc load`.
pub fn load(args: LoadArgs) -> Result<LoadOutcome> {
    let kind = WorkloadKind::parse(&args.workload)
        .filter(|k| k.is_request_response())
        .ok_or_else(|| {
            anyhow!(
                "--workload: expected continuous or random, found `{}` (observe with \
                 `coapcc client --observe`; transfer block-wise with `coapcc client --block-size`)",
                args.workload
            )
        })?;
    if args.token_len > 8 {
        bail!(
            "--token-len: expected 0 to 8 bytes, found {}",
            args.token_len
        );
    }
    let rt = runtime()?;
    let workload = Workload {
        kind,
        exchanges: args.exchanges,
        batch: parse_batch(&args.batch)?,
        ..Default::default()
    };
    if !(1..=load::MAX_NSTART).contains(&args.nstart) {
        bail!(
            "--nstart: expected 1 to {} exchanges outstanding per client, found {}",
            load::MAX_NSTART,
            args.nstart
        );
    }
    let bind = crate::cli::tcp::parse_bind(&args.bind)?;
    if target::is_tcp(&args.uri) {
        return crate::cli::tcp::load(&rt, &args, workload, bind);
    }
    tcp_only("--nodelay", args.nodelay)?;
    tcp_only("--tcp-congestion", args.tcp_congestion.is_some())?;
    let t = rt.block_on(target::resolve(&args.uri))?;
    let spec = LoadSpec {
        target: t.addr,
        path: t.path,
        clients: args.clients,
        workload,
        algorithm: AlgorithmSpec::named(&args.cc),
        max_retransmit: args.max_retransmit,
        token_len: args.token_len,
        nstart: args.nstart,
        seed: args.seed,
        time_limit: seconds("time-limit", args.time_limit)?,
    };
    let r = rt.block_on(load::run_bound(&spec, &bind))?;
    let summary = Summary::of(&args.cc, 0, std::slice::from_ref(&r.result));
    Ok(LoadOutcome {
        spec,
        uri: args.uri,
        result: r.result,
        summary,
        codes: r.codes,
        echo_retries: r.echo_retries,
        transport: Transport::Udp,
        connections: None,
        max_outstanding: Some(r.max_outstanding),
    })
}

/// Runs `coapcc emulate`; returns its final report.
pub fn emulate(args: EmulateArgs) -> Result<EmulatorReport> {
    let network = emulate_network(&args)?;
    if args.max_clients == 0 {
        bail!("--max-clients: expected at least 1");
    }
    let idle_timeout = seconds("idle-timeout", args.idle_timeout)?;
    let duration = args.duration.map(|d| seconds("duration", d)).transpose()?;
    if args.ip.max_held_bytes == Some(0) {
        bail!("--max-held-bytes: expected at least 1");
    }
    let rt = runtime()?;
    let server_arg = args.server.as_deref().unwrap_or_default();
    let server = rt
        .block_on(tokio::net::lookup_host(server_arg))
        .with_context(|| format!("--server: cannot resolve `{server_arg}`"))?
        .next()
        .ok_or_else(|| anyhow!("--server: `{server_arg}` has no address"))?;
    let opts = EmulatorOptions {
        network: network.clone(),
        seed: args.seed,
        max_clients: args.max_clients,
        idle_timeout,
        max_held_bytes: args
            .ip
            .max_held_bytes
            .unwrap_or(coapcc_net::emulate::EmulatorOptions::default().max_held_bytes),
        ..EmulatorOptions::default()
    };
    let h = emulate::spawn(args.listen, server, opts)?;
    eprintln!("{}", emulator_startup(h.addr(), server, &network));
    rt.block_on(until_stopped(duration));
    let r = h.stop();
    eprintln!("{}", emulator_summary(&network, &r));
    Ok(r)
}

/// The JSON document `coapcc load --format json` prints: the summary
/// without the keys only the bottleneck measures
/// ([`crate::networks::dumbbell::output::NETWORK_KEYS`]).
pub fn load_json(o: &LoadOutcome) -> String {
    let mut summary = serde_json::to_value(&o.summary).expect("serialisable");
    if let Some(map) = summary.as_object_mut() {
        for key in crate::networks::dumbbell::output::NETWORK_KEYS {
            map.remove(key);
        }
        if o.transport == Transport::Tcp {
            // CoAP does not retransmit over TCP: no such count exists.
            map.insert("unnecessary".into(), serde_json::Value::Null);
        }
    }
    let fct: Vec<Option<f64>> = o.result.clients.iter().map(|c| c.fct).collect();
    let doc = serde_json::json!({
        "transport": o.transport.name(),
        "connections": o.connections,
        "fct_s": fct,
        "failed_exchanges": o.summary.failed_exchanges,
        "unfinished_clients": o.summary.unfinished_clients,
        "target": o.uri,
        "clients": o.spec.clients,
        "workload": o.spec.workload,
        "algorithm": o.spec.algorithm,
        "max_retransmit": o.spec.max_retransmit,
        "nstart": o.spec.nstart,
        "max_outstanding": o.max_outstanding,
        "seed": o.spec.seed,
        "duration": o.result.duration,
        "responses": o.codes.iter().map(|(c, n)| (c.to_string(), *n)).collect::<BTreeMap<String, u64>>(),
        "error_responses": o.error_responses(),
        "echo_retries": o.echo_retries,
        "algorithms": [summary],
    });
    serde_json::to_string_pretty(&doc).expect("serialisable")
}

/// The header line of `coapcc load`'s table.
pub fn load_header(o: &LoadOutcome) -> String {
    let mut h = format!(
        "load against {} — {} clients, {} workload, {} exchanges each, {:.2} s wall time; responses: {}",
        o.uri,
        o.spec.clients,
        o.spec.workload.kind.name(),
        o.spec.workload.exchanges,
        o.result.duration,
        o.codes_line()
    );
    if o.echo_retries > 0 {
        h.push_str(&format!(
            "\nrequests sent again with an Echo option (the server's 4.01 challenge, RFC 9175): {}",
            o.echo_retries
        ));
    }
    if o.spec.nstart > 1 {
        h.push_str(&format!(
            "\nNSTART {}: at most {} exchange(s) in flight at once per client",
            o.spec.nstart,
            o.max_outstanding.unwrap_or(0)
        ));
    }
    if let Some(n) = o.connections {
        h.push_str(&format!(
            "\nTCP connections opened: {n}; unnecessary retransmissions: none at the CoAP \
             layer (CoAP sends each request once over TCP; TCP's own retransmissions are the \
             kernel's, not counted here)"
        ));
    }
    h
}
