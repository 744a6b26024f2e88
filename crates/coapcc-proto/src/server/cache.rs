//! The deduplication cache (RFC 7252 §4.5): Confirmable requests remembered by
//! (peer, Message ID) for EXCHANGE_LIFETIME, with the response that answered
//! them, so that a duplicate gets the same response again.
//!
//! Entries live in a ring in arrival order. With one lifetime for all
//! entries, arrival order is also expiry order, so both expiry and eviction
//! (when full) remove from the front. An index ([`super::index`]) finds an
//! entry by key through its sequence number. The ring grows to at most
//! `max_entries`; responses of removed entries are kept in a pool and reused,
//! so a cache in steady state does not allocate.
//!
//! An entry holds its response behind a shared pointer: the server gives
//! consecutive entries answered with the same response (the testbed's fixed
//! payload: every one) one copy, so a new entry neither allocates nor copies
//! a payload (`docs/decisions/performance-choices.md`, "Work per event").

use std::collections::VecDeque;
use std::sync::Arc;

use super::index::DedupIndex;
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
    /// The response the handler gave, possibly shared with other entries.
    pub response: Arc<Response>,
}

impl Entry {
    pub fn token(&self) -> &[u8] {
        &self.token[..usize::from(self.token_len)]
    }
}

/// A ring element: the key, the index's link, the entry.
struct Slot<P> {
    key: (P, u16),
    link: u32,
    entry: Entry,
}

pub(crate) struct DedupCache<P, I> {
    lifetime: Nanos,
    max_entries: usize,
    /// Entries in arrival order; `ring[i]` has sequence number `front_seq + i`
    /// and ticket `(front_seq + i) as u32`.
    ring: VecDeque<Slot<P>>,
    front_seq: u64,
    index: I,
    /// Responses no entry holds any more, for reuse (each held by the pool
    /// alone).
    pool: Vec<Arc<Response>>,
}

/// Entries a cache reserves room for up front, so that the hot path of a
/// large run does not grow the ring (bigger caches grow once beyond this).
pub(crate) fn reserve(max_entries: usize) -> usize {
    max_entries.min(1 << 16)
}

impl<P: Copy + Eq, I: DedupIndex<P>> DedupCache<P, I> {
    /// A cache of at most `max_entries` (at least 1, at most 2³¹: tickets
    /// are 32 bits) remembered for `lifetime`, found through `index`.
    pub fn new(lifetime: Nanos, max_entries: usize, index: I) -> Self {
        DedupCache {
            lifetime,
            max_entries: max_entries.clamp(1, 1 << 31),
            ring: VecDeque::with_capacity(reserve(max_entries)),
            front_seq: 0,
            index,
            pool: Vec::new(),
        }
    }

    pub fn len(&self) -> usize {
        self.ring.len()
    }

    fn pop_front(&mut self) {
        if let Some(slot) = self.ring.pop_front() {
            let (peer, mid) = slot.key;
            self.index.remove(peer, mid, self.front_seq as u32);
            self.recycle(slot.entry.response);
            self.front_seq += 1;
        }
    }

    /// Forgets entries older than the lifetime at `now`.
    pub fn expire(&mut self, now: Nanos) -> u64 {
        let mut n = 0;
        while let Some(slot) = self.ring.front() {
            if now.saturating_sub(slot.entry.at) < self.lifetime {
                break;
            }
            self.pop_front();
            n += 1;
        }
        n
    }

    /// The live entry for `key` at `now`.
    pub fn get(&self, key: &(P, u16), now: Nanos) -> Option<&Entry> {
        let front = self.front_seq as u32;
        let slot = |t: u32| &self.ring[t.wrapping_sub(front) as usize];
        let t = self.index.find(key.0, key.1, |t| {
            let s = slot(t);
            (s.key.1, s.link)
        })?;
        let e = &slot(t).entry;
        (now.saturating_sub(e.at) < self.lifetime).then_some(e)
    }

    /// Keeps `response` for reuse if no one else holds it (one shared with
    /// a later entry, or with the server, comes back with its last holder).
    pub fn recycle(&mut self, mut response: Arc<Response>) {
        if Arc::get_mut(&mut response).is_some() {
            self.pool.push(response);
        }
    }

    /// A response no one else holds, with `response`'s contents; `response`
    /// gets the old contents of a pooled one (its capacity, for reuse).
    pub fn share(&mut self, response: &mut Response) -> Arc<Response> {
        let mut shared = self.pool.pop().unwrap_or_default();
        let inner = Arc::get_mut(&mut shared).expect("pooled responses are held by the pool alone");
        std::mem::swap(inner, response);
        shared
    }

