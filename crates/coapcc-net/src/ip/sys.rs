//! The few system calls the IP mode needs that std does not offer: opening a
//! TUN device (`TUNSETIFF` on `/dev/net/tun`), signalling a process group,
//! and the effective user id. The only `unsafe` code of the crate lives here.
#![allow(unsafe_code)]

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;

/// `TUNSETIFF` (`_IOW('T', 202, int)`).
const TUNSETIFF: libc::c_ulong = 0x4004_54ca;
/// `IFF_TUN`: layer-3 packets.
const IFF_TUN: libc::c_short = 0x0001;
/// `IFF_NO_PI`: no 4-byte packet-information prefix.
const IFF_NO_PI: libc::c_short = 0x1000;

/// `struct ifreq` as `TUNSETIFF` reads it: the name, then the flags (the
/// rest of the union is padding).
#[repr(C)]
struct IfReq {
    name: [libc::c_char; libc::IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

/// Opens a new non-persistent TUN device (`IFF_TUN | IFF_NO_PI`) named
/// `name` in the current network namespace, non-blocking. The device exists
/// as long as the returned file is open.
pub fn open_tun(name: &str) -> io::Result<File> {
    if name.is_empty() || name.len() >= libc::IFNAMSIZ || !name.is_ascii() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("interface name `{name}`: expected 1 to 15 ASCII characters"),
        ));
    }
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open("/dev/net/tun")?;
    let mut req = IfReq {
        name: [0; libc::IFNAMSIZ],
        flags: IFF_TUN | IFF_NO_PI,
        _pad: [0; 22],
    };
    for (dst, src) in req.name.iter_mut().zip(name.bytes()) {
        *dst = src as libc::c_char;
    }
    // SAFETY: `file` is an open descriptor of /dev/net/tun; `req` is a valid,
    // initialised `struct ifreq` layout (name NUL-terminated: at most 15 bytes
    // written into 16) that outlives the call; TUNSETIFF reads and writes
    // only within it.
    let rc = unsafe { libc::ioctl(file.as_raw_fd(), TUNSETIFF as _, &mut req as *mut IfReq) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(file)
}

/// Sends `signal` to every process of process group `pgid`. `Ok(false)` if
/// the group no longer exists.
pub fn kill_group(pgid: u32, signal: libc::c_int) -> io::Result<bool> {
    let Ok(pgid) = libc::pid_t::try_from(pgid) else {
        return Ok(false);
    };
    if pgid <= 1 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "refusing to signal process group 0 or 1",
        ));
    }
    // SAFETY: kill(2) has no memory effects; a negative pid names a process
    // group, and pgid > 1 excludes the caller's own group (0) and init.
    let rc = unsafe { libc::kill(-pgid, signal) };
    if rc == 0 {
        return Ok(true);
    }
    let e = io::Error::last_os_error();
    if e.raw_os_error() == Some(libc::ESRCH) {
        Ok(false)
    } else {
        Err(e)
    }
}

/// Sends `signal` to process `pid`. `Ok(false)` if it no longer exists.
pub fn kill_pid(pid: u32, signal: libc::c_int) -> io::Result<bool> {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return Ok(false);
    };
    if pid <= 1 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "refusing to signal pid 0 or 1",
        ));
    }
    // SAFETY: kill(2) has no memory effects; pid > 1 names one process.
    let rc = unsafe { libc::kill(pid, signal) };
    if rc == 0 {
        return Ok(true);
    }
    let e = io::Error::last_os_error();
    if e.raw_os_error() == Some(libc::ESRCH) {
        Ok(false)
    } else {
        Err(e)
    }
}

/// Whether the calling thread has CAP_NET_ADMIN in its effective set (read
/// from /proc/self/status, `CapEff`, bit 12).
pub fn has_net_admin() -> bool {
    let Ok(status) = std::fs::read_to_string("/proc/self/status") else {
        return false;
    };
    status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
        .is_some_and(|caps| caps & (1 << 12) != 0)
}

/// Registers a TUN device's file with the tokio reactor of the current
/// runtime.
pub fn register(file: File) -> io::Result<tokio::io::unix::AsyncFd<File>> {
    // SAFETY: `File` owns its descriptor; the `AsyncFd` takes the `File` by
    // value, so the descriptor is neither closed nor replaced while
    // registered (it is closed only when the `AsyncFd` is dropped, after
    // deregistration).
    unsafe { tokio::io::unix::AsyncFd::register(file) }.map_err(Into::into)
}
