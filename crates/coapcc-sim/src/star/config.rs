//! What one run on the star is: the network, the bulk senders' workload and
//! the stations' TCP ([`RunSpec`]), and the checks that it can run.

use coapcc_link::star;
use coapcc_tcp::{SocketConfig, TcpConfig, TcpProfile};
use coapcc_workload::AlgorithmSpec;
use serde::{Deserialize, Serialize};

use crate::spec_error::SpecError;

/// The star's workload: bulk senders (the paper: 1024 bytes every 0.4 s,
/// 1000 times).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Workload {
    /// Writes per station.
    pub writes: u32,
    /// Bytes per write.
    pub write_bytes: u32,
    /// Time between writes (s).
    pub interval_s: f64,
    /// Stations connect at this time plus U[0, interval) (s).
    pub start_s: f64,
    /// How long after the last write is due the run may go on (s).
    pub drain_s: f64,
    /// Sampling period of the per-station traces (s).
    pub sample_s: f64,
    /// TCP maximum segment size (the paper: 536).
    pub mss: u16,
}

impl Default for Workload {
    fn default() -> Self {
        Workload {
            writes: 1000,
            write_bytes: 1024,
            interval_s: 0.4,
            start_s: 1.0,
            drain_s: 60.0,
            sample_s: 0.5,
            mss: 536,
        }
    }
}

/// One run on the star.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunSpec {
    /// The network.
    pub network: star::Config,
    /// The workload.
    pub workload: Workload,
    /// The stations' TCP (`tcp`, `tcp-lwip`, …).
    pub algorithm: AlgorithmSpec,
    /// The seed; each replication derives its own.
    pub seed: u64,
}

/// The stations' TCP configuration `algorithm` selects, for segments of at
/// most `mss` bytes.
pub fn tcp_config(algorithm: &AlgorithmSpec, mss: u16) -> Result<SocketConfig, SpecError> {
    let profile = TcpProfile::from_name(&algorithm.name).ok_or_else(|| {
        SpecError(format!(
            "algorithm `{}`: name: the star runs TCP senders; expected `tcp` or one of {}",
            algorithm.name,
            TcpProfile::names()
        ))
    })?;
    algorithm.check().map_err(SpecError)?;
    Ok(match profile.config(mss + 40) {
        SocketConfig::Linux(c) => SocketConfig::Linux(TcpConfig { mss, ..c }),
        lwip => lwip,
    })
}

/// Checks that `spec` can run.
pub fn validate(spec: &RunSpec) -> Result<(), SpecError> {
    spec.network.validate().map_err(SpecError)?;
    let w = &spec.workload;
    let positive = |v: f64| v > 0.0 && v.is_finite() && v <= 1e7;
    if w.writes == 0 || w.write_bytes == 0 || w.write_bytes > 1 << 20 {
        return Err(SpecError(
            "workload.writes, workload.write_bytes: expected at least 1 (and at most 1 MiB a write)"
                .into(),
        ));
    }
    if !positive(w.interval_s) || !positive(w.sample_s) {
        return Err(SpecError(
            "workload.interval_s, workload.sample_s: expected positive times up to 1e7 s".into(),
        ));
    }
    if !(0.0..=1e7).contains(&w.start_s) || !(0.0..=1e7).contains(&w.drain_s) {
        return Err(SpecError(
            "workload.start_s, workload.drain_s: expected 0 to 1e7 s".into(),
        ));
    }
    if !(64..=1460).contains(&w.mss) {
        return Err(SpecError(format!(
            "workload.mss: expected 64 to 1460 bytes, found {}",
            w.mss
        )));
    }
    tcp_config(&spec.algorithm, w.mss)?;
    Ok(())
}
