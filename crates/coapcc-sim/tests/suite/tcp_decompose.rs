//! Where the time of the loaded CoAP-over-TCP rows goes (`docs/calibration.md`,
//! "The 100-client TCP rows"): every segment sent and
//! arrived, and every application step, of the continuous-client testbed
//! runs, cut per exchange and per direction.
//!
//! The decomposition prints with
//!
//! ```sh
//! cargo test --release -p coapcc-sim --test suite tcp_decompose:: -- --ignored --nocapture
//! ```
//!
//! (100 continuous clients, 2500-byte and infinite buffers, `tcp`,
//! `tcp-linux49-debian9`, `tcp-linux6` and `tcp-linux6-nosack`, 20
//! replications, seed 1, as the calibration table; a few seconds in
//! release). `DECOMPOSE_REPS`, `DECOMPOSE_CLIENTS` and `DECOMPOSE_ALGS`
//! (comma-separated names) change the replications, clients and TCPs.
//!
//! The quick tests check the facts the explanation stands on: a continuous
//! client's connection never has two data segments unacknowledged in either
//! direction once timing starts (so the congestion window never limits and
//! the congestion-control algorithm, NewReno or CUBIC, cannot matter), and
//! no segment waits for a delayed ACK or for Nagle once timing starts.

use crate::support;

use std::collections::HashMap;
use support::{group, on_dumbbell};

use coapcc_link::dumbbell::Buffer;
use coapcc_link::errors::ErrorProfile;
use coapcc_link::time::Nanos;
use coapcc_sim::dumbbell::{self, RunSpec, Tap, TcpNote, TcpTrace, SERVER};
use coapcc_sim::network::Tapped;
use coapcc_tcp::Flags;
use coapcc_workload::{AlgorithmSpec, WorkloadKind};

const SEC: f64 = 1e9;
/// The downlink's rate in bytes per second (30 kbit/s, docs/spec/testbed-spec.md §1).
const DOWN_BPS: f64 = 3750.0;

/// One thing seen through the tap.
#[derive(Clone, Copy, Debug)]
enum Kind {
    /// A segment handed to the network (`up`: client → server).
    Sent {
        up: bool,
        flags: u8,
        seq: u32,
        len: u32,
    },
    /// A segment delivered to its endpoint (`up`: at the server).
    Arrived {
        up: bool,
        flags: u8,
        seq: u32,
        ack: u32,
        len: u32,
        wire: u32,
    },
    Note(TcpNote),
}

/// TCP events, and CoAP-over-UDP messages sent: (time, client, to the
/// server, Message ID).
#[derive(Default)]
struct Collect(Vec<(Nanos, u32, Kind)>, Vec<(Nanos, u32, bool, u16)>);

impl Tap for Collect {
    fn packet(&mut self, at: Nanos, src: u32, dst: u32, bytes: &[u8]) {
        let mid = u16::from_be_bytes([bytes[2], bytes[3]]);
        if dst == SERVER {
            self.1.push((at, src, true, mid));
        } else {
            self.1.push((at, dst, false, mid));
        }
    }
    fn tcp(&mut self, at: Nanos, client: u32, what: TcpTrace<'_>) {
        let k = match what {
            TcpTrace::Sent { from_client, seg } => Kind::Sent {
                up: from_client,
                flags: seg.flags.bits(),
                seq: seg.seq,
                len: seg.payload.len() as u32,
            },
            TcpTrace::Arrived { to_server, seg } => Kind::Arrived {
                up: to_server,
                flags: seg.flags.bits(),
                seq: seg.seq,
                ack: seg.ack,
                len: seg.payload.len() as u32,
                wire: seg.wire_len() as u32,
            },
            TcpTrace::Note(n) => Kind::Note(n),
        };
        self.0.push((at, client, k));
    }
}

fn spec(alg: &str, clients: u32, buffer: Buffer) -> RunSpec {
    on_dumbbell(
        group(AlgorithmSpec::named(alg), clients, WorkloadKind::Continuous),
        buffer,
        ErrorProfile::None,
        1,
    )
}

