//! The 802.11 DCF star against Bianchi's saturation throughput ("Performance
//! analysis of the IEEE 802.11 distributed coordination function", IEEE
//! JSAC 18(3), 2000), and against timings computed by hand.

use coapcc_link::star::{Config, Star, AP, SERVER};
use coapcc_link::{Datagram, Nanos, Network, NodeId, Output, PacketId};

const US: Nanos = 1_000;

fn datagram(id: PacketId, src: NodeId, dst: NodeId, payload: u16) -> Datagram {
    Datagram {
        id,
        src,
        dst,
        transport_header: 8,
        payload,
        unnecessary: false,
    }
}

/// One station, one 1064-byte IP packet, nothing else: it goes at once (the
/// medium has been idle for DIFS since time 0 — it is sent at 50 µs, when
/// DIFS has passed): PLCP 192 µs + (1064 + 36) × 8 / 2 Mbit/s = 4400 µs; ACK
/// SIFS later, 192 + 56 = 248 µs; then the wire: 1064 × 8 / 10 Mbit/s =
/// 851.2 µs. Delivered at 50 + 4592 + 10 + 248 + 851.2 = 5751.2 µs.
#[test]
fn one_frame_hand_computed() {
    let cfg = Config {
        stations: 1,
        ..Config::default()
    };
    assert_eq!(cfg.data_airtime(1064), 4_592 * US);
    assert_eq!(cfg.ack_airtime(), 248 * US);
    assert_eq!(cfg.difs(), 50 * US);
    assert_eq!(cfg.eifs(), 308 * US);
    let mut s = Star::new(&cfg, 1).unwrap();
    s.send(50 * US, datagram(1, 1, SERVER, 1036)).unwrap();
    let mut out = Vec::new();
    while let Some(t) = s.next_wakeup() {
        if let (at, Some(o)) = s.poll(t).unwrap() {
            out.push((at, o));
        }
    }
    assert_eq!(
        out,
        [(
            5_751_200,
            Output::Delivered {
                id: 1,
                node: SERVER
            }
        )]
    );
    let r = s.record();
    assert_eq!((r.data_frames, r.delivered_frames, r.collisions), (1, 1, 0));
}

/// Bianchi's model for n saturated stations, basic access: the fixed point
/// τ = 2(1−2p) / ((1−2p)(W+1) + pW(1−(2p)^m)), p = 1 − (1−τ)^(n−1), with
/// W = CWmin + 1 = 32 and m = 5 (CWmax + 1 = 32·2^5); then
/// S = Ps·Ptr·E[P] / ((1−Ptr)·σ + Ptr·Ps·Ts + Ptr·(1−Ps)·Tc).
/// Ts = data + SIFS + ACK + DIFS. For Tc the original model takes
/// data + DIFS; under DCF the stations that did not collide wait EIFS
/// (SIFS + ACK + DIFS) after a collision, so Tc = data + EIFS = Ts —
/// what the protocol we model does. Returns bit/s of IP packets.
fn bianchi(n: u32, cfg: &Config, ip_len: u16) -> f64 {
    let w = f64::from(cfg.cw_min + 1);
    let m = ((f64::from(cfg.cw_max + 1) / w).log2()).round() as i32;
    let tau_of = |p: f64| {
        2.0 * (1.0 - 2.0 * p) / ((1.0 - 2.0 * p) * (w + 1.0) + p * w * (1.0 - (2.0 * p).powi(m)))
    };
    // bisection on p: f(p) = p − (1 − (1 − τ(p))^(n−1)) is increasing
    let (mut lo, mut hi) = (0.0f64, 0.999_999f64);
    for _ in 0..200 {
        let p = 0.5 * (lo + hi);
        let f = p - (1.0 - (1.0 - tau_of(p)).powi(n as i32 - 1));
        if f > 0.0 {
            hi = p;
        } else {
            lo = p;
        }
    }
    let tau = tau_of(0.5 * (lo + hi));
    let nf = f64::from(n);
    let ptr = 1.0 - (1.0 - tau).powf(nf);
    let ps = nf * tau * (1.0 - tau).powf(nf - 1.0) / ptr;
    let sec = |ns: Nanos| ns as f64 * 1e-9;
    let data = sec(cfg.data_airtime(ip_len));
    let ts = data + sec(cfg.sifs() + cfg.ack_airtime() + cfg.difs());
    let tc = data + sec(cfg.eifs());
    let slot = sec(cfg.slot());
    ps * ptr * f64::from(ip_len) * 8.0
        / ((1.0 - ptr) * slot + ptr * ps * ts + ptr * (1.0 - ps) * tc)
}

/// Saturation: every station always has a frame (its queue is refilled as
/// frames leave it); IP throughput at the server over 100 s after a 5 s
/// warm-up.
fn saturated(n: u32, cfg: &Config, ip_len: u16, seed: u64) -> f64 {
    let cfg = Config {
        stations: n,
        ..cfg.clone()
    };
    let mut s = Star::new(&cfg, seed).unwrap();
    let payload = ip_len - 28;
    let mut next_id: PacketId = 0;
    let mut owner = Vec::new();
    for st in 1..=n {
        for _ in 0..cfg.queue {
            s.send(0, datagram(next_id, st, SERVER, payload)).unwrap();
            owner.push(st);
            next_id += 1;
        }
    }
    let (warm, end) = (5_000_000_000u64, 105_000_000_000u64);
    let mut bits = 0u64;
    while let Some(t) = s.next_wakeup() {
        if t > end {
            break;
        }
        let (at, out) = s.poll(t).unwrap();
        let id = match out {
            Some(Output::Delivered { id, node }) => {
                assert_eq!(node, SERVER);
                if at > warm {
                    bits += u64::from(ip_len) * 8;
                }
                id
            }
            Some(Output::Dropped { id, .. }) => id,
            None => continue,
        };
        let st = owner[id as usize];
        s.send(at, datagram(next_id, st, SERVER, payload)).unwrap();
        owner.push(st);
        next_id += 1;
    }
    bits as f64 / 100.0
}

