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

/// At most `max_connections` at once: one more is closed without a CSM;
/// once one closes, a new one is served.
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
    assert!(frames.is_empty() && closed, "{frames:?}");
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
