//! The driver of one CoAP-over-TCP connection: bytes read from the kernel
//! socket go into [`CoapTcpConnection::handle_bytes`], the bytes it queues
//! are written back (RFC 8323 §3–5 are the state machine's; this module only
//! moves bytes).
//!
//! Memory per connection is bounded whatever the peer sends: reads are fed
//! to the state machine [`FEED_CHUNK`] bytes at a time and the queued output
//! is written out whenever it passes [`OUTPUT_HIGH_WATER`], so a peer that
//! pipelines requests without reading its responses is slowed down by its
//! own receive window rather than growing our buffers. The decoder holds at
//! most one partial frame, bounded by our Max-Message-Size.
//!
//! Time is bounded too where the peer could stall us: with
//! [`Driver::set_write_timeout`], a write that makes no progress for that
//! long fails with [`io::ErrorKind::TimedOut`]; [`Driver::close_within`]
//! gives the last bytes a deadline: not written by then, the connection is
//! reset (RST, the kernel's copy dropped); written but not taken by the
//! peer, the kernel drops it at the deadline (TCP_USER_TIMEOUT, Linux).

use std::io;
use std::time::Duration;

use coapcc_proto::tcp::{CoapTcpConnection, ConnEvent, Csm, RequestHandler, Role};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::Instant;

/// Bytes read from the socket at once.
pub const READ_BUFFER: usize = 4096;
/// Bytes handed to the state machine at once: at most this many requests'
/// worth of responses are queued between two writes.
pub const FEED_CHUNK: usize = 16;
/// Queued output above which the driver writes before feeding more input.
pub const OUTPUT_HIGH_WATER: usize = 8192;

/// How [`Driver::close_within`] ended the connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Closed {
    /// Everything queued was written, then FIN.
    Graceful,
    /// The peer did not take our last bytes by the deadline: reset (RST),
    /// whatever the kernel still held dropped.
    Reset,
    /// The stream had already failed (e.g. the peer reset it).
    Broken,
}

/// A kernel TCP stream with an RFC 8323 connection on top.
pub struct Driver {
    stream: TcpStream,
    conn: CoapTcpConnection,
    rx: Box<[u8]>,
    write_timeout: Option<Duration>,
    /// Largest output ever queued (bytes), for the bounds' tests.
    pub max_output: usize,
}

impl Driver {
    /// Wraps `stream`; our CSM (stating `csm`) is queued at once and goes out
    /// with the first [`Driver::flush`].
    pub fn new(stream: TcpStream, role: Role, csm: Csm) -> Self {
        Driver {
            stream,
            conn: CoapTcpConnection::new(role, csm),
            rx: vec![0; READ_BUFFER].into_boxed_slice(),
            write_timeout: None,
            max_output: 0,
        }
    }

    /// The state machine.
    pub fn conn(&mut self) -> &mut CoapTcpConnection {
        &mut self.conn
    }

    /// The socket.
    pub fn stream(&self) -> &TcpStream {
        &self.stream
    }

    /// Makes a write that has not progressed (no byte taken by the kernel)
    /// for `limit` fail with [`io::ErrorKind::TimedOut`]; `None` (the
    /// default) waits for as long as the peer does.
    pub fn set_write_timeout(&mut self, limit: Option<Duration>) {
        self.write_timeout = limit;
    }

