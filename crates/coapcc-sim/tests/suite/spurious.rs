//! Spurious retransmissions: pCoCoA and FASOR+Option detect them through the
//! server's echo of their transmission marks. The ground truth comes from the
//! traffic itself: an exchange had a spurious retransmission when the server
//! received more than one copy of its request (it answers each copy, so more
//! than one response leaves the server for that exchange).

use crate::support;

use std::collections::HashMap;
use support::{group, on_dumbbell};

use coapcc_link::dumbbell::Buffer;
use coapcc_link::errors::ErrorProfile;
use coapcc_proto::message::{MessageType, MessageView};
use coapcc_sim::dumbbell::{self, Tap, SERVER};
use coapcc_sim::network::Tapped;
use coapcc_workload::{AlgorithmSpec, Workload};

/// Counts, per (client, Message ID), the responses the server sent.
#[derive(Default)]
struct ServerReplies(HashMap<(u32, u16), u32>);

impl Tap for ServerReplies {
    fn packet(&mut self, _at: u64, src: u32, dst: u32, bytes: &[u8]) {
        if src == SERVER {
            let m = MessageView::decode(bytes).expect("the server sends valid CoAP");
            assert_eq!(m.mtype, MessageType::Ack);
            *self.0.entry((dst, m.mid)).or_default() += 1;
        }
    }
}

fn run(algorithm: &str, clients: u32, buffer: Buffer, errors: ErrorProfile) -> (u64, u64, u64) {
    let algorithm = AlgorithmSpec::named(algorithm);
    let spec = on_dumbbell(
        group(algorithm, clients, Workload::default().kind),
        buffer,
        errors,
        5,
    );
    let mut tap = ServerReplies::default();
    let result = dumbbell::Sim::run_with_tap(&spec, 0, &mut tap).unwrap();
    let truth = tap.0.values().filter(|&&n| n > 1).count() as u64;
    let detected: u64 = result
        .clients
        .iter()
        .map(|c| u64::from(c.spurious_detected))
        .sum();
    let retransmitted: u64 = result.histograms[0].iter().skip(1).sum();
    (detected, truth, retransmitted)
}

/// Without losses every retransmission is spurious, and the first response to
/// arrive answers the original: each such exchange is detected exactly once.
#[test]
fn detections_match_the_ground_truth_without_losses() {
    for algorithm in ["pcocoa", "fasor-option"] {
        let (detected, truth, retransmitted) =
            run(algorithm, 150, Buffer::Infinite, ErrorProfile::None);
        assert!(
            truth > 20,
            "{algorithm}: the scenario must provoke spurious retransmissions ({truth})"
        );
        assert_eq!(
            truth, retransmitted,
            "{algorithm}: no losses, so every retransmission is spurious"
        );
        assert_eq!(detected, truth, "{algorithm}");
    }
}

/// With losses, a retransmission that repaired a lost response also makes the
/// server see a second copy, but it was not spurious: what is detected is never
/// more than the server's duplicates, and some are detected.
#[test]
fn detections_never_exceed_the_ground_truth_with_losses() {
    for algorithm in ["pcocoa", "fasor-option"] {
        let (detected, truth, _) = run(algorithm, 150, Buffer::Infinite, ErrorProfile::Low);
        assert!(
            detected <= truth,
            "{algorithm}: detected {detected} > truth {truth}"
        );
        assert!(
            detected > 0,
            "{algorithm}: detected {detected}, truth {truth}"
        );
    }
}

/// Algorithms without marks detect nothing, even when spurious copies abound.
#[test]
fn unmarked_algorithms_detect_nothing() {
    let (detected, truth, _) = run("default", 150, Buffer::Infinite, ErrorProfile::None);
    assert!(truth > 100);
    assert_eq!(detected, 0);
}
