//! The TUN relay: reads IPv4 packets from the client namespace's and the
//! server namespace's TUN devices, hands each to the network model at its
//! arrival time, and writes it unchanged to the other device when the model
//! delivers it. The model is driven on the wall clock exactly as the UDP
//! relay drives it ([`crate::emulate`]): the relay sleeps until the model's
//! next event is due (less [`IpRelayOptions::early`]), handles every event
//! due, and a packet enters at its arrival time or at the model's clock if
//! that is later, so model time never goes back.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{Read, Write};
use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Result;
use coapcc_link::{Nanos, Network, NodeId};
use serde::Serialize;
use tokio::sync::oneshot;

use super::addressing::Addressing;
use super::log::{LogRecord, LogWriter};
use super::model::{cause_name, IpModel};
use super::packet::{parse_ipv4, proto_name, Ipv4Info, Malformed};
use crate::clock::Clock;
use crate::drive::{Driver, Fate};
use crate::emulate::{client_node, EmulatedNetwork};

/// How the relay runs.
#[derive(Clone, Debug)]
pub struct IpRelayOptions {
    /// The network model.
    pub network: EmulatedNetwork,
    /// Seed of the model's random streams.
    pub seed: u64,
    /// How much earlier than its departure time a packet may leave (see
    /// [`crate::emulate::EmulatorOptions::early`]).
    pub early: Duration,
    /// Most IP bytes the relay holds per direction (inside the model:
    /// queued, being sent or propagating); a packet that would exceed it is
    /// refused (`relay_full`). The default, 4 MiB, is above the 1 410 000 B
    /// per direction that stands for an infinite buffer in the evaluations.
    pub max_held_bytes: u64,
    /// Write every packet to this file (JSON lines, [`LogRecord`]).
    pub packet_log: Option<PathBuf>,
}

impl Default for IpRelayOptions {
    fn default() -> Self {
        IpRelayOptions {
            network: EmulatedNetwork::default(),
            seed: 1,
            early: Duration::from_millis(1),
            max_held_bytes: crate::drive::DEFAULT_MAX_HELD_BYTES,
            packet_log: None,
        }
    }
}

/// What the relay did in one direction.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct DirectionReport {
    /// Packets read from the sending side's TUN device.
    pub packets: u64,
    /// Their IP bytes.
    pub bytes: u64,
    /// Delivered by the model and written to the far device.
    pub delivered: u64,
    /// IP bytes delivered.
    pub delivered_bytes: u64,
    /// Dropped by the model, by cause (`buffer`, `link_error`, `mac_queue`,
    /// …), and `write_error` when the far device refused a delivered packet.
    pub dropped: BTreeMap<String, u64>,
    /// Not handed to the model, by reason: `not_ipv4`, `malformed`,
    /// `unknown_source`, `unknown_destination`, `not_udp`, `fragment`,
    /// `too_large` (grid), `relay_full`.
    pub refused: BTreeMap<String, u64>,
    /// Inside the model when the report was taken.
    pub in_flight: u64,
    /// IP bytes inside the model now.
    pub held_bytes: u64,
    /// The most IP bytes inside the model at once.
    pub peak_held_bytes: u64,
}

/// The relay's counters.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RelayReport {
    /// Client namespace → server namespace.
    pub uplink: DirectionReport,
    /// Server namespace → client namespace.
    pub downlink: DirectionReport,
    /// Flows from the client namespace's primary address given a node
    /// (see [`Addressing`]).
    pub flows: u64,
}

/// A live view of a running relay's counters.
#[derive(Debug, Default)]
pub struct RelayMonitor(Mutex<RelayReport>);

impl RelayMonitor {
    /// The latest counters (refreshed every 100 ms and at the end).
    pub fn report(&self) -> RelayReport {
        self.0.lock().expect("monitor lock").clone()
    }
}

/// A packet inside the model: its bytes and its log line so far.
struct Held {
    up: bool,
    bytes: Vec<u8>,
    record: LogRecord,
}

struct Relay {
    /// The model and the packets inside it.
    driver: Driver<IpModel, Held>,
    addressing: Addressing,
    server_node: NodeId,
    client_nodes: Vec<NodeId>,
    clock: Clock,
    early: Nanos,
    next_seq: u64,
    /// Flow (protocol, port at the client's primary address) → node.
    flows: HashMap<(u8, u16), NodeId>,
    report: RelayReport,
    log: Option<LogWriter>,
}

impl Relay {
    fn dir(&mut self, up: bool) -> &mut DirectionReport {
        if up {
            &mut self.report.uplink
        } else {
            &mut self.report.downlink
        }
    }

