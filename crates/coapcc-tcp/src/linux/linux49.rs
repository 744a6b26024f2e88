//! Linux 4.9's congestion state machine for one sender, in packets
//! (docs/spec/transport-tcp-spec.md §2, corrected): `tcp_fastretrans_alert` with the states
//! Open, Disorder, CWR, Recovery and Loss; Reno window growth
//! (`tcp_reno_cong_avoid`, `tcp_slow_start`, `tcp_cong_avoid_ai`,
//! `tcp_is_cwnd_limited`) and `tcp_reno_ssthresh`; SACK-based recovery with
//! FACK (`tcp_time_to_recover`, `tcp_update_scoreboard`), or Reno's dupack
//! emulation without SACK; RFC 5827 early retransmit with its delay
//! (`tcp_pause_early_retransmit`); RACK (`tcp_rack_mark_lost`); Proportional
//! Rate Reduction, RFC 6937 (`tcp_cwnd_reduction`); the timeout's Loss state
//! (`tcp_enter_loss`) with F-RTO, RFC 5682 (`tcp_process_loss`); undo by
//! D-SACK (`tcp_try_undo_dsack`, `tcp_undo_cwnd_reduction`); the tail loss
//! probe's timeout and its ACK (`tcp_schedule_loss_probe`,
//! `tcp_process_tlp_ack`). The socket ([`super::TcpSocket`]) moves the bytes;
//! this decides how many packets may be out and which to resend.
//!
//! Every mechanism has its switch in [`Mechanisms`] (`tlp6`: the probe
//! timeout of Linux 6.x); with all off this is
//! Linux 4.9's Reno recovery (`tcp_sack = 0`), which is not model 2's
//! byte-counted NewReno ([`super::newreno`], kept as `tcp-newreno`).

use super::config::Mechanisms;
use super::scoreboard::{Scoreboard, EVER_RETRANS};
use crate::MS;

/// `tp->reordering` (the dumbbell and the star never reorder, so it stays
/// at `sysctl_tcp_reordering` = 3).
pub const REORDERING: u32 = 3;
/// `TCP_DELACK_MAX`: the delayed-ACK bound the loss probe waits for.
pub const DELACK_MAX: u64 = 200 * MS;
/// `TCP_RTO_MIN` (the hosts' `tcp_rto_min_us` = 200 ms), which Linux 6.x's
/// probe timeout adds with one packet out.
pub const RTO_MIN: u64 = 200 * MS;
/// RACK's reordering window without observed reordering (1000 µs).
pub const RACK_REO_WND: u64 = MS;

/// `icsk_ca_state`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CaState {
    /// No loss suspected.
    Open,
    /// SACKs or duplicate ACKs seen, not yet a loss.
    Disorder,
    /// Window reduced after a loss repaired by the tail loss probe.
    Cwr,
    /// Fast recovery.
    Recovery,
    /// After a retransmission timeout.
    Loss,
}

/// What an ACK tells the state machine (the `FLAG_*` bits it uses).
#[derive(Clone, Copy, Debug, Default)]
pub struct AckInfo {
    /// `snd_una` before the ACK.
    pub prior_una: u64,
    /// The cumulative ACK.
    pub una: u64,
    /// `snd_nxt` (one past the highest sent).
    pub snd_nxt: u64,
    /// A pure duplicate: nothing acknowledged, no data, no window change.
    pub is_dupack: bool,
    /// The ACK carried data or a window update (`FLAG_NOT_DUP` without
    /// `FLAG_ACKED`).
    pub not_dup: bool,
    /// New data could be sent now (`tcp_may_send_now`).
    pub may_send_now: bool,
    /// Unsent data waits and the peer's window has room past `snd_nxt`.
    pub has_unsent: bool,
    /// Smoothed RTT (ns), 0 before the first sample.
    pub srtt: u64,
    /// The retransmission timer's expiry, if armed.
    pub rto_at: Option<u64>,
    /// The RTO (ns).
    pub rto: u64,
    /// The sending MSS (bytes; `mss_cache`), for `FLAG_DSACK_TLP`.
    pub mss: u64,
}

/// What the socket must do after an ACK.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckVerdict {
    /// Recovery started on this ACK.
    pub entered_recovery: bool,
    /// Start the early-retransmit timer this long from now.
    pub early_retransmit_in: Option<u64>,
    /// A cumulatively acknowledged segment was ever retransmitted (Karn).
    pub retrans_acked: bool,
    /// A timeout was found spurious and undone (F-RTO or D-SACK).
    pub undone: bool,
    /// F-RTO found the timeout spurious (`TCPSpuriousRTOs`).
    pub spurious_rto: bool,
    /// The ACK carried a D-SACK block (`TCPDSACKRecv`).
    pub dsack: bool,
}

/// One sender's Linux 4.9 loss recovery.
#[derive(Clone, Debug)]
pub struct Linux49Cc {
    m: Mechanisms,
    /// SACK negotiated on this connection (`tcp_is_sack`).
    sack_ok: bool,
    /// The retransmission queue.
    pub sb: Scoreboard,
    cwnd: u32,
    ssthresh: u32,
    cwnd_cnt: u32,
    state: CaState,
    high_seq: u64,
    undo_marker: Option<u64>,
    undo_retrans: i32,
    prior_ssthresh: u32,
    prior_cwnd: u32,
    prr_delivered: u32,
    prr_out: u32,
    /// Reno's emulated `sacked_out` (duplicate ACKs).
    reno_sacked: u32,
    frto: bool,
    tlp_high_seq: Option<u64>,
    /// The open probe episode's probe was a retransmission, not new data
    /// (`tlp_retrans`, `tlp1`).
    tlp_retrans: bool,
    max_packets_out: u32,
    max_packets_seq: u64,
    is_cwnd_limited: bool,
    min_rtt: u64,
    /// Retransmit lost segments after this ACK (`REXMIT_LOST`).
    pub rexmit_lost: bool,
    /// F-RTO step 2.b: send new data instead (`REXMIT_NEW`).
    pub rexmit_new: bool,
}

const INFINITE_SSTHRESH: u32 = 0x7fff_ffff;

impl Linux49Cc {
    /// Initial state: `initial` packets of cwnd, ssthresh unbounded.
    pub fn new(m: Mechanisms, initial: u32) -> Self {
        Linux49Cc {
            m,
            sack_ok: false,
            sb: Scoreboard::default(),
            cwnd: initial.max(1),
            ssthresh: INFINITE_SSTHRESH,
            cwnd_cnt: 0,
            state: CaState::Open,
            high_seq: 0,
            undo_marker: None,
            undo_retrans: 0,
            prior_ssthresh: 0,
            prior_cwnd: 0,
            prr_delivered: 0,
            prr_out: 0,
            reno_sacked: 0,
            frto: false,
            tlp_high_seq: None,
            tlp_retrans: false,
            max_packets_out: 0,
            max_packets_seq: 0,
            is_cwnd_limited: false,
            min_rtt: u64::MAX,
            rexmit_lost: false,
            rexmit_new: false,
        }
    }

