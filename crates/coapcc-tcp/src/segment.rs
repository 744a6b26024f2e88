//! TCP segments as values (RFC 9293 §3.1), with their real on-wire size.
//!
//! The model carries only the header fields it uses: sequence and
//! acknowledgment numbers, the control flags, the (unscaled) window, the MSS
//! option and the SACK options of RFC 2018. There are no ports: the simulator
//! addresses connections itself. [`Segment::wire_len`] is the IPv4 packet
//! size: 20 bytes of IPv4 header, 20 of TCP header, the options as Linux 4.9
//! lays them out without timestamps (`tcp_options_write`) — MSS 4 bytes,
//! SACK-permitted 4 (two NOPs, kind 4, length 2), a SACK option with n blocks
//! 4 + 8·n (two NOPs, kind 5, length 2 + 8·n) — and the payload.
//! (docs/spec/transport-tcp-spec.md §2: no timestamps; window scaling is not modelled.)

use core::fmt;
use core::ops::BitOr;

/// TCP control flags (the subset the model uses).
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Flags(u8);

impl Flags {
    /// No flags.
    pub const NONE: Flags = Flags(0);
    /// FIN: the sender has no more data.
    pub const FIN: Flags = Flags(0x01);
    /// SYN: synchronise sequence numbers.
    pub const SYN: Flags = Flags(0x02);
    /// RST: reset the connection.
    pub const RST: Flags = Flags(0x04);
    /// ACK: the acknowledgment field is significant.
    pub const ACK: Flags = Flags(0x10);

    /// Whether every flag of `other` is set.
    pub fn contains(self, other: Flags) -> bool {
        self.0 & other.0 == other.0
    }
    /// The raw bits as in the TCP header's flag byte.
    pub fn bits(self) -> u8 {
        self.0
    }
}

impl BitOr for Flags {
    type Output = Flags;
    fn bitor(self, rhs: Flags) -> Flags {
        Flags(self.0 | rhs.0)
    }
}

impl fmt::Debug for Flags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = [
            (Flags::SYN, "SYN"),
            (Flags::ACK, "ACK"),
            (Flags::FIN, "FIN"),
            (Flags::RST, "RST"),
        ];
        let mut first = true;
        for (flag, name) in names {
            if self.contains(flag) {
                if !first {
                    f.write_str("|")?;
                }
                f.write_str(name)?;
                first = false;
            }
        }
        if first {
            f.write_str("-")?;
        }
        Ok(())
    }
}

/// Size of the IPv4 header without options.
pub const IPV4_HEADER: usize = 20;
/// Size of the TCP header without options.
pub const TCP_HEADER: usize = 20;
/// Size of the MSS option (kind, length, 2-byte value).
pub const MSS_OPTION: usize = 4;
/// Size of the SACK-permitted option as Linux sends it without timestamps:
/// NOP, NOP, kind 4, length 2 (`TCPOLEN_SACKPERM_ALIGNED`).
pub const SACK_PERM_OPTION: usize = 4;
/// Size of the window-scale option as Linux sends it: NOP, kind 3, length
/// 3, shift (`OPTION_WSCALE` in `tcp_options_write`).
pub const WSCALE_OPTION: usize = 4;
/// Most SACK blocks in one segment (`TCP_NUM_SACKS`: 40 option bytes hold
/// 4 + 4·8 without timestamps).
pub const MAX_SACK_BLOCKS: usize = 4;

/// Bytes a SACK option with `n` blocks takes, padded as Linux sends it: two
/// NOPs, kind 5, length 2 + 8·n, then the blocks (`TCPOLEN_SACK_BASE_ALIGNED`
/// + n · `TCPOLEN_SACK_PERBLOCK`). Nothing for `n` = 0.
pub const fn sack_option_len(n: usize) -> usize {
    if n == 0 {
        0
    } else {
        4 + 8 * n
    }
}

/// One SACK block as on the wire: the sequence numbers of the first byte
/// and of the byte after the last (RFC 2018 §3).
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct SackBlock {
    /// Left edge: first sequence number of the block.
    pub left: u32,
    /// Right edge: sequence number just past the block.
    pub right: u32,
}

impl fmt::Debug for SackBlock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.left, self.right)
    }
}

/// Up to [`MAX_SACK_BLOCKS`] SACK blocks, first block first (a D-SACK block,
/// RFC 2883, comes first). A fixed array: segments stay allocation-free.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct SackBlocks {
    blocks: [SackBlock; MAX_SACK_BLOCKS],
    len: u8,
}

impl SackBlocks {
    /// No blocks.
    pub const NONE: SackBlocks = SackBlocks {
        blocks: [SackBlock { left: 0, right: 0 }; MAX_SACK_BLOCKS],
        len: 0,
    };

    /// Appends a block; returns false (and drops it) when four are held.
    pub fn push(&mut self, b: SackBlock) -> bool {
        if usize::from(self.len) >= MAX_SACK_BLOCKS {
            return false;
        }
        self.blocks[usize::from(self.len)] = b;
        self.len += 1;
        true
    }
    /// The blocks, first first.
    pub fn as_slice(&self) -> &[SackBlock] {
        &self.blocks[..usize::from(self.len)]
    }
    /// How many blocks.
    pub fn len(&self) -> usize {
        usize::from(self.len)
    }
    /// Whether there is no block.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Removes every block.
    pub fn clear(&mut self) {
        self.len = 0;
    }
}

