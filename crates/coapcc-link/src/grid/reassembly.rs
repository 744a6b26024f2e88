//! 6LoWPAN reassembly at a receiving node (spec `docs/spec/radio-spec.md` §1.5; Contiki 3.0
//! `sicslowpan.c`, `input()`), in two variants:
//!
//! - single context (Contiki): a context is discarded when it has timed out
//!   (checked lazily, when a frame arrives), when an unfragmented frame
//!   arrives, or when a first fragment from another sender arrives; a first
//!   fragment from the same sender with another tag, and any later fragment
//!   that does not belong to the context, are dropped;
//! - one context per (sender, tag): datagrams never disturb each other;
//!   contexts still time out.

use crate::time::Nanos;

use super::Frame;

/// A datagram being reassembled.
#[derive(Clone, Copy, Debug)]
struct Context {
    sender: u16,
    tag: u16,
    frags: u8,
    got: u8,
    deadline: Nanos,
    /// The first fragment (it names the datagram and its hop).
    first: Frame,
}

impl Context {
    fn complete(&self) -> bool {
        u32::from(self.got) == (1u32 << self.frags) - 1
    }
}

/// A node's reassembly contexts.
#[derive(Clone, Debug, Default)]
pub(super) struct Contexts {
    active: Vec<Context>,
    /// First fragments of the datagrams discarded by the last call, for the
    /// caller to drain.
    pub discarded: Vec<Frame>,
}

/// What became of a fragment (or an unfragmented frame).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Outcome {
    /// The frame was dropped.
    pub refused: bool,
    /// Its datagram is now whole.
    pub complete: bool,
}

const ACCEPTED: Outcome = Outcome {
    refused: false,
    complete: false,
};
const REFUSED: Outcome = Outcome {
    refused: true,
    complete: false,
};
const COMPLETE: Outcome = Outcome {
    refused: false,
    complete: true,
};

impl Contexts {
    fn discard(&mut self, i: usize) {
        let c = self.active.swap_remove(i);
        self.discarded.push(c.first);
    }

    fn start(&mut self, now: Nanos, timeout: Nanos, f: &Frame) {
        self.active.push(Context {
            sender: f.from,
            tag: f.tag,
            frags: f.frags,
            got: 1,
            deadline: now + timeout,
            first: *f,
        });
    }

    /// Adds fragment `f` to context `i`; whether the datagram is now whole.
    fn add(&mut self, i: usize, f: &Frame) -> Outcome {
        let c = &mut self.active[i];
        c.got |= 1 << f.frag;
        if c.complete() {
            self.active.swap_remove(i);
            COMPLETE
        } else {
            ACCEPTED
        }
    }

    /// Contiki's single context.
    pub fn single(&mut self, now: Nanos, timeout: Nanos, f: &Frame) -> Outcome {
        debug_assert!(self.active.len() <= 1);
        if self.active.first().is_some_and(|c| now >= c.deadline) {
            self.discard(0);
        }
        if f.frags == 1 {
            if !self.active.is_empty() {
                self.discard(0);
            }
            return COMPLETE;
        }
        match self.active.first().copied() {
            None if f.frag == 0 => {
                self.start(now, timeout, f);
                ACCEPTED
            }
            None => REFUSED,
            Some(c) if f.frag == 0 && c.sender != f.from => {
                self.discard(0);
                self.start(now, timeout, f);
                ACCEPTED
            }
            Some(c) if c.sender == f.from && c.tag == f.tag => {
                if c.got & (1 << f.frag) != 0 {
                    return ACCEPTED;
                }
                self.add(0, f)
            }
            Some(_) => REFUSED,
        }
    }

