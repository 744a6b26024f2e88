//! One lwIP TCP endpoint as a sans-IO state machine (docs/spec/transport-tcp-spec.md §3).
//!
//! The API is [`crate::TcpSocket`]'s: time comes in as `u64` nanoseconds,
//! segments through [`LwipSocket::handle_segment`], and go out through
//! [`LwipSocket::poll_transmit_into`]; the socket asks to be woken at
//! [`LwipSocket::poll_timeout`]. A driver calls `poll_transmit_into` until it
//! returns false after every input, which plays the part of the `tcp_output`
//! call lwIP makes at the end of `tcp_input`, after a write and in its timers.
//!
//! The state is lwIP's `tcp_pcb`, kept the way lwIP keeps it: the send queue
//! as two lists of whole segments (`unsent`, `unacked`) cut when the
//! application writes, the retransmission timer as a count of slow ticks
//! (`rtime`), one RTT measurement at a time (`rttest`, `rtseq`), the flags
//! `TF_ACK_DELAY`, `TF_ACK_NOW`, `TF_INFR`, `TF_RTO`, `TF_FIN`. Every rule
//! names the lwIP function it follows; `docs/decisions/tcp-choices.md` ("lwIP profile")
//! lists where lwIP versions differ and what the model leaves out.
//!
//! Sequence numbers are 64-bit offsets inside (our SYN is offset 0, data from
//! 1), 32-bit wrapping numbers on the wire.

use std::collections::VecDeque;

use super::config::{FIN_WAIT_TIMEOUT_TICKS, SYN_RCVD_TIMEOUT_TICKS, TWO_MSL_TICKS};
use super::{after_timeout, initial_cwnd, LwipConfig, LwipEstimator, TickClock, TICK};
use crate::reasm::Reassembly;
use crate::segment::{Flags, Segment};
use crate::state::TcpState;
use crate::stats::{AbortReason, TcpEvent, TcpStats};

/// lwIP keeps windows in `tcpwnd_size_t`, 16 bits without window scaling;
/// `TCP_WND_INC` saturates there.
const WND_MAX: u32 = 0xFFFF;

/// One segment of the send queue (`struct tcp_seg`): data `[start,
/// start + len)`, then the FIN if `fin`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct LSeg {
    start: u64,
    len: u32,
    fin: bool,
}

impl LSeg {
    /// One past its last sequence number (`seqno + TCP_TCPLEN`).
    fn end(&self) -> u64 {
        self.start + u64::from(self.len) + u64::from(self.fin)
    }
}

/// Inserts `seg` keeping `q` sorted by sequence number (`tcp_output` puts a
/// retransmitted segment back into `unacked` in order; `tcp_rexmit` puts it
/// into `unsent` in order).
fn insert_sorted(q: &mut VecDeque<LSeg>, seg: LSeg) {
    let at = q
        .iter()
        .position(|s| s.start > seg.start)
        .unwrap_or(q.len());
    q.insert(at, seg);
}

/// A sans-IO lwIP TCP endpoint.
#[derive(Debug)]
pub struct LwipSocket {
    cfg: LwipConfig,
    clock: TickClock,
    state: TcpState,
    /// `pcb->mss`: the send MSS.
    mss: u32,
    // --- send side, offsets from our ISN ---
    iss: u32,
    /// `pcb->lastack` (SND.UNA).
    lastack: u64,
    /// lwIP's `snd_nxt`: one past the highest sequence number sent.
    snd_max: u64,
    snd_wnd: u32,
    snd_wnd_max: u32,
    /// `snd_wl1` (peer offsets; −1 forces the first update) and `snd_wl2`.
    snd_wl1: i64,
    snd_wl2: i64,
    /// Bytes written and not yet freed; `send_buf[0]` is at `buf_off`.
    send_buf: VecDeque<u8>,
    buf_off: u64,
    unsent: VecDeque<LSeg>,
    unacked: VecDeque<LSeg>,
    /// The SYN (or SYN-ACK) is on `unsent` / on `unacked`.
    syn_unsent: bool,
    syn_unacked: bool,
    syn_sent_once: bool,
    /// `TF_FIN`: the FIN is queued.
    fin_queued: bool,
    /// `TF_RXCLOSED`: the application closed (stops `tmr` updates).
    rx_closed: bool,
    // --- timers, in slow ticks ---
    /// `rtime` = `tcp_ticks − rt_base`; `None` is `rtime == −1` (stopped).
    rt_base: Option<u64>,
    /// `pcb->rto` (ticks).
    rto: i32,
    est: LwipEstimator,
    /// `pcb->nrtx` and the tick when it last grew.
    nrtx: u8,
    nrtx_tick: u64,
    /// `pcb->rttest` (`None` = not timing) and `pcb->rtseq`.
    rttest: Option<u64>,
    rtseq: u64,
    /// `pcb->tmr`: tick of the last segment received before the
    /// application closed.
    tmr: u64,
    /// The fast tick that will flush `TF_ACK_DELAY`.
    delack_at: Option<u64>,
    // --- congestion control ---
    cwnd: u32,
    ssthresh: u32,
    bytes_acked: u32,
    dupacks: u8,
    /// `TF_INFR`: in fast recovery.
    in_fr: bool,
    /// `TF_RTO` and `rto_end`: retransmitting after a timeout.
    in_rto: bool,
    rto_end: u64,
    // --- receive side, offsets from the peer's ISN ---
    irs: u32,
    rcv_nxt: u64,
    rcv_wnd: u32,
    rcv_ann_wnd: u32,
    rcv_ann_right_edge: u64,
    recv_buf: VecDeque<u8>,
    reasm: Reassembly,
    peer_fin: Option<u64>,
    fin_received: bool,
    /// `TF_ACK_DELAY`, `TF_ACK_NOW`.
    ack_delay: bool,
    ack_now: bool,
    /// Pure ACKs sent at once during input (`tcp_send_empty_ack`).
    empty_acks_due: u32,
    rst_due: bool,
    // --- reporting ---
    stats: TcpStats,
    events: VecDeque<TcpEvent>,
    abort_reason: Option<AbortReason>,
}

