//! Charts as inline SVG, drawn on the server: the pages show them without scripts, and
//! under the strict content policy (no script, no style attribute: every look is a
//! class of `app.css`). A chart holds numbers only — axis labels are numbers the chart
//! formats itself, series are told apart by class (`s0`, `s1`, ...) — so no
//! bot-supplied text ever enters the SVG: the page names the series beside it, as
//! escaped HTML.
//!
//! [`line_chart`] draws each series as one path through its points (a point per
//! recorded value: `M` then one `L` per further point), with an optional band (a
//! closed path through the upper ends and back along the lower ones: a rating's 95%
//! interval), over a grid with a few round ticks on each axis. The size is the
//! `viewBox`'s: the SVG scales to its box (`width: 100%` in the stylesheet), so a chart
//! fits a phone as well as a desk.

use std::fmt::Write as _;

/// One series: its points `(x, y)` in order of `x`, and for each the band's low and
/// high ends (or none).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Series {
    /// The points.
    pub points: Vec<(f64, f64)>,
    /// The band around them, a `(low, high)` per point: empty for none.
    pub band: Vec<(f64, f64)>,
}

/// Series classes cycle through this many colours (`s0` ... `s9` in `app.css`).
pub const PALETTE: usize = 10;

/// The chart's frame, in `viewBox` units.
const WIDTH: f64 = 640.0;
const HEIGHT: f64 = 260.0;
/// Room for the y axis' labels and title on the left, the x axis' below.
const LEFT: f64 = 70.0;
const BOTTOM: f64 = 40.0;
const TOP: f64 = 8.0;
const RIGHT: f64 = 8.0;

/// A chart's axes: their titles (with units: the server's own words, never a bot's)
/// and what their values are.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Axes<'a> {
    /// The x axis' title, e.g. `set number`.
    pub x: &'a str,
    /// The y axis' title, e.g. `rating (Elo)`.
    pub y: &'a str,
    /// The x values are whole numbers (set numbers): no tick between two.
    pub whole_x: bool,
    /// The y values are counts: the axis starts at zero, never below.
    pub counts: bool,
}

/// Escapes the few characters that matter in SVG text.
fn text(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Round tick values covering `[low, high]`: about `count` of them, at 1, 2 or 5 times
/// a power of ten.
pub fn ticks(low: f64, high: f64, count: usize) -> Vec<f64> {
    if !(low.is_finite() && high.is_finite()) || high < low || count == 0 {
        return Vec::new();
    }
    if high == low {
        return vec![low];
    }
    let raw = (high - low) / count as f64;
    let power = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * power)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * power);
    let first = (low / step).ceil() as i64;
    let last = (high / step).floor() as i64;
    (first..=last).map(|k| k as f64 * step).collect()
}

/// A tick's label: no more digits than its step needs.
fn label(value: f64, step: f64) -> String {
    let digits = if step >= 1.0 || step <= 0.0 {
        0
    } else {
        (-step.log10().floor()) as usize
    };
    let text = format!("{value:.digits$}");
    // A value that rounds to zero is written without a sign.
    match text.strip_prefix('-') {
        Some(rest) if rest.chars().all(|c| c == '0' || c == '.') => rest.to_string(),
        _ => text,
    }
}