    /// One context per (sender, tag).
    pub fn per_sender(&mut self, now: Nanos, timeout: Nanos, f: &Frame) -> Outcome {
        let mut i = 0;
        while i < self.active.len() {
            if now >= self.active[i].deadline {
                self.discard(i);
            } else {
                i += 1;
            }
        }
        if f.frags == 1 {
            return COMPLETE;
        }
        let found = self
            .active
            .iter()
            .position(|c| c.sender == f.from && c.tag == f.tag);
        match found {
            Some(i) if self.active[i].got & (1 << f.frag) != 0 => ACCEPTED,
            Some(i) => self.add(i, f),
            None if f.frag == 0 => {
                self.start(now, timeout, f);
                ACCEPTED
            }
            None => REFUSED,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::FrameKind;
    use super::*;

    const TIMEOUT: Nanos = 8_000_000_000;

    fn frag(from: u16, tag: u16, frag: u8, frags: u8) -> Frame {
        Frame {
            kind: FrameKind::Data,
            from,
            to: 0,
            dsn: 0,
            len: 100,
            dg: u32::from(from) * 1000 + u32::from(tag),
            gen: 0,
            hop: 0,
            frag,
            frags,
            tag,
        }
    }

    #[test]
    fn two_fragments_in_order_complete() {
        let mut c = Contexts::default();
        assert_eq!(c.single(0, TIMEOUT, &frag(1, 7, 0, 2)), ACCEPTED);
        assert_eq!(c.single(1, TIMEOUT, &frag(1, 7, 1, 2)), COMPLETE);
        assert!(c.discarded.is_empty() && c.active.is_empty());
    }

    /// Contiki 3.0: a first fragment from another sender discards the
    /// datagram being reassembled and starts its own; the first datagram's
    /// second fragment is then refused.
    #[test]
    fn another_sender_preempts() {
        let mut c = Contexts::default();
        c.single(0, TIMEOUT, &frag(1, 7, 0, 2));
        assert_eq!(c.single(1, TIMEOUT, &frag(2, 9, 0, 2)), ACCEPTED);
        assert_eq!(c.discarded.len(), 1);
        assert_eq!(c.discarded[0].from, 1);
        assert_eq!(c.single(2, TIMEOUT, &frag(1, 7, 1, 2)), REFUSED);
        assert_eq!(c.single(3, TIMEOUT, &frag(2, 9, 1, 2)), COMPLETE);
    }

    /// An unfragmented frame discards the context and is delivered.
    #[test]
    fn an_unfragmented_frame_preempts() {
        let mut c = Contexts::default();
        c.single(0, TIMEOUT, &frag(1, 7, 0, 2));
        assert_eq!(c.single(1, TIMEOUT, &frag(3, 0, 0, 1)), COMPLETE);
        assert_eq!(c.discarded.len(), 1);
        assert_eq!(c.single(2, TIMEOUT, &frag(1, 7, 1, 2)), REFUSED);
    }

    /// The same sender's next datagram (a new tag, e.g. the CoAP
    /// retransmission after a lost FRAGN) is refused until the context times
    /// out 8 s after it started; the timeout is noticed when a frame arrives.
    #[test]
    fn the_same_sender_waits_for_the_timeout() {
        let mut c = Contexts::default();
        c.single(0, TIMEOUT, &frag(1, 7, 0, 2));
        assert_eq!(c.single(TIMEOUT - 1, TIMEOUT, &frag(1, 8, 0, 2)), REFUSED);
        assert!(c.discarded.is_empty());
        assert_eq!(c.single(TIMEOUT, TIMEOUT, &frag(1, 8, 0, 2)), ACCEPTED);
        assert_eq!(c.discarded.len(), 1, "the stale context was discarded");
    }

    #[test]
    fn per_sender_contexts_do_not_interfere() {
        let mut c = Contexts::default();
        c.per_sender(0, TIMEOUT, &frag(1, 7, 0, 2));
        c.per_sender(1, TIMEOUT, &frag(2, 9, 0, 2));
        assert_eq!(c.per_sender(2, TIMEOUT, &frag(3, 0, 0, 1)), COMPLETE);
        assert_eq!(c.per_sender(3, TIMEOUT, &frag(1, 7, 1, 2)), COMPLETE);
        assert_eq!(c.per_sender(4, TIMEOUT, &frag(2, 9, 1, 2)), COMPLETE);
        assert!(c.discarded.is_empty());
        assert_eq!(c.per_sender(5, TIMEOUT, &frag(2, 10, 1, 2)), REFUSED);
    }
}