    /// Writes everything queued.
    pub async fn flush(&mut self) -> io::Result<()> {
        while !self.conn.output().is_empty() {
            self.max_output = self.max_output.max(self.conn.output().len());
            let write = self.stream.write(self.conn.output());
            let n = match self.write_timeout {
                None => write.await?,
                Some(limit) => tokio::time::timeout(limit, write).await.map_err(|_| {
                    io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!(
                            "no byte written for {:.1} s (the peer does not read)",
                            limit.as_secs_f64()
                        ),
                    )
                })??,
            };
            if n == 0 {
                return Err(io::ErrorKind::WriteZero.into());
            }
            self.conn.consume_output(n);
        }
        Ok(())
    }

    /// Reads once from the socket into the driver's buffer, without feeding
    /// it (see [`Driver::feed`]); 0 means the peer closed its side. Cancel
    /// safe: nothing is lost when the wait is abandoned.
    pub async fn read_raw(&mut self) -> io::Result<usize> {
        self.stream.read(&mut self.rx).await
    }

    /// Feeds the first `n` bytes of the last [`Driver::read_raw`] to the
    /// state machine (requests go to `handler`), writing its output as it
    /// goes and at the end.
    pub async fn feed<H: RequestHandler + ?Sized>(
        &mut self,
        n: usize,
        handler: &mut H,
    ) -> io::Result<()> {
        let n = n.min(self.rx.len());
        let mut at = 0;
        while at < n {
            let end = (at + FEED_CHUNK).min(n);
            self.conn.handle_bytes(&self.rx[at..end], handler);
            at = end;
            if self.conn.output().len() > OUTPUT_HIGH_WATER {
                self.flush().await?;
            }
            if self.conn.should_close() {
                break;
            }
        }
        self.flush().await
    }

    /// Reads once from the socket and feeds what came to the state machine
    /// (requests go to `handler`), writing its output as it goes. Returns
    /// the bytes read: 0 means the peer closed its side.
    pub async fn read_once<H: RequestHandler + ?Sized>(
        &mut self,
        handler: &mut H,
    ) -> io::Result<usize> {
        let n = self.read_raw().await?;
        self.feed(n, handler).await?;
        Ok(n)
    }

    /// Next event of the state machine.
    pub fn poll_event(&mut self) -> Option<ConnEvent> {
        self.conn.poll_event()
    }

    /// [`Driver::close_within`] with `limit` for both waits.
    pub async fn close(self, limit: Duration) -> Closed {
        self.close_within(limit, limit).await
    }

    /// Closes: what is queued must be written within `flush_limit`, else
    /// the connection is reset; after our FIN, waits at most `fin_wait` for
    /// the peer's, so that a connection normally ends with both FINs rather
    /// than a reset; what the kernel still holds then must be taken by the
    /// peer by the same deadline, or the kernel drops the connection.
    pub async fn close_within(mut self, flush_limit: Duration, fin_wait: Duration) -> Closed {
        let deadline = after(Instant::now(), flush_limit);
        match tokio::time::timeout_at(deadline, self.flush()).await {
            Ok(Ok(())) => {}
            Ok(Err(_)) => return Closed::Broken,
            Err(_) => return self.reset(),
        }
        let _ = self.stream.shutdown().await;
        let mut sink = [0u8; 256];
        let _ = tokio::time::timeout(fin_wait, async {
            while let Ok(n) = self.stream.read(&mut sink).await {
                if n == 0 {
                    break;
                }
            }
        })
        .await;
        // Our last bytes (and FIN) may still sit in the kernel behind a
        // window the peer keeps shut: once we let go of the socket, the
        // kernel drops the connection if they are not taken by the deadline.
        let left = deadline.saturating_duration_since(Instant::now());
        bound_kernel_linger(&self.stream, left.max(Duration::from_millis(1)));
        Closed::Graceful
    }

    /// Ends the connection at once with a reset (RST): nothing more is sent
    /// and the kernel drops what it still held for the peer.
    pub fn reset(self) -> Closed {
        let _ = socket2::SockRef::from(&self.stream).set_linger(Some(Duration::ZERO));
        drop(self.stream);
        Closed::Reset
    }

    /// Takes the stream back (e.g. to drop it at once).
    pub fn into_stream(self) -> TcpStream {
        self.stream
    }
}

/// `t + d`, or about 30 years after `t` when that overflows (a
/// [`Duration::MAX`] limit means no limit).
pub fn after(t: Instant, d: Duration) -> Instant {
    t.checked_add(d)
        .unwrap_or_else(|| t + Duration::from_secs(30 * 365 * 86_400))
}

/// Bounds how long the kernel keeps trying to deliver what `stream` still
/// holds after it is dropped (TCP_USER_TIMEOUT, Linux: unacknowledged data,
/// zero-window probes included, for longer than `limit` end the connection).
fn bound_kernel_linger(stream: &TcpStream, limit: Duration) {
    #[cfg(target_os = "linux")]
    {
        let _ = socket2::SockRef::from(stream).set_tcp_user_timeout(Some(limit));
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (stream, limit);
}
