//! Workloads: how a client sends (spec `docs/spec/testbed-spec.md` §2).

use serde::{Deserialize, Serialize};

/// How a client sends (spec `docs/spec/testbed-spec.md` §2).
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
