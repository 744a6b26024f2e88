//! `coapcc calibrate --sensitivity` and `--lossy-star`: every reading of
//! every switch makes a scenario that parses, the switches touch the rows
//! they say, and the readings move what they should.

use coapcc::calibrate::lossy_star;
use coapcc::calibrate::sensitivity::{self, Published};

fn pool() -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap()
}

/// Every switch has its default and at least one other reading, every row
/// under every reading is a scenario the registry accepts (so a reading's
/// parameter or profile name that the model refuses fails here), and the
/// TCP switches of the `tcp` profile touch exactly the ten published `tcp`
/// rows.
#[test]
fn every_reading_of_every_row_is_a_valid_scenario() {
    let switches = sensitivity::switches(1, lossy_star::FITTED_BER);
    assert!(switches.len() >= 14, "{}", switches.len());
    for s in &switches {
        assert!(s.readings.len() >= 2, "{}", s.name);
        assert!(!s.rows.is_empty(), "{}", s.name);
        for row in &s.rows {
            for reading in &s.readings {
                sensitivity::scenario_of(row, reading, Some(1)).unwrap_or_else(|e| {
                    panic!("{} / {} / {}: {e:#}", s.name, row.label, reading.label)
                });
            }
        }
    }
    let nodelay = switches.iter().find(|s| s.name == "TCP: nodelay").unwrap();
    assert_eq!(nodelay.rows.len(), 10);
    assert!(nodelay
        .rows
        .iter()
        .all(|r| r.label.starts_with("tcp, ") && matches!(r.published, Some(Published::Value(_)))));
    assert_eq!(nodelay.readings[0].label, "tcp");
}

/// Nagle's effect where the model says it acts: one random client opens a
/// connection per batch and writes its CSM and the batch's first request
/// back to back, so with Nagle on the request waits for the CSM's ACK (the
/// server's delayed ACK, 200 ms, plus a round trip) once per batch; with
/// `nodelay` it leaves at once. Over 50 exchanges in batches of 1–10 (about
/// 9 batches) the median FCT must therefore be shorter with `nodelay`, by
/// at least one delayed ACK per batch (9 × 0.2 s = 1.8 s).
#[test]
fn nodelay_shortens_random_tcp_by_the_held_requests() {
    let switches = sensitivity::switches(1, lossy_star::FITTED_BER);
    let s = switches.iter().find(|s| s.name == "TCP: nodelay").unwrap();
    let row = s
        .rows
        .iter()
        .find(|r| r.label == "tcp, 1 client, buffer 2500, random")
        .unwrap();
    let pool = pool();
    let on = sensitivity::measure(row, &s.readings[0], Some(2), &pool, &|| {}).unwrap();
    let off = sensitivity::measure(row, &s.readings[1], Some(2), &pool, &|| {}).unwrap();
    assert!(
        on.value - off.value > 1.8,
        "Nagle on {} s, off {} s",
        on.value,
        off.value
    );
}

/// The lossy star: the lossless channel retransmits nothing (12 stations use
/// a fifth of the air), the fitted bit-error rate makes original lwIP
/// retransmit, and half that rate far less. The 612-byte frame of a
/// 536-byte segment (4896 bits) is spoiled with 1 − (1 − b)^4896: 0.709 at
/// b = 2.52·10⁻⁴, 0.460 at half of it; a segment is lost only after 8
/// spoiled attempts, 0.709⁸ = 0.064 against 0.460⁸ = 0.0020, so halving the
/// rate cuts the losses about thirtyfold — well over half.
#[test]
fn the_lossy_star_loses_with_the_rate() {
    let pool = pool();
    let retx = |ber: f64| {
        let s = lossy_star::scenario(ber, &["tcp-lwip"], 1, 2023).unwrap();
        lossy_star::flavours(&s, &pool, &|| {}).unwrap()[0].retransmissions
    };
    assert_eq!(retx(0.0), 0.0);
    let full = retx(lossy_star::FITTED_BER);
    let half = retx(lossy_star::FITTED_BER / 2.0);
    assert!(full > 50.0, "{full}");
    assert!(half < full / 2.0, "half the rate: {half}, fitted: {full}");
}
