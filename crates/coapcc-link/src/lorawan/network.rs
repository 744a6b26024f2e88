//! The LoRaWAN class-A network as a sans-IO [`Network`]: end devices in a
//! disc around one EU868 gateway, the network server at the gateway, and a
//! backhaul to the CoAP server (`docs/lorawan.md`, "The network").
//!
//! ```text
//!  device 0 ┐
//!  device 1 ┼─ LoRa, 3 uplink channels, RX1/RX2 ─ gateway + network server ── backhaul ── CoAP server
//!     …     ┘
//! ```
//!
//! Node ids: devices 0 … n − 1, the CoAP server n ([`Lorawan::server`]).
//!
//! - **Frames.** A datagram rides one LoRaWAN data frame: its CoAP message,
//!   the SCHC residue of its IPv6 and UDP headers
//!   ([`Config::schc_residue_bytes`]) and 13 bytes of LoRaWAN. A datagram
//!   whose FRMPayload exceeds EU868's limit at the device's SF is refused at
//!   [`Network::send`] with [`DropCause::PayloadTooLarge`] (a downlink too
//!   large for RX2's SF12 may still go in RX1).
//! - **Uplinks.** A device sends its frame at once if its g1 duty cycle and
//!   its class-A windows allow, else the frame waits in the device's FIFO of
//!   [`Config::device_queue`] frames (full: [`DropCause::MacQueue`]) until
//!   they do. Each frame goes on one of the first
//!   [`Config::uplink_channels`] default channels, drawn at random. The
//!   gateway locks a reception path on a frame above its sensitivity unless
//!   it is transmitting or its paths are all busy; a downlink starting cuts
//!   off every reception. At the frame's end its fate is decided from every
//!   uplink that overlapped it ([`fate`], the configured
//!   [`Capture`](super::interference::Capture)): lost
//!   frames are dropped with [`DropCause::BelowSensitivity`],
//!   [`DropCause::GatewayBusy`] (half duplex or no free path) or
//!   [`DropCause::Collision`]; a received one reaches the CoAP server one
//!   backhaul delay later. (A gateway downlink overlapping an uplink has
//!   already cut it off, so it is not counted as interference too.)
//! - **Class A.** After each uplink the device listens in RX1 (RX1 delay,
//!   same channel and SF) and RX2 (RX2 delay, 869.525 MHz, SF12), and sends
//!   nothing until they are over: the end of the downlink it receives in
//!   one of them, or else RX2's opening plus [`RX_WINDOW_SYMBOLS`] SF12
//!   symbols (the time to detect a preamble). One downlink at most answers
//!   each uplink.
//! - **Downlinks.** A datagram from the server reaches the network server
//!   one backhaul delay later. If the device's last uplink reached the
//!   gateway and nothing is booked for its windows yet, the gateway books it
//!   ([`Gateway::book`]: RX1, else RX2, each if still ahead, the radio free
//!   and the sub-band's duty cycle allows). Otherwise the network server
//!   holds it, up to [`Config::held_downlinks`] per device (full: the newcomer
//!   is dropped with the reason it missed, [`DropCause::NoWindow`],
//!   [`DropCause::GatewayBusy`] or [`DropCause::DutyCycle`]), and tries the
//!   held ones, oldest first, when the device's next uplink reaches the
//!   gateway. A held downlink is given up [`Config::downlink_ttl_s`] after it
//!   arrived, with the reason it last missed. A booked downlink reaches the
//!   device if [`fate`] at the device lets it through: the end-device
//!   sensitivity, and the uplinks of other devices on its channel that
//!   overlap it (received at the device's place); else it is dropped
//!   ([`DropCause::BelowSensitivity`], [`DropCause::Collision`]).
//!
//! Each event yields at most one output. Device `i`'s position and channel
//! draws come from its own random streams, so adding a device moves no
//! other.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use super::airtime::{max_frm_payload, phy_payload, Modulation, Sf};
use super::config::{Config, SfAllocation};
use super::gateway::{Gateway, Miss, Uplink, Window};
use super::interference::{fate, Fate, Transmission};
use super::propagation::{end_device_sensitivity, gateway_sensitivity, DEVICE_TX_POWER_DBM};
use super::region::{Channel, DutyCycle, SubBand, RX2_SF, UPLINK_CHANNELS};
use crate::agenda::Agenda;
use crate::rng::{derive, SimRng, Stream};
use crate::time::{to_secs, Nanos};
use crate::{Datagram, DropCause, Network, NodeId, Output, PacketId};

