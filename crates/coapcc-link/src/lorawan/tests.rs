//! The LoRaWAN network ([`Lorawan`]) driven by hand: times worked out from
//! Semtech's formula, the duty cycle, the class-A windows, capture, half
//! duplex, the network server's hold; conservation and determinism under
//! a random load.

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap};

use super::interference::Capture;
use super::{Config, Lorawan, Sf, SfAllocation};
use crate::rng::SimRng;
use crate::time::{Nanos, SECOND};
use crate::{Datagram, DropCause, Network, NodeId, Output, PacketId};

const MS: Nanos = 1_000_000;
const US: Nanos = 1_000;

/// Time on air of a 34-byte PHY payload (20-byte CoAP message, 1-byte SCHC
/// residue, 13 bytes of LoRaWAN) at SF7: numerator 8·34 − 28 + 28 + 16 =
/// 288, /28 = 10.29 → 11 blocks · 5 = 55, + 8 = 63 payload symbols;
/// (12.25 + 63) · 1.024 ms = 77.056 ms.
const TOA_SF7_34: Nanos = 77_056 * US;

/// The same frame at SF12 (RX2), DE = 1: 8·34 − 48 + 44 = 268, /40 = 6.7
/// → 7 · 5 = 35, + 8 = 43; (12.25 + 43) · 32.768 ms = 1810.432 ms.
const TOA_SF12_34: Nanos = 1_810_432 * US;

/// The default backhaul, 10 ms.
const BACKHAUL: Nanos = 10 * MS;

fn dg(id: PacketId, src: NodeId, dst: NodeId, payload: u16) -> Datagram {
    Datagram {
        id,
        src,
        dst,
        transport_header: 8,
        payload,
        unnecessary: false,
    }
}

/// `n` devices at SF7 on one channel.
fn sf7(n: u32) -> Config {
    Config {
        devices: n,
        spreading_factor: SfAllocation::Fixed(Sf::SF7),
        uplink_channels: 1,
        ..Config::default()
    }
}

/// Polls everything due by `until`, returning the outputs with their times.
fn run(net: &mut Lorawan, until: Nanos) -> Vec<(Nanos, Output)> {
    std::iter::from_fn(|| net.poll(until))
        .filter_map(|(t, o)| o.map(|o| (t, o)))
        .collect()
}

fn delivered(id: PacketId, node: NodeId) -> Output {
    Output::Delivered { id, node }
}

fn dropped(id: PacketId, cause: DropCause) -> Output {
    Output::Dropped { id, cause }
}

#[test]
fn an_exchange_by_hand() {
    let mut net = Lorawan::with_positions(&sf7(1), 1, &[(100.0, 0.0)]).unwrap();
    assert_eq!(
        (net.server(), net.sf(0), net.in_range(0)),
        (1, Sf::SF7, true)
    );
    assert_eq!(net.distance_m(0), 100.0);
    // The uplink goes at once: on air 77.056 ms, then the backhaul.
    net.send(0, dg(0, 0, 1, 20)).unwrap();
    let up = TOA_SF7_34 + BACKHAUL;
    assert_eq!(run(&mut net, up), [(up, delivered(0, 1))]);
    // The response reaches the gateway 10 ms later, before RX1 (1 s after
    // the uplink's end), and goes there at SF7: delivered at its end.
    net.send(up, dg(1, 1, 0, 20)).unwrap();
    let rx1 = TOA_SF7_34 + SECOND;
    let down = rx1 + TOA_SF7_34;
    assert_eq!(down, 1_154_112 * US);
    assert_eq!(run(&mut net, Nanos::MAX), [(down, delivered(1, 0))]);
    assert_eq!(net.in_flight(), 0);
    let r = net.record();
    assert_eq!(
        (r.uplink_frames, r.downlink_frames, r.rx2_downlinks),
        (1, 1, 0)
    );
}

