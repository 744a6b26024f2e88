//! One TCP endpoint as a sans-IO state machine (docs/spec/transport-tcp-spec.md §2).
//!
//! Time comes in as `u64` nanoseconds; segments come in through
//! [`TcpSocket::handle_segment`] and go out through
//! [`TcpSocket::poll_transmit`]; the socket asks to be woken at
//! [`TcpSocket::poll_timeout`] and is woken with
//! [`TcpSocket::handle_timeout`]. A driver calls `poll_transmit` until it
//! returns `None` after every input.
//!
//! Sequence numbers are kept internally as 64-bit offsets from each side's
//! initial sequence number (offset 0 is the SYN, data starts at 1), and
//! converted to 32-bit wrapping numbers only on the wire.
//!
//! What the model does (RFC 9293 unless stated):
//! - three-way handshake; SYN and SYN-ACK retransmitted on the RTO with
//!   binary backoff, up to the configured number of times; a duplicate SYN
//!   in SYN-RECEIVED is answered at once with the SYN-ACK again (as Linux does);
//!   the handshake's RTT is sampled when its SYN / SYN-ACK was not
//!   retransmitted (Karn), else data starts with the 3 s fallback RTO
//!   (RFC 6298 §5.7), and a connection whose SYN or SYN-ACK needed more than
//!   one retransmission starts with cwnd = 1 MSS (Linux `tcp_init_transfer`);
//! - the retransmission timer of RFC 6298 with Linux's estimator
//!   ([`super::rtt`]), ×2 backoff capped at the maximum RTO, Karn's rule (no
//!   sample when any newly acknowledged byte was ever retransmitted), and the
//!   backed-off RTO kept until the next valid sample;
//! - with [`TcpConfig::linux`] unset (`tcp-newreno`): go-back-N after a
//!   timeout (everything unacknowledged is resent as the window allows),
//!   NewReno ([`super::newreno`]) otherwise;
//! - with it set (`tcp`): Linux 4.9's loss recovery ([`super::linux49`]):
//!   SACK negotiated on the handshake (RFC 2018), SACK and D-SACK blocks
//!   (RFC 2883) on every ACK while data is held out of order, the sender's
//!   scoreboard ([`super::scoreboard`]), cwnd in packets, retransmission of
//!   the segments marked lost only, early retransmit, the tail loss probe,
//!   RACK, F-RTO and PRR as switched;
//! - Nagle's algorithm ([`crate::Nagle`]) and sender silly-window avoidance:
//!   a segment shorter than the MSS is not sent when the congestion or peer
//!   window, not the lack of data, makes it short and data is in flight;
//! - delayed ACKs: a constant timer started by the first unacknowledged
//!   in-order segment, an immediate ACK once two full segments' worth of data
//!   is unacknowledged, and immediate ACKs for out-of-order data, duplicate
//!   data, data that fills a gap, and FINs; any outgoing segment carries the
//!   ACK; duplicate ACKs are always pure ACKs; with the `quickack` and `ato`
//!   switches Linux's quick-ACK mode and adaptive timer ([`super::delack`]),
//!   and an immediate ACK of in-order data leaves as its own segment, before
//!   anything the application writes in answer;
//! - out-of-order data held and delivered when the gap fills ([`crate::reasm`]);
//! - FIN close in both directions, TIME-WAIT, RST on abort.
//!
//! Not modelled: timestamps, window scaling, Fast Open, urgent data, PMTU
//! discovery, simultaneous open, keep-alive.

use std::collections::VecDeque;

use super::config::{Nagle, TcpConfig};
use super::delack::AckTiming;
use super::linux49::{AckInfo, CaState, Linux49Cc};
use super::newreno::NewReno;
use super::rtt::RttEstimator;
use super::wheel::{Due, Wheel};
use crate::reasm::Reassembly;
use crate::segment::{Flags, Segment};
use crate::segment::{SackBlock, MAX_SACK_BLOCKS};
use crate::state::TcpState;
use crate::stats::{AbortReason, TcpEvent, TcpStats};
use crate::MS;

/// MSS assumed when the peer sends no MSS option (RFC 9293 §3.7.1).
const DEFAULT_MSS: u64 = 536;

/// One original transmission of a sequence range, for RTT sampling.
#[derive(Clone, Copy, Debug)]
struct Sent {
    start: u64,
    end: u64,
    at: u64,
    retransmitted: bool,
}

/// A sans-IO TCP endpoint.
#[derive(Debug)]
pub struct TcpSocket {
    cfg: TcpConfig,
    state: TcpState,
    /// Sending MSS (ours and the peer's smaller).
    mss: u64,
    // --- send side, offsets from our ISN ---
    iss: u32,
    snd_una: u64,
    snd_nxt: u64,
    snd_max: u64,
    snd_wnd: u64,
    snd_wl1: u64,
    snd_wl2: u64,
    /// Unacknowledged and unsent bytes; `send_buf[0]` is at offset `buf_off`.
    send_buf: VecDeque<u8>,
    buf_off: u64,
    /// close() called: a FIN follows the last byte.
    fin_queued: bool,
    /// Offset just past the last small segment sent (Minshall's Nagle).
    snd_sml: u64,
    sent: VecDeque<Sent>,
    /// SYN or SYN-ACK waiting to be (re)sent.
    syn_due: bool,
    syn_first_sent: Option<u64>,
    /// When the last answer to an out-of-window SYN left
    /// (`last_oow_ack_time`, Linux profiles).
    last_oow: Option<u64>,
    handshake_rexmits: u32,
    /// Retransmit the first unacknowledged segment now (fast retransmit).
    head_rexmit_due: bool,
    // --- timers ---
    rto: u64,
    backoff: u32,
    retries: u32,
    rto_at: Option<Due>,
    delack_at: Option<Due>,
    timewait_at: Option<Due>,
    rtt: RttEstimator,
    cc: NewReno,
    /// Linux 4.9's recovery (`Some` when [`TcpConfig::linux`] is set).
    l49: Option<Box<Linux49Cc>>,
    /// SACK negotiated (both SYNs carried SACK-permitted).
    sack_ok: bool,
    /// The peer's SYN carried the window-scale option (answered on the
    /// SYN-ACK with the `wscale` switch).
    peer_wscale: bool,
    /// D-SACK block owed on the next ACK (RFC 2883).
    dsack: Option<(u64, u64)>,
    /// Start of the latest out-of-order segment (its block is reported first).
    last_ooo: Option<u64>,
    /// Tail loss probe timer (replaces the RTO timer while armed).
    probe_at: Option<Due>,
    /// Early-retransmit timer (idem).
    er_at: Option<Due>,
    /// The probe timer fired: send a probe.
    probe_due: bool,
    // --- receive side, offsets from the peer's ISN ---
    irs: u32,
    rcv_nxt: u64,
    recv_buf: VecDeque<u8>,
    reasm: Reassembly,
    peer_fin: Option<u64>,
    fin_received: bool,
    /// In-order bytes received since the last ACK we sent.
    unacked_rcvd: u64,
    /// Send an ACK (may ride on data).
    ack_due: bool,
    /// Pure duplicate ACKs owed (one per out-of-order or duplicate segment).
    dupacks_due: u32,
    /// Quick-ACK mode and the adaptive delayed ACK (`Some` only when
    /// switched on; boxed so that the other profiles do not carry it).
    ack_timing: Option<Box<AckTiming>>,
    last_adv_wnd: u64,
    rst_due: bool,
    // --- reporting ---
    stats: TcpStats,
    events: VecDeque<TcpEvent>,
    abort_reason: Option<AbortReason>,
}

