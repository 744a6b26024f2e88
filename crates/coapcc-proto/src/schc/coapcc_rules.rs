//! The one rule set coapcc uses: a LoRaWAN device, CoAP client, talking to
//! one CoAP server (docs/schc.md explains each choice).
//!
//! Every rule serves one direction (RFC 8824 §3.1: requests go up, responses
//! down, and they carry different options) and one *shape*: the exact list of
//! CoAP options present. A rule must describe all and only the fields of the
//! packet (RFC 8724 §7.3), and an option absent and an option present with an
//! empty value (Observe 0, Content-Format 0, Block2 0/0/16 are all empty)
//! would both be a zero-size residue, so presence is carried by the rule ID
//! rather than in the residue. Uplink rules have IDs from [`UP_FIRST`],
//! downlink rules from [`DOWN_FIRST`]; [`NO_COMPRESSION`] marks a packet sent
//! whole.

use super::profile::Profile;
use super::rule::{
    Cda, Di, Direction, Fid, FieldDescriptor, FieldLength, MatchingOperator, Rule, RuleSet,
    TargetValue, Value,
};
use crate::message::{option, Code};

/// The rule ID of packets sent uncompressed (RFC 8724 §6). RFC 9011 carries
/// the rule ID in FPort, whose application values are 1–223, and takes 20
/// and 21 as default fragmentation rule IDs; coapcc takes the next one.
pub const NO_COMPRESSION: u8 = 22;
/// The first uplink rule's ID.
pub const UP_FIRST: u8 = 32;
/// The first downlink rule's ID.
pub const DOWN_FIRST: u8 = 96;

/// The request codes a compressed uplink can carry, by 2-bit index (0.00 is
/// the Empty ACK or RST answering a confirmable notification).
pub const UP_CODES: [Code; 4] = [Code::EMPTY, Code::GET, Code::POST, Code::PUT];

/// The response codes a compressed downlink can carry, by 3-bit index.
pub const DOWN_CODES: [Code; 8] = [
    Code::EMPTY,
    Code::CREATED,
    Code::CHANGED,
    Code::CONTENT,
    Code::CONTINUE,
    Code::BAD_REQUEST,
    Code::NOT_FOUND,
    Code::REQUEST_ENTITY_INCOMPLETE,
];

/// The Content-Format values a compressed message can carry, by 3-bit index
/// (text/plain, link-format, octet-stream, json, cbor, senml+json,
/// senml+cbor), as their minimal uint encodings (RFC 7252 §3.2).
pub const CONTENT_FORMATS: [u32; 7] = [0, 40, 42, 50, 60, 110, 112];

/// The Uri-Path most of coapcc's requests name, elided.
pub const SENSE: &[u8] = b"sense";

/// A CoAP option's place in a shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Opt {
    /// Uri-Path "sense", not sent.
    Sense,
    /// One Uri-Path segment, sent.
    AnyPath,
    /// Content-Format, mapped.
    ContentFormat,
    /// An option whose value is sent (Observe, Block1/2, Size2, Max-Age and
    /// the congestion-control markings).
    Sent(u16),
}

/// The marking options coapcc's algorithms add to requests and the server
/// echoes in responses: none, pCoCoA's TC, FASOR's Rexmit-Cnt.
const MARKINGS: [Option<u16>; 3] = [None, Some(option::TC), Some(option::REXMIT_CNT)];

/// The uplink shapes (before a marking): requests with a path, and the
/// option-less Empty ACK/RST.
fn up_shapes() -> Vec<Vec<Opt>> {
    use Opt::*;
    let mut shapes = vec![vec![]];
    for path in [Sense, AnyPath] {
        shapes.extend([
            vec![path],
            vec![Sent(option::OBSERVE), path],
            vec![path, ContentFormat],
            vec![path, Sent(option::BLOCK2)],
            vec![path, Sent(option::BLOCK1)],
            vec![path, ContentFormat, Sent(option::BLOCK1)],
        ]);
    }
    shapes
}

/// The downlink shapes (before a marking): piggybacked or separate
/// responses, notifications, block-wise responses, Empty ACK/RST.
fn down_shapes() -> Vec<Vec<Opt>> {
    use Opt::*;
    let (obs, max_age) = (Sent(option::OBSERVE), Sent(option::MAX_AGE));
    let (b1, b2, size2) = (
        Sent(option::BLOCK1),
        Sent(option::BLOCK2),
        Sent(option::SIZE2),
    );
    vec![
        vec![],
        vec![ContentFormat],
        vec![obs],
        vec![obs, ContentFormat],
        vec![obs, ContentFormat, max_age],
        vec![b2],
        vec![ContentFormat, b2],
        vec![ContentFormat, b2, size2],
        vec![b1],
    ]
}

fn fd(
    fid: Fid,
    bits: u32,
    di: Di,
    tv: TargetValue,
    mo: MatchingOperator,
    cda: Cda,
) -> FieldDescriptor {
    FieldDescriptor::new(fid, FieldLength::Bits(bits), di, tv, mo, cda)
}

fn uint(v: impl Into<u64>) -> TargetValue {
    TargetValue::Value(Value::Uint(v.into()))
}

fn elided(fid: Fid, bits: u32, di: Di, v: impl Into<u64>) -> FieldDescriptor {
    fd(
        fid,
        bits,
        di,
        uint(v),
        MatchingOperator::Equal,
        Cda::NotSent,
    )
}

fn sent(fid: Fid, bits: u32, di: Di) -> FieldDescriptor {
    let (tv, mo) = (TargetValue::None, MatchingOperator::Ignore);
    fd(fid, bits, di, tv, mo, Cda::ValueSent)
}

