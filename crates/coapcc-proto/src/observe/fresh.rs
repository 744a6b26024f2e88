//! Reordering detection (RFC 7641 §3.4): whether a notification (V2, T2)
//! is newer than the last one taken (V1, T1), with 24-bit sequence numbers
//! that wrap and the 128-second escape for values too far apart to compare.

use crate::Nanos;

/// Half the sequence space: 2^23. Values closer than this compare by
/// serial-number arithmetic (RFC 7641 §3.4, after RFC 1982).
pub const HALF_SEQ: u32 = 1 << 23;

/// After this long, any notification counts as newer whatever its value
/// (RFC 7641 §3.4: 128 seconds).
pub const FRESHNESS_WINDOW: Nanos = 128_000_000_000;

/// Whether the notification with Observe value `v2` received at `t2` is
/// newer than the one with `v1` received at `t1` (RFC 7641 §3.4):
/// `V1 < V2` and `V2 − V1 < 2^23`, or `V1 > V2` and `V1 − V2 > 2^23`, or
/// `T2 > T1 + 128 s`. Values are taken modulo 2^24.
pub fn is_fresher(v1: u32, t1: Nanos, v2: u32, t2: Nanos) -> bool {
    let (v1, v2) = (
        v1 & super::value::OBSERVE_MAX,
        v2 & super::value::OBSERVE_MAX,
    );
    (v1 < v2 && v2 - v1 < HALF_SEQ)
        || (v1 > v2 && v1 - v2 > HALF_SEQ)
        || t2 > t1.saturating_add(FRESHNESS_WINDOW)
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Nanos = 1_000_000_000;

    #[test]
    fn plain_order() {
        assert!(is_fresher(5, 0, 6, 0));
        assert!(!is_fresher(6, 0, 5, 0));
        assert!(!is_fresher(5, 0, 5, 0), "a duplicate is not newer");
    }

    #[test]
    fn wrap_around() {
        // 0xFFFFFF → 0: V1 > V2 and V1 − V2 = 0xFFFFFF > 2^23.
        assert!(is_fresher(0xFF_FFFF, 0, 0, 0));
        assert!(!is_fresher(0, 0, 0xFF_FFFF, 0));
        assert!(is_fresher(0xFF_FFF0, 0, 0x10, 0));
    }

    #[test]
    fn the_two_to_the_23_boundaries() {
        // V2 − V1 = 2^23 − 1: newer; exactly 2^23: not (strict <).
        assert!(is_fresher(0, 0, HALF_SEQ - 1, 0));
        assert!(!is_fresher(0, 0, HALF_SEQ, 0));
        // V1 − V2 = 2^23 + 1: newer (wrapped); exactly 2^23: not (strict >).
        assert!(is_fresher(HALF_SEQ + 1, 0, 0, 0));
        assert!(!is_fresher(HALF_SEQ, 0, 0, 0));
        // Around the top: 0xFFFFFF − 0x7FFFFF = 2^23 exactly.
        assert!(!is_fresher(0xFF_FFFF, 0, 0x7F_FFFF, 0));
        // 0xFFFFFF − 0x800000 = 2^23 − 1: 0x800000 is the older.
        assert!(!is_fresher(0xFF_FFFF, 0, 0x80_0000, 0));
        // 0xFFFFFF − 0x7FFFFE = 2^23 + 1: 0x7FFFFE has wrapped past.
        assert!(is_fresher(0xFF_FFFF, 0, 0x7F_FFFE, 0));
    }

    #[test]
    fn the_128_second_rule() {
        // An older value is taken once more than 128 s have passed.
        assert!(!is_fresher(10, 0, 9, 128 * S), "exactly 128 s: not yet");
        assert!(is_fresher(10, 0, 9, 128 * S + 1));
        assert!(is_fresher(10, 5 * S, 10, 200 * S), "even the same value");
        assert!(!is_fresher(10, Nanos::MAX - 1, 9, Nanos::MAX));
    }

    #[test]
    fn values_are_taken_modulo_two_to_the_24() {
        assert!(is_fresher(0x100_0005, 0, 6, 0));
    }
}
