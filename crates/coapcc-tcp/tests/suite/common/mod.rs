//! A two-endpoint in-memory wire for tests: fixed one-way delay, FIFO per
//! direction, and a caller-chosen drop rule.
#![allow(dead_code)]

use coapcc_tcp::{Segment, TcpConfig, TcpSocket};

pub const MS: u64 = 1_000_000;
pub const SEC: u64 = 1_000_000_000;

/// Which way a segment travels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    ToServer,
    ToClient,
}

/// A segment as the wire saw it.
#[derive(Clone, Debug)]
pub struct Sent {
    pub at: u64,
    pub dir: Dir,
    pub seg: Segment,
    pub dropped: bool,
}

type DropRule = Box<dyn FnMut(Dir, &Segment, usize) -> bool>;

pub struct Wire {
    pub now: u64,
    pub delay: u64,
    pub client: TcpSocket,
    pub server: Option<TcpSocket>,
    pub server_cfg: TcpConfig,
    flight: Vec<(u64, Dir, Segment)>,
    drop: DropRule,
    pub log: Vec<Sent>,
    counts: [usize; 2],
    /// Bytes the client / server application has read.
    pub client_rx: Vec<u8>,
    pub server_rx: Vec<u8>,
    /// Whether applications read what arrives.
    pub auto_read: bool,
    /// Data the server application writes as soon as it accepts, and whether
    /// it then closes.
    pub server_on_accept: Option<(Vec<u8>, bool)>,
}

impl Wire {
    /// A client that has just called connect at t = 0 (its SYN goes on the
    /// wire at the first run/step/flush, after a drop rule can be set).
    pub fn new(cfg: TcpConfig, delay: u64) -> Self {
        let client = TcpSocket::connect(0, cfg.clone());
        Wire {
            now: 0,
            delay,
            client,
            server: None,
            server_cfg: TcpConfig { isn: 7_000, ..cfg },
            flight: Vec::new(),
            drop: Box::new(|_, _, _| false),
            log: Vec::new(),
            counts: [0, 0],
            client_rx: Vec::new(),
            server_rx: Vec::new(),
            auto_read: true,
            server_on_accept: None,
        }
    }

    /// Drop rule: (direction, segment, index of the segment in its direction).
    pub fn set_drop(&mut self, f: impl FnMut(Dir, &Segment, usize) -> bool + 'static) {
        self.drop = Box::new(f);
    }

    pub fn server(&mut self) -> &mut TcpSocket {
        self.server.as_mut().expect("server accepted")
    }

    /// Moves every segment both endpoints want to send onto the wire.
    pub fn flush(&mut self) {
        loop {
            let mut any = false;
            while let Some(s) = self.client.poll_transmit(self.now) {
                self.put(Dir::ToServer, s);
                any = true;
            }
            if let Some(srv) = self.server.as_mut() {
                let mut out = Vec::new();
                while let Some(s) = srv.poll_transmit(self.now) {
                    out.push(s);
                }
                for s in out {
                    self.put(Dir::ToClient, s);
                    any = true;
                }
            }
            if !any {
                break;
            }
        }
    }

    fn put(&mut self, dir: Dir, seg: Segment) {
        let i = dir as usize;
        let idx = self.counts[i];
        self.counts[i] += 1;
        let dropped = (self.drop)(dir, &seg, idx);
        self.log.push(Sent {
            at: self.now,
            dir,
            seg: seg.clone(),
            dropped,
        });
        if !dropped {
            self.flight.push((self.now + self.delay, dir, seg));
        }
    }

    fn next_time(&self) -> Option<u64> {
        let arr = self.flight.iter().map(|f| f.0).min();
        let t1 = self.client.poll_timeout();
        let t2 = self.server.as_ref().and_then(|s| s.poll_timeout());
        [arr, t1, t2].into_iter().flatten().min()
    }

