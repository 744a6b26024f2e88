//! Observers on the dumbbell (`workload.kind = "observe"`, RFC 7641): the
//! server notifies every observer of every change of its resource.
//!
//! Timings by hand, on the default dumbbell with a fixed 10 ms router ↔
//! server path. A Confirmable notification of change k ≤ 255 is a 4-byte
//! header, the Observe option (1 + 1 bytes) and the payload marker with
//! 60 payload bytes: 67 bytes, 95 on the wire. It crosses the path
//! (10 ms), the 30 kbit/s downlink (95 × 8 / 30 000 = 25.333 ms) and its
//! 400 ms: a delay of 435.333 ms after the change. Its Empty ACK (32 bytes
//! on the wire) takes 32 × 8 / 60 000 = 4.267 ms, 200 ms and 10 ms back:
//! RTT 649.6 ms. The registration (a NON GET with Observe = 0 and Uri-Path
//! `sense`: 11 bytes) and its answer arrive long before the first change.

use crate::support;

use coapcc_link::dumbbell::Buffer;
use coapcc_link::errors::ErrorProfile;
use coapcc_sim::dumbbell::{self, validate, RunSpec};
use coapcc_sim::network::SimNetwork;
use coapcc_workload::{AlgorithmSpec, WorkloadKind};
use support::{group, on_dumbbell};

/// Delay of a notification of 60 payload bytes (see the module docs), s.
const DELAY: f64 = 0.010 + 95.0 * 8.0 / 30_000.0 + 0.400;
/// Its Empty ACK back to the server, s.
const ACK: f64 = 32.0 * 8.0 / 60_000.0 + 0.200 + 0.010;

/// `clients` observers of `algorithm`, `changes` changes every `period` s,
/// every `confirm_every`-th notification Confirmable.
fn spec(algorithm: &str, clients: u32, changes: u32, period: f64, confirm_every: u32) -> RunSpec {
    let mut g = group(
        AlgorithmSpec::named(algorithm),
        clients,
        WorkloadKind::Observe,
    );
    g.workload.exchanges = changes;
    g.workload.period = Some(period);
    g.workload.confirm_every = Some(confirm_every);
    let mut s = on_dumbbell(g, Buffer::Infinite, ErrorProfile::None, 7641);
    s.network.path_delay_ms = [10.0, 10.0];
    s.coap.max_retransmit = 20;
    s
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-6
}

#[test]
fn every_confirmable_notification_arrives_one_way_after_its_change() {
    let r = dumbbell::Sim::run(&spec("default", 1, 3, 5.0, 1), 0).unwrap();
    let c = &r.clients[0];
    let o = c.observe.as_deref().unwrap();
    assert_eq!(
        (o.generated, o.delivered, o.superseded, o.lost, o.discarded),
        (3, 3, 0, 0, 0)
    );
    assert_eq!(
        (o.confirmable, o.non_confirmable, o.reregistrations),
        (3, 0, 0)
    );
    assert_eq!(o.delays.len(), 3);
    for d in &o.delays {
        assert!(close(*d, DELAY), "delay {d} s, expected {DELAY} s");
    }
    // Each acknowledged: three exchanges of one RTT each, no retransmission.
    assert_eq!((c.completed, c.retransmissions, c.failed), (3, 0, 0));
    assert!(close(c.rtt_sum, 3.0 * (DELAY + ACK)), "{}", c.rtt_sum);
    assert_eq!(r.histograms[0], vec![3]);
    // From the registration at 0 to the delivery of change 3 at 15 s + delay.
    assert!(close(c.fct.unwrap(), 15.0 + DELAY));
    // The run ends when the last ACK reaches the server.
    assert!(close(r.duration, 15.0 + DELAY + ACK), "{}", r.duration);
    // The view holds change k (made at 5k s) from 5k + DELAY on; its age
    // grows from DELAY to DELAY + 5 over each of the first two periods,
    // then from DELAY to DELAY + ACK until the end.
    let full = 5.0 * (DELAY + 2.5);
    let tail = ACK * (DELAY + ACK / 2.0);
    let want = (2.0 * full + tail) / (10.0 + ACK);
    assert!(
        close(o.mean_age, want),
        "mean age {} s, expected {want} s",
        o.mean_age
    );
    assert!(r.conservation.holds());
    assert_eq!(r.conservation.in_flight, 0);
}