    fn refuse(&mut self, up: bool, at: Nanos, len: usize, info: Option<&Ipv4Info>, reason: &str) {
        *self.dir(up).refused.entry(reason.into()).or_default() += 1;
        if let Some(log) = &mut self.log {
            log.write(&LogRecord {
                seq: None,
                dir: if up { "up" } else { "down" }.into(),
                arrival_ns: at,
                entry_ns: None,
                src: None,
                dst: None,
                proto: info.map_or("-".into(), |i| proto_name(i.proto)),
                ip_len: len,
                transport_header: 0,
                payload: 0,
                outcome: "refused".into(),
                at_ns: None,
                written_ns: None,
                cause: Some(reason.into()),
            });
        }
    }

    /// The client node of address `addr` with the client-side `port`.
    fn client_node_of(&mut self, addr: Ipv4Addr, proto: u8, port: u16) -> Option<NodeId> {
        if addr == self.addressing.client {
            let n = self.flows.len() as u64;
            let nodes = &self.client_nodes;
            return Some(*self.flows.entry((proto, port)).or_insert_with(|| {
                if nodes.is_empty() {
                    n as NodeId
                } else {
                    client_node(nodes, n)
                }
            }));
        }
        let node = self.addressing.node_of(addr)?;
        self.client_nodes.contains(&node).then_some(node)
    }

    /// A packet read at `arrival` from the client (`up`) or server side.
    fn offer(&mut self, up: bool, arrival: Nanos, bytes: &[u8]) {
        {
            let d = self.dir(up);
            d.packets += 1;
            d.bytes += bytes.len() as u64;
        }
        let info = match parse_ipv4(bytes) {
            Ok(i) => i,
            Err(Malformed::NotIpv4) => {
                return self.refuse(up, arrival, bytes.len(), None, "not_ipv4")
            }
            Err(Malformed::Truncated) => {
                return self.refuse(up, arrival, bytes.len(), None, "malformed")
            }
        };
        let (client_addr, server_addr, client_port) = if up {
            (info.src, info.dst, info.ports.0)
        } else {
            (info.dst, info.src, info.ports.1)
        };
        if server_addr != self.addressing.server {
            let reason = if up {
                "unknown_destination"
            } else {
                "unknown_source"
            };
            return self.refuse(up, arrival, bytes.len(), Some(&info), reason);
        }
        let Some(node) = self.client_node_of(client_addr, info.proto, client_port) else {
            let reason = if up {
                "unknown_source"
            } else {
                "unknown_destination"
            };
            return self.refuse(up, arrival, bytes.len(), Some(&info), reason);
        };
        let (th, payload) = match self.driver.net.sizes(&info) {
            Ok(s) => s,
            Err(reason) => return self.refuse(up, arrival, bytes.len(), Some(&info), reason),
        };
        if !self.driver.admits(up, bytes.len() as u64) {
            return self.refuse(up, arrival, bytes.len(), Some(&info), "relay_full");
        }
        let (src, dst) = if up {
            (node, self.server_node)
        } else {
            (self.server_node, node)
        };
        let entry = self.driver.entry_time(arrival);
        let seq = self.next_seq;
        self.next_seq += 1;
        let record = LogRecord {
            seq: Some(seq),
            dir: if up { "up" } else { "down" }.into(),
            arrival_ns: arrival,
            entry_ns: Some(entry),
            src: Some(src),
            dst: Some(dst),
            proto: proto_name(info.proto),
            ip_len: bytes.len(),
            transport_header: th,
            payload,
            outcome: String::new(),
            at_ns: None,
            written_ns: None,
            cause: None,
        };
        let held = Held {
            up,
            bytes: bytes.to_vec(),
            record,
        };
        let ip_bytes = (up, bytes.len() as u64);
        match self
            .driver
            .send(arrival, (src, dst), (th, payload), ip_bytes, held)
        {
            Ok(()) => self.dir(up).in_flight += 1,
            Err((cause, held)) => {
                *self
                    .dir(up)
                    .dropped
                    .entry(cause_name(cause).into())
                    .or_default() += 1;
                if let Some(log) = &mut self.log {
                    log.write(&LogRecord {
                        outcome: "dropped".into(),
                        at_ns: Some(entry),
                        cause: Some(cause_name(cause).into()),
                        ..held.record
                    });
                }
            }
        }
    }

