//! Which notifications go Confirmable (RFC 7641 §4.5): the server may
//! choose per notification; one sending mostly Non-confirmable ones must
//! send a Confirmable one at least every 24 hours, so that an observer that
//! has gone away is eventually noticed and removed.

use crate::Nanos;

/// The longest a server may go without a Confirmable notification to an
/// observer (RFC 7641 §4.5: 24 hours).
pub const CON_INTERVAL: Nanos = 24 * 3600 * 1_000_000_000;

/// How a subject types its notifications.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConfirmRule {
    /// Every `every`-th notification after the last Confirmable one is
    /// Confirmable (1: all are; default 5: four NONs then a CON).
    pub every: u32,
    /// A notification is Confirmable once this long has passed since the
    /// last Confirmable one (or the registration). Default, and at most,
    /// [`CON_INTERVAL`].
    pub interval: Nanos,
}

impl Default for ConfirmRule {
    fn default() -> Self {
        ConfirmRule {
            every: 5,
            interval: CON_INTERVAL,
        }
    }
}

impl ConfirmRule {
    /// Whether the next notification is Confirmable, given the
    /// notifications sent since the last Confirmable one (or the
    /// registration) and when that was.
    pub fn confirmable(&self, since_con: u32, last_con: Nanos, now: Nanos) -> bool {
        since_con.saturating_add(1) >= self.every
            || now.saturating_sub(last_con) >= self.interval.min(CON_INTERVAL)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kth_is_confirmable() {
        let r = ConfirmRule::default();
        let kinds: Vec<bool> = (0..5).map(|n| r.confirmable(n, 0, 1)).collect();
        assert_eq!(kinds, [false, false, false, false, true]);
        let all = ConfirmRule { every: 1, ..r };
        assert!(all.confirmable(0, 0, 0));
        let zero = ConfirmRule { every: 0, ..r };
        assert!(zero.confirmable(0, 0, 0));
    }

    #[test]
    fn at_least_one_con_per_day() {
        let r = ConfirmRule {
            every: u32::MAX,
            interval: Nanos::MAX,
        };
        assert!(!r.confirmable(3, 0, CON_INTERVAL - 1));
        assert!(r.confirmable(3, 0, CON_INTERVAL), "capped at 24 h");
    }
}