/// Symbols a device listens in a receive window before it gives up
/// waiting for a preamble: ns-3 `lorawan`'s `m_receiveWindowDurationInSymbols`
/// (`model/end-device-lorawan-mac.cc`).
pub const RX_WINDOW_SYMBOLS: u64 = 8;

/// Device `i`'s position is drawn from the MAC stream of index
/// `POSITION_STREAM + i` (its channel draws use index `i`).
const POSITION_STREAM: u64 = 1 << 32;

/// Lanes of the agenda (their events come in time order).
const LANE_TO_SERVER: usize = 0;
const LANE_TO_GATEWAY: usize = 1;
const LANE_EXPIRY: usize = 2;

/// What the network did so far, beyond the outputs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LorawanRecord {
    /// Uplink frames put on the air.
    pub uplink_frames: u64,
    /// Their total time on air (s).
    pub uplink_airtime: f64,
    /// Time frames waited in devices before going on the air, for the duty
    /// cycle or the class-A windows (s).
    pub waiting: f64,
    /// Downlink frames sent by the gateway.
    pub downlink_frames: u64,
    /// Of those, sent in RX2.
    pub rx2_downlinks: u64,
    /// Their total time on air (s).
    pub downlink_airtime: f64,
    /// Downlinks that missed their windows and were held for a later
    /// uplink.
    pub held_downlinks: u64,
}

/// A frame waiting in a device.
#[derive(Clone, Copy, Debug)]
struct Waiting {
    id: PacketId,
    frm: usize,
    since: Nanos,
}

/// A downlink the network server has.
#[derive(Clone, Copy, Debug)]
struct Down {
    id: PacketId,
    dev: u32,
    frm: usize,
}

/// A downlink held for the device's next uplink.
#[derive(Clone, Copy, Debug)]
struct Held {
    seq: u64,
    down: Down,
    /// Why it missed the windows last time.
    miss: Miss,
}

/// The class-A windows of a device's last uplink.
#[derive(Clone, Copy, Debug)]
struct Windows {
    uplink: Uplink,
    /// The gateway received the uplink (so the network server knows of the
    /// windows).
    received: bool,
    /// The end of the downlink booked in one of them.
    downlink_end: Option<Nanos>,
}

/// An end device.
#[derive(Clone, Debug)]
struct Device {
    x: f64,
    y: f64,
    distance_m: f64,
    sf: Sf,
    in_range: bool,
    /// The power its uplinks arrive with at the gateway (dBm).
    gateway_dbm: f64,
    rng: SimRng,
    duty: DutyCycle,
    queue: VecDeque<Waiting>,
    transmitting: bool,
    /// Only the planned transmission attempt carrying it is acted on.
    token: u32,
    windows: Option<Windows>,
    held: VecDeque<Held>,
}

/// An uplink on the air or recently over.
#[derive(Clone, Copy, Debug)]
struct Air {
    frame: u32,
    id: PacketId,
    dev: u32,
    /// As the gateway hears it.
    tx: Transmission,
    /// Its end has been handled.
    done: bool,
    /// Lost already: below the sensitivity, refused or cut off.
    lost: Option<DropCause>,
}

#[derive(Clone, Copy, Debug)]
enum Ev {
    /// Device `dev` may transmit (stale unless `token` matches).
    Attempt { dev: u32, token: u32 },
    /// An uplink's last symbol reaches the gateway.
    UplinkEnd { frame: u32 },
    /// A received uplink reaches the CoAP server.
    AtServer { id: PacketId },
    /// A downlink reaches the network server.
    AtGateway(Down),
    /// A booked downlink's first symbol leaves the gateway.
    DownStart,
    /// A booked downlink's last symbol reaches the device.
    DownEnd {
        down: Down,
        start: Nanos,
        channel: Channel,
    },
    /// A held downlink's time is up (stale if no longer held).
    Expire { dev: u32, seq: u64 },
}

/// The LoRaWAN network (see the module docs).
pub struct Lorawan {
    cfg: Config,
    devices: Vec<Device>,
    gateway: Gateway,
    agenda: Agenda<Ev>,
    air: Vec<Air>,
    next_frame: u32,
    next_held: u64,
    /// The start of the downlink on the air, if one is.
    downlink_on_air: Option<Nanos>,
    processed: u64,
    in_flight: u64,
    record: LorawanRecord,
    waiting: Nanos,
    uplink_airtime: Nanos,
    downlink_airtime: Nanos,
}

