//! The sender's retransmission queue as Linux 4.9 keeps it: one record per
//! transmitted segment with the SACK "tag bits" of `tcp_skb_cb.sacked`
//! (SACKED_ACKED, SACKED_RETRANS, LOST, EVER_RETRANS), the counters
//! `packets_out`, `sacked_out`, `lost_out`, `retrans_out` and `fackets_out`,
//! and the loss markings that read them: SACK tagging of RFC 2018 blocks and
//! RFC 2883 D-SACK (`tcp_sacktag_write_queue`), FACK's head marking
//! (`tcp_mark_head_lost`), the timeout's marking (`tcp_enter_loss`) and RACK
//! (`net/ipv4/tcp_recovery.c` of 4.9, `tcp_rack_mark_lost`,
//! `tcp_rack_advance`).
//!
//! Fixed capacity: the queue is allocated once with room for
//! [`CAPACITY`] segments and never grows; the socket sends no new segment
//! while it is full (`docs/decisions/tcp-choices.md`, "Linux 4.9's loss recovery").

use std::collections::VecDeque;

/// Most segments outstanding at once (a 65 535-byte window of 128-byte
/// segments).
pub const CAPACITY: usize = 512;

/// `TCPCB_SACKED_ACKED`: the receiver holds it (SACK).
pub const SACKED: u8 = 1;
/// `TCPCB_SACKED_RETRANS`: retransmitted and that retransmission still out.
pub const RETRANS: u8 = 2;
/// `TCPCB_LOST`: marked lost, to be retransmitted.
pub const LOST: u8 = 4;
/// `TCPCB_EVER_RETRANS`: retransmitted at least once (Karn; F-RTO).
pub const EVER_RETRANS: u8 = 8;

/// One transmitted segment: sequence offsets `[start, end)`, its last
/// transmission time and its tag bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seg {
    /// First sequence offset.
    pub start: u64,
    /// One past the last.
    pub end: u64,
    /// Time of the latest (re)transmission (`skb_mstamp`).
    pub xmit: u64,
    /// Tag bits ([`SACKED`], [`RETRANS`], [`LOST`], [`EVER_RETRANS`]).
    pub tags: u8,
}

/// What one ACK's SACK blocks did to the queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SackOutcome {
    /// Segments newly SACKed.
    pub newly_sacked: u32,
    /// A newly SACKed segment had never been retransmitted and lies below
    /// `high_seq` (`FLAG_ORIG_SACK_ACKED`).
    pub orig_sacked: bool,
    /// The ACK carried a D-SACK block (`FLAG_DSACKING_ACK`).
    pub dsack: bool,
    /// D-SACKed segments that had been retransmitted (each undoes one
    /// retransmission, `undo_retrans`).
    pub dsacked_retrans: u32,
    /// The D-SACK block, if any (sequence offsets).
    pub dsack_block: Option<(u64, u64)>,
}

/// The retransmission queue.
#[derive(Clone, Debug)]
pub struct Scoreboard {
    segs: VecDeque<Seg>,
    /// `sacked_out`.
    pub sacked_out: u32,
    /// `lost_out`.
    pub lost_out: u32,
    /// `retrans_out`.
    pub retrans_out: u32,
    /// RACK: send time of the most recently sent segment known delivered.
    rack_xmit: u64,
    /// RACK: whether that time moved since the last marking.
    rack_advanced: bool,
}

impl Default for Scoreboard {
    fn default() -> Self {
        Scoreboard {
            segs: VecDeque::with_capacity(CAPACITY),
            sacked_out: 0,
            lost_out: 0,
            retrans_out: 0,
            rack_xmit: 0,
            rack_advanced: false,
        }
    }
}

