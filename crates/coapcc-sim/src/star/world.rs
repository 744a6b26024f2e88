//! The star's world: the bulk TCP senders on the stations and the sink's
//! ends of their connections, their workload and records; the event loop
//! ([`crate::event_loop`]) hands it the network's events and the timers.
//! Their segments travel in the shared segment pool
//! ([`crate::apps::segments`]).

use coapcc_link::agenda::Agenda;
use coapcc_link::rng::{derive, SimRng, Stream};
use coapcc_link::star::{self, Star, SERVER};
use coapcc_link::time::{from_secs, to_secs, Nanos};
use coapcc_link::{Datagram, NodeId, PacketId};
use coapcc_tcp::lwip::FIRST_TIMER_DELAY;
use coapcc_tcp::{AnySocket, Mechanisms, SocketConfig, TcpConfig, TcpEvent};

use super::config::{tcp_config, validate, RunSpec};
use super::result::{RunResult, StationResult, TcpSample};
use crate::apps::segments::SegmentPool;
use crate::event_loop::{Core, World as EventWorld};
use crate::spec_error::SpecError;

/// The sink's end of every connection: a Reno-like receiver acknowledging
/// every segment, with a 14 · MSS window, that accepts SACK from the
/// stations that offer it (Debian 9's 4.9 defaults: `tcp-linux49-debian9`
/// and `tcp-linux6` stations; `tcp` and lwIP stations offer none). Its
/// timers fire exactly when due and it answers every repeated SYN (the
/// `wheel` and `oow` switches off): it is the spec's receiver, not a
/// modelled Linux host, and stays as model 5 had it.
fn sink_config(mss: u16) -> SocketConfig {
    SocketConfig::Linux(TcpConfig {
        mss,
        delayed_ack: 0,
        rcv_wnd: (14 * u32::from(mss)).min(65_535) as u16,
        record_events: false,
        linux: Some(Mechanisms {
            wheel: false,
            oow: false,
            ..Mechanisms::DEBIAN9
        }),
        ..TcpConfig::debian9()
    })
}

/// What the world notes about a segment in the network.
#[derive(Clone, Copy, Default)]
struct SegMeta {
    /// The station whose connection it belongs to (index from 0).
    station: u32,
    /// It travels station → sink.
    to_server: bool,
}

/// A timer event of the stations, the sink or the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A station connects.
    Connect(u32),
    /// A station's next write is due.
    Write(u32),
    /// A TCP timer (`station * 2 + side`, side 1 = the sink's end; stale
    /// unless it is the socket's current deadline).
    Timer(u32),
    /// Sample every station's TCP state.
    Sample,
    /// The end of the run.
    End,
}

struct Station {
    client: Option<AnySocket>,
    server: Option<AnySocket>,
    /// Writes started, and bytes of the current write not yet accepted.
    writes_started: u32,
    pending: u32,
    written: u64,
    received: u64,
    timer_queued: [Option<Nanos>; 2],
    max_expired_rto: f64,
    max_rto: f64,
    trace: Vec<TcpSample>,
    /// Every byte written has been acknowledged.
    complete: bool,
}

/// One replication on the star in progress.
pub struct World<'a> {
    spec: &'a RunSpec,
    /// The network, the timers, the clock.
    core: Core<Star, Event>,
    stations: Vec<Station>,
    segments: SegmentPool<SegMeta>,
    client_cfg: SocketConfig,
    sink_cfg: SocketConfig,
    data: Vec<u8>,
    scratch: Vec<u8>,
    done: u32,
    running: bool,
    /// Segments a service step produced (reused).
    outbox: Vec<PacketId>,
    /// The first write, and the last time the sink received data.
    first_write: Option<Nanos>,
    last_receive: Nanos,
}

impl<'a> World<'a> {
    /// Replication `replication` of `spec`, before time 0.
    pub(super) fn new(spec: &'a RunSpec, replication: u32) -> Result<Self, SpecError> {
        validate(spec)?;
        let seed = derive(spec.seed, Stream::Replication, u64::from(replication));
        let net = Star::new(&spec.network, seed).map_err(SpecError)?;
        let w = &spec.workload;
        let client_cfg = tcp_config(&spec.algorithm, w.mss)?.with_events(true);
        let sink_cfg = sink_config(w.mss);
        let n = spec.network.stations;
        let mut events = Agenda::new(0, 8 * n as usize + 16);
        for i in 0..n {
            let mut rng = SimRng::new(derive(seed, Stream::Workload, u64::from(i)));
            let at = from_secs(w.start_s + w.interval_s * rng.uniform());
            events.push(at, Event::Connect(i));
        }
        events.push(from_secs(w.sample_s), Event::Sample);
        let last_write = w.start_s + w.interval_s * (f64::from(w.writes) + 1.0);
        events.push(from_secs(last_write + w.drain_s), Event::End);
        let stations = (0..n)
            .map(|_| Station {
                client: None,
                server: None,
                writes_started: 0,
                pending: 0,
                written: 0,
                received: 0,
                timer_queued: [None; 2],
                max_expired_rto: 0.0,
                max_rto: 0.0,
                trace: Vec::new(),
                complete: false,
            })
            .collect();
        Ok(World {
            spec,
            core: Core::new(net, events),
            stations,
            segments: SegmentPool::default(),
            client_cfg,
            sink_cfg,
            data: vec![b'd'; w.write_bytes as usize],
            scratch: vec![0; 1 << 16],
            done: 0,
            running: true,
            outbox: Vec::new(),
            first_write: None,
            last_receive: 0,
        })
    }

