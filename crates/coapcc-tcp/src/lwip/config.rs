//! The options of one lwIP build (`opt.h`) and the published variant it runs
//! (docs/spec/transport-tcp-spec.md §3).

use super::{LwipBackoff, LwipLossWindow, FIRST_TIMER_DELAY};
use crate::SEC;

/// lwIP's `INITIAL_MSS` cap: the send MSS before (or without) the peer's MSS
/// option is `min(TCP_MSS, 536)` (`tcp_priv.h`).
pub const INITIAL_MSS_CAP: u16 = 536;

/// IPv4 + TCP header bytes that `tcp_eff_send_mss` takes off the MTU.
const IP_TCP_HEADERS: u16 = 40;

/// Parameters of one lwIP endpoint. [`LwipConfig::lwip`] is lwIP 2.1 with its
/// defaults and the settings of the published comparison.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LwipConfig {
    /// `TCP_MSS`: the compile-time MSS (default 536). It bounds the MSS
    /// announced in the SYN and the one accepted from the peer
    /// (`tcp_parseopt`), and sizes `TCP_WND`, `TCP_SND_BUF` and the window
    /// update threshold.
    pub tcp_mss: u16,
    /// The interface MTU. With `TCP_CALCULATE_EFF_SEND_MSS` (on by default)
    /// lwIP announces and sends at most `MTU − 40` (`tcp_eff_send_mss`): 256
    /// on the 296-byte dumbbell, 536 (from `TCP_MSS`) over Ethernet or Wi-Fi.
    pub mtu: u16,
    /// `TCP_WND`: the receive window (default `4 · TCP_MSS` = 2144).
    pub rcv_wnd: u16,
    /// `TCP_SND_BUF`: bytes written and not yet acknowledged.
    pub snd_buf: u32,
    /// Initial ssthresh (bytes). lwIP 2.0.2+ sets it to `TCP_SND_BUF`, 1.4
    /// to `10 · 536`; the published comparison's 5360 bytes is both with
    /// `TCP_SND_BUF = 10 · TCP_MSS`.
    pub initial_ssthresh: u32,
    /// RTO before any sample, in ticks (`3000 / TCP_SLOW_INTERVAL` = 6; the
    /// estimator's initial `sv` too). lwIP 2.2 names it `LWIP_TCP_RTO_TIME`.
    pub initial_rto_ticks: i32,
    /// `TCP_MAXRTX`: retransmissions of data before giving up (12).
    pub max_rtx: u8,
    /// `TCP_SYNMAXRTX`: retransmissions of a SYN before giving up (6).
    pub syn_max_rtx: u8,
    /// How the RTO grows on a timeout: lwIP's table or the "lwIP back-off"
    /// variant.
    pub backoff: LwipBackoff,
    /// cwnd after a timeout: one MSS (lwIP) or the "lwIP cwnd" variant.
    pub loss_window: LwipLossWindow,
    /// Nagle's algorithm (`tcp_do_output_nagle`); lwIP's default is on.
    pub nagle: bool,
    /// Delayed ACKs (every second segment, else the 250 ms fast timer). Off:
    /// every in-order segment is acknowledged at once (a sink that "ACKs
    /// every segment").
    pub delayed_ack: bool,
    /// Time of this device's first TCP timer call (ns), shared by every
    /// connection of the device: [`FIRST_TIMER_DELAY`] after its first
    /// connection became active.
    pub timer_origin: u64,
    /// Initial send sequence number.
    pub isn: u32,
    /// Whether to queue [`crate::TcpEvent`]s.
    pub record_events: bool,
}

/// lwIP's `TCP_SYN_RCVD_TIMEOUT` in ticks (20 s).
pub const SYN_RCVD_TIMEOUT_TICKS: u64 = 20 * SEC / super::TICK;
/// lwIP's `TCP_FIN_WAIT_TIMEOUT` in ticks (20 s).
pub const FIN_WAIT_TIMEOUT_TICKS: u64 = 20 * SEC / super::TICK;
/// Twice lwIP's `TCP_MSL` in ticks (2 · 60 s): TIME-WAIT and LAST-ACK.
pub const TWO_MSL_TICKS: u64 = 2 * 60 * SEC / super::TICK;

