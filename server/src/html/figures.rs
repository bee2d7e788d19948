//! The pages' charts: a chart with its legend (the SVG of `crate::charts`, numbers
//! only), axes by set number, and the series of the rating history (a bot's rating, a
//! pair's difference, the first-move advantage).

use league::RatingPoint;
use maud::{html, Markup, PreEscaped};

use crate::charts::{self, Series};

/// A chart with its legend: the SVG (numbers only, `charts::line_chart`), then the
/// series' names as escaped text, each with its colour's swatch; a sentence instead
/// when there is nothing to draw yet.
pub(super) fn chart(
    label: &str,
    class: &str,
    axes: &charts::Axes,
    series: &[Series],
    names: &[String],
    none: &str,
) -> Markup {
    match charts::line_chart(series, class, axes) {
        None => html! { p class="muted" { (none) } },
        Some(svg) => html! {
            figure class="chart" aria-label=(label) {
                (PreEscaped(svg))
                @if names.len() > 1 || names.first().is_some_and(|n| !n.is_empty()) {
                    figcaption {
                        ul class="legend" {
                            @for (i, name) in names.iter().enumerate() {
                                li { span class=(format!("swatch s{}", i % charts::PALETTE)) {} (name) }
                            }
                        }
                    }
                }
            }
        },
    }
}

/// The axes of a chart over the rating history or a bot's sets: set numbers across,
/// `y` up (a count when `counts`).
pub(super) fn by_set<'a>(y: &'a str, counts: bool) -> charts::Axes<'a> {
    charts::Axes {
        x: "set number",
        y,
        whole_x: true,
        counts,
    }
}

/// One series of the rating history: `bot`'s rating with its 95% band at each point
/// that rated it (the bot `""`: the first-move advantage).
pub(super) fn history_series(history: &[RatingPoint], bot: &str) -> Series {
    let mut s = Series::default();
    for p in history {
        if let Some((_, value, se)) = p.ratings.iter().find(|(b, _, _)| b == bot) {
            s.points.push((p.number as f64, *value));
            s.band.push((
                value - crate::state::Z95 * se,
                value + crate::state::Z95 * se,
            ));
        }
    }
    s
}

/// The ratings over time of `bots` (in their order) and the first-move advantage.
pub fn history_charts(history: &[RatingPoint], bots: &[&str]) -> Markup {
    let series: Vec<Series> = bots.iter().map(|b| history_series(history, b)).collect();
    let names: Vec<String> = bots.iter().map(|b| b.to_string()).collect();
    let advantage = history_series(history, "");
    // Close bots apart: each one's difference from the leader (the first of `bots`).
    let behind: Vec<Series> = bots
        .iter()
        .skip(1)
        .map(|b| difference_series(history, b, bots[0]))
        .collect();
    let behind_names: Vec<String> = bots.iter().skip(1).map(|b| b.to_string()).collect();
    html! {
        h3 { "Ratings over time" }
        p class="muted" { "Each bot's rating after each point of the history (the set number below), with its 95% interval; a point's value under the pointer." }
        (chart("ratings over time", "rating-chart", &by_set("rating (Elo)", false), &series, &names, "No ratings yet."))
        @if let (Some(leader), false) = (bots.first(), behind.is_empty()) {
            h3 { "Behind the leader" }
            p class="muted" { "Each bot's rating less that of " (leader) " (the leader now), after each point of the history: close bots apart." }
            (chart("ratings less the leader's", "behind-chart", &by_set(&format!("difference from {leader} (Elo)"), false), &behind, &behind_names, "No ratings yet."))
        }
        h3 { "First-move advantage over time" }
        (chart("first-move advantage over time", "advantage-chart", &by_set("advantage (Elo)", false), &[advantage], &[String::new()], "No ratings yet."))
    }
}

/// The difference of `a`'s rating less `b`'s at each point of the history that rated
/// both (no band: the history keeps each rating's own error, not their covariance).
pub(super) fn difference_series(history: &[RatingPoint], a: &str, b: &str) -> Series {
    let rating = |p: &RatingPoint, bot: &str| {
        p.ratings
            .iter()
            .find(|(name, _, _)| name == bot)
            .map(|(_, v, _)| *v)
    };
    Series {
        points: history
            .iter()
            .filter_map(|p| Some((p.number as f64, rating(p, a)? - rating(p, b)?)))
            .collect(),
        band: Vec::new(),
    }
}
