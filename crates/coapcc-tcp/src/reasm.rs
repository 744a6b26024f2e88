//! Out-of-order receive queue (RFC 9293 §3.10.7.4: segments beyond `RCV.NXT`
//! inside the window are kept and delivered once the gap fills, as Linux's
//! out-of-order queue does; there is no SACK to report them).
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
}