fn computed(fid: Fid, di: Di, cda: Cda) -> FieldDescriptor {
    fd(
        fid,
        16,
        di,
        TargetValue::None,
        MatchingOperator::Ignore,
        cda,
    )
}

fn mapped(fid: Fid, fl: FieldLength, di: Di, list: Vec<Value>) -> FieldDescriptor {
    let (tv, mo) = (TargetValue::List(list), MatchingOperator::MatchMapping);
    FieldDescriptor::new(fid, fl, di, tv, mo, Cda::MappingSent)
}

/// The IPv6, UDP and fixed CoAP header descriptors of a rule for `dir`.
fn header(p: &Profile, dir: Direction) -> Vec<FieldDescriptor> {
    let di = Di::from(dir);
    let hop = match dir {
        // RFC 8724 §10.6: up, the device's constant; down, forced to 1.
        Direction::Up => elided(Fid::Ipv6HopLimit, 8, di, p.hop_limit_up),
        Direction::Down => fd(
            Fid::Ipv6HopLimit,
            8,
            di,
            uint(p.hop_limit(dir)),
            MatchingOperator::Ignore,
            Cda::NotSent,
        ),
    };
    let codes: Vec<Value> = match dir {
        Direction::Up => UP_CODES.iter(),
        Direction::Down => DOWN_CODES.iter(),
    }
    .map(|c| Value::Uint(c.0.into()))
    .collect();
    let mid = fd(
        Fid::CoapMid,
        16,
        di,
        uint(u16::from(p.mid_msb) << 8),
        MatchingOperator::Msb(8),
        Cda::Lsb,
    );
    let token = FieldDescriptor::new(
        Fid::CoapToken,
        FieldLength::Tkl,
        di,
        TargetValue::None,
        MatchingOperator::Ignore,
        Cda::ValueSent,
    );
    vec![
        elided(Fid::Ipv6Version, 4, di, 6u8),
        elided(Fid::Ipv6TrafficClass, 8, di, 0u8),
        elided(Fid::Ipv6FlowLabel, 20, di, 0u8),
        computed(Fid::Ipv6PayloadLength, di, Cda::ComputeLength),
        elided(Fid::Ipv6NextHeader, 8, di, 17u8),
        hop,
        elided(Fid::Ipv6DevPrefix, 64, di, u64::from_be_bytes(p.dev_prefix)),
        fd(
            Fid::Ipv6DevIid,
            64,
            di,
            TargetValue::None,
            MatchingOperator::Ignore,
            Cda::DevIid,
        ),
        elided(Fid::Ipv6AppPrefix, 64, di, u64::from_be_bytes(p.app_prefix)),
        elided(Fid::Ipv6AppIid, 64, di, u64::from_be_bytes(p.app_iid)),
        elided(Fid::UdpDevPort, 16, di, p.dev_port),
        elided(Fid::UdpAppPort, 16, di, p.app_port),
        computed(Fid::UdpLength, di, Cda::ComputeLength),
        computed(Fid::UdpChecksum, di, Cda::ComputeChecksum),
        elided(Fid::CoapVersion, 2, di, 1u8),
        sent(Fid::CoapType, 2, di),
        sent(Fid::CoapTkl, 4, di),
        mapped(Fid::CoapCode, FieldLength::Bits(8), di, codes),
        mid,
        token,
    ]
}

/// The descriptor of option `opt` in a rule for `di`.
fn option_field(opt: Opt, di: Di) -> FieldDescriptor {
    let var = FieldLength::Variable;
    match opt {
        Opt::Sense => FieldDescriptor::new(
            Fid::CoapOption(option::URI_PATH),
            var,
            di,
            TargetValue::Value(Value::Bytes(SENSE.to_vec())),
            MatchingOperator::Equal,
            Cda::NotSent,
        ),
        Opt::AnyPath => option_sent(option::URI_PATH, di),
        Opt::ContentFormat => {
            let list = CONTENT_FORMATS.iter().map(|cf| {
                let (bytes, len) = crate::message::encode_uint(*cf);
                Value::Bytes(bytes[4 - len..].to_vec())
            });
            mapped(
                Fid::CoapOption(option::CONTENT_FORMAT),
                var,
                di,
                list.collect(),
            )
        }
        Opt::Sent(number) => option_sent(number, di),
    }
}

fn option_sent(number: u16, di: Di) -> FieldDescriptor {
    FieldDescriptor::new(
        Fid::CoapOption(number),
        FieldLength::Variable,
        di,
        TargetValue::None,
        MatchingOperator::Ignore,
        Cda::ValueSent,
    )
}

fn rules_for(p: &Profile, dir: Direction, shapes: Vec<Vec<Opt>>, first: u8) -> Vec<Rule> {
    let di = Di::from(dir);
    let mut rules = Vec::new();
    for marking in MARKINGS {
        for shape in &shapes {
            let mut fields = header(p, dir);
            fields.extend(shape.iter().map(|o| option_field(*o, di)));
            if let Some(number) = marking {
                fields.push(option_sent(number, di));
            }
            let id = first + rules.len() as u8;
            rules.push(Rule { id, fields });
        }
    }
    rules
}

/// coapcc's rule set for the devices and server of `p`: 39 uplink rules
/// (IDs 32–70) and 27 downlink rules (IDs 96–122), each the IPv6/UDP/CoAP
/// header descriptors then one option shape, plus the no-compression rule
/// ID 22.
pub fn coapcc_rules(p: &Profile) -> RuleSet {
    let mut rules = rules_for(p, Direction::Up, up_shapes(), UP_FIRST);
    rules.extend(rules_for(p, Direction::Down, down_shapes(), DOWN_FIRST));
    RuleSet {
        rules,
        no_compression: NO_COMPRESSION,
    }
}
