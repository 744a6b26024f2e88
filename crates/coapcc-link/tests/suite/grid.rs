//! The grid network against timings and outcomes computed by hand from the
//! MAC rules (spec `docs/spec/radio-spec.md` §1; the module docs of `coapcc_link::grid`).

use coapcc_link::grid::{Config, MacProfile, Pacing};
use coapcc_link::rng::{derive, SimRng, Stream};
use coapcc_link::{Datagram, DropCause, Nanos, Network, NodeId, Output, PacketId};

const US: Nanos = 1_000;
const MS: Nanos = 1_000_000;

/// Nodes on a line 10 m apart, node 1 (the root) at 0 m.
fn line(n: usize) -> Config {
    Config {
        positions: Some((0..n).map(|i| [10.0 * i as f64, 0.0]).collect()),
        root: 1,
        server: 1,
        ..Config::default()
    }
}

fn udp(id: PacketId, src: NodeId, dst: NodeId, coap: u16) -> Datagram {
    Datagram {
        id,
        src,
        dst,
        transport_header: 8,
        payload: coap,
        unnecessary: false,
    }
}

/// Runs until nothing is left; the outputs with their times.
fn drain(g: &mut impl Network) -> Vec<(Nanos, Output)> {
    let mut out = Vec::new();
    while let Some(t) = g.next_wakeup() {
        if let (at, Some(o)) = g.poll(t).expect("due") {
            out.push((at, o));
        }
    }
    out
}

/// Contiki, one hop, a 4-byte CoAP message from node 2 to node 1: IPHC 4
/// bytes (everything elided but the context byte and the inline next
/// header), option 8, UDP 8: a 21 + 4 + 20 = 45-byte frame, 1.44 ms on the
/// air. Turnaround 2 ms, frame 2–3.44 ms, the receiver acknowledges 1 ms
/// later (96 µs) and hands it up when the acknowledgement ends: 4.536 ms.
#[test]
fn contiki_one_frame_one_hop() {
    let mut g = coapcc_link::grid::Grid::new(&line(2), 1).unwrap();
    g.send(0, udp(7, 2, 1, 4)).unwrap();
    let out = drain(&mut g);
    assert_eq!(out, [(4_536 * US, Output::Delivered { id: 7, node: 1 })]);
    let sender = g.node_record(2);
    assert_eq!((sender.data_frames, sender.mac_drops), (1, 0));
    assert_eq!(g.node_record(1).ack_frames, 1);
    assert!((sender.airtime - 0.00144).abs() < 1e-12);
    assert_eq!(g.in_flight(), 0);
}

/// A 95-byte request over one hop is two fragments: IPHC 4, what follows
/// 8 + 8 + 95 = 111 > 104 − 4, FRAG1 carries (104 − 8) & !7 = 96 bytes:
/// 21 + 4 + 4 + 96 = 125 bytes (4 ms); FRAGN the other 15: 41 bytes
/// (1.312 ms). FRAG1 2–6 ms, acknowledged 7–7.096 ms, checked at 8 ms; the
/// next frame of the list goes at once: turnaround to 10 ms, on the air to
/// 11.312 ms, acknowledged 12.312–12.408 ms: whole at 12.408 ms. With 125 ms
/// pacing after every frame FRAGN waits from 8 ms to 133 ms instead: whole
/// at 137.408 ms.
#[test]
fn contiki_two_fragments_with_and_without_pacing() {
    let mut g = coapcc_link::grid::Grid::new(&line(2), 1).unwrap();
    g.send(0, udp(1, 2, 1, 95)).unwrap();
    assert_eq!(
        drain(&mut g),
        [(12_408 * US, Output::Delivered { id: 1, node: 1 })]
    );
    let paced = Config {
        pacing: Pacing::AfterEveryFrame,
        ..line(2)
    };
    let mut g = coapcc_link::grid::Grid::new(&paced, 1).unwrap();
    g.send(0, udp(1, 2, 1, 95)).unwrap();
    assert_eq!(
        drain(&mut g),
        [(137_408 * US, Output::Delivered { id: 1, node: 1 })]
    );
}

