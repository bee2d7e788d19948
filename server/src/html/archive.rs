//! The archive (`/sets`): every finished set by pages, newest first, filtered by bot,
//! pair or a bot's faults, with the links to the older and the newer page.

use league::Standings;
use maud::{html, Markup};
use serde::Deserialize;

use super::links::encode;
use super::sets::sets_table;
use crate::state::SetView;

/// Sets on a page of the archive (`/sets`).
pub const ARCHIVE_SETS: usize = 50;

/// The query of the archive: a bot's sets, a pair's (`bot` and `vs`), a bot's faulted
/// sets (`bot` and `faulted`), and the page (`before`: the sets numbered below it).
#[derive(Deserialize, Default)]
pub struct ArchiveQuery {
    /// Only this bot's sets.
    pub bot: Option<String>,
    /// With `bot`: only the sets between the two.
    pub vs: Option<String>,
    /// With `bot` (any value): only the sets in which it faulted.
    pub faulted: Option<String>,
    /// The sets numbered below this one.
    pub before: Option<u64>,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::html::test_data::*;

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
}
