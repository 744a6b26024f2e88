//! One CoAP-over-TCP client connection on a kernel socket (RFC 8323): our
//! CSM goes out right after the handshake and requests follow without
//! waiting for the server's (§4.3); tokens are a per-connection counter, one
//! request outstanding at a time.
//!
//! Times are taken by the driver: a request's RTT runs from the moment its
//! bytes were handed to the kernel to the moment its response was read.

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::{anyhow, bail, Result};
use coapcc_proto::message::Code;
use coapcc_proto::tcp::{ConnEvent, Csm, RefuseRequests, Role, SendError, Token};
use tokio::time::Instant;

use super::connection::Driver;
use super::socket::{self, SocketOptions};

/// CoAP option numbers (RFC 7252 §5.10).
const URI_PATH: u16 = 11;
const URI_QUERY: u16 = 15;

/// A response read from the connection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TcpResponse {
    /// Its code.
    pub code: Code,
    /// Its payload (empty unless payloads are kept).
    pub payload: Vec<u8>,
    /// The whole frame's length (bytes).
    pub frame_len: usize,
    /// Request written → response read.
    pub rtt: Duration,
    /// Its options as (number, value) in message order (empty unless
    /// payloads are kept).
    pub options: Vec<(u16, Vec<u8>)>,
}

/// A client connection.
pub struct TcpClient {
    d: Driver,
    token_len: usize,
    peer: SocketAddr,
}

/// The Uri-Path and Uri-Query options of `path` (`a/b?x=1&y`), in order.
pub fn uri_options(path: &str) -> Vec<(u16, Vec<u8>)> {
    let (p, q) = match path.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (path, None),
    };
    let mut out: Vec<(u16, Vec<u8>)> = p
        .split('/')
        .filter(|s| !s.is_empty())
        .map(|s| (URI_PATH, s.as_bytes().to_vec()))
        .collect();
    if let Some(q) = q {
        out.extend(q.split('&').map(|a| (URI_QUERY, a.as_bytes().to_vec())));
    }
    out
}

impl TcpClient {
    /// Connects to `peer` (socket options applied before the SYN) and
    /// writes our CSM stating `csm`. Does not wait for the server's CSM.
    pub async fn connect(
        peer: SocketAddr,
        opts: &SocketOptions,
        csm: Csm,
        token_len: usize,
    ) -> Result<Self> {
        let stream = socket::connect(peer, opts)
            .await
            .map_err(|e| anyhow!("cannot connect to {peer} (TCP): {e}"))?;
        let mut d = Driver::new(stream, Role::Initiator, csm);
        d.flush().await?;
        Ok(TcpClient {
            d,
            token_len: token_len.min(8),
            peer,
        })
    }

    /// The driver (socket and state machine).
    pub fn driver(&mut self) -> &mut Driver {
        &mut self.d
    }

    /// The server's address.
    pub fn peer(&self) -> SocketAddr {
        self.peer
    }

    /// Keep response payloads (for printing them).
    pub fn keep_payload(&mut self, keep: bool) {
        self.d.conn().set_keep_payload(keep);
    }

    /// Reads until `done` says an event ends the wait; fails on a closed,
    /// aborted or broken connection, or at `until`.
    ///
    /// `until` is checked by the clock before every read: a timeout around
    /// the read alone never fires while the peer keeps the socket readable
    /// (tokio polls the read first, and with bytes always there it is always
    /// ready), so a peer streaming responses to no request of ours would
    /// hold the wait forever.
    async fn read_until<T>(
        &mut self,
        until: Instant,
        mut done: impl FnMut(&ConnEvent, &mut Driver) -> Option<T>,
    ) -> Result<T> {
        loop {
            while let Some(e) = self.d.poll_event() {
                if let Some(t) = done(&e, &mut self.d) {
                    return Ok(t);
                }
                match e {
                    ConnEvent::PeerAborted => bail!("the server aborted the connection"),
                    ConnEvent::Aborted(cause) => {
                        let _ = self.d.flush().await;
                        bail!("aborted the connection: {cause:?} from the server")
                    }
                    _ => {}
                }
            }
            if Instant::now() >= until {
                bail!("no answer from {} in time", self.peer);
            }
            let n = tokio::time::timeout_at(until, self.d.read_once(&mut RefuseRequests))
                .await
                .map_err(|_| anyhow!("no answer from {} in time", self.peer))??;
            if n == 0 {
                bail!("the server closed the connection");
            }
        }
    }

