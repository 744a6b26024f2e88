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
//! exchange-sized allocation (`docs/decisions/performance.md`, "Ten million
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

    /// A spare exchange to reuse, if an ended one is kept.
    pub fn take_spare(&mut self) -> Option<Exchange<P>> {
        if self.all.len() > self.live {
            self.all.pop()
        } else {
            None
        }
    }

    /// Keeps `ex` as a spare (not live).
    pub fn keep_spare(&mut self, ex: Exchange<P>) {
        self.all.push(ex);
    }

    /// Makes `ex` the last live exchange.
    pub fn push(&mut self, ex: Exchange<P>) {
        self.all.push(ex);
        let last = self.all.len() - 1;
        self.all.swap(self.live, last);
        self.live += 1;
    }

    /// Ends live exchange `i`: the last live exchange takes its place (as
    /// `Vec::swap_remove` does) and `i`'s becomes a spare.
    pub fn end(&mut self, i: usize) {
        assert!(i < self.live, "exchange {i} is not live");
        self.all.swap(i, self.live - 1);
        self.live -= 1;
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

    fn ex(id: u64) -> Exchange<u32> {
        let mut e = Exchange::new(0);
        e.id = ExchangeId(id);
        e
    }

    fn ids(s: &Slots<u32>) -> Vec<u64> {
        s.iter().map(|e| e.id.0).collect()
    }

    #[test]
    fn live_exchanges_keep_the_order_of_a_vec_with_swap_remove() {
        let mut s = Slots::new();
        let mut v: Vec<u64> = Vec::new();
        for id in 1..=4 {
            s.push(ex(id));
            v.push(id);
        }
        s.end(1);
        v.swap_remove(1);
        assert_eq!(ids(&s), v);
        assert_eq!(ids(&s), [1, 4, 3]);
        // A spare is reused, and the new exchange goes last among the live.
        let mut e = s.take_spare().expect("exchange 2 was kept");
        assert_eq!(e.id, ExchangeId(2));
        e.id = ExchangeId(5);
        s.push(e);
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
    fn a_stop_and_wait_client_reuses_its_one_slot() {
        let mut s = Slots::new();
        assert!(s.take_spare().is_none());
        s.push(ex(1));
        for id in 2..100 {
            s.end(0);
            assert!(s.is_empty());
            let mut e = s.take_spare().expect("the ended exchange is kept");
            e.id = ExchangeId(id);
            s.push(e);
            assert_eq!(ids(&s), [id]);
        }
        assert!(!s.all.spilled(), "the one exchange stays inside the client");
    }

    #[test]
    fn a_refused_request_goes_back_to_the_spares() {
        let mut s = Slots::new();
        s.push(ex(1));
        s.end(0);
        let e = s.take_spare().unwrap();
        s.keep_spare(e);
        assert!(s.is_empty());
        assert!(s.take_spare().is_some());
    }
}
