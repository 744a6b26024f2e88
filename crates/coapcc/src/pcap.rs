//! `--pcap`: a simulated run's traffic as a pcap file that Wireshark and tshark
//! decode as CoAP.
//!
//! Every message an endpoint sends is written when it is sent, wrapped in real
//! IPv4 and UDP headers (checksums included); CoAP over TCP segments are written
//! with real IPv4 and TCP headers (sequence and acknowledgement numbers, flags,
//! window, the MSS option). UDP client `i` has the address 10.0.0.0 + i + 1, TCP
//! client `i` the address 10.128.0.0 + i + 1, both port 49152; the server is
//! 10.255.0.1 port 5683, the CoAP port, so dissectors recognise the traffic. These addresses only label the
//! trace; nothing is sent anywhere.
//!
//! On the grid ([`Ieee802154Tap`]) every frame put on the air is written as
//! it starts, as the exact bytes the model sized it by
//! (`coapcc_link::grid::sixlowpan`): IEEE 802.15.4 MAC header, 6LoWPAN
//! fragment headers, IPHC, the RPL hop-by-hop option, UDP and CoAP;
//! acknowledgements too. Link type IEEE802_15_4_NOFCS: no FCS.

use std::fs::File;
use std::io::BufWriter;
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};
use coapcc_link::grid::sixlowpan;
use coapcc_link::grid::{FrameTrace, TracedFrame};
use coapcc_sim::dumbbell::{Tap, TcpTrace, SERVER};
use coapcc_sim::grid;
use coapcc_tcp::Flags;
use etherparse::PacketBuilder;
use etherparse::TcpOptionElement;
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::{DataLink, TsResolution};

/// The server's IPv4 address in traces.
pub const SERVER_ADDR: [u8; 4] = [10, 255, 0, 1];
/// The CoAP port.
pub const COAP_PORT: u16 = 5683;
/// Every client's source port.
pub const CLIENT_PORT: u16 = 49152;

/// UDP client `i`'s IPv4 address: 10.0.0.0 + i + 1.
pub fn client_addr(i: u32) -> [u8; 4] {
    let n = i + 1;
    [10, (n >> 16) as u8, (n >> 8) as u8, n as u8]
}

/// TCP client `i`'s IPv4 address: 10.128.0.0 + i + 1.
pub fn tcp_client_addr(i: u32) -> [u8; 4] {
    let n = i + 1;
    [10, 128 | (n >> 16) as u8, (n >> 8) as u8, n as u8]
}

/// Writes every tapped packet as a raw-IPv4 pcap record.
pub struct PcapTap {
    writer: PcapWriter<BufWriter<File>>,
    frame: Vec<u8>,
    error: Option<anyhow::Error>,
    /// Packets written.
    pub packets: u64,
}

impl PcapTap {
    /// Creates (or truncates) `path` for raw IPv4 packets.
    pub fn create(path: &Path) -> Result<Self> {
        Self::with_link(path, DataLink::IPV4)
    }

    fn with_link(path: &Path, datalink: DataLink) -> Result<Self> {
        let file = File::create(path)
            .with_context(|| format!("{}: cannot create the pcap file", path.display()))?;
        let header = PcapHeader {
            datalink,
            ts_resolution: TsResolution::NanoSecond,
            ..PcapHeader::default()
        };
        let writer = PcapWriter::with_header(BufWriter::new(file), header)
            .with_context(|| format!("{}: cannot write the pcap header", path.display()))?;
        Ok(PcapTap {
            writer,
            frame: Vec::with_capacity(512),
            error: None,
            packets: 0,
        })
    }

    /// Flushes the file; reports the first write error, if any.
    pub fn finish(self) -> Result<u64> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let mut inner = self.writer.into_writer();
        std::io::Write::flush(&mut inner).context("cannot flush the pcap file")?;
        Ok(self.packets)
    }
}

impl PcapTap {
    fn record(&mut self, at: u64) {
        let packet = PcapPacket::new(
            Duration::from_nanos(at),
            self.frame.len() as u32,
            &self.frame,
        );
        match self.writer.write_packet(&packet) {
            Ok(_) => self.packets += 1,
            Err(e) => self.error = Some(anyhow::anyhow!("cannot write to the pcap file: {e}")),
        }
    }
}