    /// The mechanisms in force.
    pub fn mechanisms(&self) -> Mechanisms {
        self.m
    }
    /// Records whether the handshake negotiated SACK.
    pub fn set_sack(&mut self, ok: bool) {
        self.sack_ok = ok && self.m.sack;
    }
    /// Whether SACK is in use.
    pub fn sack_ok(&self) -> bool {
        self.sack_ok
    }
    /// Sets the initial window in packets (after the handshake).
    pub fn reset_window(&mut self, packets: u32) {
        self.cwnd = packets.max(1);
    }
    /// cwnd (packets).
    pub fn cwnd(&self) -> u32 {
        self.cwnd
    }
    /// ssthresh (packets).
    pub fn ssthresh(&self) -> u32 {
        self.ssthresh
    }
    /// The congestion state.
    pub fn state(&self) -> CaState {
        self.state
    }
    /// Feeds an RTT sample to the windowed minimum RACK uses (`tcp_min_rtt`;
    /// kept as the all-time minimum: the paths do not change).
    pub fn rtt_sample(&mut self, rtt: u64) {
        self.min_rtt = self.min_rtt.min(rtt);
    }

    fn sacked_out(&self) -> u32 {
        if self.sack_ok {
            self.sb.sacked_out
        } else {
            self.reno_sacked
        }
    }
    /// `tcp_packets_in_flight`.
    pub fn in_flight(&self) -> u32 {
        self.sb
            .in_flight()
            .saturating_sub(if self.sack_ok { 0 } else { self.reno_sacked })
    }
    fn in_cwnd_reduction(&self) -> bool {
        matches!(self.state, CaState::Cwr | CaState::Recovery)
    }
    /// Packets cwnd lets out now (`tcp_cwnd_test`).
    pub fn quota(&self) -> u32 {
        self.cwnd.saturating_sub(self.in_flight())
    }

    fn reno_ssthresh(&self) -> u32 {
        (self.cwnd >> 1).max(2)
    }
    fn current_ssthresh(&self) -> u32 {
        if self.in_cwnd_reduction() {
            self.ssthresh
        } else {
            self.ssthresh.max((self.cwnd >> 1) + (self.cwnd >> 2))
        }
    }
    fn init_undo(&mut self, una: u64) {
        self.undo_marker = Some(una);
        self.undo_retrans = if self.sb.retrans_out > 0 {
            self.sb.retrans_out as i32
        } else {
            -1
        };
    }
    fn init_cwnd_reduction(&mut self, snd_nxt: u64) {
        self.high_seq = snd_nxt;
        self.tlp_high_seq = None;
        self.cwnd_cnt = 0;
        self.prior_cwnd = self.cwnd;
        self.prr_delivered = 0;
        self.prr_out = 0;
        self.ssthresh = self.reno_ssthresh();
    }
    fn end_cwnd_reduction(&mut self) {
        if self.state == CaState::Cwr
            || (self.undo_marker.is_some() && self.ssthresh < INFINITE_SSTHRESH)
        {
            self.cwnd = self.ssthresh;
            self.cwnd_cnt = 0;
        }
    }
    fn enter_recovery(&mut self, una: u64, snd_nxt: u64) {
        self.prior_ssthresh = 0;
        self.init_undo(una);
        if !self.in_cwnd_reduction() {
            self.prior_ssthresh = self.current_ssthresh();
            self.init_cwnd_reduction(snd_nxt);
        }
        self.state = CaState::Recovery;
        if !self.m.prr {
            // Without PRR: cwnd = ssthresh for the whole recovery.
            self.cwnd = self.ssthresh;
        }
    }
    fn try_keep_open(&mut self, snd_nxt: u64) {
        let state = if self.sacked_out() + self.sb.lost_out > 0 || self.sb.retrans_out > 0 {
            CaState::Disorder
        } else {
            CaState::Open
        };
        if self.state != state {
            self.state = state;
            self.high_seq = snd_nxt;
        }
    }
    fn may_undo(&self) -> bool {
        self.undo_marker.is_some() && self.undo_retrans == 0
    }
    /// `tcp_undo_cwnd_reduction` (Reno has no `undo_cwnd` in 4.9).
    fn undo_cwnd_reduction(&mut self, unmark_loss: bool) {
        if unmark_loss {
            self.sb.unmark_lost();
        }
        if self.prior_ssthresh > 0 {
            self.cwnd = self.cwnd.max(self.ssthresh << 1);
            if self.prior_ssthresh > self.ssthresh {
                self.ssthresh = self.prior_ssthresh;
            }
        }
        self.undo_marker = None;
    }
    fn try_undo_loss(&mut self, frto_undo: bool) -> bool {
        if frto_undo || self.may_undo() {
            self.undo_cwnd_reduction(true);
            if frto_undo || self.sack_ok {
                self.state = CaState::Open;
            }
            return true;
        }
        false
    }
    /// `tcp_try_undo_recovery`; true when Reno holds the state.
    fn try_undo_recovery(&mut self, una: u64) -> bool {
        if self.may_undo() {
            self.undo_cwnd_reduction(false);
        }
        if una == self.high_seq && !self.sack_ok {
            return true;
        }
        self.state = CaState::Open;
        false
    }

    /// A new segment went out (`tcp_event_new_data_sent` and
    /// `tcp_cwnd_validate`).
    pub fn on_new_data_sent(&mut self, start: u64, end: u64, now: u64, una: u64) {
        self.sb.push(start, end, now);
        if self.in_cwnd_reduction() {
            self.prr_out += 1;
        }
        let limited = self.in_flight() >= self.cwnd;
        if una >= self.max_packets_seq || self.sb.packets_out() > self.max_packets_out {
            self.max_packets_out = self.sb.packets_out();
            self.max_packets_seq = end;
            self.is_cwnd_limited = limited;
        } else {
            self.is_cwnd_limited |= limited;
        }
    }

    /// The next lost segment to retransmit now, if cwnd allows (the first
    /// retransmission of a recovery is always allowed without PRR, as PRR's
    /// own `sndcnt ≥ 1` allows it with). Returns its index.
    pub fn next_retransmission(&self) -> Option<usize> {
        let i = self.sb.next_lost()?;
        let forced = !self.m.prr && self.state == CaState::Recovery && self.prr_out == 0;
        (self.in_flight() < self.cwnd || forced).then_some(i)
    }

