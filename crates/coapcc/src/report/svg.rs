//! Box plots as standalone SVG, in the style of the published evaluations: box
//! = 25th–75th percentile, whiskers = 10th and 90th percentile, line = median
//! (spec `docs/spec/testbed-spec.md` §3 lists the percentiles); the axes, palette and text
//! helpers every figure shares; and, for the grid's and the star's figures,
//! [`xy`] (line plots with error bars, traces), [`heat`] (per-node heat maps)
//! and [`bars`] (bar charts with error bars).

pub mod bars;
pub mod heat;
pub mod xy;

use std::fmt::Write;

use coapcc_sim::Percentiles;

/// One box.
#[derive(Clone, Debug)]
pub struct BoxItem {
    /// The label under the box.
    pub label: String,
    /// Its percentiles; `None` draws "no data" (no client finished).
    pub stats: Option<Percentiles>,
    /// Fill colour (CSS).
    pub colour: &'static str,
    /// Drawn with a dashed outline (a group of a mixed population).
    pub dashed: bool,
}

/// Smallest figure width (px); wider with many boxes or long labels.
pub const WIDTH: f64 = 420.0;
/// Height of the plot area (px).
pub const PLOT_H: f64 = 182.0;
const LEFT: f64 = 62.0;
const RIGHT: f64 = 12.0;
const TOP: f64 = 34.0;
const BOTTOM: f64 = 84.0;
/// Estimated width of one label character at 11 px (px).
const CHAR_W: f64 = 6.0;
/// cos and sin of the labels' 35° rotation.
const ROT_COS: f64 = 0.819;
const ROT_SIN: f64 = 0.574;

/// A colour-blind-safe palette (Okabe–Ito, then Tol's muted), by index.
pub const PALETTE: [&str; 12] = [
    "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#999999",
    "#332288", "#88CCEE", "#882255", "#44AA99",
];

/// A step of 1, 2 or 5 × 10^k near `raw`.
pub fn nice_step(raw: f64) -> f64 {
    if !(raw > 0.0 && raw.is_finite()) {
        return 1.0;
    }
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let n = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    n * mag
}

/// The y axis for values from `lo` to `hi`: (axis min, axis max, tick step).
/// A flat range is widened by 1 % of its value (at least 1); the axis never
/// goes below 0 for non-negative data.
pub fn axis(lo: f64, hi: f64) -> (f64, f64, f64) {
    let mut span = hi - lo;
    if span <= 1e-9 * hi.abs().max(1.0) {
        span = (hi.abs() * 0.01).max(1.0);
    }
    let (plo, phi) = (lo - 0.05 * span, hi + 0.05 * span);
    let step = nice_step((phi - plo) / 5.0);
    let mut amin = (plo / step).floor() * step;
    if lo >= 0.0 && amin < 0.0 {
        amin = 0.0;
    }
    let amax = (phi / step).ceil() * step;
    (amin, amax, step)
}

/// Escapes text for SVG/XML.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A tick label with as many decimals as `step` needs.
pub fn fmt_tick(v: f64, step: f64) -> String {
    let decimals = if step >= 1.0 {
        0
    } else {
        (-step.log10().floor()) as usize
    };
    format!("{v:.decimals$}")
}