impl Tap for PcapTap {
    fn packet(&mut self, at: u64, src: u32, dst: u32, bytes: &[u8]) {
        if self.error.is_some() {
            return;
        }
        let (sa, sp) = if src == SERVER {
            (SERVER_ADDR, COAP_PORT)
        } else {
            (client_addr(src), CLIENT_PORT)
        };
        let (da, dp) = if dst == SERVER {
            (SERVER_ADDR, COAP_PORT)
        } else {
            (client_addr(dst), CLIENT_PORT)
        };
        self.frame.clear();
        let builder = PacketBuilder::ipv4(sa, da, 64).udp(sp, dp);
        if let Err(e) = builder.write(&mut self.frame, bytes) {
            self.error = Some(anyhow::anyhow!("cannot build an IPv4/UDP packet: {e}"));
            return;
        }
        self.record(at);
    }

    fn tcp(&mut self, at: u64, client: u32, what: TcpTrace<'_>) {
        let TcpTrace::Sent { from_client, seg } = what else {
            return;
        };
        if self.error.is_some() {
            return;
        }
        let c = (tcp_client_addr(client), CLIENT_PORT);
        let s = (SERVER_ADDR, COAP_PORT);
        let ((sa, sp), (da, dp)) = if from_client { (c, s) } else { (s, c) };
        let mut b = PacketBuilder::ipv4(sa, da, 64).tcp(sp, dp, seg.seq, seg.window);
        if seg.flags.contains(Flags::ACK) {
            b = b.ack(seg.ack);
        }
        if seg.flags.contains(Flags::SYN) {
            b = b.syn();
        }
        if seg.flags.contains(Flags::FIN) {
            b = b.fin();
        }
        if seg.flags.contains(Flags::RST) {
            b = b.rst();
        }
        let options = tcp_options(seg);
        if !options.is_empty() {
            b = match b.options(&options) {
                Ok(b) => b,
                Err(e) => {
                    self.error = Some(anyhow::anyhow!("cannot build the TCP options: {e}"));
                    return;
                }
            };
        }
        self.frame.clear();
        if let Err(e) = b.write(&mut self.frame, &seg.payload) {
            self.error = Some(anyhow::anyhow!("cannot build an IPv4/TCP packet: {e}"));
            return;
        }
        self.record(at);
    }
}

/// A segment's TCP options laid out as Linux writes them without timestamps
/// (`tcp_options_write`): MSS; NOP, NOP, SACK-permitted; NOP, window scale
/// (shift 0: the model never scales windows); NOP, NOP, SACK blocks. Their
/// bytes are [`coapcc_tcp::Segment::options_len`], so every packet in the
/// file has the size the model carried.
fn tcp_options(seg: &coapcc_tcp::Segment) -> Vec<TcpOptionElement> {
    use TcpOptionElement::{
        MaximumSegmentSize, Noop, SelectiveAcknowledgement, SelectiveAcknowledgementPermitted,
        WindowScale,
    };
    let mut o = Vec::new();
    if let Some(mss) = seg.mss {
        o.push(MaximumSegmentSize(mss));
    }
    if seg.sack_permitted {
        o.extend([Noop, Noop, SelectiveAcknowledgementPermitted]);
    }
    if seg.wscale {
        o.extend([Noop, WindowScale(0)]);
    }
    if let Some((first, rest)) = seg.sack.as_slice().split_first() {
        let mut more = [None; 3];
        for (m, b) in more.iter_mut().zip(rest) {
            *m = Some((b.left, b.right));
        }
        o.extend([
            Noop,
            Noop,
            SelectiveAcknowledgement((first.left, first.right), more),
        ]);
    }
    o
}

/// Writes every frame the grid puts on the air as an IEEE 802.15.4 record.
pub struct Ieee802154Tap(PcapTap);

impl Ieee802154Tap {
    /// Creates (or truncates) `path` (link type IEEE802_15_4_NOFCS).
    pub fn create(path: &Path) -> Result<Self> {
        PcapTap::with_link(path, DataLink::IEEE802_15_4_NOFCS).map(Ieee802154Tap)
    }

    /// Flushes the file; frames written, or the first write error.
    pub fn finish(self) -> Result<u64> {
        self.0.finish()
    }
}

impl grid::Tap for Ieee802154Tap {
    fn frame(&mut self, frame: &FrameTrace, coap: &[u8]) {
        if self.0.error.is_some() {
            return;
        }
        match frame.kind {
            TracedFrame::Data {
                hop, index, tag, ..
            } => sixlowpan::encode_frame(
                &hop,
                usize::from(index),
                frame.dsn,
                tag,
                coap,
                &mut self.0.frame,
            ),
            TracedFrame::Ack => {
                self.0.frame.clear();
                sixlowpan::ack_frame(frame.dsn, &mut self.0.frame);
            }
        }
        self.0.record(frame.at);
    }
}
