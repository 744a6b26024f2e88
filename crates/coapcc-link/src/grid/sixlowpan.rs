//! IEEE 802.15.4 frames carrying 6LoWPAN, encoded as Contiki 3.0 encodes them
//! (spec `docs/spec/radio-spec.md` §1.5; `docs/decisions/grid-choices.md`). Every
//! size the model uses comes from these encoders; the same code writes the
//! real bytes of a pcap trace.
//!
//! A datagram is IPv6, the 8-byte RPL hop-by-hop option, UDP (ports 5683)
//! and the CoAP message. Per hop it is compressed afresh (route-over: every
//! node reassembles, routes and re-fragments):
//!
//! - MAC header: frame control, sequence number, destination PAN, destination
//!   and source addresses with PAN-ID compression — 21 bytes with Cooja's
//!   8-byte addresses, 9 with 16-bit ones. A frame holds at most 125 bytes of
//!   MAC header and payload (127 less the 2-byte FCS).
//! - IPHC (RFC 6282) with Contiki's choices: traffic class and flow label
//!   elided; a context-identifier byte (context 0 is the global prefix);
//!   next header inline when the hop-by-hop option follows (Contiki has no
//!   NHC for extension headers), so the option and the UDP header travel
//!   uncompressed; hop limit elided only at 64 (the origin); source and
//!   destination interface identifiers elided when the link-layer address of
//!   this hop's sender / receiver gives them, else inline (8 bytes, or 2 for
//!   the 16-bit-address form `::ff:fe00:XXXX`).
//! - Without the hop-by-hop option, UDP is NHC-compressed: ports inline
//!   (5683 fits no short form), checksum inline: 7 bytes.
//! - Fragmentation (RFC 4944) when the rest does not fit: FRAG1 (4 bytes)
//!   carries the compressed header and `(budget − header − 4) & !7` bytes of
//!   what follows it, FRAGN (5 bytes) at most `(budget − 5) & !7`.

use serde::{Deserialize, Serialize};

use crate::NodeId;

/// The PAN identifier (Cooja's default).
pub const PAN_ID: u16 = 0xABCD;
/// Largest MAC header + payload of a frame: 127 less the 2-byte FCS.
pub const MAX_FRAME: usize = 125;
/// FCS bytes (sent on air, not counted in Cooja's airtime).
pub const FCS: usize = 2;
/// An acknowledgement frame without FCS: frame control and sequence number.
pub const ACK_FRAME: usize = 3;
/// CoAP's UDP port, on both ends (Erbium binds clients to it too).
pub const COAP_PORT: u16 = 5683;
/// IPv6 header bytes.
pub const IPV6_HEADER: usize = 40;
/// The RPL hop-by-hop extension header with its RPL option.
pub const HBH_LEN: usize = 8;
/// UDP header bytes.
pub const UDP_HEADER: usize = 8;
/// FRAG1 header bytes.
pub const FRAG1_HEADER: usize = 4;
/// FRAGN header bytes.
pub const FRAGN_HEADER: usize = 5;
/// Most fragments a datagram may need.
pub const MAX_FRAGMENTS: usize = 8;
/// The hop limit a datagram starts with (uIP's `UIP_TTL`).
pub const INITIAL_HOP_LIMIT: u8 = 64;
/// The global prefix (`aaaa::/64`), address context 0.
pub const PREFIX: [u8; 8] = [0xaa, 0xaa, 0, 0, 0, 0, 0, 0];
/// RPL instance of the DODAG (Contiki's default).
pub const RPL_INSTANCE: u8 = 0x1e;

/// Link-layer addresses of the nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Addressing {
    /// 8-byte addresses, as Cooja motes have: node N is `00:NN:00:NN:00:NN:00:NN`
    /// (the id's high and low byte, four times).
    #[default]
    Extended,
    /// 16-bit short addresses equal to the node number.
    Short,
}

