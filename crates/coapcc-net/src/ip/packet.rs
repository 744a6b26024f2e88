//! What the relay reads of an IP packet: version, addresses, protocol, ports
//! and the header lengths the network models size packets from
//! (`coapcc_link::Datagram`: transport header and payload; each model adds
//! its own IPv4 or 6LoWPAN header).

use std::net::Ipv4Addr;

/// IP protocol numbers the relay names.
pub const PROTO_ICMP: u8 = 1;
/// TCP.
pub const PROTO_TCP: u8 = 6;
/// UDP.
pub const PROTO_UDP: u8 = 17;

/// The IPv4 header bytes every model counts (`coapcc_link::dumbbell::IPV4_HEADER`).
pub const IPV4_HEADER: usize = 20;

/// An IPv4 packet as the relay classifies it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ipv4Info {
    /// Source address.
    pub src: Ipv4Addr,
    /// Destination address.
    pub dst: Ipv4Addr,
    /// IP protocol number.
    pub proto: u8,
    /// Total length (header included), as the header states it.
    pub total_len: usize,
    /// IP header length (20 plus options).
    pub header_len: usize,
    /// Transport header length (UDP 8, TCP its data offset, ICMP 8, other
    /// protocols 0); 0 in a fragment that is not the first.
    pub transport_header: usize,
    /// Source and destination ports (TCP and UDP, first fragment), else 0.
    pub ports: (u16, u16),
    /// Part of a fragmented datagram (MF set or a non-zero offset).
    pub fragment: bool,
}

impl Ipv4Info {
    /// Transport payload bytes.
    pub fn payload(&self) -> usize {
        self.total_len - self.header_len - self.transport_header
    }
}

/// Why a packet could not be read as IPv4.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Malformed {
    /// Not IP version 4 (e.g. IPv6).
    NotIpv4,
    /// Shorter than its headers say, or inconsistent lengths.
    Truncated,
}

/// Reads the IPv4 header (and the TCP/UDP header's length and ports) of `p`.
pub fn parse_ipv4(p: &[u8]) -> Result<Ipv4Info, Malformed> {
    if p.is_empty() || p[0] >> 4 != 4 {
        return Err(Malformed::NotIpv4);
    }
    if p.len() < IPV4_HEADER {
        return Err(Malformed::Truncated);
    }
    let header_len = usize::from(p[0] & 0x0f) * 4;
    let total_len = usize::from(u16::from_be_bytes([p[2], p[3]]));
    if header_len < IPV4_HEADER || total_len < header_len || total_len > p.len() {
        return Err(Malformed::Truncated);
    }
    let flags_offset = u16::from_be_bytes([p[6], p[7]]);
    let more = flags_offset & 0x2000 != 0;
    let offset = flags_offset & 0x1fff;
    let proto = p[9];
    let src = Ipv4Addr::new(p[12], p[13], p[14], p[15]);
    let dst = Ipv4Addr::new(p[16], p[17], p[18], p[19]);
    let body = &p[header_len..total_len];
    let (transport_header, ports) = if offset != 0 {
        (0, (0, 0))
    } else {
        let ports = |b: &[u8]| {
            (
                u16::from_be_bytes([b[0], b[1]]),
                u16::from_be_bytes([b[2], b[3]]),
            )
        };
        match proto {
            PROTO_UDP if body.len() >= 8 => (8, ports(body)),
            PROTO_TCP if body.len() >= 20 => {
                let off = usize::from(body[12] >> 4) * 4;
                if off < 20 || off > body.len() {
                    return Err(Malformed::Truncated);
                }
                (off, ports(body))
            }
            PROTO_ICMP if body.len() >= 8 => (8, (0, 0)),
            PROTO_UDP | PROTO_TCP | PROTO_ICMP if !more => return Err(Malformed::Truncated),
            _ => (0, (0, 0)),
        }
    };
    Ok(Ipv4Info {
        src,
        dst,
        proto,
        total_len,
        header_len,
        transport_header,
        ports,
        fragment: more || offset != 0,
    })
}

/// A protocol's name in reports: `tcp`, `udp`, `icmp` or its number.
pub fn proto_name(proto: u8) -> String {
    match proto {
        PROTO_TCP => "tcp".into(),
        PROTO_UDP => "udp".into(),
        PROTO_ICMP => "icmp".into(),
        n => format!("proto{n}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ipv4(proto: u8, body: &[u8], flags_offset: u16) -> Vec<u8> {
        let total = 20 + body.len();
        let mut p = vec![0x45, 0, (total >> 8) as u8, total as u8, 0, 1];
        p.extend_from_slice(&flags_offset.to_be_bytes());
        p.extend_from_slice(&[64, proto, 0, 0, 10, 0, 0, 2, 10, 0, 0, 1]);
        p.extend_from_slice(body);
        p
    }

    #[test]
    fn reads_udp_tcp_and_fragments() {
        let mut udp = vec![0x16, 0x34, 0x16, 0x33, 0, 18, 0, 0];
        udp.extend_from_slice(&[0x40; 10]);
        let i = parse_ipv4(&ipv4(PROTO_UDP, &udp, 0)).unwrap();
        assert_eq!(
            (i.proto, i.ports, i.transport_header),
            (17, (5684, 5683), 8)
        );
        assert_eq!((i.total_len, i.payload()), (38, 10));
        assert_eq!(i.src, Ipv4Addr::new(10, 0, 0, 2));
        assert!(!i.fragment);

        // a TCP header with 12 bytes of options (data offset 8 words)
        let mut tcp = vec![0u8; 32 + 5];
        tcp[0..4].copy_from_slice(&[0x13, 0x88, 0x16, 0x33]);
        tcp[12] = 8 << 4;
        let i = parse_ipv4(&ipv4(PROTO_TCP, &tcp, 0)).unwrap();
        assert_eq!(
            (i.transport_header, i.payload(), i.ports),
            (32, 5, (5000, 5683))
        );

        // a later fragment has no transport header
        let i = parse_ipv4(&ipv4(PROTO_UDP, &[0; 40], 185)).unwrap();
        assert!(i.fragment);
        assert_eq!((i.transport_header, i.payload()), (0, 40));

        assert_eq!(parse_ipv4(&[0x60, 0, 0, 0]), Err(Malformed::NotIpv4));
        let mut bad = ipv4(PROTO_TCP, &tcp, 0);
        bad[20 + 12] = 15 << 4; // data offset beyond the packet
        assert_eq!(parse_ipv4(&bad), Err(Malformed::Truncated));
        assert_eq!(
            parse_ipv4(&ipv4(PROTO_UDP, &udp, 0)[..30]),
            Err(Malformed::Truncated)
        );
    }
}
