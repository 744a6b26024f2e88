//! RFC 8323 on real loopback sockets: the coap+tcp server and client of
//! `coapcc_net::tcp` against each other and against a raw `TcpStream`
//! writing hand-made frames. Every wait is bounded.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use coapcc_net::resources::Resources;
use coapcc_net::tcp::client::TcpClient;
use coapcc_net::tcp::server::{self, TcpServerHandle, TcpServerOptions};
use coapcc_net::tcp::socket::{self, SocketOptions};
use coapcc_proto::message::Code;
use coapcc_proto::tcp::{encode_frame, Csm, FrameDecoder};

const LIMIT: Duration = Duration::from_secs(10);

fn start(opts: TcpServerOptions) -> TcpServerHandle {
    server::spawn(
        "127.0.0.1:0".parse().unwrap(),
        opts,
        Arc::new(Mutex::new(Resources::standard())),
    )
    .unwrap()
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn frame(code: u8, token: &[u8], options: &[(u16, &[u8])], payload: &[u8]) -> Vec<u8> {
    let mut b = vec![0u8; 2048];
    let n = encode_frame(&mut b, Code(code), token, options, payload).unwrap();
    b.truncate(n);
    b
}

/// A frame read back: (code, token, payload).
type Frame = (u8, Vec<u8>, Vec<u8>);

/// Everything the server sends until it closes (bounded), as (code, token,
/// payload) frames, and whether the stream ended.
fn read_frames(s: &mut TcpStream) -> (Vec<Frame>, bool) {
    s.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let mut d = FrameDecoder::new(1 << 20);
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    let end = Instant::now() + LIMIT;
    let mut closed = false;
    while Instant::now() < end {
        match s.read(&mut buf) {
            Ok(0) => {
                closed = true;
                break;
            }
            Ok(n) => d.push(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {
                closed = true;
                break;
            }
            Err(_) => {} // read timeout: keep waiting until the bound
        }
        while let Some(f) = d.next_frame().unwrap() {
            out.push((f.code.0, f.token.to_vec(), f.payload.to_vec()));
        }
    }
    (out, closed)
}

/// Reads frames until `want` of them arrived (bounded).
fn read_n(s: &mut TcpStream, want: usize) -> Vec<Frame> {
    s.set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let mut d = FrameDecoder::new(1 << 20);
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    let end = Instant::now() + LIMIT;
    while out.len() < want && Instant::now() < end {
        if let Ok(n) = s.read(&mut buf) {
            assert!(n > 0, "the server closed early");
            d.push(&buf[..n]);
        }
        while let Some(f) = d.next_frame().unwrap() {
            out.push((f.code.0, f.token.to_vec(), f.payload.to_vec()));
        }
    }
    out
}

fn raw(addr: SocketAddr) -> TcpStream {
    TcpStream::connect_timeout(&addr, LIMIT).unwrap()
}

/// The server's CSM comes first and states its Max-Message-Size; the
/// client's CSM is honoured too: a response larger than the client's
/// Max-Message-Size is not sent (5.00 instead), a smaller one is.
#[test]
fn csm_exchange_in_both_directions() {
    let h = start(TcpServerOptions {
        max_message_size: 300,
        ..TcpServerOptions::default()
    });
    let mut s = raw(h.addr());
    let first = read_n(&mut s, 1);
    assert_eq!(first[0].0, 0xE1, "the server's first message is its CSM");
    drop(s);

    let rt = rt();
    rt.block_on(async {
        let mut c = TcpClient::connect(
            h.addr(),
            &SocketOptions::default(),
            Csm {
                max_message_size: 200,
                block_wise: false,
            },
            2,
        )
        .await
        .unwrap();
        let theirs = c
            .wait_csm(tokio::time::Instant::now() + LIMIT)
            .await
            .unwrap();
        assert_eq!(theirs.max_message_size, 300);
        // our Max-Message-Size 200: /large (1000 bytes) cannot come back
        let r = c.exchange(Code::GET, "large", &[], LIMIT).await.unwrap();
        assert_eq!(r.code, Code(0xA0));
        let r = c.exchange(Code::GET, "sense", &[], LIMIT).await.unwrap();
        assert_eq!((r.code, r.frame_len > 60), (Code::CONTENT, true));
        // theirs is 300: a 400-byte PUT is refused before it is sent
        let e = c
            .exchange(Code::PUT, "store", &[b'x'; 400], LIMIT)
            .await
            .unwrap_err();
        assert!(
            e.to_string().contains("Max-Message-Size (300 bytes)"),
            "{e}"
        );
        c.close().await;
    });
    let snap = h.stop();
    assert_eq!((snap.accepted, snap.requests), (2, 2));
}

#[test]
fn ping_gets_pong_and_release_closes() {
    let h = start(TcpServerOptions::default());
    let rt = rt();
    rt.block_on(async {
        let mut c = TcpClient::connect(h.addr(), &SocketOptions::default(), Csm::default(), 1)
            .await
            .unwrap();
        c.ping(LIMIT).await.unwrap();
        c.ping(LIMIT).await.unwrap();
        c.release().await.unwrap();
    });
    // Release over a raw stream: the server closes its side.
    let mut s = raw(h.addr());
    s.write_all(&frame(0xE1, &[], &[], &[])).unwrap();
    s.write_all(&frame(0xE4, &[], &[], &[])).unwrap();
    let (frames, closed) = read_frames(&mut s);
    assert_eq!(frames.len(), 1, "only the server's CSM: {frames:?}");
    assert!(closed, "Release closes the connection");
    let snap = h.stop();
    assert_eq!((snap.pings, snap.released), (2, 2));
}

/// Garbage gets an Abort (7.05) frame, then a close.
#[test]
fn malformed_input_is_aborted_then_closed() {
    let h = start(TcpServerOptions::default());
    for garbage in [
        // token length 15 (reserved)
        &[0x0f, 0x01, 1, 2, 3][..],
        // a request before any CSM
        &frame(0x01, &[1], &[(11, b"sense")], &[])[..],
        // an option nibble of 15 outside the payload marker
        &[0x00, 0xE1, 0x20, 0x01, 0xF0, 0x00][..],
    ] {
        let mut s = raw(h.addr());
        s.write_all(garbage).unwrap();
        let (frames, closed) = read_frames(&mut s);
        let codes: Vec<u8> = frames.iter().map(|f| f.0).collect();
        assert_eq!(codes, vec![0xE1, 0xE5], "CSM then Abort for {garbage:02x?}");
        assert!(closed, "closed after the Abort");
    }
    let snap = h.stop();
    assert_eq!(snap.aborted, 3);
    assert_eq!(snap.requests, 0);
}

#[test]
fn a_message_larger_than_max_message_size_is_refused() {
    let h = start(TcpServerOptions {
        max_message_size: 200,
        ..TcpServerOptions::default()
    });
    let mut s = raw(h.addr());
    s.write_all(&frame(0xE1, &[], &[], &[])).unwrap();
    s.write_all(&frame(0x03, &[9], &[(11, b"store")], &[b'x'; 500]))
        .unwrap();
    let (frames, closed) = read_frames(&mut s);
    let codes: Vec<u8> = frames.iter().map(|f| f.0).collect();
    assert_eq!(codes, vec![0xE1, 0xE5]);
    assert!(closed);
    let snap = h.stop();
    assert_eq!((snap.too_large, snap.requests), (1, 0));
}

/// Tokens are scoped to the connection: two connections use the same
/// tokens at once, pipelined, and each gets its own answers.
#[test]
fn tokens_are_per_connection() {
    let h = start(TcpServerOptions::default());
    let mut a = raw(h.addr());
    let mut b = raw(h.addr());
    for (s, path) in [(&mut a, &b"sense"[..]), (&mut b, &b"hello"[..])] {
        let mut bytes = frame(0xE1, &[], &[], &[]);
        bytes.extend(frame(0x01, &[1], &[(11, path)], &[]));
        bytes.extend(frame(0x01, &[2], &[(11, b"nothere")], &[]));
        s.write_all(&bytes).unwrap();
    }
    let fa = read_n(&mut a, 3);
    let fb = read_n(&mut b, 3);
    assert_eq!(fa[1].0, 0x45);
    assert_eq!((fa[1].1.as_slice(), fa[1].2.len()), (&[1u8][..], 60));
    assert_eq!((fa[2].0, fa[2].1.as_slice()), (0x84, &[2u8][..]));
    assert_eq!((fb[1].0, fb[1].1.as_slice()), (0x45, &[1u8][..]));
    assert_eq!(fb[1].2, b"Hello from coapcc");
    assert_eq!((fb[2].0, fb[2].1.as_slice()), (0x84, &[2u8][..]));
    drop((a, b));
    assert_eq!(h.stop().requests, 4);
}

/// At most `max_connections` at once: one more gets CSM and Abort, then a
/// close; once one closes, a new one is served.
#[test]
fn connections_over_the_limit_are_refused() {
    let h = start(TcpServerOptions {
        max_connections: 2,
        ..TcpServerOptions::default()
    });
    let mut a = raw(h.addr());
    let mut b = raw(h.addr());
    assert_eq!(read_n(&mut a, 1)[0].0, 0xE1);
    assert_eq!(read_n(&mut b, 1)[0].0, 0xE1);
    let mut c = raw(h.addr());
    let (frames, closed) = read_frames(&mut c);
    let codes: Vec<u8> = frames.iter().map(|f| f.0).collect();
    assert_eq!(codes, vec![0xE1, 0xE5], "{frames:?}");
    assert!(closed);
    assert_eq!(h.snapshot().refused, 1);
    drop(a);
    // the slot frees once the server sees the close (bounded wait)
    let end = Instant::now() + LIMIT;
    while h.snapshot().open > 1 && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(10));
    }
    let mut d = raw(h.addr());
    assert_eq!(read_n(&mut d, 1)[0].0, 0xE1);
    drop((b, d));
    let snap = h.stop();
    assert_eq!((snap.accepted, snap.refused, snap.max_open), (3, 1, 2));
}

