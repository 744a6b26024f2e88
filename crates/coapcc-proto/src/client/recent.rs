//! The last acknowledged Confirmable exchanges, by (peer, Message ID), so a
//! duplicate of their response is recognised (RFC 7252 §4.5 seen from the
//! client: a retransmission's echo arriving after the exchange ended).
//!
//! A client numbers its requests with consecutive Message IDs (§4.4), so the
//! exchanges it sees acknowledged are mostly consecutive too: the window is
//! kept as **runs** `(peer, first Message ID, length)` rather than one entry
//! per exchange. A stop-and-wait client whose exchanges all succeed holds one
//! run whatever the window, where a list of pairs would hold the whole
//! window (issue 12: memory per client at a million clients). The answers are
//! exactly those of a list of the last [`RecentAcks::WINDOW`] pairs.

use std::collections::VecDeque;

/// A run of acknowledged exchanges with one peer and consecutive Message IDs.
#[derive(Clone, Copy, Debug)]
struct Run<P> {
    peer: P,
    /// Message ID of the run's oldest exchange.
    first: u16,
    /// Exchanges in the run (at most the window).
    len: u16,
}

/// The last [`RecentAcks::WINDOW`] acknowledged (peer, Message ID) pairs.
#[derive(Debug)]
pub(crate) struct RecentAcks<P> {
    /// Oldest first.
    runs: VecDeque<Run<P>>,
    /// Pairs in the window (sum of the runs' lengths).
    total: usize,
}

impl<P: Copy + Eq> RecentAcks<P> {
    /// How many acknowledged exchanges are remembered.
    pub const WINDOW: usize = 256;

    pub fn new() -> Self {
        RecentAcks {
            runs: VecDeque::new(),
            total: 0,
        }
    }

    /// Remembers that `(peer, mid)` was acknowledged; the oldest pair leaves
    /// the window when it is full.
    pub fn push(&mut self, peer: P, mid: u16) {
        match self.runs.back_mut() {
            Some(r) if r.peer == peer && r.first.wrapping_add(r.len) == mid => r.len += 1,
            _ => self.runs.push_back(Run {
                peer,
                first: mid,
                len: 1,
            }),
        }
        self.total += 1;
        if self.total > Self::WINDOW {
            let oldest = self.runs.front_mut().expect("the window is not empty");
            oldest.first = oldest.first.wrapping_add(1);
            oldest.len -= 1;
            if oldest.len == 0 {
                self.runs.pop_front();
            }
            self.total -= 1;
        }
    }

    /// Whether `(peer, mid)` is in the window.
    pub fn contains(&self, peer: P, mid: u16) -> bool {
        self.runs
            .iter()
            .any(|r| r.peer == peer && mid.wrapping_sub(r.first) < r.len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn consecutive_ids_make_one_run_and_the_window_slides() {
        let mut r = RecentAcks::new();
        for mid in 65_500u16..=65_535 {
            r.push(1u32, mid);
        }
        for mid in 0u16..300 {
            r.push(1, mid);
        }
        assert_eq!(r.runs.len(), 1, "one run across the Message ID wrap");
        // 336 pushed, the last 256 kept: Message IDs 44..=299.
        assert!(!r.contains(1, 43) && r.contains(1, 44) && r.contains(1, 299));
        assert!(!r.contains(1, 300) && !r.contains(1, 65_535) && !r.contains(2, 100));
    }

    proptest! {
        /// The runs answer exactly as a list of the last 256 pairs.
        #[test]
        fn equals_a_window_of_pairs(
            ops in prop::collection::vec((0u32..3, 0u16..8, any::<bool>()), 1..700),
        ) {
            let mut r = RecentAcks::new();
            let mut list: VecDeque<(u32, u16)> = VecDeque::new();
            let mut mid = 65_000u16;
            for &(peer, step, probe) in &ops {
                if probe {
                    let q = mid.wrapping_sub(step * 40);
                    prop_assert_eq!(r.contains(peer, q), list.contains(&(peer, q)));
                } else {
                    // Mostly consecutive, sometimes a gap or a repeat.
                    mid = mid.wrapping_add(if step < 5 { 1 } else { step - 5 });
                    r.push(peer % 2, mid);
                    list.push_back((peer % 2, mid));
                    if list.len() > RecentAcks::<u32>::WINDOW {
                        list.pop_front();
                    }
                }
            }
            for (p, m) in [(0u32, mid), (1, mid), (0, mid.wrapping_sub(255))] {
                prop_assert_eq!(r.contains(p, m), list.contains(&(p, m)));
            }
        }
    }
}
