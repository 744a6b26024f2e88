//! The deduplication cache (RFC 7252 §4.5): Confirmable requests remembered by
//! (peer, Message ID) for EXCHANGE_LIFETIME, with the response that answered
//! them, so that a duplicate gets the same response again.
//!
//! Entries live in a ring in arrival order. With one lifetime for all
//! entries, arrival order is also expiry order, so both expiry and eviction
//! (when full) remove from the front. A hash map finds an entry by key through
//! its sequence number. The ring and the map grow to at most
//! `max_entries`; responses of removed entries are kept in a pool and reused,
//! so a cache in steady state does not allocate.

use std::collections::{HashMap, VecDeque};
use std::hash::Hash;

use foldhash::fast::RandomState;

use super::Response;
use crate::Nanos;

/// A remembered exchange.
#[derive(Debug)]
pub(crate) struct Entry {
    /// When the request was first received.
    pub at: Nanos,
    /// The token of the request first answered (a cached answer echoes it).
    pub token: [u8; 8],
    /// Its length.
    pub token_len: u8,
    /// The response the handler gave.
    pub response: Response,
}

impl Entry {
    pub fn token(&self) -> &[u8] {
        &self.token[..usize::from(self.token_len)]
    }
}

pub(crate) struct DedupCache<P> {
    lifetime: Nanos,
    max_entries: usize,
    /// Entries in arrival order; `ring[i]` has sequence number `front_seq + i`.
    ring: VecDeque<((P, u16), Entry)>,
    front_seq: u64,
    index: HashMap<(P, u16), u64, RandomState>,
    pool: Vec<Response>,
}

impl<P: Copy + Eq + Hash> DedupCache<P> {
    pub fn new(lifetime: Nanos, max_entries: usize) -> Self {
        // Reserve up front what a large run needs, so the hot path neither
        // rehashes nor grows; bigger caches grow (once) beyond this.
        let reserve = max_entries.min(1 << 16);
        DedupCache {
            lifetime,
            max_entries: max_entries.max(1),
            ring: VecDeque::with_capacity(reserve),
            front_seq: 0,
            index: HashMap::with_capacity_and_hasher(reserve, RandomState::default()),
            pool: Vec::new(),
        }
    }

    pub fn len(&self) -> usize {
        self.ring.len()
    }

    fn pop_front(&mut self) {
        if let Some((key, entry)) = self.ring.pop_front() {
            self.index.remove(&key);
            self.pool.push(entry.response);
            self.front_seq += 1;
        }
    }

    /// Forgets entries older than the lifetime at `now`.
    pub fn expire(&mut self, now: Nanos) -> u64 {
        let mut n = 0;
        while let Some((_, e)) = self.ring.front() {
            if now.saturating_sub(e.at) < self.lifetime {
                break;
            }
            self.pop_front();
            n += 1;
        }
        n
    }

    /// The live entry for `key` at `now`.
    pub fn get(&self, key: &(P, u16), now: Nanos) -> Option<&Entry> {
        let seq = *self.index.get(key)?;
        let (_, e) = &self.ring[(seq - self.front_seq) as usize];
        (now.saturating_sub(e.at) < self.lifetime).then_some(e)
    }

    /// A cleared response to fill, from the pool when one is free.
    pub fn take_response(&mut self) -> Response {
        let mut r = self.pool.pop().unwrap_or_default();
        r.clear();
        r
    }

    /// Returns a response that will not be cached to the pool.
    pub fn give_back(&mut self, r: Response) {
        self.pool.push(r);
    }

    /// Remembers `key` (which must not be live) answered by `response`;
    /// returns how many entries were evicted to make room.
    pub fn insert(&mut self, key: (P, u16), now: Nanos, token: &[u8], response: Response) -> u64 {
        self.expire(now);
        let mut evicted = 0;
        while self.ring.len() >= self.max_entries {
            self.pop_front();
            evicted += 1;
        }
        // A stale entry of the same key can only be an expired one at the
        // front; expire() removed it, so the key is free.
        debug_assert!(!self.index.contains_key(&key));
        let mut t = [0u8; 8];
        t[..token.len()].copy_from_slice(token);
        let seq = self.front_seq + self.ring.len() as u64;
        self.ring.push_back((
            key,
            Entry {
                at: now,
                token: t,
                token_len: token.len() as u8,
                response,
            },
        ));
        self.index.insert(key, seq);
        evicted
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resp(code: u8) -> Response {
        Response {
            code: crate::message::Code(code),
            ..Response::default()
        }
    }

    #[test]
    fn entries_expire_after_the_lifetime() {
        let mut c = DedupCache::<u32>::new(100, 10);
        c.insert((1, 7), 0, &[9], resp(0x45));
        assert_eq!(c.get(&(1, 7), 99).unwrap().token(), &[9]);
        assert!(
            c.get(&(1, 7), 100).is_none(),
            "expired at exactly the lifetime"
        );
        assert!(c.get(&(2, 7), 50).is_none(), "another peer");
        assert_eq!(c.expire(100), 1);
        assert_eq!(c.len(), 0);
        // Same key again later: a fresh entry.
        c.insert((1, 7), 150, &[], resp(0x44));
        assert_eq!(c.get(&(1, 7), 151).unwrap().response.code.0, 0x44);
    }

    #[test]
    fn the_oldest_is_evicted_when_full() {
        let mut c = DedupCache::<u32>::new(1_000, 3);
        for mid in 0..3 {
            assert_eq!(c.insert((1, mid), u64::from(mid), &[], resp(0x45)), 0);
        }
        assert_eq!(c.insert((1, 3), 3, &[], resp(0x45)), 1);
        assert!(c.get(&(1, 0), 4).is_none());
        for mid in 1..4 {
            assert!(c.get(&(1, mid), 4).is_some(), "{mid}");
        }
        assert_eq!(c.len(), 3);
    }

    #[test]
    fn responses_are_recycled() {
        let mut c = DedupCache::<u32>::new(10, 2);
        let mut r = c.take_response();
        r.payload.extend_from_slice(&[1; 100]);
        c.insert((1, 1), 0, &[], r);
        c.expire(10);
        let r = c.take_response();
        assert!(r.payload.is_empty() && r.payload.capacity() >= 100);
    }
}
