//! What one dumbbell run will cost, estimated from its spec before it starts
//! (checked by [`crate::budget`]; [`crate::cost`] says what is measured).

use coapcc_link::errors::ErrorProfile;
use coapcc_sim::dumbbell::RunSpec;
use coapcc_sim::metrics::ClientRecord;
use coapcc_sim::AlgorithmSpec;

use crate::cost::{count, size, RunCost};

/// Memory a running dumbbell simulation holds per client (bytes), measured
/// on the scale set: 0.99 KiB (Default CoAP) and 1.08 KiB (CoCoA) at 10⁶
/// clients, rounded up to 1.25 KiB (`docs/performance.md`, "Scale: 10³ to
/// 10⁷ clients").
pub const LIVE_BYTES_PER_CLIENT: u64 = 1280;

/// Events the dumbbell processes per exchange (measured: 12 for Default
/// CoAP behind the infinite buffer, 6 for CoCoA).
pub const EVENTS_PER_EXCHANGE: u64 = 12;

/// State changes of a lossy dumbbell link per second of virtual time: a
/// good and a bad sojourn average about 0.5 s, and the error process walks
/// every one of them up to the next packet (two links).
pub const ERROR_SWITCHES_PER_SECOND: f64 = 2.0 * 4.0;

/// The expected virtual time of one exchange of a client running `a` when
/// each transmission fails with probability `q`: its timers, doubling from
/// the mean initial one up to the cap, each reached with probability `q`
/// per earlier transmission (60 s and 2 × 1.25 s when unset: Default CoAP's).
fn exchange_seconds(a: &AlgorithmSpec, q: f64, max_retransmit: u8) -> f64 {
    let cap = a.cap.unwrap_or(60.0);
    let first = a.ack_timeout.unwrap_or(2.0) * (1.0 + a.ack_random_factor.unwrap_or(1.5)) / 2.0;
    (0..=i32::from(max_retransmit))
        .map(|k| q.powi(k) * (first * 2f64.powi(k)).min(cap))
        .sum()
}

/// One run on the dumbbell: its exchanges' events and, on lossy links, the
/// error process's walk over the run's virtual time (long only when timers
/// are set near their 10⁷ s bound).
pub fn run_cost(spec: &RunSpec) -> RunCost {
    let clients: u64 = spec.groups.iter().map(|g| u64::from(g.clients)).sum();
    let exchanges: u64 = spec
        .groups
        .iter()
        .map(|g| u64::from(g.clients).saturating_mul(u64::from(g.workload.exchanges)))
        .fold(0, u64::saturating_add);
    let exchange_events = exchanges.saturating_mul(EVENTS_PER_EXCHANGE);
    let walk = if spec.network.errors == ErrorProfile::None {
        0
    } else {
        // A request or its response lost: the exchange times out.
        let p = spec.network.errors.average_loss();
        let q = 1.0 - (1.0 - p) * (1.0 - p);
        let seconds = spec
            .groups
            .iter()
            .map(|g| {
                f64::from(g.workload.exchanges)
                    * exchange_seconds(&g.algorithm, q, spec.coap.max_retransmit)
            })
            .fold(0.0, f64::max);
        count(seconds * ERROR_SWITCHES_PER_SECOND)
    };
    RunCost {
        live: clients.saturating_mul(LIVE_BYTES_PER_CLIENT),
        result: clients.saturating_mul(size::<ClientRecord>()),
        memory_field: "clients",
        events: exchange_events.saturating_add(walk),
        events_field: if walk > exchange_events {
            "algorithm.cap, algorithm.ack_timeout"
        } else {
            "workload.exchanges"
        },
    }
}

/// Bytes one client's row adds to the store (measured: 59 B).
pub const STORED_BYTES_PER_CLIENT: u64 = 64;

/// The bytes a dumbbell run leaves in the store: its row and one row per
/// client.
pub fn stored_bytes(spec: &RunSpec) -> u64 {
    let clients: u64 = spec.groups.iter().map(|g| u64::from(g.clients)).sum();
    crate::campaign::ceiling::STORED_BYTES_PER_RUN
        .saturating_add(clients.saturating_mul(STORED_BYTES_PER_CLIENT))
}

/// The estimated peak memory of simulating `runs` runs of at most `clients`
/// clients each, `concurrent` at a time, keeping every finished run's
/// per-client records (`keep_results`) or not (a campaign stores each run as
/// it finishes).
pub fn simulation_bytes(clients: u64, runs: u64, concurrent: u64, keep_results: bool) -> u64 {
    let live = concurrent
        .min(runs)
        .saturating_mul(clients)
        .saturating_mul(LIVE_BYTES_PER_CLIENT);
    let kept = if keep_results {
        runs.saturating_mul(clients)
            .saturating_mul(size::<ClientRecord>())
    } else {
        0
    };
    live.saturating_add(kept)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::networks::AnyScenario;
    use coapcc_sim::NetworkScenario;

    fn dumbbell_spec(lines: &str) -> RunSpec {
        let text = format!(
            "clients = 20\n[network]\nerrors = \"high\"\n[workload]\nkind = \"continuous\"\n\
             exchanges = 5\n[[algorithm]]\nname = \"default\"\n{lines}\n"
        );
        let Some(s) = AnyScenario::parse(&text, "x")
            .unwrap()
            .into_inner::<crate::networks::dumbbell::Dumbbell>()
        else {
            panic!("a dumbbell")
        };
        s.run_spec(0)
    }

    #[test]
    fn huge_timers_on_lossy_links_cost_the_error_walk() {
        let usual = run_cost(&dumbbell_spec(""));
        assert_eq!(usual.events_field, "workload.exchanges");
        assert!(usual.events < 10_000, "{usual:?}");
        // Measured: 9·10⁷ s of virtual time, 25 s of computing (optimised).
        let huge = run_cost(&dumbbell_spec("ack_timeout = 1e7\ncap = 1e7"));
        assert_eq!(huge.events_field, "algorithm.cap, algorithm.ack_timeout");
        let seconds = huge.events as f64 / ERROR_SWITCHES_PER_SECOND;
        assert!((5e7..2e8).contains(&seconds), "{huge:?}");
    }

    #[test]
    fn estimates_grow_with_clients_runs_and_threads() {
        let one = simulation_bytes(100, 1, 1, false);
        assert_eq!(one, 100 * LIVE_BYTES_PER_CLIENT);
        assert_eq!(simulation_bytes(100, 10, 2, false), 2 * one);
        assert_eq!(
            simulation_bytes(100, 1, 8, false),
            one,
            "no more concurrent than runs"
        );
        assert!(simulation_bytes(100, 10, 2, true) > 2 * one);
        assert_eq!(simulation_bytes(u64::MAX, u64::MAX, 2, true), u64::MAX);
    }
}
