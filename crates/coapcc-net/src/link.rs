//! The constrained-link model of `testbed.md` §1 in closed form, for a
//! real-time relay: given when a packet enters, say at once when it leaves
//! (or that it is dropped), so the relay needs one timer per packet.
//!
//! A bottleneck direction is a FIFO: tail-drop buffer counting the bytes of
//! waiting IP packets (the packet being serialised is not counted, as in the
//! testbed), a serialiser at the link rate, the two-state link-error model
//! ([`coapcc_sim::link_errors::LinkErrors`]) drawn when serialisation ends,
//! then the propagation delay. Because the queue is FIFO, a packet's start of
//! serialisation is `max(arrival, end of the previous one)`, and the packets
//! still waiting at any instant are those whose start is later. The router ↔
//! server path adds a uniform per-packet delay and keeps packets in order.
//!
//! The arithmetic (IP size = 20 + 8 + CoAP bytes, serialisation rounding, the
//! error draws and their seeds) is the simulator's, so the same [`Network`]
//! gives the same per-packet fates for the same arrival times.

use std::collections::VecDeque;

use coapcc_sim::config::Network;
use coapcc_sim::link_errors::LinkErrors;
use coapcc_sim::metrics::LinkRecord;
use coapcc_sim::rng::{derive, SimRng, Stream};
use coapcc_sim::testbed::{IPV4_HEADER, UDP_HEADER};
use coapcc_sim::time::{from_secs, serialisation, to_secs, Nanos};

/// What becomes of a packet offered to a bottleneck direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    /// It reaches the far end of the link at this time.
    Arrives(Nanos),
    /// Tail-dropped at the buffer.
    DroppedBuffer,
    /// Lost to a link error.
    DroppedError,
}

/// One direction of the bottleneck.
pub struct Bottleneck {
    rate_bps: u64,
    delay: Nanos,
    limit: Option<u64>,
    /// When the serialiser finishes the last accepted packet.
    free_at: Nanos,
    /// Packets accepted but not yet started: (start time, IP bytes).
    waiting: VecDeque<(Nanos, u64)>,
    waiting_bytes: u64,
    errors: LinkErrors,
    busy: Nanos,
    record: LinkRecord,
}

/// Which direction (selects the error process's seeds, as in the testbed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Clients → router.
    Up = 0,
    /// Router → clients.
    Down = 1,
}

/// The IP-level size of a UDP datagram carrying `coap_len` bytes.
pub fn ip_size(coap_len: usize) -> u64 {
    (IPV4_HEADER + UDP_HEADER + coap_len) as u64
}

impl Bottleneck {
    /// Direction `dir` of `net`, its error process seeded from `seed` as the
    /// testbed seeds replication streams.
    pub fn new(net: &Network, dir: Direction, seed: u64) -> Self {
        let (rate_bps, delay_ms) = match dir {
            Direction::Up => (net.uplink_bps, net.uplink_delay_ms),
            Direction::Down => (net.downlink_bps, net.downlink_delay_ms),
        };
        Bottleneck {
            rate_bps,
            delay: from_secs(delay_ms / 1000.0),
            limit: net.buffer.limit(),
            free_at: 0,
            waiting: VecDeque::new(),
            waiting_bytes: 0,
            errors: LinkErrors::new(
                net.errors,
                derive(seed, Stream::ErrorState, dir as u64),
                derive(seed, Stream::ErrorLoss, dir as u64),
            ),
            busy: 0,
            record: LinkRecord::default(),
        }
    }

    /// A packet of `ip_len` bytes enters at `now` (non-decreasing between
    /// calls).
    pub fn offer(&mut self, now: Nanos, ip_len: u64) -> Fate {
        while let Some(&(start, len)) = self.waiting.front() {
            if start > now {
                break;
            }
            self.waiting.pop_front();
            self.waiting_bytes -= len;
        }
        let start = if self.free_at <= now {
            now
        } else if self.limit.is_some_and(|l| self.waiting_bytes + ip_len > l) {
            self.record.dropped_buffer += 1;
            return Fate::DroppedBuffer;
        } else {
            self.waiting.push_back((self.free_at, ip_len));
            self.waiting_bytes += ip_len;
            self.free_at
        };
        let t = serialisation(ip_len as usize, self.rate_bps);
        let end = start + t;
        self.free_at = end;
        self.busy += t;
        self.record.packets += 1;
        self.record.bytes += ip_len;
        if self.errors.loses(end) {
            self.record.dropped_error += 1;
            return Fate::DroppedError;
        }
        Fate::Arrives(end + self.delay)
    }

    /// Bytes waiting (not being serialised) at the last offer.
    pub fn waiting_bytes(&self) -> u64 {
        self.waiting_bytes
    }

    /// Counters so far (`busy` in seconds).
    pub fn record(&self) -> LinkRecord {
        let mut r = self.record.clone();
        r.busy = to_secs(self.busy);
        r
    }

