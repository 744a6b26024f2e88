//! The LoRaWAN world: a CoAP client on every device and the CoAP server
//! behind the gateway, the devices' periodic workload and the records; the
//! event loop ([`crate::event_loop`]) hands it the network's events and the
//! timers.
//!
//! Its endpoints are the shared applications of [`crate::apps`]: a CoAP
//! client endpoint per device built from the algorithm spec, the CoAP
//! server with the sink handler on the server node, and the packet pool
//! their datagrams travel in (addressed by node id: devices 0 … n − 1, the
//! server n). The network is wrapped in [`Observed`], which keeps the cause
//! of the drop it reports last.

use coapcc_link::agenda::Agenda;
use coapcc_link::lorawan::{self, Lorawan, Modulation};
use coapcc_link::rng::{derive, SimRng, Stream};
use coapcc_link::time::{from_secs, to_secs, Nanos};
use coapcc_link::{Datagram, DropCause, Network, NodeId, Output, PacketId};
use coapcc_proto::client::{ClientConfig, ClientEvent, EncodedRequest};
use coapcc_workload::metrics::Percentiles;

use super::config::{request, request_payload, validate, RunSpec, MAX_MESSAGE};
use super::result::{DeviceResult, Drops, RunResult};
use super::schc::Sizes;
use crate::apps::coap_client::{self, CoapClient};
use crate::apps::coap_server::{CoapServer, Sink};
use crate::apps::packets::PacketPool;
use crate::event_loop::{Core, World as EventWorld};
use crate::spec_error::SpecError;

/// UDP's header, compressed away by SCHC.
const UDP_HEADER: u16 = 8;

/// The LoRaWAN model, keeping the cause of the drop it reported last (the
/// event loop hands a world only the dropped packet).
pub struct Observed {
    net: Lorawan,
    cause: DropCause,
}

impl Observed {
    /// The LoRaWAN model.
    pub fn lorawan(&self) -> &Lorawan {
        &self.net
    }
}

impl Network for Observed {
    fn send(&mut self, now: Nanos, d: Datagram) -> Result<(), DropCause> {
        self.net.send(now, d).inspect_err(|&c| self.cause = c)
    }
    fn next_wakeup(&self) -> Option<Nanos> {
        self.net.next_wakeup()
    }
    fn poll(&mut self, until: Nanos) -> Option<(Nanos, Option<Output>)> {
        let out = self.net.poll(until);
        if let Some((_, Some(Output::Dropped { cause, .. }))) = out {
            self.cause = cause;
        }
        out
    }
    fn in_flight(&self) -> u64 {
        self.net.in_flight()
    }
    fn events(&self) -> u64 {
        self.net.events()
    }
}

/// Timer events of the endpoints and the workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A device's CoAP retransmission deadline (stale if moved).
    CoapTimer(u32),
    /// A device generates a request.
    Generate(u32),
    /// The end of the run.
    End,
}

struct Device {
    coap: CoapClient,
    rng: SimRng,
    held: u32,
    busy: bool,
    timer_queued: Option<Nanos>,
    modulation: Modulation,
    record: DeviceResult,
}

/// One replication on LoRaWAN in progress.
pub struct World<'a> {
    spec: &'a RunSpec,
    core: Core<Observed, Event>,
    end: Nanos,
    running: bool,
    packets: PacketPool,
    devices: Vec<Device>,
    server: CoapServer<Sink>,
    server_node: u32,
    /// The request every device sends, encoded once.
    request: EncodedRequest,
    buf: [u8; MAX_MESSAGE],
    uplink_drops: Drops,
    downlink_drops: Drops,
    completion: Vec<f64>,
    sizes: Sizes,
}

