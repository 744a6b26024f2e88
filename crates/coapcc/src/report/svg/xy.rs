//! Line and point plots as standalone SVG, in the style of the box plots:
//! series of (x, mean ± 95 % confidence interval) drawn as lines with markers
//! and error bars, optionally a dashed y = x reference, a linear or log x
//! axis; scatter series (many points, no error bars) and plain lines (many
//! points, no markers) for traces.

use std::fmt::Write;

use super::{axis, esc, fmt_tick};

/// One point: x, the mean and the half-width of its confidence interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct XyPoint {
    /// The x value.
    pub x: f64,
    /// The y value (a mean).
    pub y: f64,
    /// Half-width of its 95 % confidence interval (0: no error bar).
    pub ci: f64,
}

/// How a series is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// A line through the points, a marker on each and its error bar; dashed
    /// and with hollow markers if `dashed`.
    Line {
        /// A dashed line and hollow markers (a secondary series).
        dashed: bool,
    },
    /// Small dots only (a trace: many points, no error bars).
    Dots,
    /// A thin line through the points, without markers or error bars (a
    /// sampled time series: many points).
    Trace,
}

/// One series.
#[derive(Clone, Debug)]
pub struct Series {
    /// Its legend entry.
    pub label: String,
    /// Its colour (CSS).
    pub colour: &'static str,
    /// How it is drawn.
    pub style: Style,
    /// Its points, in x order for lines.
    pub points: Vec<XyPoint>,
}

/// The x axis' scale.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    /// Linear.
    Linear,
    /// Logarithmic (base 10; x must be positive).
    Log,
}

/// A plot's frame.
#[derive(Clone, Debug)]
pub struct Axes {
    /// The title on top.
    pub title: String,
    /// The x axis' label.
    pub x_label: String,
    /// The y axis' label.
    pub y_label: String,
    /// The x scale.
    pub x_scale: Scale,
    /// Whether the y axis starts at zero (otherwise it is fitted to the data).
    pub y_from_zero: bool,
    /// Whether to draw the y = x reference line.
    pub diagonal: bool,
}

/// Width of the plot area (px).
pub const PLOT_W: f64 = 360.0;
/// Height of the plot area (px).
pub const PLOT_H: f64 = 220.0;
const LEFT: f64 = 62.0;
const TOP: f64 = 34.0;
const BOTTOM: f64 = 44.0;
const LEGEND_W: f64 = 12.0;
const CHAR_W: f64 = 6.0;
const LINE_H: f64 = 14.0;

/// An x axis: the value → pixel map and its ticks.
struct XAxis {
    scale: Scale,
    lo: f64,
    hi: f64,
    ticks: Vec<(f64, String)>,
}

impl XAxis {
    fn new(scale: Scale, lo: f64, hi: f64) -> XAxis {
        match scale {
            Scale::Linear => {
                let (lo, hi, step) = axis(lo.min(hi), hi.max(lo));
                let mut ticks = Vec::new();
                let mut t = lo;
                while t <= hi + step * 1e-9 && ticks.len() < 50 {
                    ticks.push((t, fmt_tick(t, step)));
                    t += step;
                }
                XAxis {
                    scale,
                    lo,
                    hi,
                    ticks,
                }
            }
            Scale::Log => {
                let (lo, hi) = (lo.max(1e-9), hi.max(lo.max(1e-9)));
                let (lo, hi) = (
                    lo / 10f64.powf(0.05 * (hi / lo).log10().max(0.5)),
                    hi * 10f64.powf(0.05 * (hi / lo).log10().max(0.5)),
                );
                // 1, 2 and 5 × 10^k within the range; only 1 × 10^k if
                // that leaves too many.
                let mut ticks = Vec::new();
                for mults in [&[1.0, 2.0, 5.0][..], &[1.0]] {
                    ticks.clear();
                    let mut e = lo.log10().floor() as i32;
                    while 10f64.powi(e) <= hi && ticks.len() < 60 {
                        for m in mults {
                            let v = m * 10f64.powi(e);
                            if v >= lo && v <= hi {
                                let step = 10f64.powi(e);
                                ticks.push((v, fmt_tick(v, step)));
                            }
                        }
                        e += 1;
                    }
                    if ticks.len() <= 9 {
                        break;
                    }
                }
                XAxis {
                    scale,
                    lo,
                    hi,
                    ticks,
                }
            }
        }
    }

    /// The fraction of the axis' width at `v`.
    fn frac(&self, v: f64) -> f64 {
        match self.scale {
            Scale::Linear => (v - self.lo) / (self.hi - self.lo),
            Scale::Log => (v.max(1e-12).log10() - self.lo.log10()) / (self.hi / self.lo).log10(),
        }
    }
}