/// Signed distance from `base` to wire number `wire`, applied to offset `base_off`.
fn unwrap(base_off: u64, base_wire: u32, wire: u32) -> Option<u64> {
    let d = wire.wrapping_sub(base_wire) as i32 as i64;
    let v = base_off as i64 + d;
    (v >= 0).then_some(v as u64)
}

impl TcpSocket {
    fn new(cfg: TcpConfig, state: TcpState) -> Self {
        let mss = u64::from(cfg.mss.max(1));
        TcpSocket {
            iss: cfg.isn,
            rto: cfg.initial_rto,
            rtt: RttEstimator::new(cfg.min_rto),
            cc: NewReno::new(mss, cfg.initial_cwnd),
            l49: cfg
                .linux
                .map(|m| Box::new(Linux49Cc::new(m, cfg.initial_cwnd))),
            sack_ok: false,
            peer_wscale: false,
            dsack: None,
            last_ooo: None,
            probe_at: None,
            er_at: None,
            probe_due: false,
            last_adv_wnd: u64::from(cfg.rcv_wnd),
            state,
            mss,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            snd_wnd: 0,
            snd_wl1: 0,
            snd_wl2: 0,
            send_buf: VecDeque::new(),
            buf_off: 1,
            fin_queued: false,
            snd_sml: 0,
            sent: VecDeque::new(),
            syn_due: true,
            syn_first_sent: None,
            last_oow: None,
            handshake_rexmits: 0,
            head_rexmit_due: false,
            backoff: 0,
            retries: 0,
            rto_at: None,
            delack_at: None,
            timewait_at: None,
            irs: 0,
            rcv_nxt: 0,
            recv_buf: VecDeque::new(),
            reasm: Reassembly::default(),
            peer_fin: None,
            fin_received: false,
            unacked_rcvd: 0,
            ack_due: false,
            dupacks_due: 0,
            ack_timing: Some(AckTiming::new(cfg.linux))
                .filter(AckTiming::is_active)
                .map(Box::new),
            rst_due: false,
            stats: TcpStats::default(),
            events: VecDeque::new(),
            abort_reason: None,
            cfg,
        }
    }

    /// Opens a connection actively: the SYN is the first segment polled.
    pub fn connect(now: u64, cfg: TcpConfig) -> Self {
        let _ = now;
        Self::new(cfg, TcpState::SynSent)
    }

    /// Answers a SYN received by a listener: returns a socket in SYN-RECEIVED
    /// whose first polled segment is the SYN-ACK, or `None` if `syn` is not a
    /// SYN without ACK.
    pub fn accept(now: u64, cfg: TcpConfig, syn: &Segment) -> Option<Self> {
        let _ = now;
        if !syn.flags.contains(Flags::SYN)
            || syn.flags.contains(Flags::ACK)
            || syn.flags.contains(Flags::RST)
        {
            return None;
        }
        let mut s = Self::new(cfg, TcpState::SynReceived);
        s.irs = syn.seq;
        s.rcv_nxt = 1;
        s.learn_mss(syn.mss);
        s.snd_wnd = u64::from(syn.window);
        s.set_sack(syn.sack_permitted);
        s.peer_wscale = syn.wscale;
        Some(s)
    }

    fn set_sack(&mut self, peer: bool) {
        self.sack_ok = peer && self.cfg.linux.is_some_and(|m| m.sack);
        let ok = self.sack_ok;
        if let Some(l) = &mut self.l49 {
            l.set_sack(ok);
        }
    }

    fn learn_mss(&mut self, peer: Option<u16>) {
        let peer = peer.map_or(DEFAULT_MSS, |m| u64::from(m.max(1)));
        self.mss = u64::from(self.cfg.mss.max(1)).min(peer);
    }

    // ------------------------------------------------------------------
    // Queries
    // ------------------------------------------------------------------

    /// The connection state.
    pub fn state(&self) -> TcpState {
        self.state
    }
    /// Whether the handshake is done and the connection not yet fully closed.
    pub fn is_established(&self) -> bool {
        !matches!(
            self.state,
            TcpState::Closed | TcpState::SynSent | TcpState::SynReceived
        )
    }
    /// Whether the connection ended by timeout or reset, and why.
    pub fn abort_reason(&self) -> Option<AbortReason> {
        self.abort_reason
    }
    /// The sending MSS in force.
    pub fn mss(&self) -> u64 {
        self.mss
    }
    /// The RTO in force, backoff included (ns).
    pub fn rto(&self) -> u64 {
        self.rto
    }
    /// Timeouts in a row since the last valid RTT sample.
    pub fn backoff(&self) -> u32 {
        self.backoff
    }
    /// Smoothed RTT (ns), once sampled.
    pub fn srtt(&self) -> Option<u64> {
        self.rtt.srtt()
    }
    /// Congestion window (bytes).
    pub fn cwnd(&self) -> u64 {
        match &self.l49 {
            Some(l) => u64::from(l.cwnd()) * self.mss,
            None => self.cc.cwnd(),
        }
    }
    /// Slow-start threshold (bytes; `u64::MAX` until the first loss).
    pub fn ssthresh(&self) -> u64 {
        match &self.l49 {
            Some(l) if l.ssthresh() < 0x7fff_ffff => u64::from(l.ssthresh()) * self.mss,
            Some(_) => u64::MAX,
            None => self.cc.ssthresh(),
        }
    }
    /// Whether NewReno fast recovery is under way.
    pub fn in_fast_recovery(&self) -> bool {
        match &self.l49 {
            Some(l) => l.state() == CaState::Recovery,
            None => self.cc.in_recovery(),
        }
    }
    /// Sent but unacknowledged sequence space (bytes, FIN counts one).
    pub fn bytes_in_flight(&self) -> u64 {
        self.snd_max - self.snd_una
    }
    /// Bytes written by the application and not yet acknowledged.
    pub fn send_queue_len(&self) -> usize {
        self.send_buf.len()
    }
    /// Whether everything written (and the FIN, if closing) is acknowledged.
    pub fn all_acked(&self) -> bool {
        self.send_buf.is_empty() && (!self.fin_queued || self.snd_una == self.fin_off() + 1)
    }
    /// Counters.
    pub fn stats(&self) -> &TcpStats {
        &self.stats
    }
    /// Bytes ready for [`Self::recv`].
    pub fn recv_len(&self) -> usize {
        self.recv_buf.len()
    }
    /// Whether the peer's FIN has arrived and every byte before it was read.
    pub fn recv_finished(&self) -> bool {
        self.fin_received && self.recv_buf.is_empty()
    }

    // ------------------------------------------------------------------
    // Application side
    // ------------------------------------------------------------------

    /// Queues application bytes; returns how many were taken (all, unless
    /// the send buffer is full or the socket no longer sends).
    pub fn send(&mut self, data: &[u8]) -> usize {
        let open = matches!(
            self.state,
            TcpState::SynSent | TcpState::SynReceived | TcpState::Established | TcpState::CloseWait
        );
        if !open || self.fin_queued {
            return 0;
        }
        let n = data
            .len()
            .min(self.cfg.snd_buf.saturating_sub(self.send_buf.len()));
        self.send_buf.extend(&data[..n]);
        n
    }

    /// Reads delivered in-order bytes into `buf`; returns how many.
    pub fn recv(&mut self, buf: &mut [u8]) -> usize {
        let n = buf.len().min(self.recv_buf.len());
        for (d, s) in buf.iter_mut().zip(self.recv_buf.drain(..n)) {
            *d = s;
        }
        self.after_read();
        n
    }

