//! lwIP's TCP (docs/spec/transport-tcp-spec.md §3): the `lwip` profile and its three
//! published variants (Mhamdi & Abdul Khalek 2023).
//!
//! - this module: the arithmetic, as pure functions of whole 500 ms ticks —
//!   the integer Van Jacobson estimator, the RTO after the n-th timeout
//!   (lwIP's shift table or the "lwIP back-off" variant), the loss window
//!   after a timeout (lwIP or the "lwIP cwnd" variant), the initial windows;
//! - [`LwipConfig`]: the compile-time options of an lwIP build and the
//!   variant;
//! - [`TickClock`]: the device's 250 ms / 500 ms timer grid;
//! - [`LwipSocket`]: one endpoint running lwIP's rules, with the same
//!   sans-IO API as [`crate::TcpSocket`].
//!
//! The rules were read from lwIP STABLE-2_1_3_RELEASE (`src/core/tcp.c`,
//! `tcp_in.c`, `tcp_out.c`, `src/include/lwip/opt.h`, `priv/tcp_priv.h`) and
//! compared with STABLE-2_0_3_RELEASE; where the two differ the model follows
//! 2.1.3 and `docs/decisions/tcp-choices.md` ("lwIP profile") says what 2.0 does.

mod clock;
mod config;
mod socket;

pub use clock::{TickClock, FAST_TICK, FIRST_TIMER_DELAY};
pub use config::LwipConfig;
pub use socket::LwipSocket;

/// Length of one slow-timer tick (ns): lwIP's `TCP_SLOW_INTERVAL`, 500 ms.
pub const TICK: u64 = 500_000_000;

/// lwIP's backoff table (`tcp_backoff` in `tcp.c`), indexed by the timeout
/// count `nrtx` (docs/spec/transport-tcp-spec.md §3).
pub const BACKOFF: [u8; 13] = [1, 2, 3, 4, 5, 6, 7, 7, 7, 7, 7, 7, 7];

/// Data retransmissions before lwIP gives up (`TCP_MAXRTX`, `opt.h`).
pub const MAX_RTX: u32 = 12;
/// SYN retransmissions before lwIP gives up (`TCP_SYNMAXRTX`, `opt.h`).
pub const SYN_MAX_RTX: u32 = 6;

/// The largest RTO lwIP stores (`pcb->rto` is an `s16_t`; `tcp_slowtmr`
/// clamps the backed-off value to `0x7FFF` ticks).
pub const MAX_RTO_TICKS: i32 = 0x7FFF;

/// lwIP's estimator: `sa` = 8·SRTT and `sv` = 4·mdev, in ticks
/// (docs/spec/transport-tcp-spec.md §3; `tcp_receive` in `tcp_in.c`, initial values in
/// `tcp_alloc`).
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
    /// sv += m` (Van Jacobson's integer form, as `tcp_receive` applies it).
    pub fn sample(&mut self, m: i32) {
        let mut m = m - (self.sa >> 3);
        self.sa += m;
        if m < 0 {
            m = -m;
        }
        m -= self.sv >> 2;
        self.sv += m;
    }

    /// `(sa>>3) + sv` (ticks): the RTO after a sample and after any ACK of
    /// new data (`tcp_receive`).
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
    /// estimator's base RTO and the RTO that just expired; lwIP's
    /// `tcp_slowtmr` (docs/spec/transport-tcp-spec.md §3). Not clamped: see
    /// [`Self::next_rto_clamped`].
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

    /// [`Self::next_rto`] clamped to [`MAX_RTO_TICKS`] as `tcp_slowtmr`
    /// stores it.
    pub fn next_rto_clamped(self, n: u32, base: i32, current: i32) -> i32 {
        let shifted = match self {
            LwipBackoff::Table => {
                let shift = BACKOFF[(n as usize).min(BACKOFF.len() - 1)];
                i64::from(base) << shift
            }
            LwipBackoff::TwoThenOnePointThree => i64::from(self.next_rto(n, base, current)),
        };
        shifted.clamp(1, i64::from(MAX_RTO_TICKS)) as i32
    }
}

