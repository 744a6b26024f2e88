//! IEEE 802.15.4-2006 unslotted CSMA/CA as ns-3.37's lr-wpan runs it — the
//! `ieee802154` MAC profile (spec `docs/spec/radio-spec.md` §1.4; read from ns-3.37
//! `lr-wpan-csmaca.cc`, `lr-wpan-mac.cc`, `lr-wpan-phy.cc`;
//! `docs/decisions/grid-choices.md`).
//!
//! Times in symbols of 16 µs; a byte is 2 symbols; a frame of L bytes (MAC
//! header, payload, 2-byte FCS) is on the air 12 + 2L symbols (SHR and PHR
//! included).
//!
//! - One FIFO of at most `queue` frames per node, the frame being sent
//!   included; a frame that finds it full is refused. A frame reaching an
//!   idle MAC starts CSMA/CA at once.
//! - CSMA/CA, fresh for every attempt: NB = 0, BE = 3; wait U{0…2^BE − 1} ×
//!   20 symbols; assess the channel for 8 symbols — busy if the radio is
//!   locked onto a frame or sending at the end; busy: BE = min(BE + 1, 5),
//!   NB + 1, and after the fifth busy assessment the frame is dropped
//!   (channel-access failure); idle: 12 symbols of turnaround (deaf), then
//!   the frame.
//! - After the frame, 12 symbols of turnaround (deaf) and an acknowledgement
//!   wait of 54 symbols from its end. The right acknowledgement: done, then
//!   40 symbols of inter-frame space (12 for frames of at most 18 bytes)
//!   before the next frame's CSMA/CA. Timeout, or another acknowledgement:
//!   a failed attempt; the frame is dropped after `transmissions` attempts.
//! - A data frame for this node that arrives intact is handed up at once and
//!   acknowledged 12 symbols later (22 symbols on the air), whatever the MAC
//!   was doing: a backoff or assessment is abandoned, an acknowledgement wait
//!   counts as a failed attempt. CSMA/CA starts afresh 12 symbols after the
//!   acknowledgement.

use crate::time::Nanos;
use crate::DropCause;

use super::{Frame, FrameKind, Grid, Step};

/// One symbol at 250 kbit/s O-QPSK.
pub const SYMBOL: Nanos = 16_000;
/// aUnitBackoffPeriod.
pub const UNIT_BACKOFF: Nanos = 20 * SYMBOL;
/// Clear-channel assessment.
pub const CCA: Nanos = 8 * SYMBOL;
/// aTurnaroundTime.
pub const TURNAROUND: Nanos = 12 * SYMBOL;
/// macAckWaitDuration (from the end of the frame).
pub const ACK_WAIT: Nanos = 54 * SYMBOL;
/// Long and short inter-frame spacing, and the largest short frame.
pub const LIFS: Nanos = 40 * SYMBOL;
/// Short inter-frame spacing.
pub const SIFS: Nanos = 12 * SYMBOL;
/// aMaxSIFSFrameSize (bytes, FCS included).
pub const MAX_SIFS_FRAME: u16 = 18;
/// macMinBE, macMaxBE, macMaxCSMABackoffs.
pub const MIN_BE: u8 = 3;
/// macMaxBE.
pub const MAX_BE: u8 = 5;
/// macMaxCSMABackoffs.
pub const MAX_CSMA_BACKOFFS: u8 = 4;

impl Grid {
    /// Frame `fid` joins node `n`'s queue; `false` if it is full.
    pub(super) fn ieee_enqueue(&mut self, now: Nanos, n: usize, fid: u32) -> bool {
        let node = &mut self.nodes[n];
        if node.queues[0].frames.len() >= self.cfg.queue as usize {
            return false;
        }
        node.queues[0].frames.push_back(fid);
        if node.step == Step::Idle {
            self.ieee_csma(now, n);
        }
        true
    }

    /// A fresh CSMA/CA for the head frame.
    fn ieee_csma(&mut self, now: Nanos, n: usize) {
        let node = &mut self.nodes[n];
        node.nb = 0;
        node.be = MIN_BE;
        self.ieee_backoff(now, n);
    }

    fn ieee_backoff(&mut self, now: Nanos, n: usize) {
        let be = self.nodes[n].be;
        let k = u64::from(self.rngs[n].int_in(0, (1u32 << be) - 1));
        self.step_at(n, Step::Backoff, now + k * UNIT_BACKOFF);
    }

