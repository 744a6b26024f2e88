//! The few float helpers the algorithms need, written for `core` (no `std` float
//! intrinsics are available in `#![no_std]`).

/// Absolute value.
#[inline]
pub fn abs(x: f64) -> f64 {
    if x < 0.0 {
        -x
    } else {
        x
    }
}

/// The larger of two values.
#[inline]
pub fn max(a: f64, b: f64) -> f64 {
    if a >= b {
        a
    } else {
        b
    }
}

/// The smaller of two values.
#[inline]
pub fn min(a: f64, b: f64) -> f64 {
    if a <= b {
        a
    } else {
        b
    }
}