impl LwipSocket {
    fn new(now: u64, cfg: LwipConfig, state: TcpState) -> Self {
        let clock = TickClock::new(cfg.timer_origin);
        let est = LwipEstimator {
            sv: cfg.initial_rto_ticks,
            ..LwipEstimator::default()
        };
        LwipSocket {
            clock,
            state,
            mss: u32::from(cfg.initial_mss()),
            iss: cfg.isn,
            lastack: 0,
            snd_max: 0,
            snd_wnd: u32::from(cfg.rcv_wnd),
            snd_wnd_max: 0,
            snd_wl1: -1,
            snd_wl2: 0,
            send_buf: VecDeque::new(),
            buf_off: 1,
            unsent: VecDeque::new(),
            unacked: VecDeque::new(),
            syn_unsent: true,
            syn_unacked: false,
            syn_sent_once: false,
            fin_queued: false,
            rx_closed: false,
            rt_base: None,
            rto: cfg.initial_rto_ticks,
            est,
            nrtx: 0,
            nrtx_tick: 0,
            rttest: None,
            rtseq: 0,
            tmr: clock.slow_count(now),
            delack_at: None,
            // `tcp_alloc`: cwnd 1 until the handshake completes.
            cwnd: 1,
            ssthresh: cfg.initial_ssthresh,
            bytes_acked: 0,
            dupacks: 0,
            in_fr: false,
            in_rto: false,
            rto_end: 0,
            irs: 0,
            rcv_nxt: 0,
            rcv_wnd: u32::from(cfg.rcv_wnd),
            rcv_ann_wnd: u32::from(cfg.rcv_wnd),
            rcv_ann_right_edge: 0,
            recv_buf: VecDeque::new(),
            reasm: Reassembly::default(),
            peer_fin: None,
            fin_received: false,
            ack_delay: false,
            ack_now: false,
            empty_acks_due: 0,
            rst_due: false,
            stats: TcpStats::default(),
            events: VecDeque::new(),
            abort_reason: None,
            cfg,
        }
    }

    /// Opens a connection actively (`tcp_connect`): the SYN, with the MSS
    /// option `tcp_eff_send_mss(TCP_MSS)`, is the first segment polled; the
    /// send MSS is `INITIAL_MSS` until the SYN-ACK's option arrives, cwnd is
    /// 1 byte and `snd_wnd` is `TCP_WND` (docs/spec/transport-tcp-spec.md §3).
    pub fn connect(now: u64, cfg: LwipConfig) -> Self {
        Self::new(now, cfg, TcpState::SynSent)
    }

