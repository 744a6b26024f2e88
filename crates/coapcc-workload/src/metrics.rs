//! Metrics of the testbed (spec `docs/spec/testbed-spec.md` §3), computed in one place from the
//! events a run records: per client (flow completion time, unnecessary
//! retransmissions, timers), per exchange (retransmissions histogram), per packet on
//! the bottleneck (bytes, busy time, drops by cause, unnecessary copies).

use serde::{Deserialize, Serialize};

pub use coapcc_link::dumbbell::LinkRecord;

/// What one client did in one run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ClientRecord {
    /// Index of the client's group in the run's population.
    pub group: u32,
    /// Flow completion time (s): first transmission of the first request to the
    /// end of the last exchange; `None` if the run ended first.
    pub fct: Option<f64>,
    /// Exchanges that completed with a response.
    pub completed: u32,
    /// Exchanges abandoned (MAX_RETRANSMIT reached or RST).
    pub failed: u32,
    /// Duplicate responses received (unnecessary retransmissions' echoes).
    pub unnecessary: u32,
    /// Retransmissions sent.
    pub retransmissions: u32,
    /// Timer expirations, and the largest expired timer (s).
    pub expirations: u32,
    /// The largest timer that expired (s); 0 if none did.
    pub max_expired_timer: f64,
    /// Sum of RTT samples E of completed exchanges (s), for the mean RTT.
    pub rtt_sum: f64,
    /// Spurious retransmissions the algorithm detected (pCoCoA, FASOR+Option).
    pub spurious_detected: u32,
    /// Piggybacked responses with an exchange's Message ID but none of its
    /// tokens (RFC 7252 §5.3.2): they acknowledged the request without
    /// answering it.
    #[serde(default)]
    pub mismatched_responses: u32,
    /// CoAP-over-TCP clients only: counters by kind (`unnecessary` is then their
    /// total of duplicate segments, SYNs, SYN-ACKs and CSMs received).
    /// Boxed: most clients run over UDP, and a record per client is kept for
    /// every client of a run (64 B less per client at a million clients).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp: Option<Box<crate::tcp_metrics::TcpRecord>>,
    /// Observers only (the `observe` workload): their notifications.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observe: Option<Box<crate::observe_metrics::ObserveRecord>>,
    /// Block-wise clients only (the `blockwise` workload): their transfers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transfers: Option<Box<crate::transfer_metrics::TransferRecord>>,
}

/// Conservation of packets, checked at the end of every run: every packet sent
/// is delivered, dropped with a cause, or still in flight.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Conservation {
    /// Packets handed to the network by clients and the server.
    pub sent: u64,
    /// Packets that reached their destination endpoint.
    pub delivered: u64,
    /// Packets dropped (buffer overflow + link error, both directions).
    pub dropped: u64,
    /// Packets found in queues, on links or on the path when the run ended.
    pub in_flight: u64,
}

impl Conservation {
    /// Whether the books balance.
    pub fn holds(&self) -> bool {
        self.sent == self.delivered + self.dropped + self.in_flight
    }
}

/// The outcome of one replication of one run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// One record per client, in client order.
    pub clients: Vec<ClientRecord>,
    /// Per group: exchanges by number of retransmissions (index 0 = original only).
    pub histograms: Vec<Vec<u64>>,
    /// Client → router.
    pub uplink: LinkRecord,
    /// Router → client.
    pub downlink: LinkRecord,
    /// Virtual time when the run ended (s).
    pub duration: f64,
    /// Events the engine processed.
    pub events: u64,
    /// Packet conservation.
    pub conservation: Conservation,
}

/// Min, 10th, 25th, 50th, 75th, 90th percentile and max.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Percentiles {
    /// Smallest value.
    pub min: f64,
    /// 10th percentile.
    pub p10: f64,
    /// 25th percentile.
    pub p25: f64,
    /// Median.
    pub p50: f64,
    /// 75th percentile.
    pub p75: f64,
    /// 90th percentile.
    pub p90: f64,
    /// Largest value.
    pub max: f64,
}