/// What cwnd becomes after a retransmission timeout: lwIP's one MSS, or one
/// of three readings of the published "lwIP cwnd" variant (paper §4.2: "set
/// the *cwnd* to 50% of its *ssthresh* limit instead of resetting it back to
/// 1 × MSS"), which leaves open which ssthresh, and whether the window the
/// timeout interrupted bounds it (`docs/decisions/tcp-choices.md`, "The
/// "lwIP cwnd" variant"); the variants' names run `min`, the one that both
/// "drops" the window and halves it (paper §4.2, §5.2). Each is at least
/// one MSS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LwipLossWindow {
    /// lwIP: one MSS (`tcp_slowtmr`).
    OneMss,
    /// `prior`: half the ssthresh in force when the timer fires (the limit
    /// the window was growing toward), before lwIP recomputes it. Can
    /// exceed the cwnd the timeout interrupted.
    HalfPriorSsthresh,
    /// `min`, the `tcp-lwip-cwnd` profile: half of min(cwnd, ssthresh in
    /// force): the window the timeout interrupted, capped at the limit,
    /// halved; never above the interrupted cwnd.
    HalfMinCwnd,
    /// `fresh`: half the ssthresh lwIP has just recomputed,
    /// max(min(cwnd, wnd)/2, 2·MSS) / 2 (the spec's transport-tcp §3
    /// sentence, "ssthresh as just recomputed").
    HalfFreshSsthresh,
}

impl LwipLossWindow {
    /// The readings of the cwnd variant by the name the hidden profile
    /// names take after `:` (`tcp-lwip-cwnd:prior`), the listed names'
    /// first.
    pub const READINGS: [(&'static str, LwipLossWindow); 3] = [
        ("min", LwipLossWindow::HalfMinCwnd),
        ("prior", LwipLossWindow::HalfPriorSsthresh),
        ("fresh", LwipLossWindow::HalfFreshSsthresh),
    ];

    /// The reading called `name` ([`Self::READINGS`]).
    pub fn from_reading(name: &str) -> Option<Self> {
        Self::READINGS
            .iter()
            .find(|(n, _)| *n == name)
            .map(|&(_, l)| l)
    }

    /// This reading's name; `None` for lwIP's one MSS.
    pub fn reading(self) -> Option<&'static str> {
        Self::READINGS
            .iter()
            .find(|&&(_, l)| l == self)
            .map(|&(n, _)| n)
    }
}

/// (ssthresh, cwnd) after a timeout that fires with `cwnd`, the peer's
/// advertised window `wnd` (`snd_wnd`) and `ssthresh` in force:
/// `ssthresh = max(min(cwnd, wnd)/2, 2·MSS)` (docs/spec/transport-tcp-spec.md
/// §3; `tcp_slowtmr`), and cwnd the loss window — one MSS, or the cwnd
/// variant's reading (paper §4.2), at least one MSS.
pub fn after_timeout(
    cwnd: u64,
    wnd: u64,
    ssthresh: u64,
    mss: u64,
    loss: LwipLossWindow,
) -> (u64, u64) {
    let prior = ssthresh;
    let fresh = (cwnd.min(wnd) / 2).max(2 * mss);
    let cwnd = match loss {
        LwipLossWindow::OneMss => mss,
        LwipLossWindow::HalfPriorSsthresh => prior / 2,
        LwipLossWindow::HalfMinCwnd => cwnd.min(prior) / 2,
        LwipLossWindow::HalfFreshSsthresh => fresh / 2,
    };
    (fresh, cwnd.max(mss))
}

/// lwIP's initial window: `min(4·MSS, max(2·MSS, 4380))`
/// (`LWIP_TCP_CALC_INITIAL_CWND` in `tcp_in.c`, applied when the handshake
/// completes; docs/spec/transport-tcp-spec.md §3).
pub fn initial_cwnd(mss: u64) -> u64 {
    (4 * mss).min((2 * mss).max(4380))
}

