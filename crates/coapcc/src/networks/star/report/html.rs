//! The self-contained HTML page of a star report: provenance, then set by set
//! the bars and the sweeps, the time series, the tables and the campaign
//! file. No external resources.

use std::fmt::Write;

use super::data::{StarReport, StarSet, ZOOM_S};
use super::figures::{point_group, series_group, VARIABLES};
use crate::report::html::figure_row;
use crate::report::html::{esc, footer, header, tables_section};
use crate::report::stem;
use crate::report::tables::Table;
use crate::report::Figure;

/// A line saying what a set runs.
fn describe(r: &StarReport, set: &StarSet) -> String {
    let Some(c) = r.cells.iter().find(|c| c.cell.set == set.name) else {
        return String::new();
    };
    let (n, w) = (&c.cell.spec.network, &c.cell.spec.workload);
    let points: Vec<String> = set.points.iter().map(u32::to_string).collect();
    let stations = match points.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => points.join(""),
    };
    format!(
        "{stations} stations around one 802.11 access point at {} Mbit/s (queues of {} \
         packets), each writing {} bytes every {} s, {} times, over TCP with MSS {}; {} \
         replications per station count and flavour.",
        n.rate_bps as f64 / 1e6,
        n.queue,
        w.write_bytes,
        w.interval_s,
        w.writes,
        w.mss,
        c.cell.keys.len()
    )
}

/// Says so when no flavour retransmitted at a point: the star is not
/// congested there and the flavours cannot differ.
fn congestion_note(r: &StarReport, set: &StarSet, stations: u32) -> Option<String> {
    let cells: Vec<_> = set
        .labels
        .iter()
        .filter_map(|l| r.cell(&set.name, stations, l))
        .collect();
    if cells.is_empty() {
        return None;
    }
    let idle = cells
        .iter()
        .all(|c| c.summary.retransmissions.mean == 0.0 && c.summary.timeouts.mean == 0.0);
    let carried = cells
        .iter()
        .map(|c| c.summary.goodput_bps.mean / c.summary.offered_bps)
        .fold(f64::INFINITY, f64::min);
    idle.then(|| {
        format!(
            "No flavour retransmitted a segment at {stations} stations: the star is not \
             congested there (every flavour carries at least {:.1} % of the offered load), so \
             the flavours' loss reactions never run and their bars agree.",
            100.0 * carried
        )
    })
}

/// The whole page.
pub fn page(r: &StarReport, figures: &[Figure], tables: &[Table]) -> String {
    let (done, planned) = r.progress();
    let mut s = header(&r.definition, &r.others, done, planned);
    s.push_str(
        "<p>The Wi-Fi star of the lwIP evaluation: bulk TCP senders on the stations, a sink \
         behind the access point. Every bar and every point is the mean per run over the \
         finished replications, with its 95 % confidence interval (Student's t) as error bar. \
         <i>Goodput at the AP</i>: bytes the sink received × 8 / the time from the first write \
         to the last byte received. <i>Retransmitted segments</i> and <i>timeouts</i>: totals \
         over the stations of a run. <i>Largest RTO</i>: the largest RTO any station had in \
         force at a sample. Every figure is also an SVG file and every plotted series a CSV \
         file beside this page.</p>\n<ul>",
    );
    for set in &r.sets {
        let _ = write!(
            s,
            "<li><a href=\"#set-{}\">Set <code>{}</code></a></li>",
            stem(&set.name),
            esc(&set.name)
        );
    }
    s.push_str(
        "<li><a href=\"#series\">cwnd, ssthresh, RTO and RTT over time</a></li>\
         <li><a href=\"#tables\">Tables</a></li><li><a href=\"#file\">Campaign file</a></li></ul>\n",
    );
    for set in &r.sets {
        let _ = writeln!(
            s,
            "<h2 id=\"set-{}\">Set <code>{}</code></h2>\n<p>{}</p>",
            stem(&set.name),
            esc(&set.name),
            esc(&describe(r, set))
        );
        for &p in &set.points {
            let _ = writeln!(s, "<h3>{p} stations</h3>");
            if let Some(note) = congestion_note(r, set, p) {
                let _ = writeln!(s, "<p>{}</p>", esc(&note));
            }
            figure_row(&mut s, figures, "bars", &point_group(&set.name, p));
        }
        if set.points.len() > 1 {
            s.push_str(
                "<h3>Against the number of stations</h3>\n<p>The dashed line is the offered \
                 load (stations × write size / interval).</p>\n",
            );
            figure_row(&mut s, figures, "sweep", &set.name);
        }
    }
    s.push_str("<h2 id=\"series\">cwnd, ssthresh, RTO and RTT over time</h2>\n");
    let _ = writeln!(
        s,
        "<p>Per flavour, sampled every {} s: <i>one client</i> is station 1 of replication 0 \
         (the first stored replication if 0 is missing); the <i>mean</i> is over every \
         station of every finished replication at each sample time (a station is sampled \
         once it has connected; an unbounded ssthresh — full TCP before its first loss — and \
         the RTT before the first sample are left out, of the mean as of the plot). lwIP keeps \
         the smoothed RTT in whole 500 ms ticks: while its RTTs stay under 250 ms it reads 0 \
         and is not drawn. Flavours that behave alike draw the same line, the last one on \
         top. The first {ZOOM_S} s of cwnd are drawn again on their own. Drawn at the \
         station counts nearest {} and {}.</p>",
        r.cells
            .first()
            .map_or(0.5, |c| c.cell.spec.workload.sample_s),
        super::data::SERIES_STATIONS[0],
        super::data::SERIES_STATIONS[1],
    );
    for (set, p) in &r.series_points {
        let group = point_group(set, *p);
        let _ = writeln!(s, "<h3>{}</h3>", esc(&group));
        for v in &VARIABLES {
            let _ = writeln!(s, "<h4>{}</h4>", esc(v.what));
            figure_row(&mut s, figures, "series", &series_group(&group, v, false));
        }
        let _ = writeln!(s, "<h4>{}, first {ZOOM_S} s</h4>", esc(VARIABLES[0].what));
        figure_row(
            &mut s,
            figures,
            "series",
            &series_group(&group, &VARIABLES[0], true),
        );
    }
    // The long time-series table stays in its CSV file.
    tables_section(&mut s, tables, |id| id == "star-points");
    s.push_str(&footer(&r.definition));
    s
}
