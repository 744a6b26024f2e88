//! The event agenda: what happens next, in virtual time.
//!
//! Most events of a network model are scheduled at times that never decrease within
//! their kind (a packet leaving a FIFO link arrives after the one before it; the
//! router ↔ server path keeps order). Those go into **lanes**: plain FIFO queues,
//! O(1) each way. Events at arbitrary times (retransmission timers) go into a
//! calendar queue (the private `calendar` module), which pops them in the order of one
//! binary heap. `pop` takes the earliest head over the calendar and the lanes; ties
//! are broken by scheduling order, so the result is exactly that of one global
//! priority queue, and independent of how events are spread over lanes.

use std::cell::Cell;
use std::collections::VecDeque;

use crate::calendar::{Calendar, Entry, NEAR_MAX, SHIFT, SLOTS};
use crate::time::Nanos;

/// Where the earliest event is: (time, scheduling order, lane index or
/// [`HEAP`]).
type Head = (Nanos, u64, usize);

/// [`Head`]'s place for "in the calendar".
const HEAP: usize = usize::MAX;

/// Scheduling orders of [`Agenda::push_newest_first`] start above every order
/// [`Agenda::reserve`] hands out (2^62 events are more than any run has).
const NEWEST_FIRST_BASE: u64 = 1 << 62;

/// Ranks of [`Agenda::push_newest_first`] (a Linux timer wheel has 9 levels).
pub const NEWEST_FIRST_RANKS: u8 = 16;

/// Each rank's scheduling orders span 2^52 events.
const NEWEST_FIRST_RANK_SHIFT: u32 = 52;

/// The most events a lane or the calendar's current bucket has room for
/// before it first grows.
pub const INITIAL_ROOM: usize = 1024;

/// A priority queue of events with FIFO lanes for monotone event streams.
pub struct Agenda<E> {
    seq: u64,
    /// Events scheduled newest first so far ([`Agenda::push_newest_first`]).
    stacked: u64,
    timers: Calendar<E>,
    lanes: Vec<VecDeque<Entry<E>>>,
    /// The earliest event, when known (`None`: to be found again). Pushes keep
    /// it up to date; a pop forgets it. So a driver that asks when the next
    /// event is due and then takes it scans the lanes once.
    head: Cell<Option<Option<Head>>>,
}

impl<E: Copy> Agenda<E> {
    /// An agenda with `lanes` FIFO lanes. `capacity` is a hint of how many
    /// events may be pending: the lanes and the calendar's current bucket
    /// start with room for up to [`INITIAL_ROOM`] of them and grow on demand
    /// (a few times per run; a lane of a link being serialised holds one
    /// event, and memory touched is what a run needs, not its bound).
    pub fn new(lanes: usize, capacity: usize) -> Self {
        let room = capacity.min(INITIAL_ROOM);
        Agenda {
            seq: 0,
            stacked: 0,
            timers: Calendar::new(SHIFT, SLOTS, NEAR_MAX, room),
            lanes: (0..lanes).map(|_| VecDeque::with_capacity(room)).collect(),
            head: Cell::new(Some(None)),
        }
    }

    /// Keeps the cached head up to date after scheduling (at, seq, from).
    #[inline]
    fn note_push(&self, at: Nanos, seq: u64, from: usize) {
        if let Some(head) = self.head.get() {
            if head.is_none_or(|(t, s, _)| (at, seq) < (t, s)) {
                self.head.set(Some(Some((at, seq, from))));
            }
        }
    }

    /// Schedules `ev` at an arbitrary time.
    pub fn push(&mut self, at: Nanos, ev: E) {
        let seq = self.reserve();
        self.push_reserved(at, seq, ev);
    }