impl Addressing {
    /// Bytes of one address.
    pub fn bytes(self) -> usize {
        match self {
            Addressing::Extended => 8,
            Addressing::Short => 2,
        }
    }

    /// The address of node `id` (most significant byte first).
    pub fn address(self, id: NodeId) -> ([u8; 8], usize) {
        let (hi, lo) = ((id >> 8) as u8, id as u8);
        match self {
            Addressing::Extended => ([hi, lo, hi, lo, hi, lo, hi, lo], 8),
            Addressing::Short => ([hi, lo, 0, 0, 0, 0, 0, 0], 2),
        }
    }

    /// The interface identifier derived from node `id`'s link-layer address
    /// (RFC 4944 §6: universal/local bit flipped; `::ff:fe00:XXXX` for short).
    pub fn iid(self, id: NodeId) -> [u8; 8] {
        let (a, _) = self.address(id);
        match self {
            Addressing::Extended => {
                let mut iid = a;
                iid[0] ^= 0x02;
                iid
            }
            Addressing::Short => [0, 0, 0, 0xff, 0xfe, 0, a[0], a[1]],
        }
    }

    /// Node `id`'s global IPv6 address.
    pub fn ipv6(self, id: NodeId) -> [u8; 16] {
        let mut ip = [0u8; 16];
        ip[..8].copy_from_slice(&PREFIX);
        ip[8..].copy_from_slice(&self.iid(id));
        ip
    }

    /// MAC header bytes of a unicast data frame (PAN-ID compression).
    pub fn mac_header(self) -> usize {
        2 + 1 + 2 + 2 * self.bytes()
    }
}

/// One hop of a datagram: who sends it on this link, to whom, and what it
/// is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hop {
    /// This hop's sender and receiver (link layer).
    pub from: NodeId,
    /// The receiver.
    pub to: NodeId,
    /// The datagram's source and destination (IPv6).
    pub src: NodeId,
    /// The destination.
    pub dst: NodeId,
    /// The hop limit as sent on this hop.
    pub hop_limit: u8,
    /// Link-layer addressing.
    pub addressing: Addressing,
    /// Whether the RPL hop-by-hop option is present.
    pub hbh: bool,
    /// The RPL rank the sender writes into the option.
    pub rank: u16,
    /// Whether the packet travels down the tree (the option's `O` flag).
    pub down: bool,
}

/// How a datagram of a given size crosses one hop: the frames it needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FramePlan {
    /// Frames (1 = not fragmented).
    pub frames: u8,
    /// MAC header + payload bytes of each frame (no FCS).
    pub sizes: [u16; MAX_FRAGMENTS],
    /// Bytes of the compressed header (IPHC, and NHC-UDP without the option).
    pub header: u16,
    /// Bytes that follow the compressed header (option, UDP, CoAP).
    pub rest: u16,
    /// The uncompressed IPv6 datagram size (the fragment headers' size field).
    pub datagram_size: u16,
    /// Uncompressed bytes the compressed header stands for (40, or 48 with
    /// NHC-UDP): where the first fragment's payload starts, for offsets.
    pub uncompressed_header: u16,
    /// Bytes of `rest` each frame carries.
    pub chunks: [u16; MAX_FRAGMENTS],
}

