//! The signals that ask a run which created namespaces (or started runs that
//! do) to stop: SIGINT (Ctrl-C), SIGTERM and SIGHUP (the terminal closed).
//! Each is caught, so the run tears down what it made instead of dying with
//! it left behind.
//!
//! [`StopSignals::install`] catches them for a program that is not async: a
//! thread of its own waits for them and records the first.

use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;

use anyhow::{Context, Result};
use tokio::signal::unix::{signal, Signal, SignalKind};

/// The signals handled, with their numbers.
pub const HANDLED: [(&str, i32); 3] = [
    ("SIGINT", libc::SIGINT),
    ("SIGTERM", libc::SIGTERM),
    ("SIGHUP", libc::SIGHUP),
];

/// The name of signal `n` among [`HANDLED`].
pub fn name(n: i32) -> &'static str {
    HANDLED
        .iter()
        .find(|(_, k)| *k == n)
        .map_or("a signal", |(name, _)| name)
}

/// Listeners for SIGINT, SIGTERM and SIGHUP, in the current tokio runtime;
/// from the moment this returns they are caught (not fatal).
pub fn listen() -> Result<[Signal; 3]> {
    Ok([
        signal(SignalKind::interrupt()).context("cannot handle SIGINT")?,
        signal(SignalKind::terminate()).context("cannot handle SIGTERM")?,
        signal(SignalKind::hangup()).context("cannot handle SIGHUP")?,
    ])
}

/// Waits for the first of the signals of [`listen`]; returns its number.
pub async fn first(signals: &mut [Signal; 3]) -> i32 {
    let [int, term, hup] = signals;
    tokio::select! {
        _ = int.recv() => libc::SIGINT,
        _ = term.recv() => libc::SIGTERM,
        _ = hup.recv() => libc::SIGHUP,
    }
}

/// SIGINT, SIGTERM and SIGHUP caught for the rest of the process's life; the
/// first received is kept for [`StopSignals::received`].
#[derive(Clone, Debug)]
pub struct StopSignals {
    got: Arc<AtomicI32>,
}

impl StopSignals {
    /// Starts catching the signals (caught from the moment this returns).
    pub fn install() -> Result<StopSignals> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("cannot start the signal thread's runtime")?;
        let mut signals = {
            let _guard = rt.enter();
            listen()?
        };
        let got = Arc::new(AtomicI32::new(0));
        let g = got.clone();
        std::thread::Builder::new()
            .name("coapcc-signals".into())
            .spawn(move || loop {
                let n = rt.block_on(first(&mut signals));
                let _ = g.compare_exchange(0, n, Ordering::SeqCst, Ordering::SeqCst);
            })
            .context("cannot start the signal thread")?;
        Ok(StopSignals { got })
    }

    /// The first signal received, if any.
    pub fn received(&self) -> Option<i32> {
        match self.got.load(Ordering::SeqCst) {
            0 => None,
            n => Some(n),
        }
    }
}
