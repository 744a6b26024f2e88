//! Compression (RFC 8724 §7.3): the first rule whose descriptors match the
//! packet's fields one for one gives the rule ID and the residue; a packet no
//! rule matches goes whole under the no-compression rule ID.

use super::bits::BitWriter;
use super::fields::{fields, Field};
use super::packet::parse;
use super::profile::Context;
use super::rule::{
    Cda, Direction, FieldDescriptor, FieldLength, MatchingOperator, Rule, RuleSet, TargetValue,
    Value,
};

/// A compressed packet: the rule ID (the LoRaWAN FPort, RFC 9011), the
/// residue and the payload that follows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Compressed<'p> {
    /// The rule ID.
    pub rule_id: u8,
    /// The compression residue, its last byte padded with zero bits.
    pub residue: Vec<u8>,
    /// The residue's length in bits (before padding).
    pub residue_bits: usize,
    /// The CoAP payload (after its elided 0xFF marker), or the whole packet
    /// under the no-compression rule.
    pub payload: &'p [u8],
}

impl Compressed<'_> {
    /// The SCHC packet's length in bytes once padded to a byte (the LoRaWAN
    /// FRMPayload; the rule ID rides in FPort): the residue's bits, then the
    /// payload's, rounded up.
    pub fn len(&self) -> usize {
        (self.residue_bits + 8 * self.payload.len()).div_ceil(8)
    }

    /// Whether the SCHC packet is empty (a rule that elides every field of a
    /// message with no payload).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The residue's length in whole bytes.
    pub fn residue_len(&self) -> usize {
        self.residue_bits.div_ceil(8)
    }

    /// The SCHC packet as sent (RFC 8724 §5.1, §9): the residue, then the
    /// payload straight after its last bit, then zero bits up to a byte.
    pub fn to_bytes(&self) -> Vec<u8> {
        if self.residue_bits.is_multiple_of(8) {
            let mut out = self.residue.clone();
            out.extend_from_slice(self.payload);
            return out;
        }
        let mut w = BitWriter::new();
        for (i, b) in self.residue.iter().enumerate() {
            let bits = (self.residue_bits - 8 * i).min(8) as u32;
            w.push(u64::from(*b >> (8 - bits)), bits);
        }
        w.push_bytes(self.payload);
        w.into_bytes()
    }
}

/// Compresses `packet` (IPv6 + UDP + CoAP bytes) going `dir` with the first
/// matching rule of `rules`, or else the no-compression rule. Never fails: a
/// packet that does not parse, or whose lengths or UDP checksum are wrong,
/// goes uncompressed and so arrives exactly as it was.
pub fn compress<'p>(
    rules: &RuleSet,
    packet: &'p [u8],
    dir: Direction,
    ctx: &Context,
) -> Compressed<'p> {
    if let Some((headers, computed)) = parse(packet, dir) {
        let fields = fields(&headers, &computed);
        let payload = &packet[packet.len() - headers.coap.payload.len()..];
        for rule in &rules.rules {
            if let Some(w) = try_rule(rule, &fields, dir, ctx) {
                return Compressed {
                    rule_id: rule.id,
                    residue_bits: w.bit_len(),
                    residue: w.into_bytes(),
                    payload,
                };
            }
        }
    }
    Compressed {
        rule_id: rules.no_compression,
        residue: Vec::new(),
        residue_bits: 0,
        payload: packet,
    }
}

/// The residue of `fields` under `rule`, if every field has a descriptor
/// with the same FID and FP applying to `dir`, and the other way round
/// (RFC 8724 §7.3), and every matching operator holds.
fn try_rule(rule: &Rule, fields: &[Field], dir: Direction, ctx: &Context) -> Option<BitWriter> {
    let mut descriptors = rule.fields.iter().filter(|d| d.di.applies(dir));
    let mut w = BitWriter::new();
    for field in fields {
        let d = descriptors.next()?;
        if d.fid != field.fid || d.fp != field.fp || !matches(d, &field.value, ctx) {
            return None;
        }
        residue(d, &field.value, &mut w)?;
    }
    descriptors.next().is_none().then_some(w)
}