    /// Takes the next scheduling order without scheduling anything. An
    /// event given it later through [`Agenda::push_reserved`] takes the
    /// place among events at its time that a [`Agenda::push`] made now would
    /// have taken: a world can put off scheduling a timer (while an earlier
    /// one is pending) without changing the order of anything.
    pub fn reserve(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    /// Schedules `ev` at an arbitrary time with the scheduling order `seq`
    /// taken by [`Agenda::reserve`] (each at most once).
    pub fn push_reserved(&mut self, at: Nanos, seq: u64, ev: E) {
        debug_assert!(seq <= self.seq, "scheduling order {seq} was not reserved");
        self.push_timer(at, seq, ev);
    }

    /// Puts `ev` into the calendar with the scheduling order `seq`.
    fn push_timer(&mut self, at: Nanos, seq: u64, ev: E) {
        self.timers.push(Entry { at, seq, ev });
        self.note_push(at, seq, HEAP);
    }

    /// Schedules `ev` at an arbitrary time, to run among the events scheduled
    /// this way for the same time by `rank` (highest first) and, within a
    /// rank, newest first; after every event at that time scheduled another
    /// way. This is the order of a Linux timer wheel's bucket (`rank` its
    /// level): `docs/decisions/tcp-choices.md`, "Timers of one bucket, last armed
    /// first".
    pub fn push_newest_first(&mut self, at: Nanos, rank: u8, ev: E) {
        debug_assert!(rank < NEWEST_FIRST_RANKS, "rank {rank} out of range");
        self.stacked += 1;
        debug_assert!(self.stacked < 1 << NEWEST_FIRST_RANK_SHIFT);
        let seq = NEWEST_FIRST_BASE
            + (u64::from(NEWEST_FIRST_RANKS - 1 - rank) << NEWEST_FIRST_RANK_SHIFT)
            - self.stacked;
        self.push_timer(at, seq, ev);
    }

    /// Schedules `ev` in `lane`, whose times must not decrease.
    pub fn push_lane(&mut self, lane: usize, at: Nanos, ev: E) {
        self.seq += 1;
        let q = &mut self.lanes[lane];
        debug_assert!(
            q.back().is_none_or(|b| b.at <= at),
            "lane {lane} must be scheduled in time order"
        );
        q.push_back(Entry {
            at,
            seq: self.seq,
            ev,
        });
        self.note_push(at, self.seq, lane);
    }

    /// The earliest event's (time, scheduling order) and where it is.
    #[inline]
    fn earliest(&self) -> Option<Head> {
        if let Some(head) = self.head.get() {
            return head;
        }
        let head = self.scan();
        self.head.set(Some(head));
        head
    }

    /// Finds the earliest event over the heap and the lanes.
    fn scan(&self) -> Option<Head> {
        let mut best: Option<(Nanos, u64)> = self.timers.peek().map(|e| (e.at, e.seq));
        let mut from = HEAP;
        for (i, q) in self.lanes.iter().enumerate() {
            if let Some(e) = q.front() {
                if best.is_none_or(|b| (e.at, e.seq) < b) {
                    best = Some((e.at, e.seq));
                    from = i;
                }
            }
        }
        best.map(|(at, seq)| (at, seq, from))
    }

    /// When the earliest event is due.
    #[inline]
    pub fn peek_time(&self) -> Option<Nanos> {
        self.earliest().map(|(at, _, _)| at)
    }

    /// Removes and returns the earliest event.
    pub fn pop(&mut self) -> Option<(Nanos, E)> {
        self.pop_due(Nanos::MAX)
    }

    /// Removes and returns the earliest event if it is due by `until`.
    #[inline]
    pub fn pop_due(&mut self, until: Nanos) -> Option<(Nanos, E)> {
        let (at, _, from) = self.earliest()?;
        if at > until {
            return None;
        }
        self.head.set(None);
        let e = if from == HEAP {
            self.timers.pop().expect("peeked")
        } else {
            self.lanes[from].pop_front().expect("peeked")
        };
        Some((e.at, e.ev))
    }

    /// How many events are pending.
    pub fn len(&self) -> usize {
        self.timers.len() + self.lanes.iter().map(VecDeque::len).sum::<usize>()
    }

    /// Whether no event is pending.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every pending event, in no particular order.
    pub fn pending(&self) -> impl Iterator<Item = &E> {
        self.timers
            .iter()
            .map(|e| &e.ev)
            .chain(self.lanes.iter().flat_map(|q| q.iter().map(|e| &e.ev)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Whatever the split over lanes, events come out in (time, scheduling
        /// order), exactly like one global priority queue.
        #[test]
        fn equals_a_global_priority_queue(ops in prop::collection::vec((0u64..50, 0usize..4), 1..300)) {
            let mut agenda = Agenda::new(3, 8);
            let mut reference = Vec::new();
            let mut lane_last = [0u64; 3];
            for (i, &(t, lane)) in ops.iter().enumerate() {
                if lane < 3 {
                    let at = lane_last[lane] + t;
                    lane_last[lane] = at;
                    agenda.push_lane(lane, at, i);
                    reference.push((at, i));
                } else {
                    agenda.push(t * 3, i);
                    reference.push((t * 3, i));
                }
            }
            reference.sort();
            let mut got = Vec::new();
            while let Some(x) = agenda.pop() {
                got.push(x);
            }
            prop_assert_eq!(got, reference);
        }
    }

    #[test]
    fn a_reserved_place_orders_as_a_push_made_then() {
        // Events 1..=3 at time 10; the second one's place is reserved before
        // the third is pushed, and it is scheduled only afterwards.
        let mut a = Agenda::new(0, 4);
        a.push(10, 1);
        let seq = a.reserve();
        a.push(10, 3);
        a.push(5, 0);
        a.push_reserved(10, seq, 2);
        let got: Vec<_> = std::iter::from_fn(|| a.pop()).collect();
        assert_eq!(got, [(5, 0), (10, 1), (10, 2), (10, 3)]);
    }

    #[test]
    fn newest_first_by_rank_after_the_others() {
        // At time 10: two plain events (1 before 4, as pushed), then the
        // rank-2 events newest first (6, 3), then the rank-0 ones (5, 2);
        // the lane's event at 10 is a plain one (pushed after 1).
        let mut a = Agenda::new(1, 8);
        a.push(10, 1);
        a.push_newest_first(10, 0, 2);
        a.push_newest_first(10, 2, 3);
        a.push_lane(0, 10, 4);
        a.push_newest_first(10, 0, 5);
        a.push_newest_first(10, 2, 6);
        a.push_newest_first(9, 0, 0);
        a.push(11, 7);
        let got: Vec<_> = std::iter::from_fn(|| a.pop()).collect();
        assert_eq!(
            got,
            [
                (9, 0),
                (10, 1),
                (10, 4),
                (10, 6),
                (10, 3),
                (10, 5),
                (10, 2),
                (11, 7)
            ]
        );
    }

    #[test]
    #[should_panic(expected = "time order")]
    fn lanes_refuse_going_back_in_time() {
        let mut a = Agenda::new(1, 1);
        a.push_lane(0, 5, ());
        a.push_lane(0, 4, ());
    }
}