impl Scoreboard {
    /// `packets_out`: segments sent and not cumulatively acknowledged.
    pub fn packets_out(&self) -> u32 {
        self.segs.len() as u32
    }
    /// `tcp_packets_in_flight`: packets_out − (sacked_out + lost_out) +
    /// retrans_out.
    pub fn in_flight(&self) -> u32 {
        (self.packets_out() + self.retrans_out).saturating_sub(self.sacked_out + self.lost_out)
    }
    /// Whether no more segments fit.
    pub fn is_full(&self) -> bool {
        self.segs.len() >= CAPACITY
    }
    /// The segments, oldest first.
    pub fn segs(&self) -> impl Iterator<Item = &Seg> {
        self.segs.iter()
    }
    /// The first outstanding segment.
    pub fn head(&self) -> Option<&Seg> {
        self.segs.front()
    }
    /// The last segment sent.
    pub fn tail(&self) -> Option<&Seg> {
        self.segs.back()
    }
    /// `fackets_out`: segments from the head up to and including the highest
    /// SACKed one (0 without SACKs).
    pub fn fackets_out(&self) -> u32 {
        if self.sacked_out == 0 {
            return 0;
        }
        self.segs
            .iter()
            .rposition(|s| s.tags & SACKED != 0)
            .map_or(0, |i| i as u32 + 1)
    }

    /// A new segment went out at `now`.
    pub fn push(&mut self, start: u64, end: u64, now: u64) {
        debug_assert!(!self.is_full());
        self.segs.push_back(Seg {
            start,
            end,
            xmit: now,
            tags: 0,
        });
    }

    /// The cumulative ACK moved to `una`: drops every segment wholly below
    /// it (a segment partly below is trimmed, as `tcp_trim_head`). Returns
    /// (segments acknowledged, of which not SACKed before, whether any was
    /// ever retransmitted, whether a never-retransmitted one not SACKed
    /// before ends at or below `high_seq`: `FLAG_ORIG_SACK_ACKED`). RACK advances to the newest acknowledged send
    /// time (`tcp_clean_rtx_queue` → `tcp_rack_advance`).
    pub fn ack_to(
        &mut self,
        una: u64,
        now: u64,
        min_rtt: u64,
        high_seq: u64,
    ) -> (u32, u32, bool, bool) {
        let (mut acked, mut fresh, mut rexmit, mut orig) = (0, 0, false, false);
        while let Some(s) = self.segs.front_mut() {
            if s.start >= una {
                break;
            }
            if s.end > una {
                s.start = una;
                break;
            }
            let s = self.segs.pop_front().unwrap_or(Seg {
                start: 0,
                end: 0,
                xmit: 0,
                tags: 0,
            });
            acked += 1;
            if s.tags & SACKED != 0 {
                self.sacked_out -= 1;
            } else {
                fresh += 1;
                orig |= s.tags & EVER_RETRANS == 0 && s.end <= high_seq;
            }
            if s.tags & LOST != 0 {
                self.lost_out -= 1;
            }
            if s.tags & RETRANS != 0 {
                self.retrans_out -= 1;
            }
            rexmit |= s.tags & EVER_RETRANS != 0;
            self.rack_advance(s.xmit, s.tags, now, min_rtt);
        }
        (acked, fresh, rexmit, orig)
    }

    /// `tcp_rack_advance`: remembers the newest send time among delivered
    /// segments; a retransmitted one counts only if it was sent at least
    /// min_rtt ago (else the original may be what arrived).
    fn rack_advance(&mut self, xmit: u64, tags: u8, now: u64, min_rtt: u64) {
        if self.rack_xmit != 0 && xmit <= self.rack_xmit {
            return;
        }
        if tags & EVER_RETRANS != 0 && now.saturating_sub(xmit) < min_rtt {
            return;
        }
        self.rack_xmit = xmit;
        self.rack_advanced = true;
    }