    /// The delivered bytes as two slices (ring-buffer halves), without
    /// consuming them; pair with [`Self::consume`].
    pub fn recv_slices(&self) -> (&[u8], &[u8]) {
        self.recv_buf.as_slices()
    }

    /// Drops `n` delivered bytes (after [`Self::recv_slices`]).
    pub fn consume(&mut self, n: usize) {
        let n = n.min(self.recv_buf.len());
        self.recv_buf.drain(..n);
        self.after_read();
    }

    fn after_read(&mut self) {
        // Window update when reading reopened the window noticeably
        // (receiver silly-window avoidance, RFC 9293 §3.8.6.2.2).
        let wnd = self.adv_window();
        let step = (self.cfg.rcv_buf as u64 / 2).min(2 * self.mss);
        if self.is_established() && !self.fin_received && wnd >= self.last_adv_wnd + step {
            self.ack_due = true;
        }
    }

    /// Closes our direction: a FIN follows the queued data. In SYN-SENT with
    /// nothing queued this simply closes (RFC 9293 §3.10.4); with data queued
    /// (which this model lets an application write before the handshake
    /// ends) the FIN waits for the handshake, as in SYN-RECEIVED.
    pub fn close(&mut self) {
        match self.state {
            TcpState::SynSent if self.send_buf.is_empty() => self.enter_closed(),
            TcpState::SynSent | TcpState::SynReceived => self.fin_queued = true,
            TcpState::Established => {
                self.fin_queued = true;
                self.state = TcpState::FinWait1;
            }
            TcpState::CloseWait => {
                self.fin_queued = true;
                self.state = TcpState::LastAck;
            }
            _ => {}
        }
    }

    /// Aborts: the next polled segment is a RST, then the socket is closed.
    pub fn abort(&mut self) {
        if self.is_established() || self.state == TcpState::SynReceived {
            self.rst_due = true;
        }
        self.enter_closed();
    }

    /// Next trace event, if [`TcpConfig::record_events`] is on.
    pub fn poll_event(&mut self) -> Option<TcpEvent> {
        self.events.pop_front()
    }

    fn event(&mut self, e: TcpEvent) {
        if self.cfg.record_events {
            self.events.push_back(e);
        }
    }

    fn window_event(&mut self) {
        let (cwnd, ssthresh) = (self.cwnd(), self.ssthresh());
        self.event(TcpEvent::Window { cwnd, ssthresh });
    }

    // ------------------------------------------------------------------
    // Timers
    // ------------------------------------------------------------------

    /// When the socket next wants [`Self::handle_timeout`] (ns), if ever.
    pub fn poll_timeout(&self) -> Option<u64> {
        self.poll_timer().map(|d| d.at)
    }

    /// The timer behind [`Self::poll_timeout`]: when it fires and, on
    /// Linux's timer wheel, its level (of two timers due together, the one
    /// the wheel runs first: the higher level).
    pub fn poll_timer(&self) -> Option<Due> {
        let xmit = match (self.probe_at, self.er_at) {
            (None, None) => self.rto_at,
            (p, e) => p.or(e),
        };
        let first = |a: Option<Due>, b: Option<Due>| match (a, b) {
            (Some(x), Some(y)) => Some(if y.at < x.at || (y.at == x.at && y.level > x.level) {
                y
            } else {
                x
            }),
            (x, y) => x.or(y),
        };
        first(first(xmit, self.delack_at), self.timewait_at)
    }

    /// Runs every timer due at `now`.
    pub fn handle_timeout(&mut self, now: u64) {
        if self.delack_at.is_some_and(|t| t.at <= now) {
            self.delack_at = None;
            if let Some(a) = &mut self.ack_timing {
                a.timer_fired(self.rto);
            }
            self.ack_due = true;
        }
        if self.timewait_at.is_some_and(|t| t.at <= now) {
            self.enter_closed();
            return;
        }
        if self.probe_at.is_some_and(|t| t.at <= now) {
            self.probe_at = None;
            self.probe_due = true;
            return;
        }
        if self.er_at.is_some_and(|t| t.at <= now) {
            self.er_at = None;
            self.rearm_rto_from_head(now);
            let (una, nxt) = (self.snd_una, self.snd_max);
            if let Some(l) = &mut self.l49 {
                l.on_early_retransmit(una, nxt);
                self.stats.fast_retransmits += 1;
                self.event(TcpEvent::FastRetransmit);
                self.window_event();
            }
            return;
        }
        if self.probe_at.is_none()
            && self.er_at.is_none()
            && self.rto_at.is_some_and(|t| t.at <= now)
        {
            self.rto_at = None;
            self.on_rto();
        }
    }

    /// `tcp_rearm_rto` while a probe or early-retransmit timer was pending:
    /// the RTO counts from the head's latest transmission.
    fn rearm_rto_from_head(&mut self, now: u64) {
        let head = self.l49.as_ref().and_then(|l| l.sb.head().map(|h| h.xmit));
        self.rto_at = match head {
            Some(x) => Some(self.timer(now, (x + self.rto).saturating_sub(now).max(1))),
            None => None,
        };
    }

    /// `tcp_schedule_loss_probe` after sending or after an ACK: arms the
    /// probe timer when the RTO timer is the one pending.
    fn arm_probe(&mut self, now: u64) {
        if self.er_at.is_some() || self.rto_at.is_none() {
            return;
        }
        let can_send = self.new_data_possible();
        let srtt = self.rtt.srtt().unwrap_or(0);
        if let Some(l) = &self.l49 {
            if let Some(t) = l.loss_probe_timeout(now, srtt, can_send, self.rto_at.map(|d| d.at)) {
                self.probe_at = Some(self.timer(now, t));
            }
        }
    }

    /// Whether new data could go out now (`tcp_may_send_now`, roughly: data
    /// waits, the peer's window and cwnd have room).
    fn new_data_possible(&self) -> bool {
        let end_all = self.fin_off() + u64::from(self.fin_queued);
        let Some(l) = &self.l49 else { return false };
        self.snd_nxt < end_all
            && self.snd_una + self.snd_wnd > self.snd_nxt
            && l.quota() > 0
            && !l.sb.is_full()
    }

    /// When a timer armed at `now` to run `d` later fires: exactly then, or
    /// on Linux's timer wheel with the `wheel` switch ([`super::wheel`]).
    fn timer(&self, now: u64, d: u64) -> Due {
        match self.wheel() {
            Some(w) => w.arm(now, d),
            None => Due::exact(now + d),
        }
    }

    /// Linux's timer wheel at the modelled HZ (250, or 1000 with `hz1000`),
    /// with the `wheel` switch; `None` without.
    fn wheel(&self) -> Option<Wheel> {
        let m = self.cfg.linux.filter(|m| m.wheel)?;
        Some(if m.hz1000 {
            Wheel::HZ1000
        } else {
            Wheel::HZ250
        })
    }

    fn back_off(&mut self) {
        self.back_off_by(2);
    }

    /// A timeout: the RTO times `factor` (1 for Linux 6.x's linear SYN
    /// timeouts), at most the maximum RTO.
    fn back_off_by(&mut self, factor: u64) {
        let expired = self.rto;
        self.rto = (self.rto.saturating_mul(factor)).min(self.cfg.max_rto);
        self.backoff += 1;
        self.stats.rto_expirations += 1;
        let (next_rto, backoff) = (self.rto, self.backoff);
        self.event(TcpEvent::RtoExpired {
            expired,
            next_rto,
            backoff,
        });
    }