    /// A station's next write: 1024 bytes handed to its socket (or what
    /// fits; the rest waits for room).
    fn write(&mut self, i: u32) {
        let w = &self.spec.workload;
        let st = &mut self.stations[i as usize];
        if st.writes_started < w.writes {
            self.first_write.get_or_insert(self.core.now);
            st.writes_started += 1;
            st.pending += w.write_bytes;
            if st.writes_started < w.writes {
                let next = self.core.now + from_secs(w.interval_s);
                self.core.agenda.push(next, Event::Write(i));
            }
        }
        self.service(i, false);
    }

    /// Moves pending application bytes into the socket, drains its segments
    /// and events, re-arms its timer (`sink`: the sink's end).
    fn service(&mut self, i: u32, sink: bool) {
        let side = usize::from(sink);
        let now = self.core.now;
        let st = &mut self.stations[i as usize];
        let Some(sock) = (if sink {
            st.server.as_mut()
        } else {
            st.client.as_mut()
        }) else {
            return;
        };
        if !sink && st.pending > 0 && sock.is_established() {
            let n = sock.send(&self.data[..st.pending.min(self.data.len() as u32) as usize]);
            st.pending -= n as u32;
            st.written += n as u64;
        }
        if sink {
            loop {
                let n = sock.recv(&mut self.scratch);
                if n == 0 {
                    break;
                }
                st.received += n as u64;
                self.last_receive = now;
            }
        }
        let mut connected = false;
        while let Some(ev) = sock.poll_event() {
            match ev {
                TcpEvent::Connected => connected = true,
                TcpEvent::RtoExpired { expired, .. } => {
                    st.max_expired_rto = st.max_expired_rto.max(to_secs(expired));
                }
                _ => {}
            }
        }
        let mut out = std::mem::take(&mut self.outbox);
        out.clear();
        let meta = SegMeta {
            station: i,
            to_server: !sink,
        };
        while let Some(id) = self
            .segments
            .fill(meta, |seg| sock.poll_transmit_into(now, seg))
        {
            out.push(id);
        }
        let deadline = sock.poll_timeout();
        let complete = !sink
            && st.writes_started == self.spec.workload.writes
            && st.pending == 0
            && sock.all_acked();
        if deadline != st.timer_queued[side] {
            if let Some(t) = deadline {
                st.timer_queued[side] = deadline;
                self.core
                    .agenda
                    .push(t.max(now), Event::Timer(i * 2 + side as u32));
            } else {
                st.timer_queued[side] = None;
            }
        }
        if connected && !sink {
            // the first write as soon as the connection is up
            self.core.agenda.push(now, Event::Write(i));
        }
        for &id in &out {
            self.send(id);
        }
        self.outbox = out;
        if complete && !self.stations[i as usize].complete {
            self.stations[i as usize].complete = true;
            self.done += 1;
            if self.done == self.spec.network.stations {
                self.running = false;
            }
        }
    }

    /// Hands segment `id` to the star.
    fn send(&mut self, id: PacketId) {
        let slot = self.segments.get(id);
        let payload = slot.seg.payload.len() as u16;
        let header = (slot.seg.wire_len() - usize::from(star::IPV4_HEADER)) as u16 - payload;
        let station = slot.meta.station + 1;
        let (src, dst) = if slot.meta.to_server {
            (station, SERVER)
        } else {
            (SERVER, station)
        };
        let d = Datagram {
            id,
            src,
            dst,
            transport_header: header,
            payload,
            unnecessary: false,
        };
        if !self.core.send(d) {
            self.segments.release(id);
        }
    }