/// Writes `hop`'s compressed header (IPHC, and NHC-UDP without the option)
/// into `out` and returns its length.
pub fn compressed_header(hop: &Hop, out: &mut [u8; 32]) -> usize {
    let a = hop.addressing;
    let nh_inline = hop.hbh;
    let (hlim_mode, hlim_inline) = match hop.hop_limit {
        1 => (0b01, false),
        64 => (0b10, false),
        255 => (0b11, false),
        _ => (0b00, true),
    };
    // TF = 11: traffic class and flow label elided.
    out[0] = 0x60 | 0x18 | (u8::from(!nh_inline) << 2) | hlim_mode;
    let sam = address_mode(a, hop.src, hop.from);
    let dam = address_mode(a, hop.dst, hop.to);
    // CID = 1, SAC = 1, M = 0, DAC = 1.
    out[1] = 0x80 | 0x40 | (sam << 4) | 0x04 | dam;
    out[2] = 0x00; // context 0 for both addresses
    let mut n = 3;
    if nh_inline {
        out[n] = 0; // hop-by-hop options
        n += 1;
    }
    if hlim_inline {
        out[n] = hop.hop_limit;
        n += 1;
    }
    for (mode, id) in [(sam, hop.src), (dam, hop.dst)] {
        let iid = a.iid(id);
        match mode {
            0b01 => {
                out[n..n + 8].copy_from_slice(&iid);
                n += 8;
            }
            0b10 => {
                out[n..n + 2].copy_from_slice(&iid[6..]);
                n += 2;
            }
            _ => {}
        }
    }
    if !hop.hbh {
        // NHC-UDP, both ports inline, checksum inline (filled by the encoder).
        out[n] = 0xf0;
        out[n + 1..n + 3].copy_from_slice(&COAP_PORT.to_be_bytes());
        out[n + 3..n + 5].copy_from_slice(&COAP_PORT.to_be_bytes());
        out[n + 5] = 0;
        out[n + 6] = 0;
        n += 7;
    }
    n
}

/// SAM/DAM: 11 when the address's IID is the one derived from `link`'s
/// link-layer address, else 10 for the 16-bit form, else 01 (64 bits inline).
fn address_mode(a: Addressing, ip_node: NodeId, link: NodeId) -> u8 {
    if ip_node == link {
        0b11
    } else if a == Addressing::Short {
        0b10
    } else {
        0b01
    }
}

/// The frames `hop` needs for a CoAP message of `coap` bytes.
pub fn plan(hop: &Hop, coap: usize) -> FramePlan {
    let mut buf = [0u8; 32];
    let header = compressed_header(hop, &mut buf);
    let mhr = hop.addressing.mac_header();
    let budget = MAX_FRAME - mhr;
    let (rest, uncompressed) = if hop.hbh {
        (HBH_LEN + UDP_HEADER + coap, IPV6_HEADER)
    } else {
        (coap, IPV6_HEADER + UDP_HEADER)
    };
    let datagram_size = IPV6_HEADER + if hop.hbh { HBH_LEN } else { 0 } + UDP_HEADER + coap;
    let mut p = FramePlan {
        frames: 1,
        sizes: [0; MAX_FRAGMENTS],
        header: header as u16,
        rest: rest as u16,
        datagram_size: datagram_size as u16,
        uncompressed_header: uncompressed as u16,
        chunks: [0; MAX_FRAGMENTS],
    };
    if rest <= budget - header {
        p.sizes[0] = (mhr + header + rest) as u16;
        p.chunks[0] = rest as u16;
        return p;
    }
    let first = (budget - (header + FRAG1_HEADER)) & !7;
    let later = (budget - FRAGN_HEADER) & !7;
    p.sizes[0] = (mhr + FRAG1_HEADER + header + first) as u16;
    p.chunks[0] = first as u16;
    let mut left = rest - first;
    let mut k = 1;
    while left > 0 {
        assert!(
            k < MAX_FRAGMENTS,
            "datagram too large for {MAX_FRAGMENTS} fragments"
        );
        let c = left.min(later);
        p.sizes[k] = (mhr + FRAGN_HEADER + c) as u16;
        p.chunks[k] = c as u16;
        left -= c;
        k += 1;
    }
    p.frames = k as u8;
    p
}

