//! The packet pool: the datagrams in flight of a world whose applications
//! exchange encoded messages (the dumbbell's and the grid's CoAP over UDP),
//! each in a slot sized by what it carries.
//!
//! A CoAP request of the dumbbell is some 15 bytes, a response some 75; a
//! slot as wide as the largest datagram would be mostly padding. Slots come
//! in five widths — 32, 64, 128, 288 and 528 bytes — and each width has its
//! own flat array and free list: a packet takes a slot of the narrowest width
//! that holds it, and a released slot is reused by the next packet of that
//! width (last released first, so the slots in use stay few and warm). Slot
//! bytes are `[src: 4][dst: 4][len: 2][message …]`, so reading a packet
//! touches one place.
//!
//! Arrays grow on demand (to the most packets a run has in flight at once);
//! in steady state nothing is allocated. A pool may instead keep every
//! packet ([`PacketPool::keep_all`]), for a trace.

/// Bytes of a slot before the message: source, destination, length.
const HEAD: usize = 10;

/// Slot widths in bytes (header included): the fourth holds any datagram of
/// the dumbbell's 296-byte MTU (268 bytes of CoAP message), the fifth any
/// message of the grid (512 bytes). The table is padded to the eight
/// classes a handle's three class bits can name, so that indexing it by a
/// handle needs no bounds check; a packet never takes a padding class (the
/// narrowest width that holds it is one of the first five).
const WIDTHS: [usize; CLASSES] = [32, 64, 128, 288, 528, 528, 528, 528];

/// Width classes a handle can name.
const CLASSES: usize = 8;

/// Bits of a [`PacketRef`] that index a slot within its width; the three
/// bits above name the width. The top bit is left to the caller (the
/// dumbbell marks TCP segments with it).
const INDEX_BITS: u32 = 28;

/// A packet's handle: its width class and slot.
pub type PacketRef = u32;

/// Slots of one width.
#[derive(Default)]
struct Class {
    bytes: Vec<u8>,
    free: Vec<u32>,
}

/// The packets in flight (see the module docs).
#[derive(Default)]
pub struct PacketPool {
    classes: [Class; CLASSES],
    /// Released slots are not reused (see [`Self::keep_all`]).
    keep: bool,
}

/// A stored packet, borrowed.
pub struct PacketView<'a> {
    /// Sender (an address of the world's choosing).
    pub src: u32,
    /// Destination.
    pub dst: u32,
    /// The encoded message.
    pub data: &'a [u8],
}

impl PacketPool {
    /// The largest message a slot holds.
    pub const MAX_MESSAGE: usize = WIDTHS[4] - HEAD;

    /// Stores a packet of `bytes` (at most [`Self::MAX_MESSAGE`]) from `src`
    /// to `dst`.
    #[inline]
    pub fn alloc(&mut self, src: u32, dst: u32, bytes: &[u8]) -> PacketRef {
        let class = WIDTHS
            .iter()
            .position(|&w| bytes.len() + HEAD <= w)
            .expect("a message fits the widest slot");
        let width = WIDTHS[class];
        let c = &mut self.classes[class];
        let index = match c.free.pop() {
            Some(i) => i,
            None => {
                let i = (c.bytes.len() / width) as u32;
                assert!(i < 1 << INDEX_BITS, "too many packets in flight");
                c.bytes.resize(c.bytes.len() + width, 0);
                i
            }
        };
        let at = index as usize * width;
        let slot = &mut c.bytes[at..at + HEAD + bytes.len()];
        slot[0..4].copy_from_slice(&src.to_le_bytes());
        slot[4..8].copy_from_slice(&dst.to_le_bytes());
        slot[8..10].copy_from_slice(&(bytes.len() as u16).to_le_bytes());
        slot[HEAD..].copy_from_slice(bytes);
        (class as u32) << INDEX_BITS | index
    }

    /// The packet `p` (allocated and not released).
    #[inline]
    pub fn get(&self, p: PacketRef) -> PacketView<'_> {
        let (class, index) = split(p);
        let width = WIDTHS[class];
        let at = index * width;
        let slot = &self.classes[class].bytes[at..at + width];
        let word = |i: usize| u32::from_le_bytes([slot[i], slot[i + 1], slot[i + 2], slot[i + 3]]);
        let len = usize::from(u16::from_le_bytes([slot[8], slot[9]]));
        PacketView {
            src: word(0),
            dst: word(4),
            data: &slot[HEAD..HEAD + len],
        }
    }

    /// Frees `p`'s slot for reuse (unless every packet is kept).
    #[inline]
    pub fn release(&mut self, p: PacketRef) {
        if self.keep {
            return;
        }
        let (class, index) = split(p);
        self.classes[class].free.push(index as u32);
    }

    /// Keeps every packet from now on: a released packet stays readable
    /// (for a trace that shows it after it left the network).
    pub fn keep_all(&mut self) {
        self.keep = true;
    }

    /// Bytes of slots allocated so far (in use or free).
    #[cfg(test)]
    pub fn footprint(&self) -> usize {
        self.classes.iter().map(|c| c.bytes.len()).sum()
    }
}

#[inline]
fn split(p: PacketRef) -> (usize, usize) {
    let class = (p >> INDEX_BITS) as usize & (CLASSES - 1);
    (class, (p & ((1 << INDEX_BITS) - 1)) as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packets_take_the_narrowest_slot_and_read_back() {
        let mut s = PacketPool::default();
        let small = s.alloc(3, u32::MAX, &[1; 22]);
        let medium = s.alloc(u32::MAX, 7, &[2; 23]);
        let large = s.alloc(1, 2, &[3; 268]);
        // 22 + 10 bytes fit the 32-byte width; 23 + 10 need the 64-byte one.
        assert_eq!(small >> INDEX_BITS, 0);
        assert_eq!(medium >> INDEX_BITS, 1);
        assert_eq!(large >> INDEX_BITS, 3);
        assert_eq!(s.footprint(), 32 + 64 + 288);
        let v = s.get(medium);
        assert_eq!((v.src, v.dst, v.data), (u32::MAX, 7, &[2u8; 23][..]));
        let v = s.get(small);
        assert_eq!((v.src, v.dst, v.data.len()), (3, u32::MAX, 22));
        assert_eq!(s.get(large).data, &[3u8; 268][..]);
        let grid = s.alloc(4, 5, &[4; 512]);
        assert_eq!(grid >> INDEX_BITS, 4);
        assert_eq!(s.get(grid).data, &[4u8; 512][..]);
    }

    #[test]
    fn released_slots_are_reused_last_first() {
        let mut s = PacketPool::default();
        let a = s.alloc(0, 1, b"a");
        let b = s.alloc(0, 1, b"b");
        assert_ne!(a, b);
        s.release(a);
        s.release(b);
        assert_eq!(s.alloc(5, 6, b"c"), b);
        assert_eq!(s.alloc(5, 6, b"dd"), a);
        assert_eq!(s.get(a).data, b"dd");
        assert_eq!(s.footprint(), 64, "two 32-byte slots, no more");
    }

    #[test]
    fn a_pool_keeping_every_packet_reuses_no_slot() {
        let mut s = PacketPool::default();
        s.keep_all();
        let a = s.alloc(0, 1, b"a");
        s.release(a);
        let b = s.alloc(0, 1, b"b");
        assert_ne!(a, b);
        assert_eq!(s.get(a).data, b"a", "a released packet stays readable");
    }
}