#[test]
fn non_confirmable_notifications_are_lost_to_link_errors_and_books_balance() {
    let mut s = spec("cocoa", 10, 60, 2.0, 1000);
    s.network.errors = ErrorProfile::High;
    s.network.path_delay_ms = [10.0, 20.0];
    let r = dumbbell::Sim::run(&s, 1).unwrap();
    let mut lost = 0;
    for c in &r.clients {
        let o = c.observe.as_deref().unwrap();
        assert_eq!(o.generated, o.delivered + o.superseded + o.lost, "{o:?}");
        assert_eq!(o.delays.len() as u32, o.delivered);
        assert!(o.generated <= 60);
        lost += o.lost;
    }
    assert!(
        lost > 0,
        "high link errors lose Non-confirmable notifications"
    );
    assert!(r.conservation.holds());
}

/// A downlink of 3 s makes the round trip longer than the initial timer
/// (2–3 s): the timer of a Confirmable notification fires before its ACK,
/// and the change made meanwhile goes out as a replacement (§4.5.2), a
/// retransmission of the flight; the changes made while a flight waits are
/// never sent: superseded, none lost.
#[test]
fn a_changed_state_supersedes_an_in_flight_confirmable_notification() {
    let mut s = spec("default", 1, 20, 1.0, 1);
    s.network.downlink_delay_ms = 3000.0;
    let r = dumbbell::Sim::run(&s, 0).unwrap();
    let c = &r.clients[0];
    let o = c.observe.as_deref().unwrap();
    assert_eq!(o.generated, 20);
    assert_eq!(o.lost, 0);
    assert!(o.superseded > 0, "{o:?}");
    assert_eq!(o.generated, o.delivered + o.superseded);
    assert!(c.retransmissions > 0, "replacements are retransmissions");
    assert!(c.expirations >= c.retransmissions);
    // The last change always gets through.
    assert!(c.fct.is_some());
}

#[test]
fn the_same_seed_gives_the_same_run() {
    let mut s = spec("fasor", 5, 20, 1.0, 3);
    s.network.errors = ErrorProfile::Medium;
    let a = dumbbell::Sim::run(&s, 2).unwrap();
    let b = dumbbell::Sim::run(&s, 2).unwrap();
    assert_eq!(a, b);
    let other = dumbbell::Sim::run(&s, 3).unwrap();
    assert_ne!(a.clients, other.clients);
}

#[test]
fn bad_settings_are_refused_by_field() {
    let err = |s: &RunSpec| validate(s).unwrap_err().to_string();
    let mut tcp = spec("default", 2, 5, 1.0, 1);
    tcp.groups[0].algorithm = AlgorithmSpec::named("tcp");
    assert!(err(&tcp).contains("workload.kind"), "{}", err(&tcp));
    let mut nstart = spec("default", 2, 5, 1.0, 1);
    nstart.coap.nstart = 2;
    assert!(err(&nstart).contains("coap.nstart"), "{}", err(&nstart));
    let mut wrap = spec("default", 2, 5, 1.0, 1);
    wrap.groups[0].workload.exchanges = 1 << 24;
    wrap.groups[0].workload.period = Some(0.001);
    assert!(err(&wrap).contains("workload.exchanges"), "{}", err(&wrap));
    let mut other = spec("default", 2, 5, 1.0, 1);
    other.groups[0].workload.block_size = Some(64);
    assert!(
        err(&other).contains("workload.block_size"),
        "{}",
        err(&other)
    );
}