    /// Tags the segments the SACK blocks (sequence offsets, D-SACK first if
    /// any) cover. `una` is the cumulative ACK of the same segment,
    /// `high_seq` the recovery point, `undo_marker` where undo bookkeeping
    /// starts. A first block below `una`, or inside the second block, is a
    /// D-SACK (`tcp_check_dsack`).
    pub fn sack(
        &mut self,
        blocks: &[(u64, u64)],
        una: u64,
        high_seq: u64,
        undo_marker: Option<u64>,
        now: u64,
        min_rtt: u64,
    ) -> SackOutcome {
        let mut out = SackOutcome::default();
        let mut first = 0;
        if let Some(&(l0, r0)) = blocks.first() {
            let inside_second = blocks.get(1).is_some_and(|&(l1, r1)| l0 >= l1 && r0 <= r1);
            if l0 < una || inside_second {
                out.dsack = true;
                out.dsack_block = Some((l0, r0));
                first = 1;
                // D-SACK of data already acknowledged: "dumb counting".
                if r0 <= una && undo_marker.is_some_and(|m| r0 > m) {
                    out.dsacked_retrans += 1;
                } else {
                    for s in self.segs.iter() {
                        if s.start >= l0 && s.end <= r0 && s.tags & EVER_RETRANS != 0 {
                            out.dsacked_retrans += 1;
                        }
                    }
                }
            }
        }
        for &(l, r) in &blocks[first..] {
            if r <= una {
                continue;
            }
            for i in 0..self.segs.len() {
                let s = self.segs[i];
                if s.start < l || s.end > r || s.tags & SACKED != 0 {
                    continue;
                }
                let mut tags = s.tags | SACKED;
                if s.tags & LOST != 0 {
                    self.lost_out -= 1;
                    tags &= !LOST;
                }
                if s.tags & RETRANS != 0 {
                    self.retrans_out -= 1;
                    tags &= !RETRANS;
                }
                if s.tags & EVER_RETRANS == 0 && s.end <= high_seq {
                    out.orig_sacked = true;
                }
                self.segs[i].tags = tags;
                self.sacked_out += 1;
                out.newly_sacked += 1;
                self.rack_advance(s.xmit, s.tags, now, min_rtt);
            }
        }
        out
    }

    fn mark_lost(&mut self, i: usize) {
        let s = &mut self.segs[i];
        if s.tags & SACKED != 0 {
            return;
        }
        if s.tags & LOST == 0 {
            s.tags |= LOST;
            self.lost_out += 1;
        }
        if s.tags & RETRANS != 0 {
            // A retransmission lost again (`tcp_rack_mark_skb_lost`).
            s.tags &= !RETRANS;
            self.retrans_out -= 1;
        }
    }

    /// `tcp_mark_head_lost` as FACK (and Reno) count: marks every segment
    /// neither SACKed nor lost among the first `packets` ones. Segments
    /// whose retransmission is still out are left alone.
    pub fn mark_head_lost(&mut self, packets: u32) {
        for i in 0..(packets as usize).min(self.segs.len()) {
            if self.segs[i].tags & RETRANS == 0 {
                self.mark_lost(i);
            }
        }
    }

    /// `tcp_enter_loss`: every segment not SACKed is lost; no
    /// retransmission is counted out any more. SACK marks are kept unless
    /// the head itself is SACKed (reneging), which clears them all.
    pub fn mark_all_lost(&mut self) {
        let reneg = self.segs.front().is_some_and(|s| s.tags & SACKED != 0);
        self.retrans_out = 0;
        self.lost_out = 0;
        if reneg {
            self.sacked_out = 0;
        }
        for s in self.segs.iter_mut() {
            s.tags &= !(RETRANS | LOST);
            if reneg {
                s.tags &= !SACKED;
            }
            if s.tags & SACKED == 0 {
                s.tags |= LOST;
                self.lost_out += 1;
            }
        }
    }

    /// Clears every LOST mark (undo of a timeout, `tcp_undo_cwnd_reduction`
    /// with `unmark_loss`).
    pub fn unmark_lost(&mut self) {
        for s in self.segs.iter_mut() {
            s.tags &= !LOST;
        }
        self.lost_out = 0;
    }

