//! `--pcap`: a simulated run's traffic, read back by Wireshark's `tshark`,
//! shows the CoAP messages the endpoints sent, with the right Message IDs,
//! types and codes, in order.

use std::process::Command;

use coapcc::pcap::PcapTap;
use coapcc_link::dumbbell::{Buffer, Config};
use coapcc_link::errors::ErrorProfile;
use coapcc_proto::message::MessageView;
use coapcc_sim::dumbbell::{self, Group, RunSpec, Tap};
use coapcc_sim::network::Tapped;
use coapcc_sim::{AlgorithmSpec, Workload};

/// Records (Message ID, type, code) of every message sent.
#[derive(Default)]
struct Recorder(Vec<(u16, u8, u8)>);

impl Tap for Recorder {
    fn packet(&mut self, _at: u64, _src: u32, _dst: u32, bytes: &[u8]) {
        let m = MessageView::decode(bytes).expect("endpoints send valid CoAP");
        self.0.push((m.mid, m.mtype as u8, m.code.0));
    }
}

fn tshark() -> Option<&'static str> {
    Command::new("tshark")
        .arg("--version")
        .output()
        .ok()
        .map(|_| "tshark")
}

#[test]
fn tshark_decodes_the_simulated_traffic_as_coap() {
    let Some(tshark) = tshark() else {
        eprintln!("SKIPPED: tshark is not installed (Debian package tshark; .ci/run installs it)");
        return;
    };
    // Retransmissions and duplicates included: 30 clients behind a small buffer
    // with link errors.
    let spec = RunSpec {
        network: Config {
            buffer: Buffer::Bytes(2500),
            errors: ErrorProfile::Medium,
            ..Config::default()
        },
        coap: Default::default(),
        groups: vec![Group {
            algorithm: AlgorithmSpec::named("cocoa"),
            workload: Workload {
                exchanges: 5,
                ..Workload::default()
            },
            clients: 30,
        }],
        seed: 3,
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.pcap");
    let mut pcap = PcapTap::create(&path).unwrap();
    dumbbell::Sim::run_with_tap(&spec, 0, &mut pcap).unwrap();
    let written = pcap.finish().unwrap();
    let mut expected = Recorder::default();
    dumbbell::Sim::run_with_tap(&spec, 0, &mut expected).unwrap();
    assert_eq!(written, expected.0.len() as u64);
    assert!(expected.0.iter().any(|&(_, t, _)| t == 0), "requests");
    assert!(
        expected.0.iter().any(|&(_, t, c)| t == 2 && c == 0x45),
        "2.05 ACKs"
    );

    let out = Command::new(tshark)
        .arg("-r")
        .arg(&path)
        .args([
            "-T",
            "fields",
            "-e",
            "coap.mid",
            "-e",
            "coap.type",
            "-e",
            "coap.code",
            "-e",
            "udp.checksum.status",
        ])
        .args(["-o", "udp.check_checksum:TRUE"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let decoded: Vec<(u16, u8, u8)> = text
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            assert_eq!(f.len(), 4, "a CoAP packet in every frame: {l:?}");
            // 1 = Good: the UDP checksums we wrote are right.
            assert_eq!(f[3], "1", "UDP checksum status of {l:?}");
            (
                f[0].parse().unwrap(),
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
            )
        })
        .collect();
    assert_eq!(decoded, expected.0);
}

/// CoAP over TCP: every segment is in the file with its real size (its
/// options written as Linux lays them out), and tshark finds the handshake,
/// the CSMs, the requests and the 2.05 responses.
#[test]
fn tshark_decodes_coap_over_tcp_segments() {
    let Some(tshark) = tshark() else {
        eprintln!("SKIPPED: tshark is not installed (Debian package tshark; .ci/run installs it)");
        return;
    };
    // SYN and SYN-ACK: 40 bytes of headers + MSS (4) + NOP window scale
    // (4, Linux 4.9's default); a 6.x host adds NOP NOP SACK-permitted (4).
    for (profile, syn_len) in [("tcp", "48"), ("tcp-linux6", "52")] {
        check_tcp_pcap(tshark, profile, syn_len);
    }
}

fn check_tcp_pcap(tshark: &str, profile: &str, syn_len: &str) {
    let spec = RunSpec {
        network: Config::default(),
        coap: Default::default(),
        groups: vec![Group {
            algorithm: AlgorithmSpec::named(profile),
            workload: Workload {
                kind: coapcc_sim::WorkloadKind::Random,
                exchanges: 6,
                ..Workload::default()
            },
            clients: 2,
        }],
        seed: 4,
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tcp.pcap");
    let mut pcap = PcapTap::create(&path).unwrap();
    let result = dumbbell::Sim::run_with_tap(&spec, 0, &mut pcap).unwrap();
    let written = pcap.finish().unwrap();
    assert_eq!(
        written, result.conservation.sent,
        "every segment sent is in the file"
    );
    let out = Command::new(tshark)
        .arg("-r")
        .arg(&path)
        .args([
            "-T",
            "fields",
            "-e",
            "ip.len",
            "-e",
            "tcp.flags.syn",
            "-e",
            "coap.code",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let rows: Vec<Vec<&str>> = text.lines().map(|l| l.split('\t').collect()).collect();
    assert_eq!(rows.len() as u64, written);
    // Sizes on the wire: what crossed the bottleneck, plus what was still
    // queued or in flight when the run ended (segments are tapped when sent).
    let ip_bytes: u64 = rows.iter().map(|r| r[0].parse::<u64>().unwrap()).sum();
    let carried = result.uplink.bytes + result.downlink.bytes;
    assert_eq!(result.conservation.dropped, 0);
    assert!(
        ip_bytes >= carried && ip_bytes - carried <= 60 * result.conservation.in_flight,
        "{ip_bytes} vs {carried}"
    );
    // 20 IPv4 + 20 TCP + frame: GET /sense is an 8-byte frame, 2.05 with 60
    // bytes of payload a 64-byte one (neither carries options here).
    for r in &rows {
        match (r[1], r.get(2).copied().unwrap_or("")) {
            (_, "1") => assert_eq!(r[0], "48", "{profile}"),
            (_, "69") => assert_eq!(r[0], "104", "{profile}"),
            ("1" | "True", _) => assert_eq!(r[0], syn_len, "{profile}"),
            _ => {}
        }
    }
    let count = |code: &str| rows.iter().filter(|r| r.get(2) == Some(&code)).count();
    let syns = rows
        .iter()
        .filter(|r| r[1] == "1" || r[1] == "True")
        .count();
    assert!(syns >= 4, "a SYN and a SYN-ACK per connection: {syns}");
    assert_eq!(count("1"), 12, "2 clients × 6 GET requests");
    assert_eq!(count("69"), 12, "12 responses 2.05");
    assert!(
        count("225") >= 4,
        "CSMs (7.01) of both sides of every connection"
    );
}