#[test]
fn a_response_after_rx1_opened_goes_in_rx2() {
    let mut net = Lorawan::with_positions(&sf7(1), 1, &[(100.0, 0.0)]).unwrap();
    net.send(0, dg(0, 0, 1, 20)).unwrap();
    run(&mut net, SECOND);
    // At the gateway at 1.51 s: RX1 (1.077056 s) has opened, RX2
    // (2.077056 s) has not; RX2 is SF12 on 869.525 MHz.
    net.send(1_500 * MS, dg(1, 1, 0, 20)).unwrap();
    let down = TOA_SF7_34 + 2 * SECOND + TOA_SF12_34;
    assert_eq!(down, 3_887_488 * US);
    assert_eq!(run(&mut net, Nanos::MAX), [(down, delivered(1, 0))]);
    assert_eq!(net.record().rx2_downlinks, 1);
}

#[test]
fn a_response_after_rx2_waits_for_the_next_uplink() {
    let mut net = Lorawan::with_positions(&sf7(1), 1, &[(100.0, 0.0)]).unwrap();
    net.send(0, dg(0, 0, 1, 20)).unwrap();
    run(&mut net, SECOND);
    // At the gateway at 2.51 s: both windows have opened. Held.
    net.send(2_500 * MS, dg(1, 1, 0, 20)).unwrap();
    assert_eq!(run(&mut net, 10 * SECOND), []);
    assert_eq!(net.in_flight(), 1);
    // The next uplink at 10 s (the duty cycle allows from 7.7056 s); the
    // held response goes in its RX1.
    net.send(10 * SECOND, dg(2, 0, 1, 20)).unwrap();
    let end = 10 * SECOND + TOA_SF7_34;
    assert_eq!(
        run(&mut net, Nanos::MAX),
        [
            (end + BACKHAUL, delivered(2, 1)),
            (end + SECOND + TOA_SF7_34, delivered(1, 0)),
        ]
    );
    assert_eq!(net.record().held_downlinks, 1);
}

#[test]
fn the_hold_is_bounded_and_expires() {
    let cfg = Config {
        held_downlinks: 1,
        ..sf7(1)
    };
    let mut net = Lorawan::with_positions(&cfg, 1, &[(100.0, 0.0)]).unwrap();
    net.send(0, dg(0, 0, 1, 20)).unwrap();
    run(&mut net, SECOND);
    // Two late responses: the first is held, the second finds the hold full.
    net.send(5 * SECOND, dg(1, 1, 0, 20)).unwrap();
    net.send(6 * SECOND, dg(2, 1, 0, 20)).unwrap();
    let at = |s: Nanos| s * SECOND + BACKHAUL;
    assert_eq!(
        run(&mut net, Nanos::MAX),
        [
            (at(6), dropped(2, DropCause::NoWindow)),
            // No uplink follows: given up after 247 s.
            (at(5 + 247), dropped(1, DropCause::NoWindow)),
        ]
    );
    assert_eq!(net.in_flight(), 0);
}

#[test]
fn uplinks_obey_the_duty_cycle_and_the_windows() {
    let mut net = Lorawan::with_positions(&sf7(1), 1, &[(100.0, 0.0)]).unwrap();
    net.send(0, dg(0, 0, 1, 20)).unwrap();
    net.send(MS, dg(1, 0, 1, 20)).unwrap();
    // The device holds one frame: a third is refused.
    assert_eq!(net.send(2 * MS, dg(2, 0, 1, 20)), Err(DropCause::MacQueue));
    // The second waits out 99 airtimes after the first (1 %): it starts at
    // 100 × 77.056 ms = 7.7056 s, after the windows (over at 2.339 s).
    let second = 100 * TOA_SF7_34;
    assert_eq!(second - TOA_SF7_34, 99 * TOA_SF7_34);
    assert_eq!(
        run(&mut net, Nanos::MAX),
        [
            (TOA_SF7_34 + BACKHAUL, delivered(0, 1)),
            (second + TOA_SF7_34 + BACKHAUL, delivered(1, 1)),
        ]
    );
    assert_eq!(net.record().waiting, (second - MS) as f64 / 1e9);
}