    /// A segment reached its end.
    fn delivered(&mut self, id: PacketId) {
        let SegMeta {
            station: i,
            to_server,
        } = self.segments.get(id).meta;
        let now = self.core.now;
        let st = &mut self.stations[i as usize];
        if to_server {
            if st.server.is_none() {
                st.server =
                    AnySocket::accept(now, self.sink_cfg.clone(), &self.segments.get(id).seg);
            } else if let Some(s) = st.server.as_mut() {
                s.handle_segment(now, &self.segments.get(id).seg);
            }
        } else if let Some(c) = st.client.as_mut() {
            c.handle_segment(now, &self.segments.get(id).seg);
        }
        self.segments.release(id);
        // (for the client: an acknowledgement may have made room for
        // pending bytes, which `service` hands over)
        self.service(i, to_server);
    }

    /// Samples every station's TCP state.
    fn sample(&mut self) {
        let t = to_secs(self.core.now);
        for st in &mut self.stations {
            if let Some(c) = st.client.as_ref() {
                let rto = to_secs(c.rto());
                st.max_rto = st.max_rto.max(rto);
                st.trace.push(TcpSample {
                    t,
                    cwnd: c.cwnd(),
                    ssthresh: c.ssthresh(),
                    rto,
                    srtt: c.srtt().map_or(0.0, to_secs),
                });
            }
        }
    }

    fn finish_run(mut self, processed: u64) -> RunResult {
        let conservation = self.core.conservation();
        let stations: Vec<StationResult> = self
            .stations
            .into_iter()
            .enumerate()
            .map(|(i, st)| {
                let stats = st
                    .client
                    .as_ref()
                    .map(|c| c.stats().clone())
                    .unwrap_or_default();
                let complete = st.complete;
                StationResult {
                    station: i as u32 + 1,
                    written: st.written,
                    received: st.received,
                    complete,
                    retransmitted_segments: stats.retransmitted_segments
                        + stats.syn_retransmissions,
                    timeouts: stats.rto_expirations,
                    fast_retransmits: stats.fast_retransmits,
                    rtt_samples: stats.rtt_samples,
                    max_expired_rto: st.max_expired_rto,
                    max_rto: st.max_rto,
                    trace: st.trace,
                }
            })
            .collect();
        let received: u64 = stations.iter().map(|s| s.received).sum();
        let span = self
            .first_write
            .map_or(0.0, |f| to_secs(self.last_receive.saturating_sub(f)));
        RunResult {
            goodput_bps: if span > 0.0 {
                received as f64 * 8.0 / span
            } else {
                0.0
            },
            stations,
            mac: self.core.net.record(),
            duration: to_secs(self.core.now),
            events: self.core.events(processed),
            conservation,
        }
    }
}

/// `cfg` with initial sequence number `isn`.
fn with_isn(cfg: SocketConfig, isn: u32) -> SocketConfig {
    match cfg {
        SocketConfig::Linux(c) => SocketConfig::Linux(TcpConfig { isn, ..c }),
        SocketConfig::Lwip(c) => SocketConfig::Lwip(coapcc_tcp::lwip::LwipConfig { isn, ..c }),
    }
}

impl<'a> EventWorld for World<'a> {
    type Net = Star;
    type Timer = Event;
    type Result = RunResult;

    #[inline]
    fn core(&mut self) -> &mut Core<Star, Event> {
        &mut self.core
    }

    #[inline]
    fn done(&self) -> bool {
        !self.running
    }

    #[inline]
    fn on_delivered(&mut self, id: PacketId, _node: NodeId) {
        self.delivered(id);
    }

    #[inline]
    fn on_dropped(&mut self, id: PacketId) {
        self.segments.release(id);
    }

    #[inline]
    fn on_timer(&mut self, at: Nanos, timer: Event) {
        match timer {
            Event::Connect(i) => {
                let cfg = with_isn(self.client_cfg.clone(), (i + 1).wrapping_mul(0x9e37_79b9))
                    .with_timer_origin(at + FIRST_TIMER_DELAY);
                self.stations[i as usize].client = Some(AnySocket::connect(at, cfg));
                self.service(i, false);
            }
            Event::Write(i) => self.write(i),
            Event::Timer(ep) => {
                let (i, side) = (ep / 2, (ep % 2) as usize);
                let st = &mut self.stations[i as usize];
                if st.timer_queued[side] == Some(at) {
                    st.timer_queued[side] = None;
                    let sock = if side == 0 {
                        st.client.as_mut()
                    } else {
                        st.server.as_mut()
                    };
                    if let Some(s) = sock {
                        s.handle_timeout(at);
                    }
                    self.service(i, side == 1);
                }
            }
            Event::Sample => {
                self.sample();
                let next = at + from_secs(self.spec.workload.sample_s);
                self.core.agenda.push(next, Event::Sample);
            }
            Event::End => self.running = false,
        }
    }

    fn finish(self, processed: u64) -> RunResult {
        self.finish_run(processed)
    }
}
