//! How the deduplication cache (RFC 7252 §4.5) finds a remembered exchange by
//! (peer, Message ID).
//!
//! The cache keeps its entries in a ring in arrival order and names each by a
//! *ticket*: the low 32 bits of its sequence number in that ring. An index
//! maps a key to the ticket of its live entry. Two indexes serve the one
//! server logic:
//!
//! - [`HashIndex`]: a hash map, for peers of any kind (socket addresses).
//! - [`DenseIndex`]: for peers named by dense numbers `0..n` (the simulator's
//!   clients), one small record per peer and the peer's entries chained
//!   through the ring, newest first. No hashing, and the record of a peer is
//!   found by one array access (`docs/decisions/performance-choices.md`, "Scale: the
//!   engine at a million clients").

use std::collections::HashMap;
use std::hash::Hash;

use foldhash::fast::RandomState;

/// Finds a cache entry by (peer, Message ID).
///
/// The cache calls [`DedupIndex::insert`] for every entry it adds and
/// [`DedupIndex::remove`] for every entry it forgets, always the oldest
/// (entries leave in arrival order); keys in the cache are distinct.
pub trait DedupIndex<P> {
    /// The ticket of the entry for (`peer`, `mid`), if there is one.
    /// `link(t)` gives, for the live entry of ticket `t`, its Message ID and
    /// the link [`DedupIndex::insert`] returned when it was added.
    fn find(&self, peer: P, mid: u16, link: impl Fn(u32) -> (u16, u32)) -> Option<u32>;

    /// Records the entry of ticket `t` for (`peer`, `mid`), the newest in the
    /// cache; returns the link for the cache to keep with the entry.
    fn insert(&mut self, peer: P, mid: u16, t: u32) -> u32;

    /// Forgets the entry of ticket `t` for (`peer`, `mid`), the oldest in the
    /// cache.
    fn remove(&mut self, peer: P, mid: u16, t: u32);
}

/// A hash map from (peer, Message ID) to ticket: any kind of peer.
pub struct HashIndex<P> {
    map: HashMap<(P, u16), u32, RandomState>,
}

impl<P> HashIndex<P> {
    /// An index with room for `entries` keys before it grows.
    pub fn with_capacity(entries: usize) -> Self {
        HashIndex {
            map: HashMap::with_capacity_and_hasher(entries, RandomState::default()),
        }
    }
}

impl<P: Copy + Eq + Hash> DedupIndex<P> for HashIndex<P> {
    fn find(&self, peer: P, mid: u16, _: impl Fn(u32) -> (u16, u32)) -> Option<u32> {
        self.map.get(&(peer, mid)).copied()
    }

    fn insert(&mut self, peer: P, mid: u16, t: u32) -> u32 {
        let old = self.map.insert((peer, mid), t);
        debug_assert!(old.is_none(), "a key is in the cache once");
        0
    }

    fn remove(&mut self, peer: P, mid: u16, _: u32) {
        self.map.remove(&(peer, mid));
    }
}

/// One peer's entries: how many, the newest, and how many of the newest carry
/// consecutive Message IDs (a client numbers its requests in sequence).
#[derive(Clone, Copy, Debug, Default)]
struct Peer {
    /// Ticket of the newest entry (meaningless while `count` is 0).
    head: u32,
    /// Live entries of this peer.
    count: u32,
    /// The newest `run` entries have Message IDs `head_mid`, `head_mid − 1`,
    /// … (wrapping); 1 ≤ `run` ≤ `count` while `count` > 0.
    run: u32,
    /// Message ID of the newest entry.
    head_mid: u16,
}

/// An index for peers numbered densely from 0 (`u32`): a record per peer and,
/// in each entry, the ticket of the same peer's previous entry.
///
/// Finding the entry of Message ID `m` follows that chain from the newest
/// entry. When `m` falls in the run of consecutive IDs at the head, its
/// position is known (`head_mid − m`), so a retransmission of a recent
/// request is found in as many steps as requests came after it, and a new
/// request (the next ID, beyond the run) is known absent without a step.
/// Only a peer whose IDs are not in sequence makes a miss walk the chain.
pub struct DenseIndex {
    peers: Vec<Peer>,
}

impl DenseIndex {
    /// An index with records for peers `0..peers` (it grows for higher ones).
    pub fn with_peers(peers: usize) -> Self {
        DenseIndex {
            peers: vec![Peer::default(); peers],
        }
    }
}