impl Lorawan {
    /// The network of `cfg`, its devices placed uniformly at random in the
    /// disc of `cfg.radius_m` around the gateway, from streams derived from
    /// `seed` (as are their channel draws).
    pub fn new(cfg: &Config, seed: u64) -> Result<Self, String> {
        cfg.validate()?;
        let positions: Vec<(f64, f64)> = (0..u64::from(cfg.devices))
            .map(|i| {
                let mut rng = SimRng::new(derive(seed, Stream::Mac, POSITION_STREAM + i));
                let r = cfg.radius_m * rng.uniform().sqrt();
                let angle = std::f64::consts::TAU * rng.uniform();
                (r * angle.cos(), r * angle.sin())
            })
            .collect();
        Self::with_positions(cfg, seed, &positions)
    }

    /// The network of `cfg` with device `i` at `positions[i]` (metres east
    /// and north of the gateway; one per device, in the disc or not); the
    /// channel draws come from streams derived from `seed`.
    pub fn with_positions(
        cfg: &Config,
        seed: u64,
        positions: &[(f64, f64)],
    ) -> Result<Self, String> {
        cfg.validate()?;
        if positions.len() != cfg.devices as usize {
            return Err(format!(
                "{} positions given for network.devices = {}",
                positions.len(),
                cfg.devices
            ));
        }
        let devices = positions
            .iter()
            .enumerate()
            .map(|(i, &(x, y))| {
                let distance_m = x.hypot(y);
                let allocated = cfg.path_loss.allocate_sf(distance_m);
                let (sf, in_range) = match cfg.spreading_factor {
                    SfAllocation::Distance => (allocated.sf, allocated.in_range),
                    SfAllocation::Fixed(sf) => (
                        sf,
                        cfg.path_loss.rx_power_dbm(DEVICE_TX_POWER_DBM, distance_m)
                            > end_device_sensitivity(sf),
                    ),
                };
                Device {
                    x,
                    y,
                    distance_m,
                    sf,
                    in_range,
                    gateway_dbm: cfg.path_loss.rx_power_dbm(DEVICE_TX_POWER_DBM, distance_m),
                    rng: SimRng::new(derive(seed, Stream::Mac, i as u64)),
                    duty: DutyCycle::new(cfg.duty_cycle),
                    queue: VecDeque::new(),
                    transmitting: false,
                    token: 0,
                    windows: None,
                    held: VecDeque::new(),
                }
            })
            .collect();
        Ok(Lorawan {
            devices,
            gateway: Gateway::with(
                cfg.duty_cycle,
                cfg.reception_paths as usize,
                cfg.rx_delays(),
            ),
            agenda: Agenda::new(3, 256),
            air: Vec::new(),
            next_frame: 0,
            next_held: 0,
            downlink_on_air: None,
            processed: 0,
            in_flight: 0,
            record: LorawanRecord::default(),
            waiting: 0,
            uplink_airtime: 0,
            downlink_airtime: 0,
            cfg: cfg.clone(),
        })
    }

    /// The CoAP server's node id: the number of devices.
    pub fn server(&self) -> NodeId {
        self.cfg.devices
    }

    /// Device `dev`'s distance to the gateway (m).
    pub fn distance_m(&self, dev: NodeId) -> f64 {
        self.devices[dev as usize].distance_m
    }

    /// Device `dev`'s position (m east and north of the gateway).
    pub fn position(&self, dev: NodeId) -> (f64, f64) {
        let d = &self.devices[dev as usize];
        (d.x, d.y)
    }

    /// Device `dev`'s spreading factor.
    pub fn sf(&self, dev: NodeId) -> Sf {
        self.devices[dev as usize].sf
    }

    /// Whether device `dev` hears the gateway at its SF (false: out of
    /// range, its frames will mostly be lost).
    pub fn in_range(&self, dev: NodeId) -> bool {
        self.devices[dev as usize].in_range
    }

    /// The largest CoAP message device `dev` can send or receive in RX1
    /// (EU868's FRMPayload limit at its SF, less the SCHC residue).
    pub fn max_payload(&self, dev: NodeId) -> usize {
        max_frm_payload(self.sf(dev)).saturating_sub(usize::from(self.cfg.schc_residue))
    }

    /// What the network did so far.
    pub fn record(&self) -> LorawanRecord {
        LorawanRecord {
            waiting: to_secs(self.waiting),
            uplink_airtime: to_secs(self.uplink_airtime),
            downlink_airtime: to_secs(self.downlink_airtime),
            ..self.record.clone()
        }
    }