/// Two hops, node 3 → node 2 → node 1, a 95-byte message. First hop: IPHC
/// 12 (destination IID inline), FRAG1 (104 − 16) & !7 = 88: 125 bytes, 4 ms;
/// FRAGN 23: 49 bytes, 1.568 ms. FRAG1 2–6 ms, ack 7–7.096, check 8 ms;
/// FRAGN 10–11.568 ms, ack 12.568–12.664 ms: node 2 has it at 12.664 ms.
/// Second hop: IPHC 13 (hop limit 63 and source IID inline), FRAG1
/// (104 − 17) & !7 = 80: 118 bytes, 3.776 ms; FRAGN 31: 57 bytes, 1.824 ms.
/// FRAG1 14.664–18.44 ms, ack at 19.44, check 20.44 ms; FRAGN 22.44–24.264
/// ms, ack 25.264–25.36 ms: delivered at 25.36 ms.
#[test]
fn contiki_two_hops_reassembled_at_the_forwarder() {
    let mut g = coapcc_link::grid::Grid::new(&line(3), 1).unwrap();
    g.send(0, udp(5, 3, 1, 95)).unwrap();
    assert_eq!(
        drain(&mut g),
        [(25_360 * US, Output::Delivered { id: 5, node: 1 })]
    );
    assert_eq!(g.node_record(2).forwarded, 1);
    assert_eq!(g.node_record(2).data_frames, 2);
    assert_eq!(g.node_record(3).data_frames, 2);
}

/// The hidden terminal: nodes 1 and 3 are 20 m apart and both send to node
/// 2 at time 0. Neither senses the other; both frames are on the air from
/// 2 ms and destroy each other at node 2. Neither is acknowledged, so both
/// retry after at least 125 ms: nothing arrives before 127 ms, and both
/// arrive in the end.
#[test]
fn contiki_hidden_terminals_collide_then_recover() {
    let mut g = coapcc_link::grid::Grid::new(&line(3), 7).unwrap();
    g.send(0, udp(1, 1, 2, 4)).unwrap();
    g.send(0, udp(3, 3, 2, 4)).unwrap();
    let out = drain(&mut g);
    assert_eq!(out.len(), 2);
    assert!(out
        .iter()
        .all(|(t, o)| *t > 127 * MS && matches!(o, Output::Delivered { node: 2, .. })));
    let (_, collisions) = g.medium_counts();
    assert!(collisions >= 1);
    assert!(g.node_record(1).data_frames >= 2 && g.node_record(3).data_frames >= 2);
}

/// Buffers: with room for 2 frames, a third unfragmented datagram is
/// refused at its source. With 8, a fragmented datagram needs its 2 frames
/// plus one more free (Contiki's pre-check): after three (6 frames) the
/// fourth is refused.
#[test]
fn contiki_buffers_refuse_what_does_not_fit() {
    let small = Config {
        queue: 2,
        ..line(2)
    };
    let mut g = coapcc_link::grid::Grid::new(&small, 1).unwrap();
    assert!(g.send(0, udp(1, 2, 1, 4)).is_ok());
    assert!(g.send(0, udp(2, 2, 1, 4)).is_ok());
    assert_eq!(g.send(0, udp(3, 2, 1, 4)), Err(DropCause::MacQueue));
    let mut g = coapcc_link::grid::Grid::new(&line(2), 1).unwrap();
    for id in 1..=3 {
        assert!(g.send(0, udp(id, 2, 1, 95)).is_ok());
    }
    assert_eq!(g.send(0, udp(4, 2, 1, 95)), Err(DropCause::MacQueue));
    assert_eq!(g.node_record(2).overflows, 1);
    assert_eq!(drain(&mut g).len(), 3);
}

/// csma keeps queues for two next hops. Node 2 (between 1 and 3, with node
/// 4 above it; storing routing, so that it sends to each directly) queues
/// frames to 1 and 3; a frame to 4 is refused — and
/// 6LoWPAN remembers that error: the next fragmented datagram (to node 1)
/// sends its first fragment and stops.
#[test]
fn contiki_a_third_neighbour_and_the_stale_error() {
    let mut cfg = line(3);
    cfg.positions.as_mut().unwrap().push([10.0, 10.0]);
    cfg.routing = coapcc_link::grid::layout::Routing::Storing;
    let mut g = coapcc_link::grid::Grid::new(&cfg, 1).unwrap();
    assert!(g.send(0, udp(1, 2, 1, 4)).is_ok());
    assert!(g.send(0, udp(2, 2, 3, 4)).is_ok());
    assert_eq!(g.send(0, udp(3, 2, 4, 4)), Err(DropCause::MacQueue));
    assert_eq!(
        g.send(0, udp(4, 2, 1, 95)),
        Err(DropCause::FragmentsAborted)
    );
    let out = drain(&mut g);
    let delivered: Vec<_> = out.iter().map(|(_, o)| *o).collect();
    assert!(delivered.contains(&Output::Delivered { id: 1, node: 1 }));
    assert!(delivered.contains(&Output::Delivered { id: 2, node: 3 }));
    assert_eq!(
        delivered.len(),
        2,
        "the aborted datagram is never delivered"
    );
    // its first fragment went out and was acknowledged, to no avail
    assert_eq!(g.node_record(2).data_frames, 3);
}

