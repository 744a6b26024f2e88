//! Contiki 3.0's CSMA over nullrdc, as Cooja runs it — the `contiki` MAC
//! profile (spec `docs/spec/radio-spec.md` §1.3; read from `core/net/mac/csma.c`,
//! `nullrdc.c`, `platform/cooja`; `docs/decisions/grid-choices.md`).
//!
//! **Queues (csma).** A node holds at most `queue` frames in all, in one FIFO
//! per next hop, with at most `neighbour_queues` next hops at once. A frame
//! that finds no room is refused; a fragment needs room for itself and the
//! temporary buffer 6LoWPAN holds while handing it over. A frame queued to an
//! empty queue is sent at once: there is no backoff before a first attempt.
//!
//! **Sending (nullrdc).** The node is busy from the start of an attempt to
//! the acknowledgement check; queues whose turn comes meanwhile wait.
//! 1. If the radio is locked onto a frame the attempt is a *collision*
//!    (deferred, not counted as a transmission).
//! 2. 2 ms of radio turnaround, then Cooja's clear-channel assessment, which
//!    only frames from strictly inside the reception range pass (none, on a
//!    grid whose pitch is the range): busy → collision.
//! 3. The frame goes on the air (32 µs per byte).
//! 4. 2 ms after it ends, the radio's single receive buffer is read: the
//!    acknowledgement (3 bytes, this frame's sequence number) → sent; any
//!    other frame → collision (and that frame is lost); nothing → no ACK.
//!
//! **After an attempt (csma).** Sent: the frame is done; the next frame to
//! the same neighbour goes at once (nullrdc keeps sending the list), or
//! after 125 ms with [`Pacing::AfterEveryFrame`]. No ACK: counted as a
//! transmission; below `transmissions`, retried after 125 ms + U[0, 2^min(n,3)
//! · 125 ms) (n transmissions so far, whole milliseconds); at the limit the
//! frame is dropped and the neighbour's next frame waits 125 ms. Collision:
//! retried after the same backoff, not counted, without limit.
//!
//! **Receiving.** A frame that arrives intact goes to the radio's single
//! buffer (replacing one not yet read). A free node reads it at once; a data
//! frame for it is acknowledged 1 ms later (3 bytes, 96 µs), then, unless it
//! repeats the sender's last sequence number, handed to 6LoWPAN. A busy node
//! reads it only at its acknowledgement check, as above.

use crate::time::Nanos;

use super::{Frame, FrameKind, Grid, Pacing, Step};

/// nullrdc's radio turnaround before a data frame (Cooja: two 1 ms yields).
pub const TURNAROUND: Nanos = 2_000_000;
/// From the end of a received data frame to its acknowledgement.
pub const ACK_DELAY: Nanos = 1_000_000;
/// From the end of a sent data frame to the acknowledgement check.
pub const ACK_WAIT: Nanos = 2_000_000;
/// csma's time base: a second over nullrdc's channel-check rate of 8.
pub const TIME_BASE_MS: u64 = 125;
/// csma's largest backoff exponent.
pub const MAX_BACKOFF_EXPONENT: u8 = 3;

/// What nullrdc reports for an attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    Ok,
    NoAck,
    Collision,
}

impl Grid {
    /// csma `send_packet`: frame `fid` joins node `n`'s queue for its next
    /// hop. `false` if there is no room.
    pub(super) fn contiki_enqueue(
        &mut self,
        now: Nanos,
        n: usize,
        fid: u32,
        fragment: bool,
    ) -> bool {
        let to = self.frames[fid as usize].to;
        let need = if fragment { 2 } else { 1 };
        let node = &mut self.nodes[n];
        if self.cfg.queue - node.pool_used < need {
            return false;
        }
        let q = match node
            .queues
            .iter()
            .position(|q| q.active && q.neighbour == to)
        {
            Some(q) => q,
            None => match node.queues.iter().position(|q| !q.active) {
                Some(q) => {
                    let nq = &mut node.queues[q];
                    nq.active = true;
                    nq.neighbour = to;
                    nq.transmissions = 0;
                    nq.collisions = 0;
                    q
                }
                None => return false,
            },
        };
        node.queues[q].frames.push_back(fid);
        node.pool_used += 1;
        if node.queues[q].frames.len() == 1 {
            self.contiki_ready(now, n, q);
        }
        true
    }

