//! Bulk TCP senders on the Wi-Fi star: the books balance, runs are
//! deterministic, and the uncongested star carries its offered load.

use coapcc_sim::network::SimNetwork;
use coapcc_sim::star;
use coapcc_workload::AlgorithmSpec;

fn spec(stations: u32, writes: u32) -> star::RunSpec {
    let mut s = star::RunSpec {
        network: Default::default(),
        workload: Default::default(),
        algorithm: AlgorithmSpec::named("tcp"),
        seed: 5,
    };
    s.network.stations = stations;
    s.workload.writes = writes;
    s
}

/// 12 stations offer 12 × 1024 B / 0.4 s = 245 760 bit/s, 13 % of 2 Mbit/s:
/// everything arrives, nothing is retransmitted, and each station's trace
/// is sampled every 0.5 s from its connection to the end. Goodput counts
/// from the first write to the last byte received: the stations start up to
/// one interval (0.4 s) apart, so over 100 writes (40 s) it is within 1 %
/// of the offered load.
#[test]
fn the_published_star_carries_its_offered_load() {
    let r = star::Sim::run(&spec(12, 100), 0).unwrap();
    let offered = 12.0 * 1024.0 * 8.0 / 0.4;
    assert!(
        (r.goodput_bps / offered - 1.0).abs() < 0.01,
        "{}",
        r.goodput_bps
    );
    for s in &r.stations {
        assert!(s.complete);
        assert_eq!((s.written, s.received), (102_400, 102_400));
        assert_eq!(s.timeouts, 0);
        assert!(s
            .trace
            .windows(2)
            .all(|w| (w[1].t - w[0].t - 0.5).abs() < 1e-9));
    }
    assert!(r.conservation.holds());
}

/// 60 stations overload the air: queues overflow, senders time out and
/// resend, and every packet handed to the network is still accounted for.
#[test]
fn an_overloaded_star_loses_and_recovers() {
    let s = spec(60, 60);
    let r = star::Sim::run(&s, 0).unwrap();
    assert!(r.mac.queue_drops > 0 && r.mac.collisions > 0);
    let timeouts: u64 = r.stations.iter().map(|s| s.timeouts).sum();
    let resent: u64 = r.stations.iter().map(|s| s.retransmitted_segments).sum();
    assert!(timeouts > 0 && resent >= timeouts);
    assert!(r.goodput_bps < 60.0 * 1024.0 * 8.0 / 0.4);
    assert!(r.conservation.holds());
    assert_eq!(r, star::Sim::run(&s, 0).unwrap(), "deterministic");
    let r1 = star::Sim::run(&s, 1).unwrap();
    assert_ne!(
        (r.events, r.mac.collisions),
        (r1.events, r1.mac.collisions),
        "{:?} {:?}",
        r.mac,
        r1.mac
    );
}

/// Linux's socket resends a segment at every expired timer, the SYN
/// included: so each station's retransmitted segments (SYNs counted, as
/// Linux's `RetransSegs` counts them) are at least its timeouts (the
/// handshake's counted). 60 stations lose SYNs at the start.
#[test]
fn every_timeout_of_a_linux_station_is_a_resend() {
    let s = spec(60, 60);
    for rep in 0..3 {
        let r = star::Sim::run(&s, rep).unwrap();
        for st in &r.stations {
            assert!(
                st.retransmitted_segments >= st.timeouts,
                "replication {rep}, station {}: {} resent, {} timeouts",
                st.station,
                st.retransmitted_segments,
                st.timeouts
            );
        }
    }
}

#[test]
fn the_star_runs_tcp_only() {
    let mut s = spec(12, 10);
    s.algorithm = AlgorithmSpec::named("cocoa");
    let e = star::validate(&s).unwrap_err().0;
    assert!(e.contains("expected `tcp`"), "{e}");
    s.algorithm = AlgorithmSpec::named("tcp");
    s.workload.mss = 10;
    assert!(star::validate(&s).unwrap_err().0.contains("workload.mss"));
}
