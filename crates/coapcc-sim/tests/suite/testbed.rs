//! The testbed against physics: packet sizes from the encoded messages,
//! serialisation and propagation, saturation, determinism, conservation (checked
//! inside every run).

use crate::support;

use coapcc_link::dumbbell::Buffer;
use coapcc_link::errors::ErrorProfile;
use coapcc_sim::dumbbell::{self, validate, RunSpec};
use coapcc_sim::network::SimNetwork;
use coapcc_workload::{AlgorithmSpec, WorkloadKind};
use support::{group, on_dumbbell};

fn spec(
    algorithm: &str,
    clients: u32,
    buffer: Buffer,
    errors: ErrorProfile,
    kind: WorkloadKind,
) -> RunSpec {
    let mut a = AlgorithmSpec::named(algorithm);
    if algorithm == "cocoa" {
        a.aging = Some(false);
    }
    on_dumbbell(group(a, clients, kind), buffer, errors, 42)
}

#[test]
fn packet_sizes_come_from_the_encoded_messages() {
    // One client, no losses: 50 requests up, 50 responses down, nothing else.
    let r = dumbbell::Sim::run(
        &spec(
            "default",
            1,
            Buffer::Bytes(2500),
            ErrorProfile::None,
            WorkloadKind::Continuous,
        ),
        0,
    )
    .unwrap();
    assert_eq!(r.uplink.packets, 50);
    assert_eq!(r.downlink.packets, 50);
    // CON GET, no token, Uri-Path "sense": 20 + 8 + 4 + 6 = 38 bytes.
    assert_eq!(r.uplink.bytes, 50 * 38);
    // Piggybacked 2.05 with a 60-byte payload: 20 + 8 + 4 + 1 + 60 = 93 bytes.
    assert_eq!(r.downlink.bytes, 50 * 93);
}

#[test]
fn one_client_takes_fifty_base_round_trips() {
    // Base RTT = 38 B at 60 kbit/s + 200 ms + 2 × U(10, 20) ms + 93 B at 30 kbit/s
    // + 400 ms = 629.867 ms + 2 × U(10, 20) ms; 50 of them, back to back.
    let r = dumbbell::Sim::run(
        &spec(
            "default",
            1,
            Buffer::Bytes(2500),
            ErrorProfile::None,
            WorkloadKind::Continuous,
        ),
        0,
    )
    .unwrap();
    let fct = r.clients[0].fct.unwrap();
    let fixed = 0.005_066_667 + 0.2 + 0.024_8 + 0.4;
    assert!(
        fct > 50.0 * (fixed + 0.020) && fct < 50.0 * (fixed + 0.040),
        "{fct}"
    );
    // Mean of 2 × U(10, 20) ms is 30 ms: within a few ms over 50 samples.
    assert!((fct / 50.0 - (fixed + 0.030)).abs() < 0.004, "{fct}");
    assert_eq!(r.clients[0].retransmissions, 0);
    assert_eq!(r.clients[0].unnecessary, 0);
    assert_eq!(r.histograms[0], vec![50]);
    // Utilisation: busy time is exactly the serialisation of what crossed.
    assert!((r.uplink.busy - 50.0 * 38.0 / 7500.0).abs() < 1e-6);
    assert!((r.downlink.busy - 50.0 * 93.0 / 3750.0).abs() < 1e-6);
}

#[test]
fn fifty_clients_saturate_the_downlink() {
    // 50 × 50 responses of 93 bytes at 3750 B/s need 62 s of downlink time.
    let r = dumbbell::Sim::run(
        &spec(
            "default",
            50,
            Buffer::Infinite,
            ErrorProfile::None,
            WorkloadKind::Continuous,
        ),
        0,
    )
    .unwrap();
    let busy_floor = 50.0 * 50.0 * 93.0 / 3750.0;
    assert!(r.downlink.busy >= busy_floor - 1e-6);
    let mut fct: Vec<f64> = r.clients.iter().map(|c| c.fct.unwrap()).collect();
    fct.sort_by(f64::total_cmp);
    let median = fct[25];
    assert!(
        median > busy_floor * 0.95 && median < busy_floor * 1.1,
        "{median}"
    );
}

