//! coapcc's server under a flood of malformed datagrams (random bytes,
//! truncated options, bad token lengths, reserved codes, wrong versions) and
//! of valid requests from many endpoints: it keeps answering a legitimate
//! client, never panics, keeps its deduplication cache within its cap, and
//! its memory does not grow with the traffic.

#[path = "suite/net_support/mod.rs"]
mod net_support;

use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use coapcc_link::rng::SimRng;
use coapcc_net::client::{ClientOptions, Outcome};
use coapcc_net::resources::Resources;
use coapcc_net::server::{self, ServerOptions};
use coapcc_proto::message::Code;
use coapcc_sim::AlgorithmSpec;
use net_support::{any_port, exchanges};

const CAP: usize = 256;

/// Resident set size of this process (kB), from /proc/self/status.
fn rss_kb() -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    s.lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap()
}

/// One hostile or junk datagram of kind `k`.
fn junk(rng: &mut SimRng, k: u64, buf: &mut Vec<u8>) {
    buf.clear();
    let mid = (rng.next_u64() as u16).to_be_bytes();
    match k % 8 {
        // random bytes of random length (0–1500)
        0 => {
            let n = (rng.next_u64() % 1501) as usize;
            buf.extend((0..n).map(|_| rng.next_u64() as u8));
        }
        // a CON GET whose option claims more bytes than remain
        1 => buf.extend_from_slice(&[0x40, 0x01, mid[0], mid[1], 0xBD, 0x20, b'a', b'b']),
        // token length 9–15 (reserved)
        2 => {
            let tkl = 9 + (rng.next_u64() % 7) as u8;
            buf.extend_from_slice(&[0x40 | tkl, 0x01, mid[0], mid[1]]);
            buf.extend((0..tkl).map(|_| 0xAA));
        }
        // reserved code classes 1, 6 and 7
        3 => {
            let class = [1u8, 6, 7][(rng.next_u64() % 3) as usize];
            buf.extend_from_slice(&[0x40, class << 5 | 1, mid[0], mid[1]]);
        }
        // version 0, 2 or 3
        4 => {
            let v = [0u8, 2, 3][(rng.next_u64() % 3) as usize];
            buf.extend_from_slice(&[v << 6, 0x01, mid[0], mid[1]]);
        }
        // payload marker followed by nothing
        5 => buf.extend_from_slice(&[0x40, 0x01, mid[0], mid[1], 0xFF]),
        // reserved option delta nibble 15 (not a payload marker)
        6 => buf.extend_from_slice(&[0x50, 0x01, mid[0], mid[1], 0x7, 0xF1, b'x']),
        // a valid CON GET with a fresh Message ID: fills the dedup cache
        _ => {
            buf.extend_from_slice(&[0x40, 0x01, mid[0], mid[1], 0xB5]);
            buf.extend_from_slice(b"sense");
        }
    }
}

/// Sends `n` junk datagrams from `sockets` (at most `limit` wall time);
/// drains replies so that the flooders' receive buffers do not fill.
fn flood(to: SocketAddr, sockets: &[UdpSocket], rng: &mut SimRng, n: u64, limit: Duration) -> u64 {
    let start = Instant::now();
    let mut buf = Vec::with_capacity(1500);
    let mut rx = [0u8; 1500];
    let mut sent = 0;
    for i in 0..n {
        if start.elapsed() > limit {
            break;
        }
        junk(rng, i, &mut buf);
        let s = &sockets[(i as usize) % sockets.len()];
        if s.send_to(&buf, to).is_ok() {
            sent += 1;
        }
        while s.recv_from(&mut rx).is_ok() {}
        if i % 64 == 0 {
            // leave the server a moment, as a real link would
            std::thread::sleep(Duration::from_micros(200));
        }
    }
    sent
}

#[test]
fn server_survives_malformed_flood_with_bounded_memory() {
    let srv = server::spawn(
        any_port(),
        ServerOptions {
            max_cache_entries: CAP,
            ..ServerOptions::default()
        },
        Resources::standard(),
    )
    .unwrap();
    let addr = srv.addr();
    let sockets: Vec<UdpSocket> = (0..8)
        .map(|_| {
            let s = UdpSocket::bind("127.0.0.1:0").unwrap();
            s.set_nonblocking(true).unwrap();
            s
        })
        .collect();
    let mut rng = SimRng::new(99);
    // Warm-up: fill the cache and let allocations settle.
    let warm = flood(addr, &sockets, &mut rng, 20_000, Duration::from_secs(5));
    let rss_before = rss_kb();
    // The flood, with a legitimate client working at the same time.
    let flooder = std::thread::spawn(move || {
        let mut rng = SimRng::new(7);
        flood(addr, &sockets, &mut rng, 150_000, Duration::from_secs(8))
    });
    let opts = ClientOptions {
        algorithm: AlgorithmSpec {
            ack_timeout: Some(0.2),
            ..AlgorithmSpec::named("default")
        },
        max_retransmit: 20,
        ..ClientOptions::default()
    };
    let reports = exchanges(addr, &opts, Code::GET, "sense", b"", 20, |_, _| {});
    let flooded = flooder.join().unwrap();
    let rss_after = rss_kb();
    for r in &reports {
        let Outcome::Response { code, payload, .. } = &r.outcome else {
            panic!("a legitimate exchange failed: {r:?}")
        };
        assert_eq!((*code, payload.len()), (Code::CONTENT, 60));
    }
    let snap = srv.stop();
    eprintln!(
        "flooded {} + {flooded} datagrams; {snap:?}; RSS {rss_before} → {rss_after} kB",
        warm
    );
    assert!(flooded > 10_000, "the flood ran: {flooded}");
    // the server thread ended normally (a panic would give an empty snapshot)
    assert!(snap.datagrams > 10_000);
    assert!(snap.stats.malformed > 5_000, "{snap:?}");
    assert!(snap.stats.requests > 1_000, "{snap:?}");
    assert!(snap.max_cached <= CAP, "{snap:?}");
    assert!(snap.stats.evicted > 0, "the cap was reached");
    assert!(
        rss_after < rss_before + 8 * 1024,
        "RSS grew from {rss_before} kB to {rss_after} kB"
    );
}