    /// Segment `i` was retransmitted (`tcp_retransmit_skb`).
    pub fn on_retransmitted(&mut self, i: usize, now: u64) {
        self.sb.retransmitted(i, now, true);
        if self.in_cwnd_reduction() {
            self.prr_out += 1;
        }
        if self.undo_retrans < 0 {
            self.undo_retrans = 0;
        }
        self.undo_retrans += 1;
    }

    /// An ACK. `blocks` are its SACK blocks as sequence offsets.
    pub fn on_ack(&mut self, now: u64, a: &AckInfo, blocks: &[(u64, u64)]) -> AckVerdict {
        let mut v = AckVerdict::default();
        // What to send is decided anew on each ACK (`rexmit` of tcp_ack).
        self.rexmit_lost = false;
        self.rexmit_new = false;
        let advanced = a.una > a.prior_una;
        let min_rtt = if self.min_rtt == u64::MAX {
            0
        } else {
            self.min_rtt
        };
        // SACK tagging (tcp_sacktag_write_queue).
        let mut newly_sacked = 0;
        let mut orig_acked = false;
        let mut dsack = false;
        let mut dsack_tlp = false;
        if self.sack_ok && !blocks.is_empty() {
            let o = self
                .sb
                .sack(blocks, a.una, self.high_seq, self.undo_marker, now, min_rtt);
            newly_sacked = o.newly_sacked;
            orig_acked |= o.orig_sacked;
            dsack = o.dsack;
            v.dsack = o.dsack;
            // `tcp_dsack_seen` (Linux 5.15+): a D-SACK of one segment at
            // most, ending where the probe episode ends, is the probe's.
            dsack_tlp = o
                .dsack_block
                .is_some_and(|(l, r)| r - l <= a.mss && self.tlp_high_seq == Some(r));
            if self.undo_marker.is_some() && self.undo_retrans > 0 {
                self.undo_retrans = (self.undo_retrans - o.dsacked_retrans as i32).max(0);
            }
        }
        // Cumulative ACK (tcp_clean_rtx_queue).
        let (acked, fresh, retrans_acked, orig) =
            self.sb.ack_to(a.una, now, min_rtt, self.high_seq);
        orig_acked |= orig;
        v.retrans_acked = retrans_acked;
        let mut delivered = fresh + newly_sacked;
        if !self.sack_ok {
            if acked > 0 {
                // tcp_remove_reno_sacks.
                self.reno_sacked = self.reno_sacked.saturating_sub(acked - 1);
                delivered = acked;
            }
            self.reno_sacked = self
                .reno_sacked
                .min(self.sb.packets_out().saturating_sub(1));
        }
        let data_sacked = newly_sacked > 0;
        // Tail loss probe's ACK (tcp_process_tlp_ack). With `tlp1` (Linux
        // 5.8+) an acknowledged probe of new data ends the episode, and
        // only the probe's own D-SACK (5.15+) shows it was spurious; Linux
        // 4.9 takes any D-SACK.
        if let Some(t) = self.tlp_high_seq {
            if a.una >= t {
                let spurious = if self.m.tlp1 { dsack_tlp } else { dsack };
                // A probe of new data (tlp1) or a spurious probe: the
                // episode ends with nothing to undo.
                if (self.m.tlp1 && !self.tlp_retrans) || spurious {
                    self.tlp_high_seq = None;
                } else if a.una > t {
                    self.init_cwnd_reduction(a.snd_nxt);
                    self.state = CaState::Cwr;
                    self.end_cwnd_reduction();
                    self.try_keep_open(a.snd_nxt);
                } else if !advanced && !a.not_dup && !data_sacked {
                    self.tlp_high_seq = None;
                }
            }
        }
        let dubious = !(advanced || a.not_dup) || data_sacked || self.state != CaState::Open;
        let mut lost_retrans = false;
        if dubious {
            self.fastretrans_alert(now, a, &mut v, data_sacked, orig_acked, &mut lost_retrans);
            if !self.sack_ok && a.is_dupack {
                delivered += 1;
            }
        }
        // tcp_cong_control.
        if self.in_cwnd_reduction() {
            self.cwnd_reduction(delivered, retrans_acked, lost_retrans);
        } else if acked > 0 {
            self.cong_avoid(delivered);
        }
        v
    }

    #[allow(clippy::too_many_arguments)]
    fn fastretrans_alert(
        &mut self,
        now: u64,
        a: &AckInfo,
        v: &mut AckVerdict,
        data_sacked: bool,
        orig_acked: bool,
        lost_retrans: &mut bool,
    ) {
        let advanced = a.una > a.prior_una;
        let mut do_lost = a.is_dupack || (data_sacked && self.sb.fackets_out() > REORDERING);
        if self.sb.packets_out() == 0 {
            self.reno_sacked = 0;
        }
        // RACK (4.9: only once recovery has started).
        if self.m.rack && self.state >= CaState::Recovery {
            *lost_retrans = self.sb.rack_mark_lost(RACK_REO_WND) > 0;
        }
        // State exit when high_seq is acknowledged.
        if self.state != CaState::Open && a.una >= self.high_seq {
            match self.state {
                CaState::Cwr if a.una != self.high_seq => {
                    self.end_cwnd_reduction();
                    self.state = CaState::Open;
                }
                CaState::Recovery => {
                    self.reno_sacked = 0;
                    if self.try_undo_recovery(a.una) {
                        return;
                    }
                    self.end_cwnd_reduction();
                }
                _ => {}
            }
        }
        let mut fast_rexmit = false;
        let mut fall_through = false;
        match self.state {
            CaState::Recovery => {
                if !advanced {
                    if !self.sack_ok && a.is_dupack {
                        self.reno_sacked += 1;
                    }
                } else {
                    do_lost = !self.sack_ok || self.sb.fackets_out() > REORDERING;
                }
                if self.may_undo() {
                    // tcp_try_undo_dsack.
                    self.undo_cwnd_reduction(false);
                    v.undone = true;
                    self.try_keep_open(a.snd_nxt);
                    return;
                }
            }
            CaState::Loss => {
                self.process_loss(a, advanced, data_sacked, orig_acked, v);
                if self.state != CaState::Open && !*lost_retrans {
                    return;
                }
                fall_through = true;
            }
            _ => fall_through = true,
        }
        if fall_through {
            if !self.sack_ok {
                if advanced {
                    self.reno_sacked = 0;
                }
                if a.is_dupack {
                    self.reno_sacked += 1;
                    self.reno_sacked = self
                        .reno_sacked
                        .min(self.sb.packets_out().saturating_sub(1));
                }
            }
            if self.state <= CaState::Disorder && self.may_undo() {
                self.undo_cwnd_reduction(false);
            }
            match self.time_to_recover(now, a) {
                Recover::No => {
                    if self.state != CaState::Cwr {
                        self.try_keep_open(a.snd_nxt);
                    }
                    return;
                }
                Recover::After(d) => {
                    v.early_retransmit_in = Some(d);
                    if self.state != CaState::Cwr {
                        self.try_keep_open(a.snd_nxt);
                    }
                    return;
                }
                Recover::Now => {}
            }
            self.enter_recovery(a.una, a.snd_nxt);
            v.entered_recovery = true;
            fast_rexmit = true;
        }
        let head_timed_out = self.sack_ok
            && self
                .sb
                .head()
                .is_some_and(|h| now.saturating_sub(h.xmit) > a.rto);
        if do_lost || head_timed_out {
            self.update_scoreboard(fast_rexmit);
        }
        self.rexmit_lost = true;
    }

