//! A compact, lossless binary encoding of star stations' sampled TCP state
//! ([`TcpSample`] series), stored as one BLOB per run in `star_traces`.
//!
//! Stored as JSON, the traces of the whole lwIP campaign
//! (`scenarios/campaigns/lwip.toml`: 11.0 million samples) would take about
//! 60 bytes per sample, some 650 MB; this encoding takes 1.45 bytes per
//! sample (16 MB) and decodes to exactly the same values (every bit of every
//! float), so [`star::Summary`](coapcc_sim::star::Summary) computed from a
//! stored run equals the one computed from the run itself.
//!
//! **Format** (version 1): the version byte, the number of stations (LEB128),
//! then per station its sample count (LEB128) and five columns — `t`, `cwnd`,
//! `ssthresh`, `srtt`, `rto`, in that order — each as one mode byte, a scale
//! if the mode says so, and the values:
//!
//! - bit 4 of the mode says how a value becomes an integer: clear, the
//!   integer itself (`cwnd`, `ssthresh`) or, for a time in seconds, its whole
//!   nanoseconds (used only if every value of the column is exactly
//!   `nanoseconds / 1e9`, which holds for every time the simulator produces);
//!   set, the float's bits;
//! - bit 5 (`rto` only): the column holds `rto − srtt` (full TCP's RTO is the
//!   smoothed RTT plus a floor most of the time);
//! - bit 6: every difference below is a multiple of a scale, written next
//!   (LEB128), and is stored divided by it (lwIP keeps times in 500 ms ticks
//!   and srtt in eighths of one; full TCP's cwnd moves in whole segments);
//! - bits 0–1 are the order of differencing (1: each value minus the
//!   previous one, the first minus 0; 2: each difference minus the previous
//!   difference, so a constant sampling step costs nothing), in wrapping
//!   64-bit arithmetic;
//! - each difference is zigzag-mapped and written as LEB128; a zero is
//!   followed by the number of further zeros (LEB128), so a value that does
//!   not change for a while costs two bytes.
//!
//! The encoder tries every order, scale and (for `rto`) reference and keeps
//! the shortest column.

use anyhow::{bail, Result};
use coapcc_sim::star::TcpSample;

const VERSION: u8 = 1;
const BITS: u8 = 0x10;
const MINUS_SRTT: u8 = 0x20;
const SCALED: u8 = 0x40;

/// The integer form of each value of a column, and whether it is the
/// float's bits.
fn float_column(values: impl Iterator<Item = f64> + Clone) -> (bool, Vec<u64>) {
    let exact = values.clone().all(|v| {
        let n = (v * 1e9).round();
        (0.0..9.0e15).contains(&n) && ((n as u64) as f64 / 1e9).to_bits() == v.to_bits()
    });
    if exact {
        (false, values.map(|v| (v * 1e9).round() as u64).collect())
    } else {
        (true, values.map(f64::to_bits).collect())
    }
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn get_varint(bytes: &[u8], at: &mut usize) -> Result<u64> {
    let mut v = 0u64;
    let mut shift = 0;
    loop {
        let Some(&b) = bytes.get(*at) else {
            bail!("trace: truncated");
        };
        *at += 1;
        if shift > 63 {
            bail!("trace: overlong number");
        }
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Ok(v);
        }
        shift += 7;
    }
}

fn zigzag(d: i64) -> u64 {
    ((d << 1) ^ (d >> 63)) as u64
}

