//! A two-endpoint in-memory wire over [`AnySocket`] (either profile at each
//! end): fixed one-way delay, FIFO per direction, a caller-chosen drop rule,
//! and a log of every segment with its time.
#![allow(dead_code)]

use coapcc_tcp::{AnySocket, Segment, SocketConfig, TcpEvent};

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
    pub client: AnySocket,
    pub server: Option<AnySocket>,
    pub server_cfg: SocketConfig,
    flight: Vec<(u64, Dir, Segment)>,
    drop: DropRule,
    pub log: Vec<Sent>,
    counts: [usize; 2],
    pub client_rx: Vec<u8>,
    pub server_rx: Vec<u8>,
    /// Client events with the time they were drained.
    pub client_events: Vec<(u64, TcpEvent)>,
    /// Data the server application writes as soon as it accepts, and whether
    /// it then closes.
    pub server_on_accept: Option<(Vec<u8>, bool)>,
    /// Whether the server closes once the client's FIN is read.
    pub server_closes_on_fin: bool,
}

impl Wire {
    /// A client that has just called connect at t = 0 (its SYN goes on the
    /// wire at the first run/step/flush).
    pub fn new(client: SocketConfig, server: SocketConfig, delay: u64) -> Self {
        Wire {
            now: 0,
            delay,
            client: AnySocket::connect(0, client),
            server: None,
            server_cfg: server,
            flight: Vec::new(),
            drop: Box::new(|_, _, _| false),
            log: Vec::new(),
            counts: [0, 0],
            client_rx: Vec::new(),
            server_rx: Vec::new(),
            client_events: Vec::new(),
            server_on_accept: None,
            server_closes_on_fin: false,
        }
    }

    /// Drop rule: (direction, segment, index of the segment in its direction).
    pub fn set_drop(&mut self, f: impl FnMut(Dir, &Segment, usize) -> bool + 'static) {
        self.drop = Box::new(f);
    }

    pub fn server(&mut self) -> &mut AnySocket {
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
        while let Some(e) = self.client.poll_event() {
            self.client_events.push((self.now, e));
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
        // Timers due now run first (the sockets would run them anyway).
        self.client.handle_timeout(self.now);
        let now = self.now;
        if let Some(s) = self.server.as_mut() {
            s.handle_timeout(now);
        }
        self.flush();
        while let Some(pos) = self.flight.iter().position(|f| f.0 <= self.now) {
            let (_, dir, seg) = self.flight.remove(pos);
            match dir {
                Dir::ToServer => {
                    if self.server.is_none() {
                        self.server = AnySocket::accept(self.now, self.server_cfg.clone(), &seg);
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
        true
    }

    fn read(&mut self) {
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
            if self.server_closes_on_fin
                && s.recv_finished()
                && s.state() == coapcc_tcp::TcpState::CloseWait
            {
                s.close();
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

    /// Runs while `busy` holds, nothing is left to do or `limit` passes.
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

    /// Times (ns) at which the client sent a segment carrying stream byte
    /// `off` (0 = the first data byte).
    pub fn client_sends_of(&self, off: u64, isn: u32) -> Vec<u64> {
        self.sent(Dir::ToServer)
            .filter(|s| {
                let start = u64::from(s.seg.seq.wrapping_sub(isn.wrapping_add(1)));
                !s.seg.payload.is_empty()
                    && start <= off
                    && off < start + s.seg.payload.len() as u64
            })
            .map(|s| s.at)
            .collect()
    }
}
