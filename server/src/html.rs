//! The dashboard's pages, rendered on the server: the standings (`/`, with the
//! cross-table, the recent sets and the workers), a bot (`/bots/NAME`) and a set
//! (`/sets/SET`) are complete HTML without scripts (for `curl`, a text browser, or a
//! browser with scripts off). `app.js` then keeps them live: it fetches the same page
//! again as results arrive and puts its `<main>` in place, and draws the live games.
//!
//! The HTML is built with `maud`: its `html!` macro escapes every value put into text
//! or an attribute, so bot-supplied text (names, commands, fault details, stderr) is
//! always text. No inline script or style: the pages' content policy (`web::CSP`)
//! forbids them; every look is a class of `app.css`.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use league::{BotStanding, HeadToHead, RatingPoint, RatingView, RatingsView, Standings, WorkerRow};
use maud::{html, Markup, PreEscaped, DOCTYPE};
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use serde::Deserialize;
use serde_json::Value;

use crate::charts::{self, Series};
use crate::state::{AppState, Problem, SetView};

/// Recent sets on the standings page.
pub const RECENT_SETS: usize = 20;
/// Sets on a bot's page.
pub const BOT_SETS: usize = 100;
/// A set's games listed one by one in a list's cell; a longer set is counted.
const GAMES_LISTED: usize = 3;

/// What a path segment may hold as it is: the rest is percent-encoded.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.');

fn encode(text: &str) -> String {
    utf8_percent_encode(text, SEGMENT).to_string()
}

/// A bot's page.
pub fn bot_href(name: &str) -> String {
    format!("/bots/{}", encode(name))
}

/// A bot's page with only its sets against `vs`.
pub fn pair_href(name: &str, vs: &str) -> String {
    format!("/bots/{}?vs={}", encode(name), encode(vs))
}

/// A set's page.
pub fn set_href(set: &str) -> String {
    format!("/sets/{}", encode(set))
}

/// A set's replay page.
pub fn replay_href(set: &str) -> String {
    format!("/sets/{}/replay", encode(set))
}

fn log_href(set: &str) -> String {
    format!("/api/sets/{}/log", encode(set))
}

/// The line under the title: paused or not, sets running, played, watchers.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Status {
    /// No set is started.
    pub paused: bool,
    /// Below the free-space floor: why no set starts.
    pub low_space: Option<String>,
    /// The sets this server plays.
    pub running: Vec<String>,
    /// Every set being played (the workers' too, with a PostgreSQL store): the
    /// standings' progress.
    pub sets_running: u64,
    /// Sets finished, as `/api/status` counts them.
    pub sets_done: u64,
    /// Live streams open.
    pub watchers: usize,
}

impl Status {
    fn of(app: &AppState) -> Status {
        let s = app.snapshot();
        Status {
            paused: s.paused,
            low_space: s.low_space.clone(),
            running: app.hub.running(),
            sets_running: s.standings.progress.sets_running,
            sets_done: s.standings.progress.sets_done + s.standings.progress.sets_done_elsewhere,
            watchers: app.hub.watchers(),
        }
    }

    /// As `app.js` writes it.
    fn line(&self) -> String {
        format!(
            "{}{} running, {} sets played, {} watching",
            match (&self.low_space, self.paused) {
                (Some(low), _) => format!("paused: {low} · "),
                (None, true) => "paused · ".to_string(),
                (None, false) => String::new(),
            },
            self.sets_running,
            self.sets_done,
            self.watchers
        )
    }
}

/// A whole page: `main` in the dashboard's frame (title line, live games, footer).
pub fn page(title: &str, status: &Status, main: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · hus serve" }
                link rel="stylesheet" href="/app.css";
                link rel="icon" type="image/svg+xml" href="/favicon.svg";
                script src="/board.js" defer {}
                script src="/app.js" defer {}
            }
            body {
                a class="skip" href="#view" { "Skip to the page's content" }
                header {
                    h1 { a href="/" { "hus serve" } }
                    nav aria-label="pages" {
                        a href="/" { "standings" } " · " a href="/sets" { "sets" } " · " a href="/workers" { "workers" }
                    }
                    p id="status" role="status" { (status.line()) }
                }
                section id="live-section" aria-labelledby="live-title" {
                    h2 id="live-title" { "Live games" }
                    p id="live-empty" hidden[status.sets_running > 0 || !status.running.is_empty()] {
                        "No set is being played right now."
                    }
                    div id="live" {}
                    // The sets that finished last (app.js: a few, in one row).
                    div id="live-done" role="region" aria-label="finished just now" {}
                    // Without scripts, the running sets are listed (their boards and
                    // moves need the script).
                    @if !status.running.is_empty() {
                        noscript {
                            ul class="live-static" {
                                @for set in &status.running {
                                    li { a href=(replay_href(set)) { (set) } " (replay so far)" }
                                }
                            }
                        }
                    }
                }
                main id="view" { (main) }
                footer {
                    "Ratings on the Elo scale with 95% intervals. The API: "
                    code { "/api/" } " (docs/api.md)."
                }
            }
        }
    }
}

fn fmt(x: Option<f64>, digits: usize) -> String {
    match x {
        Some(x) => format!("{x:.digits$}"),
        None => "–".to_string(),
    }
}

fn rating(b: &BotStanding) -> String {
    match b.rating {
        Some(r) => format!("{:.0} ({:.0} to {:.0})", r.value, r.low, r.high),
        None => "–".to_string(),
    }
}

fn wdl(r: &league::Record3) -> String {
    format!("{}-{}-{}", r.won, r.drawn, r.lost)
}

fn bot_link(name: &str) -> Markup {
    html! { a class="bot" href=(bot_href(name)) { (name) } }
}

/// A table in a wrapper that scrolls sideways on a narrow screen (reachable by Tab,
/// labelled by its caption).
fn scroller(label: &str, table: Markup) -> Markup {
    html! {
        div class="scroll" role="region" aria-label=(label) tabindex="0" { (table) }
    }
}

/// The standings table, best first.
pub fn standings_table(st: &Standings) -> Markup {
    scroller(
        "standings",
        html! {
            table class="standings" {
                thead { tr {
                    th class="num" scope="col" { "#" }
                    th scope="col" { "bot" }
                    th class="num" scope="col" { "rating (95%)" }
                    th class="num" scope="col" { "games W-D-L" }
                    th class="num" scope="col" { "sets W-D-L" }
                    th class="num" scope="col" { "points" }
                    th class="num" scope="col" { "faults" }
                    th class="num" scope="col" { "ms/move" }
                } }
                tbody {
                    @for b in &st.bots {
                        tr data-bot=(b.name) {
                            td class="num rank" { (b.rank) }
                            td { (bot_link(&b.name)) @if !b.active { " (removed)" } }
                            td class="num rating" { (rating(b)) }
                            td class="num" { (wdl(&b.games)) }
                            td class="num" { (wdl(&b.sets)) }
                            td class="num points" { (b.points) }
                            td class="num" { (b.faults.total) }
                            td class="num" { (fmt(b.mean_move_ms, 1)) }
                        }
                    }
                }
            }
        },
    )
}

/// The bots in rating order (the unrated after, in rank order): the cross-table's.
pub fn rating_order(st: &Standings) -> Vec<&BotStanding> {
    let mut bots: Vec<&BotStanding> = st.bots.iter().collect();
    bots.sort_by(|x, y| match (x.rating, y.rating) {
        (Some(a), Some(b)) => b.value.total_cmp(&a.value).then(x.rank.cmp(&y.rank)),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => x.rank.cmp(&y.rank),
    });
    bots
}

/// Each pair's results and likelihood of superiority, found by the pair's names: the
/// cross-table's n² cells each looked up in constant time.
pub struct PairIndex<'s> {
    results: HashMap<(&'s str, &'s str), &'s HeadToHead>,
    /// The rating fit's comparison of each pair, by (better-rated, other).
    fit: HashMap<(&'s str, &'s str), (RatingView, f64)>,
}