/// The initial ssthresh of the published comparison: 10·MSS (lwIP 1.4's
/// `tcp_alloc`; 2.x starts from `TCP_SND_BUF`, a byte constant: see
/// [`LwipConfig::initial_ssthresh`]).
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
        // cwnd 4000 under ssthresh 5360 (slow start), window 10 000:
        // ssthresh = max(4000/2, 1072) = 2000; lwIP cwnd 536; the variant
        // (`min`) max(min(4000, 5360)/2, 536) = 2000, half the interrupted
        // window; `prior` max(5360/2, 536) = 2680 (half the limit in force).
        assert_eq!(
            after_timeout(4000, 10_000, 5360, 536, LwipLossWindow::OneMss),
            (2000, 536)
        );
        assert_eq!(
            after_timeout(4000, 10_000, 5360, 536, LwipLossWindow::HalfMinCwnd),
            (2000, 2000)
        );
        assert_eq!(
            after_timeout(4000, 10_000, 5360, 536, LwipLossWindow::HalfPriorSsthresh),
            (2000, 2680)
        );
        // After earlier timeouts left ssthresh at 2·MSS = 1072, cwnd 1000:
        // `min` max(min(1000, 1072)/2, 536) = max(500, 536) = 536.
        assert_eq!(
            after_timeout(1000, 10_000, 1072, 536, LwipLossWindow::HalfMinCwnd),
            (1072, 536)
        );
    }

    /// The RTO after n timeouts, from the (sa, sv) given by samples,
    /// following `tcp_slowtmr` with the current RTO as the variant's input.
    fn rtos(b: LwipBackoff, e: LwipEstimator, n: u32) -> Vec<i32> {
        let mut rto = e.rto();
        (0..n)
            .map(|k| {
                rto = b.next_rto_clamped(k, e.rto(), rto);
                rto
            })
            .collect()
    }

    #[test]
    fn rto_after_n_timeouts_from_samples() {
        // Samples 2, 2, 1 ticks from (sa, sv) = (0, 6):
        // m=2: sa = 0+2 = 2; sv = 6 + (2 − 6>>2=1) = 7.
        // m=2: m = 2 − 2>>3 = 2; sa = 4; sv = 7 + (2 − 7>>2=1) = 8.
        // m=1: m = 1 − 4>>3 = 1; sa = 5; sv = 8 + (1 − 8>>2=2) = 7.
        // RTO = 5>>3 + 7 = 7 ticks = 3.5 s.
        let mut e = LwipEstimator::default();
        for m in [2, 2, 1] {
            e.sample(m);
        }
        assert_eq!((e.sa, e.sv, e.rto()), (5, 7, 7));
        // lwIP: 7 << 1..7, then 7 << 7 = 896 for ever.
        assert_eq!(
            rtos(LwipBackoff::Table, e, 9),
            vec![14, 28, 56, 112, 224, 448, 896, 896, 896]
        );
        // Back-off: 3.5 s > 3 s, so ×1.3 from the first timeout:
        // 9.1 → 9, 11.7 → 12, 15.6 → 16, 20.8 → 21, 27.3 → 27, 35.1 → 35.
        assert_eq!(
            rtos(LwipBackoff::TwoThenOnePointThree, e, 6),
            vec![9, 12, 16, 21, 27, 35]
        );
    }

    #[test]
    fn rto_around_three_seconds() {
        // Three samples of 0 ticks from (0, 6): sv = 6−1 = 5, 5−1 = 4, 4−1 = 3
        // (then 3 − 3>>2 = 3 stays): RTO 3 ticks = 1.5 s.
        let mut e = LwipEstimator::default();
        for _ in 0..3 {
            e.sample(0);
        }
        assert_eq!((e.sa, e.sv, e.rto()), (0, 3, 3));
        assert_eq!(
            rtos(LwipBackoff::Table, e, 8),
            vec![6, 12, 24, 48, 96, 192, 384, 384]
        );
        // 1.5 s → ×2 = 3 s; 3 s is still "≤ 3 s" → ×2 = 6 s (12 ticks); then
        // ×1.3: 15.6 → 16, 20.8 → 21.
        assert_eq!(
            rtos(LwipBackoff::TwoThenOnePointThree, e, 5),
            vec![6, 12, 16, 21, 27]
        );
        // No sample: the initial 6 ticks (3 s).
        let e0 = LwipEstimator::default();
        assert_eq!(rtos(LwipBackoff::Table, e0, 3), vec![12, 24, 48]);
        assert_eq!(
            rtos(LwipBackoff::TwoThenOnePointThree, e0, 3),
            vec![12, 16, 21]
        );
    }

    #[test]
    fn rto_is_clamped_to_s16() {
        // 300 << 7 = 38400 > 0x7FFF.
        assert_eq!(
            LwipBackoff::Table.next_rto_clamped(6, 300, 300),
            MAX_RTO_TICKS
        );
        assert_eq!(
            LwipBackoff::TwoThenOnePointThree.next_rto_clamped(0, 0, 30_000),
            MAX_RTO_TICKS
        );
    }

    /// The loss window of every reading after one timeout, in the order
    /// lwIP, `prior`, `min`, `fresh`.
    fn all_readings(cwnd: u64, wnd: u64, ssthresh: u64, mss: u64) -> Vec<(u64, u64)> {
        [
            LwipLossWindow::OneMss,
            LwipLossWindow::HalfPriorSsthresh,
            LwipLossWindow::HalfMinCwnd,
            LwipLossWindow::HalfFreshSsthresh,
        ]
        .into_iter()
        .map(|l| after_timeout(cwnd, wnd, ssthresh, mss, l))
        .collect()
    }

    #[test]
    fn loss_windows_of_the_published_comparison() {
        // Paper §4.2: "the cwnd can drop from 10 × MSS down to 1 × MSS"; the
        // variant sets it "to 50% of its ssthresh limit". The star (paper
        // Table 2): MSS 536, initial ssthresh 10·536 = 5360, the sink's
        // window 14·536 = 7504.
        //
        // cwnd grown to ssthresh, 5360. lwIP recomputes ssthresh =
        // max(min(5360, 7504)/2, 2·536) = max(2680, 1072) = 2680.
        // lwIP: 536. prior: 5360/2 = 2680. min: min(5360, 5360)/2 = 2680.
        // fresh: 2680/2 = 1340. The three agree only on the paper's
        // "multiplicative decrease (by 0.5)" when cwnd sits at the limit,
        // and `fresh` halves twice.
        assert_eq!(
            all_readings(5360, 7504, 5360, 536),
            vec![(2680, 536), (2680, 2680), (2680, 2680), (2680, 1340)]
        );
        // A timeout at the initial window: cwnd = min(4·536, max(2·536,
        // 4380)) = 2144. ssthresh = max(min(2144, 7504)/2, 1072) = 1072.
        // lwIP: 536. prior: 5360/2 = 2680, above the 2144 the timeout
        // interrupted. min: min(2144, 5360)/2 = 1072. fresh: 1072/2 = 536.
        assert_eq!(
            all_readings(2144, 7504, 5360, 536),
            vec![(1072, 536), (1072, 2680), (1072, 1072), (1072, 536)]
        );
        // The dumbbell: MTU 296, so MSS min(536, 296 − 40) = 256; initial
        // cwnd min(4·256, max(2·256, 4380)) = 1024; initial ssthresh still
        // TCP_SND_BUF = 5360 bytes; the lwIP server's TCP_WND = 4·536 = 2144.
        // ssthresh = max(min(1024, 2144)/2, 2·256) = 512. lwIP: 256. prior:
        // 5360/2 = 2680 (2.6 times the interrupted 1024). min:
        // min(1024, 5360)/2 = 512. fresh: 512/2 = 256 (one MSS, as lwIP).
        assert_eq!(
            all_readings(1024, 2144, 5360, 256),
            vec![(512, 256), (512, 2680), (512, 512), (512, 256)]
        );
        // A second timeout after `prior`'s first, on the dumbbell: cwnd
        // 2680, ssthresh 512. ssthresh = max(min(2680, 2144)/2, 512) = 1072;
        // prior: 512/2 = 256; min: min(2680, 512)/2 = 256.
        assert_eq!(
            after_timeout(2680, 2144, 512, 256, LwipLossWindow::HalfPriorSsthresh),
            (1072, 256)
        );
        assert_eq!(
            after_timeout(2680, 2144, 512, 256, LwipLossWindow::HalfMinCwnd),
            (1072, 256)
        );
        // Never below one MSS: cwnd 600 under ssthresh 5360 (min: 300 →
        // 536) and the fresh floor 2·536/2 = 536.
        assert_eq!(
            all_readings(600, 7504, 5360, 536),
            vec![(1072, 536), (1072, 2680), (1072, 536), (1072, 536)]
        );
    }

    #[test]
    fn readings_by_name() {
        assert_eq!(
            LwipLossWindow::from_reading("min"),
            Some(LwipLossWindow::HalfMinCwnd)
        );
        assert_eq!(LwipLossWindow::from_reading("half"), None);
        // The listed names' reading first.
        assert_eq!(LwipLossWindow::READINGS[0].0, "min");
        assert_eq!(LwipLossWindow::OneMss.reading(), None);
        assert_eq!(LwipLossWindow::HalfFreshSsthresh.reading(), Some("fresh"));
    }
}