    /// Handles every model event due by `until`, writing delivered packets
    /// to the far device.
    fn advance(&mut self, until: Nanos, client: &File, server: &File) {
        while let Some((at, fate)) = self.driver.poll(until) {
            let (h, cause) = match fate {
                Fate::Delivered(h) => (h, None),
                Fate::Dropped(cause, h) => (h, Some(cause)),
            };
            let len = h.bytes.len() as u64;
            let mut record = h.record;
            record.at_ns = Some(at);
            match cause {
                None => {
                    let mut far = if h.up { server } else { client };
                    let written = far.write(&h.bytes);
                    let written_ns = self.clock.now();
                    let dir = self.dir(h.up);
                    dir.in_flight -= 1;
                    match written {
                        Ok(_) => {
                            dir.delivered += 1;
                            dir.delivered_bytes += len;
                            record.outcome = "delivered".into();
                            record.written_ns = Some(written_ns);
                        }
                        Err(_) => {
                            *dir.dropped.entry("write_error".into()).or_default() += 1;
                            record.outcome = "delivered".into();
                            record.cause = Some("write_error".into());
                        }
                    }
                }
                Some(cause) => {
                    let dir = self.dir(h.up);
                    dir.in_flight -= 1;
                    *dir.dropped.entry(cause_name(cause).into()).or_default() += 1;
                    record.outcome = "dropped".into();
                    record.cause = Some(cause_name(cause).into());
                }
            }
            if let Some(log) = &mut self.log {
                log.write(&record);
            }
        }
    }

    fn publish(&mut self, monitor: &RelayMonitor) {
        self.report.flows = self.flows.len() as u64;
        for up in [true, false] {
            let (held, peak) = (self.driver.held_bytes(up), self.driver.peak_held_bytes(up));
            let dir = self.dir(up);
            dir.held_bytes = held;
            dir.peak_held_bytes = peak;
        }
        *monitor.0.lock().expect("monitor lock") = self.report.clone();
    }
}

/// Reads every packet waiting on `fd` (at most `max`), with their arrival
/// time on `clock`.
fn drain(fd: &File, clock: &Clock, buf: &mut [u8], max: usize) -> Vec<(Nanos, Vec<u8>)> {
    let mut out = Vec::new();
    let mut f = fd;
    while out.len() < max {
        match f.read(buf) {
            Ok(n) if n > 0 => out.push((clock.now(), buf[..n].to_vec())),
            _ => break,
        }
    }
    out
}

/// Runs the relay between the two TUN devices until `stop` fires; returns
/// the final counters (also published to `monitor`).
pub(crate) async fn run_relay(
    client: File,
    server: File,
    addressing: Addressing,
    opts: IpRelayOptions,
    monitor: Arc<RelayMonitor>,
    mut stop: oneshot::Receiver<()>,
    ready: std::sync::mpsc::Sender<Result<()>>,
) -> Result<RelayReport> {
    // set-up errors go to the starter too, so that it fails at once
    let setup = || -> Result<_> {
        let model = IpModel::new(&opts.network, opts.seed)?;
        let log = opts
            .packet_log
            .as_deref()
            .map(LogWriter::create)
            .transpose()?;
        Ok((
            model,
            log,
            super::sys::register(client)?,
            super::sys::register(server)?,
        ))
    };
    let (model, log, client, server) = match setup() {
        Ok(parts) => {
            let _ = ready.send(Ok(()));
            parts
        }
        Err(e) => {
            let _ = ready.send(Err(anyhow::anyhow!("{e:#}")));
            return Err(e);
        }
    };
    // time zero of the model: when the relay starts reading
    let clock = Clock::start();
    let mut relay = Relay {
        driver: Driver::new(model, opts.max_held_bytes),
        addressing,
        server_node: opts.network.server_node(),
        client_nodes: opts.network.client_nodes(),
        clock,
        early: opts.early.as_nanos() as Nanos,
        next_seq: 0,
        flows: HashMap::new(),
        report: RelayReport::default(),
        log,
    };
    let mut buf = vec![0u8; 65_536];
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    loop {
        let wake = relay
            .driver
            .net
            .next_wakeup()
            .map(|t| relay.clock.instant(t.saturating_sub(relay.early)));
        tokio::select! {
            biased;
            _ = &mut stop => break,
            _ = tokio::time::sleep_until(wake.unwrap_or_else(tokio::time::Instant::now)), if wake.is_some() => {}
            r = client.readable() => {
                let mut guard = r?;
                let packets = drain(client.get_ref(), &relay.clock, &mut buf, 64);
                if packets.len() < 64 {
                    guard.clear_ready();
                }
                for (at, p) in packets {
                    relay.advance(at, client.get_ref(), server.get_ref());
                    relay.offer(true, at, &p);
                }
            }
            r = server.readable() => {
                let mut guard = r?;
                let packets = drain(server.get_ref(), &relay.clock, &mut buf, 64);
                if packets.len() < 64 {
                    guard.clear_ready();
                }
                for (at, p) in packets {
                    relay.advance(at, client.get_ref(), server.get_ref());
                    relay.offer(false, at, &p);
                }
            }
            _ = tick.tick() => relay.publish(&monitor),
        }
        let until = relay.clock.now() + relay.early;
        relay.advance(until, client.get_ref(), server.get_ref());
    }
    if let Some(log) = &mut relay.log {
        log.flush();
    }
    relay.publish(&monitor);
    Ok(relay.report)
}
