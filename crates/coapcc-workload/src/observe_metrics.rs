//! What observers measure (RFC 7641 workloads): for each change of the
//! observed resource, whether the observer got it, when, and how stale its
//! view was meanwhile. Kept per observer in
//! [`crate::metrics::ClientRecord::observe`] and summarised in
//! [`crate::metrics::Summary::observe`].
//!
//! Every change an observer was registered for ends in exactly one of three
//! ways: **delivered** (handed to the application, fresher than anything
//! before it), **superseded** (never sent to this observer, or abandoned in
//! flight, because a fresher state replaced it: RFC 7641 §4.5.2), or
//! **lost** (sent, never delivered). So `generated = delivered + superseded
//! + lost`.

use serde::{Deserialize, Serialize};

use crate::metrics::Percentiles;

/// One observer's notifications in one run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ObserveRecord {
    /// Changes of the resource while the observer was registered.
    pub generated: u32,
    /// Changes handed to the observer's application.
    pub delivered: u32,
    /// Changes replaced by a fresher one before they reached the observer.
    pub superseded: u32,
    /// Changes sent and never delivered.
    pub lost: u32,
    /// Notifications that arrived older than one already delivered
    /// (RFC 7641 §3.4) and were discarded.
    pub discarded: u32,
    /// Confirmable notifications the server sent to this observer
    /// (originals; their retransmissions are in
    /// [`crate::metrics::ClientRecord::retransmissions`]).
    pub confirmable: u32,
    /// Non-confirmable notifications the server sent to it.
    pub non_confirmable: u32,
    /// Times the observer registered again (RFC 7641 §3.3.1).
    pub reregistrations: u32,
    /// Delay of each delivered change (s): from the change at the server to
    /// its delivery, in delivery order.
    pub delays: Vec<f64>,
    /// Mean age of the observer's view (s): the time average, from its first
    /// delivery to the end of the run, of the time since the change it
    /// holds was made.
    pub mean_age: f64,
}

/// What an algorithm's observers came to, over all observers of all
/// replications.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ObserveSummary {
    /// Changes observers were registered for.
    pub generated: u64,
    /// Delivered.
    pub delivered: u64,
    /// Superseded.
    pub superseded: u64,
    /// Lost.
    pub lost: u64,
    /// Discarded as older.
    pub discarded: u64,
    /// Confirmable notifications sent (originals).
    pub confirmable: u64,
    /// Non-confirmable notifications sent.
    pub non_confirmable: u64,
    /// Re-registrations.
    pub reregistrations: u64,
    /// Delay of every delivered change (s).
    pub delay: Percentiles,
    /// Mean age per observer (s).
    pub age: Percentiles,
}

impl ObserveSummary {
    /// Share of generated changes that were delivered (0 when none were
    /// generated).
    pub fn delivery_ratio(&self) -> f64 {
        if self.generated == 0 {
            0.0
        } else {
            self.delivered as f64 / self.generated as f64
        }
    }

    /// Combines the summaries of several replications: counts add up, each
    /// percentile is the mean of the replications' (a result store keeps
    /// each replication's summary, not every observer's delays).
    pub fn combine(parts: &[ObserveSummary]) -> Self {
        let sum = |f: fn(&ObserveSummary) -> u64| parts.iter().map(f).sum();
        let delays: Vec<_> = parts.iter().map(|p| p.delay).collect();
        let ages: Vec<_> = parts.iter().map(|p| p.age).collect();
        ObserveSummary {
            generated: sum(|p| p.generated),
            delivered: sum(|p| p.delivered),
            superseded: sum(|p| p.superseded),
            lost: sum(|p| p.lost),
            discarded: sum(|p| p.discarded),
            confirmable: sum(|p| p.confirmable),
            non_confirmable: sum(|p| p.non_confirmable),
            reregistrations: sum(|p| p.reregistrations),
            delay: Percentiles::mean_of(&delays),
            age: Percentiles::mean_of(&ages),
        }
    }

    /// Summarises `records`.
    pub fn of<'a>(records: impl IntoIterator<Item = &'a ObserveRecord>) -> Self {
        let mut s = ObserveSummary::default();
        let (mut delays, mut ages) = (Vec::new(), Vec::new());
        for r in records {
            s.generated += u64::from(r.generated);
            s.delivered += u64::from(r.delivered);
            s.superseded += u64::from(r.superseded);
            s.lost += u64::from(r.lost);
            s.discarded += u64::from(r.discarded);
            s.confirmable += u64::from(r.confirmable);
            s.non_confirmable += u64::from(r.non_confirmable);
            s.reregistrations += u64::from(r.reregistrations);
            delays.extend_from_slice(&r.delays);
            if r.delivered > 0 {
                ages.push(r.mean_age);
            }
        }
        s.delay = Percentiles::of(&mut delays);
        s.age = Percentiles::of(&mut ages);
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_summary_adds_counts_and_pools_delays() {
        let a = ObserveRecord {
            generated: 10,
            delivered: 7,
            superseded: 2,
            lost: 1,
            delays: vec![0.1, 0.3, 0.2],
            mean_age: 2.0,
            ..ObserveRecord::default()
        };
        let b = ObserveRecord {
            generated: 10,
            delivered: 0,
            lost: 10,
            ..ObserveRecord::default()
        };
        let s = ObserveSummary::of([&a, &b]);
        assert_eq!(
            (s.generated, s.delivered, s.superseded, s.lost),
            (20, 7, 2, 11)
        );
        assert_eq!(s.delivery_ratio(), 0.35);
        assert_eq!((s.delay.min, s.delay.p50, s.delay.max), (0.1, 0.2, 0.3));
        // An observer that got nothing has no age.
        assert_eq!((s.age.min, s.age.max), (2.0, 2.0));
        let mut t = s.clone();
        t.delay.p50 = 0.4;
        let c = ObserveSummary::combine(&[s.clone(), t]);
        assert_eq!((c.generated, c.lost), (40, 22));
        // (0.2 + 0.4) / 2
        assert!((c.delay.p50 - 0.3).abs() < 1e-12);
        assert_eq!(c.delay.max, 0.3);
    }
}
