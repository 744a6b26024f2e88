//! Block-wise transfers (RFC 7959) through a [`NetClient`]: a Block2
//! download and a Block1 upload, each block one Confirmable exchange timed by
//! the client's congestion-control algorithm. The sans-IO machines of
//! [`coapcc_proto::block`] decide what each request carries; this module
//! sends it and feeds them the response.
//!
//! The same transfers run over CoAP over TCP ([`tcp_download`],
//! [`tcp_upload`]; RFC 8323 §6): one request per block on the connection,
//! blocks of 16 to 1024 bytes (BERT, SZX 7, is not used).
//!
//! Every loop is bounded: a transfer takes at most as many exchanges as its
//! blocks at 16 bytes plus [`SPARE_EXCHANGES`], and each exchange its time
//! limit.

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::{anyhow, bail, Result};
use coapcc_proto::block::{
    block_size, Block1Upload, Block2Download, BlockOptions, DownloadError, Progress, UploadStep,
};
use coapcc_proto::client::Request;
use coapcc_proto::message::{option, Code};
use tokio::time::Instant;

use crate::client::{NetClient, Outcome};
use crate::tcp::client::TcpClient;

/// Exchanges a transfer may take beyond one per 16-byte block (duplicates,
/// one restart after a changed ETag).
pub const SPARE_EXCHANGES: usize = 16;

/// The deterministic bytes of the server's `bytes:N` resources and of
/// `--payload-size` (byte i is ASCII 33 + i mod 94), shared with the
/// simulator's block-wise world.
pub use coapcc_proto::block::pattern;

/// The SZX of a block size: 16, 32, …, 1024 → 0–6; `None` for any other.
pub fn szx_of(size: usize) -> Option<u8> {
    (0..=6u8).find(|&s| block_size(s) == size)
}

/// How a block-wise transfer went.
#[derive(Clone, Debug, PartialEq)]
pub struct TransferReport {
    /// The final response's code (a 4.xx / 5.xx ends the transfer early).
    pub code: Code,
    /// The downloaded representation, or the upload's final response payload
    /// (for an error code, that response's payload).
    pub body: Vec<u8>,
    /// Confirmable exchanges (one per block, repeats included).
    pub exchanges: u32,
    /// Retransmissions over all exchanges.
    pub retransmissions: u32,
    /// From the first request's start to the last response.
    pub elapsed: Duration,
    /// The block size at the end (the server's if it asked for a smaller one).
    pub block_size: Option<usize>,
    /// Size2 (download) as the server gave it, if it did.
    pub size2: Option<u32>,
}

/// A response as the transfers need it.
struct Answer {
    code: Code,
    payload: Vec<u8>,
    options: Vec<(u16, Vec<u8>)>,
    retransmissions: u8,
}

/// One request and its response over some transport.
trait Exchanger {
    /// Sends `method` to `path` with `extra` options and `payload`; fails
    /// when no response comes within `limit`.
    async fn exchange(
        &mut self,
        method: Code,
        path: &str,
        extra: &[(u16, &[u8])],
        payload: &[u8],
        limit: Duration,
    ) -> Result<Answer>;
}

/// A UDP client and its server: one Confirmable exchange per request.
struct Udp<'a>(&'a mut NetClient, SocketAddr);

impl Exchanger for Udp<'_> {
    async fn exchange(
        &mut self,
        method: Code,
        path: &str,
        extra: &[(u16, &[u8])],
        payload: &[u8],
        limit: Duration,
    ) -> Result<Answer> {
        let req = Request {
            method,
            path,
            payload,
            confirmable: true,
        };
        let r = self
            .0
            .exchange_with_options(self.1, &req, extra, limit)
            .await?;
        match r.outcome {
            Outcome::Response { code, payload, .. } => Ok(Answer {
                code,
                payload,
                options: r.options,
                retransmissions: r.retransmissions,
            }),
            Outcome::Failed(reason) => bail!(
                "failed ({reason:?}) after {} retransmission(s)",
                r.retransmissions
            ),
        }
    }
}

impl Exchanger for TcpClient {
    async fn exchange(
        &mut self,
        method: Code,
        path: &str,
        extra: &[(u16, &[u8])],
        payload: &[u8],
        limit: Duration,
    ) -> Result<Answer> {
        let r = self
            .exchange_with_options(method, path, extra, payload, limit)
            .await?;
        Ok(Answer {
            code: r.code,
            payload: r.payload,
            options: r.options,
            retransmissions: 0,
        })
    }
}

