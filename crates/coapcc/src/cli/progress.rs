//! Progress of `coapcc run`: a bar with an ETA on a terminal; when stderr is
//! not a terminal, a plain line at most every [`PLAIN_EVERY`] once a run
//! lasts that long (short runs stay quiet), so a long run is never silent.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

/// The interval of plain progress lines.
pub const PLAIN_EVERY: Duration = Duration::from_secs(10);

/// Progress over a known number of runs, callable from worker threads.
pub struct RunProgress {
    bar: ProgressBar,
    total: u64,
    started: Instant,
    every: Duration,
    /// Plain lines (stderr not a terminal): runs done, last line printed.
    plain: Option<Mutex<(u64, Instant)>>,
}

impl RunProgress {
    /// Progress over `total` runs, on stderr.
    pub fn new(total: u64) -> Self {
        let bar = ProgressBar::new(total);
        bar.set_style(
            ProgressStyle::with_template("{bar:30} {pos}/{len} runs, {elapsed} elapsed, ETA {eta}")
                .expect("valid template"),
        );
        let now = Instant::now();
        // tests shorten the interval (milliseconds)
        let every = std::env::var("COAPCC_PROGRESS_EVERY_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .map_or(PLAIN_EVERY, Duration::from_millis);
        RunProgress {
            bar,
            total,
            started: now,
            every,
            plain: (!std::io::stderr().is_terminal()).then(|| Mutex::new((0, now))),
        }
    }

    /// One run finished.
    pub fn inc(&self) {
        self.bar.inc(1);
        if let Some(p) = &self.plain {
            let mut p = p.lock().expect("progress lock");
            p.0 += 1;
            if p.1.elapsed() >= self.every {
                eprintln!(
                    "progress: {}/{} runs, {:.0} s elapsed",
                    p.0,
                    self.total,
                    self.started.elapsed().as_secs_f64()
                );
                p.1 = Instant::now();
            }
        }
    }

    /// Clears the bar.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
