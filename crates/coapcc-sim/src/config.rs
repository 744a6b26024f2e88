//! What one simulated run is made of: the network, the CoAP settings, and the
//! groups of clients (workload × algorithm × count). Plain data, serialisable, so
//! that scenario files, campaigns and result stores share one description.

use serde::{Deserialize, Serialize};

use crate::link_errors::ErrorProfile;

/// The constrained-link testbed (spec `testbed.md` §1). Defaults are the spec's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Network {
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
    /// Router buffer per direction, bytes of waiting IP packets; `None` = infinite.
    pub buffer: Buffer,
    /// Router ↔ server one-way delay, uniform in [lo, hi] ms per packet.
    pub path_delay_ms: [f64; 2],
    /// Link-error profile on the bottleneck (both directions).
    pub errors: ErrorProfile,
}

impl Default for Network {
    fn default() -> Self {
        Network {
            uplink_bps: 60_000,
            downlink_bps: 30_000,
            uplink_delay_ms: 200.0,
            downlink_delay_ms: 400.0,
            mtu: 296,
            buffer: Buffer::Infinite,
            path_delay_ms: [10.0, 20.0],
            errors: ErrorProfile::None,
        }
    }
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
            "inf" | "infinite" => Some(Buffer::Infinite),
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

/// CoAP settings shared by every client of a run (spec `algorithms.md` §0.1, §7;
/// `testbed.md` §1.2).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Coap {
    /// MAX_RETRANSMIT (the evaluations: 20).
    pub max_retransmit: u8,
    /// Uri-Path of the request (5 characters in the testbed: a 6-byte option).
    pub path: String,
    /// Payload bytes of the server's 2.05 response.
    pub response_payload: usize,
}

impl Default for Coap {
    fn default() -> Self {
        Coap {
            max_retransmit: 20,
            path: "sense".into(),
            response_payload: 60,
        }
    }
}

/// How a client sends (spec `testbed.md` §2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum WorkloadKind {
    /// Back-to-back exchanges, state kept throughout.
    #[default]
    Continuous,
    /// Batches of random size; all congestion-control state discarded between.
    Random,
}

impl WorkloadKind {
    /// Parses `continuous|random`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "continuous" => Some(WorkloadKind::Continuous),
            "random" => Some(WorkloadKind::Random),
            _ => None,
        }
    }
    /// The name.
    pub fn name(self) -> &'static str {
        match self {
            WorkloadKind::Continuous => "continuous",
            WorkloadKind::Random => "random",
        }
    }
}

/// A workload: how many exchanges, and how they are cut into batches.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Workload {
    /// Continuous or random.
    pub kind: WorkloadKind,
    /// Exchanges per client (50).
    pub exchanges: u32,
    /// Batch sizes of random clients, uniform in [lo, hi] (1–10).
    pub batch: [u32; 2],
}

impl Default for Workload {
    fn default() -> Self {
        Workload {
            kind: WorkloadKind::Continuous,
            exchanges: 50,
            batch: [1, 10],
        }
    }
}

/// An algorithm with its parameters, as written in a scenario (spec
/// `algorithms.md` §8). `label` names it in reports (defaults to `name`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct AlgorithmSpec {
    /// Registry name (`default`, `cocoa`, …).
    pub name: String,
    /// Report label; defaults to the name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Timer cap (s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cap: Option<f64>,
    /// CoCoA / CoCoA+ aging.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aging: Option<bool>,
    /// FASOR first-sample rule: `draft`, `pseudocode`, `initk4`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_sample: Option<String>,
    /// FASOR SLOWRTO_FACTOR.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slowrto_factor: Option<f64>,
    /// ACK_TIMEOUT (s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ack_timeout: Option<f64>,
    /// ACK_RANDOM_FACTOR.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ack_random_factor: Option<f64>,
}

impl AlgorithmSpec {
    /// An algorithm by name with its spec defaults.
    pub fn named(name: &str) -> Self {
        AlgorithmSpec {
            name: name.into(),
            ..Default::default()
        }
    }

    /// The label used in reports.
    pub fn label(&self) -> &str {
        self.label.as_deref().unwrap_or(&self.name)
    }

    /// The parameters in the algorithm crate's form.
    pub fn params(&self) -> Result<coapcc_rto::AlgorithmParams, String> {
        let first_sample = match &self.first_sample {
            None => None,
            Some(s) => Some(coapcc_rto::FirstSample::parse(s).ok_or_else(|| {
                format!(
                    "first_sample: expected \"draft\", \"pseudocode\" or \"initk4\", found \"{s}\""
                )
            })?),
        };
        Ok(coapcc_rto::AlgorithmParams {
            cap: self.cap,
            aging: self.aging,
            first_sample,
            slowrto_factor: self.slowrto_factor,
            ack_timeout: self.ack_timeout,
            ack_random_factor: self.ack_random_factor,
        })
    }
}

/// A set of identical clients.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Group {
    /// The algorithm every client of the group runs.
    pub algorithm: AlgorithmSpec,
    /// Their workload.
    pub workload: Workload,
    /// How many clients.
    pub clients: u32,
}

/// Everything one simulated run needs, apart from the replication index.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunSpec {
    /// The network.
    pub network: Network,
    /// CoAP settings.
    pub coap: Coap,
    /// The client population (one group, or several for mixed populations).
    pub groups: Vec<Group>,
    /// The scenario seed; each replication derives its own.
    pub seed: u64,
}