#[test]
fn idle_connections_are_closed() {
    let h = start(TcpServerOptions {
        idle_timeout: Duration::from_millis(200),
        ..TcpServerOptions::default()
    });
    let mut s = raw(h.addr());
    s.write_all(&frame(0xE1, &[], &[], &[])).unwrap();
    let (frames, closed) = read_frames(&mut s);
    assert_eq!(frames.len(), 1);
    assert!(closed);
    assert_eq!(h.stop().idle_closed, 1);
}

/// A client that pipelines many requests for the 1000-byte resource without
/// reading does not grow the server's queue past its bound.
#[test]
fn output_queued_per_connection_is_bounded() {
    use coapcc_net::tcp::connection::{FEED_CHUNK, OUTPUT_HIGH_WATER};
    let h = start(TcpServerOptions::default());
    let mut s = raw(h.addr());
    let mut bytes = frame(0xE1, &[], &[], &[]);
    let n = 3000;
    for _ in 0..n {
        bytes.extend(frame(0x01, &[], &[(11, b"large")], &[]));
    }
    let writer = {
        let mut w = s.try_clone().unwrap();
        std::thread::spawn(move || w.write_all(&bytes))
    };
    std::thread::sleep(Duration::from_millis(300));
    let frames = read_n(&mut s, n + 1);
    writer.join().unwrap().unwrap();
    assert_eq!(frames.len(), n + 1);
    assert!(frames[1..].iter().all(|f| f.0 == 0x45 && f.2.len() == 1000));
    drop(s);
    let snap = h.stop();
    // a 16-byte chunk holds at most two 8-byte requests plus the end of one
    let bound = OUTPUT_HIGH_WATER + (FEED_CHUNK / 8 + 1) * 1010;
    assert!(
        snap.max_output as usize <= bound,
        "{} > {bound}",
        snap.max_output
    );
}