    /// `tcp_rack_mark_lost` of 4.9 (callers check the state is Recovery or
    /// Loss): once a segment sent later than `reo_wnd` after another is
    /// known delivered, the earlier one is lost; a lost retransmission is
    /// counted out again. Returns how many retransmissions were found lost.
    pub fn rack_mark_lost(&mut self, reo_wnd: u64) -> u32 {
        if !self.rack_advanced {
            return 0;
        }
        self.rack_advanced = false;
        let prior_retrans = self.retrans_out;
        for i in 0..self.segs.len() {
            let s = self.segs[i];
            if s.tags & SACKED != 0 {
                continue;
            }
            if self.rack_xmit > s.xmit {
                if self.rack_xmit - s.xmit <= reo_wnd {
                    continue;
                }
                self.mark_lost(i);
            } else if s.tags & EVER_RETRANS == 0 {
                break; // originals were sent in order: the rest are newer
            }
        }
        prior_retrans - self.retrans_out
    }

    /// The first segment to retransmit (`tcp_xmit_retransmit_queue`): lost,
    /// not SACKed, its retransmission not out. Returns its index.
    pub fn next_lost(&self) -> Option<usize> {
        self.segs
            .iter()
            .position(|s| s.tags & (LOST | SACKED | RETRANS) == LOST)
    }

    /// Segment `i` was retransmitted at `now` (`tcp_retransmit_skb`); with
    /// `counted` it is a retransmission out (`retrans_out`), without it a
    /// loss probe (`__tcp_retransmit_skb` only).
    pub fn retransmitted(&mut self, i: usize, now: u64, counted: bool) -> Seg {
        let s = &mut self.segs[i];
        s.xmit = now;
        s.tags |= EVER_RETRANS;
        if counted && s.tags & RETRANS == 0 {
            s.tags |= RETRANS;
            self.retrans_out += 1;
        }
        *s
    }