impl DedupIndex<u32> for DenseIndex {
    fn find(&self, peer: u32, mid: u16, link: impl Fn(u32) -> (u16, u32)) -> Option<u32> {
        let p = self.peers.get(peer as usize)?;
        if p.count == 0 {
            return None;
        }
        let back = u32::from(p.head_mid.wrapping_sub(mid));
        if back < p.run {
            let mut t = p.head;
            for _ in 0..back {
                t = link(t).1;
            }
            debug_assert_eq!(link(t).0, mid, "the run holds consecutive IDs");
            return Some(t);
        }
        if p.run == p.count {
            return None;
        }
        // Beyond the run: walk the older entries.
        let mut t = p.head;
        for i in 0..p.count {
            let (m, prev) = link(t);
            if i >= p.run && m == mid {
                return Some(t);
            }
            t = prev;
        }
        None
    }

    fn insert(&mut self, peer: u32, mid: u16, t: u32) -> u32 {
        let i = peer as usize;
        if i >= self.peers.len() {
            self.peers.resize(i + 1, Peer::default());
        }
        let p = &mut self.peers[i];
        let prev = p.head;
        p.run = if p.count > 0 && mid == p.head_mid.wrapping_add(1) {
            p.run + 1
        } else {
            1
        };
        p.count += 1;
        p.head = t;
        p.head_mid = mid;
        prev
    }

    fn remove(&mut self, peer: u32, _: u16, _: u32) {
        // The oldest entry of the cache is this peer's oldest: the last of
        // its chain, so only the counts change.
        let p = &mut self.peers[peer as usize];
        p.count -= 1;
        p.run = p.run.min(p.count);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ring of (mid, link) by ticket, oldest first, removing from the front.
    struct Model {
        entries: Vec<(u32, u16, u32)>,
        front: usize,
    }

    impl Model {
        fn link(&self, t: u32) -> (u16, u32) {
            let (_, m, l) = self.entries[t as usize];
            (m, l)
        }
    }

    fn check(ix: &DenseIndex, model: &Model, peers: u32) {
        // Every ID used, its neighbours, and the ends of the ID space.
        let mut mids: Vec<u16> = vec![0, 1, 2, 65533, 65534, 65535];
        for &(_, m, _) in &model.entries {
            mids.extend([m.wrapping_sub(1), m, m.wrapping_add(1)]);
        }
        for peer in 0..=peers {
            for &mid in &mids {
                let want = model.entries[model.front..]
                    .iter()
                    .position(|&(p, m, _)| p == peer && m == mid)
                    .map(|i| (i + model.front) as u32);
                assert_eq!(
                    ix.find(peer, mid, |t| model.link(t)),
                    want,
                    "peer {peer} mid {mid}"
                );
            }
        }
    }

    #[test]
    fn finds_exactly_the_live_entries() {
        // Peer 0 numbers in sequence (with a wrap), peer 1 jumps about,
        // peer 2 starts in sequence and then jumps; entries leave from the
        // front as in the cache.
        let mut ix = DenseIndex::with_peers(1);
        let mut model = Model {
            entries: Vec::new(),
            front: 0,
        };
        let keys: [(u32, u16); 12] = [
            (0, 65534),
            (1, 40),
            (0, 65535),
            (2, 7),
            (0, 0),
            (1, 3),
            (2, 8),
            (1, 41),
            (2, 9),
            (0, 1),
            (2, 100),
            (2, 8000),
        ];
        for (peer, mid) in keys {
            let t = model.entries.len() as u32;
            let link = ix.insert(peer, mid, t);
            model.entries.push((peer, mid, link));
        }
        check(&ix, &model, 3);
        for _ in 0..keys.len() {
            let (peer, mid, _) = model.entries[model.front];
            ix.remove(peer, mid, model.front as u32);
            model.front += 1;
            check(&ix, &model, 3);
        }
    }

    #[test]
    fn a_run_broken_by_a_gap_restarts() {
        let mut ix = DenseIndex::with_peers(0);
        let mut links = Vec::new();
        for (t, mid) in [10u16, 11, 12, 20, 21].into_iter().enumerate() {
            links.push((mid, ix.insert(5, mid, t as u32)));
        }
        let p = ix.peers[5];
        assert_eq!((p.count, p.run, p.head_mid, p.head), (5, 2, 21, 4));
        let link = |t: u32| links[t as usize];
        assert_eq!(ix.find(5, 20, link), Some(3));
        assert_eq!(ix.find(5, 11, link), Some(1), "found beyond the run");
        assert_eq!(ix.find(5, 22, link), None);
        assert_eq!(ix.find(4, 21, link), None, "another peer");
    }
}