    /// When the windows of device `dev`'s last uplink are over.
    fn windows_over(&self, w: &Windows) -> Nanos {
        w.downlink_end.unwrap_or_else(|| {
            w.uplink.end
                + self.cfg.rx_delays()[1]
                + RX_WINDOW_SYMBOLS * Modulation::lorawan(RX2_SF).symbol_time()
        })
    }

    /// Plans device `dev`'s next transmission: at once if it may send now,
    /// else an attempt when its duty cycle and windows allow.
    fn plan(&mut self, now: Nanos, dev: u32) {
        let d = &self.devices[dev as usize];
        if d.transmitting || d.queue.is_empty() {
            return;
        }
        let mut at = d.duty.earliest(SubBand::G1, now);
        if let Some(w) = &d.windows {
            at = at.max(self.windows_over(w));
        }
        let d = &mut self.devices[dev as usize];
        d.token = d.token.wrapping_add(1);
        if at <= now {
            self.start_uplink(now, dev);
        } else {
            let token = d.token;
            self.agenda.push(at, Ev::Attempt { dev, token });
        }
    }

    /// Device `dev` puts its head frame on the air at `now`.
    fn start_uplink(&mut self, now: Nanos, dev: u32) {
        let channels = u32::from(self.cfg.uplink_channels);
        let d = &mut self.devices[dev as usize];
        let w = d.queue.pop_front().expect("a frame to send");
        let channel = UPLINK_CHANNELS[d.rng.int_in(0, channels - 1) as usize];
        let airtime = Modulation::lorawan(d.sf).time_on_air(phy_payload(w.frm));
        d.duty.record(channel.sub_band, now, airtime);
        d.transmitting = true;
        let tx = Transmission {
            start: now,
            end: now + airtime,
            hz: channel.hz,
            sf: d.sf,
            rx_dbm: d.gateway_dbm,
        };
        let frame = self.next_frame;
        self.next_frame = self.next_frame.wrapping_add(1);
        let lost = if tx.rx_dbm < gateway_sensitivity(tx.sf) {
            Some(DropCause::BelowSensitivity)
        } else {
            self.gateway
                .receive(now, frame, tx.end)
                .err()
                .map(|_| DropCause::GatewayBusy)
        };
        self.air.push(Air {
            frame,
            id: w.id,
            dev,
            tx,
            done: false,
            lost,
        });
        self.record.uplink_frames += 1;
        self.uplink_airtime += airtime;
        self.waiting += now - w.since;
        self.agenda.push(tx.end, Ev::UplinkEnd { frame });
    }

    /// An uplink ends at the gateway: decide its fate, open the device's
    /// windows, and give the network server's held downlinks their chance.
    fn uplink_end(&mut self, now: Nanos, frame: u32) -> Option<Output> {
        let k = self
            .air
            .iter()
            .position(|a| a.frame == frame)
            .expect("an uplink on the air");
        self.air[k].done = true;
        let a = self.air[k];
        let cause = a.lost.or_else(|| {
            let others = self.air.iter().filter(|o| o.frame != frame).map(|o| &o.tx);
            match fate(
                &a.tx,
                others,
                self.cfg.capture,
                gateway_sensitivity(a.tx.sf),
            ) {
                Fate::Received => None,
                Fate::BelowSensitivity => Some(DropCause::BelowSensitivity),
                Fate::Interference(_) => Some(DropCause::Collision),
            }
        });
        let channel = UPLINK_CHANNELS
            .into_iter()
            .find(|c| c.hz == a.tx.hz)
            .expect("an uplink channel");
        let d = &mut self.devices[a.dev as usize];
        d.transmitting = false;
        d.windows = Some(Windows {
            uplink: Uplink {
                end: now,
                channel,
                sf: a.tx.sf,
            },
            received: cause.is_none(),
            downlink_end: None,
        });
        self.prune_air();
        if cause.is_none() {
            self.agenda.push_lane(
                LANE_TO_SERVER,
                now + self.cfg.backhaul(),
                Ev::AtServer { id: a.id },
            );
            self.book_held(now, a.dev);
        }
        self.plan(now, a.dev);
        cause.map(|cause| self.dropped(a.id, cause))
    }

