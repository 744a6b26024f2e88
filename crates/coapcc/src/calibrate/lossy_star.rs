//! `coapcc calibrate --lossy-star`: the lwIP paper's star with a lossy
//! channel. The paper's original lwIP retransmits 136 segments and reaches a
//! 24 s RTO, so its channel lost frames; the spec's star (`bit_error_rate`
//! 0) loses none. One parameter, the channel's bit-error rate, is fitted to
//! one published figure, original lwIP's 136 retransmissions of one client
//! (Mhamdi and Abdul Khalek 2023, §5.2, Figure 12); every other figure of
//! the paper is then an out-of-sample prediction (`docs/calibration.md`,
//! "The lossy star").

use std::sync::atomic::AtomicBool;

use anyhow::{anyhow, Context, Result};
use serde_json::Value;
use toml::{Table, Value as Toml};

use super::sensitivity::{file_table, STAR};
use crate::networks::AnyScenario;

/// The published figure the rate is fitted to: original lwIP's
/// retransmissions of one client over the 400 s (paper Figure 12).
pub const TARGET_RETRANSMISSIONS: f64 = 136.0;

/// The bit-error rate `coapcc calibrate --lossy-star --seed 2023` fitted
/// (the star scenario's seed, 10 replications; the best of ten bisection
/// steps, 2.5176·10⁻⁴ for 136.4 retransmissions, rounded to three digits).
pub const FITTED_BER: f64 = 2.52e-4;

/// The bracket the fit searches (bit-error rates): at the lower end no
/// frame reaches its retry limit (0 retransmissions), at the upper end the
/// stations no longer finish.
pub const BRACKET: (f64, f64) = (1e-4, 4e-4);

/// The star scenario at bit-error rate `ber` with `algorithms` (registry
/// names), `replications` and `seed`.
pub fn scenario(
    ber: f64,
    algorithms: &[&str],
    replications: u32,
    seed: u64,
) -> Result<AnyScenario> {
    let mut network = Table::new();
    network.insert("bit_error_rate".into(), Toml::Float(ber));
    let mut t = file_table(STAR, algorithms, network, seed);
    t.insert(
        "replications".into(),
        Toml::Integer(i64::from(replications)),
    );
    let text = toml::to_string(&t).context("the lossy star serialises")?;
    AnyScenario::parse(&text, &format!("lossy star at bit-error rate {ber}"))
}

/// One flavour's figures on the lossy star.
#[derive(Clone, Debug, PartialEq)]
pub struct Flavour {
    /// Its label.
    pub label: String,
    /// Retransmitted segments per station per run.
    pub retransmissions: f64,
    /// Retransmission timeouts per station per run.
    pub timeouts: f64,
    /// The largest RTO in force (s), mean over runs.
    pub max_rto: f64,
    /// Goodput at the access point (kbit/s).
    pub goodput_kbps: f64,
    /// Stations that had every byte acknowledged.
    pub complete: f64,
}

/// Runs `scenario` and reads every flavour.
pub fn flavours(
    scenario: &AnyScenario,
    pool: &rayon::ThreadPool,
    progress: &(dyn Fn() + Sync),
) -> Result<Vec<Flavour>> {
    let ran = scenario.run_on(pool, progress, &AtomicBool::new(false))?;
    let json: Value = serde_json::from_str(&ran.json()).context("a run's JSON parses")?;
    let algs = json
        .get("algorithms")
        .and_then(Value::as_array)
        .ok_or_else(|| anyhow!("the star's results have no algorithms"))?;
    let stations = 12.0;
    algs.iter()
        .map(|a| {
            let get = |p: &str| {
                a.pointer(p)
                    .and_then(Value::as_f64)
                    .ok_or_else(|| anyhow!("the star's results have no `{p}`"))
            };
            Ok(Flavour {
                label: a
                    .get("label")
                    .and_then(Value::as_str)
                    .unwrap_or("?")
                    .to_string(),
                retransmissions: get("/retransmissions/mean")? / stations,
                timeouts: get("/timeouts/mean")? / stations,
                max_rto: get("/max_rto/mean")?,
                goodput_kbps: get("/goodput_bps/mean")? / 1000.0,
                complete: get("/complete_stations/mean")?,
            })
        })
        .collect()
}

/// One step of the fit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Step {
    /// The bit-error rate tried.
    pub ber: f64,
    /// Original lwIP's retransmissions per station there.
    pub retransmissions: f64,
}

/// Bisects the bit-error rate (geometrically, within [`BRACKET`]) until
/// `measure` gives [`TARGET_RETRANSMISSIONS`], in `steps` steps; returns
/// every step tried. `measure` must grow with the rate.
pub fn bisect(steps: u32, mut measure: impl FnMut(f64) -> Result<f64>) -> Result<Vec<Step>> {
    let (mut lo, mut hi) = BRACKET;
    let mut out = Vec::new();
    for _ in 0..steps {
        let ber = (lo * hi).sqrt();
        let r = measure(ber)?;
        out.push(Step {
            ber,
            retransmissions: r,
        });
        if r < TARGET_RETRANSMISSIONS {
            lo = ber;
        } else {
            hi = ber;
        }
    }
    Ok(out)
}

/// The step closest to the target.
pub fn best(steps: &[Step]) -> Option<Step> {
    steps.iter().copied().min_by(|a, b| {
        let d = |s: &Step| (s.retransmissions - TARGET_RETRANSMISSIONS).abs();
        d(a).total_cmp(&d(b))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On a monotone stand-in (retransmissions = 10⁶·BER − 100, which is
    /// 136 at BER 2.36·10⁻⁴) the bisection closes in on the root: after 20
    /// halvings of the log-bracket the best step is within 10⁻⁴ relative.
    #[test]
    fn bisection_finds_the_target() {
        let steps = bisect(20, |b| Ok(1e6 * b - 100.0)).unwrap();
        assert_eq!(steps.len(), 20);
        let b = best(&steps).unwrap();
        assert!((b.ber / 2.36e-4 - 1.0).abs() < 1e-4, "{b:?}");
        // the first step is the bracket's geometric middle, 2·10⁻⁴
        assert!((steps[0].ber - 2e-4).abs() < 1e-12);
    }

    /// The scenario carries the rate and the algorithms, and parses as a
    /// star (the rate outside [0, 0.01] is refused, naming the field).
    #[test]
    fn the_scenario_is_the_star_with_the_rate() {
        let s = scenario(FITTED_BER, &["tcp-lwip", "tcp"], 2, 7).unwrap();
        assert_eq!(s.network(), "star");
        assert_eq!(s.labels(), ["tcp-lwip", "tcp"]);
        assert_eq!(s.replications(), 2);
        let e = scenario(0.5, &["tcp-lwip"], 1, 1).err().unwrap();
        assert!(format!("{e:#}").contains("bit_error_rate"), "{e:#}");
    }
}
