//! When a Linux receiver acknowledges: quick-ACK mode and the adaptive
//! delayed-ACK timeout (the `quickack` and `ato` switches of
//! [`crate::Mechanisms`]; `docs/decisions/tcp-choices.md`, "A Linux 6.x host").
//!
//! Linux 4.9 and 6.x share these rules (`net/ipv4/tcp_input.c`,
//! `tcp_output.c`, `tcp_timer.c`); docs/spec/transport-tcp-spec.md §2 replaces them by a
//! constant 200 ms timer for the thesis's hosts, so `tcp` runs with both
//! switches off and this state is inert. With them on:
//!
//! - **Quick-ACK mode** (`tcp_incr_quickack`, `tcp_enter_quickack_mode`):
//!   the first data of a connection (`tcp_event_data_recv` with `ato` = 0)
//!   allows min(rcv_wnd / (2·rcv_mss), 16) immediate ACKs (2 if that is 0);
//!   duplicate or out-of-window data enters the mode again and leaves
//!   ping-pong mode; a gap longer than the RTO since the last data adds
//!   quick ACKs. Each ACK sent while an ACK of data was owed uses one
//!   (`tcp_dec_quickack_mode`); the last one resets ato to 40 ms. While
//!   quick ACKs are left and the connection is not in ping-pong mode
//!   (`tcp_in_quickack_mode`), every data segment is acknowledged at once.
//! - **Ping-pong (interactive) mode** (`tcp_event_data_sent`): data sent
//!   less than `ato` after the last data arrived marks the connection
//!   interactive (`tcp_pingpong_thresh` = 1 since 6.6, and 4.9's flag); the
//!   delayed-ACK timer firing while interactive leaves the mode
//!   (`tcp_delack_timer_handler`).
//! - **ato** (`tcp_event_data_recv`): 40 ms (`TCP_ATO_MIN`) at the first
//!   data; then, with m the time since the last data: m ≤ 20 ms gives
//!   ato/2 + 20 ms, m < ato gives ato/2 + m (at most the RTO); the timer
//!   firing without ping-pong doubles it (at most the RTO).
//! - **The delayed-ACK timer** (`tcp_send_delayed_ack`): ato, bounded above
//!   40 ms by max(SRTT, 40 ms) and 200 ms (`TCP_DELACK_MAX`; all CoAP
//!   segments are shorter than rcv_mss, so the "pushed" bound applies); a
//!   pending timer is kept if earlier, and an ACK due within ato/4 goes now.
//!
//! Not modelled: `tcp_measure_rcv_mss`'s shrinking of rcv_mss to repeated
//! small segments of at least 108 bytes (CoAP's segments here are smaller),
//! ECN's quick ACKs, and 6.x's SACK compression of out-of-order ACKs
//! (`tcp_comp_sack_delay_ns`: the first three are sent at once, as here).

use super::config::Mechanisms;
use crate::MS;

/// `TCP_ATO_MIN` (= `TCP_DELACK_MIN`): 40 ms.
pub const ATO_MIN: u64 = 40 * MS;
/// `TCP_DELACK_MAX`: 200 ms.
pub const DELACK_MAX: u64 = 200 * MS;
/// `TCP_MAX_QUICKACKS`.
pub const MAX_QUICKACKS: u32 = 16;
/// `TCP_MSS_DEFAULT`, an upper bound of the initial rcv_mss estimate.
const MSS_DEFAULT: u64 = 536;
/// `TCP_MIN_MSS`, its lower bound.
const MIN_MSS: u64 = 88;

/// A receiver's ACK timing state (`icsk_ack`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckTiming {
    quickack: bool,
    adaptive: bool,
    /// Quick ACKs left (`icsk_ack.quick`).
    quick: u32,
    /// Delayed-ACK timeout estimate (ns; `icsk_ack.ato`, 0 before any data).
    ato: u64,
    /// When in-order data last arrived (`icsk_ack.lrcvtime`).
    lrcvtime: u64,
    /// Interactive mode (`inet_csk_in_pingpong_mode`).
    pingpong: bool,
    /// An ACK of received data is owed (`inet_csk_ack_scheduled`).
    scheduled: bool,
    /// The receiver's MSS estimate (`icsk_ack.rcv_mss`), 0 until data.
    rcv_mss: u64,
}

impl AckTiming {
    /// The state for these switches (inert for `None` and with both off).
    pub fn new(m: Option<Mechanisms>) -> Self {
        AckTiming {
            quickack: m.is_some_and(|m| m.quickack),
            adaptive: m.is_some_and(|m| m.adaptive_ato),
            ..Self::default()
        }
    }

    /// Whether either switch is on.
    pub fn is_active(&self) -> bool {
        self.quickack || self.adaptive
    }
    /// Whether the adaptive timeout is on.
    pub fn is_adaptive(&self) -> bool {
        self.adaptive
    }
    /// Quick ACKs left.
    pub fn quick(&self) -> u32 {
        self.quick
    }
    /// The delayed-ACK timeout estimate (ns).
    pub fn ato(&self) -> u64 {
        self.ato
    }
    /// Whether the connection is in ping-pong (interactive) mode.
    pub fn pingpong(&self) -> bool {
        self.pingpong
    }