#[test]
fn without_a_downlink_the_device_waits_out_rx2() {
    // No duty cycle: the device waits only for its windows, RX2 opening
    // plus 8 SF12 symbols (8 × 32.768 ms = 262.144 ms).
    let cfg = Config {
        duty_cycle: super::DutyCycles::OFF,
        ..sf7(1)
    };
    let mut net = Lorawan::with_positions(&cfg, 1, &[(100.0, 0.0)]).unwrap();
    net.send(0, dg(0, 0, 1, 20)).unwrap();
    net.send(MS, dg(1, 0, 1, 20)).unwrap();
    let second = TOA_SF7_34 + 2 * SECOND + 262_144 * US;
    let outs = run(&mut net, Nanos::MAX);
    assert_eq!(outs[1], (second + TOA_SF7_34 + BACKHAUL, delivered(1, 1)));
}

/// Two SF7 devices on one channel at `(d0, 0)` and `(d1, 0)` send at 0.
fn two_at_once(capture: Capture, d0: f64, d1: f64) -> Vec<(Nanos, Output)> {
    let cfg = Config { capture, ..sf7(2) };
    let mut net = Lorawan::with_positions(&cfg, 1, &[(d0, 0.0), (d1, 0.0)]).unwrap();
    net.send(0, dg(0, 0, 2, 20)).unwrap();
    net.send(0, dg(1, 1, 2, 20)).unwrap();
    run(&mut net, Nanos::MAX)
}

#[test]
fn overlapping_uplinks_collide_or_the_stronger_is_captured() {
    let end = TOA_SF7_34;
    // Without capture both are lost.
    assert_eq!(
        two_at_once(Capture::Off, 100.0, 200.0),
        [
            (end, dropped(0, DropCause::Collision)),
            (end, dropped(1, DropCause::Collision)),
        ]
    );
    // With capture, 37.6 · log₁₀ 2 = 11.3 dB apart: the nearer one survives.
    assert_eq!(
        two_at_once(Capture::Goursaud, 100.0, 200.0),
        [
            (end, dropped(1, DropCause::Collision)),
            (end + BACKHAUL, delivered(0, 2)),
        ]
    );
    // 37.6 · log₁₀ 1.3 = 4.3 dB apart, below the 6 dB threshold: both lost.
    assert_eq!(
        two_at_once(Capture::Goursaud, 100.0, 130.0),
        [
            (end, dropped(0, DropCause::Collision)),
            (end, dropped(1, DropCause::Collision)),
        ]
    );
}

#[test]
fn a_downlink_cuts_off_an_uplink_and_a_nearby_uplink_spoils_a_downlink() {
    // Device 0 at 100 m gets its response in RX1 at 1.077056 s; device 1
    // starts an uplink at 1.05 s on the same channel.
    let exchange = |pos1: (f64, f64)| {
        let mut net = Lorawan::with_positions(&sf7(2), 1, &[(100.0, 0.0), pos1]).unwrap();
        net.send(0, dg(0, 0, 2, 20)).unwrap();
        let mut outs = run(&mut net, 20 * MS);
        net.send(20 * MS, dg(1, 2, 0, 20)).unwrap();
        outs.extend(run(&mut net, 1_050 * MS));
        net.send(1_050 * MS, dg(2, 1, 2, 20)).unwrap();
        outs.extend(run(&mut net, Nanos::MAX));
        outs
    };
    let down = TOA_SF7_34 + SECOND + TOA_SF7_34;
    // 1 km from device 0: the downlink (−68.9 dBm there) is far stronger
    // than the uplink (−106.5 dBm); the gateway, transmitting, loses the
    // uplink.
    assert_eq!(
        exchange((-900.0, 0.0)),
        [
            (TOA_SF7_34 + BACKHAUL, delivered(0, 2)),
            (1_050 * MS + TOA_SF7_34, dropped(2, DropCause::GatewayBusy)),
            (down, delivered(1, 0)),
        ]
    );
    // 10 m from device 0: its uplink arrives there at −31.3 dBm and
    // destroys the downlink.
    assert_eq!(
        exchange((100.0, 10.0))[2],
        (down, dropped(1, DropCause::Collision))
    );
}