/// The plot as an SVG document. Each series is a `<g class="series">`; a line
/// series' markers are `class="pt"` circles with their values on hover and its
/// error bars `class="err"` lines; the y = x line is `class="diagonal"`.
pub fn xy_plot(a: &Axes, series: &[Series]) -> String {
    let pts = || series.iter().flat_map(|s| s.points.iter());
    let finite = |p: &&XyPoint| p.x.is_finite() && p.y.is_finite();
    let (mut xlo, mut xhi) = (f64::INFINITY, f64::NEG_INFINITY);
    let (mut ylo, mut yhi) = (f64::INFINITY, f64::NEG_INFINITY);
    let mut lowest_mean = f64::INFINITY;
    for p in pts().filter(finite) {
        if a.x_scale == Scale::Log && p.x <= 0.0 {
            continue;
        }
        xlo = xlo.min(p.x);
        xhi = xhi.max(p.x);
        ylo = ylo.min(p.y - p.ci);
        yhi = yhi.max(p.y + p.ci);
        lowest_mean = lowest_mean.min(p.y);
    }
    let empty = !xlo.is_finite();
    if empty {
        (xlo, xhi, ylo, yhi, lowest_mean) = (1.0, 10.0, 0.0, 1.0, 0.0);
    }
    if a.y_from_zero {
        // A count cannot be negative: an interval reaching below zero is cut
        // at the axis rather than stretching it.
        ylo = lowest_mean.min(0.0);
    }
    let x = XAxis::new(a.x_scale, xlo, xhi);
    let (ymin, ymax, ystep) = axis(ylo, yhi);
    let longest = series
        .iter()
        .map(|s| s.label.chars().count())
        .max()
        .unwrap_or(0) as f64;
    let legend_w = if series.is_empty() {
        0.0
    } else {
        34.0 + longest * CHAR_W + LEGEND_W
    };
    let width = LEFT + PLOT_W + 14.0 + legend_w;
    let legend_h = TOP + LINE_H * series.len() as f64 + 8.0;
    let height = (TOP + PLOT_H + BOTTOM).max(legend_h);
    let px = |v: f64| LEFT + PLOT_W * x.frac(v);
    let py = |v: f64| TOP + PLOT_H * (ymax - v) / (ymax - ymin);
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="Helvetica, Arial, sans-serif" font-size="11">"#
    );
    let _ = write!(
        s,
        r#"<rect width="{width}" height="{height}" fill="white"/><text x="{:.1}" y="18" text-anchor="middle" font-size="12" font-weight="bold">{}</text>"#,
        LEFT + PLOT_W / 2.0,
        esc(&a.title)
    );
    // Grid and ticks.
    let (bottom, right) = (TOP + PLOT_H, LEFT + PLOT_W);
    let mut t = ymin;
    let mut guard = 0;
    while t <= ymax + ystep * 1e-9 && guard < 50 {
        let yy = py(t);
        let _ = write!(
            s,
            r##"<line x1="{LEFT}" x2="{right}" y1="{yy:.2}" y2="{yy:.2}" stroke="#e4e4e4"/><text x="{:.1}" y="{:.2}" text-anchor="end">{}</text>"##,
            LEFT - 5.0,
            yy + 4.0,
            fmt_tick(t, ystep)
        );
        t += ystep;
        guard += 1;
    }
    for (v, label) in &x.ticks {
        let xx = px(*v);
        let _ = write!(
            s,
            r##"<line x1="{xx:.2}" x2="{xx:.2}" y1="{TOP}" y2="{bottom}" stroke="#eeeeee"/><line x1="{xx:.2}" x2="{xx:.2}" y1="{bottom}" y2="{:.1}" stroke="#444"/><text x="{xx:.2}" y="{:.1}" text-anchor="middle">{label}</text>"##,
            bottom + 4.0,
            bottom + 16.0
        );
    }
    let _ = write!(
        s,
        r##"<text transform="translate({:.1} {:.1}) rotate(-90)" text-anchor="middle">{}</text><text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text><line x1="{LEFT}" x2="{LEFT}" y1="{TOP}" y2="{bottom}" stroke="#444"/><line x1="{LEFT}" x2="{right}" y1="{bottom}" y2="{bottom}" stroke="#444"/>"##,
        LEFT - 46.0,
        TOP + PLOT_H / 2.0,
        esc(&a.y_label),
        LEFT + PLOT_W / 2.0,
        bottom + 34.0,
        esc(&a.x_label),
    );
    if empty {
        let _ = write!(
            s,
            r##"<text x="{:.1}" y="{:.1}" text-anchor="middle" fill="#888">no data</text>"##,
            LEFT + PLOT_W / 2.0,
            TOP + PLOT_H / 2.0
        );
    }
    if a.diagonal && !empty {
        // y = x from the left edge up to where it leaves the plot.
        let (x0, x1) = (x.lo.max(ymin), x.hi.min(ymax));
        if x1 > x0 {
            let n = if a.x_scale == Scale::Log { 48 } else { 1 };
            let mut d = String::new();
            for i in 0..=n {
                let f = i as f64 / n as f64;
                let v = match a.x_scale {
                    Scale::Linear => x0 + (x1 - x0) * f,
                    Scale::Log => x0 * (x1 / x0).powf(f),
                };
                let _ = write!(
                    d,
                    "{}{:.1} {:.1}",
                    if i == 0 { "M" } else { "L" },
                    px(v),
                    py(v)
                );
            }
            let _ = write!(
                s,
                r##"<path class="diagonal" d="{d}" fill="none" stroke="#777" stroke-dasharray="2 3"><title>y = x</title></path>"##
            );
        }
    }
    let inside = |p: &XyPoint| finite(&p) && !(a.x_scale == Scale::Log && p.x <= 0.0);
    for sr in series {
        let _ = write!(s, r#"<g class="series"><title>{}</title>"#, esc(&sr.label));
        match sr.style {
            Style::Line { dashed } => {
                let dash = if dashed {
                    r#" stroke-dasharray="5 3""#
                } else {
                    ""
                };
                let mut d = String::new();
                for (i, p) in sr.points.iter().filter(|p| inside(p)).enumerate() {
                    let _ = write!(
                        d,
                        "{}{:.1} {:.1}",
                        if i == 0 { "M" } else { "L" },
                        px(p.x),
                        py(p.y)
                    );
                }
                let _ = write!(
                    s,
                    r#"<path d="{d}" fill="none" stroke="{}" stroke-width="1.6"{dash}/>"#,
                    sr.colour
                );
                let fill = if dashed { "white" } else { sr.colour };
                for p in sr.points.iter().filter(|p| inside(p)) {
                    let (cx, cy) = (px(p.x), py(p.y));
                    if p.ci > 0.0 {
                        let (y0, y1) = (py((p.y - p.ci).max(ymin)), py((p.y + p.ci).min(ymax)));
                        let _ = write!(
                            s,
                            r#"<line class="err" x1="{cx:.1}" x2="{cx:.1}" y1="{y0:.1}" y2="{y1:.1}" stroke="{c}"/><line x1="{:.1}" x2="{:.1}" y1="{y0:.1}" y2="{y0:.1}" stroke="{c}"/><line x1="{:.1}" x2="{:.1}" y1="{y1:.1}" y2="{y1:.1}" stroke="{c}"/>"#,
                            cx - 3.0,
                            cx + 3.0,
                            cx - 3.0,
                            cx + 3.0,
                            c = sr.colour
                        );
                    }
                    let _ = write!(
                        s,
                        r#"<circle class="pt" cx="{cx:.1}" cy="{cy:.1}" r="3" fill="{fill}" stroke="{}"><title>{}: x = {}, y = {:.3} ± {:.3}</title></circle>"#,
                        sr.colour,
                        esc(&sr.label),
                        short(p.x),
                        p.y,
                        p.ci
                    );
                }
            }
            Style::Trace => {
                let mut d = String::new();
                for (i, p) in sr.points.iter().filter(|p| inside(p)).enumerate() {
                    let _ = write!(
                        d,
                        "{}{:.1} {:.1}",
                        if i == 0 { "M" } else { "L" },
                        px(p.x),
                        py(p.y)
                    );
                }
                let _ = write!(
                    s,
                    r#"<path class="trace" d="{d}" fill="none" stroke="{}" stroke-width="1.2" stroke-linejoin="round" stroke-opacity="0.85"/>"#,
                    sr.colour
                );
            }
            Style::Dots => {
                let mut d = String::new();
                for p in sr.points.iter().filter(|p| inside(p)) {
                    let _ = write!(d, "M{:.1} {:.1}h0", px(p.x), py(p.y));
                }
                let _ = write!(
                    s,
                    r#"<path class="dots" d="{d}" stroke="{}" stroke-width="3.2" stroke-linecap="round" stroke-opacity="0.8"/>"#,
                    sr.colour
                );
            }
        }
        s.push_str("</g>");
    }
    // Legend.
    let lx = right + 14.0;
    for (i, sr) in series.iter().enumerate() {
        let yy = TOP + 6.0 + LINE_H * i as f64;
        match sr.style {
            Style::Line { dashed } => {
                let dash = if dashed {
                    r#" stroke-dasharray="5 3""#
                } else {
                    ""
                };
                let fill = if dashed { "white" } else { sr.colour };
                let _ = write!(
                    s,
                    r#"<line x1="{lx:.1}" x2="{:.1}" y1="{yy:.1}" y2="{yy:.1}" stroke="{c}" stroke-width="1.6"{dash}/><circle cx="{:.1}" cy="{yy:.1}" r="3" fill="{fill}" stroke="{c}"/>"#,
                    lx + 24.0,
                    lx + 12.0,
                    c = sr.colour
                );
            }
            Style::Dots => {
                let _ = write!(
                    s,
                    r#"<circle cx="{:.1}" cy="{yy:.1}" r="2.5" fill="{}"/>"#,
                    lx + 12.0,
                    sr.colour
                );
            }
            Style::Trace => {
                let _ = write!(
                    s,
                    r#"<line x1="{lx:.1}" x2="{:.1}" y1="{yy:.1}" y2="{yy:.1}" stroke="{}" stroke-width="1.6"/>"#,
                    lx + 24.0,
                    sr.colour
                );
            }
        }
        let _ = write!(
            s,
            r#"<text class="legend" x="{:.1}" y="{:.1}">{}</text>"#,
            lx + 30.0,
            yy + 4.0,
            esc(&sr.label)
        );
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

    fn attrs(svg: &str, class: &str, name: &str) -> Vec<f64> {
        let mut out = Vec::new();
        for part in svg.split(&format!("class=\"{class}\"")).skip(1) {
            let tag = &part[..part.find('>').unwrap()];
            let start = tag.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
            let end = start + tag[start..].find('"').unwrap();
            out.push(tag[start..end].parse().unwrap());
        }
        out
    }

    fn axes(scale: Scale) -> Axes {
        Axes {
            title: "carried <load>".into(),
            x_label: "offered (B/s)".into(),
            y_label: "carried (B/s)".into(),
            x_scale: scale,
            y_from_zero: true,
            diagonal: true,
        }
    }

    #[test]
    fn points_and_error_bars_sit_at_their_values() {
        let s = Series {
            label: "a".into(),
            colour: "#000",
            style: Style::Line { dashed: false },
            points: vec![
                XyPoint {
                    x: 0.0,
                    y: 10.0,
                    ci: 2.0,
                },
                XyPoint {
                    x: 100.0,
                    y: 60.0,
                    ci: 0.0,
                },
            ],
        };
        let svg = xy_plot(&axes(Scale::Linear), &[s]);
        assert!(svg.contains("carried &lt;load&gt;"));
        assert_eq!(svg.matches("class=\"series\"").count(), 1);
        let cx = attrs(&svg, "pt", "cx");
        let cy = attrs(&svg, "pt", "cy");
        assert_eq!(cx.len(), 2);
        assert!(cx[0] >= LEFT && cx[1] > cx[0] && cx[1] <= LEFT + PLOT_W);
        // y axis from 0: y = 10 and y = 60 keep their ratio to the bottom.
        let bottom = TOP + PLOT_H;
        let r = (bottom - cy[1]) / (bottom - cy[0]);
        assert!((r - 6.0).abs() < 0.05, "{r}");
        // One error bar, ±2 around 10: 4/10 of the height of y = 10.
        let (y1, y2) = (attrs(&svg, "err", "y1"), attrs(&svg, "err", "y2"));
        assert_eq!(y1.len(), 1);
        assert!(((y1[0] - y2[0]) / (bottom - cy[0]) - 0.4).abs() < 0.02);
        assert!(svg.contains("class=\"diagonal\""));
    }

    #[test]
    fn log_axes_tick_decades_and_dots_are_compact() {
        let s = Series {
            label: "rto".into(),
            colour: "#000",
            style: Style::Dots,
            points: (1..=1000)
                .map(|i| XyPoint {
                    x: f64::from(i) * 6.0,
                    y: 1.0,
                    ci: 0.0,
                })
                .collect(),
        };
        let svg = xy_plot(&axes(Scale::Log), &[s]);
        for t in [">10<", ">100<", ">1000<"] {
            assert!(svg.contains(t), "{t}");
        }
        assert!(!svg.contains("class=\"pt\""));
        assert_eq!(svg.matches("h0").count(), 1000);
        assert!(svg.len() < 40_000, "{}", svg.len());
        // Intervals below zero do not stretch an axis that starts at zero.
        let s = Series {
            label: "drops".into(),
            colour: "#000",
            style: Style::Line { dashed: false },
            points: vec![
                XyPoint {
                    x: 1.0,
                    y: 0.1,
                    ci: 0.5,
                },
                XyPoint {
                    x: 2.0,
                    y: 100.0,
                    ci: 1.0,
                },
            ],
        };
        let svg = xy_plot(&axes(Scale::Linear), &[s]);
        assert!(svg.contains(">0</text>") && !svg.contains(">-"), "{svg}");
        let bottom = TOP + PLOT_H;
        assert!(attrs(&svg, "err", "y1").iter().all(|&y| y <= bottom + 0.05));
        let empty = xy_plot(&axes(Scale::Log), &[]);
        assert!(empty.contains("no data"));
    }
}
