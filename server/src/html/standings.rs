//! The standings page (`/`): the table, the cross-table in rating order (each cell's
//! score, likelihood and colour), the charts of the rating history, the recent sets,
//! the workers and the problems.

use league::{BotStanding, RatingPoint, Standings, WorkerRow};
use maud::{html, Markup};

use super::cells::{bot_link, fmt, rating, scroller, wdl};
use super::compare::{pair_class, percent, PairIndex};
use super::figures::history_charts;
use super::links::pair_href;
use super::sets::{sets_table, Feed};
use super::workers::workers_table;
use crate::state::{Problem, SetView};

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
                    @for b in &st.bots { (standings_row(b)) }
                }
            }
        },
    )
}

/// One bot's row of the standings table: the page's, and the live stream's
/// `standings` event (`web::feed`), which the page puts in place of the bot's row.
pub fn standings_row(b: &BotStanding) -> Markup {
    html! {
        tr data-bot=(b.name) {
            td class="num rank" { (b.rank) }
            td {
                (bot_link(&b.name))
                @match league::parse_version_name(&b.name) {
                    // An uploaded bot's version: the active one plays, the others are
                    // retired (their results stay); its versions are a click away.
                    Some((bot, _)) => {
                        @if !b.active { " (retired)" }
                        " " a class="versions" href=(super::versions::versions_href(bot)) { "versions" }
                    }
                    None => { @if !b.active { " (removed)" } }
                }
            }
            td class="num rating" { (rating(b)) }
            td class="num" { (wdl(&b.games)) }
            td class="num" { (wdl(&b.sets)) }
            td class="num points" { (b.points) }
            td class="num" { (b.faults.total) }
            td class="num" { (fmt(b.mean_move_ms, 1)) }
        }
    }
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
        (sets_table("recent sets", recent, Feed::All))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::html::test_data::*;

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

    #[test]
    fn the_standings_table_holds_each_bots_rank_name_and_points() {
        let html = standings_table(&standings()).into_string();
        assert!(html.contains(
            "<tr data-bot=\"y\"><td class=\"num rank\">2</td><td><a class=\"bot\" href=\"/bots/y\">y</a></td><td class=\"num rating\">1510 (1490 to 1530)</td>"
        ), "{html}");
        assert!(html.contains("<td class=\"num points\">5</td>"), "{html}");
        assert!(html.contains("<td class=\"num rating\">–</td>"), "{html}");
    }
}