    fn on_rto(&mut self) {
        match self.state {
            TcpState::SynSent | TcpState::SynReceived => {
                // Linux 6.7+ (`tcp_retransmit_timer`, `tcp_write_timeout`):
                // the first `tcp_syn_linear_timeouts` SYN timeouts keep the
                // RTO, and add as many retries.
                // `backoff` counts the handshake's timeouts so far.
                let (limit, linear) = if self.state == TcpState::SynSent {
                    let linear = u32::from(self.cfg.syn_linear_timeouts);
                    (self.cfg.syn_retries + linear, linear)
                } else {
                    (self.cfg.synack_retries, 0)
                };
                if self.backoff >= limit {
                    self.abort_with(AbortReason::HandshakeTimeout);
                    return;
                }
                self.back_off_by(if self.backoff < linear { 1 } else { 2 });
                self.syn_due = true;
            }
            TcpState::Closed | TcpState::TimeWait => {}
            _ => {
                if self.snd_max == self.snd_una {
                    return;
                }
                if self.retries >= self.cfg.data_retries {
                    self.abort_with(AbortReason::RetransmitTimeout);
                    return;
                }
                let first = self.retries == 0;
                if let Some(l) = &mut self.l49 {
                    l.on_rto(self.snd_una, self.snd_max, self.retries);
                    self.retries += 1;
                    self.probe_at = None;
                    self.er_at = None;
                    self.probe_due = false;
                    self.window_event();
                    self.back_off();
                    self.head_rexmit_due = true;
                    return;
                }
                self.retries += 1;
                self.cc
                    .on_rto(self.snd_max - self.snd_una, self.snd_max, first);
                self.window_event();
                self.back_off();
                // Go-back-N: resend from the first unacknowledged byte.
                self.snd_nxt = self.snd_una;
                self.head_rexmit_due = false;
            }
        }
    }

    fn abort_with(&mut self, reason: AbortReason) {
        self.abort_reason = Some(reason);
        self.event(TcpEvent::Aborted(reason));
        self.enter_closed();
    }

    fn enter_closed(&mut self) {
        if self.state != TcpState::Closed {
            self.state = TcpState::Closed;
            self.event(TcpEvent::Closed);
        }
        self.rto_at = None;
        self.delack_at = None;
        self.timewait_at = None;
        self.syn_due = false;
        self.ack_due = false;
        self.dupacks_due = 0;
        self.head_rexmit_due = false;
    }

    fn enter_time_wait(&mut self, now: u64) {
        self.state = TcpState::TimeWait;
        self.rto_at = None;
        self.timewait_at = Some(self.timer(now, self.cfg.time_wait));
    }

    // ------------------------------------------------------------------
    // Incoming segments
    // ------------------------------------------------------------------

    fn wire_snd(&self, off: u64) -> u32 {
        self.iss.wrapping_add(off as u32)
    }
    fn wire_rcv(&self, off: u64) -> u32 {
        self.irs.wrapping_add(off as u32)
    }
    fn fin_off(&self) -> u64 {
        self.buf_off + self.send_buf.len() as u64
    }

    /// Processes one arriving segment.
    pub fn handle_segment(&mut self, now: u64, seg: &Segment) {
        match self.state {
            TcpState::Closed => {}
            TcpState::SynSent => self.on_segment_syn_sent(now, seg),
            _ => self.on_segment_synchronized(now, seg),
        }
    }

    fn on_segment_syn_sent(&mut self, now: u64, seg: &Segment) {
        let f = seg.flags;
        if !f.contains(Flags::ACK) {
            return; // simultaneous open is not modelled
        }
        if seg.ack != self.wire_snd(1) {
            return;
        }
        if f.contains(Flags::RST) {
            self.abort_with(AbortReason::Reset);
            return;
        }
        if !f.contains(Flags::SYN) {
            return;
        }
        self.irs = seg.seq;
        self.rcv_nxt = 1;
        self.learn_mss(seg.mss);
        self.set_sack(seg.sack_permitted);
        self.snd_una = 1;
        self.snd_wnd = u64::from(seg.window);
        self.snd_wl1 = 0;
        self.snd_wl2 = 1;
        self.sent.clear();
        self.complete_handshake(now);
        // The handshake's ACK leaves at once, as its own segment.
        self.dupacks_due += 1;
    }

    fn complete_handshake(&mut self, now: u64) {
        if self.state == TcpState::SynReceived && self.cfg.linux.is_some_and(|m| m.oow_reset) {
            // `tcp_create_openreq_child`: the child socket starts with no
            // stamp; the request socket's stays behind.
            self.last_oow = None;
        }
        self.rto_at = None;
        self.syn_due = false;
        self.backoff = 0;
        if self.handshake_rexmits == 0 {
            if let Some(t) = self.syn_first_sent {
                self.take_sample(now - t);
            }
        } else if !self.rtt.has_sample() {
            self.rto = self.cfg.fallback_rto.max(self.cfg.initial_rto);
        }
        let iw = if self.handshake_rexmits > 1 {
            1
        } else {
            self.cfg.initial_cwnd
        };
        self.cc.reset_window(self.mss, iw);
        if let Some(l) = &mut self.l49 {
            l.reset_window(iw);
        }
        self.state = if self.fin_queued {
            TcpState::FinWait1
        } else {
            TcpState::Established
        };
        self.snd_nxt = 1;
        self.snd_max = 1;
        self.snd_sml = 1;
        self.event(TcpEvent::Connected);
        self.window_event();
    }

    fn take_sample(&mut self, r: u64) {
        self.rtt.sample(r, self.snd_una, self.snd_max);
        self.rto = self.rtt.rto().unwrap_or(self.rto).min(self.cfg.max_rto);
        if let Some(w) = self.wheel() {
            // `icsk_rto` is kept in whole jiffies (`usecs_to_jiffies`).
            self.rto = w.round_up(self.rto);
        }
        self.backoff = 0;
        self.stats.rtt_samples += 1;
        if let Some(l) = &mut self.l49 {
            l.rtt_sample(r);
        }
        let srtt = self.rtt.srtt().unwrap_or(r);
        let rto = self.rto;
        self.event(TcpEvent::RttSample { rtt: r, srtt, rto });
    }

    fn on_segment_synchronized(&mut self, now: u64, seg: &Segment) {
        let f = seg.flags;
        if f.contains(Flags::RST) {
            let in_window = unwrap(self.rcv_nxt, self.wire_rcv(self.rcv_nxt), seg.seq)
                .is_some_and(|o| o >= self.rcv_nxt);
            if in_window {
                self.abort_with(AbortReason::Reset);
            }
            return;
        }
        if f.contains(Flags::SYN) {
            self.on_repeated_syn(now, seg);
            return;
        }
        if !f.contains(Flags::ACK) {
            return;
        }
        if self.state == TcpState::SynReceived {
            if seg.ack != self.wire_snd(1) {
                return;
            }
            self.snd_una = 1;
            self.snd_wnd = u64::from(seg.window);
            self.snd_wl1 =
                unwrap(self.rcv_nxt, self.wire_rcv(self.rcv_nxt), seg.seq).unwrap_or(self.rcv_nxt);
            self.snd_wl2 = 1;
            self.complete_handshake(now);
        }
        if !self.on_ack(now, seg) {
            return;
        }
        self.on_data(now, seg);
    }

