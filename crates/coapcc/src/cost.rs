//! What one simulated run will cost, estimated from its spec before it
//! starts: the memory it holds and the events it processes, each with the
//! scenario field that drives it (checked by [`crate::budget`]).
//!
//! The figures are measured, not worst cases (`docs/decisions/hardening.md`,
//! "Second round (issue 21): runs that fit the machine"):
//! - the dumbbell holds [`LIVE_BYTES_PER_CLIENT`] per client while it runs
//!   and one `ClientRecord` per client after; it processes about
//!   [`EVENTS_PER_EXCHANGE`] events per exchange (59 238 events for the
//!   default's 5 000 Default CoAP exchanges behind the infinite buffer);
//!   on lossy links, the error process walks about
//!   [`ERROR_SWITCHES_PER_SECOND`] state changes per second of virtual time,
//!   which timers near 10⁷ s make long;
//! - the grid processes about [`EVENTS_PER_REQUEST`] events per request
//!   generated (258 496 for the 3 400 requests of one pCoCoA periodic run:
//!   every hop's MAC events);
//! - the star processes about [`EVENTS_PER_SEGMENT`] events per segment
//!   written, one per sample time, and keeps [`BYTES_PER_SAMPLE`] per
//!   station and sample time (its trace, the summaries' series: 61 B
//!   measured with 10⁶ samples).

use coapcc_link::errors::ErrorProfile;
use coapcc_sim::dumbbell::RunSpec;
use coapcc_sim::grid::{GridNodeResult, GridRunSpec};
use coapcc_sim::metrics::ClientRecord;
use coapcc_sim::star::{StarRunSpec, StationResult};
use coapcc_sim::AlgorithmSpec;

/// Memory a running dumbbell simulation holds per client (bytes), measured
/// on the scale set: 1.5–1.9 KiB at 10⁵–10⁶ clients (`docs/performance.md`).
pub const LIVE_BYTES_PER_CLIENT: u64 = 2 * 1024;

/// Memory a running grid or star simulation holds per node or station
/// (bytes): its MAC queue, CoAP or TCP state and buffers.
pub const LIVE_BYTES_PER_NODE: u64 = 16 * 1024;

/// Events the dumbbell processes per exchange (measured: 12 for Default
/// CoAP behind the infinite buffer, 6 for CoCoA).
pub const EVENTS_PER_EXCHANGE: u64 = 12;

/// Events the grid processes per request generated (measured: 76 on the
/// pCoCoA periodic grid).
pub const EVENTS_PER_REQUEST: u64 = 80;

/// Events the star processes per segment written (measured: 10).
pub const EVENTS_PER_SEGMENT: u64 = 10;

/// Bytes the star keeps per station and sample time (measured: 61).
pub const BYTES_PER_SAMPLE: u64 = 64;

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

/// The estimated cost of one run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunCost {
    /// Bytes held while the run goes on, besides its result.
    pub live: u64,
    /// Bytes of its result, kept until the results are printed or stored.
    pub result: u64,
    /// The scenario field that drives the memory.
    pub memory_field: &'static str,
    /// Events it will process.
    pub events: u64,
    /// The scenario field that drives the events.
    pub events_field: &'static str,
}

impl RunCost {
    /// Bytes while it runs, its result included.
    pub fn bytes(&self) -> u64 {
        self.live.saturating_add(self.result)
    }

    /// The larger cost of `self` and `other`, field by field (each figure
    /// keeps the field that drives it).
    pub fn max(self, other: RunCost) -> RunCost {
        let (live, result, memory_field) = if other.bytes() > self.bytes() {
            (other.live, other.result, other.memory_field)
        } else {
            (self.live, self.result, self.memory_field)
        };
        let (events, events_field) = if other.events > self.events {
            (other.events, other.events_field)
        } else {
            (self.events, self.events_field)
        };
        RunCost {
            live,
            result,
            memory_field,
            events,
            events_field,
        }
    }
}

fn size<T>() -> u64 {
    std::mem::size_of::<T>() as u64
}

/// A finite, non-negative float as a count, saturating.
fn count(x: f64) -> u64 {
    if x.is_nan() || x <= 0.0 {
        0
    } else if x >= u64::MAX as f64 {
        u64::MAX
    } else {
        x.ceil() as u64
    }
}