    /// Waits for the server's CSM (at most until `until`).
    pub async fn wait_csm(&mut self, until: Instant) -> Result<Csm> {
        if self.d.conn().peer_csm_seen() {
            return Ok(self.d.conn().peer_csm());
        }
        self.read_until(until, |e, _| match e {
            ConnEvent::PeerCsm(c) => Some(*c),
            _ => None,
        })
        .await
    }

    /// Writes a request; returns its token and when it was handed to the
    /// kernel.
    pub async fn send(
        &mut self,
        method: Code,
        path: &str,
        payload: &[u8],
    ) -> Result<(Token, Instant)> {
        self.send_with_options(method, path, &[], payload).await
    }

    /// [`TcpClient::send`] with `extra` options besides the path's (any
    /// numbers; sorted with them).
    pub async fn send_with_options(
        &mut self,
        method: Code,
        path: &str,
        extra: &[(u16, &[u8])],
        payload: &[u8],
    ) -> Result<(Token, Instant)> {
        let token = if self.token_len == 0 {
            Token::default()
        } else {
            self.d.conn().alloc_token(self.token_len)
        };
        let opts = uri_options(path);
        let mut refs: Vec<(u16, &[u8])> = opts.iter().map(|(n, v)| (*n, v.as_slice())).collect();
        refs.extend_from_slice(extra);
        refs.sort_by_key(|(n, _)| *n);
        self.d
            .conn()
            .send_request(method, token.as_slice(), &refs, payload)
            .map_err(|e| match e {
                SendError::TooLarge => anyhow!(
                    "the request is larger than the server's Max-Message-Size ({} bytes)",
                    self.d.conn().peer_csm().max_message_size
                ),
                SendError::NotOpen => anyhow!("the connection is released or aborted"),
                e => anyhow!("cannot send the request: {e:?}"),
            })?;
        self.d.flush().await?;
        Ok((token, Instant::now()))
    }

    /// Waits for the response to `token`, written at `sent`.
    pub async fn response(
        &mut self,
        token: Token,
        sent: Instant,
        until: Instant,
    ) -> Result<TcpResponse> {
        self.read_until(until, |e, d| match *e {
            ConnEvent::Response {
                token: t,
                code,
                frame_len,
                ..
            } if t == token => Some(TcpResponse {
                code,
                payload: d.conn().last_response_payload().to_vec(),
                frame_len,
                rtt: sent.elapsed(),
                options: d.conn().last_response_options().to_vec(),
            }),
            _ => None,
        })
        .await
    }

    /// One request and its response.
    pub async fn exchange(
        &mut self,
        method: Code,
        path: &str,
        payload: &[u8],
        limit: Duration,
    ) -> Result<TcpResponse> {
        self.exchange_with_options(method, path, &[], payload, limit)
            .await
    }

    /// [`TcpClient::exchange`] with `extra` options (see
    /// [`TcpClient::send_with_options`]).
    pub async fn exchange_with_options(
        &mut self,
        method: Code,
        path: &str,
        extra: &[(u16, &[u8])],
        payload: &[u8],
        limit: Duration,
    ) -> Result<TcpResponse> {
        let until = Instant::now() + limit;
        let send = self.send_with_options(method, path, extra, payload);
        let (token, sent) = tokio::time::timeout_at(until, send)
            .await
            .map_err(|_| anyhow!("cannot write the request to {} in time", self.peer))??;
        self.response(token, sent, until).await
    }

    /// A Ping and its Pong; returns the round-trip time.
    pub async fn ping(&mut self, limit: Duration) -> Result<Duration> {
        let until = Instant::now() + limit;
        let token = self.d.conn().alloc_token(2);
        self.d
            .conn()
            .ping(token.as_slice())
            .map_err(|e| anyhow!("cannot ping: {e:?}"))?;
        tokio::time::timeout_at(until, self.d.flush())
            .await
            .map_err(|_| anyhow!("cannot write the Ping to {} in time", self.peer))??;
        let sent = Instant::now();
        self.read_until(until, |e, _| match e {
            ConnEvent::Pong(t) if *t == token => Some(()),
            _ => None,
        })
        .await?;
        Ok(sent.elapsed())
    }

    /// Sends Release (RFC 8323 §5.5), then closes.
    pub async fn release(mut self) -> Result<()> {
        self.d
            .conn()
            .release()
            .map_err(|e| anyhow!("cannot release: {e:?}"))?;
        self.close().await;
        Ok(())
    }

    /// Closes: FIN after what is queued, then a short wait for the server's.
    pub async fn close(self) {
        self.d.close(Duration::from_secs(1)).await;
    }

    /// Closes our side (FIN) without waiting for the server's.
    pub async fn shutdown(self) {
        use tokio::io::AsyncWriteExt;
        let mut s = self.d.into_stream();
        let _ = s.shutdown().await;
    }
}
