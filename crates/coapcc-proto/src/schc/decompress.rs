//! Decompression (RFC 8724 §7.3): the rule named by the rule ID says which
//! residues follow, in which order and of which sizes; the rest of the SCHC
//! packet, less the padding, is the payload. Lengths and the UDP checksum are
//! computed last, over the rebuilt packet.

use core::fmt;

use super::bits::BitReader;
use super::compress::{high, mask};
use super::fields::{blank, set, BadValue};
use super::packet::assemble;
use super::profile::Context;
use super::rule::{
    Cda, Direction, Fid, FieldDescriptor, FieldLength, MatchingOperator, RuleSet, TargetValue,
    Value,
};
use crate::message::EncodeError;

/// Why a SCHC packet does not decompress.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecompressError {
    /// No rule has this ID.
    UnknownRule(u8),
    /// The residue ends inside this field.
    Truncated(Fid),
    /// A mapping index past the end of this field's TV list.
    BadIndex(Fid),
    /// The rule's descriptor for this field cannot be applied (a `not-sent`
    /// without a single TV, an `LSB` without `MSB(x)`, a length mismatch).
    BadRule(Fid),
    /// The value rebuilt for this field does not fit it.
    BadValue(Fid),
    /// The rebuilt CoAP message cannot be encoded (a token over 8 bytes, an
    /// Empty message with a payload, a reserved code class).
    BadMessage(EncodeError),
}

impl fmt::Display for DecompressError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecompressError::UnknownRule(id) => write!(f, "no SCHC rule has ID {id}"),
            DecompressError::Truncated(fid) => write!(f, "SCHC residue ends inside {fid:?}"),
            DecompressError::BadIndex(fid) => {
                write!(f, "SCHC mapping index past the end of the {fid:?} list")
            }
            DecompressError::BadRule(fid) => {
                write!(f, "the SCHC rule's descriptor of {fid:?} cannot be applied")
            }
            DecompressError::BadValue(fid) => write!(f, "decompressed {fid:?} does not fit"),
            DecompressError::BadMessage(e) => write!(f, "decompressed CoAP message: {e}"),
        }
    }
}

impl std::error::Error for DecompressError {}

impl From<BadValue> for DecompressError {
    fn from(b: BadValue) -> Self {
        DecompressError::BadValue(b.0)
    }
}

/// Rebuilds the IPv6 + UDP + CoAP packet from the SCHC packet `bytes`
/// (residue, payload, padding) that came with `rule_id` going `dir`.
/// Under the no-compression rule, `bytes` is the packet itself.
pub fn decompress(
    rules: &RuleSet,
    rule_id: u8,
    bytes: &[u8],
    dir: Direction,
    ctx: &Context,
) -> Result<Vec<u8>, DecompressError> {
    if rule_id == rules.no_compression {
        return Ok(bytes.to_vec());
    }
    let rule = rules
        .rule(rule_id)
        .ok_or(DecompressError::UnknownRule(rule_id))?;
    let mut r = BitReader::new(bytes);
    let mut h = blank();
    let mut tkl = 0usize;
    for d in rule.fields.iter().filter(|d| d.di.applies(dir)) {
        let Some(value) = field(d, &mut r, tkl, ctx)? else {
            continue;
        };
        if d.fid == Fid::CoapTkl {
            let Value::Uint(v) = value else {
                return Err(DecompressError::BadValue(d.fid));
            };
            tkl = v as usize;
            continue;
        }
        set(&mut h, d.fid, value)?;
    }
    // Fewer than 8 bits left are padding (RFC 8724 §9).
    let payload_len = r.remaining() / 8;
    h.coap.payload = r.read_bytes(payload_len).unwrap_or_default();
    assemble(&h, dir).map_err(DecompressError::BadMessage)
}

/// The value of field `d` from the residue; `None` for a computed field.
fn field(
    d: &FieldDescriptor,
    r: &mut BitReader<'_>,
    tkl: usize,
    ctx: &Context,
) -> Result<Option<Value>, DecompressError> {
    let truncated = DecompressError::Truncated(d.fid);
    let bad_rule = DecompressError::BadRule(d.fid);
    let tv = match &d.tv {
        TargetValue::Value(v) => Some(v),
        _ => None,
    };
    let value = match d.cda {
        Cda::ComputeLength | Cda::ComputeChecksum => return Ok(None),
        Cda::DevIid => Value::Uint(u64::from_be_bytes(ctx.dev_iid)),
        Cda::AppIid => Value::Uint(u64::from_be_bytes(ctx.app_iid)),
        Cda::NotSent => tv.ok_or(bad_rule)?.clone(),
        Cda::ValueSent => read(d.fl, 0, r, tkl).ok_or(truncated)?,
        Cda::MappingSent => {
            let TargetValue::List(list) = &d.tv else {
                return Err(bad_rule);
            };
            let index = r.read(d.index_bits()).ok_or(truncated)?;
            let value = usize::try_from(index).ok().and_then(|i| list.get(i));
            value.ok_or(DecompressError::BadIndex(d.fid))?.clone()
        }
        Cda::Lsb => {
            let (MatchingOperator::Msb(x), Some(tv)) = (d.mo, tv) else {
                return Err(bad_rule);
            };
            let low = read(d.fl, x, r, tkl).ok_or(truncated)?;
            join(d.fl, x, tv, low).ok_or(bad_rule)?
        }
    };
    Ok(Some(value))
}

/// Reads a field's residue without its `x` most significant bits.
fn read(fl: FieldLength, x: u32, r: &mut BitReader<'_>, tkl: usize) -> Option<Value> {
    let skip = (x / 8) as usize;
    Some(match fl {
        FieldLength::Bits(n) => Value::Uint(r.read(n.checked_sub(x)?)?),
        FieldLength::Variable => {
            let size = r.read_size()?;
            Value::Bytes(r.read_bytes(size)?)
        }
        FieldLength::Tkl => Value::Bytes(r.read_bytes(tkl.checked_sub(skip)?)?),
    })
}

/// The TV's `x` most significant bits followed by the received `low` part
/// (RFC 8724 §7.5.6).
fn join(fl: FieldLength, x: u32, tv: &Value, low: Value) -> Option<Value> {
    match (fl, tv, low) {
        (FieldLength::Bits(n), Value::Uint(t), Value::Uint(low)) => {
            let hi = if x == 0 { 0 } else { high(*t, n, x) << (n - x) };
            Some(Value::Uint(hi | (low & mask(n - x))))
        }
        (_, Value::Bytes(t), Value::Bytes(low)) => {
            let mut v = t.get(..(x / 8) as usize)?.to_vec();
            v.extend_from_slice(&low);
            Some(Value::Bytes(v))
        }
        _ => None,
    }
}
