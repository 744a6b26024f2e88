//! `coapcc bench --matrix`: the dumbbell at 100, 400 and 1000 continuous
//! clients behind a 2500-byte and an infinite buffer, each point timed and
//! run through the ns-3 reference in the same command, printed as one
//! Markdown table (the one `docs/performance.md` shows), with the bare
//! binary-heap loop ([`crate::bench::heap`]) at as many pending events as the
//! point has clients beside each point.

use anyhow::Result;
use coapcc_link::dumbbell::Buffer;

use super::{dumbbell_spec, ns3_dumbbell, time_dumbbell};
use crate::bench::heap::{self, HeapPoint};
use crate::bench::Ns3;

/// The client counts of the matrix.
pub const CLIENTS: [u32; 3] = [100, 400, 1000];

/// The buffers of the matrix: the thesis's bounded buffer and none.
pub const BUFFERS: [Buffer; 2] = [Buffer::Bytes(2500), Buffer::Infinite];

/// One point of the matrix.
#[derive(Debug)]
pub struct Point {
    /// Continuous clients.
    pub clients: u32,
    /// Router buffer.
    pub buffer: Buffer,
    /// Events coapcc processed.
    pub events: u64,
    /// Median wall time of coapcc's event loop (s).
    pub wall: f64,
    /// What the ns-3 reference printed, if it ran.
    pub ns3: Option<Ns3>,
    /// The bare heap loop with one pending event per client.
    pub heap: HeapPoint,
}

/// Runs every point (`reference`: the ns-3 script, or `None`), reporting
/// each on standard error as it finishes, and returns them in table order.
pub fn run(
    algorithm: &str,
    repeat: usize,
    seed: u64,
    reference: Option<&str>,
) -> Result<Vec<Point>> {
    let mut points = Vec::new();
    for clients in CLIENTS {
        for buffer in BUFFERS {
            let spec = dumbbell_spec(clients, buffer, algorithm, seed);
            let (result, wall) = time_dumbbell(&spec, repeat)?;
            let heap = heap::measure(clients as usize, repeat);
            let ns3 = match reference {
                Some(script) => Some(ns3_dumbbell(script, clients, buffer, seed)?),
                None => None,
            };
            eprintln!(
                "bench: {clients} clients, buffer {}: {} events in {wall:.4} s{}",
                buffer.label(),
                result.events,
                ns3.as_ref()
                    .map(|n| format!("; ns-3 {:.3} s", n.wall))
                    .unwrap_or_default()
            );
            points.push(Point {
                clients,
                buffer,
                events: result.events,
                wall,
                ns3,
                heap,
            });
        }
    }
    Ok(points)
}

/// The matrix as one Markdown table; ns-3's columns say `not run` when the
/// reference was skipped.
pub fn markdown(points: &[Point], algorithm: &str, repeat: usize) -> String {
    let mut out = format!(
        "| clients | buffer | coapcc events | coapcc loop wall (s, median of {}) | coapcc M events/s | coapcc ns/event | bare heap ns/event | ns-3 events | ns-3 wall (s) | ratio |\n\
         | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n",
        repeat.max(1)
    );
    for p in points {
        let buffer = match p.buffer {
            Buffer::Bytes(b) => format!("{b} B"),
            Buffer::Infinite => "inf".into(),
        };
        let (events, wall, ratio) = match &p.ns3 {
            Some(n) => (
                n.events.to_string(),
                format!("{:.3}", n.wall),
                format!("{:.1}×", n.wall / p.wall),
            ),
            None => ("not run".into(), "not run".into(), "—".into()),
        };
        out.push_str(&format!(
            "| {} | {buffer} | {} | {:.4} | {:.1} | {:.0} | {:.0} | {events} | {wall} | {ratio} |\n",
            p.clients,
            p.events,
            p.wall,
            p.events as f64 / p.wall / 1e6,
            p.wall * 1e9 / p.events as f64,
            p.heap.ns_per_event(),
        ));
    }
    out.push_str(&format!(
        "\ncoapcc: {algorithm}, continuous, 50 exchanges per client, no link errors; ns-3: Default CoAP, `inf` run as 1410000 B; bare heap: the loop of `coapcc bench --heap` with as many events pending as clients.\n"
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_has_one_row_per_point_and_the_ratio_of_walls() {
        let points = [
            Point {
                clients: 100,
                buffer: Buffer::Bytes(2500),
                events: 2_000_000,
                wall: 0.5,
                ns3: Some(Ns3 {
                    wall: 30.0,
                    events: 3_000_000,
                    ..Ns3::default()
                }),
                heap: HeapPoint {
                    pending: 100,
                    events: 2_000_000,
                    wall: 0.1,
                },
            },
            Point {
                clients: 400,
                buffer: Buffer::Infinite,
                events: 10,
                wall: 0.25,
                ns3: None,
                heap: HeapPoint {
                    pending: 400,
                    events: 2_000_000,
                    wall: 0.2,
                },
            },
        ];
        let t = markdown(&points, "default", 3);
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[0].contains("median of 3"));
        assert_eq!(
            lines[2],
            "| 100 | 2500 B | 2000000 | 0.5000 | 4.0 | 250 | 50 | 3000000 | 30.000 | 60.0× |"
        );
        assert_eq!(
            lines[3],
            "| 400 | inf | 10 | 0.2500 | 0.0 | 25000000 | 100 | not run | not run | — |"
        );
    }
}
