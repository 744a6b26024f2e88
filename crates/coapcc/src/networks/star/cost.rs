//! What one star run will cost, estimated from its spec before it starts
//! (checked by [`crate::budget`]; [`crate::cost`] says what is measured).

use coapcc_sim::star::{self, StationResult};

use crate::cost::{count, size, RunCost, LIVE_BYTES_PER_NODE};

/// Events the star processes per segment written (measured: 10).
pub const EVENTS_PER_SEGMENT: u64 = 10;

/// Bytes the star keeps per station and sample time (measured: 61).
pub const BYTES_PER_SAMPLE: u64 = 64;

/// One run on the star: its traces grow with the time the writes take
/// over `sample_s` (the run usually ends soon after the last write, so
/// `drain_s` is left out).
pub fn run_cost(spec: &star::RunSpec) -> RunCost {
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

/// Bytes one station's row adds to the store.
pub const STORED_BYTES_PER_STATION: u64 = 128;

/// Bytes a station's sampled state takes per sample time in the stored
/// trace (its compact codec, rounded up).
pub const STORED_BYTES_PER_SAMPLE: u64 = 16;

/// The bytes a star run leaves in the store: its row, one row per station
/// and the stations' sampled state.
pub fn stored_bytes(spec: &star::RunSpec) -> u64 {
    let stations = u64::from(spec.network.stations);
    let w = &spec.workload;
    let samples = count((w.start_s + w.interval_s * (f64::from(w.writes) + 1.0)) / w.sample_s);
    crate::campaign::ceiling::STORED_BYTES_PER_RUN
        .saturating_add(stations.saturating_mul(STORED_BYTES_PER_STATION))
        .saturating_add(
            stations
                .saturating_mul(samples)
                .saturating_mul(STORED_BYTES_PER_SAMPLE),
        )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::networks::AnyScenario;
    use coapcc_sim::NetworkScenario;

    fn star_spec(workload: &str) -> star::RunSpec {
        let text = format!(
            "[network]\nkind = \"star\"\nstations = 12\n[workload]\n{workload}\n\
             [[algorithm]]\nname = \"tcp-lwip\"\n"
        );
        let Some(s) = AnyScenario::parse(&text, "x")
            .unwrap()
            .into_inner::<crate::networks::star::Star>()
        else {
            panic!("a star")
        };
        s.run_spec(0)
    }

    #[test]
    fn the_star_grows_with_samples_and_writes() {
        let base = run_cost(&star_spec(""));
        // 12 stations × 401.4 s / 0.5 s
        let trace = 12 * 803 * BYTES_PER_SAMPLE;
        assert!(
            (trace..trace + 12 * 1024).contains(&base.result),
            "{base:?}"
        );
        assert_eq!(base.memory_field, "workload.writes");
        let fine = run_cost(&star_spec("sample_s = 1e-9"));
        assert!(fine.result > 1 << 40, "{fine:?}");
        assert_eq!(fine.events_field, "workload.sample_s");
        let long = run_cost(&star_spec("writes = 100000000"));
        assert!(long.result > 30 << 30, "{long:?}");
        assert_eq!(long.memory_field, "workload.writes");
        assert!(long.events > 1_000_000_000, "{long:?}");
    }
}