impl Percentiles {
    /// Each percentile averaged over `parts` (all zeros if there are none):
    /// how a figure measured per replication is combined over replications.
    pub fn mean_of(parts: &[Percentiles]) -> Self {
        if parts.is_empty() {
            return Percentiles::default();
        }
        let n = parts.len() as f64;
        let mean = |f: fn(&Percentiles) -> f64| parts.iter().map(f).sum::<f64>() / n;
        Percentiles {
            min: mean(|p| p.min),
            p10: mean(|p| p.p10),
            p25: mean(|p| p.p25),
            p50: mean(|p| p.p50),
            p75: mean(|p| p.p75),
            p90: mean(|p| p.p90),
            max: mean(|p| p.max),
        }
    }

    /// Percentiles of `values` (sorted in place). **Decision**: linear
    /// interpolation between the closest ranks (position `q·(n-1)`), the common
    /// default of statistics packages. Empty input gives all zeros.
    pub fn of(values: &mut [f64]) -> Self {
        if values.is_empty() {
            return Percentiles::default();
        }
        values.sort_by(f64::total_cmp);
        let q = |p: f64| quantile_sorted(values, p);
        Percentiles {
            min: values[0],
            p10: q(0.10),
            p25: q(0.25),
            p50: q(0.50),
            p75: q(0.75),
            p90: q(0.90),
            max: values[values.len() - 1],
        }
    }
}

/// The `p`-quantile of sorted values, linear interpolation.
pub fn quantile_sorted(sorted: &[f64], p: f64) -> f64 {
    let pos = p * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

/// A mean over replications with its 95 % confidence interval.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    /// The sample mean.
    pub mean: f64,
    /// Half-width of the 95 % confidence interval: t(0.975, n − 1) · s / √n
    /// (0 for fewer than two values).
    pub ci95: f64,
}

impl Estimate {
    /// The mean of `values` and its Student-t 95 % confidence interval.
    pub fn of(values: &[f64]) -> Self {
        let n = values.len();
        if n == 0 {
            return Estimate::default();
        }
        let mean = values.iter().sum::<f64>() / n as f64;
        if n < 2 {
            return Estimate { mean, ci95: 0.0 };
        }
        let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        Estimate {
            mean,
            ci95: student_t_975(n - 1) * (var / n as f64).sqrt(),
        }
    }
}

/// The 0.975 quantile of Student's t with `df` degrees of freedom (tables to
/// 30; the normal 1.960 beyond, which it approaches within 4 %).
pub fn student_t_975(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::NAN,
        1..=30 => T[df - 1],
        _ => 1.960,
    }
}

/// Drops by cause and direction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Drops {
    /// Uplink buffer overflow.
    pub buffer_up: u64,
    /// Downlink buffer overflow.
    pub buffer_down: u64,
    /// Uplink link errors.
    pub error_up: u64,
    /// Downlink link errors.
    pub error_down: u64,
}

