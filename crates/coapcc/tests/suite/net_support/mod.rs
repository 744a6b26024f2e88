//! Shared helpers of the real-network tests: external peers (started and
//! killed by the test, skipped with a message when not installed), free
//! loopback ports, and a blocking front to `coapcc_net`'s async client.
#![allow(dead_code)]

use std::net::{SocketAddr, UdpSocket};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use coapcc_net::client::{ClientOptions, ExchangeReport, NetClient};
use coapcc_net::clock::Clock;
use coapcc_net::tokio;
use coapcc_proto::client::Request;
use coapcc_proto::message::Code;

/// A loopback address with a port nobody uses right now.
/// A loopback address with port 0: whatever binds it gets a free port
/// (no race with other tests, unlike [`free_addr`]).
pub fn any_port() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 0))
}

/// A loopback address with a port free a moment ago, for a child process
/// that must be told its port beforehand.
pub fn free_addr() -> SocketAddr {
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    s.local_addr().unwrap()
}

/// Whether `bin` is on the PATH.
pub fn have(bin: &str) -> bool {
    Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {bin}"))
        .stdout(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// Whether Python can import aiocoap.
pub fn have_aiocoap() -> bool {
    Command::new("python3")
        .args(["-c", "import aiocoap"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// Prints why a test is skipped (only when a peer is not installed) — or,
/// when `COAPCC_REQUIRE_PEERS` is set (CI sets it), fails the test: CI can
/// never pass without the real peers.
pub fn skip(test: &str, why: &str) {
    if std::env::var_os("COAPCC_REQUIRE_PEERS").is_some() {
        panic!("{test}: {why}, and COAPCC_REQUIRE_PEERS is set (.ci/run installs the peers)");
    }
    eprintln!("SKIPPED {test}: {why} (installed in CI by .ci/run)");
}

/// A child process killed (by its own id) when dropped.
pub struct Peer(pub Child);

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A current-thread runtime for driving the async client.
pub fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Runs `count` exchanges of `method path payload` against `server` with
/// `opts`, returning each report; `after` sees the client after each one.
pub fn exchanges(
    server: SocketAddr,
    opts: &ClientOptions,
    method: Code,
    path: &str,
    payload: &[u8],
    count: usize,
    mut after: impl FnMut(&NetClient, &ExchangeReport),
) -> Vec<ExchangeReport> {
    rt().block_on(async {
        let mut c = NetClient::bind("127.0.0.1:0".parse().unwrap(), opts, Clock::start())
            .await
            .unwrap();
        let req = Request {
            method,
            path,
            payload,
            confirmable: true,
        };
        let mut out = Vec::new();
        for _ in 0..count {
            let r = c
                .exchange(server, &req, Duration::from_secs(10))
                .await
                .unwrap();
            after(&c, &r);
            out.push(r);
        }
        out
    })
}

/// Waits (at most 10 s) until a CoAP GET of `path` at `server` is answered.
pub fn wait_ready(server: SocketAddr, path: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    let opts = ClientOptions {
        max_retransmit: 0,
        ..ClientOptions::default()
    };
    let ok = rt().block_on(async {
        let mut c = NetClient::bind("127.0.0.1:0".parse().unwrap(), &opts, Clock::start())
            .await
            .unwrap();
        let req = Request {
            method: Code::GET,
            path,
            payload: &[],
            confirmable: true,
        };
        while Instant::now() < deadline {
            if let Ok(r) = c.exchange(server, &req, Duration::from_millis(300)).await {
                if matches!(r.outcome, coapcc_net::client::Outcome::Response { .. }) {
                    return true;
                }
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        false
    });
    assert!(ok, "peer at {server} never answered GET /{path}");
}

/// Starts libcoap's server on a free loopback port.
pub fn libcoap_server() -> Option<(Peer, SocketAddr)> {
    if !have("coap-server-notls") {
        return None;
    }
    let addr = free_addr();
    let child = Command::new("coap-server-notls")
        .args([
            "-A",
            "127.0.0.1",
            "-d",
            "10",
            "-p",
            &addr.port().to_string(),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let peer = Peer(child);
    wait_ready(addr, "");
    Some((peer, addr))
}

/// Starts the aiocoap test server on a free loopback port.
pub fn aiocoap_server() -> Option<(Peer, SocketAddr)> {
    if !have_aiocoap() {
        return None;
    }
    let addr = free_addr();
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../coapcc-net/tests/peers/aiocoap_server.py"
    );
    let child = Command::new("python3")
        .args([script, &addr.port().to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let peer = Peer(child);
    wait_ready(addr, "sense");
    Some((peer, addr))
}

/// Runs a command with a 20 s bound; returns (success, stdout, stderr).
pub fn run_bounded(cmd: &mut Command) -> (bool, String, String) {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A coap+tcp peer on loopback that writes, on every connection it accepts,
/// a valid CSM and then 2.05 responses with a token no request has (1 byte;
/// coapcc's tokens are 0 or 4 bytes long) as fast as the client reads
/// them, never answering. Small segments (MSS 1400) without Nagle keep the
/// client's socket readable at every read. Stops when dropped, or after
/// 15 s.
pub struct TcpFlood {
    pub addr: SocketAddr,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl TcpFlood {
    pub fn start() -> Self {
        use std::io::Write;
        use std::sync::atomic::{AtomicBool, Ordering};
        let sock =
            socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
        sock.set_tcp_mss(1400).unwrap();
        sock.bind(&SocketAddr::from(([127, 0, 0, 1], 0)).into())
            .unwrap();
        sock.listen(8).unwrap();
        let listener: std::net::TcpListener = sock.into();
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let thread = std::thread::spawn(move || {
            // CSM (7.01, no options), then 2.05 frames: Len 0, TKL 1, token F0.
            let flood: Vec<u8> = [0x01, 0x45, 0xF0].repeat(1 << 20);
            let end = Instant::now() + Duration::from_secs(15);
            let mut writers = Vec::new();
            while !s.load(Ordering::Relaxed) && Instant::now() < end {
                let Ok((mut conn, _)) = listener.accept() else {
                    std::thread::sleep(Duration::from_millis(5));
                    continue;
                };
                conn.set_nonblocking(false).unwrap();
                conn.set_nodelay(true).unwrap();
                conn.set_write_timeout(Some(Duration::from_millis(200)))
                    .unwrap();
                let (s, flood) = (s.clone(), flood.clone());
                writers.push(std::thread::spawn(move || {
                    let mut ok = conn.write_all(&[0x00, 0xE1]).is_ok();
                    // Whole frames only: a partial write goes on where it stopped.
                    let mut at = 0;
                    while ok && !s.load(Ordering::Relaxed) && Instant::now() < end {
                        ok = match conn.write(&flood[at..]) {
                            Ok(n) => {
                                at = (at + n) % flood.len();
                                n > 0
                            }
                            Err(e) => matches!(
                                e.kind(),
                                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                            ),
                        };
                    }
                }));
            }
            for w in writers {
                let _ = w.join();
            }
        });
        TcpFlood {
            addr,
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for TcpFlood {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