    /// `tcp_in_quickack_mode`: every data segment is acknowledged at once.
    pub fn in_quickack_mode(&self) -> bool {
        self.quickack && self.quick > 0 && !self.pingpong
    }

    /// `tcp_initialize_rcv_mss` on first use, then raised by full segments
    /// (`tcp_measure_rcv_mss`).
    fn measure_rcv_mss(&mut self, len: u64, adv_mss: u64, rcv_wnd: u64) {
        if self.rcv_mss == 0 {
            self.rcv_mss = adv_mss.min(rcv_wnd / 2).clamp(MIN_MSS, MSS_DEFAULT);
        }
        if len >= self.rcv_mss {
            self.rcv_mss = len.min(adv_mss);
        }
    }

    /// `tcp_incr_quickack`: `rcv_wnd` is the window last advertised.
    fn incr_quickack(&mut self, rcv_wnd: u64) {
        let mut q = rcv_wnd / (2 * self.rcv_mss.max(1));
        if q == 0 {
            q = 2;
        }
        let q = q.min(u64::from(MAX_QUICKACKS)) as u32;
        self.quick = self.quick.max(q);
    }

    /// `tcp_enter_quickack_mode`: duplicate or out-of-window data.
    pub fn enter_quickack_mode(&mut self, adv_mss: u64, rcv_wnd: u64) {
        if !self.is_active() {
            return;
        }
        self.scheduled = true;
        self.measure_rcv_mss(0, adv_mss, rcv_wnd);
        self.incr_quickack(rcv_wnd);
        self.pingpong = false;
        self.ato = ATO_MIN;
    }

    /// Out-of-order data or a FIN: an ACK is owed (`inet_csk_schedule_ack`).
    pub fn schedule(&mut self) {
        self.scheduled = true;
    }

    /// `tcp_event_data_recv`: `len` bytes of in-order data at `now`; `rto`
    /// is the current RTO, `adv_mss` our MSS, `rcv_wnd` the window last
    /// advertised.
    pub fn data_received(&mut self, now: u64, len: u64, rto: u64, adv_mss: u64, rcv_wnd: u64) {
        if !self.is_active() {
            return;
        }
        self.scheduled = true;
        self.measure_rcv_mss(len, adv_mss, rcv_wnd);
        if self.ato == 0 {
            // The first data of the connection.
            self.incr_quickack(rcv_wnd);
            self.ato = ATO_MIN;
        } else {
            let m = now.saturating_sub(self.lrcvtime);
            if m <= ATO_MIN / 2 {
                self.ato = self.ato / 2 + ATO_MIN / 2;
            } else if m < self.ato {
                self.ato = (self.ato / 2 + m).min(rto);
            } else if m > rto {
                self.incr_quickack(rcv_wnd);
            }
        }
        self.lrcvtime = now;
    }

    /// `tcp_event_data_sent`: a segment with data left at `now`.
    pub fn data_sent(&mut self, now: u64) {
        if self.is_active() && now.saturating_sub(self.lrcvtime) < self.ato {
            self.pingpong = true;
        }
    }

    /// `tcp_event_ack_sent` → `tcp_dec_quickack_mode`: a segment carrying
    /// our ACK left.
    pub fn ack_sent(&mut self) {
        if self.quick > 0 && self.scheduled {
            if self.quick <= 1 {
                self.quick = 0;
                self.ato = ATO_MIN;
            } else {
                self.quick -= 1;
            }
        }
        self.scheduled = false;
    }

    /// `tcp_send_delayed_ack`'s timeout (ns) with the adaptive switch;
    /// `srtt` is the smoothed RTT, if sampled.
    pub fn delay(&self, srtt: Option<u64>) -> u64 {
        let mut ato = self.ato;
        if ato > ATO_MIN {
            // Every CoAP segment is shorter than rcv_mss (ICSK_ACK_PUSHED):
            // the bound is TCP_DELACK_MAX, lowered to the RTT if known.
            let mut max_ato = DELACK_MAX;
            if let Some(s) = srtt {
                max_ato = max_ato.min(s.max(ATO_MIN));
            }
            ato = ato.min(max_ato);
        }
        ato.min(DELACK_MAX)
    }