/// 802.15.4 (ns-3 timing), one hop, one 45-byte frame (47 with FCS: 12 +
/// 94 = 106 symbols = 1.696 ms): backoff k × 320 µs (k drawn from node 2's
/// MAC stream after its sequence number and tag), CCA 128 µs, turnaround
/// 192 µs, then the frame; handed up when it ends.
#[test]
fn ieee802154_one_frame_one_hop() {
    let cfg = Config {
        mac: MacProfile::Ieee802154,
        ..line(2)
    };
    let seed = 11;
    let mut rng = SimRng::new(derive(seed, Stream::Mac, 1));
    rng.next_u64();
    rng.next_u64();
    let k = u64::from(rng.int_in(0, 7));
    let mut g = coapcc_link::grid::Grid::new(&cfg, seed).unwrap();
    g.send(0, udp(9, 2, 1, 4)).unwrap();
    let expected = k * 320 * US + 128 * US + 192 * US + 1_696 * US;
    assert_eq!(
        drain(&mut g),
        [(expected, Output::Delivered { id: 9, node: 1 })]
    );
    assert_eq!(g.node_record(1).ack_frames, 1);
    assert_eq!(g.node_record(2).mac_drops, 0);
}

/// With one transmission allowed, the hidden terminals' first (and last)
/// frames are both lost: each sender checks for the acknowledgement at
/// 2 + 1.44 + 2 = 5.44 ms, finds none, and drops its datagram.
#[test]
fn contiki_drops_after_the_last_transmission() {
    let cfg = Config {
        transmissions: 1,
        ..line(3)
    };
    let mut g = coapcc_link::grid::Grid::new(&cfg, 7).unwrap();
    g.send(0, udp(1, 1, 2, 4)).unwrap();
    g.send(0, udp(3, 3, 2, 4)).unwrap();
    let dropped = |id| {
        (
            5_440 * US,
            Output::Dropped {
                id,
                cause: DropCause::MacRetries,
            },
        )
    };
    assert_eq!(drain(&mut g), [dropped(1), dropped(3)]);
    assert_eq!(
        (g.node_record(1).mac_drops, g.node_record(3).mac_drops),
        (1, 1)
    );
    assert_eq!(g.drops().mac_retries, 2);
}

/// Conservation: heavy random traffic between random nodes of the 6 × 6
/// grid, both MAC profiles and both reassembly modes; every datagram is
/// reported exactly once (delivered or dropped, refused at its source
/// included), nothing is left inside.
#[test]
fn every_datagram_is_reported_once() {
    use coapcc_link::grid::Reassembly;
    for (mac, reassembly) in [
        (MacProfile::Contiki, Reassembly::Single),
        (MacProfile::Contiki, Reassembly::PerSender),
        (MacProfile::Ieee802154, Reassembly::Single),
        (MacProfile::Ieee802154, Reassembly::PerSender),
    ] {
        let cfg = Config {
            mac,
            reassembly,
            ..Config::default()
        };
        let mut g = coapcc_link::grid::Grid::new(&cfg, 5).unwrap();
        let mut rng = SimRng::new(99);
        let total = 3000u32;
        let mut seen = vec![0u8; total as usize];
        let mut now = 0;
        let mut refused = 0;
        for id in 0..total {
            now += u64::from(rng.int_in(0, 40)) * MS;
            while let Some(t) = g.next_wakeup().filter(|&t| t <= now) {
                if let (_, Some(o)) = g.poll(t).unwrap() {
                    let (Output::Delivered { id, .. } | Output::Dropped { id, .. }) = o;
                    seen[id as usize] += 1;
                }
            }
            let src = rng.int_in(1, 36);
            let dst = (src + rng.int_in(0, 34)) % 36 + 1;
            let coap = if rng.uniform() < 0.5 { 95 } else { 6 };
            if g.send(now, udp(id, src, dst, coap)).is_err() {
                seen[id as usize] += 1;
                refused += 1;
            }
        }
        for (_, o) in drain(&mut g) {
            let (Output::Delivered { id, .. } | Output::Dropped { id, .. }) = o;
            seen[id as usize] += 1;
        }
        assert!(
            seen.iter().all(|&n| n == 1),
            "{mac:?}/{reassembly:?}: a datagram reported {} times",
            seen.iter().find(|&&n| n != 1).unwrap()
        );
        assert_eq!(g.in_flight(), 0);
        let drops = g.drops();
        assert!(
            drops.total() + refused > 0,
            "{mac:?}/{reassembly:?}: this load must lose something"
        );
    }
}