/// Sums over replications (times in seconds, counts per run).
#[derive(Default, Debug)]
struct Sums {
    runs: u32,
    clients: u32,
    exchanges: u64,
    /// Per exchange: request's first send → the send of the copy that
    /// reached the server first (the client's recovery of a lost request).
    req_wait: f64,
    /// That copy's trip to the server (uplink queue, serialisation, 215 ms).
    req_transit: f64,
    /// Request at the server → the send of the response copy that reached the
    /// client first (the server's recovery of a lost response).
    resp_wait: f64,
    /// That copy's trip to the client (downlink queue, serialisation, 415 ms).
    resp_transit: f64,
    /// Response read → next request handed to the network (Nagle, app).
    gap: f64,
    req_copies: u64,
    /// Copies never delivered: dropped in a buffer, or still under way when
    /// the run ended (likewise `resp_dropped`).
    req_dropped: u64,
    /// Request copies delivered to a server that already held the request.
    req_twice: u64,
    resp_copies: u64,
    resp_dropped: u64,
    /// Response copies delivered to a client that already held the response.
    resp_twice: u64,
    /// Of those, delivered within the first 60 s after the start.
    resp_twice_60: u64,
    /// Pure ACKs sent by the server / client between the start and the
    /// client's last response, and how many of them left later than the
    /// arrival that caused them (delayed ACKs).
    server_pure_acks: u64,
    client_pure_acks: u64,
    delayed_acks: u64,
    /// Downlink seconds (bytes / rate) of what reached the clients after the
    /// start: first copies of responses, later copies, everything else.
    down_useful: f64,
    down_dup: f64,
    down_other: f64,
    /// From the common start to the last response of the run.
    span: f64,
    /// Responses delivered, and clients done, by `horizon` after the start.
    delivered_by_horizon: u64,
    done_by_horizon: u64,
    /// Most data segments unacknowledged at once on one connection, in one
    /// direction, after the start.
    max_outstanding: u32,
    /// Timer gaps: first retransmission after the first send (s), server and
    /// client, pooled.
    server_gaps: Vec<f64>,
    client_gaps: Vec<f64>,
    /// The server's RTT samples of the set-up: SYN-ACK → the handshake's ACK,
    /// and its CSM → the ACK of it (pooled over connections whose SYN-ACK and
    /// CSM were sent once), and the first exchange's duration (s).
    synack_rtt: Vec<f64>,
    server_csm_rtt: Vec<f64>,
    first_exchange: Vec<f64>,
    /// The set-up before the common start (the connections' start-up
    /// burst): its length, the downlink seconds of what the clients received
    /// in it, and the server's pure ACKs sent in it.
    setup_span: f64,
    setup_down: f64,
    setup_server_pure_acks: u64,
    /// Median per-client responses by the horizon, pooled over runs.
    progress: Vec<u32>,
    fct: Vec<f64>,
}

/// Per data segment (direction, seq, length): its send and arrival times.
#[derive(Default)]
struct Copies {
    sent: Vec<Nanos>,
    arrived: Vec<Nanos>,
}