/// The box plot as an SVG document: `title` on top, `unit` on the y axis.
pub fn box_plot(title: &str, unit: &str, items: &[BoxItem]) -> String {
    let data: Vec<&Percentiles> = items.iter().filter_map(|i| i.stats.as_ref()).collect();
    let lo = data.iter().map(|p| p.p10).fold(f64::INFINITY, f64::min);
    let hi = data.iter().map(|p| p.p90).fold(f64::NEG_INFINITY, f64::max);
    let (amin, amax, step) = if data.is_empty() {
        (0.0, 1.0, 0.2)
    } else {
        axis(lo, hi)
    };
    // Rotated labels need room below and, for the first boxes, to the left; the
    // plot area keeps its size and the figure grows around it.
    let longest = items
        .iter()
        .map(|i| i.label.chars().count())
        .max()
        .unwrap_or(0) as f64;
    let text_w = longest * CHAR_W;
    let slot_min = 44.0;
    let plot_w = (WIDTH - LEFT - RIGHT).max(slot_min * items.len() as f64);
    let slot0 = plot_w / items.len().max(1) as f64;
    let left = LEFT.max(text_w * ROT_COS - slot0 / 2.0 + 14.0);
    let bottom = BOTTOM.max(text_w * ROT_SIN + 30.0);
    let plot_h = PLOT_H;
    let width = left + plot_w + RIGHT;
    let height = TOP + plot_h + bottom;
    let y = |v: f64| TOP + plot_h * (amax - v) / (amax - amin);
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="Helvetica, Arial, sans-serif" font-size="11">"#
    );
    let _ = write!(
        s,
        r#"<rect width="{width}" height="{height}" fill="white"/><text x="{}" y="18" text-anchor="middle" font-size="12" font-weight="bold">{}</text>"#,
        width / 2.0,
        esc(title)
    );
    // Grid and ticks.
    let mut t = amin;
    let mut guard = 0;
    while t <= amax + step * 1e-9 && guard < 50 {
        let yy = y(t);
        let _ = write!(
            s,
            r##"<line x1="{left}" x2="{:.1}" y1="{yy:.2}" y2="{yy:.2}" stroke="#e4e4e4"/><text x="{:.1}" y="{:.2}" text-anchor="end">{}</text>"##,
            width - RIGHT,
            left - 5.0,
            yy + 4.0,
            fmt_tick(t, step)
        );
        t += step;
        guard += 1;
    }
    let _ = write!(
        s,
        r##"<text transform="translate({:.1} {:.1}) rotate(-90)" text-anchor="middle">{}</text><line x1="{left}" x2="{left}" y1="{TOP}" y2="{:.1}" stroke="#444"/><line x1="{left}" x2="{:.1}" y1="{:.1}" y2="{:.1}" stroke="#444"/>"##,
        left - 46.0,
        TOP + plot_h / 2.0,
        esc(unit),
        TOP + plot_h,
        width - RIGHT,
        TOP + plot_h,
        TOP + plot_h
    );
    let n = items.len().max(1) as f64;
    let slot = plot_w / n;
    let bw = (slot * 0.55).min(46.0);
    for (i, item) in items.iter().enumerate() {
        let cx = left + slot * (i as f64 + 0.5);
        let _ = write!(
            s,
            r#"<text transform="translate({cx:.1} {:.1}) rotate(-35)" text-anchor="end">{}</text>"#,
            TOP + plot_h + 14.0,
            esc(&item.label)
        );
        let Some(p) = &item.stats else {
            let _ = write!(
                s,
                r##"<text x="{cx:.1}" y="{:.1}" text-anchor="middle" fill="#888">no data</text>"##,
                TOP + plot_h / 2.0
            );
            continue;
        };
        let dash = if item.dashed {
            r#" stroke-dasharray="4 2""#
        } else {
            ""
        };
        let (x0, x1) = (cx - bw / 2.0, cx + bw / 2.0);
        let _ = write!(
            s,
            r##"<g class="box"><title>{}: p10 {:.3}, p25 {:.3}, median {:.3}, p75 {:.3}, p90 {:.3} (min {:.3}, max {:.3})</title>"##,
            esc(&item.label),
            p.p10,
            p.p25,
            p.p50,
            p.p75,
            p.p90,
            p.min,
            p.max
        );
        let _ = write!(
            s,
            r##"<line class="whisker" x1="{cx:.1}" x2="{cx:.1}" y1="{:.2}" y2="{:.2}" stroke="#333"/><line class="whisker" x1="{cx:.1}" x2="{cx:.1}" y1="{:.2}" y2="{:.2}" stroke="#333"/>"##,
            y(p.p90),
            y(p.p75),
            y(p.p25),
            y(p.p10)
        );
        for v in [p.p10, p.p90] {
            let _ = write!(
                s,
                r##"<line class="cap" x1="{:.1}" x2="{:.1}" y1="{:.2}" y2="{:.2}" stroke="#333"/>"##,
                cx - bw / 4.0,
                cx + bw / 4.0,
                y(v),
                y(v)
            );
        }
        let h = (y(p.p25) - y(p.p75)).max(0.5);
        let _ = write!(
            s,
            r##"<rect class="iqr" x="{x0:.1}" y="{:.2}" width="{bw:.1}" height="{h:.2}" fill="{}" fill-opacity="0.75" stroke="#222"{dash}/><line class="median" x1="{x0:.1}" x2="{x1:.1}" y1="{:.2}" y2="{:.2}" stroke="#000" stroke-width="2"/></g>"##,
            y(p.p75),
            item.colour,
            y(p.p50),
            y(p.p50)
        );
    }
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attr(svg: &str, class: &str, name: &str) -> Vec<f64> {
        let mut out = Vec::new();
        for part in svg.split(&format!("class=\"{class}\"")).skip(1) {
            let tag = &part[..part.find('>').unwrap()];
            let start = tag.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
            let end = start + tag[start..].find('"').unwrap();
            out.push(tag[start..end].parse().unwrap());
        }
        out
    }

    #[test]
    fn nice_steps_and_axes() {
        assert_eq!(nice_step(0.7), 1.0);
        assert_eq!(nice_step(1.3), 2.0);
        assert_eq!(nice_step(3.0), 5.0);
        assert_eq!(nice_step(7.0), 10.0);
        assert_eq!(nice_step(42.0), 50.0);
        // 60 to 100: padded 58 to 102, step 10 → 50 to 110.
        assert_eq!(axis(60.0, 100.0), (50.0, 110.0, 10.0));
        // Non-negative data never gets a negative axis.
        assert_eq!(axis(0.0, 10.0).0, 0.0);
        // A flat range at 33: widened by 1 (1 % of 33 is less than 1).
        let (a, b, _) = axis(33.0, 33.0);
        assert!(a < 33.0 && b > 33.0);
    }

    #[test]
    fn boxes_sit_at_their_percentiles() {
        let p = Percentiles {
            min: 0.0,
            p10: 60.0,
            p25: 70.0,
            p50: 80.0,
            p75: 90.0,
            p90: 100.0,
            max: 120.0,
        };
        let svg = box_plot(
            "t <&>",
            "s",
            &[
                BoxItem {
                    label: "a".into(),
                    stats: Some(p),
                    colour: PALETTE[0],
                    dashed: false,
                },
                BoxItem {
                    label: "b".into(),
                    stats: None,
                    colour: PALETTE[1],
                    dashed: true,
                },
            ],
        );
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains("t &lt;&amp;&gt;"));
        assert!(svg.contains("no data"));
        // Axis 50..110 over the plot height 300 - 34 - 84 = 182 px from y = 34.
        let y = |v: f64| 34.0 + 182.0 * (110.0 - v) / 60.0;
        let round = |v: f64| (v * 100.0).round() / 100.0;
        assert_eq!(attr(&svg, "iqr", "y"), [round(y(90.0))]);
        assert_eq!(attr(&svg, "iqr", "height"), [round(y(70.0) - y(90.0))]);
        assert_eq!(attr(&svg, "median", "y1"), [round(y(80.0))]);
        let w1 = attr(&svg, "whisker", "y1");
        let w2 = attr(&svg, "whisker", "y2");
        assert_eq!(w1, [round(y(100.0)), round(y(70.0))]);
        assert_eq!(w2, [round(y(90.0)), round(y(60.0))]);
        assert!(svg.contains("median 80.000"));
    }
}
