//! Bar charts as standalone SVG, in the style of the box plots: one bar per
//! item (a mean) with its 95 % confidence interval as error bar, the y axis
//! from zero, labels under the bars.

use std::fmt::Write;

use super::{axis, esc, fmt_tick};

/// One bar.
#[derive(Clone, Debug)]
pub struct Bar {
    /// The label under the bar.
    pub label: String,
    /// The mean and the half-width of its 95 % confidence interval; `None`
    /// draws "no data".
    pub value: Option<(f64, f64)>,
    /// Fill colour (CSS).
    pub colour: &'static str,
}

/// Height of the plot area (px).
pub const PLOT_H: f64 = 182.0;
const LEFT: f64 = 66.0;
const RIGHT: f64 = 12.0;
const TOP: f64 = 34.0;
const BOTTOM: f64 = 60.0;
const SLOT: f64 = 56.0;
const MIN_W: f64 = 300.0;
const CHAR_W: f64 = 6.0;
const ROT_COS: f64 = 0.819;
const ROT_SIN: f64 = 0.574;

/// The chart as an SVG document: `title` on top, `unit` on the y axis. Each
/// bar is a `class="bar"` rectangle with its value on hover, each error bar
/// a `class="err"` line.
pub fn bar_chart(title: &str, unit: &str, bars: &[Bar]) -> String {
    let hi = bars
        .iter()
        .filter_map(|b| b.value)
        .filter(|(m, c)| m.is_finite() && c.is_finite())
        .map(|(m, c)| m + c)
        .fold(0.0, f64::max);
    let (amin, amax, step) = axis(0.0, if hi > 0.0 { hi } else { 1.0 });
    let longest = bars
        .iter()
        .map(|b| b.label.chars().count())
        .max()
        .unwrap_or(0) as f64;
    let text_w = longest * CHAR_W;
    let plot_w = (MIN_W - LEFT - RIGHT).max(SLOT * bars.len() as f64);
    let slot = plot_w / bars.len().max(1) as f64;
    let left = LEFT.max(text_w * ROT_COS - slot / 2.0 + 14.0);
    let bottom = BOTTOM.max(text_w * ROT_SIN + 30.0);
    let width = left + plot_w + RIGHT;
    let height = TOP + PLOT_H + bottom;
    let y = |v: f64| TOP + PLOT_H * (amax - v.clamp(amin, amax)) / (amax - amin);
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="Helvetica, Arial, sans-serif" font-size="11">"#
    );
    let _ = write!(
        s,
        r#"<rect width="{width}" height="{height}" fill="white"/><text x="{:.1}" y="18" text-anchor="middle" font-size="12" font-weight="bold">{}</text>"#,
        width / 2.0,
        esc(title)
    );
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
    let base = TOP + PLOT_H;
    let _ = write!(
        s,
        r##"<text transform="translate({:.1} {:.1}) rotate(-90)" text-anchor="middle">{}</text><line x1="{left}" x2="{left}" y1="{TOP}" y2="{base:.1}" stroke="#444"/><line x1="{left}" x2="{:.1}" y1="{base:.1}" y2="{base:.1}" stroke="#444"/>"##,
        left - 50.0,
        TOP + PLOT_H / 2.0,
        esc(unit),
        width - RIGHT,
    );
    let bw = (slot * 0.6).min(40.0);
    for (i, b) in bars.iter().enumerate() {
        let cx = left + slot * (i as f64 + 0.5);
        let _ = write!(
            s,
            r#"<text transform="translate({cx:.1} {:.1}) rotate(-35)" text-anchor="end">{}</text>"#,
            base + 14.0,
            esc(&b.label)
        );
        let Some((mean, ci)) = b.value.filter(|(m, _)| m.is_finite()) else {
            let _ = write!(
                s,
                r##"<text x="{cx:.1}" y="{:.1}" text-anchor="middle" fill="#888">no data</text>"##,
                TOP + PLOT_H / 2.0
            );
            continue;
        };
        let top = y(mean);
        let _ = write!(
            s,
            r##"<rect class="bar" x="{:.1}" y="{top:.2}" width="{bw:.1}" height="{:.2}" fill="{}" fill-opacity="0.8" stroke="#222"><title>{}: {} ± {}</title></rect>"##,
            cx - bw / 2.0,
            (base - top).max(0.0),
            b.colour,
            esc(&b.label),
            short(mean),
            short(ci)
        );
        if ci > 0.0 && ci.is_finite() {
            let (y0, y1) = (y(mean - ci), y(mean + ci));
            let _ = write!(
                s,
                r##"<line class="err" x1="{cx:.1}" x2="{cx:.1}" y1="{y0:.1}" y2="{y1:.1}" stroke="#000"/><line x1="{:.1}" x2="{:.1}" y1="{y0:.1}" y2="{y0:.1}" stroke="#000"/><line x1="{:.1}" x2="{:.1}" y1="{y1:.1}" y2="{y1:.1}" stroke="#000"/>"##,
                cx - 5.0,
                cx + 5.0,
                cx - 5.0,
                cx + 5.0
            );
        }
    }
    s.push_str("</svg>\n");
    s
}

/// A number for a tooltip: at most three decimals, no trailing zeros.
fn short(v: f64) -> String {
    format!("{}", (v * 1000.0).round() / 1000.0)
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
    fn bars_start_at_zero_and_carry_their_intervals() {
        let svg = bar_chart(
            "goodput <AP>",
            "kbit/s",
            &[
                Bar {
                    label: "a".into(),
                    value: Some((40.0, 5.0)),
                    colour: "#000",
                },
                Bar {
                    label: "b".into(),
                    value: Some((80.0, 0.0)),
                    colour: "#111",
                },
                Bar {
                    label: "c".into(),
                    value: None,
                    colour: "#222",
                },
            ],
        );
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains("goodput &lt;AP&gt;") && svg.contains("no data"));
        let (ys, hs) = (attr(&svg, "bar", "y"), attr(&svg, "bar", "height"));
        assert_eq!(ys.len(), 2);
        // Both bars stand on the axis at zero; heights in the ratio of values.
        let base = TOP + PLOT_H;
        assert!((ys[0] + hs[0] - base).abs() < 0.02 && (ys[1] + hs[1] - base).abs() < 0.02);
        assert!((hs[1] / hs[0] - 2.0).abs() < 0.01, "{hs:?}");
        // One error bar (b has no interval), ±5 around 40: 1/4 of a's height.
        let (y1, y2) = (attr(&svg, "err", "y1"), attr(&svg, "err", "y2"));
        assert_eq!(y1.len(), 1);
        assert!(((y1[0] - y2[0]) / hs[0] - 0.25).abs() < 0.01);
        assert!(svg.contains("a: 40 ± 5"));
        // By hand: the highest value is 80, the axis runs 0 to 100 (80 plus
        // 5 % headroom, rounded up to a step of 20), 182 px tall from y = 34:
        // a's top at 34 + 182 × 60/100, b's at 34 + 182 × 20/100; a's error
        // bar from 35 to 45, at 34 + 182 × 65/100 and 34 + 182 × 55/100.
        assert_eq!(ys, [143.2, 70.4]);
        assert_eq!(hs, [72.8, 145.6]);
        assert_eq!((y1[0], y2[0]), (152.3, 134.1));
        assert!(svg.contains(">100</text>") && !svg.contains(">120</text>"));
        let empty = bar_chart("t", "u", &[]);
        assert!(empty.contains("</svg>") && !empty.contains("class=\"bar\""));
    }
}