    /// `tcp_update_scoreboard` with FACK (SACK) or Reno.
    fn update_scoreboard(&mut self, _fast_rexmit: bool) {
        if !self.sack_ok {
            self.sb.mark_head_lost(1);
        } else {
            let lost = self.sb.fackets_out().saturating_sub(REORDERING).max(1);
            self.sb.mark_head_lost(lost);
        }
    }

    fn time_to_recover(&self, now: u64, a: &AckInfo) -> Recover {
        if self.sb.lost_out > 0 {
            return Recover::Now;
        }
        let dupack_heuristics = if self.sack_ok {
            self.sb.fackets_out()
        } else {
            self.reno_sacked + 1
        };
        if dupack_heuristics > REORDERING {
            return Recover::Now;
        }
        let packets_out = self.sb.packets_out();
        let sacked = self.sacked_out();
        if packets_out <= REORDERING
            && sacked >= (packets_out / 2).max(REORDERING)
            && !a.may_send_now
        {
            return Recover::Now;
        }
        if self.m.early_retransmit
            && self.sb.retrans_out == 0
            && sacked > 0
            && packets_out > sacked
            && packets_out < 4
            && !a.may_send_now
        {
            // tcp_pause_early_retransmit: wait max(SRTT/4, 2 ms) unless
            // the RTO fires first.
            if a.srtt == 0 {
                return Recover::Now;
            }
            let delay = (a.srtt / 4).max(2 * MS);
            return match a.rto_at {
                Some(t) if t > now + delay => Recover::After(delay),
                _ => Recover::Now,
            };
        }
        Recover::No
    }

    /// The early-retransmit timer fired (`tcp_resume_early_retransmit`).
    pub fn on_early_retransmit(&mut self, una: u64, snd_nxt: u64) {
        self.enter_recovery(una, snd_nxt);
        self.update_scoreboard(true);
        self.rexmit_lost = true;
    }

    /// `tcp_process_loss` with F-RTO (RFC 5682 §3.1, SACK-enhanced).
    fn process_loss(
        &mut self,
        a: &AckInfo,
        advanced: bool,
        data_sacked: bool,
        orig_acked: bool,
        v: &mut AckVerdict,
    ) {
        let recovered = a.una >= self.high_seq;
        if advanced && self.try_undo_loss(false) {
            v.undone = true;
            return;
        }
        if self.frto {
            if orig_acked && self.try_undo_loss(true) {
                v.undone = true;
                v.spurious_rto = true;
                return;
            }
            if a.snd_nxt > self.high_seq {
                if data_sacked || a.is_dupack {
                    self.frto = false; // step 3.a: the loss was real
                }
            } else if advanced && !recovered {
                self.high_seq = a.snd_nxt;
                if a.has_unsent {
                    self.rexmit_new = true; // step 2.b
                    return;
                }
                self.frto = false;
            }
        }
        if recovered {
            self.try_undo_recovery(a.una);
            return;
        }
        if !self.sack_ok {
            if a.snd_nxt > self.high_seq && a.is_dupack {
                self.reno_sacked += 1;
            } else if advanced {
                self.reno_sacked = 0;
            }
        }
        self.rexmit_lost = true;
    }

    /// F-RTO step 2.b found nothing new to send: fall back to retransmitting.
    pub fn frto_no_new_data(&mut self) {
        self.rexmit_new = false;
        self.frto = false;
        self.rexmit_lost = true;
    }

    /// `tcp_cwnd_reduction`: PRR's send quota for this ACK (RFC 6937 with
    /// Linux's slow-start reduction bound), or cwnd = ssthresh without PRR.
    fn cwnd_reduction(&mut self, delivered: u32, retrans_acked: bool, lost_retrans: bool) {
        if !self.m.prr {
            if self.state == CaState::Recovery {
                self.cwnd = self.ssthresh;
            }
            return;
        }
        if delivered == 0 || self.prior_cwnd == 0 {
            return;
        }
        self.prr_delivered += delivered;
        let in_flight = self.in_flight() as i64;
        let delta = self.ssthresh as i64 - in_flight;
        let mut sndcnt = if delta < 0 {
            let dividend = u64::from(self.ssthresh) * u64::from(self.prr_delivered)
                + u64::from(self.prior_cwnd)
                - 1;
            (dividend / u64::from(self.prior_cwnd)) as i64 - i64::from(self.prr_out)
        } else if retrans_acked && !lost_retrans {
            delta.min(
                (i64::from(self.prr_delivered) - i64::from(self.prr_out)).max(i64::from(delivered))
                    + 1,
            )
        } else {
            delta.min(i64::from(delivered))
        };
        sndcnt = sndcnt.max(if self.prr_out > 0 { 0 } else { 1 });
        self.cwnd = (in_flight + sndcnt).max(0) as u32;
    }

    /// `tcp_reno_cong_avoid`.
    fn cong_avoid(&mut self, mut acked: u32) {
        let limited = if self.cwnd < self.ssthresh {
            self.cwnd < 2 * self.max_packets_out
        } else {
            self.is_cwnd_limited
        };
        if !limited {
            return;
        }
        if self.cwnd < self.ssthresh {
            let c = (self.cwnd + acked).min(self.ssthresh);
            acked -= c - self.cwnd;
            self.cwnd = c;
            if acked == 0 {
                return;
            }
        }
        let w = self.cwnd;
        if self.cwnd_cnt >= w {
            self.cwnd_cnt = 0;
            self.cwnd += 1;
        }
        self.cwnd_cnt += acked;
        if self.cwnd_cnt >= w {
            let d = self.cwnd_cnt / w;
            self.cwnd_cnt -= d * w;
            self.cwnd += d;
        }
    }

