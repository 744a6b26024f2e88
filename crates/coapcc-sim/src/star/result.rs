//! What one run on the star produces: per station, its bytes, retransmissions
//! and sampled TCP state; the goodput at the sink and what the medium did.

use coapcc_link::star::StarRecord;
use coapcc_workload::metrics::Conservation;
use serde::{Deserialize, Serialize};

/// One sample of a station's TCP state.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct TcpSample {
    /// Seconds since the start of the run.
    pub t: f64,
    /// Congestion window (bytes).
    pub cwnd: u64,
    /// Slow-start threshold (bytes).
    pub ssthresh: u64,
    /// Retransmission timeout in force (s).
    pub rto: f64,
    /// Smoothed RTT (s; 0 before the first sample).
    pub srtt: f64,
}

/// What one station did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StationResult {
    /// Its number (1 …).
    pub station: u32,
    /// Bytes its application wrote.
    pub written: u64,
    /// Bytes the sink received from it.
    pub received: u64,
    /// Whether every byte written was acknowledged.
    pub complete: bool,
    /// Segments it resent, its SYNs included (as Linux's `RetransSegs`
    /// counts them: [`Self::timeouts`] counts the handshake's timeouts too).
    pub retransmitted_segments: u64,
    /// Retransmission timeouts, the handshake's included.
    pub timeouts: u64,
    /// Fast retransmits.
    pub fast_retransmits: u64,
    /// RTT samples taken.
    pub rtt_samples: u64,
    /// The largest RTO that expired (s; 0 if none did).
    pub max_expired_rto: f64,
    /// The largest RTO in force at any sample (s).
    pub max_rto: f64,
    /// Its sampled TCP state.
    pub trace: Vec<TcpSample>,
}

/// The outcome of one replication on the star.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// Per station.
    pub stations: Vec<StationResult>,
    /// Goodput at the sink (bit/s from the first write to the last byte
    /// received).
    pub goodput_bps: f64,
    /// What the wireless part did.
    pub mac: StarRecord,
    /// When the run ended (s).
    pub duration: f64,
    /// Events processed.
    pub events: u64,
    /// Packets handed to the network = delivered + dropped + in flight.
    pub conservation: Conservation,
}
