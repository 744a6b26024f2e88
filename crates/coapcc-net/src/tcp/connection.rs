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

use std::io;

use coapcc_proto::tcp::{CoapTcpConnection, ConnEvent, Csm, RequestHandler, Role};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Bytes read from the socket at once.
pub const READ_BUFFER: usize = 4096;
/// Bytes handed to the state machine at once: at most this many requests'
/// worth of responses are queued between two writes.
pub const FEED_CHUNK: usize = 16;
/// Queued output above which the driver writes before feeding more input.
pub const OUTPUT_HIGH_WATER: usize = 8192;

/// A kernel TCP stream with an RFC 8323 connection on top.
pub struct Driver {
    stream: TcpStream,
    conn: CoapTcpConnection,
    rx: Box<[u8]>,
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

    /// Writes everything queued.
    pub async fn flush(&mut self) -> io::Result<()> {
        while !self.conn.output().is_empty() {
            self.max_output = self.max_output.max(self.conn.output().len());
            let n = self.stream.write(self.conn.output()).await?;
            if n == 0 {
                return Err(io::ErrorKind::WriteZero.into());
            }
            self.conn.consume_output(n);
        }
        Ok(())
    }

    /// Reads once from the socket and feeds what came to the state machine
    /// (requests go to `handler`), writing its output as it goes. Returns
    /// the bytes read: 0 means the peer closed its side.
    pub async fn read_once<H: RequestHandler + ?Sized>(
        &mut self,
        handler: &mut H,
    ) -> io::Result<usize> {
        let n = self.stream.read(&mut self.rx).await?;
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
        self.flush().await?;
        Ok(n)
    }

    /// Next event of the state machine.
    pub fn poll_event(&mut self) -> Option<ConnEvent> {
        self.conn.poll_event()
    }

    /// Closes our sending side (FIN after what is queued) and waits, at
    /// most until `limit`, for the peer to close its own, so that the
    /// connection ends with both FINs rather than a reset.
    pub async fn close(mut self, limit: std::time::Duration) {
        let _ = self.flush().await;
        let _ = self.stream.shutdown().await;
        let mut sink = [0u8; 256];
        let _ = tokio::time::timeout(limit, async {
            while let Ok(n) = self.stream.read(&mut sink).await {
                if n == 0 {
                    break;
                }
            }
        })
        .await;
    }

    /// Takes the stream back (e.g. to drop it at once).
    pub fn into_stream(self) -> TcpStream {
        self.stream
    }
}