    /// A SYN or SYN-ACK after our side is synchronized: a copy of one already
    /// received (counted as an unnecessary retransmission) or junk. Linux
    /// answers it at most once per `tcp_invalid_ratelimit` = 500 ms
    /// (`tcp_oow_rate_limited`): in SYN-RECEIVED with the SYN-ACK again,
    /// restarting the SYN-ACK timer from now (`tcp_check_req`), later with
    /// a challenge ACK (`tcp_validate_incoming`); with the `oow` switch.
    /// Without it (`tcp-newreno`, the star's sink) every copy is answered at
    /// once and the timer kept.
    fn on_repeated_syn(&mut self, now: u64, seg: &Segment) {
        if seg.seq != self.irs {
            return;
        }
        let limited = self.oow_rate_limited(now);
        if seg.flags.contains(Flags::ACK) {
            self.stats.dup_synacks += 1;
            self.event(TcpEvent::DuplicateSynAck);
            if !limited {
                self.dupacks_due += 1;
            }
        } else {
            self.stats.dup_syns += 1;
            self.event(TcpEvent::DuplicateSyn);
            if limited {
                return;
            }
            if self.state == TcpState::SynReceived {
                self.syn_due = true;
                if self.cfg.linux.is_some_and(|m| m.oow) {
                    self.rto_at = Some(self.timer(now, self.rto));
                }
            } else {
                self.dupacks_due += 1;
            }
        }
    }

    /// `tcp_oow_rate_limited` for a SYN: true if an answer to an
    /// out-of-window SYN left less than 500 ms ago (never without `oow`);
    /// otherwise notes that one leaves now.
    fn oow_rate_limited(&mut self, now: u64) -> bool {
        if !self.cfg.linux.is_some_and(|m| m.oow) {
            return false;
        }
        if self.last_oow.is_some_and(|t| now < t + 500 * MS) {
            return true;
        }
        self.last_oow = Some(now);
        false
    }

    /// ACK processing (RFC 9293 §3.10.7.4 fifth check). Returns false when
    /// the segment must be dropped.
    fn on_ack(&mut self, now: u64, seg: &Segment) -> bool {
        let Some(ack) = unwrap(self.snd_una, self.wire_snd(self.snd_una), seg.ack) else {
            return true;
        };
        if ack > self.snd_max {
            // Acknowledges something never sent: answer with an ACK, drop.
            self.ack_due = true;
            return false;
        }
        let seq = unwrap(self.rcv_nxt, self.wire_rcv(self.rcv_nxt), seg.seq).unwrap_or(0);
        let window = u64::from(seg.window);
        if self.l49.is_some() {
            self.on_ack_linux(now, seg, ack, seq, window);
            return true;
        }
        if ack > self.snd_una {
            self.on_new_ack(now, ack);
        } else if ack == self.snd_una
            && seg.payload.is_empty()
            && !seg.flags.contains(Flags::FIN)
            && window == self.snd_wnd
            && self.snd_max > self.snd_una
        {
            let act = self
                .cc
                .on_dupack(self.snd_una, self.snd_max - self.snd_una, self.snd_max);
            if act.entered_recovery {
                self.stats.fast_retransmits += 1;
                self.event(TcpEvent::FastRetransmit);
                self.window_event();
            }
            if act.retransmit {
                self.head_rexmit_due = true;
            }
        }
        // Window update (RFC 9293 §3.10.7.4: SND.WL1 / SND.WL2 rule).
        if ack >= self.snd_una
            && (self.snd_wl1 < seq || (self.snd_wl1 == seq && self.snd_wl2 <= ack))
        {
            self.snd_wnd = window;
            self.snd_wl1 = seq;
            self.snd_wl2 = ack;
        }
        true
    }

    /// ACK processing with Linux 4.9's recovery (`tcp_ack`).
    fn on_ack_linux(&mut self, now: u64, seg: &Segment, ack: u64, seq: u64, window: u64) {
        let prior_una = self.snd_una;
        let is_dupack = ack == self.snd_una
            && seg.payload.is_empty()
            && !seg.flags.contains(Flags::FIN)
            && window == self.snd_wnd
            && self.snd_max > self.snd_una;
        let not_dup = !seg.payload.is_empty() || window != self.snd_wnd;
        let mut blocks = [(0u64, 0u64); MAX_SACK_BLOCKS];
        let mut n = 0;
        if self.sack_ok {
            let base = self.wire_snd(self.snd_una);
            for b in seg.sack.as_slice() {
                if let (Some(l), Some(r)) = (
                    unwrap(self.snd_una, base, b.left),
                    unwrap(self.snd_una, base, b.right),
                ) {
                    if l < r && r <= self.snd_max {
                        blocks[n] = (l, r);
                        n += 1;
                    }
                }
            }
        }
        if ack > self.snd_una {
            self.on_new_ack(now, ack);
        }
        // Window update (RFC 9293 §3.10.7.4).
        if ack >= self.snd_una
            && (self.snd_wl1 < seq || (self.snd_wl1 == seq && self.snd_wl2 <= ack))
        {
            self.snd_wnd = window;
            self.snd_wl1 = seq;
            self.snd_wl2 = ack;
        }
        let end_all = self.fin_off() + u64::from(self.fin_queued);
        let info = AckInfo {
            prior_una,
            una: ack.max(prior_una),
            snd_nxt: self.snd_max,
            is_dupack,
            not_dup,
            may_send_now: self.new_data_possible(),
            has_unsent: self.snd_nxt < end_all && self.snd_una + self.snd_wnd > self.snd_nxt,
            srtt: self.rtt.srtt().unwrap_or(0),
            rto_at: self.rto_at.map(|d| d.at),
            rto: self.rto,
            mss: self.mss,
        };
        let Some(l) = &mut self.l49 else { return };
        let before = (l.cwnd(), l.ssthresh());
        let v = l.on_ack(now, &info, &blocks[..n]);
        let after = (l.cwnd(), l.ssthresh());
        self.stats.spurious_rtos += u64::from(v.spurious_rto);
        self.stats.dsacks_received += u64::from(v.dsack);
        if v.entered_recovery {
            self.stats.fast_retransmits += 1;
            self.event(TcpEvent::FastRetransmit);
        }
        if before != after {
            self.window_event();
        }
        if self.cfg.linux.is_some_and(|m| m.tlp1) {
            self.set_xmit_timer_linux6(now, ack > prior_una, v.early_retransmit_in);
            return;
        }
        // Timers: a pending probe or early retransmit gives way to the RTO
        // from the head; an ACK of new data restarts the RTO.
        if self.probe_at.is_some() || self.er_at.is_some() {
            self.probe_at = None;
            self.er_at = None;
            self.rearm_rto_from_head(now);
        }
        if self.snd_una == self.snd_max {
            self.rto_at = None;
        } else if ack > prior_una {
            self.rto_at = Some(self.timer(now, self.rto));
        }
        if let Some(d) = v.early_retransmit_in {
            self.er_at = Some(self.timer(now, d));
        } else {
            self.arm_probe(now);
        }
    }

