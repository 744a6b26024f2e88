//! The event agenda: what happens next, in virtual time.
//!
//! Most events of the testbed are scheduled at times that never decrease within
//! their kind (a packet leaving a FIFO link arrives after the one before it; the
//! router ↔ server path keeps order). Those go into **lanes**: plain FIFO queues,
//! O(1) each way. Events at arbitrary times (retransmission timers) go into a
//! binary heap. `pop` takes the earliest head over the heap and the lanes; ties
//! are broken by scheduling order, so the result is exactly that of one global
//! priority queue, and independent of how events are spread over lanes.

use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, VecDeque};

use crate::time::Nanos;

#[derive(Clone, Copy, Debug)]
struct Entry<E> {
    at: Nanos,
    seq: u64,
    ev: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, o: &Self) -> bool {
        (self.at, self.seq) == (o.at, o.seq)
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<E> Ord for Entry<E> {
    fn cmp(&self, o: &Self) -> Ordering {
        (self.at, self.seq).cmp(&(o.at, o.seq))
    }
}

/// A priority queue of events with FIFO lanes for monotone event streams.
pub struct Agenda<E> {
    seq: u64,
    heap: BinaryHeap<Reverse<Entry<E>>>,
    lanes: Vec<VecDeque<Entry<E>>>,
}

impl<E: Copy> Agenda<E> {
    /// An agenda with `lanes` FIFO lanes and room for `capacity` events.
    pub fn new(lanes: usize, capacity: usize) -> Self {
        Agenda {
            seq: 0,
            heap: BinaryHeap::with_capacity(capacity),
            lanes: (0..lanes)
                .map(|_| VecDeque::with_capacity(capacity))
                .collect(),
        }
    }

    /// Schedules `ev` at an arbitrary time.
    pub fn push(&mut self, at: Nanos, ev: E) {
        self.seq += 1;
        self.heap.push(Reverse(Entry {
            at,
            seq: self.seq,
            ev,
        }));
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
    }

    /// Removes and returns the earliest event.
    pub fn pop(&mut self) -> Option<(Nanos, E)> {
        let mut best: Option<(Nanos, u64)> = self.heap.peek().map(|Reverse(e)| (e.at, e.seq));
        let mut from = usize::MAX;
        for (i, q) in self.lanes.iter().enumerate() {
            if let Some(e) = q.front() {
                if best.is_none_or(|b| (e.at, e.seq) < b) {
                    best = Some((e.at, e.seq));
                    from = i;
                }
            }
        }
        best?;
        let e = if from == usize::MAX {
            self.heap.pop().expect("peeked").0
        } else {
            self.lanes[from].pop_front().expect("peeked")
        };
        Some((e.at, e.ev))
    }

    /// Every pending event, in no particular order.
    pub fn pending(&self) -> impl Iterator<Item = &E> {
        self.heap
            .iter()
            .map(|Reverse(e)| &e.ev)
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
    #[should_panic(expected = "time order")]
    fn lanes_refuse_going_back_in_time() {
        let mut a = Agenda::new(1, 1);
        a.push_lane(0, 5, ());
        a.push_lane(0, 4, ());
    }
}