    /// The index of the segment holding offset `off`.
    pub fn find(&self, off: u64) -> Option<usize> {
        self.segs.iter().position(|s| s.start <= off && off < s.end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ten 100-byte segments, offsets 1..1001, sent 1 ms apart.
    fn ten() -> Scoreboard {
        let mut b = Scoreboard::default();
        for i in 0..10u64 {
            b.push(1 + 100 * i, 101 + 100 * i, 1_000_000 * (i + 1));
        }
        b
    }

    #[test]
    fn sack_tags_and_fack_marks_the_head() {
        let mut b = ten();
        // Segments 0 and 1 lost; 2..=5 SACKed: [201, 601).
        let o = b.sack(&[(201, 601)], 1, 1001, None, 20_000_000, 5_000_000);
        assert_eq!(o.newly_sacked, 4);
        assert!(!o.dsack);
        assert_eq!((b.sacked_out, b.fackets_out()), (4, 6));
        assert_eq!(b.in_flight(), 6);
        // FACK: fackets_out − reordering = 6 − 3 = 3 → the first three
        // segments; the third is SACKed, so two are lost.
        b.mark_head_lost(6 - 3);
        assert_eq!(b.lost_out, 2);
        assert_eq!(b.in_flight(), 4);
        assert_eq!(b.next_lost(), Some(0));
        b.retransmitted(0, 21_000_000, true);
        assert_eq!((b.retrans_out, b.in_flight()), (1, 5));
        assert_eq!(b.next_lost(), Some(1));
        // The cumulative ACK covers the first two: one was out as a
        // retransmission, both lost.
        let (acked, fresh, rexmit, orig) = b.ack_to(201, 30_000_000, 5_000_000, 1001);
        // Segment 1 was never retransmitted: original data acknowledged.
        assert_eq!((acked, fresh, rexmit, orig), (2, 2, true, true));
        assert_eq!((b.lost_out, b.retrans_out, b.sacked_out), (0, 0, 4));
        assert_eq!(b.packets_out(), 8);
    }

    #[test]
    fn dsack_is_told_apart() {
        let mut b = ten();
        b.retransmitted(0, 12_000_000, true);
        // Block below the cumulative ACK: D-SACK of acknowledged data.
        b.ack_to(101, 13_000_000, 1, 1001);
        let o = b.sack(&[(1, 101)], 101, 1001, Some(1), 13_000_000, 1);
        assert!(o.dsack);
        assert_eq!((o.dsacked_retrans, o.newly_sacked), (1, 0));
        // D-SACK inside the second block: the duplicate was SACKed data.
        let o = b.sack(&[(301, 401), (201, 501)], 101, 1001, Some(1), 14_000_000, 1);
        assert!(o.dsack);
        assert_eq!(o.newly_sacked, 3);
        assert!(o.orig_sacked);
    }

    #[test]
    fn timeout_marks_all_unsacked_lost() {
        let mut b = ten();
        b.sack(&[(501, 701)], 1, 1001, None, 20_000_000, 1);
        b.mark_all_lost();
        assert_eq!((b.lost_out, b.sacked_out, b.in_flight()), (8, 2, 0));
        // Reneging: the head itself SACKed clears all SACK state.
        let mut r = ten();
        r.sack(&[(1, 101)], 1, 1001, None, 20_000_000, 1);
        r.mark_all_lost();
        assert_eq!((r.lost_out, r.sacked_out), (10, 0));
        r.unmark_lost();
        assert_eq!((r.lost_out, r.in_flight()), (0, 10));
    }

    /// RACK with a 1 ms reordering window: segment 0 retransmitted at
    /// t = 20 ms, segment 9 (sent at 10 ms) SACKed. Segments 1–8, sent at
    /// 2–9 ms, are more than 1 ms older than 10 ms except segment 8 (9 ms:
    /// exactly 1 ms, within the window); the retransmission at 20 ms is newer.
    #[test]
    fn rack_marks_by_send_time() {
        let mut b = ten();
        b.retransmitted(0, 20_000_000, true);
        b.sack(&[(901, 1001)], 1, 1001, None, 25_000_000, 5_000_000);
        assert_eq!(b.rack_mark_lost(1_000_000), 0);
        assert_eq!(b.lost_out, 7); // segments 1..=7
        assert_eq!(b.next_lost(), Some(1));
        // Nothing newly delivered: no second scan.
        assert_eq!(b.rack_mark_lost(1_000_000), 0);
        // Segment 2 is retransmitted at 30 ms, segment 8 at 32 ms, and
        // segment 8 is SACKed at 72 ms (40 ms ≥ min_rtt after its
        // retransmission): the retransmissions of 0 (20 ms) and 2 (30 ms),
        // both more than 1 ms older, are lost again.
        b.retransmitted(2, 30_000_000, true);
        b.retransmitted(8, 32_000_000, true);
        assert_eq!(b.retrans_out, 3);
        b.sack(&[(801, 1001)], 1, 1001, None, 72_000_000, 5_000_000);
        assert_eq!(b.retrans_out, 2);
        assert_eq!(b.rack_mark_lost(1_000_000), 2);
        assert_eq!((b.retrans_out, b.lost_out), (0, 8));
        assert_eq!(b.next_lost(), Some(0));
    }

    /// A retransmitted segment delivered sooner than min_rtt after its
    /// retransmission does not advance RACK (the original may have arrived).
    #[test]
    fn rack_ignores_ambiguous_retransmissions() {
        let mut b = ten();
        b.retransmitted(9, 20_000_000, true);
        b.sack(&[(901, 1001)], 1, 1001, None, 22_000_000, 5_000_000);
        assert_eq!(b.rack_mark_lost(1_000_000), 0);
        assert_eq!(b.lost_out, 0);
    }
}
