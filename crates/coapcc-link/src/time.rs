//! Virtual time: integer nanoseconds, so that event ordering is exact.

/// A point in virtual time or a duration, in nanoseconds.
pub type Nanos = u64;

/// Nanoseconds per second.
pub const SECOND: Nanos = 1_000_000_000;

/// Seconds (f64) → nanoseconds, rounded to the nearest nanosecond.
pub fn from_secs(s: f64) -> Nanos {
    round_nonneg(s * SECOND as f64)
}

/// Rounds a non-negative value to the nearest integer nanosecond (halves up),
/// without the libm call of `f64::round`; negative inputs give 0.
#[inline]
pub fn round_nonneg(x: f64) -> Nanos {
    (x + 0.5) as Nanos
}

/// Nanoseconds → seconds.
pub fn to_secs(n: Nanos) -> f64 {
    n as f64 / SECOND as f64
}

/// Time to serialise `bytes` at `rate_bps` bits per second, rounded to the
/// nearest nanosecond.
pub fn serialisation(bytes: usize, rate_bps: u64) -> Nanos {
    let bits = bytes as u128 * 8 * u128::from(SECOND);
    let rate = u128::from(rate_bps);
    ((bits + rate / 2) / rate) as Nanos
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialisation_of_the_testbed_messages() {
        // 60 kbit/s moves 7500 bytes per second: 38 bytes take 5.0667 ms.
        assert_eq!(serialisation(38, 60_000), 5_066_667);
        // 30 kbit/s: 93 bytes take 24.8 ms.
        assert_eq!(serialisation(93, 30_000), 24_800_000);
        assert_eq!(serialisation(7500, 60_000), SECOND);
        assert_eq!(from_secs(0.66), 660_000_000);
        assert_eq!(to_secs(1_500_000_000), 1.5);
    }
}