#[test]
fn payloads_past_the_limit_are_refused() {
    let cfg = Config {
        spreading_factor: SfAllocation::Fixed(Sf::SF12),
        ..sf7(1)
    };
    let mut net = Lorawan::with_positions(&cfg, 1, &[(100.0, 0.0)]).unwrap();
    // SF12 carries 51 bytes of FRMPayload: 50 of CoAP and the residue.
    assert_eq!(net.max_payload(0), 50);
    assert_eq!(net.send(0, dg(0, 0, 1, 50)), Ok(()));
    assert_eq!(
        net.send(0, dg(1, 0, 1, 51)),
        Err(DropCause::PayloadTooLarge)
    );
    assert_eq!(
        net.send(0, dg(2, 1, 0, 51)),
        Err(DropCause::PayloadTooLarge)
    );
    assert_eq!(net.in_flight(), 1);
}

#[test]
fn below_the_gateway_sensitivity() {
    // 8 km at SF12: 14 − 7.7 − 37.6 · 3.903 = −140.45 dBm, above the
    // gateway's −142.5; 9 km: −142.38, above; 10 km: −144.1, below.
    let cfg = Config {
        spreading_factor: SfAllocation::Fixed(Sf::SF12),
        ..sf7(1)
    };
    let mut net = Lorawan::with_positions(&cfg, 1, &[(10_000.0, 0.0)]).unwrap();
    assert!(!net.in_range(0));
    net.send(0, dg(0, 0, 1, 20)).unwrap();
    let outs = run(&mut net, Nanos::MAX);
    assert_eq!(
        outs,
        [(TOA_SF12_34, dropped(0, DropCause::BelowSensitivity))]
    );
}

/// A random load: each of `cfg.devices` devices sends a message of 1 to 60
/// bytes every 60 s on average (exponential gaps) for 1200 s; the server
/// answers a delivered uplink after 0 to 3 s with probability 0.8. Checks
/// conservation at every step and returns every output.
fn random_load(cfg: &Config, seed: u64) -> (Vec<(Nanos, Output)>, Lorawan) {
    let mut net = Lorawan::new(cfg, seed).unwrap();
    let server = net.server();
    let mut rng = SimRng::new(seed ^ 0xABCD);
    // (time, src, dst, payload)
    let mut sends: BinaryHeap<Reverse<(Nanos, NodeId, NodeId, u16)>> = BinaryHeap::new();
    for dev in 0..cfg.devices {
        let mut t = 0.0;
        loop {
            t += -(1.0 - rng.uniform()).ln() * 60.0;
            if t > 1200.0 {
                break;
            }
            let len = rng.int_in(1, 60) as u16;
            sends.push(Reverse(((t * 1e9) as Nanos, dev, server, len)));
        }
    }
    let (mut sent, mut delivered_n, mut dropped_n) = (0u64, 0u64, 0u64);
    let mut next_id: PacketId = 0;
    let mut seen = BTreeSet::new();
    // The sender of each datagram, by id.
    let mut src_of: Vec<NodeId> = Vec::new();
    let mut outs = Vec::new();
    loop {
        let wake = net.next_wakeup();
        let send_at = sends.peek().map(|Reverse(s)| s.0);
        match (wake, send_at) {
            (None, None) => break,
            (Some(w), s) if s.is_none_or(|s| w <= s) => {
                let (t, out) = net.poll(w).expect("due");
                if let Some(o) = out {
                    let id = match o {
                        Output::Delivered { id, node } => {
                            delivered_n += 1;
                            if node == server && rng.uniform() < 0.8 {
                                let at = t + (rng.uniform() * 3e9) as Nanos;
                                let len = rng.int_in(1, 60) as u16;
                                let dev = src_of[id as usize];
                                sends.push(Reverse((at, server, dev, len)));
                            }
                            id
                        }
                        Output::Dropped { id, .. } => {
                            dropped_n += 1;
                            id
                        }
                    };
                    assert!(seen.insert(id), "packet {id} reported twice");
                    outs.push((t, o));
                }
            }
            _ => {
                let Reverse((t, src, dst, len)) = sends.pop().expect("a send");
                let id = next_id;
                next_id += 1;
                sent += 1;
                src_of.push(src);
                if let Err(cause) = net.send(t, dg(id, src, dst, len)) {
                    dropped_n += 1;
                    seen.insert(id);
                    outs.push((t, dropped(id, cause)));
                }
            }
        }
        assert_eq!(sent, delivered_n + dropped_n + net.in_flight());
    }
    assert_eq!(net.in_flight(), 0);
    assert_eq!(seen.len() as u64, sent);
    (outs, net)
}