/// What the rating fit says of one bot against another: the difference of their
/// ratings (the first's less the other's) with its 95% interval, and the likelihood
/// that the first is the stronger.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Comparison {
    /// rating(first) − rating(other), with its interval.
    pub difference: RatingView,
    /// The probability that the first is stronger.
    pub los: f64,
}

impl Comparison {
    /// Settled: the 95% interval of the difference does not hold zero.
    pub fn settled(&self) -> bool {
        self.difference.low > 0.0 || self.difference.high < 0.0
    }
}

impl<'s> PairIndex<'s> {
    /// The index of `st`'s head-to-head results and rating fit.
    pub fn new(st: &'s Standings) -> PairIndex<'s> {
        PairIndex {
            results: st
                .head_to_head
                .iter()
                .map(|h| ((h.a.as_str(), h.b.as_str()), h))
                .collect(),
            fit: st
                .ratings
                .iter()
                .flat_map(|r| &r.pairs)
                .map(|p| ((p.a.as_str(), p.b.as_str()), (p.difference, p.los)))
                .collect(),
        }
    }

    /// `row`'s results against `col`: its points, the opponent's, and its games W-D-L.
    pub fn result(&self, row: &'s str, col: &'s str) -> Option<([u64; 2], league::Record3)> {
        if let Some(h) = self.results.get(&(row, col)) {
            return Some((h.points, h.games));
        }
        let h = self.results.get(&(col, row))?;
        let g = h.games;
        let mine = league::Record3 {
            played: g.played,
            won: g.lost,
            drawn: g.drawn,
            lost: g.won,
        };
        Some(([h.points[1], h.points[0]], mine))
    }

    /// The probability that `row` is stronger than `col`, from the rating fit.
    pub fn los(&self, row: &'s str, col: &'s str) -> Option<f64> {
        self.compare(row, col).map(|c| c.los)
    }

    /// `row` against `col` as the rating fit has it (seen from `row`'s side).
    pub fn compare(&self, row: &'s str, col: &'s str) -> Option<Comparison> {
        if let Some((difference, los)) = self.fit.get(&(row, col)) {
            return Some(Comparison {
                difference: *difference,
                los: *los,
            });
        }
        let (d, los) = self.fit.get(&(col, row))?;
        Some(Comparison {
            difference: RatingView {
                value: -d.value,
                std_error: d.std_error,
                low: -d.high,
                high: -d.low,
            },
            los: 1.0 - los,
        })
    }
}

/// `a` against `b` as the rating fit `ratings` has it, from `a`'s side (a scan of its
/// pairs: for one bot's opponents; the cross-table's n² cells use [`PairIndex`]).
pub fn compare_in(ratings: Option<&RatingsView>, a: &str, b: &str) -> Option<Comparison> {
    ratings?.pairs.iter().find_map(|p| {
        if p.a == a && p.b == b {
            Some(Comparison {
                difference: p.difference,
                los: p.los,
            })
        } else if p.a == b && p.b == a {
            Some(Comparison {
                difference: RatingView {
                    value: -p.difference.value,
                    std_error: p.difference.std_error,
                    low: -p.difference.high,
                    high: -p.difference.low,
                },
                los: 1.0 - p.los,
            })
        } else {
            None
        }
    })
}

/// The colour class of a pair's cell, from the row's side: `pair-stronger` or
/// `pair-weaker` when the 95% interval of the difference leaves out zero (settled),
/// `pair-open` when it holds zero (the question is open, whatever the likelihood),
/// `los-none` without a fit.
pub fn pair_class(c: Option<Comparison>) -> &'static str {
    match c {
        Some(c) if c.los.is_finite() && c.difference.value.is_finite() => {
            if c.difference.low > 0.0 {
                "pair-stronger"
            } else if c.difference.high < 0.0 {
                "pair-weaker"
            } else {
                "pair-open"
            }
        }
        _ => "los-none",
    }
}

/// A likelihood of superiority in whole per cent; never 0 or 100 unless it is exactly
/// that (`< 1%`, `> 99%`).
pub fn percent(p: f64) -> String {
    let r = (p * 100.0).round();
    if r >= 100.0 && p < 1.0 {
        "> 99%".to_string()
    } else if r <= 0.0 && p > 0.0 {
        "< 1%".to_string()
    } else {
        format!("{r:.0}%")
    }
}

/// A rating difference with its sign (`+23`, `−5`, `0`).
fn signed(x: f64) -> String {
    let r = x.round();
    if r > 0.0 {
        format!("+{r:.0}")
    } else if r < 0.0 {
        format!("−{:.0}", -r)
    } else {
        "0".to_string()
    }
}

