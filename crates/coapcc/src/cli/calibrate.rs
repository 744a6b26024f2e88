//! `coapcc calibrate --sensitivity` and `--lossy-star`: the runs and their
//! Markdown, with a progress bar on stderr.

use crate::calibrate::{lossy_star, sensitivity};
use anyhow::{bail, Context, Result};

use super::progress::RunProgress;

/// Runs the sensitivity table (`sensitivity`) or the lossy star's fit.
pub fn run(
    replications: Option<u32>,
    seed: u64,
    sensitivity: bool,
    only: Option<String>,
    threads: Option<usize>,
) -> Result<()> {
    if replications == Some(0) {
        bail!("--replications 0: expected at least 1");
    }
    let threads = crate::budget::threads(threads)?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .context("cannot start worker threads")?;
    if sensitivity {
        let mut switches = sensitivity::switches(seed, lossy_star::FITTED_BER);
        if let Some(only) = &only {
            switches.retain(|s| s.name.contains(only.as_str()));
            if switches.is_empty() {
                let names: Vec<String> = sensitivity::switches(seed, lossy_star::FITTED_BER)
                    .into_iter()
                    .map(|s| s.name)
                    .collect();
                bail!(
                    "--only {only:?}: no switch's name contains it; the switches are: {}",
                    names.join("; ")
                );
            }
        }
        let bar = RunProgress::new(sensitivity::planned_runs(&switches, replications)?);
        let measured = sensitivity::run(switches, replications, &pool, &|| bar.inc())?;
        bar.finish();
        crate::out!("{}", sensitivity::markdown(&measured))?;
        return Ok(());
    }
    let reps = replications.unwrap_or(10);
    let steps = 10;
    let bar = RunProgress::new(u64::from(steps + 1) * u64::from(reps) + 4 * u64::from(reps));
    let fit = lossy_star::bisect(steps, |ber| {
        let s = lossy_star::scenario(ber, &["tcp-lwip"], reps, seed)?;
        Ok(lossy_star::flavours(&s, &pool, &|| bar.inc())?[0].retransmissions)
    })?;
    let best = lossy_star::best(&fit).expect("at least one step");
    let all = [
        "tcp-lwip",
        "tcp-lwip-backoff",
        "tcp-lwip-cwnd",
        "tcp-lwip-backoff-cwnd",
        "tcp",
    ];
    let s = lossy_star::scenario(best.ber, &all, reps, seed)?;
    let flavours = lossy_star::flavours(&s, &pool, &|| bar.inc())?;
    bar.finish();
    crate::outln!(
        "Fit of the bit-error rate to original lwIP's {} retransmissions per station ({reps} replications, seed {seed}):\n",
        lossy_star::TARGET_RETRANSMISSIONS
    )?;
    crate::outln!("| bit-error rate | lwIP retransmissions per station |")?;
    crate::outln!("| --- | --- |")?;
    for st in &fit {
        crate::outln!("| {:.4e} | {:.1} |", st.ber, st.retransmissions)?;
    }
    crate::outln!(
        "\nBest: {:.3e} ({:.1} retransmissions per station).\n",
        best.ber,
        best.retransmissions
    )?;
    crate::outln!("| flavour | retransmissions per station | timeouts per station | largest RTO (s) | goodput (kbit/s) | stations done |")?;
    crate::outln!("| --- | --- | --- | --- | --- | --- |")?;
    for f in &flavours {
        crate::outln!(
            "| {} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} |",
            f.label,
            f.retransmissions,
            f.timeouts,
            f.max_rto,
            f.goodput_kbps,
            f.complete
        )?;
    }
    Ok(())
}
