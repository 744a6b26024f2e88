//! The dumbbell's parameters: the `[network]` table of a dumbbell scenario,
//! its router buffer size, and their checks.

use serde::{Deserialize, Serialize};

use crate::errors::{ErrorProfile, ErrorStructure};

/// The testbed's parameters (spec `docs/spec/testbed-spec.md` §1); defaults are the spec's.
/// The `[network]` table of a dumbbell scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// `kind = "dumbbell"` in a scenario file (the default kind).
    #[serde(skip_serializing)]
    pub kind: Kind,
    /// Bottleneck rate client → router (bit/s).
    pub uplink_bps: u64,
    /// Bottleneck rate router → client (bit/s).
    pub downlink_bps: u64,
    /// One-way propagation delay of the uplink (ms).
    pub uplink_delay_ms: f64,
    /// One-way propagation delay of the downlink (ms).
    pub downlink_delay_ms: f64,
    /// Link MTU (bytes, IP level).
    pub mtu: usize,
    /// Router buffer per direction, bytes of waiting IP packets.
    pub buffer: Buffer,
    /// Router ↔ server one-way delay, uniform in [lo, hi] ms per packet.
    pub path_delay_ms: [f64; 2],
    /// Link-error profile on the bottleneck (both directions).
    pub errors: ErrorProfile,
    /// How the error process is built where the sources leave it open
    /// (`[network.error_structure]`; the ablation of `docs/calibration.md`).
    /// Left out: the model as run.
    #[serde(skip_serializing_if = "ErrorStructure::is_default")]
    pub error_structure: ErrorStructure,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            kind: Kind::Dumbbell,
            uplink_bps: 60_000,
            downlink_bps: 30_000,
            uplink_delay_ms: 200.0,
            downlink_delay_ms: 400.0,
            mtu: 296,
            buffer: Buffer::Infinite,
            path_delay_ms: [10.0, 20.0],
            errors: ErrorProfile::None,
            error_structure: ErrorStructure::default(),
        }
    }
}

/// The longest delay a dumbbell takes, in ms: 10⁷ s, the bound every
/// duration of coapcc has (far beyond any real path, far below where the
/// conversion to nanoseconds would overflow).
pub const MAX_DELAY_MS: f64 = 1e10;

impl Config {
    /// Checks the propagation and path delays: finite, `>= 0`, at most
    /// [`MAX_DELAY_MS`], and `lo <= hi`. Errors name the field.
    pub fn validate_delays(&self) -> Result<(), String> {
        let ok = |ms: f64| (0.0..=MAX_DELAY_MS).contains(&ms);
        for (field, ms) in [
            ("uplink_delay_ms", self.uplink_delay_ms),
            ("downlink_delay_ms", self.downlink_delay_ms),
        ] {
            if !ok(ms) {
                return Err(format!(
                    "network.{field}: expected a delay from 0 to 1e10 ms (1e7 s), found {ms}"
                ));
            }
        }
        let [lo, hi] = self.path_delay_ms;
        if !(ok(lo) && ok(hi) && lo <= hi) {
            return Err(format!(
                "network.path_delay_ms: expected [lo, hi] with 0 <= lo <= hi <= 1e10 ms (1e7 s), found [{lo}, {hi}]"
            ));
        }
        Ok(())
    }

    /// This network sped up `f` times: rates × `f`, propagation and path delays
    /// ÷ `f`. Buffers (bytes) and the link-error processes (whose sojourn times
    /// are fixed by the model) are unchanged.
    pub fn scaled(&self, f: f64) -> Config {
        Config {
            uplink_bps: (self.uplink_bps as f64 * f).round() as u64,
            downlink_bps: (self.downlink_bps as f64 * f).round() as u64,
            uplink_delay_ms: self.uplink_delay_ms / f,
            downlink_delay_ms: self.downlink_delay_ms / f,
            path_delay_ms: [self.path_delay_ms[0] / f, self.path_delay_ms[1] / f],
            ..self.clone()
        }
    }
}

/// The `kind` a dumbbell's `[network]` table may state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// The constrained-link dumbbell.
    #[default]
    Dumbbell,
}

/// A router buffer size: a byte count, or `"inf"` (never drops).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Buffer {
    /// A tail-drop limit in bytes.
    Bytes(u64),
    /// Never drops.
    Infinite,
}

impl Serialize for Buffer {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Buffer::Bytes(b) => s.serialize_u64(*b),
            Buffer::Infinite => s.serialize_str("inf"),
        }
    }
}

impl<'de> Deserialize<'de> for Buffer {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Buffer;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a buffer size in bytes (an integer ≥ 1) or \"inf\"")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Buffer, E> {
                if v == 0 {
                    return Err(E::invalid_value(serde::de::Unexpected::Unsigned(0), &self));
                }
                Ok(Buffer::Bytes(v))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Buffer, E> {
                if v <= 0 {
                    return Err(E::invalid_value(serde::de::Unexpected::Signed(v), &self));
                }
                Ok(Buffer::Bytes(v as u64))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Buffer, E> {
                Buffer::parse(v)
                    .ok_or_else(|| E::invalid_value(serde::de::Unexpected::Str(v), &self))
            }
        }
        d.deserialize_any(V)
    }
}

impl Buffer {
    /// Parses `inf` or a byte count (an optional trailing `B` is accepted).
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "inf" => Some(Buffer::Infinite),
            _ => match s.trim_end_matches('B').parse() {
                Ok(0) | Err(_) => None,
                Ok(b) => Some(Buffer::Bytes(b)),
            },
        }
    }

    /// The limit in bytes, `None` when infinite.
    pub fn limit(self) -> Option<u64> {
        match self {
            Buffer::Bytes(b) => Some(b),
            Buffer::Infinite => None,
        }
    }

    /// A short label: `2500` or `inf`.
    pub fn label(self) -> String {
        match self {
            Buffer::Bytes(b) => b.to_string(),
            Buffer::Infinite => "inf".into(),
        }
    }
}
