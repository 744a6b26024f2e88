//! A campaign's progress on stderr ([`Progress`]), drawn by the local runner
//! ([`super::unit::run`]) and the Python package's executors.

use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A campaign's progress on stderr: a bar with an ETA on a terminal; when
/// stderr is not a terminal (a log, CI), a plain line at most every
/// [`Progress::PLAIN_EVERY`], so a long campaign is never silent.
pub struct Progress {
    bar: ProgressBar,
    /// Runs to compute, and how many are done.
    n: usize,
    finished: usize,
    /// Plain lines: when the last one was printed.
    plain: Option<Instant>,
    started: Instant,
}

impl Progress {
    /// The interval of plain progress lines.
    pub const PLAIN_EVERY: Duration = Duration::from_secs(10);

    /// Progress over `n` runs of summed weight `weight`; nothing if `!show`.
    pub fn new(weight: u64, n: usize, show: bool) -> Self {
        let terminal = std::io::IsTerminal::is_terminal(&std::io::stderr());
        let bar = if show && terminal {
            ProgressBar::with_draw_target(Some(weight), ProgressDrawTarget::stderr())
        } else {
            ProgressBar::hidden()
        };
        bar.set_style(
            ProgressStyle::with_template("{bar:30} {msg} runs, {elapsed} elapsed, ETA {eta}")
                .expect("valid template"),
        );
        bar.set_message(format!("0/{n}"));
        let now = Instant::now();
        if show && !terminal {
            eprintln!("progress: 0/{n} runs");
        }
        Progress {
            bar,
            n,
            finished: 0,
            plain: (show && !terminal).then_some(now),
            started: now,
        }
    }

    /// A run of `weight` was stored.
    pub fn stored(&mut self, weight: u64) {
        self.finished += 1;
        self.bar.inc(weight);
        self.bar
            .set_message(format!("{}/{}", self.finished, self.n));
        if let Some(last) = self.plain {
            if last.elapsed() >= Self::PLAIN_EVERY || self.finished == self.n {
                eprintln!(
                    "progress: {}/{} runs, {:.0} s elapsed",
                    self.finished,
                    self.n,
                    self.started.elapsed().as_secs_f64()
                );
                self.plain = Some(Instant::now());
            }
        }
    }

    /// Clears the bar.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
