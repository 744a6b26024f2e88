//! A task running on a thread of its own (the server, the emulator) until it is
//! stopped or its handle is dropped.

use std::thread::JoinHandle;

use tokio::sync::oneshot;

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