impl LwipConfig {
    /// lwIP 2.1 on an Ethernet or Wi-Fi interface (MTU 1500, so MSS 536),
    /// original rules (no variant): `TCP_WND` 2144, `TCP_SND_BUF` and initial
    /// ssthresh 5360, initial RTO 3 s, 12 / 6 retransmissions, Nagle and
    /// delayed ACKs on, its timer starting 250 ms after time 0.
    pub fn lwip() -> Self {
        let tcp_mss = 536;
        LwipConfig {
            tcp_mss,
            mtu: 1500,
            rcv_wnd: 4 * tcp_mss,
            snd_buf: 10 * u32::from(tcp_mss),
            initial_ssthresh: 10 * u32::from(tcp_mss),
            initial_rto_ticks: 6,
            max_rtx: 12,
            syn_max_rtx: 6,
            backoff: LwipBackoff::Table,
            loss_window: LwipLossWindow::OneMss,
            nagle: true,
            delayed_ack: true,
            timer_origin: FIRST_TIMER_DELAY,
            isn: 0,
            record_events: false,
        }
    }

    /// The same with a published variant.
    pub fn variant(backoff: LwipBackoff, loss_window: LwipLossWindow) -> Self {
        LwipConfig {
            backoff,
            loss_window,
            ..Self::lwip()
        }
    }

    /// The send MSS lwIP derives from an MSS value (`tcp_eff_send_mss`): at
    /// most `MTU − 40`.
    pub fn eff_send_mss(&self, mss: u16) -> u16 {
        mss.min(self.mtu.saturating_sub(IP_TCP_HEADERS)).max(1)
    }

    /// The MSS option of our SYN (`tcp_output_segment`:
    /// `tcp_eff_send_mss(TCP_MSS)`).
    pub fn announced_mss(&self) -> u16 {
        self.eff_send_mss(self.tcp_mss)
    }

    /// The send MSS before the peer's option is known (`tcp_connect`):
    /// `INITIAL_MSS`, then `tcp_eff_send_mss`.
    pub fn initial_mss(&self) -> u16 {
        self.eff_send_mss(self.tcp_mss.min(INITIAL_MSS_CAP))
    }

    /// The send MSS after a SYN carrying `option` (`tcp_parseopt`: an option
    /// above `TCP_MSS` or 0 means `TCP_MSS`; none keeps `INITIAL_MSS`), then
    /// `tcp_eff_send_mss`.
    pub fn mss_from_option(&self, option: Option<u16>) -> u16 {
        match option {
            None => self.initial_mss(),
            Some(m) if m == 0 || m > self.tcp_mss => self.eff_send_mss(self.tcp_mss),
            Some(m) => self.eff_send_mss(m),
        }
    }
}

impl Default for LwipConfig {
    fn default() -> Self {
        Self::lwip()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_mss() {
        let c = LwipConfig::lwip();
        assert_eq!(
            (c.rcv_wnd, c.snd_buf, c.initial_ssthresh),
            (2144, 5360, 5360)
        );
        assert_eq!(c.announced_mss(), 536);
        assert_eq!(c.mss_from_option(Some(1460)), 536);
        assert_eq!(c.mss_from_option(Some(256)), 256);
        assert_eq!(c.mss_from_option(None), 536);
        let d = LwipConfig { mtu: 296, ..c };
        // The dumbbell: 296 − 40.
        assert_eq!(d.announced_mss(), 256);
        assert_eq!(d.mss_from_option(Some(536)), 256);
        assert_eq!(SYN_RCVD_TIMEOUT_TICKS, 40);
        assert_eq!(TWO_MSL_TICKS, 240);
    }
}
