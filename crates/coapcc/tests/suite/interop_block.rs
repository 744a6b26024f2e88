//! Block-wise transfers (RFC 7959) with real peers on loopback: coapcc's
//! client uploading (Block1) to and downloading (Block2) from libcoap's and
//! aiocoap's servers, and libcoap's client downloading from and uploading
//! to coapcc's server; over UDP and, with libcoap, over coap+tcp (RFC 8323
//! §6). Every body is checked byte for byte.
//!
//! A test whose peer is not installed prints `SKIPPED …` and passes (it
//! fails with `COAPCC_REQUIRE_PEERS` set); CI installs libcoap3-bin and
//! aiocoap. Transfers are bounded by their exchange count and a time limit
//! per exchange; peers are killed when their guard drops.

use crate::net_support;

use std::net::SocketAddr;
use std::process::Command;
use std::time::Duration;

use coapcc_net::blockwise::{self, pattern, TransferReport};
use coapcc_net::client::{ClientOptions, NetClient};
use coapcc_net::clock::Clock;
use coapcc_net::resources::{Resources, BIG};
use coapcc_net::server::{self, ServerOptions};
use coapcc_proto::message::Code;
use net_support::*;

/// Each exchange's time limit.
const LIMIT: Duration = Duration::from_secs(10);

/// Uploads `body` to `path` at `peer` in `up`-byte blocks, then downloads
/// it back at each of `down` block sizes; returns the upload's and the
/// downloads' reports.
fn up_and_down(
    peer: SocketAddr,
    path: &str,
    body: &[u8],
    up: usize,
    down: &[usize],
) -> (TransferReport, Vec<TransferReport>) {
    rt().block_on(async {
        let mut c = NetClient::bind(
            "127.0.0.1:0".parse().unwrap(),
            &ClientOptions::default(),
            Clock::start(),
        )
        .await
        .unwrap();
        let u = blockwise::upload(&mut c, peer, Code::PUT, path, body.to_vec(), up, LIMIT)
            .await
            .unwrap();
        let mut d = Vec::new();
        for &size in down {
            let r = blockwise::download(&mut c, peer, path, Some(size), 1 << 20, LIMIT)
                .await
                .unwrap();
            d.push(r);
        }
        (u, d)
    })
}

#[test]
fn our_client_block_wise_against_libcoap_server() {
    let Some((_peer, addr)) = libcoap_server() else {
        return skip(
            "our_client_block_wise_against_libcoap_server",
            "coap-server-notls not found",
        );
    };
    // -d: the PUT creates the resource, reassembled by libcoap from Block1.
    let body = pattern(20_000);
    let (u, d) = up_and_down(addr, "blocks", &body, 256, &[64, 1024]);
    assert!(matches!(u.code, Code::CREATED | Code::CHANGED), "{u:?}");
    assert_eq!(u.exchanges as usize, body.len().div_ceil(256));
    for r in d {
        assert_eq!(r.code, Code::CONTENT);
        assert_eq!(r.body.len(), body.len());
        assert!(r.body == body, "the bytes differ");
        let size = r.block_size.unwrap();
        assert_eq!(r.exchanges as usize, body.len().div_ceil(size), "{r:?}");
    }
}

#[test]
fn our_client_block_wise_against_aiocoap_server() {
    let Some((_peer, addr)) = aiocoap_server() else {
        return skip(
            "our_client_block_wise_against_aiocoap_server",
            "python3 with aiocoap not found",
        );
    };
    let body = pattern(20_000);
    let (u, d) = up_and_down(addr, "store", &body, 64, &[128, 1024]);
    assert_eq!(u.code, Code::CHANGED, "{u:?}");
    for r in d {
        assert_eq!(r.code, Code::CONTENT);
        assert!(r.body == body, "the bytes differ ({} bytes)", r.body.len());
    }
}