    /// Processes everything due at the next event time; false if idle.
    pub fn step(&mut self) -> bool {
        self.flush();
        let Some(t) = self.next_time() else {
            return false;
        };
        self.now = self.now.max(t);
        // Arrivals first, in order sent.
        while let Some(pos) = self.flight.iter().position(|f| f.0 <= self.now) {
            let (_, dir, seg) = self.flight.remove(pos);
            match dir {
                Dir::ToServer => {
                    if self.server.is_none() {
                        self.server = TcpSocket::accept(self.now, self.server_cfg.clone(), &seg);
                        if let (Some(srv), Some((data, close))) =
                            (self.server.as_mut(), self.server_on_accept.as_ref())
                        {
                            assert_eq!(srv.send(data), data.len());
                            if *close {
                                srv.close();
                            }
                        }
                    } else {
                        let now = self.now;
                        self.server().handle_segment(now, &seg);
                    }
                }
                Dir::ToClient => self.client.handle_segment(self.now, &seg),
            }
            self.read();
            self.flush();
        }
        if self.client.poll_timeout().is_some_and(|x| x <= self.now) {
            self.client.handle_timeout(self.now);
        }
        let now = self.now;
        if let Some(s) = self.server.as_mut() {
            if s.poll_timeout().is_some_and(|x| x <= now) {
                s.handle_timeout(now);
            }
        }
        self.read();
        self.flush();
        true
    }

    fn read(&mut self) {
        if !self.auto_read {
            return;
        }
        let mut buf = [0u8; 4096];
        loop {
            let n = self.client.recv(&mut buf);
            if n == 0 {
                break;
            }
            self.client_rx.extend_from_slice(&buf[..n]);
        }
        if let Some(s) = self.server.as_mut() {
            loop {
                let n = s.recv(&mut buf);
                if n == 0 {
                    break;
                }
                self.server_rx.extend_from_slice(&buf[..n]);
            }
        }
    }

    /// Runs events up to and including time `t`.
    pub fn run_until(&mut self, t: u64) {
        self.flush();
        while self.next_time().is_some_and(|x| x <= t) {
            self.step();
        }
        self.now = self.now.max(t);
    }

    /// Runs until `done` holds or nothing is left to do or `limit` passes.
    pub fn run_while(&mut self, limit: u64, mut busy: impl FnMut(&Wire) -> bool) {
        self.flush();
        while busy(self) {
            match self.next_time() {
                Some(t) if t <= limit => {
                    self.step();
                }
                _ => break,
            }
        }
    }

    /// Log entries in one direction.
    pub fn sent(&self, dir: Dir) -> impl Iterator<Item = &Sent> {
        self.log.iter().filter(move |s| s.dir == dir)
    }
}

/// The mechanisms `m` with every timer firing exactly when due (the `wheel`
/// switch off), for tests whose hand-computed times are another mechanism's;
/// the wheel's rounding has tests of its own
/// (`tcp_timers_fire_on_the_timer_wheel`, `syn_retries_fire_on_the_timer_wheel`).
#[allow(dead_code)]
pub fn exact_timers(m: coapcc_tcp::Mechanisms) -> TcpConfig {
    TcpConfig::with_mechanisms(coapcc_tcp::Mechanisms { wheel: false, ..m })
}

/// `tcp` with every timer firing exactly when due ([`exact_timers`]).
#[allow(dead_code)]
pub fn linux_exact_timers() -> TcpConfig {
    exact_timers(coapcc_tcp::Mechanisms::THESIS)
}

/// A connection of `cfg` established by t = 0.3 s over a 100 ms one-way
/// wire, run to t = 1 s.
pub fn established(cfg: TcpConfig) -> Wire {
    let mut w = Wire::new(cfg, 100 * MS);
    w.run_until(SEC);
    assert_eq!(w.server().state(), coapcc_tcp::TcpState::Established);
    w
}

/// When each segment carrying data left in direction `dir`.
pub fn data_times(w: &Wire, dir: Dir) -> Vec<u64> {
    w.sent(dir)
        .filter(|s| !s.seg.payload.is_empty())
        .map(|s| s.at)
        .collect()
}