/// A transfer's running totals.
struct Totals {
    started: Instant,
    exchanges: u32,
    retransmissions: u32,
    bound: usize,
}

impl Totals {
    fn new(blocks_at_16: usize) -> Self {
        Totals {
            started: Instant::now(),
            exchanges: 0,
            retransmissions: 0,
            bound: blocks_at_16 + SPARE_EXCHANGES,
        }
    }

    /// One exchange with `extra` options; fails when the transfer's bound
    /// is reached, the exchange runs past `limit` or is abandoned.
    async fn exchange(
        &mut self,
        e: &mut impl Exchanger,
        (method, path, payload): (Code, &str, &[u8]),
        extra: &[(u16, &[u8])],
        limit: Duration,
    ) -> Result<Answer> {
        if self.exchanges as usize >= self.bound {
            bail!(
                "block-wise transfer stopped after {} exchanges",
                self.exchanges
            );
        }
        let r = e
            .exchange(method, path, extra, payload, limit)
            .await
            .map_err(|err| anyhow!("block {}: {err}", self.exchanges + 1))?;
        self.exchanges += 1;
        self.retransmissions += u32::from(r.retransmissions);
        Ok(r)
    }

    fn report(&self, code: Code, body: Vec<u8>, block_size: Option<usize>) -> TransferReport {
        TransferReport {
            code,
            body,
            exchanges: self.exchanges,
            retransmissions: self.retransmissions,
            elapsed: self.started.elapsed(),
            block_size,
            size2: None,
        }
    }
}

/// The block options and ETag of a response.
fn read_options(r: &Answer) -> Result<(BlockOptions, Option<&[u8]>)> {
    let opts = BlockOptions::read(r.options.iter().map(|(n, v)| (*n, v.as_slice())))
        .map_err(|e| anyhow!("response with a bad block option: {e}"))?;
    let etag = r
        .options
        .iter()
        .find(|(n, _)| *n == option::ETAG)
        .map(|(_, v)| v.as_slice());
    Ok((opts, etag))
}

/// GETs `path` from `peer` block-wise with Block2: blocks of at most
/// `block_size` bytes (asked from the first request on, with Size2; `None`
/// lets the server choose, and a response without Block2 is the whole
/// representation), at most `max_len` bytes in all, each exchange within
/// `limit`. Needs a client that keeps payloads.
pub async fn download(
    client: &mut NetClient,
    peer: SocketAddr,
    path: &str,
    block_size: Option<usize>,
    max_len: usize,
    limit: Duration,
) -> Result<TransferReport> {
    download_with(&mut Udp(client, peer), path, block_size, max_len, limit).await
}

/// [`download`] over a CoAP-over-TCP connection (RFC 8323 §6): the client
/// must keep payloads ([`TcpClient::keep_payload`]).
pub async fn tcp_download(
    client: &mut TcpClient,
    path: &str,
    block_size: Option<usize>,
    max_len: usize,
    limit: Duration,
) -> Result<TransferReport> {
    download_with(client, path, block_size, max_len, limit).await
}

async fn download_with(
    client: &mut impl Exchanger,
    path: &str,
    block_size: Option<usize>,
    max_len: usize,
    limit: Duration,
) -> Result<TransferReport> {
    let szx = block_size
        .map(|b| {
            szx_of(b).ok_or_else(|| anyhow!("block size {b}: not a power of two from 16 to 1024"))
        })
        .transpose()?;
    let mut dl = Block2Download::new(max_len, szx);
    let mut totals = Totals::new(max_len / 16 + 1);
    let mut size2 = None;
    let mut restarted = false;
    loop {
        let block2 = dl.next_request().map_err(|e| anyhow!("{e}"))?;
        let value = block2.map(|b| b.to_vec());
        let mut extra: Vec<(u16, &[u8])> = Vec::new();
        if let Some(v) = &value {
            extra.push((option::BLOCK2, v));
            if dl.body().is_empty() {
                // Size2 0 asks for the representation's size (RFC 7959 §4).
                extra.push((option::SIZE2, &[]));
            }
        }
        let r = totals
            .exchange(client, (Code::GET, path, &[]), &extra, limit)
            .await?;
        let (code, payload) = (r.code, &r.payload);
        if code.class() != 2 {
            let mut out = totals.report(code, r.payload.clone(), dl.block_size());
            out.size2 = size2;
            return Ok(out);
        }
        let (opts, etag) = read_options(&r)?;
        size2 = size2.or(opts.size2);
        match dl.on_response(opts.block2, etag, opts.size2, payload) {
            Ok(Progress::Complete) => break,
            Ok(Progress::Continue | Progress::Duplicate) => {}
            Err(DownloadError::EtagChanged) if !restarted => {
                restarted = true;
                dl.restart();
            }
            Err(e) => bail!("block-wise download of /{path}: {e}"),
        }
    }
    let block_size = dl.block_size();
    let mut out = totals.report(Code::CONTENT, dl.into_body(), block_size);
    out.size2 = size2;
    Ok(out)
}