#[test]
fn conservation_under_a_random_load() {
    let cfg = Config {
        devices: 50,
        ..Config::default()
    };
    let (outs, net) = random_load(&cfg, 3);
    let count = |f: &dyn Fn(&Output) -> bool| outs.iter().filter(|(_, o)| f(o)).count();
    let up = count(&|o| matches!(o, Output::Delivered { node: 50, .. }));
    let down = count(&|o| matches!(o, Output::Delivered { node, .. } if *node < 50));
    let cause =
        |c: DropCause| count(&|o| matches!(o, Output::Dropped { cause, .. } if *cause == c));
    // Some of everything: a lively load. The gateway's duty cycle (10 % in
    // g3, 1 % in g1) lets few responses through (with this seed: 588
    // uplinks and 84 downlinks delivered; 286 downlinks given up for the
    // duty cycle, 43 for want of a window, 138 uplinks and downlinks lost
    // to a busy gateway, 15 collisions).
    assert!(
        up > 500 && down > 50,
        "{up} uplinks, {down} downlinks delivered"
    );
    for c in [
        DropCause::PayloadTooLarge,
        DropCause::MacQueue,
        DropCause::Collision,
        DropCause::GatewayBusy,
        DropCause::NoWindow,
        DropCause::DutyCycle,
    ] {
        assert!(cause(c) > 0, "no {c:?}");
    }
    assert!(net.record().held_downlinks > 0);
    // Placement: in the disc, SFs by distance.
    for dev in 0..50 {
        assert!(net.distance_m(dev) <= 6400.0);
        assert_eq!(
            net.sf(dev),
            cfg.path_loss.allocate_sf(net.distance_m(dev)).sf
        );
    }
}

#[test]
fn the_same_seed_gives_the_same_run() {
    let cfg = Config {
        devices: 20,
        ..Config::default()
    };
    let (a, na) = random_load(&cfg, 11);
    let (b, nb) = random_load(&cfg, 11);
    assert_eq!(a, b);
    assert_eq!(na.events(), nb.events());
    assert_eq!(na.record(), nb.record());
    let other = Lorawan::new(&cfg, 12).unwrap();
    assert_ne!(na.position(0), other.position(0));
    // Device 0 keeps its place whatever the number of devices.
    let more = Lorawan::new(
        &Config {
            devices: 30,
            ..cfg.clone()
        },
        11,
    )
    .unwrap();
    assert_eq!(na.position(0), more.position(0));
}

#[test]
fn construction_checks() {
    let e = Lorawan::new(
        &Config {
            devices: 0,
            ..Config::default()
        },
        1,
    )
    .err()
    .unwrap();
    assert!(e.starts_with("network.devices:"), "{e}");
    let e = Lorawan::with_positions(&sf7(2), 1, &[(1.0, 1.0)])
        .err()
        .unwrap();
    assert!(
        e.contains("1 positions") && e.contains("network.devices = 2"),
        "{e}"
    );
}
