//! Durations given on the command line: one parser, one documented bound.
//!
//! Every duration coapcc takes — seconds (`--timeout`, `--lifetime`,
//! `--duration`, `--time-limit`, `--idle-timeout`) or milliseconds (link
//! delays) — is finite, positive (or `>= 0` for delays) and at most
//! [`MAX_SECONDS`] (10⁷ s, about 116 days): far beyond any experiment, far
//! below where a conversion to nanoseconds or a timer deadline overflows.
//! Scenario files have the same bound (`network.*_delay_ms`,
//! `workload.*_s`).

use std::time::Duration;

use anyhow::{bail, Result};

/// The longest duration coapcc takes, in seconds.
pub const MAX_SECONDS: f64 = 1e7;

/// `--flag S`: a positive, finite number of seconds up to [`MAX_SECONDS`].
/// `flag` is the name without its dashes (given with them, they are not
/// doubled in the message).
pub fn seconds(flag: &str, s: f64) -> Result<Duration> {
    let flag = flag.trim_start_matches('-');
    if !(s.is_finite() && s > 0.0 && s <= MAX_SECONDS) {
        bail!("--{flag}: expected a positive number of seconds up to 1e7, found {s}");
    }
    Ok(Duration::from_secs_f64(s))
}

/// `--flag MS`: a delay in milliseconds from 0 up to [`MAX_SECONDS`]
/// (`flag` as for [`seconds`]).
pub fn delay_ms(flag: &str, ms: f64) -> Result<f64> {
    let flag = flag.trim_start_matches('-');
    if !(0.0..=MAX_SECONDS * 1e3).contains(&ms) {
        bail!("--{flag}: expected a delay from 0 to 1e10 ms (1e7 s), found {ms}");
    }
    Ok(ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds() {
        assert_eq!(seconds("t", 1.5).unwrap(), Duration::from_millis(1500));
        assert_eq!(seconds("t", 1e7).unwrap(), Duration::from_secs(10_000_000));
        for bad in [0.0, -1.0, 1e7 + 1.0, 1e30, f64::INFINITY, f64::NAN] {
            let e = seconds("timeout", bad).unwrap_err().to_string();
            assert!(e.starts_with("--timeout: expected"), "{e}");
        }
        // a name given with its dashes keeps two of them
        let e = seconds("--time-limit", 0.0).unwrap_err().to_string();
        assert!(e.starts_with("--time-limit: expected"), "{e}");
        let e = delay_ms("--path-delay-ms", -1.0).unwrap_err().to_string();
        assert!(e.starts_with("--path-delay-ms: expected"), "{e}");
        assert_eq!(delay_ms("d", 0.0).unwrap(), 0.0);
        assert_eq!(delay_ms("d", 1e10).unwrap(), 1e10);
        for bad in [-0.1, 1e15, f64::INFINITY, f64::NAN] {
            assert!(delay_ms("d", bad).is_err());
        }
    }
}