fn unzigzag(z: u64) -> i64 {
    ((z >> 1) as i64) ^ -((z & 1) as i64)
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The first-order differences of `values` (the first value minus 0),
/// wrapping.
fn first_differences(values: &[u64]) -> Vec<i64> {
    let mut prev = 0u64;
    values
        .iter()
        .map(|&v| {
            let d = v.wrapping_sub(prev) as i64;
            prev = v;
            d
        })
        .collect()
}

fn encode_stream(out: &mut Vec<u8>, diffs: impl Iterator<Item = i64>) {
    let mut zeros = 0u64;
    for d in diffs {
        if d == 0 {
            zeros += 1;
            continue;
        }
        if zeros > 0 {
            put_varint(out, 0);
            put_varint(out, zeros - 1);
            zeros = 0;
        }
        put_varint(out, zigzag(d));
    }
    if zeros > 0 {
        put_varint(out, 0);
        put_varint(out, zeros - 1);
    }
}

/// The shortest encoding of one column of integers, trying both orders and
/// the scale of its differences; `flags` (bits 4 and 5) go into the mode.
fn encode_column(values: &[u64], flags: u8) -> Vec<u8> {
    let d1 = first_differences(values);
    let g = d1.iter().fold(0u64, |g, d| gcd(g, d.unsigned_abs()));
    let mut best: Option<Vec<u8>> = None;
    for scale in [1, g] {
        if scale == 0 || scale > i64::MAX as u64 || (scale == g && g <= 1 && best.is_some()) {
            continue;
        }
        let scaled: Vec<i64> = d1.iter().map(|&d| d / scale as i64).collect();
        for order in [1u8, 2] {
            let mut s = vec![flags | order | if scale > 1 { SCALED } else { 0 }];
            if scale > 1 {
                put_varint(&mut s, scale);
            }
            if order == 1 {
                encode_stream(&mut s, scaled.iter().copied());
            } else {
                let mut prev = 0i64;
                encode_stream(
                    &mut s,
                    scaled.iter().map(|&d| {
                        let dd = d.wrapping_sub(prev);
                        prev = d;
                        dd
                    }),
                );
            }
            if best.as_ref().is_none_or(|b| s.len() < b.len()) {
                best = Some(s);
            }
        }
    }
    best.expect("at least one candidate")
}

/// Decodes one column: its mode byte and its integers.
fn decode_column(bytes: &[u8], at: &mut usize, n: usize) -> Result<(u8, Vec<u64>)> {
    let Some(&mode) = bytes.get(*at) else {
        bail!("trace: truncated");
    };
    *at += 1;
    let order = mode & 0x0f;
    if mode & 0x80 != 0 || !(1..=2).contains(&order) {
        bail!("trace: unknown column mode {mode:#04x}");
    }
    let scale = if mode & SCALED != 0 {
        let g = get_varint(bytes, at)?;
        if g < 2 || g > i64::MAX as u64 {
            bail!("trace: bad scale {g}");
        }
        g as i64
    } else {
        1
    };
    let mut values = Vec::with_capacity(n);
    let (mut prev, mut prev_diff) = (0u64, 0i64);
    let mut zeros = 0u64;
    while values.len() < n {
        let dd = if zeros > 0 {
            zeros -= 1;
            0
        } else {
            let z = get_varint(bytes, at)?;
            if z == 0 {
                zeros = get_varint(bytes, at)?;
            }
            unzigzag(z)
        };
        let d = if order == 2 {
            dd.wrapping_add(prev_diff)
        } else {
            dd
        };
        prev_diff = d;
        prev = prev.wrapping_add(d.wrapping_mul(scale) as u64);
        values.push(prev);
    }
    if zeros > 0 {
        bail!("trace: a run of unchanged values goes past the last sample");
    }
    Ok((mode, values))
}

fn float_of(bits: bool, v: u64) -> f64 {
    if bits {
        f64::from_bits(v)
    } else {
        v as f64 / 1e9
    }
}

fn encode_station(out: &mut Vec<u8>, samples: &[TcpSample]) {
    put_varint(out, samples.len() as u64);
    let floats = |f: fn(&TcpSample) -> f64| float_column(samples.iter().map(f));
    let bits = |b: bool| if b { BITS } else { 0 };
    let (tb, t) = floats(|s| s.t);
    out.extend(encode_column(&t, bits(tb)));
    let cwnd: Vec<u64> = samples.iter().map(|s| s.cwnd).collect();
    out.extend(encode_column(&cwnd, 0));
    let ssthresh: Vec<u64> = samples.iter().map(|s| s.ssthresh).collect();
    out.extend(encode_column(&ssthresh, 0));
    let (qb, srtt) = floats(|s| s.srtt);
    out.extend(encode_column(&srtt, bits(qb)));
    let (rb, rto) = floats(|s| s.rto);
    let own = encode_column(&rto, bits(rb));
    let relative = (rb == qb).then(|| {
        let minus: Vec<u64> = rto
            .iter()
            .zip(&srtt)
            .map(|(r, q)| r.wrapping_sub(*q))
            .collect();
        encode_column(&minus, bits(rb) | MINUS_SRTT)
    });
    match relative {
        Some(r) if r.len() < own.len() => out.extend(r),
        _ => out.extend(own),
    }
}

fn decode_station(bytes: &[u8], at: &mut usize) -> Result<Vec<TcpSample>> {
    let n = get_varint(bytes, at)?;
    // Every sample takes at least a bit of the rest: a larger count is damage.
    if n > (bytes.len() as u64).saturating_mul(8 * 1024) {
        bail!("trace: implausible sample count {n}");
    }
    let n = n as usize;
    let (tm, t) = decode_column(bytes, at, n)?;
    let (cm, cwnd) = decode_column(bytes, at, n)?;
    let (sm, ssthresh) = decode_column(bytes, at, n)?;
    let (qm, srtt) = decode_column(bytes, at, n)?;
    let (rm, mut rto) = decode_column(bytes, at, n)?;
    if (tm | cm | sm | qm) & MINUS_SRTT != 0 || (cm | sm) & BITS != 0 {
        bail!("trace: a column in a mode it cannot have");
    }
    if rm & MINUS_SRTT != 0 {
        if rm & BITS != qm & BITS {
            bail!("trace: rto relative to an srtt of another form");
        }
        for (r, q) in rto.iter_mut().zip(&srtt) {
            *r = r.wrapping_add(*q);
        }
    }
    let bits = |m: u8| m & BITS != 0;
    Ok((0..n)
        .map(|i| TcpSample {
            t: float_of(bits(tm), t[i]),
            cwnd: cwnd[i],
            ssthresh: ssthresh[i],
            rto: float_of(bits(rm), rto[i]),
            srtt: float_of(bits(qm), srtt[i]),
        })
        .collect())
}

/// Encodes the samples of every station of a run, in station order.
pub fn encode<'a>(stations: impl ExactSizeIterator<Item = &'a [TcpSample]>) -> Vec<u8> {
    let mut out = vec![VERSION];
    put_varint(&mut out, stations.len() as u64);
    for s in stations {
        encode_station(&mut out, s);
    }
    out
}