    /// `tcp_delack_timer_handler` with an ACK owed: without ping-pong the
    /// timeout doubles (at most `rto`); in ping-pong mode the mode ends and
    /// ato is 40 ms again.
    pub fn timer_fired(&mut self, rto: u64) {
        if !self.is_active() || !self.scheduled {
            return;
        }
        if self.pingpong {
            self.pingpong = false;
            self.ato = ATO_MIN;
        } else {
            self.ato = (self.ato * 2).min(rto);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn linux6() -> AckTiming {
        AckTiming::new(Some(Mechanisms::LINUX6))
    }

    #[test]
    fn inert_without_the_switches() {
        let mut a = AckTiming::new(Some(Mechanisms::THESIS));
        a.data_received(0, 10, 1_000 * MS, 256, 65535);
        assert!(!a.in_quickack_mode());
        assert_eq!((a.quick(), a.ato()), (0, 0));
        assert_eq!(AckTiming::new(None), AckTiming::default());
    }

    /// rcv_mss = min(256, 65535/2, 536) = 256; quick = min(65535 / 512, 16)
    /// = 16; with a 1000-byte window min(1000 / 512, 16) = 1; a window of
    /// 400 bytes gives rcv_mss = max(200, 88) = 200 and 400 / 400 = 1; a
    /// 100-byte window rcv_mss = 88 and 100 / 176 = 0 → 2.
    #[test]
    fn first_data_allows_sixteen_quick_acks() {
        for (wnd, quick) in [(65535, 16), (1000, 1), (400, 1), (100, 2)] {
            let mut a = linux6();
            a.data_received(0, 2, SEC_1, 256, wnd);
            assert_eq!(a.quick(), quick, "window {wnd}");
            assert_eq!(a.ato(), ATO_MIN);
            assert!(a.in_quickack_mode());
        }
    }

    const SEC_1: u64 = 1_000 * MS;

    /// Sixteen ACKs of data use the sixteen quick ACKs; the seventeenth
    /// data segment waits for the timer. An ACK sent with nothing owed
    /// (a segment of ours carrying an old ACK) uses none.
    #[test]
    fn quick_acks_are_counted_down() {
        let mut a = linux6();
        for k in 0..16 {
            a.data_received(k * 100 * MS, 2, SEC_1, 256, 65535);
            assert!(a.in_quickack_mode(), "segment {k}");
            a.ack_sent();
            a.ack_sent(); // nothing owed: not counted
        }
        assert_eq!(a.quick(), 0);
        a.data_received(1_600 * MS, 2, SEC_1, 256, 65535);
        assert!(!a.in_quickack_mode());
    }

    /// ato from 40 ms: m = 10 ms (≤ 20) → 40/2 + 20 = 40; m = 30 ms (< 40)
    /// → 20 + 30 = 50; m = 45 ms (< 50) → 25 + 45 = 70; m = 500 ms (≥ 70,
    /// ≤ RTO) → unchanged; the timer firing doubles it: 140, then 280,
    /// bounded by the RTO (250 ms).
    #[test]
    fn ato_follows_the_arrivals_and_doubles_on_the_timer() {
        let mut a = linux6();
        let mut t = 0;
        a.data_received(t, 2, SEC_1, 256, 65535);
        for (m, ato) in [(10, 40), (30, 50), (45, 70), (500, 70)] {
            t += m * MS;
            a.data_received(t, 2, SEC_1, 256, 65535);
            assert_eq!(a.ato(), ato * MS, "after a gap of {m} ms");
        }
        a.timer_fired(SEC_1);
        assert_eq!(a.ato(), 140 * MS);
        a.timer_fired(250 * MS);
        assert_eq!(a.ato(), 250 * MS);
        // The timer waits min(ato, max(SRTT, 40 ms), 200 ms).
        assert_eq!(a.delay(None), 200 * MS);
        assert_eq!(a.delay(Some(120 * MS)), 120 * MS);
        assert_eq!(a.delay(Some(10 * MS)), 40 * MS);
    }

    /// Data sent 5 ms after data arrived (< ato = 40 ms) makes the
    /// connection interactive: no quick ACKs although 15 are left; the
    /// delayed-ACK timer firing ends the mode (ato back to 40 ms) and the
    /// quick ACKs apply again. A gap longer than the RTO adds quick ACKs.
    #[test]
    fn ping_pong_mode_suspends_quick_acks() {
        let mut a = linux6();
        a.data_received(0, 2, SEC_1, 256, 65535);
        a.ack_sent();
        assert_eq!(a.quick(), 15);
        a.data_sent(5 * MS);
        assert!(a.pingpong());
        a.data_received(100 * MS, 2, SEC_1, 256, 65535);
        assert!(!a.in_quickack_mode());
        a.timer_fired(SEC_1);
        assert!(!a.pingpong() && a.in_quickack_mode());
        assert_eq!(a.ato(), ATO_MIN);
        // Sent 50 ms after the last data (≥ ato): not interactive.
        a.data_sent(150 * MS);
        assert!(!a.pingpong());
        // Use all quick ACKs, then a gap of 1.5 s > RTO gives 16 again.
        for _ in 0..15 {
            a.schedule();
            a.ack_sent();
        }
        assert_eq!(a.quick(), 0);
        a.data_received(1_600 * MS, 2, SEC_1, 256, 65535);
        assert_eq!(a.quick(), 16);
        // Duplicate data: quick-ACK mode again, interactive mode left.
        a.data_sent(1_601 * MS);
        assert!(a.pingpong());
        a.enter_quickack_mode(256, 65535);
        assert!(a.in_quickack_mode());
    }
}
