//! `--pcap` on the grid: the frames a simulated run puts on the air, read
//! back by Wireshark's `tshark`, are IEEE 802.15.4 frames whose 6LoWPAN
//! fragments reassemble into exactly the CoAP messages the endpoints sent,
//! with valid UDP checksums.

use std::collections::{BTreeSet, HashMap};
use std::net::Ipv6Addr;
use std::process::Command;

use coapcc::pcap::Ieee802154Tap;
use coapcc_link::grid::sixlowpan;
use coapcc_link::grid::{FrameTrace, TracedFrame};
use coapcc_proto::message::MessageView;
use coapcc_sim::grid;
use coapcc_sim::network::Tapped;
use coapcc_sim::AlgorithmSpec;

/// A CoAP message as tshark names it: source address, Message ID, type, code.
type Key = (String, u16, u8, u8);

/// One datagram on one hop: the fragments seen on the air, how many it
/// needs, and its message.
type HopFrames = (BTreeSet<u8>, u8, Key);

/// Records what each traced frame carries, and which (datagram, hop) had
/// every one of its fragments on the air.
#[derive(Default)]
struct Recorder {
    frames: u64,
    acks: u64,
    /// By (packet, hop from, hop to).
    hops: HashMap<(u32, u32, u32), HopFrames>,
}

impl grid::Tap for Recorder {
    fn frame(&mut self, f: &FrameTrace, coap: &[u8]) {
        self.frames += 1;
        let TracedFrame::Data {
            hop, index, packet, ..
        } = f.kind
        else {
            self.acks += 1;
            return;
        };
        let m = MessageView::decode(coap).expect("endpoints send valid CoAP");
        let src = Ipv6Addr::from(hop.addressing.ipv6(hop.src)).to_string();
        let key = (src, m.mid, m.mtype as u8, m.code.0);
        let needed = sixlowpan::plan(&hop, coap.len()).frames;
        let e =
            self.hops
                .entry((packet, hop.from, hop.to))
                .or_insert((BTreeSet::new(), needed, key));
        e.0.insert(index);
    }
}

fn spec() -> grid::RunSpec {
    let mut s = grid::RunSpec {
        network: Default::default(),
        coap: Default::default(),
        workload: Default::default(),
        algorithm: AlgorithmSpec {
            ack_timeout: Some(3.0),
            ..AlgorithmSpec::named("default")
        },
        seed: 9,
    };
    s.workload.period_s = 6.0;
    s.workload.warmup_s = 5.0;
    s.workload.duration_s = 60.0;
    s
}

#[test]
fn tshark_reassembles_the_grid_frames_into_the_coap_messages_sent() {
    if Command::new("tshark").arg("--version").output().is_err() {
        eprintln!("SKIPPED: tshark is not installed (Debian package tshark; .ci/run installs it)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("grid.pcap");
    let mut tap = Ieee802154Tap::create(&path).unwrap();
    grid::Sim::run_with_tap(&spec(), 0, &mut tap).unwrap();
    let written = tap.finish().unwrap();
    let mut rec = Recorder::default();
    grid::Sim::run_with_tap(&spec(), 0, &mut rec).unwrap();
    assert_eq!(written, rec.frames);
    let expected: BTreeSet<Key> = rec
        .hops
        .values()
        .filter(|(seen, needed, _)| seen.len() == usize::from(*needed))
        .map(|(_, _, k)| k.clone())
        .collect();
    assert!(expected.len() > 100, "the run sends requests and responses");
    assert!(
        rec.hops.values().any(|(_, n, _)| *n == 2),
        "requests are fragmented"
    );

    // Context 0 is the global prefix, as in Contiki; Wireshark must be told.
    let tshark = |filter: &str, fields: &[&str]| -> Vec<String> {
        let mut cmd = Command::new("tshark");
        cmd.arg("-r")
            .arg(&path)
            .args(["-o", "6lowpan.context0:aaaa::/64"])
            .args(["-o", "udp.check_checksum:TRUE"])
            .args(["-Y", filter, "-T", "fields"]);
        for f in fields {
            cmd.args(["-e", f]);
        }
        let out = cmd.output().expect("tshark runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect()
    };
    assert_eq!(tshark("wpan", &["frame.number"]).len() as u64, written);
    assert_eq!(
        tshark("wpan.frame_type == 2", &["frame.number"]).len() as u64,
        rec.acks
    );
    assert!(tshark("_ws.malformed", &["frame.number"]).is_empty());
    let decoded: BTreeSet<Key> =
        tshark("coap", &["ipv6.src", "coap.mid", "coap.type", "coap.code"])
            .iter()
            .map(|l| {
                let f: Vec<&str> = l.split('\t').collect();
                (
                    f[0].to_string(),
                    f[1].parse().unwrap(),
                    f[2].parse().unwrap(),
                    f[3].parse().unwrap(),
                )
            })
            .collect();
    assert_eq!(decoded, expected);
    let bad_checksums = tshark("coap && udp.checksum.status != 1", &["frame.number"]);
    assert!(
        bad_checksums.is_empty(),
        "{} bad UDP checksums",
        bad_checksums.len()
    );
}