    /// Queue `q`'s turn has come (its timer fired, or it just got a frame).
    pub(super) fn contiki_ready(&mut self, now: Nanos, n: usize, q: usize) {
        let node = &mut self.nodes[n];
        node.queues[q].token = node.queues[q].token.wrapping_add(1);
        if !node.ready.contains(&(q as u8)) {
            node.ready.push_back(q as u8);
        }
        if node.step == Step::Idle {
            self.contiki_next(now, n);
        }
    }

    /// While node `n` is free: reads a frame waiting in its radio, or starts
    /// the next attempt.
    fn contiki_next(&mut self, now: Nanos, n: usize) {
        while self.nodes[n].step == Step::Idle {
            if self.nodes[n].pending.is_some() {
                self.contiki_read(now, n);
                continue;
            }
            let Some(q) = self.nodes[n].ready.pop_front() else {
                return;
            };
            let q = usize::from(q);
            if self.nodes[n].queues[q].frames.is_empty() {
                continue;
            }
            if self.medium.locked(n) {
                self.nodes[n].record.deferrals += 1;
                self.contiki_sent(now, n, q, Status::Collision);
                continue;
            }
            self.step_at(n, Step::Turnaround(q as u8), now + TURNAROUND);
        }
    }

    /// A scheduled step of node `n` is due.
    pub(super) fn contiki_step(&mut self, now: Nanos, n: usize) {
        match self.nodes[n].step {
            Step::Turnaround(q) => {
                let q = usize::from(q);
                if self.medium.strong(n) {
                    self.nodes[n].step = Step::Idle;
                    self.nodes[n].record.deferrals += 1;
                    self.contiki_sent(now, n, q, Status::Collision);
                    self.contiki_next(now, n);
                } else {
                    let fid = *self.nodes[n].queues[q]
                        .frames
                        .front()
                        .expect("a queued frame");
                    self.nodes[n].step = Step::OnAir(q as u8);
                    self.transmit(now, n, fid);
                }
            }
            Step::AckWait(q) => self.contiki_ack_check(now, n, usize::from(q)),
            Step::Acking => {
                let f = self.nodes[n].acking.expect("a frame to acknowledge");
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
                node.step = Step::AckOnAir;
                self.transmit(now, n, aid);
            }
            s => unreachable!("contiki node {} stepped in {s:?}", n + 1),
        }
    }

    /// Node `n`'s frame `fid` ended.
    pub(super) fn contiki_tx_end(&mut self, now: Nanos, n: usize, fid: u32) {
        match self.nodes[n].step {
            Step::OnAir(q) => self.step_at(n, Step::AckWait(q), now + ACK_WAIT),
            Step::AckOnAir => {
                self.free_frame(fid);
                let f = self.nodes[n].acking.take().expect("the acknowledged frame");
                self.nodes[n].step = Step::Idle;
                if !self.duplicate(n, &f) {
                    self.sixlowpan_input(now, n, f);
                }
                self.contiki_next(now, n);
            }
            s => unreachable!("contiki node {} ended a frame in {s:?}", n + 1),
        }
    }

    /// Frame `f` arrived intact at node `r`'s radio.
    pub(super) fn contiki_received(&mut self, now: Nanos, r: usize, f: Frame) {
        self.nodes[r].pending = Some(f);
        if self.nodes[r].step == Step::Idle {
            self.contiki_next(now, r);
        }
    }