/// Decodes what [`encode`] wrote: one series per station.
pub fn decode(bytes: &[u8]) -> Result<Vec<Vec<TcpSample>>> {
    match bytes.first() {
        Some(&VERSION) => {}
        Some(v) => bail!("trace: unknown encoding version {v}"),
        None => bail!("trace: empty"),
    }
    let mut at = 1;
    let n = get_varint(bytes, &mut at)?;
    if n > bytes.len() as u64 {
        bail!("trace: implausible station count {n}");
    }
    let out = (0..n)
        .map(|_| decode_station(bytes, &mut at))
        .collect::<Result<Vec<_>>>()?;
    if at != bytes.len() {
        bail!("trace: {} bytes after the last station", bytes.len() - at);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(i: u64) -> TcpSample {
        TcpSample {
            t: (1_500_000_000 + 500_000_000 * i) as f64 / 1e9,
            cwnd: 1072 + 536 * (i / 3),
            ssthresh: if i < 40 { 65_535 } else { 5360 },
            rto: if i < 10 { 3.0 } else { 1.5 },
            srtt: (123_456_789 + 7 * i * i) as f64 / 1e9,
        }
    }

    fn same(a: &[TcpSample], b: &[TcpSample]) {
        assert_eq!(a.len(), b.len());
        for (a, b) in a.iter().zip(b) {
            assert_eq!(a.t.to_bits(), b.t.to_bits());
            assert_eq!(a.rto.to_bits(), b.rto.to_bits());
            assert_eq!(a.srtt.to_bits(), b.srtt.to_bits());
            assert_eq!((a.cwnd, a.ssthresh), (b.cwnd, b.ssthresh));
        }
    }

    fn round_trip(stations: &[Vec<TcpSample>]) -> usize {
        let e = encode(stations.iter().map(Vec::as_slice));
        let d = decode(&e).unwrap();
        assert_eq!(d.len(), stations.len());
        for (a, b) in stations.iter().zip(&d) {
            same(a, b);
        }
        e.len()
    }

    #[test]
    fn round_trips_bit_for_bit_at_the_sizes_worked_out_by_hand() {
        let one: Vec<TcpSample> = (0..800).map(sample).collect();
        let ns = |f: fn(&TcpSample) -> f64| {
            let (bits, v) = float_column(one.iter().map(f));
            assert!(!bits, "every value is whole nanoseconds");
            encode_column(&v, 0).len()
        };
        let int = |f: fn(&TcpSample) -> u64| {
            encode_column(&one.iter().map(f).collect::<Vec<_>>(), 0).len()
        };
        // t in ns: differences 1.5e9, then 5e8 each: scale 5e8 (5 bytes),
        // order 2: 3, -2, then 798 zeros as one run (0, 797: 3 bytes); with
        // the mode byte 1 + 5 + 1 + 1 + 3.
        assert_eq!(ns(|s| s.t), 11);
        // cwnd: differences 1072, then (0, 0, 536) repeated: scale 536 (2
        // bytes), order 1: 2, then 266 × (a run of two zeros, 2 bytes; 1, 1
        // byte), then one zero (2 bytes): 1 + 2 + 1 + 266 × 3 + 2.
        assert_eq!(int(|s| s.cwnd), 804);
        // ssthresh: 65535, 39 zeros, −60175, 760 zeros; order 1, unscaled
        // (scaling by their gcd 5 would cost a byte and save none):
        // 1 + 3 + 2 + 3 + 3.
        assert_eq!(int(|s| s.ssthresh), 12);
        // srtt: 123 456 789 + 7 i² ns: the second difference is 14 from the
        // third sample on, one byte each (only zeros are run-length coded):
        // 1 + 4 + 4 + 798.
        assert_eq!(ns(|s| s.srtt), 807);
        // rto: 3 s then 1.5 s from sample 10: scale 1.5e9 (5 bytes), order 1:
        // 2, a run of 9 zeros, −1, a run of 789 zeros: 1 + 5 + 1 + 2 + 1 + 3.
        assert_eq!(ns(|s| s.rto), 13);
        // The whole: version, one station, 800 samples (2 bytes), the columns.
        let n = round_trip(std::slice::from_ref(&one));
        assert_eq!(n, 1 + 1 + 2 + 11 + 804 + 12 + 807 + 13);
        // Full TCP's RTO: srtt plus a 200 ms floor, stored as the difference:
        // 2e8 then zeros: mode, scale 2e8 (4 bytes), 1, a run of 799 zeros.
        let linux: Vec<TcpSample> = one
            .iter()
            .map(|s| TcpSample {
                rto: ((s.srtt * 1e9).round() as u64 + 200_000_000) as f64 / 1e9,
                ..*s
            })
            .collect();
        let with_rto = round_trip(std::slice::from_ref(&linux));
        assert_eq!(with_rto, n - 13 + (1 + 4 + 1 + 3));
        round_trip(&[one.clone(), Vec::new(), linux, one]);
        round_trip(&[]);
    }

    #[test]
    fn odd_values_fall_back_to_bits() {
        let s = vec![
            TcpSample {
                t: 0.1 + 0.2,
                cwnd: u64::MAX,
                ssthresh: 0,
                rto: -1.0,
                srtt: f64::NAN,
            },
            TcpSample {
                t: 1e300,
                cwnd: 0,
                ssthresh: u64::MAX,
                rto: f64::INFINITY,
                srtt: 0.0,
            },
            TcpSample {
                t: -0.0,
                cwnd: 1 << 63,
                ssthresh: 7,
                rto: 2.5,
                srtt: 0.125,
            },
        ];
        round_trip(&[s.clone(), s[..1].to_vec()]);
        // Columns of extreme differences keep them exactly.
        let wild: Vec<TcpSample> = [0u64, 1 << 63, 0, u64::MAX, 1 << 63, 3]
            .iter()
            .map(|&c| TcpSample {
                t: 1.0,
                cwnd: c,
                ssthresh: c.wrapping_mul(3),
                rto: 1.0,
                srtt: 0.0,
            })
            .collect();
        round_trip(&[wild]);
    }

    #[test]
    fn damaged_blobs_are_refused() {
        let s: Vec<TcpSample> = (0..50).map(sample).collect();
        let e = encode([s.as_slice()].into_iter());
        assert!(decode(&e[..e.len() - 1]).is_err());
        let mut longer = e.clone();
        longer.push(0);
        assert!(decode(&longer).is_err());
        let mut v2 = e;
        v2[0] = 2;
        assert!(decode(&v2).is_err());
        assert!(decode(&[]).is_err());
    }
}
