//! A task running on a thread of its own (the server, the emulator) until it is
//! stopped or its handle is dropped.

use std::future::Future;
use std::net::SocketAddr;
use std::thread::JoinHandle;

use anyhow::{Context, Result};
use tokio::net::UdpSocket;
use tokio::sync::oneshot;

/// Binds a UDP socket to `bind` and runs `task` on it on a thread of its own
/// (a single-threaded tokio runtime). The task gets the socket and a receiver
/// that fires when the returned [`Background`] is stopped or dropped.
pub(crate) fn spawn_on_udp<T, Fut>(
    bind: SocketAddr,
    name: &str,
    task: impl FnOnce(UdpSocket, oneshot::Receiver<()>) -> Fut + Send + 'static,
) -> Result<(SocketAddr, Background<T>)>
where
    Fut: Future<Output = T>,
    T: Send + 'static,
{
    let std_socket =
        std::net::UdpSocket::bind(bind).with_context(|| format!("cannot bind {bind}"))?;
    std_socket.set_nonblocking(true)?;
    let addr = std_socket.local_addr()?;
    let (stop_tx, stop_rx) = oneshot::channel::<()>();
    let thread = std::thread::Builder::new()
        .name(format!("{name}-{addr}"))
        .spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("tokio runtime");
            rt.block_on(async move {
                let socket = UdpSocket::from_std(std_socket).expect("socket into tokio");
                task(socket, stop_rx).await
            })
        })?;
    Ok((addr, Background::new(stop_tx, thread)))
}

/// The stop signal and the thread of a background task that returns a `T`.
pub(crate) struct Background<T> {
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<T>>,
}

impl<T> Background<T> {
    /// Wraps a thread that ends when `stop` fires.
    pub(crate) fn new(stop: oneshot::Sender<()>, thread: JoinHandle<T>) -> Self {
        Background {
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// Signals the task to stop and waits for its result (`None` if it was
    /// already collected or the thread panicked).
    pub(crate) fn shutdown(&mut self) -> Option<T> {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        self.thread.take().and_then(|t| t.join().ok())
    }
}

impl<T> Drop for Background<T> {
    fn drop(&mut self) {
        self.shutdown();
    }
}