    /// Books the oldest of device `dev`'s held downlinks that fits the
    /// windows of its last uplink; the others note why they missed.
    fn book_held(&mut self, now: Nanos, dev: u32) {
        let mut i = 0;
        while i < self.devices[dev as usize].held.len() {
            let h = self.devices[dev as usize].held[i];
            match self.book(now, h.down) {
                Ok(()) => {
                    self.devices[dev as usize].held.remove(i);
                    return;
                }
                Err(miss) => {
                    self.devices[dev as usize].held[i].miss = miss;
                    i += 1;
                }
            }
        }
    }

    /// Books `down` in the windows of its device's last uplink, if the
    /// network server knows them and they are free: RX1, else RX2 (if the
    /// frame fits SF12's limit).
    fn book(&mut self, now: Nanos, down: Down) -> Result<(), Miss> {
        let w = match self.devices[down.dev as usize].windows {
            Some(w) if w.received && w.downlink_end.is_none() => w,
            _ => return Err(Miss::NoWindow),
        };
        let phy = phy_payload(down.frm);
        let booked = match self.gateway.book(now, &w.uplink, Window::Rx1, phy) {
            Ok(dl) => Ok(dl),
            Err(_) if down.frm <= max_frm_payload(RX2_SF) => {
                self.gateway.book(now, &w.uplink, Window::Rx2, phy)
            }
            Err(rx1) => Err(rx1),
        };
        let dl = booked?;
        if dl.window == Window::Rx2 {
            self.record.rx2_downlinks += 1;
        }
        self.record.downlink_frames += 1;
        self.downlink_airtime += dl.end - dl.start;
        self.devices[down.dev as usize]
            .windows
            .as_mut()
            .expect("windows")
            .downlink_end = Some(dl.end);
        self.agenda.push(dl.start, Ev::DownStart);
        self.agenda.push(
            dl.end,
            Ev::DownEnd {
                down,
                start: dl.start,
                channel: dl.channel,
            },
        );
        // The device's windows now end with this downlink.
        self.plan(now, down.dev);
        Ok(())
    }

    /// A downlink reaches the network server.
    fn at_gateway(&mut self, now: Nanos, down: Down) -> Option<Output> {
        let miss = self.book(now, down).err()?;
        let held = &mut self.devices[down.dev as usize].held;
        if held.len() >= self.cfg.held_downlinks as usize {
            return Some(self.dropped(down.id, miss_cause(miss)));
        }
        let seq = self.next_held;
        self.next_held += 1;
        held.push_back(Held { seq, down, miss });
        self.record.held_downlinks += 1;
        self.agenda.push_lane(
            LANE_EXPIRY,
            now + self.cfg.downlink_ttl(),
            Ev::Expire { dev: down.dev, seq },
        );
        None
    }

    /// A booked downlink starts: the gateway's receptions are cut off.
    fn down_start(&mut self, now: Nanos) {
        self.downlink_on_air = Some(now);
        for frame in self.gateway.start_transmission(now) {
            if let Some(a) = self.air.iter_mut().find(|a| a.frame == frame) {
                a.lost.get_or_insert(DropCause::GatewayBusy);
            }
        }
    }

    /// A downlink's last symbol reaches its device: received or lost.
    fn down_end(&mut self, now: Nanos, down: Down, start: Nanos, channel: Channel) -> Output {
        if self.downlink_on_air == Some(start) {
            self.downlink_on_air = None;
        }
        let dev = &self.devices[down.dev as usize];
        // RX1 at the device's SF, RX2 at SF12.
        let sf = if channel.sub_band == SubBand::G3 {
            RX2_SF
        } else {
            dev.sf
        };
        let hz = channel.hz;
        let wanted = Transmission {
            start,
            end: now,
            hz,
            sf,
            rx_dbm: self
                .cfg
                .path_loss
                .rx_power_dbm(channel.sub_band.max_tx_power_dbm(), dev.distance_m),
        };
        // Other devices' uplinks on its channel, as heard at the device.
        let others: Vec<Transmission> = self
            .air
            .iter()
            .filter(|a| a.dev != down.dev && a.tx.hz == hz && wanted.overlap(&a.tx) > 0)
            .map(|a| {
                let src = &self.devices[a.dev as usize];
                let dist = (src.x - dev.x).hypot(src.y - dev.y);
                Transmission {
                    rx_dbm: self.cfg.path_loss.rx_power_dbm(DEVICE_TX_POWER_DBM, dist),
                    ..a.tx
                }
            })
            .collect();
        let out = match fate(
            &wanted,
            &others,
            self.cfg.capture,
            end_device_sensitivity(sf),
        ) {
            Fate::Received => {
                self.in_flight -= 1;
                Output::Delivered {
                    id: down.id,
                    node: down.dev,
                }
            }
            Fate::BelowSensitivity => self.dropped(down.id, DropCause::BelowSensitivity),
            Fate::Interference(_) => self.dropped(down.id, DropCause::Collision),
        };
        self.prune_air();
        out
    }