/// Largest CoAP message that [`plan`] can carry in [`MAX_FRAGMENTS`] frames
/// on any hop.
pub fn max_coap(addressing: Addressing, hbh: bool) -> usize {
    let budget = MAX_FRAME - addressing.mac_header();
    let later = (budget - FRAGN_HEADER) & !7;
    // worst case header: hop limit and both addresses inline
    let header = 4 + 1 + 16 + if hbh { 0 } else { 7 };
    let first = (budget - (header + FRAG1_HEADER)) & !7;
    first + later * (MAX_FRAGMENTS - 1) - if hbh { HBH_LEN + UDP_HEADER } else { 0 }
}

/// Writes the MAC header of a data frame from `hop.from` to `hop.to` with
/// sequence number `dsn`; returns its length. Addresses are written least
/// significant byte first, as on air.
pub fn mac_header(hop: &Hop, dsn: u8, out: &mut Vec<u8>) -> usize {
    let start = out.len();
    let mode: u16 = match hop.addressing {
        Addressing::Extended => 3,
        Addressing::Short => 2,
    };
    // data frame, ack request, PAN-ID compression, IEEE 802.15.4-2006
    let fcf: u16 = 0x0001 | 0x0020 | 0x0040 | (mode << 10) | (1 << 12) | (mode << 14);
    out.extend_from_slice(&fcf.to_le_bytes());
    out.push(dsn);
    out.extend_from_slice(&PAN_ID.to_le_bytes());
    for id in [hop.to, hop.from] {
        let (a, n) = hop.addressing.address(id);
        out.extend(a[..n].iter().rev());
    }
    out.len() - start
}

/// Writes an acknowledgement frame (no FCS) for sequence number `dsn`.
pub fn ack_frame(dsn: u8, out: &mut Vec<u8>) {
    out.extend_from_slice(&0x0002u16.to_le_bytes());
    out.push(dsn);
}

/// Writes frame `k` of `hop`'s datagram carrying `coap` (the whole CoAP
/// message), with sequence number `dsn` and fragment tag `tag`, into `out`
/// (cleared first): the exact bytes whose length [`plan`] gives.
pub fn encode_frame(hop: &Hop, k: usize, dsn: u8, tag: u16, coap: &[u8], out: &mut Vec<u8>) {
    let p = plan(hop, coap.len());
    out.clear();
    mac_header(hop, dsn, out);
    let mut header = [0u8; 32];
    let hlen = compressed_header(hop, &mut header);
    let rest = rest_bytes(hop, coap);
    if !hop.hbh {
        // the NHC-UDP checksum sits in the last two bytes of the header
        let c = udp_checksum(hop, coap);
        header[hlen - 2..hlen].copy_from_slice(&c.to_be_bytes());
    }
    let offset: usize = p.chunks[..k].iter().map(|&c| usize::from(c)).sum();
    let chunk = &rest[offset..offset + usize::from(p.chunks[k])];
    if p.frames == 1 {
        out.extend_from_slice(&header[..hlen]);
    } else if k == 0 {
        out.push(0xc0 | (p.datagram_size >> 8) as u8);
        out.push(p.datagram_size as u8);
        out.extend_from_slice(&tag.to_be_bytes());
        out.extend_from_slice(&header[..hlen]);
    } else {
        out.push(0xe0 | (p.datagram_size >> 8) as u8);
        out.push(p.datagram_size as u8);
        out.extend_from_slice(&tag.to_be_bytes());
        out.push(((usize::from(p.uncompressed_header) + offset) / 8) as u8);
    }
    out.extend_from_slice(chunk);
    debug_assert_eq!(out.len(), usize::from(p.sizes[k]));
}

/// What follows the compressed header: the hop-by-hop option and the UDP
/// header (with its checksum), then the CoAP message; or the message alone
/// when UDP is compressed.
fn rest_bytes(hop: &Hop, coap: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(HBH_LEN + UDP_HEADER + coap.len());
    if hop.hbh {
        let flags = if hop.down { 0x80 } else { 0x00 };
        v.extend_from_slice(&[17, 0, 0x63, 4, flags, RPL_INSTANCE]);
        v.extend_from_slice(&hop.rank.to_be_bytes());
        v.extend_from_slice(&COAP_PORT.to_be_bytes());
        v.extend_from_slice(&COAP_PORT.to_be_bytes());
        v.extend_from_slice(&((UDP_HEADER + coap.len()) as u16).to_be_bytes());
        v.extend_from_slice(&udp_checksum(hop, coap).to_be_bytes());
    }
    v.extend_from_slice(coap);
    v
}