impl<'a> World<'a> {
    /// Replication `replication` of `spec`, before time 0.
    pub(super) fn new(spec: &'a RunSpec, replication: u32) -> Result<Self, SpecError> {
        validate(spec)?;
        let seed = derive(spec.seed, Stream::Replication, u64::from(replication));
        // Frames are sized by SCHC compression here (`schc.rs`), so the
        // model adds no residue of its own.
        let link = lorawan::Config {
            schc_residue: 0,
            ..spec.network.clone()
        };
        let net = Lorawan::new(&link, seed).map_err(SpecError)?;
        let n = spec.network.devices;
        let config = ClientConfig {
            max_retransmit: spec.coap.max_retransmit,
            max_message_size: MAX_MESSAGE,
            ..ClientConfig::default()
        };
        let settings = coap_client::settings(&spec.algorithm, config)?;
        let devices = (0..n)
            .map(|i| {
                let mut rng = SimRng::new(derive(seed, Stream::Client, u64::from(i)));
                Device {
                    coap: coap_client::endpoint(&settings, &mut rng),
                    rng: SimRng::new(derive(seed, Stream::Workload, u64::from(i))),
                    held: 0,
                    busy: false,
                    timer_queued: None,
                    modulation: Modulation::lorawan(net.sf(i)),
                    record: DeviceResult {
                        device: i,
                        distance_m: net.distance_m(i),
                        sf: net.sf(i).get(),
                        ..DeviceResult::default()
                    },
                }
            })
            .collect();
        let server_node = net.server();
        let server = CoapServer::new(
            server_node,
            Sink {
                payload: spec.coap.response_payload,
            },
            n as usize + 1,
            MAX_MESSAGE,
        );
        let payload = request_payload(&spec.coap);
        let request = EncodedRequest::new(&request(&spec.coap, &payload), MAX_MESSAGE)
            .expect("a validated request encodes");
        let w = &spec.workload;
        Ok(World {
            spec,
            core: Core::new(
                Observed {
                    net,
                    cause: DropCause::Buffer,
                },
                Agenda::new(0, 4 * n as usize + 16),
            ),
            end: from_secs(w.warmup_s + w.duration_s),
            running: true,
            packets: PacketPool::default(),
            devices,
            server,
            server_node,
            request,
            buf: [0; MAX_MESSAGE],
            uplink_drops: Drops::default(),
            downlink_drops: Drops::default(),
            completion: Vec::new(),
            sizes: Sizes::default(),
        })
    }

    /// Time 0: every device's first request, at a random offset in one
    /// period after the warm-up, and the end.
    fn schedule_start(&mut self) {
        let w = &self.spec.workload;
        let warmup = from_secs(w.warmup_s);
        for (i, d) in self.devices.iter_mut().enumerate() {
            let offset = from_secs(w.period_s * d.rng.uniform());
            self.core
                .agenda
                .push(warmup + offset, Event::Generate(i as u32));
        }
        self.core.agenda.push(self.end, Event::End);
    }

    /// A device's tick: a new request, held or dropped.
    fn generate(&mut self, i: usize) {
        let period = from_secs(self.spec.workload.period_s);
        let d = &mut self.devices[i];
        d.record.generated += 1;
        if d.held >= self.spec.coap.app_buffer {
            d.record.app_drops += 1;
        } else {
            d.held += 1;
            if !d.busy {
                self.send_next(i);
            }
        }
        self.core
            .agenda
            .push(self.core.now + period, Event::Generate(i as u32));
    }

    /// Starts the device's next held request.
    fn send_next(&mut self, i: usize) {
        let d = &mut self.devices[i];
        d.busy = true;
        d.record.started += 1;
        d.coap
            .request_encoded(self.core.now, self.server_node, &self.request)
            .expect("a client with NSTART 1 has room for its next request");
        self.service(i);
    }