/// libcoap's client fetches `/big` block-wise (`-b`) into a file.
#[test]
fn libcoap_client_downloads_our_large_resource() {
    if !have("coap-client-notls") {
        return skip(
            "libcoap_client_downloads_our_large_resource",
            "coap-client-notls not found",
        );
    }
    let h = server::spawn(any_port(), ServerOptions::default(), Resources::standard()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for size in ["64", "1024"] {
        let out = dir.path().join(format!("big.{size}"));
        let (ok, _, err) = run_bounded(Command::new("coap-client-notls").args([
            "-m",
            "get",
            "-b",
            size,
            "-o",
            out.to_str().unwrap(),
            &format!("coap://127.0.0.1:{}/big", h.addr().port()),
        ]));
        assert!(ok, "{err}");
        let got = std::fs::read(&out).unwrap();
        assert_eq!(got.len(), BIG, "-b {size}");
        assert!(got == pattern(BIG), "-b {size}: the bytes differ");
    }
    let s = h.stop();
    assert_eq!(s.stats.requests as usize, BIG / 64 + BIG / 1024, "{s:?}");
}

/// libcoap's client PUTs a file block-wise (`-b -f`): 2.04 with the length,
/// and the body reads back unchanged.
#[test]
fn libcoap_client_uploads_to_our_server() {
    if !have("coap-client-notls") {
        return skip(
            "libcoap_client_uploads_to_our_server",
            "coap-client-notls not found",
        );
    }
    let h = server::spawn(any_port(), ServerOptions::default(), Resources::standard()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("body");
    let body = pattern(30_000);
    std::fs::write(&file, &body).unwrap();
    let (ok, out, err) = run_bounded(Command::new("coap-client-notls").args([
        "-m",
        "put",
        "-b",
        "128",
        "-f",
        file.to_str().unwrap(),
        &format!("coap://127.0.0.1:{}/upload", h.addr().port()),
    ]));
    assert!(ok, "{err}");
    assert_eq!(out.trim_end(), "30000", "{err}");
    let back = rt().block_on(async {
        let mut c = NetClient::bind(
            "127.0.0.1:0".parse().unwrap(),
            &ClientOptions::default(),
            Clock::start(),
        )
        .await
        .unwrap();
        blockwise::download(&mut c, h.addr(), "upload", Some(1024), 1 << 20, LIMIT)
            .await
            .unwrap()
    });
    assert!(back.body == body, "the bytes differ ({})", back.body.len());
    let s = h.stop();
    assert_eq!(s.stats.malformed, 0);
}

/// Over coap+tcp at `peer` (RFC 8323 §6): uploads `up.0` to `path` in
/// `up.1`-byte blocks if given, then downloads `path` at each of `down`
/// block sizes.
fn tcp_transfers(
    peer: SocketAddr,
    path: &str,
    up: Option<(&[u8], usize)>,
    down: &[usize],
) -> (Option<TransferReport>, Vec<TransferReport>) {
    use coapcc_net::tcp::client::TcpClient;
    use coapcc_net::tcp::socket::SocketOptions;
    use coapcc_proto::tcp::Csm;
    rt().block_on(async {
        let mut c = TcpClient::connect(peer, &SocketOptions::default(), Csm::default(), 4)
            .await
            .unwrap();
        c.keep_payload(true);
        let until = coapcc_net::tokio::time::Instant::now() + LIMIT;
        c.wait_csm(until).await.unwrap();
        let mut u = None;
        if let Some((body, size)) = up {
            let r = blockwise::tcp_upload(&mut c, Code::PUT, path, body.to_vec(), size, LIMIT)
                .await
                .unwrap();
            u = Some(r);
        }
        let mut d = Vec::new();
        for &size in down {
            let r = blockwise::tcp_download(&mut c, path, Some(size), 1 << 20, LIMIT)
                .await
                .unwrap();
            d.push(r);
        }
        c.close().await;
        (u, d)
    })
}

/// coapcc's coap+tcp client uploads to and downloads from libcoap's
/// server block-wise (libcoap listens on TCP on the same port).
#[test]
fn our_client_block_wise_over_tcp_against_libcoap_server() {
    let Some((_peer, addr)) = libcoap_server() else {
        return skip(
            "our_client_block_wise_over_tcp_against_libcoap_server",
            "coap-server-notls not found",
        );
    };
    let body = pattern(20_000);
    let (u, d) = tcp_transfers(addr, "tcpblocks", Some((&body, 256)), &[64, 1024]);
    let u = u.unwrap();
    assert!(matches!(u.code, Code::CREATED | Code::CHANGED), "{u:?}");
    assert_eq!(u.exchanges as usize, body.len().div_ceil(256));
    for r in d {
        assert_eq!(r.code, Code::CONTENT);
        assert!(r.body == body, "the bytes differ ({} bytes)", r.body.len());
        let size = r.block_size.unwrap();
        assert_eq!(r.exchanges as usize, body.len().div_ceil(size), "{r:?}");
    }
}

/// libcoap's client over coap+tcp (`-b`): downloads `/big` and uploads a
/// file block-wise to coapcc's TCP listener; the bytes are compared.
#[test]
fn libcoap_client_block_wise_over_tcp_against_our_server() {
    if !have("coap-client-notls") {
        return skip(
            "libcoap_client_block_wise_over_tcp_against_our_server",
            "coap-client-notls not found",
        );
    }
    use coapcc_net::tcp::server::{self as tcp_server, TcpServerOptions};
    use std::sync::{Arc, Mutex};
    let h = tcp_server::spawn(
        any_port(),
        TcpServerOptions::default(),
        Arc::new(Mutex::new(Resources::standard())),
    )
    .unwrap();
    let base = format!("coap+tcp://127.0.0.1:{}", h.addr().port());
    let dir = tempfile::tempdir().unwrap();
    for size in ["64", "1024"] {
        let out = dir.path().join(format!("big.{size}"));
        let (ok, _, err) = run_bounded(Command::new("coap-client-notls").args([
            "-m",
            "get",
            "-b",
            size,
            "-o",
            out.to_str().unwrap(),
            &format!("{base}/big"),
        ]));
        assert!(ok, "{err}");
        let got = std::fs::read(&out).unwrap();
        assert_eq!(got.len(), BIG, "-b {size}");
        assert!(got == pattern(BIG), "-b {size}: the bytes differ");
    }
    let file = dir.path().join("body");
    let body = pattern(30_000);
    std::fs::write(&file, &body).unwrap();
    let (ok, out, err) = run_bounded(Command::new("coap-client-notls").args([
        "-m",
        "put",
        "-b",
        "128",
        "-f",
        file.to_str().unwrap(),
        &format!("{base}/upload"),
    ]));
    assert!(ok, "{err}");
    assert_eq!(out.trim_end(), "30000", "{err}");
    let (_, d) = tcp_transfers(h.addr(), "upload", None, &[1024]);
    assert!(d[0].body == body, "the upload reads back changed");
    let s = h.stop();
    assert_eq!(
        s.requests as usize,
        BIG / 64 + BIG / 1024 + 30_000usize.div_ceil(128) + 30_000usize.div_ceil(1024),
        "{s:?}"
    );
}
