//! What block-wise transfers measure (RFC 7959 workloads): how long each
//! whole transfer took and the goodput it had. Kept per client in
//! [`crate::metrics::ClientRecord::transfers`] and summarised in
//! [`crate::metrics::Summary::transfers`]; the block exchanges themselves
//! are counted as any exchange (retransmissions, histograms, RTTs).

use serde::{Deserialize, Serialize};

use crate::metrics::Percentiles;

/// One client's transfers in one run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TransferRecord {
    /// Bytes of each transfer's representation.
    pub size: u32,
    /// Transfers completed: every block exchanged and the body reassembled
    /// exactly.
    pub completed: u32,
    /// Transfers abandoned (a block exchange failed, or the peer refused).
    pub failed: u32,
    /// Completion time of each completed transfer (s): from the first
    /// transmission of its first block to the response of its last.
    pub times: Vec<f64>,
}

/// What an algorithm's transfers came to, over all clients of all
/// replications.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TransferSummary {
    /// Transfers completed.
    pub completed: u64,
    /// Transfers abandoned.
    pub failed: u64,
    /// Completion time per completed transfer (s).
    pub completion: Percentiles,
    /// Goodput per completed transfer (bit/s): the representation's bytes
    /// over its completion time.
    pub goodput: Percentiles,
}

impl TransferSummary {
    /// Combines the summaries of several replications: counts add up, each
    /// percentile is the mean of the replications'.
    pub fn combine(parts: &[TransferSummary]) -> Self {
        let times: Vec<_> = parts.iter().map(|p| p.completion).collect();
        let goodput: Vec<_> = parts.iter().map(|p| p.goodput).collect();
        TransferSummary {
            completed: parts.iter().map(|p| p.completed).sum(),
            failed: parts.iter().map(|p| p.failed).sum(),
            completion: Percentiles::mean_of(&times),
            goodput: Percentiles::mean_of(&goodput),
        }
    }

    /// Summarises `records`.
    pub fn of<'a>(records: impl IntoIterator<Item = &'a TransferRecord>) -> Self {
        let mut s = TransferSummary::default();
        let (mut times, mut goodput) = (Vec::new(), Vec::new());
        for r in records {
            s.completed += u64::from(r.completed);
            s.failed += u64::from(r.failed);
            for &t in &r.times {
                times.push(t);
                if t > 0.0 {
                    goodput.push(f64::from(r.size) * 8.0 / t);
                }
            }
        }
        s.completion = Percentiles::of(&mut times);
        s.goodput = Percentiles::of(&mut goodput);
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn goodput_is_bits_over_completion_time() {
        let r = TransferRecord {
            size: 2048,
            completed: 2,
            failed: 1,
            times: vec![2.0, 4.0],
        };
        let s = TransferSummary::of([&r]);
        assert_eq!((s.completed, s.failed), (2, 1));
        assert_eq!((s.completion.min, s.completion.max), (2.0, 4.0));
        // 2048 B × 8 / 4 s and / 2 s.
        assert_eq!((s.goodput.min, s.goodput.max), (4096.0, 8192.0));
        let mut t = s.clone();
        t.completion.max = 6.0;
        let c = TransferSummary::combine(&[s, t]);
        assert_eq!((c.completed, c.failed, c.completion.max), (4, 2, 5.0));
    }
}