    /// A retransmission timeout (`tcp_retransmit_timer` → `tcp_enter_loss`).
    /// `retransmits` is `icsk_retransmits` before this one. The socket
    /// then retransmits the head.
    pub fn on_rto(&mut self, una: u64, snd_nxt: u64, retransmits: u32) {
        let new_recovery = self.state < CaState::Recovery;
        if self.state <= CaState::Disorder
            || self.high_seq <= una
            || (self.state == CaState::Loss && retransmits == 0)
        {
            self.prior_ssthresh = self.current_ssthresh();
            self.ssthresh = self.reno_ssthresh();
            self.init_undo(una);
        }
        self.cwnd = 1;
        self.cwnd_cnt = 0;
        self.reno_sacked = 0;
        self.sb.mark_all_lost();
        self.state = CaState::Loss;
        self.high_seq = snd_nxt;
        self.tlp_high_seq = None;
        self.rexmit_new = false;
        self.rexmit_lost = false; // the timer resends the head itself
        self.frto = self.m.frto && (new_recovery || retransmits > 0);
    }

    /// Whether a tail loss probe may be armed now and after how long
    /// (`tcp_schedule_loss_probe`): only with SACK, with packets out, when
    /// cwnd or the application (not the window) stops new data, and in Open
    /// (4.9) or Open and CWR (6.x, the `tlp6` switch). Linux 4.9: PTO =
    /// 2·SRTT (1 s without a sample), at least 1.5·SRTT + `TCP_DELACK_MAX`
    /// with one packet out, at least 10 ms. Linux 6.x: PTO = 2·SRTT +
    /// `tcp_rto_min` (200 ms) with one packet out, 2·SRTT + 2 ms
    /// (`TCP_TIMEOUT_MIN`) otherwise, 1 s without a sample. Never later than
    /// the pending RTO.
    pub fn loss_probe_timeout(
        &self,
        now: u64,
        srtt: u64,
        can_send_new: bool,
        rto_at: Option<u64>,
    ) -> Option<u64> {
        let state_ok = self.state == CaState::Open || (self.m.tlp6 && self.state == CaState::Cwr);
        if !self.m.tlp || !self.sack_ok || !state_ok || self.sb.packets_out() == 0 {
            return None;
        }
        // Linux 4.9 arms no probe while cwnd has room and new data could
        // go; 6.x's `tcp_schedule_loss_probe` has no such test (`tlp1`): a
        // request Nagle holds behind the CSM leaves as the probe.
        if !self.m.tlp1 && self.cwnd > self.in_flight() && can_send_new {
            return None;
        }
        let mut t = if srtt == 0 {
            1000 * MS
        } else if self.m.tlp6 {
            2 * srtt
                + if self.sb.packets_out() == 1 {
                    RTO_MIN
                } else {
                    2 * MS
                }
        } else {
            let mut t = 2 * srtt;
            if self.sb.packets_out() == 1 {
                t = t.max(srtt + srtt / 2 + DELACK_MAX);
            }
            t.max(10 * MS)
        };
        if let Some(r) = rto_at {
            if now + t > r && r > now {
                t = r - now;
            }
        }
        Some(t)
    }

    /// Whether no probe episode is open (`tlp_high_seq` unset): Linux 4.9
    /// checks it before retransmitting the last segment, Linux 5.8+
    /// (`tlp1`) before any probe.
    pub fn probe_allowed(&self) -> bool {
        self.tlp_high_seq.is_none()
    }
    /// A probe retransmitted the last segment; `snd_nxt` for its ACK.
    pub fn on_probe_retransmitted(&mut self, i: usize, now: u64, snd_nxt: u64) {
        self.sb.retransmitted(i, now, false);
        self.tlp_high_seq = Some(snd_nxt);
        self.tlp_retrans = true;
    }
    /// A probe sent new data (`tcp_send_loss_probe`'s first choice): with
    /// `tlp1` it opens a probe episode up to `snd_nxt` (`probe_sent` with
    /// `tlp_retrans` clear); Linux 4.9 records nothing.
    pub fn on_probe_new_data(&mut self, snd_nxt: u64) {
        if self.m.tlp1 {
            self.tlp_high_seq = Some(snd_nxt);
            self.tlp_retrans = false;
        }
    }
    /// Whether segment `i` was ever retransmitted.
    pub fn ever_retransmitted(&self, i: usize) -> bool {
        self.sb
            .segs()
            .nth(i)
            .is_some_and(|s| s.tags & EVER_RETRANS != 0)
    }
}

/// `tcp_time_to_recover`'s answer.
enum Recover {
    No,
    Now,
    After(u64),
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ten 100-byte segments out (offsets 1..1001) with cwnd 10, SACK on.
    fn ten_out(m: Mechanisms) -> Linux49Cc {
        let mut c = Linux49Cc::new(m, 10);
        c.set_sack(true);
        for i in 0..10u64 {
            c.on_new_data_sent(1 + 100 * i, 101 + 100 * i, MS * i, 1);
        }
        c
    }

    fn dupack(srtt: u64) -> AckInfo {
        AckInfo {
            prior_una: 1,
            una: 1,
            snd_nxt: 1001,
            is_dupack: true,
            srtt,
            rto: 1000 * MS,
            rto_at: Some(2000 * MS),
            ..AckInfo::default()
        }
    }