fn analyse(events: &[(Nanos, u32, Kind)], clients: u32, horizon: f64, s: &mut Sums) {
    let start = events
        .iter()
        .find(|(_, _, k)| matches!(k, Kind::Note(TcpNote::RequestWritten)))
        .map(|e| e.0)
        .expect("a request");
    s.runs += 1;
    s.clients += clients;
    s.setup_span += start as f64 / SEC;
    let mut per: Vec<Vec<(Nanos, Kind)>> = vec![Vec::new(); clients as usize];
    for &(t, c, k) in events {
        per[c as usize].push((t, k));
    }
    let mut last_response = start;
    for evs in &per {
        let mut segs: HashMap<(bool, u32, u32), Copies> = HashMap::new();
        let mut responses_read = Vec::new();
        // Unacknowledged data segments (seq, end) per direction, and the
        // last arrival at each side (for delayed-ACK detection).
        let mut out: [Vec<(u32, u32)>; 2] = [Vec::new(), Vec::new()];
        let mut last_arrival = [0; 2];
        let mut pure = Vec::new();
        for &(t, k) in evs {
            match k {
                Kind::Sent {
                    up,
                    flags,
                    seq,
                    len,
                } => {
                    let syn_fin = flags & (Flags::SYN.bits() | Flags::FIN.bits()) != 0;
                    if len > 0 && !syn_fin {
                        let c = segs.entry((up, seq, len)).or_default();
                        if c.sent.is_empty() && t >= start {
                            let o = &mut out[usize::from(up)];
                            o.push((seq, seq.wrapping_add(len)));
                            s.max_outstanding = s.max_outstanding.max(o.len() as u32);
                        }
                        c.sent.push(t);
                    } else if len == 0 && flags == Flags::ACK.bits() && t >= start {
                        pure.push((t, up, last_arrival[usize::from(!up)]));
                    } else if len == 0 && flags == Flags::ACK.bits() && !up {
                        s.setup_server_pure_acks += 1;
                    }
                }
                Kind::Arrived {
                    up,
                    ack,
                    len,
                    flags,
                    wire,
                    seq,
                } => {
                    last_arrival[usize::from(up)] = t;
                    // An ACK arriving at the server acknowledges the server's
                    // data (direction "down"), and vice versa.
                    out[usize::from(!up)].retain(|&(_, end)| end > ack);
                    let syn_fin = flags & (Flags::SYN.bits() | Flags::FIN.bits()) != 0;
                    let first = if len > 0 && !syn_fin {
                        let c = segs.entry((up, seq, len)).or_default();
                        c.arrived.push(t);
                        c.arrived.len() == 1
                    } else {
                        false
                    };
                    if !up && t < start {
                        s.setup_down += f64::from(wire) / DOWN_BPS;
                    }
                    if !up && t >= start {
                        let secs = f64::from(wire) / DOWN_BPS;
                        // Response frames are the only data > 2 bytes (the
                        // CSM) the server sends.
                        if len > 2 && !syn_fin && first {
                            s.down_useful += secs;
                        } else if len > 2 && !syn_fin {
                            s.down_dup += secs;
                        } else {
                            s.down_other += secs;
                        }
                    }
                }
                Kind::Note(TcpNote::Response) => responses_read.push(t),
                Kind::Note(_) => {}
            }
        }
        // The server's set-up samples.
        let synacks: Vec<Nanos> = evs
            .iter()
            .filter(|(_, k)| matches!(k, Kind::Sent { up: false, flags, .. } if flags & Flags::SYN.bits() != 0))
            .map(|e| e.0)
            .collect();
        let csm = segs.get(&(false, 1, 2));
        if let ([synack], Some(csm)) = (synacks.as_slice(), csm) {
            let acked = |after: Nanos, upto: u32| {
                evs.iter()
                    .find(|(t, k)| {
                        *t > after
                            && matches!(k, Kind::Arrived { up: true, ack, .. } if *ack >= upto)
                    })
                    .map(|e| e.0)
            };
            if let Some(a) = acked(*synack, 1) {
                s.synack_rtt.push((a - synack) as f64 / SEC);
            }
            if let ([c], Some(a)) = (csm.sent.as_slice(), acked(csm.sent[0], 3)) {
                s.server_csm_rtt.push((a - c) as f64 / SEC);
            }
        }
        let end = *responses_read.last().expect("a finished client");
        last_response = last_response.max(end);
        for &(t, up, caused_by) in &pure {
            if t <= end {
                if up {
                    s.client_pure_acks += 1;
                } else {
                    s.server_pure_acks += 1;
                }
                if t != caused_by {
                    s.delayed_acks += 1;
                }
            }
        }
        let by_first = |up: bool| {
            let mut v: Vec<&Copies> = segs
                .iter()
                .filter(|((u, _, len), c)| *u == up && *len > 2 && c.sent[0] >= start)
                .map(|(_, c)| c)
                .collect();
            v.sort_by_key(|c| c.sent[0]);
            v
        };
        let reqs = by_first(true);
        let resps = by_first(false);
        assert_eq!(reqs.len(), responses_read.len());
        assert_eq!(resps.len(), responses_read.len());
        let h = start + (horizon * SEC) as Nanos;
        let by_h = responses_read.iter().filter(|&&t| t <= h).count() as u32;
        s.delivered_by_horizon += u64::from(by_h);
        s.done_by_horizon += u64::from(by_h as usize == responses_read.len());
        s.progress.push(by_h);
        s.fct.push((end - reqs[0].sent[0]) as f64 / SEC);
        s.first_exchange
            .push((responses_read[0] - reqs[0].sent[0]) as f64 / SEC);
        for i in 0..reqs.len() {
            let (rq, rs, read) = (reqs[i], resps[i], responses_read[i]);
            s.exchanges += 1;
            // The copy that arrived first was sent at the latest send not
            // after that arrival (copies of one segment keep their order).
            let winner = |c: &Copies| {
                let a = *c.arrived.iter().min().expect("delivered");
                let w = *c.sent.iter().filter(|&&x| x <= a).max().unwrap();
                (w, a)
            };
            let (rq_w, rq_a) = winner(rq);
            let (rs_w, rs_a) = winner(rs);
            s.req_wait += (rq_w - rq.sent[0]) as f64 / SEC;
            s.req_transit += (rq_a - rq_w) as f64 / SEC;
            s.resp_wait += (rs_w - rq_a) as f64 / SEC;
            s.resp_transit += (rs_a - rs_w) as f64 / SEC;
            if let Some(next) = reqs.get(i + 1) {
                s.gap += (next.sent[0] - read) as f64 / SEC;
            }
            s.req_copies += rq.sent.len() as u64;
            s.req_dropped += (rq.sent.len() - rq.arrived.len()) as u64;
            s.req_twice += (rq.arrived.len() - 1) as u64;
            s.resp_copies += rs.sent.len() as u64;
            s.resp_dropped += (rs.sent.len() - rs.arrived.len()) as u64;
            s.resp_twice += (rs.arrived.len() - 1) as u64;
            s.resp_twice_60 += rs
                .arrived
                .iter()
                .filter(|&&x| x > rs_a && x < start + 60 * SEC as Nanos)
                .count() as u64;
            if rs.sent.len() > 1 {
                s.server_gaps.push((rs.sent[1] - rs.sent[0]) as f64 / SEC);
            }
            if rq.sent.len() > 1 {
                s.client_gaps.push((rq.sent[1] - rq.sent[0]) as f64 / SEC);
            }
        }
    }
    s.span += (last_response - start) as f64 / SEC;
}

