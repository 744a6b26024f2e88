//! The protocol parser SCHC assumes (RFC 8724 §7.1): a packet's header as a
//! list of identified fields in packet order, and back.

use std::net::Ipv6Addr;

use super::packet::{Computed, Headers, NEXT_HEADER_UDP};
use super::rule::{Fid, Value};
use crate::message::{Code, Message, MessageType};

/// One header field of a packet: its identifier, its position among fields
/// with the same identifier (from 1) and its value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Field {
    /// Field identifier.
    pub fid: Fid,
    /// Position (1 for the first occurrence).
    pub fp: u8,
    /// Value.
    pub value: Value,
}

fn uint(fid: Fid, v: impl Into<u64>) -> Field {
    Field {
        fid,
        fp: 1,
        value: Value::Uint(v.into()),
    }
}

fn half(a: &Ipv6Addr, high: bool) -> u64 {
    let o = a.octets();
    let part = if high { &o[..8] } else { &o[8..] };
    u64::from_be_bytes(part.try_into().expect("8 bytes"))
}

/// The fields of a parsed packet, in packet order: IPv6, UDP, the CoAP
/// header, token and options (a repeated option counts its positions up).
pub fn fields(h: &Headers, c: &Computed) -> Vec<Field> {
    let m = &h.coap;
    let mut out = vec![
        uint(Fid::Ipv6Version, 6u8),
        uint(Fid::Ipv6TrafficClass, h.traffic_class),
        uint(Fid::Ipv6FlowLabel, h.flow_label),
        uint(Fid::Ipv6PayloadLength, c.payload_length),
        uint(Fid::Ipv6NextHeader, NEXT_HEADER_UDP),
        uint(Fid::Ipv6HopLimit, h.hop_limit),
        uint(Fid::Ipv6DevPrefix, half(&h.dev, true)),
        uint(Fid::Ipv6DevIid, half(&h.dev, false)),
        uint(Fid::Ipv6AppPrefix, half(&h.app, true)),
        uint(Fid::Ipv6AppIid, half(&h.app, false)),
        uint(Fid::UdpDevPort, h.dev_port),
        uint(Fid::UdpAppPort, h.app_port),
        uint(Fid::UdpLength, c.udp_length),
        uint(Fid::UdpChecksum, c.checksum),
        uint(Fid::CoapVersion, 1u8),
        uint(Fid::CoapType, m.mtype as u8),
        uint(Fid::CoapTkl, m.token.len() as u8),
        uint(Fid::CoapCode, m.code.0),
        uint(Fid::CoapMid, m.mid),
        Field {
            fid: Fid::CoapToken,
            fp: 1,
            value: Value::Bytes(m.token.clone()),
        },
    ];
    let mut last = (u16::MAX, 0u8);
    for (number, value) in &m.options {
        let fp = if last.0 == *number {
            last.1.saturating_add(1)
        } else {
            1
        };
        last = (*number, fp);
        out.push(Field {
            fid: Fid::CoapOption(*number),
            fp,
            value: Value::Bytes(value.clone()),
        });
    }
    out
}

/// Why decompressed field values do not make a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BadValue(pub Fid);

/// Headers with every field at its zero value, to be filled by [`set`].
pub fn blank() -> Headers {
    Headers {
        traffic_class: 0,
        flow_label: 0,
        hop_limit: 0,
        dev: Ipv6Addr::UNSPECIFIED,
        app: Ipv6Addr::UNSPECIFIED,
        dev_port: 0,
        app_port: 0,
        coap: Message::new(MessageType::Con, Code::EMPTY, 0),
    }
}

fn with_half(a: &Ipv6Addr, high: bool, v: u64) -> Ipv6Addr {
    let mut o = a.octets();
    let part = if high { &mut o[..8] } else { &mut o[8..] };
    part.copy_from_slice(&v.to_be_bytes());
    Ipv6Addr::from(o)
}

/// Sets field `fid` of `h` to `value` (options are appended in call order).
/// Computed fields (lengths, checksum) and the token length are not stored:
/// rebuilding computes the former and the token gives the latter.
pub fn set(h: &mut Headers, fid: Fid, value: Value) -> Result<(), BadValue> {
    let bad = BadValue(fid);
    match (fid, value) {
        (Fid::CoapToken, Value::Bytes(b)) => h.coap.token = b,
        (Fid::CoapOption(n), Value::Bytes(b)) => h.coap.options.push((n, b)),
        (_, Value::Bytes(_)) => return Err(bad),
        (fid, Value::Uint(v)) => {
            let narrow = |max: u64| if v <= max { Ok(v) } else { Err(bad) };
            match fid {
                Fid::Ipv6Version if v != 6 => return Err(bad),
                Fid::Ipv6NextHeader if v != u64::from(NEXT_HEADER_UDP) => return Err(bad),
                Fid::CoapVersion if v != 1 => return Err(bad),
                Fid::Ipv6TrafficClass => h.traffic_class = narrow(0xFF)? as u8,
                Fid::Ipv6FlowLabel => h.flow_label = narrow(0xF_FFFF)? as u32,
                Fid::Ipv6HopLimit => h.hop_limit = narrow(0xFF)? as u8,
                Fid::Ipv6DevPrefix => h.dev = with_half(&h.dev, true, v),
                Fid::Ipv6DevIid => h.dev = with_half(&h.dev, false, v),
                Fid::Ipv6AppPrefix => h.app = with_half(&h.app, true, v),
                Fid::Ipv6AppIid => h.app = with_half(&h.app, false, v),
                Fid::UdpDevPort => h.dev_port = narrow(0xFFFF)? as u16,
                Fid::UdpAppPort => h.app_port = narrow(0xFFFF)? as u16,
                Fid::CoapType => h.coap.mtype = MessageType::from_bits(narrow(3)? as u8),
                Fid::CoapCode => h.coap.code = Code(narrow(0xFF)? as u8),
                Fid::CoapMid => h.coap.mid = narrow(0xFFFF)? as u16,
                _ => {}
            }
        }
    }
    Ok(())
}