    /// The head is lost; the next segments are SACKed one per duplicate
    /// ACK. FACK starts recovery when fackets_out = 4 > 3; PRR's quota per
    /// ACK (RFC 6937 as `tcp_cwnd_reduction`): prior_cwnd 10, ssthresh 5.
    #[test]
    fn fack_starts_recovery_and_prr_paces_it() {
        let mut c = ten_out(Mechanisms::DEBIAN9);
        let now = 100 * MS;
        // Dupacks 1 and 2: fackets_out 2, 3 — Disorder, nothing to resend.
        for right in [201, 301] {
            let v = c.on_ack(now, &dupack(50 * MS), &[(101, right)]);
            assert!(!v.entered_recovery);
            assert_eq!(c.state(), CaState::Disorder);
            assert_eq!(c.cwnd(), 10);
            assert_eq!(c.next_retransmission(), None);
        }
        // Dupack 3: fackets_out 4 > 3: Recovery, head marked lost,
        // ssthresh = 10/2. PRR: delivered 1, in flight 10 − 3 − 1 = 6 >
        // ssthresh: sndcnt = ⌈5·1/10⌉ − 0 = 1, cwnd = 6 + 1 = 7.
        let v = c.on_ack(now, &dupack(50 * MS), &[(101, 401)]);
        assert!(v.entered_recovery);
        assert_eq!(
            (c.state(), c.ssthresh(), c.cwnd()),
            (CaState::Recovery, 5, 7)
        );
        assert_eq!(c.next_retransmission(), Some(0));
        c.on_retransmitted(0, now);
        assert_eq!((c.in_flight(), c.next_retransmission()), (7, None));
        // Dupack 4: delivered 2, in flight 10 − 4 − 1 + 1 = 6:
        // sndcnt = ⌈5·2/10⌉ − 1 = 0, cwnd 6.
        c.on_ack(now, &dupack(50 * MS), &[(101, 501)]);
        assert_eq!(c.cwnd(), 6);
        // Dupack 5: in flight 5 = ssthresh: sndcnt = min(0, 1) = 0, cwnd 5.
        c.on_ack(now, &dupack(50 * MS), &[(101, 601)]);
        assert_eq!(c.cwnd(), 5);
        // Dupack 6: in flight 4 < ssthresh: sndcnt = min(1, 1) = 1, cwnd 5.
        c.on_ack(now, &dupack(50 * MS), &[(101, 701)]);
        assert_eq!((c.in_flight(), c.cwnd(), c.quota()), (4, 5, 1));
        // The full ACK: recovery ends with cwnd = ssthresh (no undo: the
        // retransmission was never D-SACKed); then congestion avoidance
        // counts the 4 newly delivered packets toward cwnd 5 (4 < 5).
        let full = AckInfo {
            prior_una: 1,
            una: 1001,
            snd_nxt: 1001,
            ..dupack(50 * MS)
        };
        let v = c.on_ack(now, &full, &[]);
        assert!(v.retrans_acked);
        assert_eq!((c.state(), c.cwnd(), c.ssthresh()), (CaState::Open, 5, 5));
        assert_eq!(c.sb.packets_out(), 0);
    }

    /// Without PRR (an ablation switch): cwnd = ssthresh at once, the fast
    /// retransmission still allowed.
    #[test]
    fn without_prr_cwnd_drops_to_ssthresh() {
        let mut m = Mechanisms::DEBIAN9;
        m.prr = false;
        let mut c = ten_out(m);
        for right in [201, 301, 401] {
            c.on_ack(0, &dupack(50 * MS), &[(101, right)]);
        }
        assert_eq!((c.state(), c.cwnd()), (CaState::Recovery, 5));
        // In flight 6 > cwnd 5, yet the first retransmission goes.
        assert_eq!(c.next_retransmission(), Some(0));
        c.on_retransmitted(0, 0);
        assert_eq!(c.next_retransmission(), None);
    }

    /// `tcp_schedule_loss_probe` of 6.x (`tlp6`): one packet out, SRTT
    /// 100 ms: 2·100 + 200 = 400 ms (4.9: 350); two packets: 200 + 2 =
    /// 202 ms (4.9: 200); SRTT 2 ms, two packets: 6 ms (4.9: 10); no
    /// sample: 1 s; cut to the RTO; allowed in CWR (4.9: not).
    #[test]
    fn loss_probe_timeout_values_of_linux6() {
        let mut c = Linux49Cc::new(Mechanisms::LINUX6, 10);
        c.set_sack(true);
        c.on_new_data_sent(1, 101, 0, 1);
        let far = Some(10_000 * MS);
        assert_eq!(
            c.loss_probe_timeout(0, 100 * MS, false, far),
            Some(400 * MS)
        );
        assert_eq!(
            c.loss_probe_timeout(0, 100 * MS, false, Some(300 * MS)),
            Some(300 * MS)
        );
        assert_eq!(c.loss_probe_timeout(0, 0, false, far), Some(1000 * MS));
        c.on_new_data_sent(101, 201, 0, 1);
        assert_eq!(
            c.loss_probe_timeout(0, 100 * MS, false, far),
            Some(202 * MS)
        );
        assert_eq!(c.loss_probe_timeout(0, 2 * MS, false, far), Some(6 * MS));
        c.state = CaState::Cwr;
        assert_eq!(
            c.loss_probe_timeout(0, 100 * MS, false, far),
            Some(202 * MS)
        );
        let mut d = Linux49Cc::new(Mechanisms::DEBIAN9, 10);
        d.set_sack(true);
        d.on_new_data_sent(1, 101, 0, 1);
        d.state = CaState::Cwr;
        assert_eq!(d.loss_probe_timeout(0, 100 * MS, false, far), None);
    }

    /// `tcp_schedule_loss_probe` of 4.9: PTO = max(2·SRTT, 10 ms), with one
    /// packet out at least 1.5·SRTT + 200 ms, never past the RTO.
    #[test]
    fn loss_probe_timeout_values() {
        let mut c = Linux49Cc::new(Mechanisms::DEBIAN9, 10);
        c.set_sack(true);
        c.on_new_data_sent(1, 101, 0, 1);
        let far = Some(10_000 * MS);
        // One packet, SRTT 100 ms: max(200, 150 + 200) = 350 ms.
        assert_eq!(
            c.loss_probe_timeout(0, 100 * MS, false, far),
            Some(350 * MS)
        );
        // … but the RTO 300 ms away comes first.
        assert_eq!(
            c.loss_probe_timeout(0, 100 * MS, false, Some(300 * MS)),
            Some(300 * MS)
        );
        // No RTT sample: TCP_TIMEOUT_INIT (1 s) doubled is not taken: 1 s.
        assert_eq!(c.loss_probe_timeout(0, 0, false, far), Some(1000 * MS));
        c.on_new_data_sent(101, 201, 0, 1);
        // Two packets: 2·SRTT = 200 ms; 2·2 ms is raised to 10 ms.
        assert_eq!(
            c.loss_probe_timeout(0, 100 * MS, false, far),
            Some(200 * MS)
        );
        assert_eq!(c.loss_probe_timeout(0, 2 * MS, false, far), Some(10 * MS));
        // Not while cwnd lets new data out, nor without SACK, nor when off.
        assert_eq!(c.loss_probe_timeout(0, 100 * MS, true, far), None);
        let mut r = Linux49Cc::new(Mechanisms::DEBIAN9, 10);
        r.on_new_data_sent(1, 101, 0, 1);
        assert_eq!(r.loss_probe_timeout(0, 100 * MS, false, far), None);
        let mut m = Mechanisms::DEBIAN9;
        m.tlp = false;
        let mut o = Linux49Cc::new(m, 10);
        o.set_sack(true);
        o.on_new_data_sent(1, 101, 0, 1);
        assert_eq!(o.loss_probe_timeout(0, 100 * MS, false, far), None);
    }