/// The SVG of `series` on shared axes; `None` when no series has a point (the page says
/// so in words instead). `class` is the `<svg>`'s class (its look in `app.css`).
pub fn line_chart(series: &[Series], class: &str, axes: &Axes) -> Option<String> {
    let xs = series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let ys = series.iter().flat_map(|s| {
        s.points
            .iter()
            .map(|p| p.1)
            .chain(s.band.iter().flat_map(|b| [b.0, b.1]))
    });
    let (x0, x1) = span(xs)?;
    let (y0, y1) = span(ys)?;
    // Counts start at zero; a flat line is drawn in the middle of a frame one unit
    // high (counts: from zero to one).
    let y0 = if axes.counts { y0.min(0.0) } else { y0 };
    let (y0, y1) = if y1 > y0 {
        (y0, y1)
    } else if axes.counts {
        (y0, y0 + 1.0)
    } else {
        (y0 - 0.5, y1 + 0.5)
    };
    let (x0, x1) = if x1 > x0 {
        (x0, x1)
    } else {
        (x0 - 0.5, x1 + 0.5)
    };
    let sx = |x: f64| LEFT + (x - x0) / (x1 - x0) * (WIDTH - LEFT - RIGHT);
    let sy = |y: f64| TOP + (y1 - y) / (y1 - y0) * (HEIGHT - TOP - BOTTOM);
    let mut svg = String::new();
    let _ = write!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="{class}" viewBox="0 0 {WIDTH} {HEIGHT}" preserveAspectRatio="none" aria-hidden="true">"#
    );
    let y_ticks = ticks(y0, y1, 6);
    let y_step = y_ticks
        .get(1)
        .zip(y_ticks.first())
        .map_or(1.0, |(b, a)| b - a);
    for t in &y_ticks {
        let y = sy(*t);
        let _ = write!(
            svg,
            r#"<line class="grid" x1="{LEFT}" x2="{:.1}" y1="{y:.1}" y2="{y:.1}"/><text class="tick" x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
            WIDTH - RIGHT,
            LEFT - 4.0,
            y + 4.0,
            label(*t, y_step)
        );
    }
    let mut x_ticks = ticks(x0, x1, 6);
    if axes.whole_x {
        x_ticks.retain(|t| t.fract() == 0.0);
    }
    let x_step = x_ticks
        .get(1)
        .zip(x_ticks.first())
        .map_or(1.0, |(b, a)| b - a);
    for t in &x_ticks {
        let x = sx(*t);
        let _ = write!(
            svg,
            r#"<text class="tick" x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            HEIGHT - 6.0,
            label(*t, x_step)
        );
    }
    // The axes' titles.
    let _ = write!(
        svg,
        r#"<text class="axis-title" x="{:.1}" y="{:.1}" text-anchor="middle">{}</text><text class="axis-title" x="14" y="{:.1}" text-anchor="middle" transform="rotate(-90 14 {:.1})">{}</text>"#,
        (LEFT + WIDTH - RIGHT) / 2.0,
        HEIGHT - 4.0,
        text(axes.x),
        (TOP + HEIGHT - BOTTOM) / 2.0,
        (TOP + HEIGHT - BOTTOM) / 2.0,
        text(axes.y)
    );
    for (i, s) in series.iter().enumerate() {
        let i = i % PALETTE;
        if s.band.len() == s.points.len() && !s.band.is_empty() {
            let mut d = String::new();
            for (k, (p, b)) in s.points.iter().zip(&s.band).enumerate() {
                let _ = write!(
                    d,
                    "{}{:.1},{:.1}",
                    if k == 0 { "M" } else { "L" },
                    sx(p.0),
                    sy(b.1)
                );
            }
            for (p, b) in s.points.iter().zip(&s.band).rev() {
                let _ = write!(d, "L{:.1},{:.1}", sx(p.0), sy(b.0));
            }
            let _ = write!(svg, r#"<path class="band s{i}" d="{d}Z"/>"#);
        }
        if s.points.is_empty() {
            continue;
        }
        let mut d = String::new();
        for (k, p) in s.points.iter().enumerate() {
            let _ = write!(
                d,
                "{}{:.1},{:.1}",
                if k == 0 { "M" } else { "L" },
                sx(p.0),
                sy(p.1)
            );
        }
        let _ = write!(
            svg,
            r#"<path class="line s{i}" data-points="{}" d="{d}"/>"#,
            s.points.len()
        );
        // A dot per point, its value under the pointer (`<title>`): a single point is
        // a dot that shows.
        let single = if s.points.len() == 1 { " single" } else { "" };
        for (k, p) in s.points.iter().enumerate() {
            let band = s
                .band
                .get(k)
                .filter(|_| s.band.len() == s.points.len())
                .map(|(lo, hi)| format!(" (95%: {} to {})", value(*lo), value(*hi)))
                .unwrap_or_default();
            let _ = write!(
                svg,
                r#"<circle class="dot s{i}{single}" cx="{:.1}" cy="{:.1}" r="4"><title>{} {}: {}{band}</title></circle>"#,
                sx(p.0),
                sy(p.1),
                text(axes.x),
                value(p.0),
                value(p.1)
            );
        }
    }
    svg.push_str("</svg>");
    Some(svg)
}

/// A value as a point's title says it: whole numbers as they are, others to 3
/// significant digits at most past the point (`0.125`, `1534`, `12.3`).
fn value(v: f64) -> String {
    if v.fract() == 0.0 || v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}