/// The UDP checksum over the IPv6 pseudo-header (RFC 8200 §8.1: final
/// destination, upper-layer length, next header 17), the header and `coap`.
pub fn udp_checksum(hop: &Hop, coap: &[u8]) -> u16 {
    let a = hop.addressing;
    let len = (UDP_HEADER + coap.len()) as u32;
    let mut sum: u32 = 0;
    let mut add = |bytes: &[u8]| {
        for pair in bytes.chunks(2) {
            let w = u32::from(pair[0]) << 8 | pair.get(1).map_or(0, |&b| u32::from(b));
            sum += w;
        }
    };
    add(&a.ipv6(hop.src));
    add(&a.ipv6(hop.dst));
    add(&len.to_be_bytes());
    add(&[0, 0, 0, 17]);
    add(&COAP_PORT.to_be_bytes());
    add(&COAP_PORT.to_be_bytes());
    add(&(len as u16).to_be_bytes());
    add(coap);
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    match !(sum as u16) {
        0 => 0xffff,
        c => c,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hop(from: NodeId, to: NodeId, src: NodeId, dst: NodeId, hop_limit: u8) -> Hop {
        Hop {
            from,
            to,
            src,
            dst,
            hop_limit,
            addressing: Addressing::Extended,
            hbh: true,
            rank: 512,
            down: false,
        }
    }

    /// Hand-computed with Contiki 3.0's rules: a 95-byte CoAP request leaving
    /// its origin (node 10) for a server (node 3) that is not its neighbour.
    /// IPHC: 2 + CID 1 + next header 1 + destination IID 8 = 12 (hop limit
    /// 64 and the source IID elided). What follows: option 8 + UDP 8 + 95 =
    /// 111 > 104 − 12, so two fragments. FRAG1 carries (104 − 16) & !7 = 88
    /// of it: 21 + 4 + 12 + 88 = 125 bytes; FRAGN the other 23: 21 + 5 + 23 =
    /// 49. Datagram size 40 + 8 + 8 + 95 = 151.
    #[test]
    fn a_request_at_its_origin() {
        let p = plan(&hop(10, 4, 10, 3, 64), 95);
        assert_eq!(p.header, 12);
        assert_eq!(p.frames, 2);
        assert_eq!(&p.sizes[..2], &[125, 49]);
        assert_eq!(p.datagram_size, 151);
    }

    /// A forwarder (hop limit 63 inline, both IIDs inline): IPHC 4 + 1 + 8 +
    /// 8 = 21; FRAG1 carries (104 − 25) & !7 = 72: 21 + 4 + 21 + 72 = 118;
    /// FRAGN 111 − 72 = 39: 21 + 5 + 39 = 65. On the last hop the
    /// destination IID is elided: IPHC 13, FRAG1 carries (104 − 17) & !7 =
    /// 80: 118 bytes; FRAGN 31: 57.
    #[test]
    fn a_request_in_transit_and_on_its_last_hop() {
        let p = plan(&hop(4, 2, 10, 3, 63), 95);
        assert_eq!((p.header, p.frames), (21, 2));
        assert_eq!(&p.sizes[..2], &[118, 65]);
        let p = plan(&hop(4, 3, 10, 3, 63), 95);
        assert_eq!((p.header, p.frames), (13, 2));
        assert_eq!(&p.sizes[..2], &[118, 57]);
    }

    /// A 4-byte piggybacked response fits one frame everywhere: from the
    /// server, IPHC 12 + 8 + 8 + 4 = 32, frame 21 + 32 = 53.
    #[test]
    fn a_small_response_is_not_fragmented() {
        let p = plan(&hop(3, 2, 3, 10, 64), 4);
        assert_eq!((p.frames, p.sizes[0]), (1, 53));
    }

    /// Without the option UDP is NHC-compressed (7 bytes) and the next header
    /// is not inline: with 16-bit addresses a forwarder's IPHC is 3 + 1 + 2 +
    /// 2 = 8, + 7 = 15; 15 + 95 = 110 ≤ 125 − 9 = 116, one frame of 9 + 110 =
    /// 119 bytes.
    #[test]
    fn short_addresses_without_the_option() {
        let h = Hop {
            addressing: Addressing::Short,
            hbh: false,
            ..hop(4, 2, 10, 3, 63)
        };
        let p = plan(&h, 95);
        assert_eq!((p.header, p.frames, p.sizes[0]), (15, 1, 119));
    }

    /// The encoder writes exactly the planned bytes, and the FRAGN offset
    /// counts 8-octet units of the uncompressed datagram: (40 + 88) / 8 = 16.
    #[test]
    fn encoded_frames_match_the_plan() {
        let coap: Vec<u8> = (0..95).map(|i| i as u8).collect();
        let h = hop(10, 4, 10, 3, 64);
        let mut out = Vec::new();
        encode_frame(&h, 0, 7, 0x1234, &coap, &mut out);
        assert_eq!(out.len(), 125);
        assert_eq!(&out[..3], &[0x61, 0xdc, 7]);
        assert_eq!(&out[3..5], &[0xcd, 0xab]);
        // destination node 4, least significant byte first
        assert_eq!(&out[5..13], &[4, 0, 4, 0, 4, 0, 4, 0]);
        assert_eq!(&out[21..25], &[0xc0, 151, 0x12, 0x34]);
        assert_eq!(out[25] & 0xe0, 0x60, "IPHC dispatch");
        encode_frame(&h, 1, 8, 0x1234, &coap, &mut out);
        assert_eq!(out.len(), 49);
        assert_eq!(&out[21..26], &[0xe0, 151, 0x12, 0x34, 16]);
        assert_eq!(&out[26..], &coap[72..]);
    }

    /// RFC 1071 arithmetic by hand on a tiny case: the checksum of a datagram
    /// plus its checksum field sums to 0xffff.
    #[test]
    fn udp_checksum_verifies() {
        let h = hop(10, 4, 10, 3, 64);
        let coap = [0x40, 0x02, 0x12, 0x34, 0xff, 1, 2, 3];
        let c = udp_checksum(&h, &coap);
        let a = h.addressing;
        let mut words: Vec<u8> = Vec::new();
        words.extend_from_slice(&a.ipv6(10));
        words.extend_from_slice(&a.ipv6(3));
        words.extend_from_slice(&16u32.to_be_bytes());
        words.extend_from_slice(&[0, 0, 0, 17]);
        words.extend_from_slice(&[0x16, 0x33, 0x16, 0x33, 0, 16]);
        words.extend_from_slice(&c.to_be_bytes());
        words.extend_from_slice(&coap);
        let mut sum: u32 = words
            .chunks(2)
            .map(|p| u32::from(p[0]) << 8 | u32::from(p[1]))
            .sum();
        while sum > 0xffff {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        assert_eq!(sum, 0xffff);
    }

    #[test]
    fn addresses_of_a_cooja_mote() {
        let a = Addressing::Extended;
        assert_eq!(a.address(12).0, [0, 12, 0, 12, 0, 12, 0, 12]);
        assert_eq!(a.iid(12), [2, 12, 0, 12, 0, 12, 0, 12]);
        assert_eq!(Addressing::Short.iid(300), [0, 0, 0, 0xff, 0xfe, 0, 1, 44]);
        assert!(max_coap(a, true) >= 95);
    }
}