    /// The timers after an ACK as Linux 4.15 and later set them (`tcp_ack`:
    /// `tcp_set_xmit_timer` only when the ACK acknowledged data,
    /// `FLAG_SET_XMIT_TIMER` from `tcp_clean_rtx_queue`): the probe is
    /// scheduled afresh, else the RTO restarted, from an ACK of data only; a
    /// duplicate or D-SACK ACK leaves a pending probe or RTO as it is. With
    /// the `tlp1` switch; the early-retransmit timer as before.
    fn set_xmit_timer_linux6(&mut self, now: u64, acked: bool, er_in: Option<u64>) {
        if self.snd_una == self.snd_max {
            self.probe_at = None;
            self.er_at = None;
            self.rto_at = None;
        } else if acked {
            self.probe_at = None;
            self.er_at = None;
            self.rto_at = Some(self.timer(now, self.rto));
        }
        if let Some(d) = er_in {
            self.probe_at = None;
            self.er_at = Some(self.timer(now, d));
        } else if acked {
            self.arm_probe(now);
        }
    }

    fn on_new_ack(&mut self, now: u64, ack: u64) {
        let acked = ack - self.snd_una;
        let flight_before = self.snd_max - self.snd_una;
        // Karn: sample only if no newly acknowledged byte was retransmitted.
        let mut earliest: Option<u64> = None;
        let mut any_rexmit = false;
        while let Some(front) = self.sent.front_mut() {
            if front.start >= ack {
                break;
            }
            any_rexmit |= front.retransmitted;
            earliest = Some(earliest.map_or(front.at, |e: u64| e.min(front.at)));
            if front.end <= ack {
                self.sent.pop_front();
            } else {
                front.start = ack;
                break;
            }
        }
        // Drop acknowledged bytes from the send buffer.
        let data_end = ack.min(self.fin_off());
        if data_end > self.buf_off {
            self.send_buf.drain(..(data_end - self.buf_off) as usize);
            self.buf_off = data_end;
        }
        self.snd_una = ack;
        if self.snd_nxt < ack {
            self.snd_nxt = ack;
        }
        self.retries = 0;
        if let (Some(t), false) = (earliest, any_rexmit) {
            self.take_sample(now - t);
        }
        if self.l49.is_some() {
            self.on_fin_acked(now, ack);
            return;
        }
        let before = (self.cc.cwnd(), self.cc.ssthresh());
        let act = self.cc.on_new_ack(acked, ack, flight_before, self.snd_max);
        if act.retransmit {
            self.head_rexmit_due = true;
        }
        if (self.cc.cwnd(), self.cc.ssthresh()) != before {
            self.window_event();
        }
        if self.snd_una == self.snd_max {
            self.rto_at = None;
        } else if act.restart_timer {
            self.rto_at = Some(self.timer(now, self.rto));
        }
        self.on_fin_acked(now, ack);
    }

    fn on_fin_acked(&mut self, now: u64, ack: u64) {
        // Our FIN acknowledged?
        if self.fin_queued && ack == self.fin_off() + 1 {
            match self.state {
                TcpState::FinWait1 => self.state = TcpState::FinWait2,
                TcpState::Closing => self.enter_time_wait(now),
                TcpState::LastAck => self.enter_closed(),
                _ => {}
            }
        }
    }

    fn adv_window(&self) -> u64 {
        let used = self.recv_buf.len() + self.reasm.len();
        (self.cfg.rcv_buf.saturating_sub(used) as u64).min(u64::from(self.cfg.rcv_wnd))
    }

    /// Segment text and FIN (RFC 9293 §3.10.7.4 seventh and eighth checks).
    fn on_data(&mut self, now: u64, seg: &Segment) {
        let has_fin = seg.flags.contains(Flags::FIN);
        if seg.payload.is_empty() && !has_fin {
            return;
        }
        let Some(start) = unwrap(self.rcv_nxt, self.wire_rcv(self.rcv_nxt), seg.seq) else {
            self.dupacks_due += 1;
            return;
        };
        let len = seg.payload.len() as u64;
        let end = start + len;
        if len > 0 {
            let receiving = matches!(
                self.state,
                TcpState::Established | TcpState::FinWait1 | TcpState::FinWait2
            ) && !self.fin_received;
            if end <= self.rcv_nxt || (start > self.rcv_nxt && self.reasm.covers(start, end)) {
                self.stats.dup_data_segments += 1;
                self.stats.dup_data_bytes += len;
                self.event(TcpEvent::DuplicateData {
                    start: start.saturating_sub(1),
                    end: end - 1,
                });
                if self.sack_ok {
                    self.dsack = Some((start, end));
                }
                if end <= self.rcv_nxt {
                    // `tcp_data_queue`: a retransmission of data we have.
                    self.enter_quickack_mode();
                } else if let Some(a) = &mut self.ack_timing {
                    a.schedule();
                }
                self.dupacks_due += 1;
            } else if receiving {
                let limit = self.rcv_nxt + self.adv_window();
                let take_end = end.min(limit);
                if start <= self.rcv_nxt {
                    let from = (self.rcv_nxt - start) as usize;
                    let to = (take_end - start) as usize;
                    if to > from {
                        self.recv_buf.extend(&seg.payload[from..to]);
                        self.unacked_rcvd += (to - from) as u64;
                        self.rcv_nxt = take_end;
                        if let Some(a) = &mut self.ack_timing {
                            let mss = u64::from(self.cfg.mss);
                            a.data_received(
                                now,
                                (to - from) as u64,
                                self.rto,
                                mss,
                                self.last_adv_wnd,
                            );
                        }
                    }
                    if !self.reasm.is_empty() {
                        self.rcv_nxt = self.reasm.drain_into(self.rcv_nxt, &mut self.recv_buf);
                        self.ack_now(); // filled (part of) a gap
                    } else if self.unacked_rcvd >= 2 * self.mss
                        || self.cfg.delayed_ack == 0
                        || self
                            .ack_timing
                            .as_ref()
                            .is_some_and(|a| a.in_quickack_mode())
                    {
                        self.ack_now();
                    } else if self.ack_timing.as_ref().is_some_and(|a| a.is_adaptive()) {
                        self.delay_ack(now);
                    } else if self.delack_at.is_none() {
                        self.delack_at = Some(self.timer(now, self.cfg.delayed_ack));
                    }
                    if take_end < end {
                        self.ack_due = true; // beyond the window
                    }
                } else if start < limit {
                    let to = (take_end - start) as usize;
                    self.reasm.insert(start, &seg.payload[..to]);
                    self.last_ooo = Some(start);
                    if let Some(a) = &mut self.ack_timing {
                        a.schedule();
                    }
                    self.dupacks_due += 1;
                } else {
                    // Out of the window (`tcp_data_queue`'s out_of_window).
                    self.enter_quickack_mode();
                    self.dupacks_due += 1;
                }
            }
        }
        if has_fin {
            if self.fin_received {
                // A repeated FIN.
                self.dupacks_due += 1;
                if self.state == TcpState::TimeWait {
                    self.timewait_at = Some(self.timer(now, self.cfg.time_wait));
                }
            } else if self.peer_fin.is_none() || self.peer_fin == Some(end) {
                self.peer_fin = Some(end);
            }
        }
        self.check_peer_fin(now);
    }

    /// An immediate ACK of in-order data. With the `quickack` switch it is
    /// sent as Linux sends it, from the receive path (`__tcp_ack_snd_check`
    /// → `tcp_send_ack`): its own segment, ahead of anything the application
    /// writes in answer; otherwise it rides on the next segment.
    fn ack_now(&mut self) {
        if self.cfg.linux.is_some_and(|m| m.quickack) {
            self.dupacks_due += 1;
        } else {
            self.ack_due = true;
        }
    }