    /// A held downlink's time is up, if it is still held.
    fn expire(&mut self, dev: u32, seq: u64) -> Option<Output> {
        let held = &mut self.devices[dev as usize].held;
        let i = held.iter().position(|h| h.seq == seq)?;
        let h = held.remove(i).expect("found");
        Some(self.dropped(h.down.id, miss_cause(h.miss)))
    }

    /// `id` leaves the network, dropped for `cause`.
    fn dropped(&mut self, id: PacketId, cause: DropCause) -> Output {
        self.in_flight -= 1;
        Output::Dropped { id, cause }
    }

    /// Forgets uplinks that can no longer overlap a frame whose fate is
    /// still to be decided: over before every such frame (uplinks on the
    /// air, the downlink on the air, and frames yet to start) began.
    fn prune_air(&mut self) {
        let horizon = self
            .air
            .iter()
            .filter(|a| !a.done)
            .map(|a| a.tx.start)
            .chain(self.downlink_on_air)
            .min();
        self.air
            .retain(|a| !a.done || horizon.is_some_and(|h| a.tx.end > h));
    }
}

/// The drop cause of a downlink given up after `miss`.
fn miss_cause(miss: Miss) -> DropCause {
    match miss {
        Miss::NoWindow => DropCause::NoWindow,
        Miss::GatewayBusy => DropCause::GatewayBusy,
        Miss::DutyCycle => DropCause::DutyCycle,
    }
}

impl Network for Lorawan {
    fn send(&mut self, now: Nanos, d: Datagram) -> Result<(), DropCause> {
        let server = self.server();
        let frm = self.cfg.frm_payload(&d);
        if d.src == server {
            assert!(
                d.dst < server,
                "the server sends to devices 0..{server}, not to node {}",
                d.dst
            );
            if frm > max_frm_payload(self.sf(d.dst)) {
                return Err(DropCause::PayloadTooLarge);
            }
            let down = Down {
                id: d.id,
                dev: d.dst,
                frm,
            };
            self.agenda.push_lane(
                LANE_TO_GATEWAY,
                now + self.cfg.backhaul(),
                Ev::AtGateway(down),
            );
            self.in_flight += 1;
            return Ok(());
        }
        assert!(
            d.src < server && d.dst == server,
            "devices 0..{server} send to the server (node {server}), not node {} to node {}",
            d.src,
            d.dst
        );
        if frm > max_frm_payload(self.sf(d.src)) {
            return Err(DropCause::PayloadTooLarge);
        }
        let dev = &mut self.devices[d.src as usize];
        if dev.queue.len() >= self.cfg.device_queue as usize {
            return Err(DropCause::MacQueue);
        }
        dev.queue.push_back(Waiting {
            id: d.id,
            frm,
            since: now,
        });
        self.in_flight += 1;
        if dev.queue.len() == 1 {
            self.plan(now, d.src);
        }
        Ok(())
    }

    fn next_wakeup(&self) -> Option<Nanos> {
        self.agenda.peek_time()
    }

    fn poll(&mut self, until: Nanos) -> Option<(Nanos, Option<Output>)> {
        let (now, ev) = self.agenda.pop_due(until)?;
        self.processed += 1;
        let out = match ev {
            Ev::Attempt { dev, token } => {
                if token == self.devices[dev as usize].token {
                    self.plan(now, dev);
                }
                None
            }
            Ev::UplinkEnd { frame } => self.uplink_end(now, frame),
            Ev::AtServer { id } => {
                self.in_flight -= 1;
                Some(Output::Delivered {
                    id,
                    node: self.server(),
                })
            }
            Ev::AtGateway(down) => self.at_gateway(now, down),
            Ev::DownStart => {
                self.down_start(now);
                None
            }
            Ev::DownEnd {
                down,
                start,
                channel,
            } => Some(self.down_end(now, down, start, channel)),
            Ev::Expire { dev, seq } => self.expire(dev, seq),
        };
        Some((now, out))
    }

    fn in_flight(&self) -> u64 {
        self.in_flight
    }

    fn events(&self) -> u64 {
        self.processed
    }
}
