//! The packet log (`--packet-log FILE`): one JSON object a line for every
//! packet the relay read, written when its fate is known, and the offline
//! replay of a log's arrivals through the same model (the fidelity check).
//!
//! Times are nanoseconds of model time since the relay started (the model's
//! clock is the wall clock since then, see [`crate::emulate`]). Lines of
//! packets that entered the model appear in the order the model produced
//! their outcomes; `seq` numbers packets in the order they entered it.

use std::collections::HashMap;
use std::io::Write;

use anyhow::{Context, Result};
use coapcc_link::{Datagram, Nanos, Network, Output};
use serde::{Deserialize, Serialize};

use super::model::{cause_name, IpModel};
use crate::emulate::EmulatedNetwork;

/// One packet's line.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogRecord {
    /// Order of entry into the model (from 0); refused packets take none.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub seq: Option<u64>,
    /// `up` (client → server) or `down`.
    pub dir: String,
    /// When the relay read it from its TUN device.
    pub arrival_ns: Nanos,
    /// When it entered the model: `arrival_ns`, or the model's clock if that
    /// was later (model time never goes back). Absent if refused.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub entry_ns: Option<Nanos>,
    /// Source and destination nodes of the model (absent if refused before
    /// a node was known).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub src: Option<u32>,
    /// Destination node.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub dst: Option<u32>,
    /// `tcp`, `udp`, `icmp`, `protoN`, or `-` if not IPv4.
    pub proto: String,
    /// Real IP packet bytes.
    pub ip_len: usize,
    /// Transport header bytes handed to the model.
    pub transport_header: u16,
    /// Payload bytes handed to the model.
    pub payload: u16,
    /// `delivered`, `dropped` or `refused`.
    pub outcome: String,
    /// Delivered or dropped: when (model time).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub at_ns: Option<Nanos>,
    /// Delivered: when the relay wrote it to the far TUN device (wall clock,
    /// same origin).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub written_ns: Option<Nanos>,
    /// Dropped: the model's cause; refused: the relay's reason.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub cause: Option<String>,
}

/// Writes records as JSON lines.
pub(crate) struct LogWriter {
    out: std::io::BufWriter<std::fs::File>,
}

impl LogWriter {
    pub(crate) fn create(path: &std::path::Path) -> Result<LogWriter> {
        let f = std::fs::File::create(path)
            .with_context(|| format!("--packet-log: cannot create `{}`", path.display()))?;
        Ok(LogWriter {
            out: std::io::BufWriter::new(f),
        })
    }

    pub(crate) fn write(&mut self, r: &LogRecord) {
        if let Ok(line) = serde_json::to_string(r) {
            let _ = writeln!(self.out, "{line}");
        }
    }

    pub(crate) fn flush(&mut self) {
        let _ = self.out.flush();
    }
}

/// Reads a packet log.
pub fn read_log(path: &std::path::Path) -> Result<Vec<LogRecord>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read packet log `{}`", path.display()))?;
    text.lines()
        .enumerate()
        .map(|(i, l)| {
            serde_json::from_str(l)
                .with_context(|| format!("{}:{}: not a packet log line", path.display(), i + 1))
        })
        .collect()
}

/// What the model did with one packet in a replay.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Replayed {
    /// The packet's `seq`.
    pub seq: u64,
    /// `delivered` or `dropped`.
    pub outcome: String,
    /// When.
    pub at_ns: Nanos,
    /// Dropped: the cause.
    pub cause: Option<String>,
}

/// Replays the arrivals of `records` (those that entered the model: with a
/// `seq`) through a fresh model of `network` seeded with `seed`, exactly as
/// the relay drives it: before each packet enters at its `entry_ns`, every
/// event due by then is handled. Returns the outcomes in the order the model
/// produced them; the relay's log lists its outcomes in that same order if
/// the relay drove the model faithfully.
pub fn replay(
    network: &EmulatedNetwork,
    seed: u64,
    records: &[LogRecord],
) -> Result<Vec<Replayed>> {
    let mut model = IpModel::new(network, seed)?;
    let mut entered: Vec<&LogRecord> = records.iter().filter(|r| r.seq.is_some()).collect();
    entered.sort_by_key(|r| r.seq);
    let mut by_id: HashMap<u32, u64> = HashMap::new();
    let mut out = Vec::new();
    let collect = |model: &mut IpModel,
                   until: Nanos,
                   by_id: &mut HashMap<u32, u64>,
                   out: &mut Vec<Replayed>| {
        while let Some((at, o)) = model.poll(until) {
            match o {
                Some(Output::Delivered { id, .. }) => out.push(Replayed {
                    seq: by_id.remove(&id).expect("a replayed packet"),
                    outcome: "delivered".into(),
                    at_ns: at,
                    cause: None,
                }),
                Some(Output::Dropped { id, cause }) => out.push(Replayed {
                    seq: by_id.remove(&id).expect("a replayed packet"),
                    outcome: "dropped".into(),
                    at_ns: at,
                    cause: Some(cause_name(cause).into()),
                }),
                None => {}
            }
        }
    };
    for (i, r) in entered.iter().enumerate() {
        let seq = r.seq.expect("filtered");
        let entry = r
            .entry_ns
            .with_context(|| format!("packet {seq}: no entry_ns"))?;
        collect(&mut model, entry, &mut by_id, &mut out);
        let id = i as u32;
        by_id.insert(id, seq);
        let d = Datagram {
            id,
            src: r.src.with_context(|| format!("packet {seq}: no src"))?,
            dst: r.dst.with_context(|| format!("packet {seq}: no dst"))?,
            transport_header: r.transport_header,
            payload: r.payload,
            unnecessary: false,
        };
        if let Err(cause) = model.send(entry, d) {
            by_id.remove(&id);
            out.push(Replayed {
                seq,
                outcome: "dropped".into(),
                at_ns: entry,
                cause: Some(cause_name(cause).into()),
            });
        }
    }
    collect(&mut model, Nanos::MAX, &mut by_id, &mut out);
    Ok(out)
}