    /// Counts a packet dropped outside the model (the relay's own bound).
    pub fn count_overflow(&mut self) {
        self.record.dropped_buffer += 1;
    }
}

/// The router ↔ server path in one direction: uniform delay, order kept.
pub struct Path {
    lo: Nanos,
    hi: Nanos,
    last: Nanos,
    rng: SimRng,
}

impl Path {
    /// Direction `dir` of `net`'s path, seeded as the testbed seeds it.
    pub fn new(net: &Network, dir: Direction, seed: u64) -> Self {
        Path {
            lo: from_secs(net.path_delay_ms[0] / 1000.0),
            hi: from_secs(net.path_delay_ms[1] / 1000.0),
            last: 0,
            rng: SimRng::new(derive(seed, Stream::PathJitter, dir as u64)),
        }
    }

    /// When a packet entering at `now` leaves.
    pub fn arrival(&mut self, now: Nanos) -> Nanos {
        let d = self.lo + ((self.hi - self.lo) as f64 * self.rng.uniform()).round() as Nanos;
        self.last = self.last.max(now + d);
        self.last
    }
}

/// `net` sped up `f` times: rates × `f`, propagation and path delays ÷ `f`.
/// Buffers (bytes) and the link-error processes (whose sojourn times are
/// fixed by the model) are unchanged.
pub fn scaled(net: &Network, f: f64) -> Network {
    Network {
        uplink_bps: (net.uplink_bps as f64 * f).round() as u64,
        downlink_bps: (net.downlink_bps as f64 * f).round() as u64,
        uplink_delay_ms: net.uplink_delay_ms / f,
        downlink_delay_ms: net.downlink_delay_ms / f,
        path_delay_ms: [net.path_delay_ms[0] / f, net.path_delay_ms[1] / f],
        ..net.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coapcc_sim::config::Buffer;
    use coapcc_sim::link_errors::ErrorProfile;

    const MS: Nanos = 1_000_000;

    fn net(buffer: Buffer) -> Network {
        Network {
            buffer,
            ..Network::default()
        }
    }

    /// 60 kbit/s moves 7500 B/s: a 38-byte request takes 38/7500 s
    /// = 5.0667 ms, plus 200 ms of propagation.
    #[test]
    fn one_packet_hand_computed() {
        let mut up = Bottleneck::new(&net(Buffer::Infinite), Direction::Up, 1);
        assert_eq!(ip_size(10), 38);
        let Fate::Arrives(t) = up.offer(0, 38) else {
            panic!()
        };
        assert_eq!(t, 200 * MS + 5_066_667);
        // a second packet at 1 ms waits for the first, then takes its own time
        let Fate::Arrives(t2) = up.offer(MS, 38) else {
            panic!()
        };
        assert_eq!(t2, 200 * MS + 2 * 5_066_667);
        let r = up.record();
        assert_eq!((r.packets, r.bytes), (2, 76));
        assert!((r.busy - 2.0 * 0.005066667).abs() < 1e-9);
    }

    /// Buffer 100 B: the packet being serialised does not count; two 38-byte
    /// packets wait (76 B); a third would make 114 > 100 and is dropped; once
    /// the first waiting one has started, there is room again.
    #[test]
    fn tail_drop_counts_waiting_bytes_only() {
        let mut up = Bottleneck::new(&net(Buffer::Bytes(100)), Direction::Up, 1);
        assert!(matches!(up.offer(0, 38), Fate::Arrives(_)));
        assert!(matches!(up.offer(0, 38), Fate::Arrives(_)));
        assert!(matches!(up.offer(0, 38), Fate::Arrives(_)));
        assert_eq!(up.waiting_bytes(), 76);
        assert_eq!(up.offer(0, 38), Fate::DroppedBuffer);
        // at 5.07 ms the second packet starts serialising
        assert!(matches!(up.offer(5_066_667, 38), Fate::Arrives(_)));
        assert_eq!(up.waiting_bytes(), 76);
        assert_eq!(up.record().dropped_buffer, 1);
    }

    #[test]
    fn path_keeps_order_within_its_bounds() {
        let mut p = Path::new(&Network::default(), Direction::Up, 3);
        let mut last = 0;
        for i in 0..1000u64 {
            let now = i * MS / 10;
            let a = p.arrival(now);
            assert!(a >= last && a >= now + 10 * MS && a <= now.max(last) + 20 * MS);
            last = a;
        }
    }

    #[test]
    fn high_error_profile_loses_about_its_average() {
        let n = Network {
            errors: ErrorProfile::High,
            ..Network::default()
        };
        let mut down = Bottleneck::new(&n, Direction::Down, 9);
        let total = 40_000u64;
        let mut lost = 0;
        for i in 0..total {
            // one 38-byte packet every 20 ms: never queued
            if down.offer(i * 20 * MS, 38) == Fate::DroppedError {
                lost += 1;
            }
        }
        let rate = lost as f64 / total as f64;
        assert!(
            (rate - ErrorProfile::High.average_loss()).abs() < 0.02,
            "{rate}"
        );
    }
}