    /// Four 100-byte segments sent at t = 0 with SACK on, then a
    /// retransmission timeout: the state F-RTO starts from.
    fn timed_out_with_four_out() -> Linux49Cc {
        let mut c = Linux49Cc::new(Mechanisms::DEBIAN9, 10);
        c.set_sack(true);
        for i in 0..4u64 {
            c.on_new_data_sent(1 + 100 * i, 101 + 100 * i, 0, 1);
        }
        c.on_rto(1, 401, 0);
        c
    }

    /// The ACK of the first segment (1–101) after that timeout, with new
    /// data waiting to be sent.
    fn ack_of_the_first_after_rto() -> AckInfo {
        AckInfo {
            prior_una: 1,
            una: 101,
            snd_nxt: 401,
            has_unsent: true,
            srtt: 100 * MS,
            rto: 600 * MS,
            ..AckInfo::default()
        }
    }

    /// Four packets out, then a timeout: Loss with cwnd 1, ssthresh 10/2,
    /// everything marked lost. The head's retransmission is acknowledged
    /// and F-RTO (step 2.b) sends new data instead of more retransmissions;
    /// the next ACK acknowledges never-retransmitted data below high_seq:
    /// the timeout was spurious and is undone (cwnd = max(cwnd,
    /// 2·ssthresh) = 10, ssthresh back to its prior value).
    #[test]
    fn frto_detects_a_spurious_timeout() {
        let mut c = timed_out_with_four_out();
        assert_eq!((c.state(), c.cwnd(), c.ssthresh()), (CaState::Loss, 1, 5));
        assert_eq!((c.sb.lost_out, c.in_flight()), (4, 0));
        c.on_retransmitted(0, 0);
        let a = ack_of_the_first_after_rto();
        let v = c.on_ack(1000 * MS, &a, &[]);
        assert!(!v.undone);
        assert!(c.rexmit_new && !c.rexmit_lost);
        // Slow start in Loss: cwnd 1 → 2.
        assert_eq!(c.cwnd(), 2);
        c.rexmit_new = false;
        c.on_new_data_sent(401, 501, 1000 * MS, 101);
        c.on_new_data_sent(501, 601, 1000 * MS, 101);
        // The originals of 1–3 arrive: ACK 401, all never retransmitted.
        let b = AckInfo {
            prior_una: 101,
            una: 401,
            snd_nxt: 601,
            ..a
        };
        let v = c.on_ack(1100 * MS, &b, &[]);
        assert!(v.undone);
        assert_eq!(c.state(), CaState::Open);
        assert_eq!((c.cwnd(), c.ssthresh()), (10, INFINITE_SSTHRESH));
        assert_eq!(c.sb.lost_out, 0);
    }

    /// F-RTO without SACK (`tcp`, Linux 4.9 as the thesis configured it):
    /// the same `tcp_process_loss` on cumulative ACKs and duplicate ACKs
    /// only (RFC 5682's basic algorithm). Spurious: the head's ACK sends
    /// new data (step 2.b), then an ACK of never-retransmitted data undoes
    /// (step 3.b): cwnd 10, ssthresh unbounded. Real: a duplicate ACK after
    /// the new data ends F-RTO (step 3.a), counts as a Reno SACK
    /// (`tcp_add_reno_sack`) and the lost segments are retransmitted.
    #[test]
    fn frto_without_sack() {
        let timed_out = || {
            let mut c = Linux49Cc::new(Mechanisms::THESIS, 10);
            c.set_sack(true); // offered by the peer, refused: tcp_sack = 0
            assert!(!c.sack_ok());
            for i in 0..4u64 {
                c.on_new_data_sent(1 + 100 * i, 101 + 100 * i, 0, 1);
            }
            c.on_rto(1, 401, 0);
            c.on_retransmitted(0, 0);
            let a = ack_of_the_first_after_rto();
            let v = c.on_ack(1000 * MS, &a, &[]);
            assert!(!v.undone && c.rexmit_new && !c.rexmit_lost);
            assert_eq!(c.cwnd(), 2);
            c.rexmit_new = false;
            c.on_new_data_sent(401, 501, 1000 * MS, 101);
            (c, a)
        };
        let (mut c, a) = timed_out();
        let b = AckInfo {
            prior_una: 101,
            una: 401,
            snd_nxt: 501,
            ..a
        };
        assert!(c.on_ack(1100 * MS, &b, &[]).undone);
        assert_eq!(c.state(), CaState::Open);
        assert_eq!((c.cwnd(), c.ssthresh()), (10, INFINITE_SSTHRESH));

        let (mut c, a) = timed_out();
        let d = AckInfo {
            prior_una: 101,
            una: 101,
            snd_nxt: 501,
            is_dupack: true,
            ..a
        };
        assert!(!c.on_ack(1100 * MS, &d, &[]).undone);
        assert_eq!(c.state(), CaState::Loss);
        assert!(c.rexmit_lost && !c.rexmit_new);
        assert_eq!(c.reno_sacked, 1);
        assert_eq!(c.next_retransmission(), Some(0));
    }

    /// The same timeout when the loss was real: the ACK after F-RTO's new
    /// data SACKs only new data; F-RTO stands down and the lost segments
    /// are retransmitted.
    #[test]
    fn frto_confirms_a_real_loss() {
        let mut c = timed_out_with_four_out();
        c.on_retransmitted(0, 0);
        let a = ack_of_the_first_after_rto();
        c.on_ack(1000 * MS, &a, &[]);
        c.rexmit_new = false;
        c.on_new_data_sent(401, 501, 1000 * MS, 101);
        let b = AckInfo {
            prior_una: 101,
            una: 101,
            snd_nxt: 501,
            is_dupack: true,
            ..a
        };
        let v = c.on_ack(1100 * MS, &b, &[(401, 501)]);
        assert!(!v.undone);
        assert_eq!(c.state(), CaState::Loss);
        assert!(c.rexmit_lost);
        assert_eq!(c.next_retransmission(), Some(0)); // segment 101..201
        assert_eq!(c.sb.segs().next().map(|s| s.start), Some(101));
    }

