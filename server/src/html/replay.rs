//! The server's links on a replay page, which `web` puts at the top of the viewer's
//! page as it sends it.

use maud::{html, Markup};

use super::links::{bot_href, encode, pair_href, replay_href, set_href};
use crate::state::SetView;

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