/// Sends `body` to `path` at `peer` with `method` (PUT or POST) block-wise
/// with Block1: blocks of `block_size` bytes (or the server's smaller size
/// once it asks for one), Size1 with the first, each exchange within
/// `limit`. The report's code and body are the final response's.
pub async fn upload(
    client: &mut NetClient,
    peer: SocketAddr,
    method: Code,
    path: &str,
    body: Vec<u8>,
    block_size: usize,
    limit: Duration,
) -> Result<TransferReport> {
    upload_with(
        &mut Udp(client, peer),
        method,
        path,
        body,
        block_size,
        limit,
    )
    .await
}

/// [`upload`] over a CoAP-over-TCP connection (RFC 8323 §6): the client
/// must keep payloads ([`TcpClient::keep_payload`]).
pub async fn tcp_upload(
    client: &mut TcpClient,
    method: Code,
    path: &str,
    body: Vec<u8>,
    block_size: usize,
    limit: Duration,
) -> Result<TransferReport> {
    upload_with(client, method, path, body, block_size, limit).await
}

async fn upload_with(
    client: &mut impl Exchanger,
    method: Code,
    path: &str,
    body: Vec<u8>,
    block_size: usize,
    limit: Duration,
) -> Result<TransferReport> {
    let szx = szx_of(block_size)
        .ok_or_else(|| anyhow!("block size {block_size}: not a power of two from 16 to 1024"))?;
    let mut totals = Totals::new(body.len() / 16 + 1);
    let mut up = Block1Upload::new(body, szx)
        .map_err(|e| anyhow!("{e}"))?
        .with_size1(true);
    loop {
        let Some(block) = up.next_block() else {
            bail!("block-wise upload to /{path} ended without a final response");
        };
        let value = block.block1.to_vec();
        let size1 = block.size1.map(coapcc_proto::block::size_to_vec);
        let mut extra: Vec<(u16, &[u8])> = vec![(option::BLOCK1, &value)];
        if let Some(s) = &size1 {
            extra.push((option::SIZE1, s));
        }
        let r = totals
            .exchange(client, (method, path, block.payload), &extra, limit)
            .await?;
        let (opts, _) = read_options(&r)?;
        let (code, payload) = (r.code, r.payload);
        match up.on_response(code, opts.block1, opts.size1) {
            Ok(UploadStep::Continue) => {}
            Ok(UploadStep::Done(code)) => {
                return Ok(totals.report(code, payload, Some(up.block_size())))
            }
            // The server's refusal (4.13, 4.08 or another code) is the result.
            Err(_) if code.class() != 2 => {
                return Ok(totals.report(code, payload, Some(up.block_size())))
            }
            Err(e) => bail!("block-wise upload to /{path}: {e}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::ClientOptions;
    use crate::clock::Clock;
    use crate::resources::{Resources, BIG};
    use crate::server::{self, ServerOptions};

    const LIMIT: Duration = Duration::from_secs(5);

    async fn client() -> NetClient {
        NetClient::bind(
            "127.0.0.1:0".parse().unwrap(),
            &ClientOptions::default(),
            Clock::start(),
        )
        .await
        .unwrap()
    }

    /// Against coapcc's own server with 256-byte blocks: a download asking
    /// for 1024 follows the server's size; an upload in 64-byte blocks is
    /// acknowledged with its length and read back; one past the limit gets
    /// 4.13.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn download_and_upload_against_our_server() {
        let mut resources = Resources::standard();
        resources.set_block_size(256).unwrap();
        resources.add_spec("small=upload:100").unwrap();
        let h = server::spawn(
            "127.0.0.1:0".parse().unwrap(),
            ServerOptions::default(),
            resources,
        )
        .unwrap();
        let mut c = client().await;
        let r = download(&mut c, h.addr(), "big", Some(1024), 1 << 20, LIMIT)
            .await
            .unwrap();
        assert_eq!(r.code, Code::CONTENT);
        assert_eq!(r.body, pattern(BIG));
        assert_eq!((r.exchanges as usize, r.block_size), (BIG / 256, Some(256)));
        assert_eq!(r.size2, Some(BIG as u32));
        let body = pattern(5000);
        let r = upload(
            &mut c,
            h.addr(),
            Code::PUT,
            "upload",
            body.clone(),
            64,
            LIMIT,
        )
        .await
        .unwrap();
        assert_eq!((r.code, r.body.as_slice()), (Code::CHANGED, &b"5000"[..]));
        assert_eq!(r.exchanges as usize, 5000usize.div_ceil(64));
        let r = download(&mut c, h.addr(), "upload", Some(128), 1 << 20, LIMIT)
            .await
            .unwrap();
        assert_eq!(r.body, body);
        let r = upload(
            &mut c,
            h.addr(),
            Code::POST,
            "small",
            pattern(200),
            32,
            LIMIT,
        )
        .await
        .unwrap();
        assert_eq!(r.code, Code::REQUEST_ENTITY_TOO_LARGE);
        assert_eq!(r.exchanges, 1, "Size1 refused it at once");
        // A small resource without block size: one exchange, as before.
        let r = download(&mut c, h.addr(), "sense", None, 1 << 20, LIMIT)
            .await
            .unwrap();
        assert_eq!((r.body.len(), r.exchanges), (60, 1));
        // Past the download limit.
        let e = download(&mut c, h.addr(), "big", Some(64), 1000, LIMIT)
            .await
            .unwrap_err();
        assert!(e.to_string().contains("larger than"), "{e}");
        let s = h.stop();
        assert_eq!(s.stats.malformed, 0);
    }

    /// The same transfers over CoAP over TCP against coapcc's TCP listener:
    /// a Block2 download following the server's 256-byte blocks, a Block1
    /// upload read back; a plain GET of the same resource (no Block2) is
    /// answered whole, here too large for the client's Max-Message-Size.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn download_and_upload_over_tcp() {
        use crate::tcp::server::{self as tcp_server, TcpServerOptions};
        use crate::tcp::socket::SocketOptions;
        use coapcc_proto::tcp::Csm;
        use std::sync::{Arc, Mutex};
        let mut resources = Resources::standard();
        resources.set_block_size(256).unwrap();
        let h = tcp_server::spawn(
            "127.0.0.1:0".parse().unwrap(),
            TcpServerOptions::default(),
            Arc::new(Mutex::new(resources)),
        )
        .unwrap();
        let mut c = TcpClient::connect(h.addr(), &SocketOptions::default(), Csm::default(), 4)
            .await
            .unwrap();
        c.keep_payload(true);
        let r = tcp_download(&mut c, "big", Some(1024), 1 << 20, LIMIT)
            .await
            .unwrap();
        assert_eq!(r.code, Code::CONTENT);
        assert!(r.body == pattern(BIG), "the bytes differ");
        assert_eq!((r.exchanges as usize, r.block_size), (BIG / 256, Some(256)));
        assert_eq!(r.size2, Some(BIG as u32));
        let body = pattern(5000);
        let r = tcp_upload(&mut c, Code::PUT, "upload", body.clone(), 64, LIMIT)
            .await
            .unwrap();
        assert_eq!((r.code, r.body.as_slice()), (Code::CHANGED, &b"5000"[..]));
        assert_eq!(r.exchanges as usize, 5000usize.div_ceil(64));
        let r = tcp_download(&mut c, "upload", Some(128), 1 << 20, LIMIT)
            .await
            .unwrap();
        assert!(r.body == body, "the bytes differ");
        // Without Block2 the whole 5000 bytes exceed the client's
        // Max-Message-Size (1152): the server answers 5.00 instead.
        let whole = c.exchange(Code::GET, "upload", &[], LIMIT).await.unwrap();
        assert_eq!(whole.code, Code::INTERNAL_SERVER_ERROR, "{whole:?}");
        c.close().await;
        h.stop();
    }

    #[test]
    fn the_pattern_and_block_sizes() {
        let p = pattern(200);
        assert_eq!(&p[..3], b"!\"#");
        assert_eq!(p[93], b'~');
        assert_eq!(p[94], b'!');
        assert_eq!(szx_of(16), Some(0));
        assert_eq!(szx_of(1024), Some(6));
        assert_eq!(szx_of(100), None);
        assert_eq!(szx_of(2048), None);
    }
}