/// The published metrics of one algorithm (one group label), over all clients
/// of all replications.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// The group's label.
    pub label: String,
    /// Clients × replications that were summarised.
    pub clients: u64,
    /// Replications.
    pub replications: u32,
    /// Flow completion time (s) of clients that finished.
    pub fct: Percentiles,
    /// Unnecessary retransmissions per client.
    pub unnecessary: Percentiles,
    /// Exchanges by number of retransmissions (index 0 = the original only,
    /// 1, 2, …): what the run table prints as "retransmissions/exchange".
    /// Serialised as `retransmissions_per_exchange`; stores written before
    /// the rename call it `histogram`, which still reads.
    #[serde(alias = "histogram")]
    pub retransmissions_per_exchange: Vec<u64>,
    /// Largest expired timer per client (s).
    pub max_expired_timer: Percentiles,
    /// Mean RTT sample E over completed exchanges (s).
    pub mean_rtt: f64,
    /// Exchanges abandoned.
    pub failed_exchanges: u64,
    /// Clients that had not finished when their run ended.
    pub unfinished_clients: u64,
    /// Spurious retransmissions detected by the algorithm.
    pub spurious_detected: u64,
    /// Piggybacked responses whose token was none of their exchange's
    /// (RFC 7252 §5.3.2), summed over clients.
    #[serde(default)]
    pub mismatched_responses: u64,
    /// Packet drops by cause, summed over replications (whole runs).
    pub drops: Drops,
    /// Mean bottleneck utilisation per direction over the runs: busy time /
    /// run duration.
    pub utilisation_up: f64,
    /// Downlink utilisation.
    pub utilisation_down: f64,
    /// Share of bottleneck bytes that carried unnecessary copies, per direction.
    pub unnecessary_share_up: f64,
    /// Downlink share.
    pub unnecessary_share_down: f64,
    /// CoAP-over-TCP counters summed over the group's clients (`None` for UDP
    /// groups).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp: Option<crate::tcp_metrics::TcpRecord>,
    /// Observers' notifications (`None` unless the group observes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observe: Option<crate::observe_metrics::ObserveSummary>,
    /// Block-wise transfers (`None` unless the group transfers block-wise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transfers: Option<crate::transfer_metrics::TransferSummary>,
}