/// The least and greatest finite values; `None` when there is none.
fn span(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    values
        .filter(|v| v.is_finite())
        .fold(None, |acc: Option<(f64, f64)>, v| {
            Some(acc.map_or((v, v), |(lo, hi)| (lo.min(v), hi.max(v))))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    const AXES: Axes = Axes {
        x: "set number",
        y: "rating (Elo)",
        whole_x: true,
        counts: false,
    };

    #[test]
    fn ticks_are_round_and_cover_the_range() {
        assert_eq!(ticks(0.0, 10.0, 5), [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        assert_eq!(ticks(1412.0, 1608.0, 4), [1450.0, 1500.0, 1550.0, 1600.0]);
        assert_eq!(ticks(-0.3, 0.3, 3), [-0.2, 0.0, 0.2]);
        assert_eq!(ticks(5.0, 5.0, 4), [5.0]);
        assert!(ticks(f64::NAN, 1.0, 4).is_empty());
        assert!(ticks(2.0, 1.0, 4).is_empty());
        assert_eq!(label(0.2, 0.2), "0.2");
        assert_eq!(label(1500.0, 50.0), "1500");
        assert_eq!(label(-0.0, 0.2), "0.0");
    }

    /// A path per series with exactly one point per value (an `M`, then an `L` per
    /// further point), a band that goes out along the highs and back along the lows,
    /// and coordinates inside the frame.
    #[test]
    fn each_series_is_a_path_with_a_point_per_value() {
        let a = Series {
            points: vec![(1.0, 1500.0), (2.0, 1520.0), (4.0, 1490.0)],
            band: vec![(1400.0, 1600.0), (1450.0, 1590.0), (1440.0, 1540.0)],
        };
        let b = Series {
            points: vec![(2.0, 1480.0), (4.0, 1510.0)],
            band: Vec::new(),
        };
        let svg = line_chart(&[a, b], "rating-chart", &AXES).expect("a chart");
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"rating-chart\""));
        assert!(svg.ends_with("</svg>"));
        let line = |i: usize| {
            let start = svg.find(&format!("class=\"line s{i}\"")).expect("line");
            let d = &svg[start..];
            let d = &d[d.find(" d=\"").expect("d") + 4..];
            d[..d.find('"').expect("end")].to_string()
        };
        for (i, n) in [(0, 3), (1, 2)] {
            let d = line(i);
            assert_eq!(d.matches('M').count(), 1, "{d}");
            assert_eq!(d.matches('L').count(), n - 1, "{d}");
            assert!(svg.contains(&format!("class=\"line s{i}\" data-points=\"{n}\"")));
        }
        // The first point at the left edge; the highest value (the band's 1600) at the
        // top edge, the lowest (the band's 1400) at the bottom.
        assert!(line(0).starts_with("M70.0,"), "{}", line(0));
        let band = &svg[svg.find("class=\"band s0\"").expect("band")..];
        assert!(band.contains("M70.0,8.0"), "{band}");
        assert!(band.contains("L70.0,220.0Z"), "{band}");
        assert_eq!(svg.matches("class=\"band").count(), 1);
        // The axes' titles; a dot per point with its value (and band) as its title.
        assert!(svg.contains(">set number</text>"), "{svg}");
        assert!(svg.contains(">rating (Elo)</text>"), "{svg}");
        assert_eq!(svg.matches("<circle class=\"dot s0\"").count(), 3);
        assert_eq!(svg.matches("<circle class=\"dot s1\"").count(), 2);
        assert!(
            svg.contains("<title>set number 2: 1520 (95%: 1450 to 1590)</title>"),
            "{svg}"
        );
        assert!(svg.contains("<title>set number 4: 1510</title>"), "{svg}");
        assert!(svg.contains(">1500</text>"));
        // Whole set numbers: 1 to 4 have no tick between two.
        assert!(!svg.contains(">1.5</text>"), "{svg}");
    }

    #[test]
    fn no_point_no_chart_and_a_single_point_is_drawn() {
        assert_eq!(line_chart(&[], "c", &AXES), None);
        assert_eq!(line_chart(&[Series::default()], "c", &AXES), None);
        let one = Series {
            points: vec![(3.0, 7.0)],
            band: Vec::new(),
        };
        let svg = line_chart(&[one], "c", &AXES).expect("a chart");
        assert!(svg.contains("data-points=\"1\""));
        assert!(!svg.contains("NaN") && !svg.contains("inf"));
        // A single point is a dot that shows.
        assert_eq!(svg.matches("class=\"dot s0 single\"").count(), 1, "{svg}");
        // Counts that are all zero: the axis from 0 to 1, no tick below zero.
        let zeros = Series {
            points: vec![(3.0, 0.0), (4.0, 0.0)],
            band: Vec::new(),
        };
        let counts = Axes {
            counts: true,
            ..AXES
        };
        let svg = line_chart(&[zeros], "c", &counts).expect("a chart");
        assert!(!svg.contains(">-"), "{svg}");
        assert!(
            svg.contains(">0.0</text>") || svg.contains(">0</text>"),
            "{svg}"
        );
    }
}