    /// `tcp_send_delayed_ack` with the adaptive timeout: a pending timer is
    /// kept if earlier; one due within a quarter of the timeout fires now.
    fn delay_ack(&mut self, now: u64) {
        let srtt = self.rtt.srtt();
        let ato = self
            .ack_timing
            .as_ref()
            .map_or(self.cfg.delayed_ack, |a| a.delay(srtt));
        match self.delack_at {
            Some(t) if t.at <= now + ato / 4 => {
                self.delack_at = None;
                self.ack_now();
            }
            // An earlier pending timer stays where it is (`tcp_send_delayed_ack`
            // re-arms it unchanged).
            Some(t) => {
                let new = self.timer(now, ato);
                self.delack_at = Some(if t.at <= new.at { t } else { new });
            }
            None => self.delack_at = Some(self.timer(now, ato)),
        }
    }

    /// `tcp_enter_quickack_mode` for duplicate or out-of-window data.
    fn enter_quickack_mode(&mut self) {
        let (mss, wnd) = (u64::from(self.cfg.mss), self.last_adv_wnd);
        if let Some(a) = &mut self.ack_timing {
            a.enter_quickack_mode(mss, wnd);
        }
    }

    fn check_peer_fin(&mut self, now: u64) {
        if self.fin_received || self.peer_fin != Some(self.rcv_nxt) {
            return;
        }
        self.fin_received = true;
        self.rcv_nxt += 1;
        self.ack_due = true;
        self.event(TcpEvent::PeerClosed);
        let our_fin_acked = self.fin_queued && self.snd_una == self.fin_off() + 1;
        match self.state {
            TcpState::Established | TcpState::SynReceived => self.state = TcpState::CloseWait,
            TcpState::FinWait1 if our_fin_acked => self.enter_time_wait(now),
            TcpState::FinWait1 => self.state = TcpState::Closing,
            TcpState::FinWait2 => self.enter_time_wait(now),
            _ => {}
        }
    }

    // ------------------------------------------------------------------
    // Outgoing segments
    // ------------------------------------------------------------------

    /// The next segment to send, if any (allocates its payload; see
    /// [`Self::poll_transmit_into`] to reuse one).
    pub fn poll_transmit(&mut self, now: u64) -> Option<Segment> {
        let mut seg = Segment::default();
        self.poll_transmit_into(now, &mut seg).then_some(seg)
    }

    /// Writes the next segment to send into `out` (reusing its payload
    /// buffer); returns false, leaving `out` cleared, when there is none.
    pub fn poll_transmit_into(&mut self, now: u64, out: &mut Segment) -> bool {
        out.clear();
        if self.rst_due {
            self.rst_due = false;
            out.seq = self.wire_snd(self.snd_nxt);
            out.flags = Flags::RST;
            self.stats.segments_sent += 1;
            return true;
        }
        match self.state {
            TcpState::Closed => return false,
            TcpState::SynSent | TcpState::SynReceived => {
                if self.syn_due {
                    self.emit_syn(now, out);
                    return true;
                }
                return false;
            }
            _ => {}
        }
        if self.dupacks_due > 0 {
            self.dupacks_due -= 1;
            return self.emit_pure_ack(out);
        }
        if self.l49.is_some() {
            if let Some(done) = self.poll_linux(now, out) {
                return done;
            }
        } else if self.head_rexmit_due {
            self.head_rexmit_due = false;
            let end = (self.snd_una + self.mss).min(self.snd_max);
            if end > self.snd_una {
                self.emit_range(now, self.snd_una, end, out);
                return true;
            }
        }
        if let Some((start, end)) = self.next_range(false) {
            self.emit_range(now, start, end, out);
            self.snd_nxt = end;
            self.after_new_data(now, start, end);
            return true;
        }
        if self.ack_due {
            return self.emit_pure_ack(out);
        }
        false
    }

    /// Retransmissions and probes of Linux 4.9's recovery, in its order: the
    /// timeout's head retransmission, F-RTO's new data, the segments marked
    /// lost (`tcp_xmit_retransmit_queue`), the tail loss probe. `Some` when
    /// decided (true: `out` holds a segment), `None` to go on with new data.
    fn poll_linux(&mut self, now: u64, out: &mut Segment) -> Option<bool> {
        let l = self.l49.as_mut()?;
        if self.head_rexmit_due {
            self.head_rexmit_due = false;
            if let Some(h) = l.sb.head().copied() {
                l.on_retransmitted(0, now);
                self.emit_range(now, h.start, h.end, out);
                return Some(true);
            }
        }
        if l.rexmit_new {
            l.rexmit_new = false;
            if let Some((start, end)) = self.next_range(true) {
                self.emit_range(now, start, end, out);
                self.snd_nxt = end;
                self.after_new_data(now, start, end);
                return Some(true);
            }
            if let Some(l) = &mut self.l49 {
                l.frto_no_new_data();
            }
        }
        let l = self.l49.as_mut()?;
        if l.rexmit_lost {
            if let Some(i) = l.next_retransmission() {
                let s = *l.sb.segs().nth(i)?;
                l.on_retransmitted(i, now);
                self.emit_range(now, s.start, s.end, out);
                return Some(true);
            }
            l.rexmit_lost = false;
        }
        if self.probe_due {
            self.probe_due = false;
            // `tcp_send_loss_probe`: with `tlp1` (Linux 5.8+) nothing while
            // a probe episode is open; then new data if the peer's window
            // allows, with Nagle off and one segment past cwnd
            // (`tcp_write_xmit` with `push_one` = 2 forces a quota of one,
            // Linux 4.9 as 6.x), else the last segment again.
            if self.cfg.linux.is_some_and(|m| m.tlp1) && !l.probe_allowed() {
                self.rearm_rto_from_head(now);
                return None;
            }
            if let Some((start, end)) = self.next_range_with(true, true) {
                self.emit_range(now, start, end, out);
                self.stats.loss_probes += 1;
                self.snd_nxt = end;
                self.after_new_data(now, start, end);
                let snd_nxt = self.snd_max;
                if let Some(l) = &mut self.l49 {
                    l.on_probe_new_data(snd_nxt);
                }
                self.probe_at = None;
                self.rto_at = Some(self.timer(now, self.rto));
                return Some(true);
            }
            let l = self.l49.as_mut()?;
            if l.probe_allowed() {
                if let Some(t) = l.sb.tail().copied() {
                    let i = l.sb.packets_out() as usize - 1;
                    l.on_probe_retransmitted(i, now, self.snd_max);
                    self.emit_range(now, t.start, t.end, out);
                    self.stats.loss_probes += 1;
                    self.rto_at = Some(self.timer(now, self.rto));
                    return Some(true);
                }
            }
            self.rearm_rto_from_head(now);
        }
        None
    }

    /// Bookkeeping after a new segment with Linux 4.9's recovery: the
    /// scoreboard record, and the timers as `tcp_event_new_data_sent` and
    /// `tcp_write_xmit` leave them: a pending probe or early-retransmit
    /// timer gives way to the RTO counted from the head, then a probe is
    /// scheduled afresh.
    fn after_new_data(&mut self, now: u64, start: u64, end: u64) {
        let una = self.snd_una;
        let Some(l) = &mut self.l49 else { return };
        l.on_new_data_sent(start, end, now, una);
        if self.probe_at.is_some() || self.er_at.is_some() {
            self.probe_at = None;
            self.er_at = None;
            self.rearm_rto_from_head(now);
        }
        self.arm_probe(now);
    }