impl Summary {
    /// Summarises the clients of group `group` in `runs` (one per replication).
    /// Link figures are those of the whole runs.
    pub fn of(label: &str, group: u32, runs: &[RunResult]) -> Self {
        let mut fct = Vec::new();
        let mut unnecessary = Vec::new();
        let mut timers = Vec::new();
        let mut s = Summary {
            label: label.to_string(),
            replications: runs.len() as u32,
            ..Summary::default()
        };
        let (mut rtt_sum, mut rtt_n) = (0.0, 0u64);
        let (mut up_bytes, mut down_bytes, mut up_unn, mut down_unn) = (0u64, 0u64, 0u64, 0u64);
        let (mut observers, mut transfers) = (Vec::new(), Vec::new());
        for run in runs {
            for c in run.clients.iter().filter(|c| c.group == group) {
                s.clients += 1;
                match c.fct {
                    Some(f) => fct.push(f),
                    None => s.unfinished_clients += 1,
                }
                unnecessary.push(f64::from(c.unnecessary));
                timers.push(c.max_expired_timer);
                s.failed_exchanges += u64::from(c.failed);
                s.spurious_detected += u64::from(c.spurious_detected);
                s.mismatched_responses += u64::from(c.mismatched_responses);
                rtt_sum += c.rtt_sum;
                rtt_n += u64::from(c.completed);
                if let Some(t) = &c.tcp {
                    s.tcp.get_or_insert_with(Default::default).add(t);
                }
                observers.extend(c.observe.as_deref());
                transfers.extend(c.transfers.as_deref());
            }
            if let Some(h) = run.histograms.get(group as usize) {
                if s.retransmissions_per_exchange.len() < h.len() {
                    s.retransmissions_per_exchange.resize(h.len(), 0);
                }
                for (acc, n) in s.retransmissions_per_exchange.iter_mut().zip(h) {
                    *acc += n;
                }
            }
            s.drops.buffer_up += run.uplink.dropped_buffer;
            s.drops.buffer_down += run.downlink.dropped_buffer;
            s.drops.error_up += run.uplink.dropped_error;
            s.drops.error_down += run.downlink.dropped_error;
            if run.duration > 0.0 {
                s.utilisation_up += run.uplink.busy / run.duration / runs.len() as f64;
                s.utilisation_down += run.downlink.busy / run.duration / runs.len() as f64;
            }
            up_bytes += run.uplink.bytes;
            down_bytes += run.downlink.bytes;
            up_unn += run.uplink.unnecessary_bytes;
            down_unn += run.downlink.unnecessary_bytes;
        }
        while s.retransmissions_per_exchange.last() == Some(&0) {
            s.retransmissions_per_exchange.pop();
        }
        if !observers.is_empty() {
            s.observe = Some(crate::observe_metrics::ObserveSummary::of(observers));
        }
        if !transfers.is_empty() {
            s.transfers = Some(crate::transfer_metrics::TransferSummary::of(transfers));
        }
        s.fct = Percentiles::of(&mut fct);
        s.unnecessary = Percentiles::of(&mut unnecessary);
        s.max_expired_timer = Percentiles::of(&mut timers);
        s.mean_rtt = if rtt_n > 0 {
            rtt_sum / rtt_n as f64
        } else {
            0.0
        };
        let share = |u: u64, b: u64| if b > 0 { u as f64 / b as f64 } else { 0.0 };
        s.unnecessary_share_up = share(up_unn, up_bytes);
        s.unnecessary_share_down = share(down_unn, down_bytes);
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_interpolate_linearly() {
        let mut v: Vec<f64> = (1..=11).map(f64::from).rev().collect();
        let p = Percentiles::of(&mut v);
        assert_eq!(
            (p.min, p.p10, p.p25, p.p50, p.p75, p.p90, p.max),
            (1.0, 2.0, 3.5, 6.0, 8.5, 10.0, 11.0)
        );
        let mut two = vec![10.0, 20.0];
        let p = Percentiles::of(&mut two);
        assert_eq!((p.p10, p.p50, p.p90), (11.0, 15.0, 19.0));
        assert_eq!(Percentiles::of(&mut []), Percentiles::default());
    }

    /// Twelve values 1..=12: mean 6.5, s² = 13, s/√12 = 1.0408; t(0.975,
    /// 11) = 2.201: half-width 2.2909.
    #[test]
    fn confidence_interval_by_hand() {
        let v: Vec<f64> = (1..=12).map(f64::from).collect();
        let e = Estimate::of(&v);
        assert_eq!(e.mean, 6.5);
        assert!((e.ci95 - 2.201 * (13.0f64 / 12.0).sqrt()).abs() < 1e-12);
        assert!((e.ci95 - 2.2909).abs() < 1e-4);
        assert_eq!(Estimate::of(&[3.0]).ci95, 0.0);
        assert_eq!(Estimate::of(&[]), Estimate::default());
    }

    #[test]
    fn summary_counts_only_its_group() {
        let run = RunResult {
            clients: vec![
                ClientRecord {
                    group: 0,
                    fct: Some(10.0),
                    unnecessary: 2,
                    completed: 2,
                    rtt_sum: 4.0,
                    ..Default::default()
                },
                ClientRecord {
                    group: 1,
                    fct: Some(99.0),
                    unnecessary: 9,
                    mismatched_responses: 100,
                    ..Default::default()
                },
                ClientRecord {
                    group: 0,
                    fct: None,
                    unnecessary: 4,
                    failed: 1,
                    mismatched_responses: 3,
                    ..Default::default()
                },
            ],
            histograms: vec![vec![3, 1, 0, 0], vec![5]],
            duration: 100.0,
            uplink: LinkRecord {
                busy: 50.0,
                bytes: 100,
                unnecessary_bytes: 25,
                ..Default::default()
            },
            ..Default::default()
        };
        let s = Summary::of("a", 0, &[run.clone(), run]);
        assert_eq!(s.clients, 4);
        assert_eq!(s.unfinished_clients, 2);
        assert_eq!(s.fct.p50, 10.0);
        assert_eq!(s.unnecessary.p50, 3.0);
        assert_eq!(s.retransmissions_per_exchange, vec![6, 2]);
        assert_eq!(s.failed_exchanges, 2);
        assert_eq!(s.mismatched_responses, 6);
        assert_eq!(s.mean_rtt, 2.0);
        assert_eq!(s.utilisation_up, 0.5);
        assert_eq!(s.unnecessary_share_up, 0.25);
    }
}
