//! The client's exchanges in one vector: the live ones first, then ended
//! ones kept for reuse (their request and send-time buffers keep their
//! capacity, so steady state allocates nothing). Room for one exchange is
//! inside the client itself: a stop-and-wait client's exchange lives in
//! the client's own record, not in an allocation of its own.
//!
//! The live exchanges are in exactly the order a `Vec` with `swap_remove`
//! would keep them, which is the order every search and every timer sweep
//! of the client follows. Keeping the ended ones behind them in the same
//! vector, instead of in a second one, saves a stop-and-wait client one
//! exchange-sized allocation (`docs/decisions/performance-choices.md`, "Ten million
//! clients").

use std::ops::{Deref, DerefMut};

use smallvec::SmallVec;

use super::exchange::Exchange;

/// Live exchanges (`..live`), then spares.
pub(crate) struct Slots<P> {
    all: SmallVec<[Exchange<P>; 1]>,
    live: usize,
}

impl<P> Slots<P> {
    /// No exchange yet; room for one inside the client.
    pub fn new() -> Self {
        Slots {
            all: SmallVec::new(),
            live: 0,
        }
    }

    /// The slot the next exchange takes: the first spare, or a new one
    /// made by `new`. It is not live until [`Slots::open_next`].
    pub fn next_slot(&mut self, new: impl FnOnce() -> Exchange<P>) -> &mut Exchange<P> {
        if self.all.len() == self.live {
            self.all.push(new());
        }
        &mut self.all[self.live]
    }

    /// Makes the slot of [`Slots::next_slot`] the last live exchange.
    pub fn open_next(&mut self) {
        assert!(self.live < self.all.len(), "no slot was prepared");
        self.live += 1;
    }

    /// Ends live exchange `i`: the last live exchange takes its place (as
    /// `Vec::swap_remove` does) and `i`'s becomes a spare.
    pub fn end(&mut self, i: usize) {
        assert!(i < self.live, "exchange {i} is not live");
        let last = self.live - 1;
        if i != last {
            self.all.swap(i, last);
        }
        self.live = last;
    }
}

impl<P> Deref for Slots<P> {
    type Target = [Exchange<P>];

    /// The live exchanges.
    fn deref(&self) -> &[Exchange<P>] {
        &self.all[..self.live]
    }
}

impl<P> DerefMut for Slots<P> {
    fn deref_mut(&mut self) -> &mut [Exchange<P>] {
        &mut self.all[..self.live]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::ExchangeId;

    fn open(s: &mut Slots<u32>, id: u64) {
        s.next_slot(|| Exchange::new(0)).id = ExchangeId(id);
        s.open_next();
    }

    fn ids(s: &Slots<u32>) -> Vec<u64> {
        s.iter().map(|e| e.id.0).collect()
    }

    #[test]
    fn live_exchanges_keep_the_order_of_a_vec_with_swap_remove() {
        let mut s = Slots::new();
        let mut v: Vec<u64> = Vec::new();
        for id in 1..=4 {
            open(&mut s, id);
            v.push(id);
        }
        s.end(1);
        v.swap_remove(1);
        assert_eq!(ids(&s), v);
        assert_eq!(ids(&s), [1, 4, 3]);
        // The ended exchange's slot is the next one taken, and the new
        // exchange goes last among the live.
        let next = s.next_slot(|| panic!("a spare is kept"));
        assert_eq!(next.id, ExchangeId(2));
        next.id = ExchangeId(5);
        s.open_next();
        v.push(5);
        assert_eq!(ids(&s), v);
        s.end(0);
        v.swap_remove(0);
        s.end(2);
        v.swap_remove(2);
        assert_eq!(ids(&s), v);
        assert_eq!(ids(&s), [5, 4]);
    }

    #[test]
    fn a_stop_and_wait_client_reuses_its_one_slot_inside_the_client() {
        let mut s = Slots::new();
        open(&mut s, 1);
        for id in 2..100 {
            s.end(0);
            assert!(s.is_empty());
            s.next_slot(|| panic!("the ended exchange is kept")).id = ExchangeId(id);
            s.open_next();
            assert_eq!(ids(&s), [id]);
        }
        assert!(!s.all.spilled(), "the one exchange stays inside the client");
    }

    #[test]
    fn a_slot_not_opened_stays_spare() {
        let mut s = Slots::new();
        s.next_slot(|| Exchange::new(0)).id = ExchangeId(1);
        assert!(s.is_empty(), "a refused request is not live");
        open(&mut s, 2);
        assert_eq!(ids(&s), [2]);
        assert_eq!(s.all.len(), 1, "its slot was taken again");
    }
}