fn run(alg: &str, clients: u32, buffer: Buffer, reps: u32, horizon: f64) -> Sums {
    let mut s = Sums::default();
    let spec = spec(alg, clients, buffer);
    for rep in 0..reps {
        let mut c = Collect::default();
        dumbbell::Sim::run_with_tap(&spec, rep, &mut c).unwrap();
        analyse(&c.0, clients, horizon, &mut s);
    }
    s
}

/// Default CoAP (or another UDP algorithm) in the same network: request
/// retransmissions and response copies per client, the median first
/// retransmission timeout and the median FCT.
fn udp_line(alg: &str, clients: u32, buffer: Buffer, reps: u32) -> String {
    let spec = spec(alg, clients, buffer);
    let (mut rexmits, mut extra_responses, mut gaps, mut fct) =
        (0u64, 0u64, Vec::new(), Vec::new());
    for rep in 0..reps {
        let mut c = Collect::default();
        let r = dumbbell::Sim::run_with_tap(&spec, rep, &mut c).unwrap();
        fct.extend(r.clients.iter().map(|c| c.fct.unwrap()));
        let mut per: HashMap<(u32, u16), (Vec<Nanos>, u32)> = HashMap::new();
        for &(t, client, to_server, mid) in &c.1 {
            let e = per.entry((client, mid)).or_default();
            if to_server {
                e.0.push(t);
            } else {
                e.1 += 1;
            }
        }
        for (sent, responses) in per.values() {
            rexmits += sent.len() as u64 - 1;
            extra_responses += u64::from(responses.saturating_sub(1));
            if sent.len() > 1 {
                gaps.push((sent[1] - sent[0]) as f64 / SEC);
            }
        }
    }
    let n = f64::from(clients * reps);
    format!(
        "{alg}, {buffer:?}: median FCT {:.1} s; per client {:.1} request retransmissions, {:.1} response copies after the first; first retransmission after {:.2} s (median)",
        median(&mut fct),
        rexmits as f64 / n,
        extra_responses as f64 / n,
        median(&mut gaps)
    )
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn env(name: &str, default: u32) -> u32 {
    std::env::var(name).map_or(default, |v| v.parse().unwrap())
}

#[test]
#[ignore = "prints the 100-client TCP rows' decomposition (docs/calibration.md); see the module doc"]
fn decomposition() {
    let reps = env("DECOMPOSE_REPS", 20);
    let clients = env("DECOMPOSE_CLIENTS", 100);
    // The published medians of the two rows (spec docs/spec/calibration-spec.md §1).
    let rows = [
        (Buffer::Bytes(2500), "2500", 86.7),
        (Buffer::Infinite, "inf", 146.308),
    ];
    let names = std::env::var("DECOMPOSE_ALGS")
        .unwrap_or_else(|_| "tcp,tcp-linux49-debian9,tcp-linux6,tcp-linux6-nosack".into());
    let algs: Vec<&str> = names.split(',').collect();
    let mut all = Vec::new();
    for (b, name, h) in rows {
        for &a in &algs {
            all.push((format!("{a}, {name}"), h, run(a, clients, b, reps, h)));
        }
    }
    let header: Vec<&str> = all.iter().map(|x| x.0.as_str()).collect();
    println!(
        "| per client, mean of {reps} runs | {} |",
        header.join(" | ")
    );
    println!("| --- |{}", " --- |".repeat(all.len()));
    let row = |label: &str, f: &dyn Fn(&mut Sums) -> String, all: &mut Vec<(String, f64, Sums)>| {
        let cells: Vec<String> = all.iter_mut().map(|x| f(&mut x.2)).collect();
        println!("| {label} | {} |", cells.join(" | "));
    };
    let per_c = |x: f64, s: &Sums| x / f64::from(s.clients);
    let per_e = |x: f64, s: &Sums| x / s.exchanges as f64;
    row(
        "median FCT (s)",
        &|s| format!("{:.1}", median(&mut s.fct)),
        &mut all,
    );
    row(
        "mean exchange (s)",
        &|s| {
            let t = s.req_wait + s.req_transit + s.resp_wait + s.resp_transit + s.gap;
            format!("{:.3}", per_e(t, s))
        },
        &mut all,
    );
    row(
        "· request: client's recovery wait",
        &|s| format!("{:.3}", per_e(s.req_wait, s)),
        &mut all,
    );
    row(
        "· request: trip (queue + 215 ms)",
        &|s| format!("{:.3}", per_e(s.req_transit, s)),
        &mut all,
    );
    row(
        "· response: server's recovery wait",
        &|s| format!("{:.3}", per_e(s.resp_wait, s)),
        &mut all,
    );
    row(
        "· response: trip (queue + 415 ms)",
        &|s| format!("{:.3}", per_e(s.resp_transit, s)),
        &mut all,
    );
    row(
        "· response read → next request",
        &|s| format!("{:.3}", per_e(s.gap, s)),
        &mut all,
    );
    row(
        "request copies / never delivered",
        &|s| {
            format!(
                "{:.1} / {:.1}",
                per_c(s.req_copies as f64, s),
                per_c(s.req_dropped as f64, s)
            )
        },
        &mut all,
    );
    row(
        "request copies the server got twice",
        &|s| format!("{:.1}", per_c(s.req_twice as f64, s)),
        &mut all,
    );
    row(
        "response copies / never delivered",
        &|s| {
            format!(
                "{:.1} / {:.1}",
                per_c(s.resp_copies as f64, s),
                per_c(s.resp_dropped as f64, s)
            )
        },
        &mut all,
    );
    row(
        "response copies the client got twice (in the first 60 s)",
        &|s| {
            format!(
                "{:.1} ({:.1})",
                per_c(s.resp_twice as f64, s),
                per_c(s.resp_twice_60 as f64, s)
            )
        },
        &mut all,
    );
    row(
        "server's first retransmission after (median s)",
        &|s| {
            if s.server_gaps.is_empty() {
                "—".into()
            } else {
                format!("{:.2}", median(&mut s.server_gaps))
            }
        },
        &mut all,
    );
    row(
        "client's first retransmission after (median s)",
        &|s| {
            if s.client_gaps.is_empty() {
                "—".into()
            } else {
                format!("{:.2}", median(&mut s.client_gaps))
            }
        },
        &mut all,
    );
    row(
        "pure ACKs: server / client (delayed)",
        &|s| {
            format!(
                "{:.1} / {:.1} ({})",
                per_c(s.server_pure_acks as f64, s),
                per_c(s.client_pure_acks as f64, s),
                s.delayed_acks
            )
        },
        &mut all,
    );
    row(
        "server's set-up RTT samples: SYN-ACK / CSM (median s)",
        &|s| {
            format!(
                "{:.2} / {:.2}",
                median(&mut s.synack_rtt),
                median(&mut s.server_csm_rtt)
            )
        },
        &mut all,
    );
    row(
        "set-up before the start: length (s) / downlink busy (s) / server's pure ACKs per client",
        &|s| {
            let runs = f64::from(s.runs);
            format!(
                "{:.2} / {:.2} / {:.2}",
                s.setup_span / runs,
                s.setup_down / runs,
                per_c(s.setup_server_pure_acks as f64, s)
            )
        },
        &mut all,
    );
    row(
        "first exchange (median / max s)",
        &|s| {
            let m = median(&mut s.first_exchange);
            format!("{m:.2} / {:.2}", s.first_exchange.last().unwrap())
        },
        &mut all,
    );
    row(
        "per run: start → last response (s)",
        &|s| format!("{:.1}", s.span / f64::from(s.runs)),
        &mut all,
    );
    row(
        "per run: downlink s of first response copies / later copies / ACKs and other",
        &|s| {
            let r = f64::from(s.runs);
            format!(
                "{:.1} / {:.1} / {:.1}",
                s.down_useful / r,
                s.down_dup / r,
                s.down_other / r
            )
        },
        &mut all,
    );
    for b in [Buffer::Bytes(2500), Buffer::Infinite] {
        println!("{}", udp_line("default", clients, b, reps));
    }
    for (label, h, s) in all.iter_mut() {
        s.progress.sort_unstable();
        let n = s.progress.len();
        println!(
            "{label}: by the published median ({h} s) {:.0} responses delivered per run ({:.0} % of the downlink's time), {:.1} clients done per run; responses per client p10 {} / median {} / p90 {}",
            s.delivered_by_horizon as f64 / f64::from(s.runs),
            100.0 * s.delivered_by_horizon as f64 / f64::from(s.runs) * 104.0 / DOWN_BPS / *h,
            s.done_by_horizon as f64 / f64::from(s.runs),
            s.progress[n / 10],
            s.progress[n / 2],
            s.progress[9 * n / 10],
        );
    }
}

/// Once timing starts, a continuous client's connection has at most one data
/// segment unacknowledged in each direction (one request, one response), no
/// ACK is delayed, and the next request leaves when the response is read:
/// with a 2500-byte buffer (losses, retransmissions, probes) and with an
/// infinite one (spurious probes), for Linux 4.9 with and without SACK and
/// for NewReno.
#[test]
fn one_segment_in_flight_no_delayed_ack_once_timed() {
    for alg in ["tcp", "tcp-linux49-debian9", "tcp-newreno"] {
        for buffer in [Buffer::Bytes(2500), Buffer::Infinite] {
            let s = run(alg, 100, buffer, 1, 86.7);
            assert_eq!(s.exchanges, 5000, "{alg} {buffer:?}");
            assert_eq!(s.max_outstanding, 1, "{alg} {buffer:?}");
            assert_eq!(s.delayed_acks, 0, "{alg} {buffer:?}");
            assert_eq!(s.gap, 0.0, "{alg} {buffer:?}");
            // The run is loaded: retransmissions happen, so the checks above
            // were exercised.
            assert!(
                s.req_copies > 5000 && s.resp_copies > 5000,
                "{alg} {buffer:?}"
            );
        }
    }
}
