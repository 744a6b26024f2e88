//! One replication of one point, measured on the kernel or computed by the
//! model, reduced to the figures the cross-check sets side by side.

use serde::{Deserialize, Serialize};

/// Which TCP produced a record.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "side", content = "name")]
pub enum Source {
    /// The host kernel (its `uname -r`).
    Kernel(String),
    /// The simulator with this TCP profile.
    Model(String),
}

impl Source {
    /// How the tables name it: `kernel 6.18.44` or `model tcp-linux6`.
    pub fn label(&self) -> String {
        match self {
            Source::Kernel(v) => format!("kernel {v}"),
            Source::Model(p) => format!("model {p}"),
        }
    }
}

/// Counters of one run, both ends and both directions summed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Counters {
    /// Segments sent again (data, FIN, SYN, SYN-ACK): the kernel's
    /// `Tcp.RetransSegs`.
    pub retransmitted_segments: u64,
    /// Tail loss probes (`TcpExt.TCPLossProbes`).
    pub loss_probes: u64,
    /// Retransmission timeouts (`TcpExt.TCPTimeouts`).
    pub timeouts: u64,
    /// Timeouts found spurious by F-RTO (`TcpExt.TCPSpuriousRTOs`).
    pub spurious_rtos: u64,
    /// D-SACK blocks received by senders (`TcpExt.TCPDSACKRecv`).
    pub dsacks: u64,
    /// IP bytes the uplink (client → server) serialised.
    pub bytes_up: u64,
    /// IP bytes the downlink (server → client) serialised.
    pub bytes_down: u64,
    /// Packets the router dropped at the full downlink buffer.
    pub downlink_drops: u64,
    /// Packets the router dropped at the full uplink buffer.
    pub uplink_drops: u64,
    /// TCP connections the clients opened.
    pub connections: u64,
    /// Exchanges that failed (connection given up).
    pub failed_exchanges: u64,
}

/// One replication of one point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// What produced it.
    pub source: Source,
    /// The replication (the seed of start offsets, batch sizes and link
    /// errors).
    pub replication: u32,
    /// Per client, its flow completion time (s); `None`: it did not finish.
    pub fct: Vec<Option<f64>>,
    /// The run's counters.
    pub counters: Counters,
}

/// The percentiles the cross-check shows.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Spread {
    /// Smallest.
    pub min: f64,
    /// 10th percentile.
    pub p10: f64,
    /// Median.
    pub median: f64,
    /// 90th percentile.
    pub p90: f64,
    /// Largest.
    pub max: f64,
}

impl Record {
    /// The FCT percentiles of this run over the clients that finished (the
    /// testbed's percentiles, `coapcc_sim::metrics::Percentiles`), `None` if
    /// none did.
    pub fn spread(&self) -> Option<Spread> {
        let mut v: Vec<f64> = self.fct.iter().flatten().copied().collect();
        if v.is_empty() {
            return None;
        }
        let p = coapcc_sim::metrics::Percentiles::of(&mut v);
        Some(Spread {
            min: p.min,
            p10: p.p10,
            median: p.p50,
            p90: p.p90,
            max: p.max,
        })
    }

    /// Clients that did not finish.
    pub fn unfinished(&self) -> usize {
        self.fct.iter().filter(|f| f.is_none()).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(fct: &[Option<f64>]) -> Record {
        Record {
            source: Source::Model("tcp".into()),
            replication: 0,
            fct: fct.to_vec(),
            counters: Counters::default(),
        }
    }

    #[test]
    fn the_testbeds_percentiles_of_ten_values() {
        // 1..=10, linear interpolation at position q·(n − 1) = 9q:
        // p10 at 0.9 → 1.9, median at 4.5 → 5.5, p90 at 8.1 → 9.1.
        let r = record(&(1..=10).map(|i| Some(f64::from(i))).collect::<Vec<_>>());
        let s = r.spread().unwrap();
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        assert!(
            close(s.p10, 1.9) && close(s.median, 5.5) && close(s.p90, 9.1),
            "{s:?}"
        );
        assert_eq!((s.min, s.max), (1.0, 10.0));
    }

    #[test]
    fn unfinished_clients_are_left_out_and_counted() {
        let r = record(&[Some(3.0), None, Some(1.0), None]);
        let s = r.spread().unwrap();
        assert_eq!((s.min, s.median, s.max), (1.0, 2.0, 3.0));
        assert_eq!(r.unfinished(), 2);
        assert!(record(&[None]).spread().is_none());
    }
}
