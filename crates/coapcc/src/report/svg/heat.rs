//! Heat maps of a per-node value over the grid's layout as standalone SVG:
//! one square per node, placed by the rank of its x and y coordinates (row 0
//! on top, as the grid is numbered), shaded from white (0) to dark blue (the
//! scale's maximum), with the node's number and value written in it.

use std::fmt::Write;

use super::esc;

/// One node.
#[derive(Clone, Debug, PartialEq)]
pub struct HeatCell {
    /// Its number.
    pub node: u32,
    /// Its position (m).
    pub position: [f64; 2],
    /// Its value and the half-width of its 95 % confidence interval; `None`
    /// for a node that has none (the border router, the server).
    pub value: Option<(f64, f64)>,
    /// A tag written instead of a value (`BR`, `S`) or beside it.
    pub tag: &'static str,
}

const CELL: f64 = 46.0;
const LEFT: f64 = 12.0;
const TOP: f64 = 30.0;
const LEGEND_H: f64 = 40.0;

/// The colour of `f` in 0..=1: white to `#08306b`.
pub fn shade(f: f64) -> String {
    let f = if f.is_finite() {
        f.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let mix = |a: f64, b: f64| (a + (b - a) * f).round() as u8;
    format!(
        "#{:02x}{:02x}{:02x}",
        mix(255.0, 8.0),
        mix(255.0, 48.0),
        mix(255.0, 107.0)
    )
}

/// Sorted distinct values (within 1 mm).
fn ranks(v: impl Iterator<Item = f64>) -> Vec<f64> {
    let mut v: Vec<f64> = v.collect();
    v.sort_by(f64::total_cmp);
    v.dedup_by(|a, b| (*a - *b).abs() < 1e-3);
    v
}

fn rank(levels: &[f64], v: f64) -> usize {
    levels
        .iter()
        .position(|l| (l - v).abs() < 1e-3)
        .unwrap_or(0)
}

/// The heat map as an SVG document: `title` on top, the colour scale from 0
/// to `max` (`unit`) below. Each node is a `class="node"` rectangle with its
/// value on hover.
pub fn heat_map(title: &str, unit: &str, cells: &[HeatCell], max: f64) -> String {
    let xs = ranks(cells.iter().map(|c| c.position[0]));
    let ys = ranks(cells.iter().map(|c| c.position[1]));
    let grid_w = CELL * xs.len().max(1) as f64;
    let grid_h = CELL * ys.len().max(1) as f64;
    let width = (LEFT * 2.0 + grid_w).max(title.chars().count() as f64 * 7.0 + 16.0);
    let height = TOP + grid_h + LEGEND_H;
    let max = if max > 0.0 && max.is_finite() {
        max
    } else {
        1.0
    };
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
    for c in cells {
        let x = LEFT + CELL * rank(&xs, c.position[0]) as f64;
        let y = TOP + CELL * rank(&ys, c.position[1]) as f64;
        let (fill, text_fill, hover, value) = match c.value {
            Some((v, ci)) => {
                let f = v / max;
                (
                    shade(f),
                    if f > 0.55 { "white" } else { "#222" },
                    format!("node {}: {v:.2} ± {ci:.2} {unit}", c.node),
                    if c.tag.is_empty() {
                        format!("{v:.1}")
                    } else {
                        c.tag.to_string()
                    },
                )
            }
            None => (
                "#dddddd".to_string(),
                "#222",
                format!("node {}: {}", c.node, c.tag),
                c.tag.to_string(),
            ),
        };
        let _ = write!(
            s,
            r##"<g><title>{}</title><rect class="node" x="{x:.1}" y="{y:.1}" width="{CELL}" height="{CELL}" fill="{fill}" stroke="#ffffff"/><text x="{:.1}" y="{:.1}" font-size="9" fill="{text_fill}">{}</text><text x="{:.1}" y="{:.1}" text-anchor="middle" fill="{text_fill}">{}</text></g>"##,
            esc(&hover),
            x + 3.0,
            y + 10.0,
            c.node,
            x + CELL / 2.0,
            y + CELL / 2.0 + 8.0,
            esc(&value)
        );
    }
    // The colour scale, in ten steps (no gradient: inline SVGs would share
    // its id in the page).
    let ly = TOP + grid_h + 10.0;
    let step_w = grid_w / 10.0;
    for i in 0..10 {
        let _ = write!(
            s,
            r#"<rect x="{:.1}" y="{ly:.1}" width="{step_w:.1}" height="8" fill="{}"/>"#,
            LEFT + step_w * f64::from(i),
            shade((f64::from(i) + 0.5) / 10.0)
        );
    }
    let _ = write!(
        s,
        r##"<rect x="{LEFT}" y="{ly:.1}" width="{grid_w:.1}" height="8" fill="none" stroke="#999"/><text x="{LEFT}" y="{:.1}">0</text><text x="{:.1}" y="{:.1}" text-anchor="end">{max:.1} {}</text>"##,
        ly + 21.0,
        LEFT + grid_w,
        ly + 21.0,
        esc(unit)
    );
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_sit_by_rank_and_shade_by_value() {
        let cells: Vec<HeatCell> = (1..=4)
            .map(|n| HeatCell {
                node: n,
                position: [10.0 * f64::from((n - 1) % 2), 10.0 * f64::from((n - 1) / 2)],
                value: (n != 1).then_some((f64::from(n), 0.5)),
                tag: if n == 1 { "BR" } else { "" },
            })
            .collect();
        let svg = heat_map("T = 8 s", "B/s", &cells, 4.0);
        assert_eq!(svg.matches("class=\"node\"").count(), 4);
        assert!(svg.contains("node 4: 4.00 ± 0.50 B/s"));
        assert!(svg.contains(">BR<"));
        // Node 4 is at column 1, row 1, and darkest.
        assert!(svg.contains(&format!(
            "x=\"{:.1}\" y=\"{:.1}\" width=\"46\" height=\"46\" fill=\"{}\"",
            LEFT + CELL,
            TOP + CELL,
            shade(1.0)
        )));
        assert_eq!(shade(0.0), "#ffffff");
        assert_eq!(shade(1.0), "#08306b");
        assert_eq!(shade(f64::NAN), "#ffffff");
    }
}
