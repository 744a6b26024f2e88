//! Printing results: a write to standard output that fails (a full disk, a
//! closed pipe) is an error naming standard output, not a panic.

use std::io::Write;

use anyhow::{Context, Result};

/// Writes `text` to standard output and flushes it.
pub fn write(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .context("cannot write to standard output")
}

/// `print!` that returns an error instead of panicking. A macro, as `print!`
/// is: it takes a format string and its arguments (`format_args!`).
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::cli::stdout::write(&format!($($arg)*))
    };
}

/// `println!` that returns an error instead of panicking.
#[macro_export]
macro_rules! outln {
    () => {
        $crate::cli::stdout::write("\n")
    };
    ($($arg:tt)*) => {
        $crate::cli::stdout::write(&format!("{}\n", format_args!($($arg)*)))
    };
}