/// Every pair's score, row against column, the bots in rating order; each cell
/// coloured by the row's likelihood of superiority over the column, and a link to the
/// pair's sets.
pub fn cross_table(st: &Standings) -> Markup {
    let bots = rating_order(st);
    let pairs = PairIndex::new(st);
    scroller(
        "cross-table",
        html! {
            table class="cross" {
                caption {
                    "Row against column: points (games) and the likelihood that the row's bot is the stronger. "
                    "Green or red: settled (the 95% interval of their rating difference leaves out zero); "
                    "striped: still open."
                }
                thead { tr {
                    th scope="col" { "" }
                    @for (i, c) in bots.iter().enumerate() {
                        th scope="col" class="num" title=(c.name) { abbr title=(c.name) { (i + 1) } }
                    }
                } }
                tbody {
                    @for (i, r) in bots.iter().enumerate() {
                        tr data-bot=(r.name) {
                            th scope="row" { (i + 1) ". " (bot_link(&r.name)) }
                            @for c in &bots {
                                @if r.name == c.name {
                                    td class="num self" data-vs=(c.name) { "—" }
                                } @else {
                                    @match pairs.result(&r.name, &c.name) {
                                        Some((points, games)) => {
                                            @let cmp = pairs.compare(&r.name, &c.name);
                                            @let label = format!(
                                                "{} against {}: {}–{} in {} games ({}){}",
                                                r.name, c.name, points[0], points[1], games.played, wdl(&games),
                                                cmp.map(|c| format!(", likelihood of superiority {}, {}", percent(c.los),
                                                    if c.settled() { "settled" } else { "open" })).unwrap_or_default());
                                            td class={ "num " (pair_class(cmp)) } data-vs=(c.name)
                                                data-points=(format!("{}-{}", points[0], points[1]))
                                                data-games=(games.played) {
                                                a href=(pair_href(&r.name, &c.name)) aria-label=(label) title=(label) {
                                                    (points[0]) "–" (points[1]) " (" (games.played) ")"
                                                    @if let Some(cmp) = cmp {
                                                        " " span class="los" { (percent(cmp.los)) }
                                                    }
                                                }
                                            }
                                        }
                                        None => { td class="num" data-vs=(c.name) { "" } }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        },
    )
}

/// A set's games in a cell: each game for a short set, a count per bot for a long one.
fn games_cell(s: &SetView) -> String {
    if s.games.len() <= GAMES_LISTED {
        return s
            .games
            .iter()
            .map(|g| format!("{} by {}", g.winner.as_deref().unwrap_or("draw"), g.reason))
            .collect::<Vec<_>>()
            .join("; ");
    }
    let won = |name: &str| {
        s.games
            .iter()
            .filter(|g| g.winner.as_deref() == Some(name))
            .count()
    };
    let drawn = s.games.iter().filter(|g| g.winner.is_none()).count();
    format!(
        "{} games: {} won {}, {} won {}, {drawn} drawn",
        s.games.len(),
        s.bots[0],
        won(&s.bots[0]),
        s.bots[1],
        won(&s.bots[1])
    )
}

/// A set's replay and log links; a pruned log has neither.
fn log_links(s: &SetView) -> Markup {
    html! {
        @if s.pruned {
            span class="muted pruned" { "log pruned" }
        } @else {
            a class="replay" href=(replay_href(&s.set)) aria-label=(format!("replay of {}", s.set)) { "replay" }
            " "
            a href=(log_href(&s.set)) aria-label=(format!("log of {}", s.set)) { "log" }
        }
    }
}

/// A list of finished sets, newest first.
pub fn sets_table(label: &str, sets: &[SetView]) -> Markup {
    scroller(
        label,
        html! {
            table class="sets" {
                thead { tr {
                    th scope="col" { "set" }
                    th scope="col" { "bots" }
                    th class="num" scope="col" { "points" }
                    th scope="col" { "winner" }
                    th scope="col" { "games" }
                    th scope="col" { span class="visually-hidden" { "log" } }
                } }
                tbody {
                    @for s in sets {
                        tr data-set=(s.set) {
                            td { a href=(set_href(&s.set)) { (s.set) } }
                            td { (bot_link(&s.bots[0])) " vs " (bot_link(&s.bots[1])) }
                            td class="num" { (s.points[0]) "–" (s.points[1]) }
                            td { (s.winner.as_deref().unwrap_or("drawn")) }
                            td { (games_cell(s)) }
                            td { (log_links(s)) }
                        }
                    }
                }
            }
        },
    )
}

fn workers_table(rows: &[WorkerRow]) -> Markup {
    scroller(
        "workers",
        html! {
            table class="workers" {
                thead { tr {
                    th scope="col" { "worker" }
                    th scope="col" { "host" }
                    th class="num" scope="col" { "last heartbeat" }
                    th class="num" scope="col" { "in flight" }
                    th class="num" scope="col" { "sets/hour" }
                    th class="num" scope="col" { "finished" }
                    th class="num" scope="col" { "duplicates" }
                    th scope="col" { "problem" }
                } }
                tbody {
                    @for w in rows {
                        // As /api/workers rounds it: tenths of a second.
                        @let ago = (w.seen_ago * 10.0).round() / 10.0;
                        tr data-worker=(w.name) {
                            td { (w.name) }
                            td { (w.host) }
                            td class="num" {
                                @if w.stopped { "stopped " (format!("{ago:.0}")) " s ago" }
                                @else { (format!("{ago:.1}")) " s ago" }
                            }
                            td class="num" { (w.in_flight) }
                            td class="num" { (w.last_hour) }
                            td class="num" { (w.finished) }
                            td class="num" { (w.duplicates) }
                            @match &w.problem {
                                Some(p) => td class="problem" {
                                    (p) "; leaves " (w.leaves.join(" and ")) "'s sets to the others"
                                },
                                None => td {},
                            }
                        }
                    }
                }
            }
        },
    )
}

/// The workers page's content: the workers of a shared store (`hus workers`' table),
/// and the line that says when the league is stuck.
pub fn workers_main(workers: &[WorkerRow], stuck: Option<&str>) -> Markup {
    html! {
        h2 { "Workers" }
        @if workers.is_empty() {
            p { "No worker: every set is played by this server (hus worker processes share a PostgreSQL store: docs/deploy.md)." }
        } @else {
            (workers_table(workers))
        }
        @if let Some(stuck) = stuck {
            p class="problem" data-stuck="" { (stuck) }
        }
    }
}

/// A chart with its legend: the SVG (numbers only, `charts::line_chart`), then the
/// series' names as escaped text, each with its colour's swatch; a sentence instead
/// when there is nothing to draw yet.
fn chart(
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
fn by_set<'a>(y: &'a str, counts: bool) -> charts::Axes<'a> {
    charts::Axes {
        x: "set number",
        y,
        whole_x: true,
        counts,
    }
}

/// One series of the rating history: `bot`'s rating with its 95% band at each point
/// that rated it (the bot `""`: the first-move advantage).
fn history_series(history: &[RatingPoint], bot: &str) -> Series {
    let mut s = Series::default();
    for p in history {
        if let Some((_, value, se)) = p.ratings.iter().find(|(b, _, _)| b == bot) {
            s.points.push((p.number as f64, *value));
            s.band
                .push((value - crate::web::Z95 * se, value + crate::web::Z95 * se));
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

/// The standings page's content: the table, the cross-table, the recent sets, the
/// workers of a shared store and the problems.
pub fn standings_main(
    st: &Standings,
    recent: &[SetView],
    total_sets: u64,
    workers: &[WorkerRow],
    stuck: Option<&str>,
    problems: &[Problem],
    history: &[RatingPoint],
) -> Markup {
    let rated: Vec<&str> = rating_order(st)
        .iter()
        .filter(|b| b.rating.is_some())
        .map(|b| b.name.as_str())
        .collect();
    html! {
        h2 { "Standings" }
        (standings_table(st))
        p class="muted" {
            (st.games_played) " games in " (total_sets) " sets; first mover "
            (format!("{}-{}-{}", st.first_mover.won, st.first_mover.drawn, st.first_mover.lost))
        }
        @if st.bots.len() > 1 {
            h2 { "Cross-table" }
            (cross_table(st))
        }
        (history_charts(history, &rated))
        h2 { "Recent sets" }
        (sets_table("recent sets", recent))
        @if !workers.is_empty() {
            h2 { "Workers" }
            (workers_table(workers))
        }
        @if let Some(stuck) = stuck {
            p class="problem" data-stuck="" { (stuck) }
        }
        @for p in problems {
            p class="problem" { (p.at) " " (p.set) ": " (p.error) }
        }
    }
}

/// A bot's page's content: its figures, faults by kind, its latest faulted sets with
/// the end of their stderr, and its sets.
pub fn bot_main(b: &BotStanding, sets: &[SetView], faulted: &[Value]) -> Markup {
    bot_main_with(b, sets, faulted, &[], None, &[], 0)
}

/// The opponents' rows of the cross-table for `bot`: (opponent, its points, the
/// opponent's, `bot`'s games and sets against it), in rank order.
fn opponents<'s>(
    head_to_head: &'s [HeadToHead],
    bot: &str,
) -> Vec<(&'s str, [u64; 2], league::Record3, league::Record3)> {
    let flip = |r: &league::Record3| league::Record3 {
        played: r.played,
        won: r.lost,
        drawn: r.drawn,
        lost: r.won,
    };
    head_to_head
        .iter()
        .filter_map(|h| {
            if h.a == bot {
                Some((h.b.as_str(), h.points, h.games, h.sets))
            } else if h.b == bot {
                Some((
                    h.a.as_str(),
                    [h.points[1], h.points[0]],
                    flip(&h.games),
                    flip(&h.sets),
                ))
            } else {
                None
            }
        })
        .collect()
}

/// Bins of a bot's mean move time per set: upper bounds in milliseconds (powers of
/// two from 1/8 ms), each with the sets whose mean is at most it and above the bin
/// before; the last bin takes every longer mean.
pub fn move_time_bins(means: &[f64]) -> Vec<(f64, usize)> {
    let mut bins: Vec<(f64, usize)> = (0..18).map(|k| (0.125 * f64::from(1u32 << k), 0)).collect();
    for &m in means.iter().filter(|m| m.is_finite()) {
        let i = bins
            .iter()
            .position(|(up, _)| m <= *up)
            .unwrap_or(bins.len() - 1);
        bins[i].1 += 1;
    }
    // From the first bin with a set to the last.
    let first = bins.iter().position(|b| b.1 > 0).unwrap_or(0);
    let last = bins.iter().rposition(|b| b.1 > 0).unwrap_or(0);
    bins[first..=last.max(first)].to_vec()
}

/// A bot's charts and tables beyond the figures: its rating over time, its results
/// against each opponent, its mean move time and faults per set over its latest sets,
/// and the distribution of its mean move times.
fn bot_charts(
    b: &BotStanding,
    sets: &[SetView],
    head_to_head: &[HeadToHead],
    ratings: Option<&RatingsView>,
    history: &[RatingPoint],
) -> Markup {
    let rating = history_series(history, &b.name);
    // Its latest sets, oldest first: its seat's mean move time and faults in each.
    let mut mine: Vec<(u64, Option<f64>, usize)> = sets
        .iter()
        .filter_map(|s| {
            let seat = s.bots.iter().position(|n| *n == b.name)?;
            let faults = s.faults.iter().filter(|f| f.bot == b.name).count();
            Some((s.number, s.mean_move_ms[seat], faults))
        })
        .collect();
    mine.sort_by_key(|m| m.0);
    let times = Series {
        points: mine
            .iter()
            .filter_map(|(n, ms, _)| ms.map(|ms| (*n as f64, ms)))
            .collect(),
        band: Vec::new(),
    };
    let faults = Series {
        points: mine
            .iter()
            .map(|(n, _, f)| (*n as f64, *f as f64))
            .collect(),
        band: Vec::new(),
    };
    let means: Vec<f64> = mine.iter().filter_map(|m| m.1).collect();
    let opponents = opponents(head_to_head, &b.name);
    html! {
        h3 { "Rating over time" }
        (chart("rating over time", "rating-chart", &by_set("rating (Elo)", false), &[rating], &[String::new()], "No rating yet."))
        @if !opponents.is_empty() {
            h3 { "Against each opponent" }
            (scroller("results against each opponent", html! {
                table class="opponents" {
                    thead { tr {
                        th scope="col" { "opponent" } th class="num" scope="col" { "points" }
                        th class="num" scope="col" { "games W-D-L" } th class="num" scope="col" { "sets W-D-L" }
                        th class="num" scope="col" { "Elo difference (95%)" }
                        th class="num" scope="col" { "likelihood stronger" }
                        th scope="col" { "" }
                    } }
                    tbody {
                        @for (other, points, games, sets) in &opponents {
                            @let cmp = compare_in(ratings, &b.name, other);
                            tr data-opponent=(other) {
                                td { (bot_link(other)) }
                                td class="num" { (points[0]) "–" (points[1]) }
                                td class="num" { (wdl(games)) }
                                td class="num" { (wdl(sets)) }
                                @match cmp {
                                    Some(c) => {
                                        td class="num difference" data-value=(c.difference.value) {
                                            (signed(c.difference.value)) " (" (signed(c.difference.low)) " to " (signed(c.difference.high)) ")"
                                        }
                                        td class={ "num los " (pair_class(cmp)) } data-los=(c.los) { (percent(c.los)) }
                                    }
                                    None => { td class="num" { "–" } td class="num" { "–" } }
                                }
                                td { a href=(pair_href(&b.name, other)) aria-label=(format!("{} against {}", b.name, other)) { "head to head" } }
                            }
                        }
                    }
                }
            }))
        }
        h3 { "Mean move time per set" }
        p class="muted" { "Milliseconds per move in each of its latest sets (by set number)." }
        (chart("mean move time per set", "time-chart", &by_set("ms per move", true), &[times], &[String::new()], "No moves yet."))
        h3 { "Faults per set" }
        (chart("faults per set", "fault-chart", &by_set("faults in the set", true), &[faults], &[String::new()], "No sets yet."))
        @if !means.is_empty() {
            h3 { "Move times" }
            (scroller("distribution of mean move times", html! {
                table class="move-times" {
                    thead { tr { th scope="col" { "mean ms per move, up to" } th class="num" scope="col" { "sets" } } }
                    tbody {
                        @for (up, n) in move_time_bins(&means) {
                            tr { td { (fmt(Some(up), 3)) } td class="num" { (n) } }
                        }
                    }
                }
            }))
        }
    }
}

/// [`bot_main`] with the standings' cross-table rows and the rating history: the
/// bot's charts too.
pub fn bot_main_with(
    b: &BotStanding,
    sets: &[SetView],
    faulted: &[Value],
    head_to_head: &[HeadToHead],
    ratings: Option<&RatingsView>,
    history: &[RatingPoint],
    bots: usize,
) -> Markup {
    html! {
        h2 { (b.name) }
        p { "command: " code { (b.command) } @if !b.active { " (removed)" } }
        p {
            span class="rank" data-rank=(b.rank) { "rank " (b.rank) @if bots > 0 { " of " (bots) } } "; "
            "rating " (rating(b)) "; games " (wdl(&b.games)) "; sets " (wdl(&b.sets)) "; "
            (b.moves) " moves, mean " (fmt(b.mean_move_ms, 2)) " ms per move"
        }
        h3 { "Faults by kind (" (b.faults.total) ")" }
        @if b.faults.by_kind.is_empty() {
            p { "none" }
        } @else {
            (scroller("faults by kind", html! {
                table { thead { tr { th scope="col" { "kind" } th class="num" scope="col" { "count" } } }
                    tbody { @for (k, n) in &b.faults.by_kind { tr { td { (k) } td class="num" { (n) } } } } }
            }))
        }
        @if !faulted.is_empty() {
            h3 { "Latest faulted sets" }
            @for f in faulted {
                @let set = f["set"].as_str().unwrap_or("");
                section class="faulted" data-set=(set) {
                    h4 { a href=(set_href(set)) { (set) } }
                    ul {
                        @for fault in f["faults"].as_array().map(Vec::as_slice).unwrap_or_default() {
                            li {
                                // The log's ply (from 0), as the API has it; the replay and
                                // the live view count plies from 1.
                                "game " (fault["game"]) ", log ply " (fault["ply"]) ": "
                                (fault["kind"].as_str().unwrap_or("")) " — " (fault["detail"].as_str().unwrap_or(""))
                            }
                        }
                    }
                    @if let Some(lines) = f["stderr"].as_array() {
                        // The file holds the whole set's stderr, every game's: its end
                        // need not be the faulted game's.
                        p class="muted" { "The end of its stderr in this set (all its games):" }
                        pre class="stderr" { @for l in lines { (l.as_str().unwrap_or("")) "\n" } }
                    }
                }
            }
        }
        (bot_charts(b, sets, head_to_head, ratings, history))
        h3 { "Sets" }
        (sets_table("sets", sets))
    }
}

/// The difference of `a`'s rating less `b`'s at each point of the history that rated
/// both (no band: the history keeps each rating's own error, not their covariance).
fn difference_series(history: &[RatingPoint], a: &str, b: &str) -> Series {
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

/// The head-to-head page's content (`/bots/A?vs=B`), from `a`'s side: their score,
/// games and sets W-D-L, the rating fit's difference with its 95% interval and the
/// likelihood that `a` is the stronger, the difference over time, their sets.
pub fn pair_main(
    a: &BotStanding,
    b: &BotStanding,
    st: &Standings,
    history: &[RatingPoint],
    sets: &[SetView],
) -> Markup {
    let pairs = PairIndex::new(st);
    let results = pairs.result(&a.name, &b.name);
    let cmp = pairs.compare(&a.name, &b.name);
    let sets_wdl = opponents(&st.head_to_head, &a.name)
        .into_iter()
        .find(|o| o.0 == b.name)
        .map(|o| o.3);
    let difference = difference_series(history, &a.name, &b.name);
    html! {
        h2 { (a.name) " vs " (b.name) }
        p class="pair-links" {
            (bot_link(&a.name)) " (rank " (a.rank) ") · " (bot_link(&b.name)) " (rank " (b.rank) ") · "
            a href=(pair_href(&b.name, &a.name)) { "seen from " (b.name) }
        }
        @match results {
            Some((points, games)) => {
                dl class="pair-figures" {
                    dt { "score" } dd class="score" { (points[0]) "–" (points[1]) " in points" }
                    dt { "games W-D-L" } dd class="games" { (wdl(&games)) }
                    @if let Some(sets) = sets_wdl { dt { "sets W-D-L" } dd class="sets" { (wdl(&sets)) } }
                    @match cmp {
                        Some(c) => {
                            dt { "Elo difference (" (a.name) " − " (b.name) ")" }
                            dd class="difference" data-value=(c.difference.value) data-low=(c.difference.low) data-high=(c.difference.high) {
                                (signed(c.difference.value)) " (95% interval " (signed(c.difference.low)) " to " (signed(c.difference.high)) ")"
                            }
                            dt { "likelihood that " (a.name) " is the stronger" }
                            dd class="los" data-los=(c.los) {
                                (percent(c.los)) " · "
                                @if c.settled() { "settled: the interval leaves out zero" } @else { "open: the interval holds zero" }
                            }
                        }
                        None => { dt { "Elo difference" } dd { "not rated yet" } }
                    }
                }
            }
            None => { p { "They have not met yet." } }
        }
        h3 { "Difference over time" }
        p class="muted" { "The rating of " (a.name) " less that of " (b.name) ", in Elo, after each point of the history that rated both (by set number)." }
        (chart("rating difference over time", "difference-chart", &by_set("difference (Elo)", false), &[difference], &[String::new()], "No ratings of both yet."))
        h3 { "Their sets" }
        (sets_table("their sets", sets))
    }
}

/// The links at the top of a set's replay page (`/sets/SET/replay`), which the server
/// puts in the viewer's page as it sends it: the dashboard, the set's page, each bot by
/// its letter and league name, the pair's head-to-head page, and the pair's previous and
/// next sets' replays (`None`: there is none). A running set (`set` `None`): the
/// dashboard and its live view. Links only: no script, no style.
pub fn replay_nav(
    stem: &str,
    set: Option<&SetView>,
    previous: Option<&str>,
    next: Option<&str>,
) -> Markup {
    html! {
        nav class="serve" aria-label="hus serve" data-a=[set.map(|s| &s.bots[0])] data-b=[set.map(|s| &s.bots[1])] {
            a href="/" { "← hus serve" }
            @match set {
                Some(s) => {
                    a href=(set_href(&s.set)) { "set " (s.set) }
                    span { "A: " a class="bot" href=(bot_href(&s.bots[0])) { (s.bots[0]) } }
                    span { "B: " a class="bot" href=(bot_href(&s.bots[1])) { (s.bots[1]) } }
                    a href=(pair_href(&s.bots[0], &s.bots[1])) { (s.bots[0]) " vs " (s.bots[1]) }
                    @if let Some(p) = previous { a rel="prev" href=(replay_href(p)) { "‹ the pair's previous set" } }
                    @if let Some(n) = next { a rel="next" href=(replay_href(n)) { "the pair's next set ›" } }
                }
                None => {
                    a href=(format!("/#/live/{}", encode(stem))) { "live view of " (stem) }
                }
            }
        }
    }
}

/// A set's page's content: its score, seed, games and faults.
pub fn set_main(s: &SetView) -> Markup {
    html! {
        h2 { (s.set) }
        // seed_str: the seed digit for digit.
        p {
            (bot_link(&s.bots[0])) " " (s.points[0]) "–" (s.points[1]) " " (bot_link(&s.bots[1]))
            " · seed " (s.seed_str) " · " (log_links(s))
        }
        (scroller("games", html! {
            table class="games" {
                thead { tr {
                    th class="num" scope="col" { "game" } th scope="col" { "first" } th scope="col" { "winner" }
                    th class="num" scope="col" { "points" } th scope="col" { "reason" } th class="num" scope="col" { "plies" }
                } }
                tbody {
                    @for g in &s.games {
                        tr data-game=(g.game) {
                            td class="num" {
                                @if s.pruned { (g.game) }
                                @else { a href=(format!("{}#game={}&ply=0", replay_href(&s.set), g.game)) aria-label=(format!("replay of game {}", g.game)) { (g.game) } }
                            }
                            td { (g.first) }
                            td { (g.winner.as_deref().unwrap_or("draw")) }
                            td class="num" { (g.points[0]) "–" (g.points[1]) }
                            td { (g.reason) @if g.double { " (double)" } }
                            td class="num" { (g.plies) }
                        }
                    }
                }
            }
        }))
        h3 { "Faults" }
        @if s.faults.is_empty() {
            p { "none" }
        } @else {
            (scroller("faults", html! {
                table class="faults" {
                    thead { tr {
                        th class="num" scope="col" { "game" } th class="num" scope="col" { abbr title="the log's ply, counted from 0" { "log ply" } } th scope="col" { "bot" }
                        th scope="col" { "kind" } th scope="col" { "detail" }
                    } }
                    tbody {
                        @for f in &s.faults {
                            tr { td class="num" { (f.game) } td class="num" { (f.ply) } td { (f.bot) } td { (f.kind) } td { (f.detail) } }
                        }
                    }
                }
            }))
        }
    }
}

fn respond(status: StatusCode, markup: Markup) -> Response {
    (
        status,
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        markup.into_string(),
    )
        .into_response()
}

/// A page that says what went wrong, in the frame.
fn problem_page(app: &AppState, status: StatusCode, what: &str) -> Response {
    respond(
        status,
        page(
            "not found",
            &Status::of(app),
            html! { p class="problem" { (what) } },
        ),
    )
}

/// `/`: the standings page.
pub async fn standings_page(State(app): State<Arc<AppState>>) -> Response {
    let s = app.snapshot();
    let recent: Vec<SetView> = s
        .sets
        .iter()
        .rev()
        .take(RECENT_SETS)
        .map(|v| (**v).clone())
        .collect();
    let total = s.standings.progress.sets_done + s.standings.progress.sets_done_elsewhere;
    // The workers of a shared store; none with SQLite (or when the store does not
    // answer: the page says so).
    // The rating history (bounded: at most 129 points); none when the store does not
    // answer (the charts then say there is nothing yet).
    let history = app.reader.rating_history().await.unwrap_or_default();
    let (workers, stuck, unread) = match app.reader.workers().await {
        Ok((rows, stuck)) => (rows, stuck, None),
        Err(e) => (Vec::new(), None, Some(e)),
    };
    let main = html! {
        (standings_main(&s.standings, &recent, total, &workers, stuck.as_deref(), &s.problems, &history))
        @if let Some(e) = unread { p class="problem" { "workers: " (e) } }
    };
    respond(StatusCode::OK, page("standings", &Status::of(&app), main))
}

/// The query of a bot's page.
#[derive(Deserialize)]
pub struct BotQuery {
    /// Only the sets against this bot.
    vs: Option<String>,
}

/// `/bots/NAME`: a bot's page (`?vs=OTHER`: the head-to-head page of the two; 404 for
/// an unknown OTHER or NAME itself).
pub async fn bot_page(
    State(app): State<Arc<AppState>>,
    Path(name): Path<String>,
    Query(q): Query<BotQuery>,
) -> Response {
    let s = app.snapshot();
    let Some(line) = s.standings.bots.iter().find(|b| b.name == name) else {
        return problem_page(
            &app,
            StatusCode::NOT_FOUND,
            &format!("no bot named {name:?}"),
        );
    };
    let history = app.reader.rating_history().await.unwrap_or_default();
    if let Some(vs) = &q.vs {
        let Some(other) = s
            .standings
            .bots
            .iter()
            .find(|b| b.name == *vs && b.name != name)
        else {
            return problem_page(
                &app,
                StatusCode::NOT_FOUND,
                &format!("no other bot named {vs:?} to compare {name:?} with"),
            );
        };
        return match crate::web::pair_page(&app, &name, vs, None, BOT_SETS).await {
            Ok(sets) => respond(
                StatusCode::OK,
                page(
                    &format!("{name} vs {vs}"),
                    &Status::of(&app),
                    pair_main(line, other, &s.standings, &history, &sets),
                ),
            ),
            Err(e) => problem_page(&app, StatusCode::SERVICE_UNAVAILABLE, e.what()),
        };
    }
    let sets = crate::web::stored_page(&app, Some(name.clone()), None, BOT_SETS).await;
    let faulted = crate::web::faulted_sets(&app, &name).await;
    match (sets, faulted) {
        (Ok(sets), Ok(faulted)) => respond(
            StatusCode::OK,
            page(
                &name,
                &Status::of(&app),
                bot_main_with(
                    line,
                    &sets,
                    &faulted,
                    &s.standings.head_to_head,
                    s.standings.ratings.as_ref(),
                    &history,
                    s.standings.bots.len(),
                ),
            ),
        ),
        (Err(e), _) | (_, Err(e)) => problem_page(&app, StatusCode::SERVICE_UNAVAILABLE, e.what()),
    }
}

/// Sets on a page of the archive (`/sets`).
pub const ARCHIVE_SETS: usize = 50;

/// The query of the archive: a bot's sets, a pair's (`bot` and `vs`), a bot's faulted
/// sets (`bot` and `faulted`), and the page (`before`: the sets numbered below it).
#[derive(Deserialize, Default)]
pub struct ArchiveQuery {
    bot: Option<String>,
    vs: Option<String>,
    faulted: Option<String>,
    before: Option<u64>,
}

impl ArchiveQuery {
    /// The archive's address with this filter and `before`.
    fn href(&self, before: Option<u64>) -> String {
        let mut parts = Vec::new();
        if let Some(bot) = &self.bot {
            parts.push(format!("bot={}", encode(bot)));
        }
        if let Some(vs) = &self.vs {
            parts.push(format!("vs={}", encode(vs)));
        }
        if self.faulted.is_some() {
            parts.push("faulted=1".to_string());
        }
        if let Some(b) = before {
            parts.push(format!("before={b}"));
        }
        if parts.is_empty() {
            "/sets".to_string()
        } else {
            format!("/sets?{}", parts.join("&"))
        }
    }

    /// The filter in words.
    fn said(&self) -> String {
        match (&self.bot, &self.vs, self.faulted.is_some()) {
            (Some(b), Some(v), _) => format!("the sets between {b} and {v}"),
            (Some(b), None, true) => format!("the sets in which {b} faulted"),
            (Some(b), None, false) => format!("{b}'s sets"),
            _ => "every set".to_string(),
        }
    }
}

/// The archive's content: a page of sets, newest first, with the links to the older
/// and the newer page and the filters.
pub fn archive_main(
    st: &Standings,
    q: &ArchiveQuery,
    sets: &[SetView],
    newer: Option<Option<u64>>,
    older: Option<u64>,
) -> Markup {
    html! {
        h2 { "Sets" }
        p { "Showing " (q.said()) ", newest first, " (ARCHIVE_SETS) " a page." }
        nav class="filters" aria-label="filters" {
            a href="/sets" { "every set" }
            @for b in &st.bots {
                " · " a href=(ArchiveQuery { bot: Some(b.name.clone()), ..Default::default() }.href(None)) { (b.name) }
                @if b.faults.total > 0 {
                    " (" a href=(ArchiveQuery { bot: Some(b.name.clone()), faulted: Some("1".into()), ..Default::default() }.href(None)) { "faulted" } ")"
                }
            }
        }
        @if let (Some(bot), None) = (&q.bot, &q.vs) {
            p class="filters" {
                "Against: "
                @for o in st.bots.iter().filter(|o| o.name != *bot) {
                    a href=(ArchiveQuery { bot: Some(bot.clone()), vs: Some(o.name.clone()), ..Default::default() }.href(None)) { (o.name) } " "
                }
            }
        }
        (sets_table("sets", sets))
        nav class="pages" aria-label="pages of sets" {
            @match newer {
                Some(before) => { a rel="prev" href=(q.href(before)) { "‹ newer" } }
                None => { span class="muted" { "newest" } }
            }
            " · "
            @match older {
                Some(before) => { a rel="next" href=(q.href(Some(before))) { "older ›" } }
                None => { span class="muted" { "oldest" } }
            }
        }
    }
}

/// `/sets`: the archive, every finished set by pages (`?before=N`), filtered by bot,
/// pair or a bot's faults; an unknown bot is 404.
pub async fn archive_page(
    State(app): State<Arc<AppState>>,
    Query(q): Query<ArchiveQuery>,
) -> Response {
    let s = app.snapshot();
    for name in q.bot.iter().chain(&q.vs) {
        if !s.standings.bots.iter().any(|b| b.name == *name) {
            return problem_page(
                &app,
                StatusCode::NOT_FOUND,
                &format!("no bot named {name:?}"),
            );
        }
    }
    let limit = ARCHIVE_SETS;
    let sets = match (&q.bot, &q.vs, q.faulted.is_some()) {
        (Some(bot), Some(vs), _) => crate::web::pair_page(&app, bot, vs, q.before, limit).await,
        (Some(bot), None, true) => crate::web::faulted_page(&app, bot, q.before, limit).await,
        (bot, None, _) => crate::web::stored_page(&app, bot.clone(), q.before, limit).await,
        (None, Some(_), _) => {
            return problem_page(
                &app,
                StatusCode::BAD_REQUEST,
                "vs=NAME needs bot=NAME: the sets between the two",
            );
        }
    };
    let sets = match sets {
        Ok(sets) => sets,
        Err(e) => return problem_page(&app, StatusCode::SERVICE_UNAVAILABLE, e.what()),
    };
    // Older: below the last shown, when the page is full. Newer: on a later page; for
    // every set, the page that ends just above this one's first (the store's sets
    // after it, oldest first); with a filter, the first page.
    let older = (sets.len() == limit)
        .then(|| sets.last().map(|v| v.number))
        .flatten();
    let newer = match (q.before, sets.first()) {
        (None, _) => None,
        (Some(_), Some(first)) if q.bot.is_none() => {
            match crate::web::newer_page(&app, first.number, limit).await {
                Ok(above) if above.len() == limit => Some(above.last().map(|v| v.number + 1)),
                _ => Some(None),
            }
        }
        (Some(_), _) => Some(None),
    };
    respond(
        StatusCode::OK,
        page(
            "sets",
            &Status::of(&app),
            archive_main(&s.standings, &q, &sets, newer, older),
        ),
    )
}

/// `/workers`: the workers of a shared store.
pub async fn workers_page(State(app): State<Arc<AppState>>) -> Response {
    match app.reader.workers().await {
        Ok((rows, stuck)) => respond(
            StatusCode::OK,
            page(
                "workers",
                &Status::of(&app),
                workers_main(&rows, stuck.as_deref()),
            ),
        ),
        Err(e) => problem_page(&app, StatusCode::SERVICE_UNAVAILABLE, &e),
    }
}

/// `/sets/SET`: a finished set's page.
pub async fn set_page(State(app): State<Arc<AppState>>, Path(set): Path<String>) -> Response {
    match crate::web::finished_set(&app, &set).await {
        Ok(Some(v)) => respond(StatusCode::OK, page(&set, &Status::of(&app), set_main(&v))),
        Ok(None) => problem_page(
            &app,
            StatusCode::NOT_FOUND,
            &format!("no finished set named {set:?}"),
        ),
        Err(e) => problem_page(&app, StatusCode::SERVICE_UNAVAILABLE, e.what()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::{FaultView, GameView};
    use league::{Faults, PairComparison, RatingView, RatingsView, Record3};

    const EVIL: &str = "<script>alert(1)</script><b>\"q\" 'x' &amp;";
    const EVIL_ESCAPED: &str =
        "&lt;script&gt;alert(1)&lt;/script&gt;&lt;b&gt;&quot;q&quot; 'x' &amp;amp;";

    fn rated(value: f64) -> Option<RatingView> {
        Some(RatingView {
            value,
            std_error: 10.0,
            low: value - 20.0,
            high: value + 20.0,
        })
    }

    fn bot(rank: usize, name: &str, rating: Option<RatingView>, points: u64) -> BotStanding {
        BotStanding {
            rank,
            name: name.into(),
            command: format!("run {EVIL}"),
            active: true,
            points,
            sets: Record3::default(),
            games: Record3::default(),
            faults: Faults::default(),
            moves: 0,
            mean_move_ms: None,
            rating,
        }
    }

    fn record(won: u64, drawn: u64, lost: u64) -> Record3 {
        Record3 {
            played: won + drawn + lost,
            won,
            drawn,
            lost,
        }
    }

    /// Three bots whose rank order (by points) is not their rating order: x first by
    /// points, y first by rating; z unrated comes last.
    fn standings() -> Standings {
        // y − x = 30 (−9 to 69): 0.74, but open.
        let pair = |a: &str, b: &str, los: f64| PairComparison {
            a: a.into(),
            b: b.into(),
            difference: RatingView {
                value: 30.0,
                std_error: 20.0,
                low: -9.0,
                high: 69.0,
            },
            los,
        };
        let h2h = |a: &str, b: &str, points: [u64; 2], games: Record3| HeadToHead {
            a: a.into(),
            b: b.into(),
            points,
            games,
            sets: Record3::default(),
        };
        Standings {
            league: Default::default(),
            progress: Default::default(),
            games_played: 9,
            first_mover: Default::default(),
            bots: vec![
                bot(1, "x", rated(1490.0), 5),
                bot(2, "y", rated(1510.0), 4),
                bot(3, "z", None, 0),
            ],
            ratings: Some(RatingsView {
                anchor: None,
                anchor_rating: 1500.0,
                confidence: 0.95,
                first_move_advantage: rated(0.0).expect("rated"),
                pairs: vec![pair("y", "x", 0.74)],
            }),
            ratings_error: None,
            pairs: Vec::new(),
            head_to_head: vec![
                h2h("x", "y", [3, 3], record(3, 0, 3)),
                h2h("x", "z", [2, 1], record(2, 0, 1)),
            ],
        }
    }

    /// The bot page's charts: its rating over time is a path with a point per point of
    /// the history that rated it; its opponents' rows are its results against each,
    /// seen from its side; the move-time bins count its sets.
    #[test]
    fn a_bots_charts_have_a_point_per_recorded_rating_and_its_results_per_opponent() {
        let st = standings();
        let bot = &st.bots[0];
        let other = &st.bots[1].name;
        let history: Vec<RatingPoint> = [(1, false), (2, true), (3, true), (5, true)]
            .into_iter()
            .map(|(n, rated)| RatingPoint {
                number: n,
                ratings: [("", 30.0, 5.0), (other.as_str(), 1490.0, 40.0)]
                    .into_iter()
                    .chain(rated.then_some((bot.name.as_str(), 1500.0 + n as f64, 50.0)))
                    .map(|(b, v, e)| (b.to_string(), v, e))
                    .collect(),
            })
            .collect();
        let head = [HeadToHead {
            a: other.clone(),
            b: bot.name.clone(),
            points: [5, 2],
            games: league::Record3 {
                played: 8,
                won: 4,
                drawn: 1,
                lost: 3,
            },
            sets: league::Record3 {
                played: 2,
                won: 1,
                drawn: 0,
                lost: 1,
            },
        }];
        let page = bot_main_with(
            bot,
            &[set_view(2)],
            &[],
            &head,
            st.ratings.as_ref(),
            &history,
            st.bots.len(),
        )
        .into_string();
        assert!(
            page.contains("<span class=\"rank\" data-rank=\"1\">rank 1 of 3</span>"),
            "{page}"
        );
        let rating = &page[page.find("class=\"rating-chart\"").expect("rating chart")..];
        assert!(
            rating.contains("class=\"line s0\" data-points=\"3\""),
            "{rating}"
        );
        assert_eq!(rating.matches("class=\"band s0\"").count(), 1);
        // Its row against the other: its points first, its games and sets.
        let row = &page[page
            .find(&format!("data-opponent=\"{other}\""))
            .expect("row")..];
        let row = &row[..row.find("</tr>").expect("end")];
        assert!(row.contains(">2–5<"), "{row}");
        assert!(row.contains(">3-1-4<"), "{row}");
        assert!(row.contains(">1-0-1<"), "{row}");
        // x against y as the fit has it: −30 (−69 to +9), 26%, open.
        assert!(row.contains(">−30 (−69 to +9)<"), "{row}");
        assert!(
            row.contains("<td class=\"num los pair-open\" data-los=\"0.26"),
            "{row}"
        );
        assert!(row.contains(">26%<"), "{row}");
        // The standings page: a line per rated bot (two, in rating order) and the
        // advantage's, each with its points.
        let main = standings_main(&st, &[], 0, &[], None, &[], &history).into_string();
        let ratings = &main[main.find("class=\"rating-chart\"").expect("chart")..];
        let ratings = &ratings[..ratings.find("</figure>").expect("end")];
        assert_eq!(ratings.matches("class=\"line ").count(), 2, "{ratings}");
        let advantage = &main[main.find("class=\"advantage-chart\"").expect("chart")..];
        assert!(advantage.contains("data-points=\"4\""), "{advantage}");
        assert_eq!(
            move_time_bins(&[0.1, 0.2, 0.2, 3.0, 1e9]),
            [
                (0.125, 1),
                (0.25, 2),
                (0.5, 0),
                (1.0, 0),
                (2.0, 0),
                (4.0, 1),
                (8.0, 0),
                (16.0, 0),
                (32.0, 0),
                (64.0, 0),
                (128.0, 0),
                (256.0, 0),
                (512.0, 0),
                (1024.0, 0),
                (2048.0, 0),
                (4096.0, 0),
                (8192.0, 0),
                (16384.0, 1)
            ]
        );
        assert!(move_time_bins(&[]).len() <= 1);
    }

    fn set_view(games: usize) -> SetView {
        SetView {
            set: "r1-x-vs-y".into(),
            number: 1,
            pruned: false,
            round: 1,
            bots: ["x".into(), "y".into()],
            seed: 7,
            seed_str: "7".into(),
            points: [2, 1],
            winner: Some("x".into()),
            moves: [10, 10],
            mean_move_ms: [Some(1.0), None],
            log: league::LogPlace::file("r1-x-vs-y", league::LogForm::Plain),
            games: (0..games)
                .map(|i| GameView {
                    game: i as u32 + 1,
                    first: "x".into(),
                    winner: if i == 1 { None } else { Some("x".into()) },
                    points: [1, 0],
                    reason: referee::GameEndReason::NoMoves,
                    plies: 30,
                    double: false,
                })
                .collect(),
            faults: vec![FaultView {
                game: 1,
                ply: 3,
                bot: "y".into(),
                kind: referee::FaultKind::Malformed,
                detail: EVIL.into(),
            }],
        }
    }

    #[test]
    fn the_cross_table_is_in_rating_order_with_each_pairs_score_colour_and_link() {
        let st = standings();
        let order: Vec<&str> = rating_order(&st).iter().map(|b| b.name.as_str()).collect();
        assert_eq!(order, ["y", "x", "z"]);
        let html = cross_table(&st).into_string();
        // 3 rows of 3 cells, the diagonal marked.
        assert_eq!(html.matches("<td ").count(), 9);
        assert_eq!(html.matches("class=\"num self\"").count(), 3);
        // y against x: x's 3-3 seen from y; LoS 74%, open (the interval holds zero);
        // x against y the mirror; z has no rating: no colour; y and z never met: an
        // empty cell.
        assert!(html.contains(
            "<td class=\"num pair-open\" data-vs=\"x\" data-points=\"3-3\" data-games=\"6\"><a href=\"/bots/y?vs=x\""
        ), "{html}");
        assert!(
            html.contains(">3–3 (6) <span class=\"los\">74%</span></a>"),
            "{html}"
        );
        assert!(
            html.contains(">3–3 (6) <span class=\"los\">26%</span></a>"),
            "{html}"
        );
        assert!(html.contains(
            "<td class=\"num los-none\" data-vs=\"x\" data-points=\"1-2\" data-games=\"3\"><a href=\"/bots/z?vs=x\""
        ), "{html}");
        assert!(html.contains(">1–2 (3)</a>"), "{html}");
        assert!(
            html.contains("<td class=\"num\" data-vs=\"z\"></td>"),
            "{html}"
        );
        assert!(html.contains(
            "aria-label=\"y against x: 3–3 in 6 games (3-0-3), likelihood of superiority 74%, open\""
        ), "{html}");
    }

    /// A pair is settled when its difference's interval leaves out zero, whatever the
    /// likelihood: 0.97 with an interval across zero is open, 0.9 above it settled.
    #[test]
    fn a_pairs_colour_says_whether_it_is_settled() {
        let c = |value: f64, low: f64, high: f64, los: f64| {
            Some(Comparison {
                difference: RatingView {
                    value,
                    std_error: 1.0,
                    low,
                    high,
                },
                los,
            })
        };
        assert_eq!(pair_class(c(60.0, -2.0, 122.0, 0.97)), "pair-open");
        assert_eq!(pair_class(c(20.0, 1.0, 39.0, 0.9)), "pair-stronger");
        assert_eq!(pair_class(c(-20.0, -39.0, -1.0, 0.1)), "pair-weaker");
        assert_eq!(pair_class(c(f64::NAN, 0.0, 0.0, 0.5)), "los-none");
        assert_eq!(pair_class(None), "los-none");
        assert_eq!(percent(0.974), "97%");
        assert_eq!(percent(0.9996), "> 99%");
        assert_eq!(percent(0.0004), "< 1%");
        assert_eq!(percent(1.0), "100%");
        assert_eq!(percent(0.0), "0%");
        // Seen from the other side: the difference and its interval turn round.
        let st = standings();
        let pairs = PairIndex::new(&st);
        let x = pairs.compare("x", "y").expect("a fit");
        assert_eq!(
            (x.difference.value, x.difference.low, x.difference.high),
            (-30.0, -69.0, 9.0)
        );
        assert!((x.los - 0.26).abs() < 1e-12, "{x:?}");
    }

    /// The head-to-head page, from the first bot's side: score, games, the difference
    /// with its interval and the likelihood, as the fit has them.
    #[test]
    fn a_pair_page_answers_who_is_stronger() {
        let st = standings();
        let history: Vec<RatingPoint> = (1..=3)
            .map(|n| RatingPoint {
                number: n,
                ratings: vec![
                    ("x".to_string(), 1500.0, 10.0),
                    ("y".to_string(), 1500.0 + n as f64, 10.0),
                ],
            })
            .collect();
        let html = pair_main(&st.bots[0], &st.bots[1], &st, &history, &[set_view(2)]).into_string();
        assert!(html.contains("<h2>x vs y</h2>"), "{html}");
        assert!(
            html.contains("<dd class=\"score\">3–3 in points</dd>"),
            "{html}"
        );
        assert!(html.contains("<dd class=\"games\">3-0-3</dd>"), "{html}");
        assert!(html.contains(
            "<dd class=\"difference\" data-value=\"-30\" data-low=\"-69\" data-high=\"9\">−30 (95% interval −69 to +9)</dd>"
        ), "{html}");
        assert!(html.contains("data-los=\"0.26"), "{html}");
        assert!(
            html.contains(">26% · open: the interval holds zero</dd>"),
            "{html}"
        );
        let chart = &html[html.find("class=\"difference-chart\"").expect("chart")..];
        assert!(chart.contains("data-points=\"3\""), "{chart}");
        assert!(html.contains("data-set=\"r1-x-vs-y\""), "{html}");
    }

    #[test]
    fn the_standings_table_holds_each_bots_rank_name_and_points() {
        let html = standings_table(&standings()).into_string();
        assert!(html.contains(
            "<tr data-bot=\"y\"><td class=\"num rank\">2</td><td><a class=\"bot\" href=\"/bots/y\">y</a></td><td class=\"num rating\">1510 (1490 to 1530)</td>"
        ), "{html}");
        assert!(html.contains("<td class=\"num points\">5</td>"), "{html}");
        assert!(html.contains("<td class=\"num rating\">–</td>"), "{html}");
    }

    #[test]
    fn bot_supplied_text_is_escaped_on_every_page() {
        let st = standings();
        let set = set_view(2);
        let faulted = vec![serde_json::json!({
            "set": "r1-x-vs-y", "number": 1,
            "faults": [{"game": 1, "ply": 3, "bot": "y", "kind": "malformed", "detail": EVIL}],
            "stderr": [EVIL, "last"],
        })];
        for html in [
            bot_main(&st.bots[0], std::slice::from_ref(&set), &faulted).into_string(),
            set_main(&set).into_string(),
        ] {
            assert!(
                !html.contains("<script>") && !html.contains("<b>"),
                "{html}"
            );
            assert!(html.contains(EVIL_ESCAPED), "{html}");
        }
        // A name in a path is percent-encoded.
        assert_eq!(bot_href("a b/<c>"), "/bots/a%20b%2F%3Cc%3E");
        assert_eq!(pair_href("a-1", "b_2.x"), "/bots/a-1?vs=b_2.x");
    }

    /// The archive's links keep its filter; a full page links to the older one, a page
    /// after the first to the newer one.
    #[test]
    fn the_archive_pages_keep_their_filter() {
        let q = ArchiveQuery {
            bot: Some("a b".into()),
            vs: Some("c".into()),
            ..Default::default()
        };
        assert_eq!(q.href(Some(9)), "/sets?bot=a%20b&vs=c&before=9");
        assert_eq!(ArchiveQuery::default().href(None), "/sets");
        let faulted = ArchiveQuery {
            bot: Some("x".into()),
            faulted: Some("1".into()),
            ..Default::default()
        };
        assert_eq!(faulted.href(None), "/sets?bot=x&faulted=1");
        assert_eq!(faulted.said(), "the sets in which x faulted");
        let st = standings();
        let html = archive_main(&st, &q, &[set_view(2)], Some(Some(120)), Some(40)).into_string();
        assert!(
            html.contains(
                "<a rel=\"prev\" href=\"/sets?bot=a%20b&amp;vs=c&amp;before=120\">‹ newer</a>"
            ),
            "{html}"
        );
        assert!(
            html.contains(
                "<a rel=\"next\" href=\"/sets?bot=a%20b&amp;vs=c&amp;before=40\">older ›</a>"
            ),
            "{html}"
        );
        let first = archive_main(&st, &ArchiveQuery::default(), &[], None, None).into_string();
        assert!(
            first.contains(">newest</span> · <span class=\"muted\">oldest</span>"),
            "{first}"
        );
    }

    #[test]
    fn a_long_set_is_one_short_cell() {
        assert_eq!(games_cell(&set_view(2)), "x by no-moves; draw by no-moves");
        assert_eq!(
            games_cell(&set_view(9)),
            "9 games: x won 8, y won 0, 1 drawn"
        );
        let html = sets_table("sets", &[set_view(9)]).into_string();
        assert!(
            html.contains("<td>9 games: x won 8, y won 0, 1 drawn</td>"),
            "{html}"
        );
    }

    #[test]
    fn a_page_loads_nothing_from_elsewhere_and_holds_no_inline_script_or_style() {
        let status = Status {
            paused: true,
            low_space: None,
            running: vec!["r2-x-vs-y".into()],
            sets_running: 2,
            sets_done: 3,
            watchers: 1,
        };
        let st = standings();
        let html = page(
            "standings",
            &status,
            standings_main(&st, &[set_view(2)], 3, &[], Some(EVIL), &[], &[]),
        )
        .into_string();
        assert_eq!(referee::viewer_assets::loads_from_elsewhere(&html), None);
        for word in [
            "<script>",
            "<style",
            " style=",
            " onclick=",
            " onload=",
            " onerror=",
        ] {
            assert!(!html.contains(word), "{word:?} in {html}");
        }
        assert!(html.contains("<p id=\"status\" role=\"status\">paused · 2 running, 3 sets played, 1 watching</p>"), "{html}");
        // Below the free-space floor the line says why.
        let low = Status {
            low_space: Some("only 3 MiB free on the file system of /l/logs".into()),
            ..status.clone()
        };
        assert_eq!(
            low.line(),
            "paused: only 3 MiB free on the file system of /l/logs · 2 running, 3 sets played, 1 watching"
        );
        assert!(html.contains("<p id=\"live-empty\" hidden>"), "{html}");
        assert!(
            html.contains(
                "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            ),
            "{html}"
        );
        assert!(html.contains(EVIL_ESCAPED), "{html}");
    }
}