/// Nagle is on unless asked otherwise, read back from the kernel; the
/// congestion control is the one asked for.
#[test]
fn socket_options_are_read_back() {
    let h = start(TcpServerOptions::default());
    let rt = rt();
    rt.block_on(async {
        for nodelay in [false, true] {
            let opts = SocketOptions {
                nodelay,
                ..SocketOptions::default()
            };
            let mut c = TcpClient::connect(h.addr(), &opts, Csm::default(), 0)
                .await
                .unwrap();
            assert_eq!(socket::nodelay(c.driver().stream()).unwrap(), nodelay);
            c.close().await;
        }
        if socket::available_congestion()
            .split_whitespace()
            .any(|n| n == "reno")
        {
            let opts = SocketOptions {
                congestion: Some("reno".into()),
                ..SocketOptions::default()
            };
            let mut c = TcpClient::connect(h.addr(), &opts, Csm::default(), 0)
                .await
                .unwrap();
            assert_eq!(socket::congestion(c.driver().stream()).unwrap(), "reno");
            c.close().await;
        } else {
            eprintln!("skipping the reno check: the kernel does not offer reno");
        }
        let bad = SocketOptions {
            congestion: Some("no-such-cc".into()),
            ..SocketOptions::default()
        };
        let e = socket::check(h.addr(), &bad).unwrap_err().to_string();
        assert!(
            e.starts_with("--tcp-congestion no-such-cc: the kernel refused it"),
            "{e}"
        );
    });
    drop(h);
}