    /// RFC 5827 early retransmit as 4.9 delays it: two packets out, the
    /// second SACKed (fackets_out 2, too few for FACK), nothing new to send:
    /// recovery waits max(SRTT/4, 2 ms) = 25 ms for SRTT 100 ms, then
    /// resends the head. Without the switch the sender stays in Disorder.
    #[test]
    fn early_retransmit_after_a_quarter_rtt() {
        for er in [true, false] {
            let m = Mechanisms {
                early_retransmit: er,
                ..Mechanisms::DEBIAN9
            };
            let mut c = Linux49Cc::new(m, 10);
            c.set_sack(true);
            c.on_new_data_sent(1, 101, 0, 1);
            c.on_new_data_sent(101, 201, 0, 1);
            let a = AckInfo {
                prior_una: 1,
                una: 1,
                snd_nxt: 201,
                is_dupack: true,
                srtt: 100 * MS,
                rto: 500 * MS,
                rto_at: Some(500 * MS),
                ..AckInfo::default()
            };
            let v = c.on_ack(100 * MS, &a, &[(101, 201)]);
            assert_eq!(c.state(), CaState::Disorder);
            assert_eq!(c.next_retransmission(), None);
            if !er {
                assert_eq!(v.early_retransmit_in, None);
                continue;
            }
            assert_eq!(v.early_retransmit_in, Some(25 * MS));
            c.on_early_retransmit(1, 201);
            assert_eq!((c.state(), c.ssthresh()), (CaState::Recovery, 5));
            assert_eq!(c.next_retransmission(), Some(0));
            // An SRTT of 4 ms gives the 2 ms floor; an RTO due sooner than
            // the delay means no delay at all.
            let mut d = Linux49Cc::new(m, 10);
            d.set_sack(true);
            d.on_new_data_sent(1, 101, 0, 1);
            d.on_new_data_sent(101, 201, 0, 1);
            let fast = AckInfo { srtt: 4 * MS, ..a };
            let v = d.on_ack(100 * MS, &fast, &[(101, 201)]);
            assert_eq!(v.early_retransmit_in, Some(2 * MS));
            let mut e = Linux49Cc::new(m, 10);
            e.set_sack(true);
            e.on_new_data_sent(1, 101, 0, 1);
            e.on_new_data_sent(101, 201, 0, 1);
            let soon = AckInfo {
                rto_at: Some(110 * MS),
                ..a
            };
            let v = e.on_ack(100 * MS, &soon, &[(101, 201)]);
            assert!(v.entered_recovery && v.early_retransmit_in.is_none());
        }
    }

    /// Reno slow start and congestion avoidance in packets, growing only
    /// while cwnd-limited (`tcp_is_cwnd_limited`).
    #[test]
    fn window_growth_in_packets() {
        let mut c = Linux49Cc::new(Mechanisms::DEBIAN9, 10);
        c.set_sack(true);
        for i in 0..10u64 {
            c.on_new_data_sent(1 + 100 * i, 101 + 100 * i, 0, 1);
        }
        let a = AckInfo {
            prior_una: 1,
            una: 501,
            snd_nxt: 1001,
            ..AckInfo::default()
        };
        c.on_ack(0, &a, &[]);
        assert_eq!(c.cwnd(), 15); // +5 in slow start
                                  // Application-limited: one packet out of cwnd 15 → no growth.
        let mut d = Linux49Cc::new(Mechanisms::DEBIAN9, 10);
        d.on_new_data_sent(1, 101, 0, 1);
        let b = AckInfo {
            prior_una: 1,
            una: 101,
            snd_nxt: 101,
            ..AckInfo::default()
        };
        d.on_ack(0, &b, &[]);
        assert_eq!(d.cwnd(), 10);
    }

    /// `tlp1` (Linux 5.8+): a probe of new data opens a probe episode up to
    /// its end (501), during which no probe may leave; the ACK of 501 ends
    /// it. Linux 4.9 (`tcp-linux49-debian9`) records nothing for such a
    /// probe.
    #[test]
    fn a_probe_of_new_data_opens_an_episode_with_tlp1() {
        for (m, open_after_probe) in [(Mechanisms::LINUX6, true), (Mechanisms::DEBIAN9, false)] {
            let mut c = Linux49Cc::new(m, 10);
            c.set_sack(true);
            c.on_new_data_sent(1, 401, 0, 1);
            c.on_new_data_sent(401, 501, 1000 * MS, 1);
            c.on_probe_new_data(501);
            assert_eq!(!c.probe_allowed(), open_after_probe);
            // The ACK of 401 (not all of the probe): still open.
            let a = AckInfo {
                prior_una: 1,
                una: 401,
                snd_nxt: 501,
                mss: 400,
                ..AckInfo::default()
            };
            c.on_ack(1100 * MS, &a, &[]);
            assert_eq!(!c.probe_allowed(), open_after_probe);
            let b = AckInfo {
                prior_una: 401,
                una: 501,
                ..a
            };
            c.on_ack(1200 * MS, &b, &[]);
            assert!(c.probe_allowed());
            assert_eq!(c.state(), CaState::Open);
        }
    }

    /// A retransmitted probe of the last segment [401, 501) opens an episode
    /// up to 501; the ACK of 501 arrives (the original got through), with
    /// a D-SACK. Linux 4.9 ends the episode on any D-SACK; with `tlp1`
    /// (Linux 5.15+, `FLAG_DSACK_TLP`) a D-SACK of an older retransmission,
    /// [1, 101), does not, and one of the probe, [401, 501), does.
    #[test]
    fn only_the_probes_own_dsack_ends_its_episode_with_tlp1() {
        for (m, block, ended) in [
            (Mechanisms::DEBIAN9, (1, 101), true),
            (Mechanisms::LINUX6, (1, 101), false),
            (Mechanisms::LINUX6, (401, 501), true),
        ] {
            let mut c = Linux49Cc::new(m, 10);
            c.set_sack(true);
            c.on_new_data_sent(1, 401, 0, 1);
            c.on_new_data_sent(401, 501, 0, 1);
            c.on_probe_retransmitted(1, 1000 * MS, 501);
            assert!(!c.probe_allowed());
            let a = AckInfo {
                prior_una: 1,
                una: 501,
                snd_nxt: 501,
                mss: 400,
                ..AckInfo::default()
            };
            let v = c.on_ack(1100 * MS, &a, &[block]);
            assert!(v.dsack);
            assert_eq!(c.probe_allowed(), ended, "{} {block:?}", m.joined());
        }
    }

    /// Linux 4.9 arms no probe while cwnd has room and new data could be
    /// sent (here: one packet out of cwnd 10, the next write held by
    /// Nagle); 6.x (`tlp1`) arms it all the same: 1 s without an RTT
    /// sample.
    #[test]
    fn linux6_arms_the_probe_with_room_in_cwnd() {
        for (m, pto) in [
            (Mechanisms::DEBIAN9, None),
            (Mechanisms::LINUX6, Some(1000 * MS)),
        ] {
            let mut c = Linux49Cc::new(m, 10);
            c.set_sack(true);
            c.on_new_data_sent(1, 3, 0, 1);
            assert_eq!(c.loss_probe_timeout(0, 0, true, Some(3000 * MS)), pto);
            assert_eq!(
                c.loss_probe_timeout(0, 0, false, Some(3000 * MS)),
                Some(1000 * MS)
            );
        }
    }
}
