//! Published figures of the constrained-link testbed (the project's specification,
//! `docs/spec/calibration-spec.md` §1), for side-by-side comparison with measured results.
//! Flow completion times in seconds; `None` where the source gives only a median.
//! Also the settings the pCoCoA paper ran its algorithms with on the grid
//! ([`grid_published_settings`]); the dumbbell's are
//! [`crate::calibrate::published_settings`].

use coapcc_link::dumbbell::Buffer;
use coapcc_link::errors::ErrorProfile;
use coapcc_sim::{AlgorithmSpec, WorkloadKind};

/// The settings the pCoCoA paper (Bolettieri et al., Ad Hoc Networks 2018,
/// Table II; spec `docs/spec/testbed-spec.md` §4) ran an algorithm with on the grid: Default
/// CoAP with ACK_TIMEOUT 3 s (Erbium 3.0's default, `docs/decisions/grid-choices.md`,
/// "Which Contiki"), every other algorithm (CoCoA+, 4-state-strong, CoCoA-E, pCoCoA) with its
/// spec defaults. A bare algorithm name in a grid campaign file means these.
pub fn grid_published_settings(name: &str) -> AlgorithmSpec {
    let mut a = AlgorithmSpec::named(name);
    if name == "default" {
        a.ack_timeout = Some(3.0);
    }
    a
}

/// One published row.
#[derive(Clone, Copy, Debug)]
pub struct PublishedRow {
    /// Clients.
    pub clients: u32,
    /// Workload.
    pub workload: WorkloadKind,
    /// Router buffer (bytes; `None` = infinite).
    pub buffer: Option<u64>,
    /// Link-error profile.
    pub errors: ErrorProfile,
    /// Registry name of the algorithm (`tcp` for CoAP over TCP).
    pub algorithm: &'static str,
    /// 10th, 25th, median, 75th, 90th percentile of FCT; only the median is
    /// always known.
    pub p10: Option<f64>,
    /// 25th percentile.
    pub p25: Option<f64>,
    /// Median.
    pub p50: f64,
    /// 75th percentile.
    pub p75: Option<f64>,
    /// 90th percentile.
    pub p90: Option<f64>,
}

impl PublishedRow {
    /// The buffer as a scenario value.
    pub fn buffer(&self) -> Buffer {
        self.buffer.map_or(Buffer::Infinite, Buffer::Bytes)
    }

    /// The replication count the published evaluations used: 20 error-free, 40
    /// error-prone (spec `docs/spec/testbed-spec.md` §1.3).
    pub fn replications(&self) -> u32 {
        if self.errors == ErrorProfile::None {
            20
        } else {
            40
        }
    }
}

const C: WorkloadKind = WorkloadKind::Continuous;
const R: WorkloadKind = WorkloadKind::Random;
const NONE: ErrorProfile = ErrorProfile::None;

const fn full(
    clients: u32,
    workload: WorkloadKind,
    buffer: Option<u64>,
    algorithm: &'static str,
    p: [f64; 5],
) -> PublishedRow {
    PublishedRow {
        clients,
        workload,
        buffer,
        errors: NONE,
        algorithm,
        p10: Some(p[0]),
        p25: Some(p[1]),
        p50: p[2],
        p75: Some(p[3]),
        p90: Some(p[4]),
    }
}

const fn median(
    clients: u32,
    workload: WorkloadKind,
    buffer: Option<u64>,
    algorithm: &'static str,
    p50: f64,
) -> PublishedRow {
    PublishedRow {
        clients,
        workload,
        buffer,
        errors: NONE,
        algorithm,
        p10: None,
        p25: None,
        p50,
        p75: None,
        p90: None,
    }
}

/// Every published row of `docs/spec/calibration-spec.md` §1. Where a row appears in both
/// tables, the one with all percentiles is kept. The 10-client rows say "no
/// errors" without a buffer: 10 clients never queue more than 930 bytes, so any
/// buffer of the evaluations gives the same result; they are run with 2500.
pub static PUBLISHED: &[PublishedRow] = &[
    full(
        1,
        C,
        Some(2500),
        "default",
        [33.003, 33.003, 33.003, 33.003, 33.003],
    ),
    full(
        1,
        C,
        Some(2500),
        "cocoa",
        [33.002, 33.002, 33.003, 33.003, 33.003],
    ),
    full(
        1,
        C,
        Some(2500),
        "tcp",
        [33.208, 33.208, 33.208, 33.208, 33.208],
    ),
    full(
        1,
        R,
        Some(2500),
        "tcp",
        [43.432, 45.099, 47.093, 47.746, 47.928],
    ),
    full(
        50,
        C,
        Some(2500),
        "default",
        [61.250, 61.500, 62.001, 63.342, 63.767],
    ),
    full(
        50,
        C,
        Some(2500),
        "cocoa",
        [61.275, 61.525, 62.001, 63.347, 63.767],
    ),
    full(
        50,
        C,
        Some(2500),
        "tcp",
        [62.102, 63.257, 65.032, 67.760, 72.684],
    ),
    full(
        50,
        R,
        Some(2500),
        "tcp",
        [83.196, 86.248, 88.433, 90.463, 93.199],
    ),
    full(
        50,
        C,
        None,
        "default",
        [62.177, 62.377, 62.690, 63.003, 63.178],
    ),
    full(
        50,
        C,
        None,
        "cocoa",
        [62.177, 62.377, 62.690, 63.003, 63.179],
    ),
    full(50, C, None, "tcp", [69.382, 69.570, 69.868, 70.184, 70.383]),
    full(50, R, None, "tcp", [85.789, 87.233, 90.086, 90.846, 91.259]),
    median(1, C, Some(2500), "fasor", 33.003),
    median(1, C, Some(2500), "fasor-token", 33.024),
    median(1, R, Some(2500), "default", 33.003),
    median(1, R, Some(2500), "cocoa", 33.003),
    median(1, R, Some(2500), "fasor", 33.005),
    median(1, R, Some(2500), "fasor-token", 33.025),
    median(10, C, Some(2500), "default", 33.220),
    median(10, C, Some(2500), "cocoa", 33.220),
    median(10, C, Some(2500), "tcp", 33.440),
    median(10, C, Some(2500), "fasor", 33.221),
    median(10, C, Some(2500), "fasor-token", 33.242),
    median(10, R, Some(2500), "default", 33.220),
    median(10, R, Some(2500), "cocoa", 33.220),
    median(10, R, Some(2500), "tcp", 47.598),
    median(10, R, Some(2500), "fasor", 33.222),
    median(10, R, Some(2500), "fasor-token", 33.243),
    median(100, C, Some(2500), "default", 101.6),
    median(100, C, Some(2500), "cocoa", 104.7),
    median(100, C, Some(2500), "tcp", 86.7),
    median(100, C, None, "default", 244.911),
    median(100, C, None, "cocoa", 125.870),
    median(100, C, None, "tcp", 146.308),
];
