//! A bot's page (`/bots/NAME`): its figures and rank, faults by kind, its latest
//! faulted sets with their stderr excerpts, its rating and move times over time, its
//! results and the fit's answer against each opponent, and its sets.

use league::{BotStanding, HeadToHead, RatingPoint, RatingsView};
use maud::{html, Markup};
use serde_json::Value;

use super::cells::{bot_link, fmt, rating, scroller, wdl};
use super::compare::{compare_in, pair_class, percent, signed};
use super::figures::{by_set, chart, history_series};
use super::links::{pair_href, set_href};
use super::sets::{sets_table, Feed};
use crate::charts::Series;
use crate::state::SetView;

/// A bot's page's content: its figures, faults by kind, its latest faulted sets with
/// the end of their stderr, and its sets.
pub fn bot_main(b: &BotStanding, sets: &[SetView], faulted: &[Value]) -> Markup {
    bot_main_with(b, sets, faulted, &[], None, &[], 0)
}

/// The opponents' rows of the cross-table for `bot`: (opponent, its points, the
/// opponent's, `bot`'s games and sets against it), in rank order.
pub(super) fn opponents<'s>(
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
        p {
            "command: " code { (b.command) }
            @if !b.active {
                @if league::parse_version_name(&b.name).is_some() { " (retired)" } @else { " (removed)" }
            }
        }
        @if let Some((bot, number)) = league::parse_version_name(&b.name) {
            p {
                "Uploaded: version " (number) " of " (bot) ". "
                a href=(super::versions::version_href(bot, number)) { "its build and checks" } "; "
                a href=(super::versions::versions_href(bot)) { "every version of " (bot) }
            }
        }
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
                            li data-game=(fault["game"]) {
                                // The log's ply (from 0), as the API has it; the replay and
                                // the live view count plies from 1.
                                "game " (fault["game"]) ", log ply " (fault["ply"]) ": "
                                (fault["kind"].as_str().unwrap_or("")) " — " (fault["detail"].as_str().unwrap_or(""))
                                @if let (Some(lines), Some(games)) = (fault["stderr"].as_array(), fault["stderr_games"].as_array()) {
                                    // The end of the faulted process's part of the file: what
                                    // it wrote up to this fault.
                                    p class="muted" {
                                        "The last lines it wrote on stderr before this fault"
                                        @match (games.first(), games.last()) {
                                            (Some(from), Some(to)) if from != to => { " (its process played games " (from) " to " (to) ")" }
                                            _ => {}
                                        }
                                        ":"
                                        @if lines.is_empty() { " none." }
                                    }
                                    @if !lines.is_empty() {
                                        pre class="stderr" { @for l in lines { (l.as_str().unwrap_or("")) "\n" } }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        (bot_charts(b, sets, head_to_head, ratings, history))
        h3 { "Sets" }
        (sets_table("sets", sets, Feed::Bot(&b.name)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::html::standings_main;
    use crate::html::test_data::*;

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
}