#[test]
fn saturation_throughput_matches_bianchi() {
    let cfg = Config::default();
    let ip_len = 1064;
    for n in [1u32, 5, 12, 50] {
        let model = bianchi(n, &cfg, ip_len);
        let sim = saturated(n, &cfg, ip_len, 7);
        let err = (sim - model) / model;
        eprintln!(
            "n = {n}: simulated {sim:.0} bit/s, Bianchi {model:.0} bit/s, {:+.2} %",
            100.0 * err
        );
        assert!(err.abs() < 0.03, "n = {n}: {sim} vs {model}");
    }
}

/// Downlink: the server's packets cross the wire, queue at the access point
/// and contend like any station's; a full access-point queue drops.
#[test]
fn the_access_point_queues_and_drops() {
    let cfg = Config {
        stations: 2,
        ..Config::default()
    };
    let mut s = Star::new(&cfg, 3).unwrap();
    for id in 0..12 {
        s.send(0, datagram(id, SERVER, 1 + id % 2, 1036)).unwrap();
    }
    let mut delivered = 0;
    let mut dropped = 0;
    while let Some(t) = s.next_wakeup() {
        match s.poll(t).unwrap().1 {
            Some(Output::Delivered { node, .. }) => {
                assert!(node == 1 || node == 2);
                delivered += 1;
            }
            Some(Output::Dropped { .. }) => dropped += 1,
            None => {}
        }
    }
    // The wire brings them 851.2 µs apart; the first goes to the air at
    // once, so the queue fills only if the air is slower: it is (4.6 ms a
    // frame), so 8 are queued, 1 is on the air when the ninth arrives …
    assert_eq!(delivered + dropped, 12);
    assert!(
        dropped > 0,
        "a queue of 8 cannot hold 12 packets arriving 0.85 ms apart"
    );
    assert_eq!(s.record().queue_drops, dropped);
    assert_eq!(s.in_flight(), 0);
    let _ = AP;
}

/// The lossy channel: a 1064-byte IP packet is a 1100-byte MAC frame, 8800
/// bits; with a bit-error rate of 10⁻⁴ it is spoiled with probability
/// 1 − (1 − 10⁻⁴)^8800 = 1 − e^(8800·ln 0.9999) = 0.58523. One station
/// sending one packet every 50 ms (never two waiting) for 4000 packets: the
/// share of spoiled attempts is that probability (five binomial standard
/// deviations over ≈ 9600 attempts: ±0.025), a packet is lost only after
/// 1 + 7 spoiled attempts (0.58523^8 = 0.01381 of the packets, ±0.009), and
/// every packet is delivered or dropped exactly once.
#[test]
fn lossy_channel_spoils_frames_at_the_bit_error_rate() {
    let cfg = Config {
        stations: 1,
        bit_error_rate: 1e-4,
        ..Config::default()
    };
    let p = cfg.frame_error(1064);
    assert!((p - 0.58523).abs() < 1e-5, "{p}");
    let mut s = Star::new(&cfg, 3).unwrap();
    let n = 4000u32;
    let (mut delivered, mut dropped) = (0u32, 0u32);
    let mut settle = |o: Output| match o {
        Output::Delivered { node, .. } => {
            assert_eq!(node, SERVER);
            delivered += 1
        }
        Output::Dropped { .. } => dropped += 1,
    };
    for i in 0..n {
        let now = u64::from(i) * 50_000 * US;
        while let Some(t) = s.next_wakeup().filter(|&t| t <= now) {
            if let (_, Some(o)) = s.poll(t).unwrap() {
                settle(o);
            }
        }
        s.send(now, datagram(PacketId::from(i), 1, SERVER, 1036))
            .unwrap();
    }
    while let Some(t) = s.next_wakeup() {
        if let (_, Some(o)) = s.poll(t).unwrap() {
            settle(o);
        }
    }
    assert_eq!(delivered + dropped, n);
    let r = s.record();
    assert_eq!(r.collisions, 0);
    assert_eq!(r.retry_drops, u64::from(dropped));
    let attempts = r.data_frames as f64;
    let spoiled = s.corrupted_frames() as f64 / attempts;
    assert!(
        (spoiled - p).abs() < 5.0 * (p * (1.0 - p) / attempts).sqrt(),
        "{spoiled}"
    );
    let q = p.powi(8);
    let lost = f64::from(dropped) / f64::from(n);
    assert!(
        (lost - q).abs() < 5.0 * (q * (1.0 - q) / f64::from(n)).sqrt(),
        "{lost}"
    );
    // a lossless channel spoils nothing and stores no bit-error rate
    assert_eq!(Config::default().frame_error(1064), 0.0);
}
