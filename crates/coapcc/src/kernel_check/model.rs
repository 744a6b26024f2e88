//! The simulator's side of a point: the same dumbbell, workload and buffer
//! with a TCP profile of the model, one run per replication.

use anyhow::{anyhow, Result};
use coapcc_sim::RunResult;

use super::point::Point;
use super::record::{Counters, Record, Source};

/// The scenario file of `point` with `profile` (the testbed's defaults for
/// everything the point does not set).
pub fn scenario_text(point: &Point, profile: &str, replications: u32, seed: u64) -> String {
    format!(
        "name = \"kernel-check\"\n\
         description = \"the kernel cross-check: {point}\"\n\
         clients = {}\n\
         replications = {replications}\n\
         seed = {seed}\n\n\
         [network]\n\
         buffer = \"{}\"\n\n\
         [workload]\n\
         kind = \"{}\"\n\
         exchanges = {}\n\n\
         [[algorithm]]\n\
         name = \"{profile}\"\n",
        point.clients,
        point.buffer_text(),
        point.workload.name(),
        point.exchanges,
    )
}

/// Reduces one simulated run to a [`Record`].
pub fn record(profile: &str, replication: u32, run: &RunResult) -> Record {
    let mut c = Counters {
        bytes_up: run.uplink.bytes,
        bytes_down: run.downlink.bytes,
        downlink_drops: run.downlink.dropped_buffer,
        uplink_drops: run.uplink.dropped_buffer,
        ..Counters::default()
    };
    for client in &run.clients {
        c.timeouts += u64::from(client.expirations);
        c.failed_exchanges += u64::from(client.failed);
        if let Some(t) = &client.tcp {
            c.retransmitted_segments += u64::from(
                t.client_retransmitted_segments
                    + t.server_retransmitted_segments
                    + t.syn_retransmissions
                    + t.synack_retransmissions,
            );
            c.timeouts += u64::from(t.server_rto_expirations);
            c.loss_probes += u64::from(t.loss_probes);
            c.spurious_rtos += u64::from(t.spurious_rtos);
            c.dsacks += u64::from(t.dsacks_received);
            c.connections += u64::from(t.connections);
        }
    }
    Record {
        source: Source::Model(profile.to_string()),
        replication,
        fct: run.clients.iter().map(|c| c.fct).collect(),
        counters: c,
    }
}

/// Runs `replications` replications of `point` with `profile` (on the
/// current rayon pool; results do not depend on its size).
pub fn run(point: &Point, profile: &str, replications: u32, seed: u64) -> Result<Vec<Record>> {
    let text = scenario_text(point, profile, replications, seed);
    let scenario = crate::networks::dumbbell::parse_scenario(&text, "kernel-check")?;
    let result = coapcc_sim::run_scenario(&scenario, &|| {})
        .map_err(|e| anyhow!("kernel-check, {point}, {profile}: {e}"))?;
    let runs = result.runs.into_iter().next().unwrap_or_default();
    Ok(runs
        .iter()
        .enumerate()
        .map(|(r, run)| record(profile, r as u32, run))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel_check::point::{KernelConfig, Workload};

    #[test]
    fn a_small_point_runs_and_counts_what_it_sent() {
        let p = Point {
            config: KernelConfig::Thesis,
            workload: Workload::Continuous,
            buffer: Some(2500),
            clients: 4,
            exchanges: 5,
        };
        let recs = run(&p, "tcp", 2, 7).unwrap();
        assert_eq!(recs.len(), 2);
        for r in &recs {
            assert_eq!(r.fct.len(), 4);
            assert!(r.fct.iter().all(Option::is_some), "{r:?}");
            // One connection per continuous client; 4 × 5 responses of 105 B
            // IP at least went down the link.
            assert_eq!(r.counters.connections, 4);
            assert!(r.counters.bytes_down >= 4 * 5 * 105, "{r:?}");
        }
        assert_ne!(
            recs[0].fct, recs[1].fct,
            "replications draw their own seeds"
        );
    }

    #[test]
    fn probes_and_d_sacks_are_counted_only_where_sack_is_on() {
        // 30 clients behind the 2500-byte buffer: the first round overflows
        // the downlink buffer, so every profile retransmits; only the one
        // with SACK may send tail loss probes and receive D-SACKs.
        let p = Point {
            config: KernelConfig::Defaults,
            workload: Workload::Continuous,
            buffer: Some(2500),
            clients: 30,
            exchanges: 5,
        };
        let sack = &run(&p, "tcp-linux6", 1, 1).unwrap()[0].counters;
        let nosack = &run(&p, "tcp-linux6-nosack", 1, 1).unwrap()[0].counters;
        assert!(sack.downlink_drops > 0 && nosack.downlink_drops > 0);
        assert!(sack.loss_probes > 0 && sack.dsacks > 0, "{sack:?}");
        assert!(nosack.retransmitted_segments > 0, "{nosack:?}");
        assert_eq!((nosack.loss_probes, nosack.dsacks), (0, 0), "{nosack:?}");
    }
}
