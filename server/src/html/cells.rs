//! The cells and wrappers every page uses: numbers, ratings, W-D-L records, a bot's
//! link, a table that scrolls sideways on a narrow screen.

use league::BotStanding;
use maud::{html, Markup};

use super::links::bot_href;

pub(super) fn fmt(x: Option<f64>, digits: usize) -> String {
    match x {
        Some(x) => format!("{x:.digits$}"),
        None => "–".to_string(),
    }
}

pub(super) fn rating(b: &BotStanding) -> String {
    match b.rating {
        Some(r) => format!("{:.0} ({:.0} to {:.0})", r.value, r.low, r.high),
        None => "–".to_string(),
    }
}

pub(super) fn wdl(r: &league::Record3) -> String {
    format!("{}-{}-{}", r.won, r.drawn, r.lost)
}

pub(super) fn bot_link(name: &str) -> Markup {
    html! { a class="bot" href=(bot_href(name)) { (name) } }
}

/// A table in a wrapper that scrolls sideways on a narrow screen (reachable by Tab,
/// labelled by its caption).
pub(super) fn scroller(label: &str, table: Markup) -> Markup {
    html! {
        div class="scroll" role="region" aria-label=(label) tabindex="0" { (table) }
    }
}