    /// Remembers `key` (which must not be live) answered by `response`;
    /// returns how many entries were evicted to make room.
    pub fn insert(
        &mut self,
        key: (P, u16),
        now: Nanos,
        token: &[u8],
        response: Arc<Response>,
    ) -> u64 {
        self.expire(now);
        let mut evicted = 0;
        while self.ring.len() >= self.max_entries {
            self.pop_front();
            evicted += 1;
        }
        // A stale entry of the same key can only be an expired one at the
        // front; expire() removed it, so the key is free.
        debug_assert!(self.get(&key, now).is_none());
        let mut t = [0u8; 8];
        t[..token.len()].copy_from_slice(token);
        let seq = self.front_seq + self.ring.len() as u64;
        let link = self.index.insert(key.0, key.1, seq as u32);
        self.ring.push_back(Slot {
            key,
            link,
            entry: Entry {
                at: now,
                token: t,
                token_len: token.len() as u8,
                response,
            },
        });
        evicted
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::index::{DenseIndex, HashIndex};

    /// Both indexes behind the same cache behave alike.
    fn caches(
        lifetime: Nanos,
        max: usize,
    ) -> (DedupCache<u32, HashIndex<u32>>, DedupCache<u32, DenseIndex>) {
        (
            DedupCache::new(lifetime, max, HashIndex::with_capacity(max)),
            DedupCache::new(lifetime, max, DenseIndex::with_peers(2)),
        )
    }

    fn resp(code: u8) -> Arc<Response> {
        Arc::new(Response {
            code: crate::message::Code(code),
            ..Response::default()
        })
    }

    fn expiry<I: DedupIndex<u32>>(mut c: DedupCache<u32, I>) {
        c.insert((1, 7), 0, &[9], resp(0x45));
        assert_eq!(c.get(&(1, 7), 99).unwrap().token(), &[9]);
        assert!(
            c.get(&(1, 7), 100).is_none(),
            "expired at exactly the lifetime"
        );
        assert!(c.get(&(0, 7), 50).is_none(), "another peer");
        assert_eq!(c.expire(100), 1);
        assert_eq!(c.len(), 0);
        // Same key again later: a fresh entry.
        c.insert((1, 7), 150, &[], resp(0x44));
        assert_eq!(c.get(&(1, 7), 151).unwrap().response.code.0, 0x44);
    }

    #[test]
    fn entries_expire_after_the_lifetime() {
        let (h, d) = caches(100, 10);
        expiry(h);
        expiry(d);
    }

    fn eviction<I: DedupIndex<u32>>(mut c: DedupCache<u32, I>) {
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
    fn the_oldest_is_evicted_when_full() {
        let (h, d) = caches(1_000, 3);
        eviction(h);
        eviction(d);
    }

    /// The same arrivals (peers numbering in sequence, with retransmissions,
    /// jumps and wraps of the ID space) give the same answers through both
    /// indexes, also across the wrap of the 32-bit tickets.
    #[test]
    fn both_indexes_agree() {
        let (mut h, mut d) = caches(50, 40);
        let start = u64::from(u32::MAX) - 20;
        h.front_seq = start;
        d.front_seq = start;
        let mut next = [65530u16, 100, 7, 0];
        let mut x = 12345u64;
        let mut duplicates = 0;
        for now in 0..400u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let r = (x >> 33) as u32;
            let peer = r % 4;
            let n = &mut next[peer as usize];
            // Mostly the next ID; sometimes a recent one again, sometimes a jump.
            let mid = match (r >> 8) % 8 {
                0 => n.wrapping_sub(1 + ((r >> 12) % 5) as u16),
                1 => {
                    *n = n.wrapping_add((r >> 12) as u16);
                    *n
                }
                _ => {
                    *n = n.wrapping_add(1);
                    *n
                }
            };
            h.expire(now);
            d.expire(now);
            let found = h.get(&(peer, mid), now).map(|e| e.at);
            assert_eq!(found, d.get(&(peer, mid), now).map(|e| e.at), "{now}");
            duplicates += u32::from(found.is_some());
            if found.is_none() {
                let token = [peer as u8];
                assert_eq!(
                    h.insert((peer, mid), now, &token, resp(0x45)),
                    d.insert((peer, mid), now, &token, resp(0x45))
                );
            }
            assert_eq!(h.len(), d.len());
        }
        assert!(d.front_seq > u64::from(u32::MAX), "the tickets wrapped");
        assert!(duplicates > 10, "{duplicates} duplicates found");
    }

    #[test]
    fn responses_are_recycled() {
        let mut c = DedupCache::new(10, 2, DenseIndex::with_peers(0));
        let mut r = Response::default();
        r.payload.extend_from_slice(&[1; 100]);
        let shared = c.share(&mut r);
        c.insert((1, 1), 0, &[], shared);
        c.expire(10);
        let mut r = Response::default();
        let shared = c.share(&mut r);
        assert!(shared.payload.is_empty());
        assert!(r.payload.capacity() >= 100, "the pooled buffers come back");
    }

    #[test]
    fn a_shared_response_returns_to_the_pool_with_its_last_holder() {
        let mut c = DedupCache::new(10, 4, DenseIndex::with_peers(2));
        let shared = c.share(&mut resp_owned(0x45));
        c.insert((0, 1), 0, &[], Arc::clone(&shared));
        c.insert((1, 1), 5, &[], shared);
        assert_eq!(c.expire(10), 1);
        assert!(c.pool.is_empty(), "still held by the second entry");
        assert_eq!(c.expire(15), 1);
        assert_eq!(c.pool.len(), 1);
    }

    fn resp_owned(code: u8) -> Response {
        Response {
            code: crate::message::Code(code),
            ..Response::default()
        }
    }
}