    /// A free node reads its radio buffer: a data frame for it is
    /// acknowledged 1 ms later; anything else is dropped.
    fn contiki_read(&mut self, now: Nanos, r: usize) {
        let f = self.nodes[r].pending.take().expect("a pending frame");
        if f.kind == FrameKind::Data && usize::from(f.to) == r {
            self.nodes[r].acking = Some(f);
            self.step_at(r, Step::Acking, now + ACK_DELAY);
        }
    }

    /// nullrdc's acknowledgement check, 2 ms after node `n`'s frame ended.
    fn contiki_ack_check(&mut self, now: Nanos, n: usize, q: usize) {
        let fid = *self.nodes[n].queues[q]
            .frames
            .front()
            .expect("a queued frame");
        let dsn = self.frames[fid as usize].dsn;
        let status = match self.nodes[n].pending.take() {
            Some(p) if p.kind == FrameKind::Ack && usize::from(p.to) == n && p.dsn == dsn => {
                Status::Ok
            }
            Some(_) => {
                self.nodes[n].record.deferrals += 1;
                Status::Collision
            }
            None => Status::NoAck,
        };
        self.nodes[n].step = Step::Idle;
        self.contiki_sent(now, n, q, status);
        self.contiki_next(now, n);
    }

    /// csma `packet_sent`: what follows an attempt on queue `q`.
    fn contiki_sent(&mut self, now: Nanos, n: usize, q: usize, status: Status) {
        let nq = &mut self.nodes[n].queues[q];
        match status {
            Status::Ok => {
                nq.transmissions += 1;
                self.contiki_done(now, n, q, true);
            }
            Status::NoAck => {
                nq.transmissions += 1;
                if u32::from(nq.transmissions) < self.cfg.transmissions {
                    self.contiki_backoff(now, n, q);
                } else {
                    self.contiki_done(now, n, q, false);
                }
            }
            Status::Collision => {
                nq.collisions = nq.collisions.saturating_add(1);
                self.contiki_backoff(now, n, q);
            }
        }
    }

    /// Queue `q` retries after 125 ms + U[0, 2^min(n,3) · 125 ms), whole ms.
    fn contiki_backoff(&mut self, now: Nanos, n: usize, q: usize) {
        let e = self.nodes[n].queues[q]
            .transmissions
            .min(MAX_BACKOFF_EXPONENT);
        let span = (1u32 << e) * TIME_BASE_MS as u32;
        let ms = TIME_BASE_MS + u64::from(self.rngs[n].int_in(0, span - 1));
        self.queue_timer(n, q, now + ms * 1_000_000);
    }

    fn queue_timer(&mut self, n: usize, q: usize, at: Nanos) {
        let nq = &mut self.nodes[n].queues[q];
        nq.token = nq.token.wrapping_add(1);
        self.agenda
            .push(at, super::Ev::Queue(n as u16, q as u8, nq.token));
    }

    /// The head frame of queue `q` is done: acknowledged, or dropped after
    /// its last transmission.
    fn contiki_done(&mut self, now: Nanos, n: usize, q: usize, acked: bool) {
        let node = &mut self.nodes[n];
        let fid = node.queues[q].frames.pop_front().expect("a queued frame");
        node.pool_used -= 1;
        // sicslowpan's last_tx_status is now this frame's (not an error)
        node.last_status_err = false;
        let nq = &mut node.queues[q];
        nq.transmissions = 0;
        nq.collisions = 0;
        let f: Frame = self.frames[fid as usize];
        self.free_frame(fid);
        if !acked {
            self.nodes[n].record.mac_drops += 1;
            self.fragment_lost(&f, crate::DropCause::MacRetries);
        }
        let nq = &mut self.nodes[n].queues[q];
        if nq.frames.is_empty() {
            nq.active = false;
            nq.token = nq.token.wrapping_add(1);
        } else if acked && self.cfg.pacing == Pacing::AfterDrop {
            // nullrdc's send_list goes straight on with the next frame
            nq.token = nq.token.wrapping_add(1);
            self.nodes[n].ready.push_front(q as u8);
        } else {
            self.queue_timer(n, q, now + TIME_BASE_MS * 1_000_000);
        }
    }
}
