//! Kernel TCP socket set-up for the coap+tcp clients: Nagle's algorithm
//! (on by default, as the evaluations ran, `docs/spec/transport-tcp-spec.md` §2), the
//! congestion-control module (`TCP_CONGESTION`, Linux) and the source
//! address, all set before the SYN leaves.

use std::io;
use std::net::{IpAddr, SocketAddr};

use anyhow::{anyhow, Result};
use socket2::{Domain, Protocol, Socket, Type};
use tokio::net::{TcpSocket, TcpStream};

/// How client sockets are set up.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SocketOptions {
    /// Set TCP_NODELAY (turn Nagle's algorithm off). Off by default: the
    /// evaluations ran with Nagle on.
    pub nodelay: bool,
    /// The kernel's congestion-control module for the socket (e.g. `reno`,
    /// `cubic`); `None` keeps the system default.
    pub congestion: Option<String>,
    /// Source address to bind (port chosen by the kernel); `None` lets the
    /// kernel choose.
    pub bind: Option<IpAddr>,
}

/// The congestion-control modules the kernel offers (Linux; empty elsewhere).
pub fn available_congestion() -> String {
    std::fs::read_to_string("/proc/sys/net/ipv4/tcp_available_congestion_control")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// Sets `name` as `socket`'s congestion control, with an error that names
/// the option and lists what the kernel offers.
#[cfg(any(target_os = "linux", target_os = "freebsd"))]
fn set_congestion(socket: &socket2::SockRef<'_>, name: &str) -> Result<()> {
    socket.set_tcp_congestion(name.as_bytes()).map_err(|e| {
        let offered = available_congestion();
        anyhow!(
            "--tcp-congestion {name}: the kernel refused it ({e}); available here: {}",
            if offered.is_empty() {
                "unknown"
            } else {
                &offered
            }
        )
    })?;
    let set = socket.tcp_congestion()?;
    let set = String::from_utf8_lossy(&set);
    if set.trim_end_matches('\0') != name {
        return Err(anyhow!(
            "--tcp-congestion {name}: the kernel set `{}` instead",
            set.trim_end_matches('\0')
        ));
    }
    Ok(())
}

#[cfg(not(any(target_os = "linux", target_os = "freebsd")))]
fn set_congestion(_socket: &socket2::SockRef<'_>, name: &str) -> Result<()> {
    Err(anyhow!(
        "--tcp-congestion {name}: choosing the congestion control per socket needs Linux or FreeBSD"
    ))
}

/// Applies Nagle's setting and the congestion control to an accepted
/// stream, before any byte is written on it.
pub fn apply_accepted(stream: &TcpStream, nodelay: bool, congestion: Option<&str>) -> Result<()> {
    stream.set_nodelay(nodelay)?;
    if let Some(name) = congestion {
        set_congestion(&socket2::SockRef::from(stream), name)?;
    }
    Ok(())
}

/// A TCP socket for reaching `peer`, with `opts` applied, not yet connected.
pub fn prepare(peer: SocketAddr, opts: &SocketOptions) -> Result<TcpSocket> {
    let socket = Socket::new(Domain::for_address(peer), Type::STREAM, Some(Protocol::TCP))?;
    socket.set_nonblocking(true)?;
    socket.set_tcp_nodelay(opts.nodelay)?;
    if let Some(name) = &opts.congestion {
        set_congestion(&socket2::SockRef::from(&socket), name)?;
    }
    if let Some(ip) = opts.bind {
        socket
            .bind(&SocketAddr::new(ip, 0).into())
            .map_err(|e| anyhow!("--bind {ip}: cannot bind a TCP socket to it ({e})"))?;
    }
    Ok(TcpSocket::from_std_stream(std::net::TcpStream::from(
        socket,
    )))
}

/// Checks `opts` once (a socket is made and dropped), so that a refused
/// congestion-control name or source address fails before any client starts.
pub fn check(peer: SocketAddr, opts: &SocketOptions) -> Result<()> {
    prepare(peer, opts).map(drop)
}

/// Connects to `peer` with `opts` applied before the SYN.
pub async fn connect(peer: SocketAddr, opts: &SocketOptions) -> io::Result<TcpStream> {
    let socket = prepare(peer, opts).map_err(io::Error::other)?;
    socket.connect(peer).await
}

/// Whether Nagle's algorithm is off on `stream`, read back from the kernel.
pub fn nodelay(stream: &TcpStream) -> io::Result<bool> {
    stream.nodelay()
}

/// The congestion control in force on `stream` (Linux, FreeBSD).
#[cfg(any(target_os = "linux", target_os = "freebsd"))]
pub fn congestion(stream: &TcpStream) -> io::Result<String> {
    let s = socket2::SockRef::from(stream).tcp_congestion()?;
    Ok(String::from_utf8_lossy(&s)
        .trim_end_matches('\0')
        .to_string())
}
