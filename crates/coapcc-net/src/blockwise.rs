//! Block-wise transfers (RFC 7959) through a [`NetClient`]: a Block2
//! download and a Block1 upload, each block one Confirmable exchange timed by
//! the client's congestion-control algorithm. The sans-IO machines of
//! [`coapcc_proto::block`] decide what each request carries; this module
//! sends it and feeds them the response.
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

use crate::client::{ExchangeReport, NetClient, Outcome};

/// Exchanges a transfer may take beyond one per 16-byte block (duplicates,
/// one restart after a changed ETag).
pub const SPARE_EXCHANGES: usize = 16;

/// The deterministic representation of `len` bytes that `coapcc server`'s
/// `bytes:` resources serve and `coapcc client --payload-size` sends: byte
/// `i` is the printable ASCII `0x21 + i mod 94` (`!` to `~`), a period that
/// no block size divides.
pub fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| 0x21 + (i % 94) as u8).collect()
}

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
        client: &mut NetClient,
        peer: SocketAddr,
        req: &Request<'_>,
        extra: &[(u16, &[u8])],
        limit: Duration,
    ) -> Result<(Code, Vec<u8>, ExchangeReport)> {
        if self.exchanges as usize >= self.bound {
            bail!(
                "block-wise transfer stopped after {} exchanges",
                self.exchanges
            );
        }
        let mut r = client
            .exchange_with_options(peer, req, extra, limit)
            .await?;
        self.exchanges += 1;
        self.retransmissions += u32::from(r.retransmissions);
        match &mut r.outcome {
            Outcome::Response { code, payload, .. } => {
                let (code, payload) = (*code, std::mem::take(payload));
                Ok((code, payload, r))
            }
            Outcome::Failed(reason) => bail!(
                "block {} failed ({reason:?}) after {} retransmission(s)",
                self.exchanges,
                r.retransmissions
            ),
        }
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
fn read_options(r: &ExchangeReport) -> Result<(BlockOptions, Option<&[u8]>)> {
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
    let szx = block_size
        .map(|b| {
            szx_of(b).ok_or_else(|| anyhow!("block size {b}: not a power of two from 16 to 1024"))
        })
        .transpose()?;
    let mut dl = Block2Download::new(max_len, szx);
    let mut totals = Totals::new(max_len / 16 + 1);
    let req = Request {
        method: Code::GET,
        path,
        payload: &[],
        confirmable: true,
    };
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
        let (code, payload, r) = totals.exchange(client, peer, &req, &extra, limit).await?;
        if code.class() != 2 {
            let mut out = totals.report(code, payload, dl.block_size());
            out.size2 = size2;
            return Ok(out);
        }
        let (opts, etag) = read_options(&r)?;
        size2 = size2.or(opts.size2);
        match dl.on_response(opts.block2, etag, opts.size2, &payload) {
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
        let req = Request {
            method,
            path,
            payload: block.payload,
            confirmable: true,
        };
        let (code, payload, r) = totals.exchange(client, peer, &req, &extra, limit).await?;
        let (opts, _) = read_options(&r)?;
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
