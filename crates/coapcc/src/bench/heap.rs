//! The bare event loop that coapcc's per-event cost is held to: a binary heap
//! of `(time, event)` pairs and nothing else, run as the classic *hold*
//! model — pop the earliest event, push one new event a random delay later —
//! so that the number of pending events stays constant.
//!
//! It does no work per event besides the heap's own, so its cost per event
//! is what any discrete-event engine built on one binary heap pays at that
//! many pending events: the floor an engine with per-event work can reach
//! only by keeping fewer events in its heap (coapcc's lanes and calendar).
//! `coapcc bench --heap` prints it for 10³ to 10⁶ pending events, and
//! `coapcc bench --matrix` prints it beside each point at as many pending
//! events as the point has clients (each continuous client holds one
//! retransmission timer for its whole life).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Instant;

/// One measurement of the bare heap loop.
#[derive(Clone, Copy, Debug)]
pub struct HeapPoint {
    /// Events pending throughout.
    pub pending: usize,
    /// Events popped (and as many pushed) in the timed part.
    pub events: u64,
    /// Median wall time of the timed part (s).
    pub wall: f64,
}

impl HeapPoint {
    /// Events per second.
    pub fn rate(&self) -> f64 {
        self.events as f64 / self.wall
    }

    /// Nanoseconds per event.
    pub fn ns_per_event(&self) -> f64 {
        self.wall * 1e9 / self.events as f64
    }
}

/// The pending counts `coapcc bench --heap` measures.
pub const PENDING: [usize; 4] = [1_000, 10_000, 100_000, 1_000_000];

/// Events timed at `pending` events pending: ten rounds of the heap, and
/// at least two million, so a small heap is not timed in microseconds.
pub fn events_for(pending: usize) -> u64 {
    (10 * pending as u64).max(2_000_000)
}

/// A small deterministic generator (xorshift64*), so that the loop's own
/// randomness costs a few instructions, as a simulator's would.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

/// One timed hold loop: `pending` events, each due uniformly in the first
/// second; then `events` times the earliest is popped and pushed back
/// between 0.5 and 1.5 s later (nanosecond times, as coapcc's). Returns the
/// wall time of the loop and a checksum of what it popped (so that nothing
/// is optimised away).
fn hold(pending: usize, events: u64, seed: u64) -> (f64, u64) {
    let mut rng = XorShift(seed | 1);
    let mut heap: BinaryHeap<Reverse<(u64, u32)>> = BinaryHeap::with_capacity(pending);
    for id in 0..pending {
        heap.push(Reverse((rng.next() % 1_000_000_000, id as u32)));
    }
    let mut checksum = 0u64;
    let start = Instant::now();
    for _ in 0..events {
        let Reverse((at, id)) = heap.pop().expect("the heap holds `pending` events");
        checksum = checksum.wrapping_add(at ^ u64::from(id));
        let delay = 500_000_000 + rng.next() % 1_000_000_000;
        heap.push(Reverse((at + delay, id)));
    }
    (start.elapsed().as_secs_f64(), checksum)
}

/// The bare heap loop at `pending` events pending, `repeat` times (median
/// wall time).
pub fn measure(pending: usize, repeat: usize) -> HeapPoint {
    assert!(
        pending > 0,
        "the hold model needs at least one pending event"
    );
    let events = events_for(pending);
    let mut walls: Vec<f64> = (0..repeat.max(1))
        .map(|r| {
            let (wall, checksum) = hold(pending, events, r as u64 + 1);
            std::hint::black_box(checksum);
            wall
        })
        .collect();
    walls.sort_by(f64::total_cmp);
    HeapPoint {
        pending,
        events,
        wall: walls[walls.len() / 2],
    }
}

/// The measurements as one Markdown table.
pub fn markdown(points: &[HeapPoint], repeat: usize) -> String {
    let mut out = format!(
        "| pending events | events timed | wall (s, median of {}) | M events/s | ns/event |\n\
         | ---: | ---: | ---: | ---: | ---: |\n",
        repeat.max(1)
    );
    for p in points {
        out.push_str(&format!(
            "| {} | {} | {:.4} | {:.2} | {:.1} |\n",
            p.pending,
            p.events,
            p.wall,
            p.rate() / 1e6,
            p.ns_per_event()
        ));
    }
    out.push_str(
        "\nThe bare event loop: one binary heap of (time, event) pairs, the hold model \
         (pop the earliest, push it 0.5–1.5 s later), no work per event.\n",
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hold_model_pops_in_time_order_and_keeps_its_size() {
        // Reproduce the loop's steps by hand on a tiny heap and check that
        // each popped time is never earlier than the one before.
        let mut rng = XorShift(7);
        let mut heap: BinaryHeap<Reverse<(u64, u32)>> = BinaryHeap::new();
        for id in 0..5u32 {
            heap.push(Reverse((rng.next() % 1_000_000_000, id)));
        }
        let mut last = 0;
        for _ in 0..1000 {
            let Reverse((at, id)) = heap.pop().unwrap();
            assert!(at >= last, "popped {at} after {last}");
            last = at;
            heap.push(Reverse((at + 500_000_000 + rng.next() % 1_000_000_000, id)));
            assert_eq!(heap.len(), 5);
        }
        // 1000 holds of at least 0.5 s each over 5 events: the clock has
        // advanced by at least 1000 × 0.5 s / 5 = 100 s.
        assert!(last >= 100_000_000_000, "clock at {last} ns");
    }

    #[test]
    fn a_measurement_counts_the_events_it_timed() {
        let p = measure(100, 1);
        assert_eq!(p.pending, 100);
        assert_eq!(p.events, 2_000_000);
        assert!(p.wall > 0.0);
        assert!((p.rate() * p.wall - 2e6).abs() < 1.0);
    }

    #[test]
    fn events_timed_are_ten_rounds_or_two_million() {
        assert_eq!(events_for(1_000), 2_000_000);
        assert_eq!(events_for(1_000_000), 10_000_000);
    }

    #[test]
    fn the_table_has_one_row_per_pending_count() {
        let points = [HeapPoint {
            pending: 1000,
            events: 2_000_000,
            wall: 0.1,
        }];
        let t = markdown(&points, 3);
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[0].contains("median of 3"));
        assert_eq!(lines[2], "| 1000 | 2000000 | 0.1000 | 20.00 | 50.0 |");
    }
}
