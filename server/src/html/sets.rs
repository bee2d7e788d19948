//! Finished sets on the pages: a list of sets (`sets_table`, any `&[SetView]`), and a
//! set's own page (`/sets/SET`: its score, seed, games and faults).

use maud::{html, Markup};

use super::cells::{bot_link, scroller};
use super::links::{log_href, replay_href, set_href};
use crate::state::SetView;

/// A set's games listed one by one in a list's cell; a longer set is counted.
const GAMES_LISTED: usize = 3;

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

/// When a set finished, to the minute (`2026-12-04 23:43`, UTC) in a `time` element
/// that holds the whole time; nothing when the store has no time for it.
fn finished_at(s: &SetView) -> Markup {
    html! {
        @if let Some(at) = &s.finished {
            time datetime=(at) title=(at) { (at.get(..16).unwrap_or(at).replacen('T', " ", 1)) }
        }
    }
}

/// Which new sets a list of sets takes in as they finish (the live stream's `result`
/// events, `web::feed`): `app.js` puts a new set's row first in a list whose feed it
/// belongs to, and keeps the list as long as it was. A list that is not the newest
/// page of its kind takes none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feed<'a> {
    /// None: the list stays as served.
    None,
    /// Every set.
    All,
    /// A bot's sets.
    Bot(&'a str),
    /// The sets between two bots.
    Pair(&'a str, &'a str),
    /// The sets in which a bot faulted.
    Faulted(&'a str),
}

/// A list of finished sets, newest first, with the time each finished; `feed`: the new
/// sets it takes in.
pub fn sets_table(label: &str, sets: &[SetView], feed: Feed) -> Markup {
    let (kind, a, b) = match feed {
        Feed::None => (None, None, None),
        Feed::All => (Some("all"), None, None),
        Feed::Bot(x) => (Some("bot"), Some(x), None),
        Feed::Pair(x, y) => (Some("pair"), Some(x), Some(y)),
        Feed::Faulted(x) => (Some("faulted"), Some(x), None),
    };
    scroller(
        label,
        html! {
            table class="sets" data-feed=[kind] data-a=[a] data-b=[b] data-max=[kind.map(|_| sets.len().max(1))] {
                thead { tr {
                    th scope="col" { "set" }
                    th scope="col" { "finished (UTC)" }
                    th scope="col" { "bots" }
                    th class="num" scope="col" { "points" }
                    th scope="col" { "winner" }
                    th scope="col" { "games" }
                    th scope="col" { span class="visually-hidden" { "log" } }
                } }
                tbody {
                    @for s in sets { (set_row(s)) }
                }
            }
        },
    )
}

/// One set's row of a list of sets: the pages', and the live stream's `result` event
/// (`web::feed`), which the page puts first in the lists it belongs to.
pub fn set_row(s: &SetView) -> Markup {
    html! {
        tr data-set=(s.set) {
            td { a href=(set_href(&s.set)) { (s.set) } }
            td class="when" { (finished_at(s)) }
            td { (bot_link(&s.bots[0])) " vs " (bot_link(&s.bots[1])) }
            td class="num" { (s.points[0]) "–" (s.points[1]) }
            td { (s.winner.as_deref().unwrap_or("drawn")) }
            td { (games_cell(s)) }
            td { (log_links(s)) }
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
            " · seed " (s.seed_str)
            @if s.finished.is_some() { " · finished " (finished_at(s)) " UTC" }
            " · " (log_links(s))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::html::test_data::*;

    #[test]
    fn a_long_set_is_one_short_cell() {
        assert_eq!(games_cell(&set_view(2)), "x by no-moves; draw by no-moves");
        assert_eq!(
            games_cell(&set_view(9)),
            "9 games: x won 8, y won 0, 1 drawn"
        );
        let html = sets_table("sets", &[set_view(9)], Feed::None).into_string();
        assert!(
            html.contains("<td>9 games: x won 8, y won 0, 1 drawn</td>"),
            "{html}"
        );
        // When it finished, to the minute; the whole time in the element.
        assert!(
            html.contains("<td class=\"when\"><time datetime=\"2026-12-04T23:43:10.770059104Z\" title=\"2026-12-04T23:43:10.770059104Z\">2026-12-04 23:43</time></td>"),
            "{html}"
        );
        // A set the store has no time for: an empty cell.
        let mut old = set_view(2);
        old.finished = None;
        let html = sets_table("sets", &[old], Feed::None).into_string();
        assert!(html.contains("<td class=\"when\"></td>"), "{html}");
    }
}