/// Waits (bounded) until the server has accepted `accepted` connections and
/// holds none.
fn wait_all_closed(h: &TcpServerHandle, accepted: u64) -> server::TcpSnapshot {
    let end = Instant::now() + LIMIT;
    loop {
        let snap = h.snapshot();
        if (snap.accepted >= accepted && snap.open == 0) || Instant::now() >= end {
            return snap;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// One exchange over a fresh coap+tcp connection: the server serves again.
fn served(h: &TcpServerHandle) {
    rt().block_on(async {
        let mut c = TcpClient::connect(h.addr(), &SocketOptions::default(), Csm::default(), 1)
            .await
            .unwrap();
        c.keep_payload(true);
        let r = c.exchange(Code::GET, "sense", &[], LIMIT).await.unwrap();
        assert_eq!((r.code, r.payload.len()), (Code::CONTENT, 60));
        c.close().await;
    });
}

/// A peer that pipelines requests for the 1000-byte resource with a 4 KiB
/// receive buffer and never reads: once the server's writes make no
/// progress for the flush timeout, the connection is reset and its slot
/// (the only one) serves a normal client.
#[test]
fn a_peer_that_stops_reading_is_reset_and_its_slot_reused() {
    let h = start(TcpServerOptions {
        max_connections: 1,
        flush_timeout: Duration::from_millis(500),
        ..TcpServerOptions::default()
    });
    let sock = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    // set before connecting, so that the window it offers stays small
    sock.set_recv_buffer_size(4096).unwrap();
    sock.connect_timeout(&h.addr().into(), LIMIT).unwrap();
    let s = TcpStream::from(sock);
    // Responses three times the kernel's largest send buffer (at least 20 MB),
    // so that they cannot all wait in the server's kernel.
    let wmem_max = std::fs::read_to_string("/proc/sys/net/ipv4/tcp_wmem")
        .ok()
        .and_then(|t| t.split_whitespace().nth(2)?.parse::<usize>().ok())
        .unwrap_or(4 << 20);
    let n = (3 * wmem_max / 1000).clamp(20_000, 200_000);
    let mut bytes = frame(0xE1, &[], &[], &[]);
    for _ in 0..n {
        bytes.extend(frame(0x01, &[], &[(11, b"large")], &[]));
    }
    let writer = {
        let mut w = s.try_clone().unwrap();
        // the writer gives up once the server stops reading (or resets)
        w.set_write_timeout(Some(Duration::from_secs(2))).unwrap();
        std::thread::spawn(move || {
            let _ = w.write_all(&bytes);
        })
    };
    let snap = wait_all_closed(&h, 1);
    assert_eq!(
        snap.open, 0,
        "the peer that does not read keeps its slot: {snap:?}"
    );
    assert_eq!((snap.write_stalled, snap.reset), (1, 1), "{snap:?}");
    assert_eq!(snap.idle_closed, 0, "{snap:?}");
    served(&h);
    writer.join().unwrap();
    drop(s);
    let snap = h.stop();
    assert_eq!((snap.accepted, snap.refused), (2, 0));
}

/// A sender trickling a 520-byte frame one byte every 50 ms is given
/// Abort and closed once the frame timeout has passed since the frame's
/// first byte (the idle timeout, far away, never fires); the slot is reused.
#[test]
fn a_slow_sender_is_closed_after_the_frame_timeout_and_its_slot_reused() {
    let h = start(TcpServerOptions {
        max_connections: 1,
        frame_timeout: Duration::from_millis(300),
        idle_timeout: Duration::from_secs(60),
        ..TcpServerOptions::default()
    });
    let mut s = raw(h.addr());
    s.write_all(&frame(0xE1, &[], &[], &[])).unwrap();
    let put = frame(0x03, &[1], &[(11, b"store")], &[b'x'; 500]);
    let trickle = {
        let mut w = s.try_clone().unwrap();
        std::thread::spawn(move || {
            // at most 100 bytes (5 s): the frame is never complete
            for b in &put[..100] {
                if w.write_all(&[*b]).is_err() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        })
    };
    let (frames, closed) = read_frames(&mut s);
    let codes: Vec<u8> = frames.iter().map(|f| f.0).collect();
    assert_eq!(codes, vec![0xE1, 0xE5], "CSM then Abort: {frames:?}");
    let diag = String::from_utf8_lossy(&frames[1].2).to_string();
    assert!(diag.contains("frame not complete"), "{diag}");
    assert!(closed, "closed after the Abort");
    trickle.join().unwrap();
    drop(s);
    let snap = wait_all_closed(&h, 1);
    assert_eq!((snap.frame_timeouts, snap.idle_closed), (1, 0), "{snap:?}");
    served(&h);
    let snap = h.stop();
    assert_eq!((snap.accepted, snap.refused, snap.requests), (2, 0, 1));
}

/// Over the connection limit, the server says why: its CSM and an Abort
/// whose diagnostic names the limit, then a close (also when the client's
/// CSM has already arrived).
#[test]
fn a_refused_connection_gets_an_abort_with_the_reason() {
    let h = start(TcpServerOptions {
        max_connections: 1,
        ..TcpServerOptions::default()
    });
    let mut a = raw(h.addr());
    assert_eq!(read_n(&mut a, 1)[0].0, 0xE1);
    for client_csm_first in [false, true] {
        let mut b = raw(h.addr());
        if client_csm_first {
            b.write_all(&frame(0xE1, &[], &[], &[])).unwrap();
        }
        let (frames, closed) = read_frames(&mut b);
        let codes: Vec<u8> = frames.iter().map(|f| f.0).collect();
        assert_eq!(codes, vec![0xE1, 0xE5], "{frames:?}");
        assert_eq!(frames[1].2, b"connection limit reached");
        assert!(closed);
    }
    drop(a);
    let snap = h.stop();
    assert_eq!((snap.accepted, snap.refused), (1, 2));
}

/// A CSM whose Max-Message-Size cannot carry even a response header with
/// the longest token and one small option (below 16 bytes) is refused:
/// Abort naming the option, with a diagnostic, then a close; nothing is sent
/// beyond the base limit. 16 itself is honoured: /large comes back as a 5.00
/// of at most 16 bytes.
#[test]
fn a_max_message_size_too_small_is_refused_with_abort() {
    let h = start(TcpServerOptions::default());
    for mms in [0u32, 10, 15] {
        let mut s = raw(h.addr());
        let mut csm = [0u8; 32];
        let n = Csm {
            max_message_size: mms,
            block_wise: false,
        }
        .encode(&mut csm)
        .unwrap();
        let mut bytes = csm[..n].to_vec();
        bytes.extend(frame(0x01, &[1, 2], &[(11, b"large")], &[]));
        s.write_all(&bytes).unwrap();
        let (frames, closed) = read_frames(&mut s);
        let codes: Vec<u8> = frames.iter().map(|f| f.0).collect();
        assert_eq!(
            codes,
            vec![0xE1, 0xE5],
            "Max-Message-Size {mms}: {frames:?}"
        );
        let diag = String::from_utf8_lossy(&frames[1].2).to_string();
        assert!(diag.contains("Max-Message-Size"), "{diag}");
        assert!(closed, "Max-Message-Size {mms}: closed after the Abort");
    }
    rt().block_on(async {
        let small = Csm {
            max_message_size: 16,
            block_wise: false,
        };
        let mut c = TcpClient::connect(h.addr(), &SocketOptions::default(), small, 2)
            .await
            .unwrap();
        let r = c.exchange(Code::GET, "large", &[], LIMIT).await.unwrap();
        assert_eq!(r.code, Code(0xA0));
        assert!(r.frame_len <= 16, "{}", r.frame_len);
        c.close().await;
    });
    let snap = h.stop();
    assert_eq!((snap.aborted, snap.requests), (3, 1));
}