    /// A scheduled step of node `n` is due.
    pub(super) fn ieee_step(&mut self, now: Nanos, n: usize) {
        match self.nodes[n].step {
            Step::Backoff => self.step_at(n, Step::Cca, now + CCA),
            Step::Cca => {
                if self.medium.locked(n) || self.medium.transmitting(n) {
                    let node = &mut self.nodes[n];
                    node.record.deferrals += 1;
                    node.nb += 1;
                    node.be = (node.be + 1).min(MAX_BE);
                    if node.nb > MAX_CSMA_BACKOFFS {
                        node.record.channel_access_failures += 1;
                        self.ieee_drop_head(n, DropCause::ChannelAccess);
                        self.ieee_resume(now, n);
                    } else {
                        self.ieee_backoff(now, n);
                    }
                } else {
                    self.medium.deafen(n, now + TURNAROUND);
                    self.step_at(n, Step::TxTurnaround, now + TURNAROUND);
                }
            }
            Step::TxTurnaround => {
                let fid = *self.nodes[n].queues[0]
                    .frames
                    .front()
                    .expect("a queued frame");
                self.nodes[n].step = Step::TxOnAir;
                self.transmit(now, n, fid);
            }
            Step::TxAckWait => {
                self.ieee_failed_attempt(n);
                self.ieee_resume(now, n);
            }
            Step::Ifs | Step::AckBack => self.ieee_resume(now, n),
            Step::AckTurnaround => {
                let f = self.nodes[n].acking.take().expect("a frame to acknowledge");
                let ack = Frame {
                    kind: FrameKind::Ack,
                    from: n as u16,
                    to: f.from,
                    dsn: f.dsn,
                    len: super::sixlowpan::ACK_FRAME as u16,
                    ..f
                };
                let aid = self.alloc_frame(ack);
                let node = &mut self.nodes[n];
                node.ack_frame = aid;
                node.step = Step::AckSending;
                self.transmit(now, n, aid);
            }
            s => unreachable!("802.15.4 node {} stepped in {s:?}", n + 1),
        }
    }

    /// Node `n`'s frame `fid` ended.
    pub(super) fn ieee_tx_end(&mut self, now: Nanos, n: usize, fid: u32) {
        self.medium.deafen(n, now + TURNAROUND);
        match self.nodes[n].step {
            Step::TxOnAir => self.step_at(n, Step::TxAckWait, now + ACK_WAIT),
            Step::AckSending => {
                self.free_frame(fid);
                self.step_at(n, Step::AckBack, now + TURNAROUND);
            }
            s => unreachable!("802.15.4 node {} ended a frame in {s:?}", n + 1),
        }
    }

    /// Frame `f` arrived intact at node `r`.
    pub(super) fn ieee_received(&mut self, now: Nanos, r: usize, f: Frame) {
        if usize::from(f.to) != r {
            return;
        }
        match f.kind {
            FrameKind::Ack => {
                if self.nodes[r].step != Step::TxAckWait {
                    return;
                }
                let fid = *self.nodes[r].queues[0]
                    .frames
                    .front()
                    .expect("a queued frame");
                self.cancel_step(r);
                if self.frames[fid as usize].dsn == f.dsn {
                    let len = self.frames[fid as usize].len + super::sixlowpan::FCS as u16;
                    let node = &mut self.nodes[r];
                    node.queues[0].frames.pop_front();
                    node.retries = 0;
                    self.free_frame(fid);
                    let ifs = if len <= MAX_SIFS_FRAME { SIFS } else { LIFS };
                    self.step_at(r, Step::Ifs, now + ifs);
                } else {
                    self.ieee_failed_attempt(r);
                    self.ieee_resume(now, r);
                }
            }
            FrameKind::Data => {
                match self.nodes[r].step {
                    Step::TxAckWait => self.ieee_failed_attempt(r),
                    Step::Idle | Step::Backoff | Step::Cca | Step::Ifs => {}
                    s => unreachable!("node {} received while in {s:?}", r + 1),
                }
                // Busy with the acknowledgement before handing the frame up,
                // so that a forwarded frame waits for it.
                self.nodes[r].acking = Some(f);
                self.medium.deafen(r, now + TURNAROUND);
                self.step_at(r, Step::AckTurnaround, now + TURNAROUND);
                if !self.duplicate(r, &f) {
                    self.sixlowpan_input(now, r, f);
                }
            }
        }
    }

    /// An attempt of the head frame failed; it is dropped after the last.
    fn ieee_failed_attempt(&mut self, n: usize) {
        let node = &mut self.nodes[n];
        node.retries += 1;
        if u32::from(node.retries) >= self.cfg.transmissions {
            node.record.mac_drops += 1;
            self.ieee_drop_head(n, DropCause::MacRetries);
        }
    }

    fn ieee_drop_head(&mut self, n: usize, cause: DropCause) {
        let node = &mut self.nodes[n];
        let fid = node.queues[0].frames.pop_front().expect("a queued frame");
        node.retries = 0;
        let f = self.frames[fid as usize];
        self.free_frame(fid);
        self.fragment_lost(&f, cause);
    }

    /// The MAC is free: CSMA/CA for the next frame, if any.
    fn ieee_resume(&mut self, now: Nanos, n: usize) {
        self.nodes[n].step = Step::Idle;
        if !self.nodes[n].queues[0].frames.is_empty() {
            self.ieee_csma(now, n);
        }
    }
}
