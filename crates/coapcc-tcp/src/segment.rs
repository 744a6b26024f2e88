//! TCP segments as values (RFC 9293 §3.1), with their real on-wire size.
//!
//! The model carries only the header fields it uses: sequence and
//! acknowledgment numbers, the control flags, the (unscaled) window and the MSS
//! option. There are no ports: the simulator addresses connections itself.
//! [`Segment::wire_len`] is the IPv4 packet size: 20 bytes of IPv4 header, 20
//! of TCP header, 4 for the MSS option when present, and the payload
//! (transport-tcp.md §2: no SACK, no timestamps, so no other options).

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
    /// Payload bytes.
    pub payload: Vec<u8>,
}

impl Segment {
    /// Bytes on the wire at the IP level: headers, options and payload.
    pub fn wire_len(&self) -> usize {
        IPV4_HEADER
            + TCP_HEADER
            + if self.mss.is_some() { MSS_OPTION } else { 0 }
            + self.payload.len()
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
}
