//! The head-to-head page (`/bots/A?vs=B`): the pair's score, games and sets, the rating
//! fit's difference and likelihood, the difference over time, and their sets.

use league::{BotStanding, RatingPoint, Standings};
use maud::{html, Markup};

use super::bot::opponents;
use super::cells::{bot_link, wdl};
use super::compare::{percent, signed, PairIndex};
use super::figures::{by_set, chart, difference_series};
use super::links::pair_href;
use super::sets::{sets_table, Feed};
use crate::state::SetView;

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
        (sets_table("their sets", sets, Feed::Pair(&a.name, &b.name)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::html::test_data::*;

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
}