    fn emit_syn(&mut self, now: u64, out: &mut Segment) {
        self.syn_due = false;
        out.seq = self.iss;
        out.mss = Some(self.cfg.mss);
        out.sack_permitted = self.cfg.linux.is_some_and(|m| m.sack)
            && (self.state == TcpState::SynSent || self.sack_ok);
        out.wscale = self.cfg.linux.is_some_and(|m| m.wscale)
            && (self.state == TcpState::SynSent || self.peer_wscale);
        out.window = self.adv_window() as u16;
        if self.state == TcpState::SynReceived {
            out.flags = Flags::SYN | Flags::ACK;
            out.ack = self.wire_rcv(self.rcv_nxt);
        } else {
            out.flags = Flags::SYN;
        }
        if self.syn_first_sent.is_none() {
            self.syn_first_sent = Some(now);
        } else {
            self.handshake_rexmits += 1;
            if self.state == TcpState::SynReceived {
                self.stats.synack_retransmissions += 1;
            } else {
                self.stats.syn_retransmissions += 1;
            }
        }
        self.snd_nxt = 1;
        self.snd_max = 1;
        if self.rto_at.is_none() {
            self.rto_at = Some(self.timer(now, self.rto));
        }
        self.stats.segments_sent += 1;
    }

    fn fill_ack(&mut self, out: &mut Segment) {
        out.flags = out.flags | Flags::ACK;
        out.ack = self.wire_rcv(self.rcv_nxt);
        if self.sack_ok {
            self.fill_sack(out);
        }
        let wnd = self.adv_window();
        out.window = wnd as u16;
        self.last_adv_wnd = wnd;
        self.ack_due = false;
        self.unacked_rcvd = 0;
        self.delack_at = None;
        if let Some(a) = &mut self.ack_timing {
            a.ack_sent();
        }
    }

    /// SACK option (RFC 2018 §4): a D-SACK block first if one is owed
    /// (RFC 2883 §4), then the held out-of-order data, most recent first.
    fn fill_sack(&mut self, out: &mut Segment) {
        out.sack.clear();
        let (irs, rcv_nxt) = (self.irs, self.rcv_nxt);
        let wire = |o: u64| irs.wrapping_add(o as u32);
        if let Some((l, r)) = self.dsack.take() {
            out.sack.push(SackBlock {
                left: wire(l),
                right: wire(r),
            });
        }
        if self.reasm.is_empty() {
            return;
        }
        let recent = self.last_ooo.filter(|&o| o >= rcv_nxt);
        let room = MAX_SACK_BLOCKS - out.sack.len();
        let sack = &mut out.sack;
        self.reasm.blocks(recent, room, |l, r| {
            sack.push(SackBlock {
                left: wire(l),
                right: wire(r),
            });
        });
    }

    fn emit_pure_ack(&mut self, out: &mut Segment) -> bool {
        out.seq = self.wire_snd(self.snd_nxt);
        self.fill_ack(out);
        self.stats.segments_sent += 1;
        self.stats.pure_acks_sent += 1;
        true
    }

    /// The next new-or-go-back-N range `[start, end)` allowed by the
    /// windows, Nagle and silly-window avoidance; FIN counts one at the end.
    fn next_range(&mut self, nagle_off: bool) -> Option<(u64, u64)> {
        self.next_range_with(nagle_off, false)
    }

    /// [`Self::next_range`]; `probe`: the tail loss probe's new segment,
    /// which a full cwnd does not hold back (`tcp_write_xmit` with
    /// `push_one` = 2: "force out a loss probe", a quota of one segment).
    fn next_range_with(&mut self, nagle_off: bool, probe: bool) -> Option<(u64, u64)> {
        if !matches!(
            self.state,
            TcpState::Established
                | TcpState::CloseWait
                | TcpState::FinWait1
                | TcpState::Closing
                | TcpState::LastAck
        ) {
            return None;
        }
        let fin_off = self.fin_off();
        let end_all = if self.fin_queued {
            fin_off + 1
        } else {
            fin_off
        };
        if self.snd_nxt >= end_all {
            return None;
        }
        let start = self.snd_nxt;
        let data_avail = fin_off.saturating_sub(start);
        if data_avail == 0 {
            // Only the FIN is left: not held by cwnd (as in Linux).
            return Some((start, start + 1));
        }
        let in_flight = self.snd_nxt - self.snd_una;
        let peer_wnd = self.snd_wnd.max(if in_flight == 0 { 1 } else { 0 });
        let usable = match &self.l49 {
            // cwnd counts packets (`tcp_cwnd_test`); the peer's window bytes.
            Some(l) if (l.quota() == 0 && !probe) || l.sb.is_full() => 0,
            Some(_) => peer_wnd.saturating_sub(in_flight),
            None => self.cc.cwnd().min(peer_wnd).saturating_sub(in_flight),
        };
        let retransmitting = start < self.snd_max;
        let mut len = data_avail.min(self.mss).min(usable);
        if retransmitting {
            // Go-back-N: resend what was sent, coalesced up to an MSS.
            len = len.min(self.snd_max.min(fin_off) - start);
        }
        if len == 0 {
            return None;
        }
        let mut end = start + len;
        if len < self.mss && !retransmitting {
            // Sender SWS avoidance: short because of the window, not the data.
            if len < data_avail && in_flight > 0 {
                return None;
            }
            if !self.fin_queued && !nagle_off && self.nagle_holds() {
                return None;
            }
        }
        if self.fin_queued && end == fin_off {
            end += 1;
        }
        Some((start, end))
    }

    fn nagle_holds(&self) -> bool {
        match self.cfg.nagle {
            Nagle::Off => false,
            Nagle::Classic => self.snd_max > self.snd_una,
            Nagle::Minshall => self.snd_sml > self.snd_una && self.snd_sml <= self.snd_max,
        }
    }

    /// Fills `out` with the sequence range `[start, end)` (data, plus FIN if
    /// the range reaches past the last byte) and does the bookkeeping:
    /// retransmission marks, RTT records, timer, counters.
    fn emit_range(&mut self, now: u64, start: u64, end: u64, out: &mut Segment) {
        let fin_off = self.fin_off();
        let data_end = end.min(fin_off);
        out.seq = self.wire_snd(start);
        if end > fin_off {
            out.flags = Flags::FIN;
        }
        if data_end > start {
            let from = (start - self.buf_off) as usize;
            let to = (data_end - self.buf_off) as usize;
            out.payload.extend(self.send_buf.range(from..to));
        }
        self.fill_ack(out);
        let len = (data_end.saturating_sub(start)) as usize;
        // Retransmitted part.
        if start < self.snd_max {
            let re_end = end.min(self.snd_max);
            for s in self.sent.iter_mut() {
                if s.start < re_end && s.end > start {
                    s.retransmitted = true;
                }
            }
            self.stats.retransmitted_segments += 1;
            self.stats.retransmitted_bytes += re_end.min(fin_off).saturating_sub(start);
        }
        // New part.
        if end > self.snd_max {
            let from = start.max(self.snd_max);
            self.sent.push_back(Sent {
                start: from,
                end,
                at: now,
                retransmitted: false,
            });
            self.snd_max = end;
        }
        if len > 0 && (len as u64) < self.mss {
            self.snd_sml = data_end;
        }
        if self.rto_at.is_none() {
            self.rto_at = Some(self.timer(now, self.rto));
        }
        self.stats.segments_sent += 1;
        if len > 0 {
            self.stats.data_segments_sent += 1;
            self.stats.data_bytes_sent += len as u64;
            if let Some(a) = &mut self.ack_timing {
                a.data_sent(now);
            }
        }
    }
}
