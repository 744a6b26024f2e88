//! lwIP's retransmission-timer arithmetic and the published variants
//! (transport-tcp.md §3), as pure functions of whole 500 ms ticks.
//!
//! This is the algorithmic core of the `lwip` profile: the integer Van
//! Jacobson estimator, the RTO after the n-th timeout (lwIP's shift table or
//! the "lwIP back-off" variant), the loss window after a timeout (lwIP or the
//! "lwIP cwnd" variant) and the initial windows. [`crate::TcpSocket`] does not
//! use it yet: it runs the `linux` profile only.

/// Length of one slow-timer tick (ns).
pub const TICK: u64 = 500_000_000;

/// lwIP's backoff table (`tcp_backoff`), indexed by the timeout count.
pub const BACKOFF: [u8; 13] = [1, 2, 3, 4, 5, 6, 7, 7, 7, 7, 7, 7, 7];

/// Data retransmissions before lwIP gives up (`TCP_MAXRTX`).
pub const MAX_RTX: u32 = 12;
/// SYN retransmissions before lwIP gives up (`TCP_SYNMAXRTX`).
pub const SYN_MAX_RTX: u32 = 6;

/// lwIP's estimator: `sa` = 8·SRTT and `sv` = 4·mdev, in ticks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LwipEstimator {
    /// 8·SRTT (ticks).
    pub sa: i32,
    /// 4·mdev (ticks).
    pub sv: i32,
}

impl Default for LwipEstimator {
    /// `sa` = 0, `sv` = 6 ticks: initial RTO 3 s.
    fn default() -> Self {
        LwipEstimator { sa: 0, sv: 6 }
    }
}

impl LwipEstimator {
    /// One sample of `m` ticks: `m -= sa>>3; sa += m; m = |m|; m -= sv>>2;
    /// sv += m`.
    pub fn sample(&mut self, m: i32) {
        let mut m = m - (self.sa >> 3);
        self.sa += m;
        if m < 0 {
            m = -m;
        }
        m -= self.sv >> 2;
        self.sv += m;
    }

    /// `(sa>>3) + sv` (ticks): the RTO after any ACK of new data.
    pub fn rto(&self) -> i32 {
        (self.sa >> 3) + self.sv
    }
}

/// How the RTO grows on successive timeouts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LwipBackoff {
    /// lwIP: `rto = ((sa>>3)+sv) << BACKOFF[n]` on timeout number n (from 0).
    Table,
    /// The published "lwIP back-off" variant: ×2 while the RTO is at most
    /// 3 s, ×1.3 above, rounded to the nearest whole tick.
    TwoThenOnePointThree,
}

impl LwipBackoff {
    /// The RTO (ticks) after timeout number `n` (0 = first), given the
    /// estimator's base RTO and the RTO that just expired.
    pub fn next_rto(self, n: u32, base: i32, current: i32) -> i32 {
        match self {
            LwipBackoff::Table => {
                let shift = BACKOFF[(n as usize).min(BACKOFF.len() - 1)];
                base << shift
            }
            LwipBackoff::TwoThenOnePointThree => {
                if i64::from(current) * TICK as i64 <= 3_000_000_000 {
                    current * 2
                } else {
                    // ×1.3, to the nearest tick (13/10 with rounding).
                    (current * 13 + 5) / 10
                }
            }
        }
    }
}

/// What cwnd becomes after a retransmission timeout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LwipLossWindow {
    /// lwIP: one MSS.
    OneMss,
    /// The published "lwIP cwnd" variant: `max(ssthresh/2, MSS)` with the
    /// ssthresh just recomputed.
    HalfSsthresh,
}

/// (ssthresh, cwnd) after a timeout: `ssthresh = max(min(cwnd, wnd)/2,
/// 2·MSS)`, then the loss window.
pub fn after_timeout(cwnd: u64, wnd: u64, mss: u64, loss: LwipLossWindow) -> (u64, u64) {
    let ssthresh = (cwnd.min(wnd) / 2).max(2 * mss);
    let cwnd = match loss {
        LwipLossWindow::OneMss => mss,
        LwipLossWindow::HalfSsthresh => (ssthresh / 2).max(mss),
    };
    (ssthresh, cwnd)
}

/// lwIP's initial window: `min(4·MSS, max(2·MSS, 4380))`.
pub fn initial_cwnd(mss: u64) -> u64 {
    (4 * mss).min((2 * mss).max(4380))
}

/// The initial ssthresh of the published comparison: 10·MSS.
pub fn initial_ssthresh(mss: u64) -> u64 {
    10 * mss
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimator_by_hand() {
        let mut e = LwipEstimator::default();
        // 3 s
        assert_eq!(e.rto(), 6);
        // m = 1: m -= 0 → 1; sa = 1; m -= 6>>2 = 1 → 0; sv = 6; rto = 0 + 6.
        e.sample(1);
        assert_eq!((e.sa, e.sv, e.rto()), (1, 6, 6));
        // m = 2: m -= 0 → 2; sa = 3; m -= 1 → 1; sv = 7; rto = 0 + 7.
        e.sample(2);
        assert_eq!((e.sa, e.sv, e.rto()), (3, 7, 7));
        // m = 0: m -= 0 → 0; sa = 3; m -= 7>>2 = 1 → -1; sv = 6.
        e.sample(0);
        assert_eq!((e.sa, e.sv, e.rto()), (3, 6, 6));
    }

    #[test]
    fn table_backoff() {
        let rtos: Vec<i32> = (0..14)
            .map(|n| LwipBackoff::Table.next_rto(n, 6, 0))
            .collect();
        assert_eq!(
            rtos,
            vec![12, 24, 48, 96, 192, 384, 768, 768, 768, 768, 768, 768, 768, 768]
        );
    }

    #[test]
    fn two_then_one_point_three() {
        let b = LwipBackoff::TwoThenOnePointThree;
        let mut rto = 2; // 1 s
        let mut seq = Vec::new();
        for n in 0..5 {
            rto = b.next_rto(n, 2, rto);
            seq.push(rto);
        }
        // 1 s → 2 s → 4 s (2 s ≤ 3 s still doubles) → ×1.3: 10.4 → 10,
        // 13 → 13, 16.9 → 17.
        assert_eq!(seq, vec![4, 8, 10, 13, 17]);
        // Exactly 3 s still doubles.
        assert_eq!(b.next_rto(0, 6, 6), 12);
    }

    #[test]
    fn windows() {
        assert_eq!(initial_cwnd(536), 2144);
        assert_eq!(initial_cwnd(1460), 4380);
        assert_eq!(initial_cwnd(256), 1024);
        assert_eq!(initial_ssthresh(536), 5360);
        assert_eq!(
            after_timeout(4000, 10_000, 536, LwipLossWindow::OneMss),
            (2000, 536)
        );
        assert_eq!(
            after_timeout(4000, 10_000, 536, LwipLossWindow::HalfSsthresh),
            (2000, 1000)
        );
        assert_eq!(
            after_timeout(1000, 10_000, 536, LwipLossWindow::HalfSsthresh),
            (1072, 536)
        );
    }
}