    /// Drains a device's transmissions and events, and re-arms its timer.
    fn service(&mut self, i: usize) {
        while let Some(tx) = self.devices[i].coap.poll_transmit(&mut self.buf) {
            let frame = self.sizes.frame(&self.buf[..tx.len], true);
            let d = &mut self.devices[i];
            d.record.transmissions += 1;
            if tx.ordinal > 0 {
                let phy = coapcc_link::lorawan::airtime::phy_payload(frame);
                d.record.retransmission_airtime += to_secs(d.modulation.time_on_air(phy));
            }
            let id = self
                .packets
                .alloc(i as u32, self.server_node, &self.buf[..tx.len]);
            self.send(id, i as u32, self.server_node, frame);
        }
        let mut ended = false;
        while let Some(ev) = self.devices[i].coap.poll_event() {
            let d = &mut self.devices[i];
            match ev {
                ClientEvent::Response { elapsed, .. } => {
                    d.record.completed += 1;
                    d.record.completion_sum += to_secs(elapsed);
                    self.completion.push(to_secs(elapsed));
                    ended = true;
                }
                ClientEvent::Failed { .. } => {
                    d.record.failed += 1;
                    ended = true;
                }
                _ => {}
            }
        }
        if ended {
            let d = &mut self.devices[i];
            d.busy = false;
            d.held -= 1;
            if d.held > 0 {
                return self.send_next(i);
            }
        }
        let deadline = self.devices[i].coap.poll_timeout();
        let d = &mut self.devices[i];
        if let Some(t) = deadline.filter(|_| deadline != d.timer_queued) {
            d.timer_queued = deadline;
            self.core
                .agenda
                .push(t.max(self.core.now), Event::CoapTimer(i as u32));
        }
    }

    /// Hands packet `id` from node `src` to `dst`, its CoAP message
    /// compressed to a FRMPayload of `frame` bytes.
    fn send(&mut self, id: PacketId, src: NodeId, dst: NodeId, frame: usize) {
        let d = Datagram {
            id,
            src,
            dst,
            transport_header: UDP_HEADER,
            payload: frame as u16,
            unnecessary: false,
        };
        if !self.core.send(d) {
            self.dropped(id);
        }
    }

    /// The network dropped packet `id`: counted by direction and cause,
    /// and released.
    fn dropped(&mut self, id: PacketId) {
        let p = self.packets.get(id);
        let cause = self.core.net.cause;
        if p.src == self.server_node {
            self.downlink_drops.count(cause);
            self.devices[p.dst as usize].record.downlinks_dropped += 1;
        } else {
            self.uplink_drops.count(cause);
            self.devices[p.src as usize].record.uplinks_dropped += 1;
        }
        self.packets.release(id);
    }

    /// A datagram reached node `node`.
    fn delivered(&mut self, id: PacketId, node: NodeId) {
        if node == self.server_node {
            let Some(reply) = self.server.answer(self.core.now, &mut self.packets, id) else {
                return;
            };
            let frame = self
                .sizes
                .frame(&self.packets.get(reply.packet).data[..reply.len], false);
            return self.send(reply.packet, self.server_node, reply.to, frame);
        }
        let i = node as usize;
        let data = self.packets.get(id).data;
        self.devices[i]
            .coap
            .handle_datagram(self.core.now, self.server_node, data);
        self.packets.release(id);
        self.service(i);
    }

    fn finish_run(mut self, processed: u64) -> RunResult {
        let conservation = self.core.conservation();
        let devices = self
            .devices
            .drain(..)
            .map(|d| DeviceResult {
                unfinished: u64::from(d.busy),
                ..d.record
            })
            .collect();
        RunResult {
            devices,
            uplink_drops: self.uplink_drops,
            downlink_drops: self.downlink_drops,
            record: self.core.net.net.record(),
            completion: Percentiles::of(&mut self.completion),
            duration: self.spec.workload.duration_s,
            events: self.core.events(processed),
            conservation,
        }
    }
}

impl<'a> EventWorld for World<'a> {
    type Net = Observed;
    type Timer = Event;
    type Result = RunResult;

    fn start(&mut self) {
        self.schedule_start();
    }

    #[inline]
    fn core(&mut self) -> &mut Core<Observed, Event> {
        &mut self.core
    }

    #[inline]
    fn done(&self) -> bool {
        !self.running
    }

    #[inline]
    fn on_delivered(&mut self, id: PacketId, node: NodeId) {
        self.delivered(id, node);
    }

    #[inline]
    fn on_dropped(&mut self, id: PacketId) {
        self.dropped(id);
    }

    #[inline]
    fn on_timer(&mut self, at: Nanos, timer: Event) {
        match timer {
            Event::CoapTimer(i) => {
                let i = i as usize;
                if self.devices[i].timer_queued == Some(at) {
                    self.devices[i].timer_queued = None;
                    self.devices[i].coap.handle_timeout(at);
                    self.service(i);
                }
            }
            Event::Generate(i) => self.generate(i as usize),
            Event::End => self.running = false,
        }
    }