/// One run on the dumbbell: its exchanges' events and, on lossy links, the
/// error process's walk over the run's virtual time (long only when timers
/// are set near their 10⁷ s bound).
pub fn dumbbell(spec: &RunSpec) -> RunCost {
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

/// One run on the grid.
pub fn grid(spec: &GridRunSpec) -> RunCost {
    let nodes = spec.network.nodes() as u64;
    let w = &spec.workload;
    let requests_per_node = count(w.duration_s / w.period_s);
    RunCost {
        live: nodes.saturating_mul(LIVE_BYTES_PER_NODE),
        result: nodes.saturating_mul(size::<GridNodeResult>()),
        memory_field: "network",
        events: nodes
            .saturating_mul(requests_per_node)
            .saturating_mul(EVENTS_PER_REQUEST),
        events_field: "workload.period_s",
    }
}

/// One run on the star: its traces grow with the time the writes take
/// over `sample_s` (the run usually ends soon after the last write, so
/// `drain_s` is left out).
pub fn star(spec: &StarRunSpec) -> RunCost {
    let stations = u64::from(spec.network.stations);
    let w = &spec.workload;
    let span = w.start_s + w.interval_s * (f64::from(w.writes) + 1.0);
    let samples = count(span / w.sample_s);
    let trace = stations
        .saturating_mul(samples)
        .saturating_mul(BYTES_PER_SAMPLE);
    let segments = u64::from(w.writes)
        .saturating_mul(u64::from(w.write_bytes.div_ceil(u32::from(w.mss.max(1)))))
        .saturating_mul(stations);
    let segment_events = segments.saturating_mul(EVENTS_PER_SEGMENT);
    // The trace grows with the writes' span over `sample_s`: name the
    // sampling if it is finer than the writes, else the writes.
    let span_field = if w.sample_s < w.interval_s {
        "workload.sample_s"
    } else {
        "workload.writes"
    };
    let stations_bytes = stations.saturating_mul(size::<StationResult>());
    RunCost {
        live: stations.saturating_mul(LIVE_BYTES_PER_NODE),
        result: trace.saturating_add(stations_bytes),
        memory_field: if trace > stations_bytes {
            span_field
        } else {
            "network.stations"
        },
        events: segment_events.saturating_add(samples),
        events_field: if samples > segment_events {
            span_field
        } else {
            "workload.writes"
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario_file::{parse_any, AnyScenario};

    fn star_spec(workload: &str) -> StarRunSpec {
        let text = format!(
            "[network]\nkind = \"star\"\nstations = 12\n[workload]\n{workload}\n\
             [[algorithm]]\nname = \"tcp-lwip\"\n"
        );
        let AnyScenario::Star(s) = parse_any(&text, "x").unwrap() else {
            panic!("a star")
        };
        s.run_spec(0)
    }

    #[test]
    fn the_star_grows_with_samples_and_writes() {
        let base = star(&star_spec(""));
        // 12 stations × 401.4 s / 0.5 s
        let trace = 12 * 803 * BYTES_PER_SAMPLE;
        assert!(
            (trace..trace + 12 * 1024).contains(&base.result),
            "{base:?}"
        );
        assert_eq!(base.memory_field, "workload.writes");
        let fine = star(&star_spec("sample_s = 1e-9"));
        assert!(fine.result > 1 << 40, "{fine:?}");
        assert_eq!(fine.events_field, "workload.sample_s");
        let long = star(&star_spec("writes = 100000000"));
        assert!(long.result > 30 << 30, "{long:?}");
        assert_eq!(long.memory_field, "workload.writes");
        assert!(long.events > 1_000_000_000, "{long:?}");
    }

    fn dumbbell_spec(lines: &str) -> RunSpec {
        let text = format!(
            "clients = 20\n[network]\nerrors = \"high\"\n[workload]\nkind = \"continuous\"\n\
             exchanges = 5\n[[algorithm]]\nname = \"default\"\n{lines}\n"
        );
        let AnyScenario::Dumbbell(s) = parse_any(&text, "x").unwrap() else {
            panic!("a dumbbell")
        };
        s.run_spec(0)
    }

    #[test]
    fn huge_timers_on_lossy_links_cost_the_error_walk() {
        let usual = dumbbell(&dumbbell_spec(""));
        assert_eq!(usual.events_field, "workload.exchanges");
        assert!(usual.events < 10_000, "{usual:?}");
        // Measured: 9·10⁷ s of virtual time, 25 s of computing (optimised).
        let huge = dumbbell(&dumbbell_spec("ack_timeout = 1e7\ncap = 1e7"));
        assert_eq!(huge.events_field, "algorithm.cap, algorithm.ack_timeout");
        let seconds = huge.events as f64 / ERROR_SWITCHES_PER_SECOND;
        assert!((5e7..2e8).contains(&seconds), "{huge:?}");
    }

    #[test]
    fn the_larger_cost_keeps_its_field() {
        let a = RunCost {
            live: 10,
            result: 0,
            memory_field: "a",
            events: 1,
            events_field: "a",
        };
        let b = RunCost {
            live: 1,
            result: 1,
            memory_field: "b",
            events: 5,
            events_field: "b",
        };
        let m = a.clone().max(b.clone());
        assert_eq!((m.live, m.memory_field), (10, "a"));
        assert_eq!((m.events, m.events_field), (5, "b"));
        assert_eq!(b.max(a), m);
    }
}
