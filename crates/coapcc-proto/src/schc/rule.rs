//! The representation of SCHC compression rules (RFC 8724 §7.1): a rule is
//! an 8-bit rule ID and an ordered list of field descriptors, each naming a
//! field (FID), its length (FL), its position (FP), the directions it applies
//! to (DI), a target value (TV), a matching operator (MO) and a
//! compression/decompression action (CDA).

/// The direction of a packet (RFC 8724 §7.1): up from the device (Dev) to
/// the application server (App), or down.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Dev → App (LoRaWAN uplink).
    Up,
    /// App → Dev (LoRaWAN downlink).
    Down,
}

/// The direction indicator (DI) of a field descriptor (RFC 8724 §7.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Di {
    /// Uplink packets only.
    Up,
    /// Downlink packets only.
    Down,
    /// Both directions.
    Bi,
}

impl From<Direction> for Di {
    /// The DI of a descriptor for packets going `dir` only.
    fn from(dir: Direction) -> Self {
        match dir {
            Direction::Up => Di::Up,
            Direction::Down => Di::Down,
        }
    }
}

impl Di {
    /// Whether a descriptor with this DI applies to a packet going `dir`.
    pub fn applies(self, dir: Direction) -> bool {
        matches!(
            (self, dir),
            (Di::Bi, _) | (Di::Up, Direction::Up) | (Di::Down, Direction::Down)
        )
    }
}

/// A field identifier (FID). IPv6 addresses and UDP ports are named by role
/// (Dev or App), not by position, so that one descriptor serves both
/// directions (RFC 8724 §10.7, §10.9); CoAP options are named by option
/// number (RFC 8824 §5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fid {
    /// IPv6 version (4 bits).
    Ipv6Version,
    /// IPv6 traffic class (8 bits).
    Ipv6TrafficClass,
    /// IPv6 flow label (20 bits).
    Ipv6FlowLabel,
    /// IPv6 payload length (16 bits).
    Ipv6PayloadLength,
    /// IPv6 next header (8 bits).
    Ipv6NextHeader,
    /// IPv6 hop limit (8 bits).
    Ipv6HopLimit,
    /// The device's 64-bit prefix.
    Ipv6DevPrefix,
    /// The device's 64-bit interface identifier.
    Ipv6DevIid,
    /// The application server's 64-bit prefix.
    Ipv6AppPrefix,
    /// The application server's 64-bit interface identifier.
    Ipv6AppIid,
    /// The device's UDP port (16 bits).
    UdpDevPort,
    /// The application server's UDP port (16 bits).
    UdpAppPort,
    /// UDP length (16 bits).
    UdpLength,
    /// UDP checksum (16 bits).
    UdpChecksum,
    /// CoAP version (2 bits).
    CoapVersion,
    /// CoAP type (2 bits).
    CoapType,
    /// CoAP token length (4 bits).
    CoapTkl,
    /// CoAP code (8 bits).
    CoapCode,
    /// CoAP message ID (16 bits).
    CoapMid,
    /// CoAP token (TKL bytes).
    CoapToken,
    /// A CoAP option, by number.
    CoapOption(u16),
}

/// The field length (FL, RFC 8724 §7.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FieldLength {
    /// A fixed number of bits (at most 64).
    Bits(u32),
    /// A variable number of bytes: a residue carries its size first (RFC 8724
    /// §7.5.2). CoAP option values (RFC 8824 §5).
    Variable,
    /// As many bytes as the CoAP token length says: the token's residue has no
    /// size prefix (RFC 8824 §4.5, the "tkl" function).
    Tkl,
}

/// A field value: a fixed-length field as an unsigned number, a
/// variable-length one as bytes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Value {
    /// A fixed-length field's value.
    Uint(u64),
    /// A variable-length field's value.
    Bytes(Vec<u8>),
}

/// The target value (TV, RFC 8724 §7.1).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum TargetValue {
    /// No target value (with the MO `ignore`).
    None,
    /// One value (for `equal` and `MSB(x)`).
    Value(Value),
    /// A list of values, indexed from 0 (for `match-mapping`, RFC 8724 §7.4).
    List(Vec<Value>),
}

/// The matching operator (MO, RFC 8724 §7.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MatchingOperator {
    /// The field equals the TV.
    Equal,
    /// Always matches.
    Ignore,
    /// The `x` most significant bits equal the TV's (a multiple of 8 for a
    /// variable-length field).
    Msb(u32),
    /// The field equals one of the TV list's values.
    MatchMapping,
}

/// The compression/decompression action (CDA, RFC 8724 §7.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cda {
    /// Nothing sent; the decompressor restores the TV.
    NotSent,
    /// The whole value sent (with a size prefix if variable-length).
    ValueSent,
    /// The index into the TV list sent, on the fewest bits that code every
    /// index.
    MappingSent,
    /// The bits below the `MSB(x)` of the MO sent.
    Lsb,
    /// Nothing sent; recomputed from the rebuilt packet (IPv6 payload
    /// length, UDP length).
    ComputeLength,
    /// Nothing sent; recomputed from the rebuilt packet (UDP checksum).
    ComputeChecksum,
    /// Nothing sent; the device's IID comes from the context (RFC 9011 derives
    /// it from the DevEUI and the AppSKey).
    DevIid,
    /// Nothing sent; the application's IID comes from the context.
    AppIid,
}

/// One field descriptor of a rule (RFC 8724 §7.1).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FieldDescriptor {
    /// Field identifier.
    pub fid: Fid,
    /// Field length.
    pub fl: FieldLength,
    /// Field position: 1 for the first occurrence (repeated CoAP options such
    /// as Uri-Path count up).
    pub fp: u8,
    /// Direction indicator.
    pub di: Di,
    /// Target value.
    pub tv: TargetValue,
    /// Matching operator.
    pub mo: MatchingOperator,
    /// Compression/decompression action.
    pub cda: Cda,
}

impl FieldDescriptor {
    /// A descriptor at position 1.
    pub fn new(
        fid: Fid,
        fl: FieldLength,
        di: Di,
        tv: TargetValue,
        mo: MatchingOperator,
        cda: Cda,
    ) -> Self {
        FieldDescriptor {
            fid,
            fl,
            fp: 1,
            di,
            tv,
            mo,
            cda,
        }
    }

    /// The number of bits of a `mapping-sent` index: the fewest that code
    /// every index of the TV list (RFC 8724 §7.5.5); 0 for other CDAs.
    pub fn index_bits(&self) -> u32 {
        match (&self.tv, self.cda) {
            (TargetValue::List(list), Cda::MappingSent) if list.len() > 1 => {
                usize::BITS - (list.len() - 1).leading_zeros()
            }
            _ => 0,
        }
    }
}

/// A compression rule: its ID and its field descriptors in packet order.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Rule {
    /// The rule ID (8 bits, carried in the LoRaWAN FPort, RFC 9011).
    pub id: u8,
    /// The field descriptors, in the order the fields appear in the packet
    /// (RFC 8724 §7.1); the residue follows this order.
    pub fields: Vec<FieldDescriptor>,
}

/// A set of compression rules and the rule ID that marks a packet sent
/// without compression (RFC 8724 §6: at least one is needed).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RuleSet {
    /// The compression rules, tried in order: the first that matches is used.
    pub rules: Vec<Rule>,
    /// The rule ID of packets sent uncompressed.
    pub no_compression: u8,
}

impl RuleSet {
    /// The compression rule with ID `id`.
    pub fn rule(&self, id: u8) -> Option<&Rule> {
        self.rules.iter().find(|r| r.id == id)
    }
}