impl fmt::Debug for SackBlocks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

/// One TCP segment.
///
/// The payload is an owned buffer so that a simulator can keep segments in
/// flight; [`crate::TcpSocket::poll_transmit_into`] refills a caller's segment
/// and reuses its allocation.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Segment {
    /// Sequence number of the first octet (of the SYN if SYN is set).
    pub seq: u32,
    /// Acknowledgment number (meaningful when [`Flags::ACK`] is set).
    pub ack: u32,
    /// Control flags.
    pub flags: Flags,
    /// Receive window in bytes (no window scaling).
    pub window: u16,
    /// MSS option, sent on SYN and SYN-ACK only.
    pub mss: Option<u16>,
    /// SACK-permitted option (RFC 2018 §2), on SYN and SYN-ACK only.
    pub sack_permitted: bool,
    /// Window-scale option (RFC 7323 §2), on SYN and SYN-ACK only. Only its
    /// bytes are modelled: windows are never scaled ([`Self::window`]).
    pub wscale: bool,
    /// SACK option (RFC 2018 §3; D-SACK first, RFC 2883), empty when absent.
    pub sack: SackBlocks,
    /// Payload bytes.
    pub payload: Vec<u8>,
}

impl Segment {
    /// Bytes on the wire at the IP level: headers, options and payload.
    pub fn wire_len(&self) -> usize {
        IPV4_HEADER + TCP_HEADER + self.options_len() + self.payload.len()
    }

    /// Bytes of TCP options, padding included (a multiple of 4).
    pub fn options_len(&self) -> usize {
        (if self.mss.is_some() { MSS_OPTION } else { 0 })
            + (if self.sack_permitted {
                SACK_PERM_OPTION
            } else {
                0
            })
            + (if self.wscale { WSCALE_OPTION } else { 0 })
            + sack_option_len(self.sack.len())
    }

    /// Sequence space the segment occupies: payload plus one each for SYN and
    /// FIN.
    pub fn seq_len(&self) -> u32 {
        self.payload.len() as u32
            + u32::from(self.flags.contains(Flags::SYN))
            + u32::from(self.flags.contains(Flags::FIN))
    }

    /// An ACK with no data, SYN or FIN.
    pub fn is_pure_ack(&self) -> bool {
        self.flags == Flags::ACK && self.payload.is_empty()
    }

    /// Resets every field, keeping the payload's allocation.
    pub fn clear(&mut self) {
        self.seq = 0;
        self.ack = 0;
        self.flags = Flags::NONE;
        self.window = 0;
        self.mss = None;
        self.sack_permitted = false;
        self.wscale = false;
        self.sack.clear();
        self.payload.clear();
    }
}

impl fmt::Debug for Segment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "[{:?} seq={} ack={} win={} len={}",
            self.flags,
            self.seq,
            self.ack,
            self.window,
            self.payload.len()
        )?;
        if let Some(m) = self.mss {
            write!(f, " mss={m}")?;
        }
        if self.sack_permitted {
            f.write_str(" sackOK")?;
        }
        if self.wscale {
            f.write_str(" wscale")?;
        }
        if !self.sack.is_empty() {
            write!(f, " sack={:?}", self.sack)?;
        }
        f.write_str("]")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_sizes() {
        let syn = Segment {
            flags: Flags::SYN,
            mss: Some(256),
            ..Segment::default()
        };
        assert_eq!(syn.wire_len(), 44);
        assert_eq!(syn.seq_len(), 1);
        let data = Segment {
            flags: Flags::ACK,
            payload: vec![0; 256],
            ..Segment::default()
        };
        assert_eq!(data.wire_len(), 296);
        let fin = Segment {
            flags: Flags::ACK | Flags::FIN,
            payload: vec![0; 10],
            ..Segment::default()
        };
        assert_eq!(fin.seq_len(), 11);
        assert!(!fin.is_pure_ack());
        let ack = Segment {
            flags: Flags::ACK,
            ..Segment::default()
        };
        assert!(ack.is_pure_ack());
        assert_eq!(ack.wire_len(), 40);
        assert_eq!(format!("{:?}", Flags::SYN | Flags::ACK), "SYN|ACK");
    }

    /// Linux 4.9 without timestamps: SYN = MSS (4) + NOP NOP SACK-permitted
    /// (4); a SACK option is NOP NOP kind length + 8 per block.
    #[test]
    fn sack_option_sizes() {
        let syn = Segment {
            flags: Flags::SYN,
            mss: Some(256),
            sack_permitted: true,
            ..Segment::default()
        };
        assert_eq!(syn.wire_len(), 48);
        let mut ack = Segment {
            flags: Flags::ACK,
            ..Segment::default()
        };
        let sizes: Vec<usize> = (1..=5)
            .map(|i| {
                ack.sack.push(SackBlock {
                    left: i * 100,
                    right: i * 100 + 50,
                });
                ack.wire_len()
            })
            .collect();
        assert_eq!(sizes, [52, 60, 68, 76, 76], "a fifth block is dropped");
        assert_eq!(ack.options_len() % 4, 0);
        assert_eq!(
            format!("{ack:?}"),
            "[ACK seq=0 ack=0 win=0 len=0 sack=[100-150, 200-250, 300-350, 400-450]]"
        );
        ack.clear();
        assert_eq!(ack.wire_len(), 40);
    }
}
