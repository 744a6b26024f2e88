//! The segment pool: the TCP segments in flight of a world whose
//! applications run over TCP (the dumbbell's CoAP over TCP, the star's bulk
//! senders and sink), each in a slot with what the world needs to know
//! about it (its connection, its direction).
//!
//! A socket fills a slot's segment in place
//! ([`coapcc_tcp::AnySocket::poll_transmit_into`]), so a warm run does not
//! allocate per segment: the slots grow to the most segments a run has in
//! flight at once, and a released slot is reused by the next segment (last
//! released first).

use coapcc_tcp::Segment;

/// A segment's handle: the index of its slot.
pub type SegmentRef = u32;

/// A segment and what its world notes about it.
#[derive(Default)]
pub struct SegmentSlot<M> {
    /// The segment.
    pub seg: Segment,
    /// What the world notes about it (whose it is, which way it goes).
    pub meta: M,
}

/// The segments in flight (see the module docs).
pub struct SegmentPool<M> {
    slots: Vec<SegmentSlot<M>>,
    free: Vec<SegmentRef>,
}

impl<M> Default for SegmentPool<M> {
    fn default() -> Self {
        SegmentPool {
            slots: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl<M: Default> SegmentPool<M> {
    /// A free slot (its segment holds whatever it last held).
    #[inline]
    pub fn take(&mut self) -> SegmentRef {
        self.free.pop().unwrap_or_else(|| {
            self.slots.push(SegmentSlot::default());
            (self.slots.len() - 1) as SegmentRef
        })
    }

    /// The next segment `transmit` writes into a free slot, noted with
    /// `meta`; `None` (and the slot stays free) when it has none to send.
    #[inline]
    pub fn fill(
        &mut self,
        meta: M,
        transmit: impl FnOnce(&mut Segment) -> bool,
    ) -> Option<SegmentRef> {
        let id = self.take();
        let slot = &mut self.slots[id as usize];
        if !transmit(&mut slot.seg) {
            self.free.push(id);
            return None;
        }
        slot.meta = meta;
        Some(id)
    }
}

impl<M> SegmentPool<M> {
    /// The slot `id` (taken and not released).
    #[inline]
    pub fn get(&self, id: SegmentRef) -> &SegmentSlot<M> {
        &self.slots[id as usize]
    }

    /// The slot `id`, to write.
    #[inline]
    pub fn get_mut(&mut self, id: SegmentRef) -> &mut SegmentSlot<M> {
        &mut self.slots[id as usize]
    }

    /// Frees slot `id` for reuse.
    #[inline]
    pub fn release(&mut self, id: SegmentRef) {
        self.free.push(id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_is_kept_only_when_filled_and_reused_last_first() {
        let mut pool = SegmentPool::<u32>::default();
        let a = pool.fill(7, |seg| {
            seg.seq = 1;
            true
        });
        assert_eq!(a, Some(0));
        assert_eq!(pool.fill(8, |_| false), None);
        let b = pool.fill(9, |_| true).unwrap();
        assert_eq!(b, 1, "the slot refused above is the next one taken");
        assert_eq!((pool.get(0).seg.seq, pool.get(0).meta), (1, 7));
        pool.release(0);
        pool.release(1);
        assert_eq!(pool.take(), 1);
        assert_eq!(pool.take(), 0);
        assert_eq!(pool.take(), 2);
    }
}