#[test]
fn small_buffers_drop_and_large_ones_do_not() {
    let small = dumbbell::Sim::run(
        &spec(
            "default",
            100,
            Buffer::Bytes(2500),
            ErrorProfile::None,
            WorkloadKind::Continuous,
        ),
        0,
    )
    .unwrap();
    assert!(small.uplink.dropped_buffer + small.downlink.dropped_buffer > 0);
    let inf = dumbbell::Sim::run(
        &spec(
            "default",
            100,
            Buffer::Infinite,
            ErrorProfile::None,
            WorkloadKind::Continuous,
        ),
        0,
    )
    .unwrap();
    assert_eq!(inf.uplink.dropped_buffer + inf.downlink.dropped_buffer, 0);
    // Bufferbloat: Default CoAP retransmits, and the copies are unnecessary.
    assert!(inf.downlink.unnecessary_bytes > 0);
    assert!(inf.clients.iter().map(|c| c.unnecessary).sum::<u32>() > 100);
}

#[test]
fn link_errors_drop_packets_and_are_recovered() {
    let r = dumbbell::Sim::run(
        &spec(
            "default",
            10,
            Buffer::Bytes(2500),
            ErrorProfile::High,
            WorkloadKind::Continuous,
        ),
        0,
    )
    .unwrap();
    assert!(r.uplink.dropped_error > 0 && r.downlink.dropped_error > 0);
    assert!(r
        .clients
        .iter()
        .all(|c| c.fct.is_some() && c.completed + c.failed == 50));
}

#[test]
fn same_seed_same_result_other_replication_differs() {
    for kind in [WorkloadKind::Continuous, WorkloadKind::Random] {
        let s = spec("cocoa", 30, Buffer::Bytes(2500), ErrorProfile::Medium, kind);
        let a = dumbbell::Sim::run(&s, 3).unwrap();
        let b = dumbbell::Sim::run(&s, 3).unwrap();
        assert_eq!(a, b);
        let c = dumbbell::Sim::run(&s, 4).unwrap();
        assert_ne!(a.clients, c.clients);
    }
}

#[test]
fn conservation_holds_at_the_end_of_every_run() {
    for (errors, buffer) in [
        (ErrorProfile::None, Buffer::Infinite),
        (ErrorProfile::High, Buffer::Bytes(2500)),
    ] {
        let r = dumbbell::Sim::run(
            &spec("default", 60, buffer, errors, WorkloadKind::Random),
            1,
        )
        .unwrap();
        let c = &r.conservation;
        assert!(c.holds(), "{c:?}");
        assert!(c.sent > 0 && c.delivered > 0);
        let dropped = r.uplink.dropped_buffer
            + r.uplink.dropped_error
            + r.downlink.dropped_buffer
            + r.downlink.dropped_error;
        assert_eq!(c.dropped, dropped);
    }
}

#[test]
fn invalid_specs_are_rejected_with_the_field() {
    let mut s = spec(
        "default",
        1,
        Buffer::Infinite,
        ErrorProfile::None,
        WorkloadKind::Continuous,
    );
    s.coap.response_payload = 400;
    assert!(validate(&s)
        .unwrap_err()
        .0
        .contains("coap.response_payload"));
    let mut s = spec(
        "no-such-algorithm",
        1,
        Buffer::Infinite,
        ErrorProfile::None,
        WorkloadKind::Continuous,
    );
    assert!(validate(&s).unwrap_err().0.contains("no-such-algorithm"));
    s.groups[0].algorithm = AlgorithmSpec {
        name: "default".into(),
        aging: Some(true),
        ..Default::default()
    };
    assert!(validate(&s).unwrap_err().0.contains("aging"));
}

/// FASOR+Token under the high error profile keeps up with FASOR: a lost
/// answer costs it a retransmission, not a ratchet of FastRTO toward the 60 s
/// cap (the cached-token server made it about ten times slower:
/// `docs/calibration.md`, "FASOR+Token on lossy links").
#[test]
fn fasor_token_keeps_up_with_fasor_on_a_lossy_link() {
    let fct = |algorithm: &str| {
        let mut all: Vec<f64> = (0..3)
            .flat_map(|rep| {
                let s = spec(
                    algorithm,
                    10,
                    Buffer::Bytes(2500),
                    ErrorProfile::High,
                    WorkloadKind::Continuous,
                );
                dumbbell::Sim::run(&s, rep).unwrap().clients
            })
            .map(|c| c.fct.expect("every client finishes"))
            .collect();
        all.sort_by(f64::total_cmp);
        (all[all.len() / 2], all[all.len() - 1])
    };
    let (fasor, _) = fct("fasor");
    let (token, token_max) = fct("fasor-token");
    assert!(
        token < 1.25 * fasor,
        "median {token} s vs FASOR's {fasor} s"
    );
    assert!(token_max < 600.0, "slowest client {token_max} s");
}