fn be64(b: [u8; 8]) -> Value {
    Value::Uint(u64::from_be_bytes(b))
}

/// Whether `v` satisfies the descriptor's matching operator (RFC 8724 §7.4).
/// The `DevIID` and `AppIID` actions also need `v` to be the IID the context
/// rebuilds: coapcc never lets them change an address.
fn matches(d: &FieldDescriptor, v: &Value, ctx: &Context) -> bool {
    let iid_ok = match d.cda {
        Cda::DevIid => *v == be64(ctx.dev_iid),
        Cda::AppIid => *v == be64(ctx.app_iid),
        _ => true,
    };
    iid_ok
        && match (d.mo, &d.tv) {
            (MatchingOperator::Ignore, _) => true,
            (MatchingOperator::Equal, TargetValue::Value(t)) => t == v,
            (MatchingOperator::MatchMapping, TargetValue::List(list)) => list.contains(v),
            (MatchingOperator::Msb(x), TargetValue::Value(t)) => msb_equal(d.fl, x, t, v),
            _ => false,
        }
}

/// The `x` most significant bits of the `n`-bit value `v`.
pub(super) fn high(v: u64, n: u32, x: u32) -> u64 {
    if x == 0 {
        0
    } else {
        v >> (n - x)
    }
}

/// The `bits` low bits set.
pub(super) fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1 << bits) - 1
    }
}

fn msb_equal(fl: FieldLength, x: u32, t: &Value, v: &Value) -> bool {
    match (fl, t, v) {
        (FieldLength::Bits(n), Value::Uint(t), Value::Uint(v)) => {
            x <= n && high(*t, n, x) == high(*v, n, x)
        }
        (_, Value::Bytes(t), Value::Bytes(v)) => {
            let k = (x / 8) as usize;
            x.is_multiple_of(8) && t.len() >= k && v.len() >= k && t[..k] == v[..k]
        }
        _ => false,
    }
}

/// Appends the residue of field value `v` under `d` (RFC 8724 §7.5); `None`
/// when the action cannot express it (a descriptor inconsistent with its
/// field).
fn residue(d: &FieldDescriptor, v: &Value, w: &mut BitWriter) -> Option<()> {
    match d.cda {
        Cda::NotSent | Cda::ComputeLength | Cda::ComputeChecksum | Cda::DevIid | Cda::AppIid => {}
        Cda::ValueSent => sent(d.fl, v, 0, w)?,
        Cda::MappingSent => {
            let TargetValue::List(list) = &d.tv else {
                return None;
            };
            let index = list.iter().position(|t| t == v)?;
            w.push(index as u64, d.index_bits());
        }
        Cda::Lsb => {
            let MatchingOperator::Msb(x) = d.mo else {
                return None;
            };
            sent(d.fl, v, x, w)?;
        }
    }
    Some(())
}

/// Appends `v` without its `x` most significant bits, with a size prefix if
/// the field is variable-length (RFC 8724 §7.5.2) and none for the token,
/// whose length the TKL gives (RFC 8824 §4.5).
fn sent(fl: FieldLength, v: &Value, x: u32, w: &mut BitWriter) -> Option<()> {
    match (fl, v) {
        (FieldLength::Bits(n), Value::Uint(v)) if x <= n && *v <= mask(n) => {
            w.push(v & mask(n - x), n - x)
        }
        (FieldLength::Variable, Value::Bytes(b)) => {
            let low = b.get((x / 8) as usize..).filter(|l| l.len() <= 0xFFFF)?;
            w.push_size(low.len());
            w.push_bytes(low);
        }
        (FieldLength::Tkl, Value::Bytes(b)) => w.push_bytes(b.get((x / 8) as usize..)?),
        _ => return None,
    }
    Some(())
}
