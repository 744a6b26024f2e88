//! IPv6 + UDP + CoAP packets as SCHC sees them: parsed into [`Headers`] and
//! rebuilt from them with the lengths and the UDP checksum computed (RFC 8200
//! §3 and §8.1, RFC 768, RFC 7252 §3).

use std::net::Ipv6Addr;

use super::profile::{Context, Profile};
use super::rule::Direction;
use crate::message::{EncodeError, Message};

/// The IPv6 fixed header's length.
pub const IPV6_HEADER: usize = 40;
/// The UDP header's length.
pub const UDP_HEADER: usize = 8;
/// IPv6's next-header number of UDP.
pub const NEXT_HEADER_UDP: u8 = 17;

/// The header fields of an IPv6 + UDP + CoAP packet that are not computed
/// from the rest (lengths and checksum are), with addresses and ports by role.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Headers {
    /// IPv6 traffic class.
    pub traffic_class: u8,
    /// IPv6 flow label (20 bits).
    pub flow_label: u32,
    /// IPv6 hop limit.
    pub hop_limit: u8,
    /// The device's address.
    pub dev: Ipv6Addr,
    /// The application server's address.
    pub app: Ipv6Addr,
    /// The device's UDP port.
    pub dev_port: u16,
    /// The application server's UDP port.
    pub app_port: u16,
    /// The CoAP message (options in wire order, payload included).
    pub coap: Message,
}

/// The lengths and checksum a parsed packet carried (all verified).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Computed {
    /// IPv6 payload length.
    pub payload_length: u16,
    /// UDP length.
    pub udp_length: u16,
    /// UDP checksum.
    pub checksum: u16,
}

/// Parses `packet`, going `dir`, as IPv6 (no extension header) + UDP + a
/// valid CoAP message whose lengths and UDP checksum are right. `None`
/// otherwise: such a packet goes out with the no-compression rule, whose
/// residue is the packet itself, so nothing is lost.
pub fn parse(packet: &[u8], dir: Direction) -> Option<(Headers, Computed)> {
    if packet.len() < IPV6_HEADER + UDP_HEADER || packet[0] >> 4 != 6 {
        return None;
    }
    let be16 = |at: usize| u16::from_be_bytes([packet[at], packet[at + 1]]);
    let payload_length = be16(4);
    let udp_length = be16(IPV6_HEADER + 4);
    let checksum = be16(IPV6_HEADER + 6);
    let upper = packet.len() - IPV6_HEADER;
    if usize::from(payload_length) != upper
        || usize::from(udp_length) != upper
        || packet[6] != NEXT_HEADER_UDP
        || checksum == 0
    {
        return None;
    }
    let src = addr(&packet[8..24]);
    let dst = addr(&packet[24..40]);
    if udp_checksum(&src, &dst, &packet[IPV6_HEADER..]) != 0xFFFF {
        return None;
    }
    let coap = Message::decode(&packet[IPV6_HEADER + UDP_HEADER..]).ok()?;
    let (sport, dport) = (be16(IPV6_HEADER), be16(IPV6_HEADER + 2));
    let ((dev, dev_port), (app, app_port)) = match dir {
        Direction::Up => ((src, sport), (dst, dport)),
        Direction::Down => ((dst, dport), (src, sport)),
    };
    let headers = Headers {
        traffic_class: (packet[0] << 4) | (packet[1] >> 4),
        flow_label: u32::from_be_bytes([0, packet[1] & 0x0F, packet[2], packet[3]]),
        hop_limit: packet[7],
        dev,
        app,
        dev_port,
        app_port,
        coap,
    };
    let computed = Computed {
        payload_length,
        udp_length,
        checksum,
    };
    Some((headers, computed))
}

fn addr(bytes: &[u8]) -> Ipv6Addr {
    let mut a = [0u8; 16];
    a.copy_from_slice(bytes);
    Ipv6Addr::from(a)
}

/// Writes the packet `h` describes going `dir`, computing the IPv6 payload
/// length, the UDP length and the UDP checksum. Fails as
/// [`Message::encode`] does, or if the packet would pass 65535 bytes of
/// payload.
pub fn assemble(h: &Headers, dir: Direction) -> Result<Vec<u8>, EncodeError> {
    let coap = h.coap.encode()?;
    let upper = UDP_HEADER + coap.len();
    let upper16 = u16::try_from(upper).map_err(|_| EncodeError::BufferTooSmall)?;
    let ((src, sport), (dst, dport)) = match dir {
        Direction::Up => ((h.dev, h.dev_port), (h.app, h.app_port)),
        Direction::Down => ((h.app, h.app_port), (h.dev, h.dev_port)),
    };
    let mut p = Vec::with_capacity(IPV6_HEADER + upper);
    let first = (6u32 << 28) | (u32::from(h.traffic_class) << 20) | (h.flow_label & 0xF_FFFF);
    p.extend_from_slice(&first.to_be_bytes());
    p.extend_from_slice(&upper16.to_be_bytes());
    p.extend_from_slice(&[NEXT_HEADER_UDP, h.hop_limit]);
    p.extend_from_slice(&src.octets());
    p.extend_from_slice(&dst.octets());
    p.extend_from_slice(&sport.to_be_bytes());
    p.extend_from_slice(&dport.to_be_bytes());
    p.extend_from_slice(&upper16.to_be_bytes());
    p.extend_from_slice(&[0, 0]);
    p.extend_from_slice(&coap);
    let sum = !udp_checksum(&src, &dst, &p[IPV6_HEADER..]);
    // A computed 0 is sent as all ones (RFC 768; RFC 8200 §8.1).
    let sum = if sum == 0 { 0xFFFF } else { sum };
    p[IPV6_HEADER + 6..IPV6_HEADER + 8].copy_from_slice(&sum.to_be_bytes());
    Ok(p)
}

/// The ones'-complement sum (not yet complemented) of the IPv6 pseudo-header
/// and the UDP datagram `udp` (RFC 8200 §8.1): 0xFFFF when the checksum the
/// datagram carries is right.
pub fn udp_checksum(src: &Ipv6Addr, dst: &Ipv6Addr, udp: &[u8]) -> u16 {
    let mut sum: u64 = 0;
    let mut add = |bytes: &[u8]| {
        for pair in bytes.chunks(2) {
            let hi = u64::from(pair[0]) << 8;
            sum += hi | pair.get(1).map_or(0, |b| u64::from(*b));
        }
    };
    add(&src.octets());
    add(&dst.octets());
    add(&(udp.len() as u32).to_be_bytes());
    add(&[0, 0, 0, NEXT_HEADER_UDP]);
    add(udp);
    while sum > 0xFFFF {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    sum as u16
}

/// The IPv6 + UDP + CoAP packet carrying `msg` between the device of
/// `ctx` and the server of `profile`, going `dir`, with traffic class and
/// flow label 0 and the hop limit the rules expect ([`Profile::hop_limit`]).
/// This is the packet the default rules compress, so its compressed size is
/// what a LoRaWAN frame carries.
pub fn build(
    msg: &Message,
    profile: &Profile,
    ctx: &Context,
    dir: Direction,
) -> Result<Vec<u8>, EncodeError> {
    let h = Headers {
        traffic_class: 0,
        flow_label: 0,
        hop_limit: profile.hop_limit(dir),
        dev: profile.dev_address(ctx),
        app: profile.app_address(),
        dev_port: profile.dev_port,
        app_port: profile.app_port,
        coap: msg.clone(),
    };
    assemble(&h, dir)
}