    fn finish(self, processed: u64) -> RunResult {
        self.finish_run(processed)
    }
}

#[cfg(test)]
mod tests {
    use coapcc_link::lorawan::{self, airtime, Sf, SfAllocation};
    use coapcc_workload::AlgorithmSpec;

    use super::super::config::{response_size, Coap, Workload};
    use super::*;
    use crate::network::SimNetwork;

    fn spec(devices: u32, algorithm: &str) -> RunSpec {
        RunSpec {
            network: lorawan::Config {
                devices,
                radius_m: 2000.0,
                ..lorawan::Config::default()
            },
            coap: Coap::default(),
            workload: Workload {
                period_s: 120.0,
                warmup_s: 0.0,
                duration_s: 1200.0,
            },
            algorithm: AlgorithmSpec::named(algorithm),
            seed: 7,
        }
    }

    #[test]
    fn one_device_completes_in_uplink_rx1_delay_and_downlink() {
        let mut s = spec(1, "default");
        s.network.spreading_factor = SfAllocation::Fixed(Sf::SF7);
        let r = super::super::Sim::run(&s, 0).unwrap();
        // The request (POST /sense, no token, 13 bytes of payload: 24 bytes
        // of CoAP) compresses to a 2-byte residue and its payload: 15 B of
        // FRMPayload, 28 B PHY at SF7: 12.25 + 8 + ⌈(224 − 28 + 28 + 16) /
        // 28⌉·5 = 65.25 symbols of 1.024 ms = 66.816 ms. The response (2.04,
        // no token, 8 bytes of payload: 13 bytes) to a 3-byte residue and
        // its payload: 11 B, 24 B PHY: 12.25 + 8 + ⌈(192 − 28 + 28 + 16) /
        // 28⌉·5 = 60.25 symbols = 61.696 ms. RX1 opens 1 s after the
        // uplink's end.
        let mut sizes = Sizes::default();
        let request = super::super::config::probe_request(&s.coap);
        assert_eq!((request.len(), sizes.frame(&request, true)), (24, 15));
        let response = super::super::config::response(&s.coap);
        assert_eq!(
            (response_size(&s.coap), sizes.frame(&response, false)),
            (13, 11)
        );
        let m = Modulation::lorawan(Sf::SF7);
        assert_eq!(m.time_on_air(airtime::phy_payload(15)), 66_816_000);
        assert_eq!(m.time_on_air(airtime::phy_payload(11)), 61_696_000);
        let expected = 0.066816 + 1.0 + 0.061696;
        let c = r.completion;
        assert!((c.min - expected).abs() < 1e-9, "{c:?}");
        assert!((c.max - expected).abs() < 1e-9, "{c:?}");
        let [started, completed, failed, unfinished] = r.exchanges();
        assert_eq!((started, completed, failed, unfinished), (10, 10, 0, 0));
        assert_eq!(r.uplink_drops.total() + r.downlink_drops.total(), 0);
    }

    #[test]
    fn exchanges_and_packets_are_conserved_under_load() {
        for algorithm in ["default", "cocoa", "fasor"] {
            let r = super::super::Sim::run(&spec(300, algorithm), 0).unwrap();
            let [started, completed, failed, unfinished] = r.exchanges();
            assert_eq!(started, completed + failed + unfinished, "{algorithm}");
            assert!(
                completed > 0 && completed < started,
                "{algorithm}: {completed}/{started}"
            );
            assert!(r.conservation.holds());
            let retransmitted: u64 = r.devices.iter().map(|d| d.transmissions).sum();
            assert!(retransmitted > started, "{algorithm}");
        }
    }

    #[test]
    fn a_seed_gives_one_run() {
        let s = spec(100, "cocoa");
        assert_eq!(
            super::super::Sim::run(&s, 1).unwrap(),
            super::super::Sim::run(&s, 1).unwrap()
        );
        assert_ne!(
            super::super::Sim::run(&s, 1).unwrap(),
            super::super::Sim::run(&s, 2).unwrap()
        );
    }
}
