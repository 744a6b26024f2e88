//! Out-of-order receive queue (RFC 9293 §3.10.7.4: segments beyond `RCV.NXT`
//! inside the window are kept and delivered once the gap fills, as Linux's
//! out-of-order queue does; with SACK, [`Reassembly::blocks`] reports them).
//!
//! Ranges are sequence offsets (0 = the peer's SYN). Allocation happens only
//! when data arrives out of order, i.e. after a loss.

use std::collections::BTreeMap;

/// Held out-of-order data, keyed by start offset; ranges never overlap.
#[derive(Clone, Debug, Default)]
pub struct Reassembly {
    held: BTreeMap<u64, Vec<u8>>,
    bytes: usize,
}

impl Reassembly {
    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.held.is_empty()
    }

    /// Bytes held.
    pub fn len(&self) -> usize {
        self.bytes
    }

    /// Whether every byte of `[start, end)` is held already.
    pub fn covers(&self, start: u64, end: u64) -> bool {
        let mut at = start;
        for (&s, v) in self.held.range(..end) {
            let e = s + v.len() as u64;
            if e <= at {
                continue;
            }
            if s > at {
                return false;
            }
            at = e;
            if at >= end {
                return true;
            }
        }
        at >= end
    }

    /// Holds `data` starting at `start`, keeping only bytes not held yet.
    pub fn insert(&mut self, start: u64, data: &[u8]) {
        let end = start + data.len() as u64;
        let mut at = start;
        // Collect gaps first to avoid mutating while iterating.
        let mut gaps: Vec<(u64, u64)> = Vec::new();
        for (&s, v) in self.held.range(..end) {
            let e = s + v.len() as u64;
            if e <= at {
                continue;
            }
            if s > at {
                gaps.push((at, s));
            }
            at = at.max(e);
        }
        if at < end {
            gaps.push((at, end));
        }
        for (s, e) in gaps {
            let from = (s - start) as usize;
            let to = (e - start) as usize;
            self.held.insert(s, data[from..to].to_vec());
            self.bytes += to - from;
        }
    }

    /// The held data as SACK blocks `[start, end)` (adjacent ranges merged),
    /// at most `max`: the block holding `recent` first (RFC 2018 §4: the
    /// block with the latest segment leads), then the others from the
    /// highest down (the most recently received, for an in-order sender).
    pub fn blocks(&self, recent: Option<u64>, max: usize, mut push: impl FnMut(u64, u64)) {
        let mut first: Option<(u64, u64)> = None;
        if let Some(r) = recent {
            let mut cur: Option<(u64, u64)> = None;
            for (&st, v) in self.held.iter() {
                let e = st + v.len() as u64;
                cur = match cur {
                    Some((a, b)) if st <= b => Some((a, b.max(e))),
                    Some((a, b)) => {
                        if a <= r && r < b {
                            first = Some((a, b));
                        }
                        Some((st, e))
                    }
                    None => Some((st, e)),
                };
            }
            if let Some((a, b)) = cur {
                if a <= r && r < b {
                    first = Some((a, b));
                }
            }
        }
        let mut n = 0;
        if let Some((a, b)) = first {
            push(a, b);
            n += 1;
        }
        // Walk down from the highest range, merging adjacent ones.
        let mut cur: Option<(u64, u64)> = None;
        for (&st, v) in self.held.iter().rev() {
            if n >= max {
                return;
            }
            let e = st + v.len() as u64;
            cur = match cur {
                Some((a, b)) if e >= a => Some((st.min(a), b)),
                Some(blk) => {
                    if Some(blk) != first {
                        push(blk.0, blk.1);
                        n += 1;
                        if n >= max {
                            return;
                        }
                    }
                    Some((st, e))
                }
                None => Some((st, e)),
            };
        }
        if let Some(blk) = cur {
            if n < max && Some(blk) != first {
                push(blk.0, blk.1);
            }
        }
    }

    /// Moves every byte contiguous with `rcv_nxt` into `out`; returns the new
    /// `rcv_nxt`. Held bytes below `rcv_nxt` are dropped.
    pub fn drain_into(&mut self, mut rcv_nxt: u64, out: &mut impl Extend<u8>) -> u64 {
        while let Some((&s, _)) = self.held.first_key_value() {
            if s > rcv_nxt {
                break;
            }
            let v = self.held.remove(&s).unwrap_or_default();
            self.bytes -= v.len();
            let e = s + v.len() as u64;
            if e > rcv_nxt {
                let skip = (rcv_nxt - s) as usize;
                out.extend(v[skip..].iter().copied());
                rcv_nxt = e;
            }
        }
        rcv_nxt
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_and_drains_in_order() {
        let mut r = Reassembly::default();
        r.insert(10, b"klm");
        r.insert(5, b"fgh");
        assert!(r.covers(6, 8));
        assert!(!r.covers(7, 11));
        assert!(!r.covers(1, 3));
        r.insert(7, b"hij"); // overlaps both: only "ij" is new
        assert_eq!(r.len(), 8);
        assert!(r.covers(5, 13));
        let mut out = Vec::new();
        assert_eq!(r.drain_into(1, &mut out), 1);
        assert!(out.is_empty());
        assert_eq!(r.drain_into(6, &mut out), 13);
        assert_eq!(out, b"ghijklm");
        assert!(r.is_empty());
    }

    #[test]
    fn sack_blocks_latest_first_then_highest() {
        let mut r = Reassembly::default();
        r.insert(10, b"ab"); // [10, 12)
        r.insert(12, b"cd"); // adjacent: one block [10, 14)
        r.insert(20, b"x"); // [20, 21)
        r.insert(30, b"yz"); // [30, 32)
        r.insert(40, b"w"); // [40, 41)
        let mut got = Vec::new();
        r.blocks(Some(12), 4, |a, b| got.push((a, b)));
        assert_eq!(got, [(10, 14), (40, 41), (30, 32), (20, 21)]);
        got.clear();
        r.blocks(Some(30), 3, |a, b| got.push((a, b)));
        assert_eq!(got, [(30, 32), (40, 41), (20, 21)]);
    }
}
