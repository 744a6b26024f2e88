//! A calendar queue for events at arbitrary times: the agenda's store for
//! timers (retransmission deadlines, MAC back-offs).
//!
//! A plain binary heap of a million pending timers spends its time in cache
//! misses: each pop walks ~20 levels of a tree far larger than the caches.
//! Timers are instead sorted into **buckets** of virtual time (`2^shift` ns
//! each) on a wheel of `slots` buckets:
//!
//! - `near`: a binary heap of the events of the current bucket and earlier —
//!   small, so it stays in cache; every pop comes from here;
//! - `wheel`: unsorted per-bucket lists for the next `slots − 1` buckets;
//!   pushing is an append. The lists are chains of fixed-size blocks from one
//!   shared arena, so the memory the wheel holds follows the events pending,
//!   not the most each bucket ever held;
//! - `far`: a binary heap of events beyond the wheel (long back-offs).
//!
//! While `near` is small (under `near_max` events) it takes every event: a
//! heap that fits the cache beats the wheel, so small runs are one binary
//! heap. When the current bucket is done, the earliest pending bucket becomes
//! current and its events move into `near` (with those of `far` whose bucket
//! has come); an occupancy bitmap finds it without stepping through empty
//! buckets. Events leave `near` in (time, scheduling
//! order), and an event only enters `near` once every earlier event is there,
//! so the order is exactly that of one binary heap over all events, whatever
//! the geometry: the geometry changes speed and memory, never results
//! (`docs/decisions/performance-choices.md`, "Scale: the engine at a million clients",
//! "The agenda's timers: a calendar queue").
//!
//! Freed blocks are reused, so in steady state nothing is allocated.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use crate::time::Nanos;

/// An event with its time and scheduling order (the tie-break).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Entry<E> {
    pub at: Nanos,
    pub seq: u64,
    pub ev: E,
}

impl<E> Entry<E> {
    #[inline]
    fn key(&self) -> (Nanos, u64) {
        (self.at, self.seq)
    }
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, o: &Self) -> bool {
        self.key() == o.key()
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<E> Ord for Entry<E> {
    #[inline]
    fn cmp(&self, o: &Self) -> Ordering {
        self.key().cmp(&o.key())
    }
}

/// Bucket width of the agenda's calendar: 2^24 ns ≈ 16.8 ms.
pub(crate) const SHIFT: u32 = 24;
/// Buckets on the wheel: 1024, so ≈ 17 s ahead of the current bucket (a
/// CoAP retransmission timer is 2–3 s, backed off up to a minute).
pub(crate) const SLOTS: usize = 1024;
/// Up to 4096 pending events (96 KB of entries, within a core's L2 cache)
/// the calendar is one binary heap: measured, the heap is faster there.
pub(crate) const NEAR_MAX: usize = 4096;

/// The calendar queue (see the module docs).
pub(crate) struct Calendar<E> {
    shift: u32,
    /// Events of bucket `cur` and earlier.
    near: BinaryHeap<Reverse<Entry<E>>>,
    /// Bucket `b` (`cur < b < cur + slots`) lives in `wheel[b % slots]`.
    wheel: Vec<Chain>,
    /// The blocks of the wheel's chains.
    blocks: Blocks<E>,
    /// Events on the wheel.
    in_wheel: usize,
    /// Which wheel slots hold events, one bit each.
    occupied: Vec<u64>,
    /// Up to this many events, `near` takes any event (a small heap beats
    /// the wheel); beyond, only those of bucket `cur` and earlier.
    near_max: usize,
    /// Events of bucket `cur + slots` and later (when they were pushed).
    far: BinaryHeap<Reverse<Entry<E>>>,
    /// The current bucket. Invariant: `near` is empty only if everything is.
    cur: u64,
}

impl<E: Copy> Calendar<E> {
    /// A calendar of `slots` buckets of `2^shift` ns whose near heap takes any
    /// event while it holds fewer than `near_max`, with room for `capacity`
    /// events in it.
    pub fn new(shift: u32, slots: usize, near_max: usize, capacity: usize) -> Self {
        assert!(slots >= 2 && shift < 64, "a calendar needs two buckets");
        Calendar {
            shift,
            near: BinaryHeap::with_capacity(capacity),
            wheel: vec![Chain::EMPTY; slots],
            blocks: Blocks::default(),
            in_wheel: 0,
            occupied: vec![0; slots.div_ceil(64)],
            near_max,
            far: BinaryHeap::new(),
            cur: 0,
        }
    }

    #[inline]
    fn bucket(&self, at: Nanos) -> u64 {
        at >> self.shift
    }

    /// Adds an event.
    #[inline]
    pub fn push(&mut self, e: Entry<E>) {
        let b = self.bucket(e.at);
        if self.near.is_empty() {
            // Empty (by the invariant): this event's bucket becomes current.
            debug_assert!(self.in_wheel == 0 && self.far.is_empty());
            self.cur = b;
            self.near.push(Reverse(e));
        } else if b <= self.cur || self.near.len() < self.near_max {
            // Its bucket has come, or the heap is still small enough to be
            // the fastest place for it.
            self.near.push(Reverse(e));
        } else if b - self.cur < self.wheel.len() as u64 {
            let slot = (b % self.wheel.len() as u64) as usize;
            self.blocks.append(&mut self.wheel[slot], e);
            self.occupied[slot / 64] |= 1 << (slot % 64);
            self.in_wheel += 1;
        } else {
            self.far.push(Reverse(e));
        }
    }

    /// The earliest event.
    #[inline]
    pub fn peek(&self) -> Option<&Entry<E>> {
        self.near.peek().map(|Reverse(e)| e)
    }

    /// Removes the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<Entry<E>> {
        let Reverse(e) = self.near.pop()?;
        if self
            .near
            .peek()
            .is_none_or(|Reverse(n)| self.bucket(n.at) > self.cur)
        {
            self.advance();
        }
        Some(e)
    }

    /// The current bucket is done: makes the earliest bucket pending current
    /// and moves its events into `near` (invariant: `near` holds every event
    /// of bucket `cur` and earlier, and at least one if any is pending).
    fn advance(&mut self) {
        let near = self.near.peek().map(|Reverse(e)| self.bucket(e.at));
        let far = self.far.peek().map(|Reverse(e)| self.bucket(e.at));
        let wheel = self.next_occupied();
        let Some(next) = [near, far, wheel].into_iter().flatten().min() else {
            return;
        };
        self.cur = next;
        let slot = (next % self.wheel.len() as u64) as usize;
        if wheel == Some(next) {
            self.in_wheel -= self.blocks.drain(&mut self.wheel[slot], &mut self.near);
            self.occupied[slot / 64] &= !(1 << (slot % 64));
        }
        while let Some(Reverse(e)) = self.far.peek() {
            if self.bucket(e.at) > next {
                break;
            }
            let Reverse(e) = self.far.pop().expect("peeked");
            self.near.push(Reverse(e));
        }
    }

    /// The earliest bucket on the wheel (all lie in `cur + 1 .. cur + slots`).
    fn next_occupied(&self) -> Option<u64> {
        if self.in_wheel == 0 {
            return None;
        }
        let slots = self.wheel.len();
        let start = ((self.cur + 1) % slots as u64) as usize;
        // Slots from `start` to the end, then from 0: distance 1, 2, … from cur.
        let first = |from: usize, to: usize| -> Option<usize> {
            let mut i = from;
            while i < to {
                let word = self.occupied[i / 64] >> (i % 64);
                if word != 0 {
                    let j = i + word.trailing_zeros() as usize;
                    return (j < to).then_some(j);
                }
                i = (i / 64 + 1) * 64;
            }
            None
        };
        let j = first(start, slots).or_else(|| first(0, start))?;
        let dist = if j >= start {
            j - start
        } else {
            slots - start + j
        };
        Some(self.cur + 1 + dist as u64)
    }

    /// How many events are pending.
    pub fn len(&self) -> usize {
        self.near.len() + self.in_wheel + self.far.len()
    }

    /// Every pending event, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = &Entry<E>> {
        self.near
            .iter()
            .map(|Reverse(e)| e)
            .chain(self.wheel.iter().flat_map(|c| self.blocks.iter(c)))
            .chain(self.far.iter().map(|Reverse(e)| e))
    }
}