    /// Answers a SYN received by a listener (`tcp_listen_input`): a socket in
    /// SYN-RECEIVED whose first polled segment is the SYN-ACK, or `None` if
    /// `syn` is not a SYN without ACK. The send MSS comes from the SYN's
    /// option (`tcp_parseopt`, `tcp_eff_send_mss`), `snd_wnd` from its
    /// window.
    pub fn accept(now: u64, cfg: LwipConfig, syn: &Segment) -> Option<Self> {
        let f = syn.flags;
        if !f.contains(Flags::SYN) || f.contains(Flags::ACK) || f.contains(Flags::RST) {
            return None;
        }
        let mut s = Self::new(now, cfg, TcpState::SynReceived);
        s.irs = syn.seq;
        s.rcv_nxt = 1;
        s.rcv_ann_right_edge = 1;
        s.snd_wl1 = -1;
        s.snd_wl2 = 0;
        s.snd_wnd = u32::from(syn.window);
        s.snd_wnd_max = s.snd_wnd;
        s.mss = u32::from(s.cfg.mss_from_option(syn.mss));
        Some(s)
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
    /// The configuration.
    pub fn config(&self) -> &LwipConfig {
        &self.cfg
    }
    /// The sending MSS in force (`pcb->mss`).
    pub fn mss(&self) -> u64 {
        u64::from(self.mss)
    }
    /// The RTO in force (ns): `pcb->rto` ticks of 500 ms.
    pub fn rto(&self) -> u64 {
        self.rto.max(0) as u64 * TICK
    }
    /// The RTO in force in ticks (`pcb->rto`).
    pub fn rto_ticks(&self) -> i32 {
        self.rto
    }
    /// Retransmissions since the last ACK of new data (`pcb->nrtx`).
    pub fn backoff(&self) -> u32 {
        u32::from(self.nrtx)
    }
    /// The estimator (`sa`, `sv` in ticks).
    pub fn estimator(&self) -> LwipEstimator {
        self.est
    }
    /// Smoothed RTT (ns): `sa/8` ticks, once sampled.
    pub fn srtt(&self) -> Option<u64> {
        (self.stats.rtt_samples > 0).then_some(self.est.sa.max(0) as u64 * TICK / 8)
    }
    /// Congestion window (bytes).
    pub fn cwnd(&self) -> u64 {
        u64::from(self.cwnd)
    }
    /// Slow-start threshold (bytes).
    pub fn ssthresh(&self) -> u64 {
        u64::from(self.ssthresh)
    }
    /// Whether fast recovery is under way (`TF_INFR`).
    pub fn in_fast_recovery(&self) -> bool {
        self.in_fr
    }
    /// The peer's advertised window (`snd_wnd`).
    pub fn snd_wnd(&self) -> u64 {
        u64::from(self.snd_wnd)
    }
    /// The window we advertise (`rcv_ann_wnd`).
    pub fn rcv_ann_wnd(&self) -> u64 {
        u64::from(self.rcv_ann_wnd)
    }
    /// Sent but unacknowledged sequence space (bytes, SYN and FIN count one).
    pub fn bytes_in_flight(&self) -> u64 {
        self.snd_max - self.lastack
    }
    /// Bytes written by the application and not yet acknowledged.
    pub fn send_queue_len(&self) -> usize {
        self.send_buf.len()
    }
    /// Whether everything written (and the FIN, if closing) is acknowledged.
    pub fn all_acked(&self) -> bool {
        self.send_buf.is_empty()
            && self.unsent.is_empty()
            && self.unacked.is_empty()
            && !self.syn_unsent
            && !self.syn_unacked
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

    /// Queues application bytes (`tcp_write`); returns how many were taken:
    /// all of them, or none when the socket does not send or `TCP_SND_BUF`
    /// has not room for all (lwIP's `ERR_MEM`: `tcp_write` is all or
    /// nothing).
    ///
    /// Segments are cut here, as lwIP does (docs/spec/transport-tcp-spec.md §3): the bytes
    /// first fill the last unsent segment up to `min(MSS, snd_wnd_max / 2)`
    /// (`tcp_write` phases 1–2, even a segment sent before and queued again
    /// by a timeout), then new segments of at most that size follow (phase
    /// 3). Segments never merge afterwards: retransmissions resend them as
    /// they were.
    pub fn send(&mut self, data: &[u8]) -> usize {
        let open = matches!(
            self.state,
            TcpState::SynSent | TcpState::SynReceived | TcpState::Established | TcpState::CloseWait
        );
        if !open || self.fin_queued || data.is_empty() || data.len() > self.snd_buf_free() {
            return 0;
        }
        let mss_local = match self.mss.min(self.snd_wnd_max / 2) {
            0 => self.mss,
            m => m,
        };
        let mut off = self.write_off();
        let mut left = data.len() as u64;
        if let Some(tail) = self.unsent.back_mut() {
            if tail.len > 0 && !tail.fin && tail.end() == off && tail.len < mss_local {
                let n = u64::from(mss_local - tail.len).min(left);
                tail.len += n as u32;
                off += n;
                left -= n;
            }
        }
        while left > 0 {
            let n = u64::from(mss_local).min(left);
            self.unsent.push_back(LSeg {
                start: off,
                len: n as u32,
                fin: false,
            });
            off += n;
            left -= n;
        }
        self.send_buf.extend(data);
        data.len()
    }

    /// Reads delivered in-order bytes into `buf`; returns how many.
    pub fn recv(&mut self, buf: &mut [u8]) -> usize {
        let n = buf.len().min(self.recv_buf.len());
        for (d, s) in buf.iter_mut().zip(self.recv_buf.drain(..n)) {
            *d = s;
        }
        self.recved(n);
        n
    }

    /// The delivered bytes as two slices, without consuming them; pair with
    /// [`Self::consume`].
    pub fn recv_slices(&self) -> (&[u8], &[u8]) {
        self.recv_buf.as_slices()
    }

    /// Drops `n` delivered bytes (after [`Self::recv_slices`]).
    pub fn consume(&mut self, n: usize) {
        let n = n.min(self.recv_buf.len());
        self.recv_buf.drain(..n);
        self.recved(n);
    }

    /// The application took `n` bytes (`tcp_recved`): the window reopens,
    /// and an explicit window update is sent when the announced right edge
    /// moves by at least `min(TCP_WND / 4, 4 · TCP_MSS)`.
    fn recved(&mut self, n: usize) {
        if n == 0 {
            return;
        }
        let max = u32::from(self.cfg.rcv_wnd);
        self.rcv_wnd = (self.rcv_wnd + n as u32).min(max);
        let inflation = self.update_rcv_ann_wnd();
        let threshold = (u64::from(max) / 4).min(4 * u64::from(self.cfg.tcp_mss));
        if inflation >= threshold && self.is_established() {
            self.ack_now = true;
        }
    }

    /// `tcp_update_rcv_ann_wnd`: the announced window grows only when its
    /// right edge can move by at least `min(TCP_WND / 2, MSS)`; otherwise
    /// the right edge stays where it was announced. Returns how far it moved.
    fn update_rcv_ann_wnd(&mut self) -> u64 {
        let new_right = self.rcv_nxt + u64::from(self.rcv_wnd);
        let step = (u64::from(self.cfg.rcv_wnd) / 2).min(u64::from(self.mss));
        if new_right >= self.rcv_ann_right_edge + step {
            self.rcv_ann_wnd = self.rcv_wnd;
            new_right - self.rcv_ann_right_edge
        } else {
            self.rcv_ann_wnd = if self.rcv_nxt > self.rcv_ann_right_edge {
                0
            } else {
                (self.rcv_ann_right_edge - self.rcv_nxt) as u32
            };
            0
        }
    }

    /// Closes the connection (`tcp_close`: the application sends and reads no
    /// more, `TF_RXCLOSED`): in SYN-SENT the connection simply goes; otherwise
    /// the FIN joins the last unsent segment if it can, else
    /// follows as a segment of its own (`tcp_send_fin`), and sets `TF_FIN`,
    /// which lets it pass Nagle.
    pub fn close(&mut self) {
        let next = match self.state {
            TcpState::SynSent => {
                self.enter_closed();
                return;
            }
            TcpState::SynReceived | TcpState::Established => TcpState::FinWait1,
            TcpState::CloseWait => TcpState::LastAck,
            _ => return,
        };
        self.rx_closed = true;
        self.state = next;
        let off = self.write_off();
        match self.unsent.back_mut() {
            Some(tail) if !tail.fin && tail.end() == off => tail.fin = true,
            _ => self.unsent.push_back(LSeg {
                start: off,
                len: 0,
                fin: true,
            }),
        }
        self.fin_queued = true;
    }

    /// Aborts: the next polled segment is a RST, then the socket is closed.
    pub fn abort(&mut self) {
        if self.is_established() || self.state == TcpState::SynReceived {
            self.rst_due = true;
        }
        self.enter_closed();
    }

    /// Next trace event, if [`LwipConfig::record_events`] is on.
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

    fn write_off(&self) -> u64 {
        self.buf_off + self.send_buf.len() as u64
    }

    fn snd_buf_free(&self) -> usize {
        (self.cfg.snd_buf as usize).saturating_sub(self.send_buf.len())
    }

    fn ticks(&self, now: u64) -> u64 {
        self.clock.slow_count(now)
    }

    // ------------------------------------------------------------------
    // Timers
    // ------------------------------------------------------------------

    /// When the socket next wants [`Self::handle_timeout`] (ns), if ever: the
    /// fast tick that flushes a delayed ACK, or the slow tick at which the
    /// retransmission timer expires, the retransmission limit is enforced or
    /// a state times out. Ticks in between change nothing but `rtime`, which
    /// the socket counts from the clock.
    pub fn poll_timeout(&self) -> Option<u64> {
        let slow = self.slow_due().map(|n| self.clock.slow_time(n));
        [self.delack_at, slow].into_iter().flatten().min()
    }

    /// The next slow tick (number) at which `tcp_slowtmr` has work.
    fn slow_due(&self) -> Option<u64> {
        let tmr_limit = |n: u64| self.tmr + n + 1;
        match self.state {
            TcpState::Closed => None,
            TcpState::TimeWait => Some(tmr_limit(TWO_MSL_TICKS)),
            _ => {
                let mut due: Option<u64> = None;
                let mut at = |n: u64| due = Some(due.map_or(n, |d| d.min(n)));
                if self.nrtx >= self.rtx_limit() {
                    at(self.nrtx_tick + 1);
                }
                if let Some(base) = self.rt_base {
                    at(base + self.rto.max(1) as u64);
                }
                match self.state {
                    TcpState::SynReceived => at(tmr_limit(SYN_RCVD_TIMEOUT_TICKS)),
                    TcpState::FinWait2 if self.rx_closed => at(tmr_limit(FIN_WAIT_TIMEOUT_TICKS)),
                    TcpState::LastAck => at(tmr_limit(TWO_MSL_TICKS)),
                    _ => {}
                }
                due
            }
        }
    }

    fn rtx_limit(&self) -> u8 {
        if self.state == TcpState::SynSent {
            self.cfg.syn_max_rtx
        } else {
            self.cfg.max_rtx
        }
    }

    /// Runs every timer due at or before `now`.
    pub fn handle_timeout(&mut self, now: u64) {
        self.run_timers(now);
    }

    /// Runs the ticks due at or before `now`, in time order; at an instant
    /// with both, the fast timer first (`tcp_tmr` calls `tcp_fasttmr`, then
    /// `tcp_slowtmr`).
    fn run_timers(&mut self, now: u64) {
        while let Some(t) = self.poll_timeout() {
            if t > now {
                break;
            }
            if self.delack_at.is_some_and(|d| d <= t) {
                self.fast_tick();
            }
            if let Some(n) = self.slow_due() {
                if self.clock.slow_time(n) <= t {
                    self.slow_tick(n);
                }
            }
        }
    }

    /// `tcp_fasttmr`: a pending delayed ACK is sent now (`tcp_ack_now`,
    /// `tcp_output`), then both ACK flags are cleared — so when Nagle holds
    /// the queued data, lwIP's `tcp_output` sends nothing and the delayed ACK
    /// is dropped; the next segment carries it.
    fn fast_tick(&mut self) {
        self.delack_at = None;
        if self.ack_delay {
            self.ack_delay = false;
            self.ack_now = self.output_sends_ack();
        }
    }

    /// `tcp_slowtmr` for this connection at slow tick `n`: give up when
    /// `nrtx` reached `TCP_SYNMAXRTX` in SYN-SENT or `TCP_MAXRTX` otherwise
    /// (checked before the timer, so the last retransmission gets one tick);
    /// else count `rtime` and retransmit when it reaches `rto`; then the
    /// SYN-RECEIVED (20 s), FIN-WAIT-2 (20 s, after the application closed)
    /// and LAST-ACK (2·MSL) timeouts, counted from `pcb->tmr`; TIME-WAIT
    /// ends after 2·MSL.
    fn slow_tick(&mut self, n: u64) {
        if self.state == TcpState::TimeWait {
            if n > self.tmr + TWO_MSL_TICKS {
                self.enter_closed();
            }
            return;
        }
        if self.nrtx >= self.rtx_limit() {
            let reason = if matches!(self.state, TcpState::SynSent | TcpState::SynReceived) {
                AbortReason::HandshakeTimeout
            } else {
                AbortReason::RetransmitTimeout
            };
            self.abort_with(reason);
            return;
        }
        if let Some(base) = self.rt_base {
            if n >= base + self.rto.max(1) as u64 {
                self.on_rto(n);
            }
        }
        let idle = n.saturating_sub(self.tmr);
        match self.state {
            TcpState::SynReceived if idle > SYN_RCVD_TIMEOUT_TICKS => {
                self.abort_with(AbortReason::HandshakeTimeout)
            }
            TcpState::FinWait2 if self.rx_closed && idle > FIN_WAIT_TIMEOUT_TICKS => {
                self.enter_closed()
            }
            TcpState::LastAck if idle > TWO_MSL_TICKS => self.enter_closed(),
            _ => {}
        }
    }

    /// A retransmission timeout at slow tick `n` (docs/spec/transport-tcp-spec.md §3;
    /// `tcp_slowtmr`, `tcp_rexmit_rto_prepare`, `tcp_rexmit_rto_commit`):
    /// every unacknowledged segment goes back to the head of `unsent`
    /// (go-back-N, segments as they were), `TF_RTO` marks the retransmitted
    /// range, the RTT measurement is abandoned (Karn); unless in SYN-SENT the
    /// RTO becomes `((sa>>3)+sv) << backoff[nrtx]` (or the back-off
    /// variant's ×2 / ×1.3), clamped to `0x7FFF`; `rtime` restarts;
    /// `ssthresh = max(min(cwnd, snd_wnd)/2, 2·MSS)` and cwnd the loss
    /// window (one MSS, or the cwnd variant's `max(ssthresh/2, MSS)` from the
    /// ssthresh in force before this timeout, paper §4.2), on every timeout; `nrtx` counts it. Nothing resets `TF_INFR` or the
    /// duplicate-ACK count (as in lwIP).
    fn on_rto(&mut self, n: u64) {
        if self.syn_unacked {
            self.syn_unacked = false;
            self.syn_unsent = true;
            self.in_rto = true;
            self.rto_end = 1;
            self.rttest = None;
        } else if let Some(last) = self.unacked.back() {
            self.rto_end = last.end();
            while let Some(s) = self.unacked.pop_back() {
                self.unsent.push_front(s);
            }
            self.in_rto = true;
            self.rttest = None;
        } else if self.unsent.is_empty() && !self.syn_unsent {
            // Nothing to resend: the timer has nothing to time.
            self.rt_base = None;
            return;
        }
        let expired = self.rto;
        if self.state != TcpState::SynSent {
            self.rto =
                self.cfg
                    .backoff
                    .next_rto_clamped(u32::from(self.nrtx), self.est.rto(), self.rto);
        }
        self.rt_base = Some(n);
        let (ssthresh, cwnd) = after_timeout(
            u64::from(self.cwnd),
            u64::from(self.snd_wnd),
            u64::from(self.ssthresh),
            u64::from(self.mss),
            self.cfg.loss_window,
        );
        self.ssthresh = ssthresh.min(u64::from(WND_MAX)) as u32;
        self.cwnd = cwnd.min(u64::from(WND_MAX)) as u32;
        self.bytes_acked = 0;
        self.nrtx = self.nrtx.saturating_add(1);
        self.nrtx_tick = n;
        self.stats.rto_expirations += 1;
        let (next_rto, backoff) = (self.rto(), self.backoff());
        self.event(TcpEvent::RtoExpired {
            expired: expired.max(0) as u64 * TICK,
            next_rto,
            backoff,
        });
        self.window_event();
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
        self.rt_base = None;
        self.delack_at = None;
        self.syn_unsent = false;
        self.ack_delay = false;
        self.ack_now = false;
        self.empty_acks_due = 0;
    }

    /// TIME-WAIT: the connection leaves the active list; its retransmission
    /// and delayed-ACK timers no longer run (`tcp_pcb_purge`).
    fn enter_time_wait(&mut self) {
        self.state = TcpState::TimeWait;
        self.rt_base = None;
        self.delack_at = None;
        self.ack_delay = false;
        self.unsent.clear();
        self.unacked.clear();
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
    /// A peer sequence number as a signed offset from the peer's ISN.
    fn peer_off(&self, wire: u32) -> i64 {
        self.rcv_nxt as i64 + i64::from(wire.wrapping_sub(self.wire_rcv(self.rcv_nxt)) as i32)
    }
    /// An acknowledgment number as a signed offset from our ISN.
    fn our_off(&self, wire: u32) -> i64 {
        self.lastack as i64 + i64::from(wire.wrapping_sub(self.wire_snd(self.lastack)) as i32)
    }

    /// Processes one arriving segment (`tcp_input`, `tcp_process`), after the
    /// ticks due at or before `now`.
    pub fn handle_segment(&mut self, now: u64, seg: &Segment) {
        self.run_timers(now);
        match self.state {
            TcpState::Closed => {}
            TcpState::SynSent => self.on_syn_sent(now, seg),
            TcpState::TimeWait => self.on_time_wait(now, seg),
            _ => self.on_synchronized(now, seg),
        }
    }

    /// SYN-SENT (`tcp_process`): a SYN-ACK acknowledging our SYN completes
    /// the handshake — send MSS from its option, cwnd = the initial window,
    /// the SYN freed; `nrtx` is kept (lwIP resets it only when data is
    /// still unacknowledged), and the RTT measurement started by the SYN
    /// keeps running (`tcp_receive` is not called here), so the first sample
    /// is taken by the first ACK of data. The ACK goes at once (it rides on
    /// data the application writes when told it is connected).
    fn on_syn_sent(&mut self, now: u64, seg: &Segment) {
        let f = seg.flags;
        let ackno = self.our_off(seg.ack);
        if f.contains(Flags::RST) {
            if f.contains(Flags::ACK) && ackno == self.snd_max as i64 {
                self.abort_with(AbortReason::Reset);
            }
            return;
        }
        if !(f.contains(Flags::ACK) && f.contains(Flags::SYN) && ackno == 1) {
            return; // half-open handling (RST + SYN) is not modelled
        }
        self.tmr = self.ticks(now);
        self.irs = seg.seq;
        self.rcv_nxt = 1;
        self.rcv_ann_right_edge = 1;
        self.lastack = 1;
        self.snd_wnd = u32::from(seg.window);
        self.snd_wnd_max = self.snd_wnd;
        self.snd_wl1 = -1;
        self.state = TcpState::Established;
        self.mss = u32::from(self.cfg.mss_from_option(seg.mss));
        self.cwnd = initial_cwnd(u64::from(self.mss)).min(u64::from(WND_MAX)) as u32;
        self.syn_unacked = false;
        self.syn_unsent = false;
        if self.unacked.is_empty() {
            self.rt_base = None;
        } else {
            self.rt_base = Some(self.ticks(now));
            self.nrtx = 0;
        }
        self.event(TcpEvent::Connected);
        self.window_event();
        self.ack_now = true;
    }

    /// TIME-WAIT (`tcp_timewait_input`): a FIN restarts the 2·MSL wait;
    /// anything with sequence space is acknowledged.
    fn on_time_wait(&mut self, now: u64, seg: &Segment) {
        let f = seg.flags;
        if f.contains(Flags::RST) {
            return;
        }
        if f.contains(Flags::SYN) {
            if seg.seq != self.irs {
                return; // a new connection attempt: lwIP answers RST (not modelled)
            }
            if f.contains(Flags::ACK) {
                self.stats.dup_synacks += 1;
                self.event(TcpEvent::DuplicateSynAck);
            } else {
                self.stats.dup_syns += 1;
                self.event(TcpEvent::DuplicateSyn);
            }
        } else if f.contains(Flags::FIN) {
            self.tmr = self.ticks(now);
        }
        if !seg.payload.is_empty() {
            self.count_duplicate_data(seg, self.peer_off(seg.seq));
        }
        if seg.seq_len() > 0 {
            self.ack_now = true;
        }
    }

    fn on_synchronized(&mut self, now: u64, seg: &Segment) {
        let f = seg.flags;
        let seqno = self.peer_off(seg.seq);
        if f.contains(Flags::RST) {
            // RFC 5961 as lwIP 2.1 does it: exact sequence number resets,
            // anything else in the window earns a challenge ACK.
            if seqno == self.rcv_nxt as i64 {
                self.abort_with(AbortReason::Reset);
            } else if seqno > self.rcv_nxt as i64
                && seqno < (self.rcv_nxt + u64::from(self.rcv_wnd)) as i64
            {
                self.ack_now = true;
            }
            return;
        }
        if f.contains(Flags::SYN) && self.state != TcpState::SynReceived {
            // A SYN on a synchronized connection is answered with an ACK
            // (lwIP 2.1 `tcp_process`); a copy of the peer's is counted.
            if seg.seq == self.irs {
                if f.contains(Flags::ACK) {
                    self.stats.dup_synacks += 1;
                    self.event(TcpEvent::DuplicateSynAck);
                } else {
                    self.stats.dup_syns += 1;
                    self.event(TcpEvent::DuplicateSyn);
                }
            }
            self.ack_now = true;
            return;
        }
        if !self.rx_closed {
            self.tmr = self.ticks(now);
        }
        let ackno = self.our_off(seg.ack);
        let has_ack = f.contains(Flags::ACK);
        let mut got_fin = false;
        match self.state {
            TcpState::SynReceived => {
                if has_ack {
                    if ackno > self.lastack as i64 && ackno <= self.snd_max as i64 {
                        // `tcp_process`, SYN_RCVD: established, then the ACK
                        // (and any data) through `tcp_receive`, then the
                        // initial window.
                        self.state = TcpState::Established;
                        self.event(TcpEvent::Connected);
                        got_fin = self.receive(now, seg, seqno, ackno);
                        self.cwnd =
                            initial_cwnd(u64::from(self.mss)).min(u64::from(WND_MAX)) as u32;
                        self.window_event();
                        if got_fin {
                            self.ack_now = true;
                            self.state = TcpState::CloseWait;
                        }
                    }
                } else if f.contains(Flags::SYN) && seqno == self.rcv_nxt as i64 - 1 {
                    // A copy of the SYN: `tcp_rexmit` sends the SYN-ACK again
                    // at once, counts it in `nrtx` and abandons the RTT
                    // measurement.
                    self.stats.dup_syns += 1;
                    self.event(TcpEvent::DuplicateSyn);
                    if self.syn_unacked {
                        self.syn_unacked = false;
                        self.syn_unsent = true;
                        self.nrtx = self.nrtx.saturating_add(1);
                        self.nrtx_tick = self.ticks(now);
                        self.rttest = None;
                    }
                }
                return;
            }
            TcpState::Established | TcpState::CloseWait => {
                got_fin = self.receive(now, seg, seqno, ackno);
                if got_fin {
                    self.ack_now = true;
                    self.state = TcpState::CloseWait;
                }
            }
            TcpState::FinWait1 => {
                got_fin = self.receive(now, seg, seqno, ackno);
                let fin_acked = has_ack
                    && ackno == self.snd_max as i64
                    && self.unsent.is_empty()
                    && self.fin_queued;
                if got_fin {
                    self.ack_now = true;
                    if fin_acked {
                        self.enter_time_wait();
                    } else {
                        self.state = TcpState::Closing;
                    }
                } else if fin_acked {
                    self.state = TcpState::FinWait2;
                }
            }
            TcpState::FinWait2 => {
                got_fin = self.receive(now, seg, seqno, ackno);
                if got_fin {
                    self.ack_now = true;
                    self.enter_time_wait();
                }
            }
            TcpState::Closing => {
                self.receive(now, seg, seqno, ackno);
                if has_ack && ackno == self.snd_max as i64 && self.unsent.is_empty() {
                    self.enter_time_wait();
                }
            }
            TcpState::LastAck => {
                self.receive(now, seg, seqno, ackno);
                if has_ack && ackno == self.snd_max as i64 && self.unsent.is_empty() {
                    self.enter_closed();
                }
            }
            _ => {}
        }
        if got_fin {
            self.event(TcpEvent::PeerClosed);
        }
    }

    /// `tcp_receive`: the ACK, then the data. Returns whether the peer's FIN
    /// was received in order (`TF_GOT_FIN`).
    fn receive(&mut self, now: u64, seg: &Segment, seqno: i64, ackno: i64) -> bool {
        if seg.flags.contains(Flags::ACK) {
            self.receive_ack(now, seg, seqno, ackno);
        }
        self.receive_data(now, seg, seqno)
    }

    /// The ACK half of `tcp_receive` (docs/spec/transport-tcp-spec.md §3).
    ///
    /// - Window update by the `snd_wl1`/`snd_wl2` rule.
    /// - A duplicate ACK (no new data acknowledged, no sequence space, the
    ///   window's right edge unchanged, the retransmission timer running,
    ///   `ackno == lastack`): the third starts Reno fast retransmit
    ///   ([`Self::fast_retransmit`]), each further one inflates cwnd by one
    ///   MSS. Any other old ACK resets the count (lwIP 2.0–2.1).
    /// - An ACK of new data: fast recovery ends with `cwnd = ssthresh`;
    ///   `nrtx = 0` and `rto = (sa>>3)+sv` (the backed-off RTO is dropped at
    ///   once); slow start grows cwnd by `min(acked, 2·MSS)` (one MSS while
    ///   `TF_RTO`), congestion avoidance by one MSS per cwnd of acknowledged
    ///   bytes (RFC 3465, as lwIP 2.1), whether or not the window was used;
    ///   fully acknowledged segments are freed (from `unsent` too); `rtime`
    ///   restarts, or stops when nothing is unacknowledged; `TF_RTO` ends
    ///   once the first remaining segment lies beyond `rto_end`.
    /// - An ACK beyond what was sent is answered with an ACK.
    /// - Then the RTT sample, if the timed segment is acknowledged: `m` =
    ///   ticks since it was sent, fed to [`LwipEstimator::sample`], and
    ///   `rto = (sa>>3)+sv`.
    fn receive_ack(&mut self, now: u64, seg: &Segment, seqno: i64, ackno: i64) {
        let right_edge = i64::from(self.snd_wnd) + self.snd_wl2;
        let wnd = u32::from(seg.window);
        if self.snd_wl1 < seqno
            || (self.snd_wl1 == seqno && self.snd_wl2 < ackno)
            || (self.snd_wl2 == ackno && wnd > self.snd_wnd)
        {
            self.snd_wnd = wnd;
            self.snd_wnd_max = self.snd_wnd_max.max(wnd);
            self.snd_wl1 = seqno;
            self.snd_wl2 = ackno;
        }
        let lastack = self.lastack as i64;
        if ackno <= lastack {
            let dup = seg.seq_len() == 0
                && self.snd_wl2 + i64::from(self.snd_wnd) == right_edge
                && self.rt_base.is_some()
                && ackno == lastack;
            if dup {
                self.dupacks = self.dupacks.saturating_add(1);
                if self.dupacks > 3 {
                    self.cwnd = (self.cwnd + self.mss).min(WND_MAX);
                    self.window_event();
                }
                if self.dupacks >= 3 {
                    self.fast_retransmit(now);
                }
            } else {
                self.dupacks = 0;
            }
        } else if ackno <= self.snd_max as i64 {
            let ack = ackno as u64;
            let before = (self.cwnd, self.ssthresh);
            if self.in_fr {
                self.in_fr = false;
                self.cwnd = self.ssthresh;
                self.bytes_acked = 0;
            }
            self.nrtx = 0;
            self.rto = self.est.rto();
            let acked = (ack - self.lastack).min(u64::from(WND_MAX)) as u32;
            self.dupacks = 0;
            self.lastack = ack;
            if self.cwnd < self.ssthresh {
                let segs = if self.in_rto { 1 } else { 2 };
                let increase = acked.min(segs * self.mss);
                self.cwnd = (self.cwnd + increase).min(WND_MAX);
            } else {
                self.bytes_acked = (self.bytes_acked + acked).min(WND_MAX);
                if self.bytes_acked >= self.cwnd {
                    self.bytes_acked -= self.cwnd;
                    self.cwnd = (self.cwnd + self.mss).min(WND_MAX);
                }
            }
            if self.syn_unacked && ack >= 1 {
                self.syn_unacked = false;
            }
            while self.unacked.front().is_some_and(|s| s.end() <= ack) {
                self.unacked.pop_front();
            }
            while self.unsent.front().is_some_and(|s| s.end() <= ack) {
                self.unsent.pop_front();
            }
            self.free_acked_bytes();
            self.rt_base = if self.unacked.is_empty() && !self.syn_unacked {
                None
            } else {
                Some(self.ticks(now))
            };
            if self.in_rto {
                let first = match self.unacked.front() {
                    Some(s) => Some(s.start),
                    None => self.unsent.front().map(|s| s.start),
                };
                if first.is_none_or(|start| self.rto_end <= start) {
                    self.in_rto = false;
                }
            }
            if (self.cwnd, self.ssthresh) != before {
                self.window_event();
            }
        } else {
            self.empty_acks_due += 1;
        }
        if let Some(t) = self.rttest {
            if (self.rtseq as i64) < ackno {
                let m = (self.ticks(now) - t) as i32;
                self.est.sample(m);
                self.rto = self.est.rto();
                self.rttest = None;
                self.stats.rtt_samples += 1;
                let (rtt, srtt, rto) =
                    (m.max(0) as u64 * TICK, self.srtt().unwrap_or(0), self.rto());
                self.event(TcpEvent::RttSample { rtt, srtt, rto });
            }
        }
    }

    /// Drops the bytes of freed segments from the send buffer.
    fn free_acked_bytes(&mut self) {
        let first = [self.unacked.front(), self.unsent.front()]
            .into_iter()
            .flatten()
            .map(|s| s.start)
            .min()
            .unwrap_or(self.write_off());
        let upto = first.min(self.write_off());
        if upto > self.buf_off {
            self.send_buf.drain(..(upto - self.buf_off) as usize);
            self.buf_off = upto;
        }
    }

    /// Reno fast retransmit as lwIP does it (`tcp_rexmit_fast`, `tcp_rexmit`;
    /// docs/spec/transport-tcp-spec.md §3): unless already in fast recovery, the first
    /// unacknowledged segment goes back to `unsent` (sent again by the next
    /// output), `nrtx` counts it, the RTT measurement is abandoned;
    /// `ssthresh = max(min(cwnd, snd_wnd)/2, 2·MSS)`, `cwnd = ssthresh +
    /// 3·MSS`, `TF_INFR` set, `rtime` restarted. Recovery ends at the next
    /// ACK of new data (Reno, not NewReno).
    fn fast_retransmit(&mut self, now: u64) {
        if self.in_fr {
            return;
        }
        let Some(first) = self.unacked.pop_front() else {
            return;
        };
        insert_sorted(&mut self.unsent, first);
        self.nrtx = self.nrtx.saturating_add(1);
        self.nrtx_tick = self.ticks(now);
        self.rttest = None;
        self.ssthresh = (self.cwnd.min(self.snd_wnd) / 2).max(2 * self.mss);
        self.cwnd = (self.ssthresh + 3 * self.mss).min(WND_MAX);
        self.in_fr = true;
        self.rt_base = Some(self.ticks(now));
        self.stats.fast_retransmits += 1;
        self.event(TcpEvent::FastRetransmit);
        self.window_event();
    }

    /// Counts a data segment every byte of which was had before (docs/spec/testbed-spec.md
    /// §3: an unnecessary copy), as the `linux` profile does.
    fn count_duplicate_data(&mut self, seg: &Segment, start: i64) {
        let end = start + seg.payload.len() as i64;
        let had = end <= self.rcv_nxt as i64
            || (start > self.rcv_nxt as i64 && self.reasm.covers(start as u64, end as u64));
        if had {
            self.stats.dup_data_segments += 1;
            self.stats.dup_data_bytes += seg.payload.len() as u64;
            self.event(TcpEvent::DuplicateData {
                start: (start.max(1) - 1) as u64,
                end: (end.max(1) - 1) as u64,
            });
        }
    }

    /// The data half of `tcp_receive` (docs/spec/transport-tcp-spec.md §3: delayed ACK).
    ///
    /// - In ESTABLISHED, FIN-WAIT-1 and FIN-WAIT-2 only.
    /// - Old data is trimmed; a segment wholly below `rcv_nxt` is answered at
    ///   once with a pure ACK.
    /// - In-order data is delivered (trimmed to `rcv_wnd`), the window
    ///   shrinks, out-of-order data it makes contiguous follows, and
    ///   `tcp_ack` decides the ACK: the second unacknowledged segment sets
    ///   `TF_ACK_NOW`, the first `TF_ACK_DELAY` (flushed by the next fast
    ///   tick, or riding on data sent before it). Filling a gap does not
    ///   force an immediate ACK.
    /// - Out-of-order data inside the window is queued (`TCP_QUEUE_OOSEQ`) and
    ///   answered at once with a pure ACK (the duplicate ACK); so is
    ///   anything outside the window.
    fn receive_data(&mut self, now: u64, seg: &Segment, seqno: i64) -> bool {
        let has_fin = seg.flags.contains(Flags::FIN);
        let tcplen = seg.payload.len() as i64 + i64::from(has_fin);
        let rcv_nxt = self.rcv_nxt as i64;
        let in_window = |s: i64, wnd: u32| s >= rcv_nxt && s < rcv_nxt + i64::from(wnd);
        if tcplen == 0 {
            if !in_window(seqno, self.rcv_wnd) {
                self.ack_now = true;
            }
            return false;
        }
        if !seg.payload.is_empty() {
            self.count_duplicate_data(seg, seqno);
        }
        if !matches!(
            self.state,
            TcpState::Established | TcpState::FinWait1 | TcpState::FinWait2
        ) || self.fin_received
        {
            // "Ignore the segment text" (lwIP sends no ACK for it either).
            return false;
        }
        let mut start = seqno;
        let mut skip = 0usize;
        if rcv_nxt > seqno && rcv_nxt < seqno + tcplen {
            skip = (rcv_nxt - seqno) as usize;
            start = rcv_nxt;
        } else if seqno < rcv_nxt {
            self.ack_now = true;
        }
        if !in_window(start, self.rcv_wnd) {
            self.empty_acks_due += 1;
            return false;
        }
        let data = &seg.payload[skip.min(seg.payload.len())..];
        if start == rcv_nxt {
            let wnd = self.rcv_wnd as usize;
            let (data, fin) = if data.len() + usize::from(has_fin) > wnd {
                (&data[..data.len().min(wnd)], false)
            } else {
                (data, has_fin)
            };
            if fin {
                // An in-order FIN makes anything queued beyond it moot.
                self.reasm = Reassembly::default();
            }
            self.recv_buf.extend(data);
            self.rcv_nxt += data.len() as u64;
            self.rcv_wnd -= data.len() as u32;
            if fin {
                self.peer_fin = Some(self.rcv_nxt);
            }
            if !self.reasm.is_empty() {
                let before = self.rcv_nxt;
                self.rcv_nxt = self.reasm.drain_into(self.rcv_nxt, &mut self.recv_buf);
                self.rcv_wnd = self.rcv_wnd.saturating_sub((self.rcv_nxt - before) as u32);
            }
            let got_fin = self.peer_fin == Some(self.rcv_nxt);
            if got_fin {
                // The FIN takes a sequence number and, until `tcp_input`
                // gives it back, a byte of window.
                self.fin_received = true;
                self.rcv_nxt += 1;
                self.rcv_wnd = self.rcv_wnd.saturating_sub(1);
                self.update_rcv_ann_wnd();
                self.rcv_wnd += 1;
            } else {
                self.update_rcv_ann_wnd();
            }
            self.tcp_ack(now);
            got_fin
        } else {
            let room = (rcv_nxt + i64::from(self.rcv_wnd) - start).max(0) as usize;
            let take = data.len().min(room);
            if take > 0 {
                self.reasm.insert(start as u64, &data[..take]);
            }
            if has_fin && take == data.len() {
                self.peer_fin = Some(start as u64 + take as u64);
            }
            self.empty_acks_due += 1;
            false
        }
    }

    /// `tcp_ack`: every second in-order segment is acknowledged at once, the
    /// first waits for the fast timer (or for data to ride on). Without
    /// delayed ACKs every segment is acknowledged at once.
    fn tcp_ack(&mut self, now: u64) {
        if !self.cfg.delayed_ack || self.ack_delay {
            self.ack_delay = false;
            self.delack_at = None;
            self.ack_now = true;
        } else {
            self.ack_delay = true;
            self.delack_at = Some(self.clock.next_fast_after(now));
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
    ///
    /// In order: a RST; pure ACKs owed by the input (`tcp_send_empty_ack`);
    /// the SYN or SYN-ACK; then `tcp_output`'s rules (docs/spec/transport-tcp-spec.md §3):
    /// the head of `unsent` goes only if it fits whole in `min(snd_wnd,
    /// cwnd)` counted from `lastack`, and Nagle (`tcp_do_output_nagle`)
    /// lets it — nothing unacknowledged, fast recovery, more than one
    /// segment queued, a full-sized head, or a full send buffer — or the FIN
    /// is queued. A pending `TF_ACK_NOW` leaves as a pure ACK when nothing is
    /// queued or the window holds the head back, but not when Nagle does.
    pub fn poll_transmit_into(&mut self, now: u64, out: &mut Segment) -> bool {
        out.clear();
        self.run_timers(now);
        if self.rst_due {
            self.rst_due = false;
            out.seq = self.wire_snd(self.snd_max);
            out.flags = Flags::RST;
            self.stats.segments_sent += 1;
            return true;
        }
        if self.state == TcpState::Closed {
            return false;
        }
        if self.empty_acks_due > 0 {
            self.empty_acks_due -= 1;
            return self.emit_empty_ack(out);
        }
        if self.syn_unsent {
            self.emit_syn(now, out);
            return true;
        }
        match self.head_verdict() {
            Head::Empty | Head::WindowHolds => self.ack_now && self.emit_empty_ack(out),
            Head::NagleHolds => false,
            Head::Go => {
                self.emit_head(now, out);
                true
            }
        }
    }

    /// What `tcp_output` would do with the head of `unsent`.
    fn head_verdict(&self) -> Head {
        let Some(head) = self.unsent.front() else {
            return Head::Empty;
        };
        let wnd = u64::from(self.snd_wnd.min(self.cwnd));
        if head.start.saturating_sub(self.lastack) + u64::from(head.len) > wnd {
            return Head::WindowHolds;
        }
        if self.nagle_allows() || self.fin_queued {
            Head::Go
        } else {
            Head::NagleHolds
        }
    }

    /// `tcp_do_output_nagle` (docs/spec/transport-tcp-spec.md §3, "Nagle as lwIP does it").
    fn nagle_allows(&self) -> bool {
        !self.cfg.nagle
            || (self.unacked.is_empty() && !self.syn_unacked)
            || self.in_fr
            || self.unsent.len() > 1
            || self.unsent.front().is_some_and(|s| s.len >= self.mss)
            || self.snd_buf_free() == 0
    }

    /// Whether `tcp_output` with `TF_ACK_NOW` set sends something now.
    fn output_sends_ack(&self) -> bool {
        match self.state {
            TcpState::Closed | TcpState::SynSent => false,
            _ => !matches!(self.head_verdict(), Head::NagleHolds),
        }
    }

    fn fill_ack(&mut self, out: &mut Segment) {
        out.flags = out.flags | Flags::ACK;
        out.ack = self.wire_rcv(self.rcv_nxt);
        out.window = self.rcv_ann_wnd.min(WND_MAX) as u16;
        self.rcv_ann_right_edge = self.rcv_nxt + u64::from(self.rcv_ann_wnd);
        self.ack_delay = false;
        self.ack_now = false;
        self.delack_at = None;
    }

    /// `tcp_send_empty_ack`: a pure ACK at `snd_nxt`; clears the ACK flags.
    fn emit_empty_ack(&mut self, out: &mut Segment) -> bool {
        out.seq = self.wire_snd(self.snd_max);
        self.fill_ack(out);
        self.stats.segments_sent += 1;
        self.stats.pure_acks_sent += 1;
        true
    }

    /// `tcp_output_segment`'s timers: `rtime` starts if stopped, and the
    /// segment is timed if no measurement is running — including a
    /// retransmitted one (lwIP abandons the measurement when it
    /// retransmits, and the next segment it sends starts a new one).
    fn start_timers(&mut self, now: u64, seq: u64) {
        let k = self.ticks(now);
        if self.rt_base.is_none() {
            self.rt_base = Some(k);
        }
        if self.rttest.is_none() {
            self.rttest = Some(k);
            self.rtseq = seq;
        }
    }

    fn emit_syn(&mut self, now: u64, out: &mut Segment) {
        self.syn_unsent = false;
        self.syn_unacked = true;
        out.seq = self.iss;
        out.mss = Some(self.cfg.announced_mss());
        out.window = self.rcv_ann_wnd.min(WND_MAX) as u16;
        if self.state == TcpState::SynReceived {
            out.flags = Flags::SYN | Flags::ACK;
            out.ack = self.wire_rcv(self.rcv_nxt);
            self.rcv_ann_right_edge = self.rcv_nxt + u64::from(self.rcv_ann_wnd);
            self.ack_now = false;
        } else {
            out.flags = Flags::SYN;
        }
        if self.syn_sent_once {
            if self.state == TcpState::SynReceived {
                self.stats.synack_retransmissions += 1;
            } else {
                self.stats.syn_retransmissions += 1;
            }
        }
        self.syn_sent_once = true;
        self.snd_max = self.snd_max.max(1);
        self.start_timers(now, 0);
        self.stats.segments_sent += 1;
    }

    /// Sends the head of `unsent` (`tcp_output`, `tcp_output_segment`).
    fn emit_head(&mut self, now: u64, out: &mut Segment) {
        let seg = self.unsent.pop_front().expect("head checked");
        out.seq = self.wire_snd(seg.start);
        if seg.fin {
            out.flags = Flags::FIN;
        }
        if seg.len > 0 {
            let from = (seg.start - self.buf_off) as usize;
            out.payload
                .extend(self.send_buf.range(from..from + seg.len as usize));
        }
        if self.state == TcpState::SynSent {
            out.window = self.rcv_ann_wnd.min(WND_MAX) as u16;
        } else {
            self.fill_ack(out);
        }
        self.start_timers(now, seg.start);
        if seg.start < self.snd_max {
            self.stats.retransmitted_segments += 1;
            let re_end = (seg.start + u64::from(seg.len)).min(self.snd_max);
            self.stats.retransmitted_bytes += re_end.saturating_sub(seg.start);
        }
        self.snd_max = self.snd_max.max(seg.end());
        if seg.end() > seg.start {
            insert_sorted(&mut self.unacked, seg);
        }
        self.stats.segments_sent += 1;
        if seg.len > 0 {
            self.stats.data_segments_sent += 1;
            self.stats.data_bytes_sent += u64::from(seg.len);
        }
    }
}

/// What `tcp_output` does with the head of `unsent`.
enum Head {
    /// Nothing is queued.
    Empty,
    /// The head does not fit in `min(snd_wnd, cwnd)`.
    WindowHolds,
    /// Nagle holds the head.
    NagleHolds,
    /// The head goes.
    Go,
}