/// Entries per arena block.
const BLOCK: usize = 32;
/// "No block".
const NONE: u32 = u32::MAX;

/// A bucket's list: a chain of blocks, all full but the last.
#[derive(Clone, Copy)]
struct Chain {
    head: u32,
    tail: u32,
    /// Entries in the tail block.
    tail_len: u32,
}

impl Chain {
    const EMPTY: Chain = Chain {
        head: NONE,
        tail: NONE,
        tail_len: 0,
    };
}

/// The arena of blocks: block `i` is `entries[i * BLOCK..][..BLOCK]`,
/// followed by block `next[i]`.
struct Blocks<E> {
    entries: Vec<Entry<E>>,
    next: Vec<u32>,
    free: Vec<u32>,
}

impl<E> Default for Blocks<E> {
    fn default() -> Self {
        Blocks {
            entries: Vec::new(),
            next: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl<E: Copy> Blocks<E> {
    /// Appends `e` to `chain`.
    #[inline]
    fn append(&mut self, chain: &mut Chain, e: Entry<E>) {
        if chain.tail == NONE || chain.tail_len as usize == BLOCK {
            let b = match self.free.pop() {
                Some(b) => b,
                None => {
                    // A new block, its unused places filled with `e`.
                    let b = self.next.len() as u32;
                    self.entries.extend(std::iter::repeat_n(e, BLOCK));
                    self.next.push(NONE);
                    b
                }
            };
            self.next[b as usize] = NONE;
            if chain.tail == NONE {
                chain.head = b;
            } else {
                self.next[chain.tail as usize] = b;
            }
            chain.tail = b;
            chain.tail_len = 0;
        }
        self.entries[chain.tail as usize * BLOCK + chain.tail_len as usize] = e;
        chain.tail_len += 1;
    }

    /// Moves `chain`'s entries into `heap` and frees its blocks; returns how
    /// many moved.
    fn drain(&mut self, chain: &mut Chain, heap: &mut BinaryHeap<Reverse<Entry<E>>>) -> usize {
        let mut moved = 0;
        let mut b = chain.head;
        while b != NONE {
            let len = if b == chain.tail {
                chain.tail_len as usize
            } else {
                BLOCK
            };
            let at = b as usize * BLOCK;
            heap.extend(self.entries[at..at + len].iter().copied().map(Reverse));
            moved += len;
            self.free.push(b);
            b = self.next[b as usize];
        }
        *chain = Chain::EMPTY;
        moved
    }

    /// The entries of `chain`.
    fn iter<'a>(&'a self, chain: &Chain) -> impl Iterator<Item = &'a Entry<E>> + 'a {
        let (head, tail, tail_len) = (chain.head, chain.tail, chain.tail_len as usize);
        std::iter::successors((head != NONE).then_some(head), move |&b| {
            let n = self.next[b as usize];
            (b != tail && n != NONE).then_some(n)
        })
        .flat_map(move |b| {
            let len = if b == tail { tail_len } else { BLOCK };
            let at = b as usize * BLOCK;
            &self.entries[at..at + len]
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn entry(at: Nanos, seq: u64) -> Entry<u64> {
        Entry { at, seq, ev: seq }
    }

    #[test]
    fn hand_checked_order_across_near_wheel_and_far() {
        // Buckets of 4 ns, 4 slots: the wheel covers buckets cur+1..cur+3.
        let mut c = Calendar::new(2, 4, 0, 4);
        c.push(entry(1, 1)); // bucket 0: current
        c.push(entry(100, 2)); // bucket 25: far
        c.push(entry(9, 3)); // bucket 2: wheel
        c.push(entry(9, 4)); // same time, later: after seq 3
        c.push(entry(2, 5)); // bucket 0: near
        assert_eq!(c.len(), 5);
        assert_eq!(c.peek().map(|e| e.seq), Some(1));
        let got: Vec<_> = std::iter::from_fn(|| c.pop().map(|e| (e.at, e.seq))).collect();
        assert_eq!(got, [(1, 1), (2, 5), (9, 3), (9, 4), (100, 2)]);
        assert_eq!(c.len(), 0);
        // Empty again: a push anywhere becomes the current bucket.
        c.push(entry(7, 6));
        assert_eq!(c.pop().map(|e| e.seq), Some(6));
        assert!(c.pop().is_none());
    }

    #[test]
    fn a_bucket_spanning_several_blocks_and_reused_blocks() {
        let mut c = Calendar::new(4, 4, 0, 4);
        c.push(entry(0, 0));
        // 100 events in bucket 1 (three blocks and a part), in reverse time.
        for i in 0..100 {
            c.push(entry(31 - i % 16, 1 + i));
        }
        assert_eq!(c.iter().count(), 101);
        assert_eq!(c.blocks.next.len(), 4);
        let mut want: Vec<_> = (0..100).map(|i| (31 - i % 16, 1 + i)).collect();
        want.insert(0, (0, 0));
        want.sort();
        let got: Vec<_> = std::iter::from_fn(|| c.pop().map(|e| (e.at, e.seq))).collect();
        assert_eq!(got, want);
        // The blocks are free again and serve the next bucket.
        c.push(entry(40, 200));
        for i in 0..40 {
            c.push(entry(50, 201 + i));
        }
        assert_eq!(c.blocks.next.len(), 4, "no new block");
        assert_eq!(c.pop().map(|e| e.seq), Some(200));
        assert_eq!(c.pop().map(|e| e.seq), Some(201));
    }

    proptest! {
        /// Interleaved pushes (never before the last pop, as in a simulation)
        /// and pops come out exactly as from one binary heap, for any geometry.
        #[test]
        fn equals_a_binary_heap(
            shift in 0u32..6,
            slots in 2usize..130,
            near_max in 0usize..6,
            ops in prop::collection::vec((0u64..400, any::<bool>()), 1..400),
        ) {
            let mut c = Calendar::new(shift, slots, near_max, 4);
            let mut reference = BinaryHeap::new();
            let mut now = 0;
            for (seq, &(dt, pop)) in ops.iter().enumerate() {
                if pop {
                    let got = c.pop().map(|e| (e.at, e.seq));
                    let want = reference.pop().map(|Reverse(k)| k);
                    prop_assert_eq!(got, want);
                    if let Some((at, _)) = got {
                        now = at;
                    }
                } else {
                    // Mostly near, sometimes far beyond the wheel.
                    let at = now + if dt > 350 { dt * 50 } else { dt };
                    c.push(entry(at, seq as u64));
                    reference.push(Reverse((at, seq as u64)));
                }
                prop_assert_eq!(c.len(), reference.len());
                prop_assert_eq!(c.peek().map(|e| (e.at, e.seq)), reference.peek().map(|r| r.0));
            }
            while let Some(Reverse(want)) = reference.pop() {
                prop_assert_eq!(c.pop().map(|e| (e.at, e.seq)), Some(want));
            }
            prop_assert!(c.pop().is_none());
        }
    }
}
