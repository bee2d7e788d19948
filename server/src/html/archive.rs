//! The archive (`/sets`): every finished set by pages, newest first, filtered by bot,
//! pair, a bot's faults or a result, with the links to the older and the newer page.

use league::Standings;
use maud::{html, Markup};
use serde::Deserialize;

use super::links::encode;
use super::sets::{sets_table, Feed};
use crate::state::SetView;

/// Sets on a page of the archive (`/sets`).
pub const ARCHIVE_SETS: usize = 50;

/// The query of the archive: a bot's sets, a pair's (`bot` and `vs`), a bot's faulted
/// sets (`bot` and `faulted`), a result (`result`), and the page (`before`: the sets
/// numbered below it; `after`: the sets numbered after it).
#[derive(Clone, Debug, Deserialize, Default, PartialEq)]
pub struct ArchiveQuery {
    /// Only this bot's sets.
    pub bot: Option<String>,
    /// With `bot`: only the sets between the two.
    pub vs: Option<String>,
    /// With `bot` (any value): only the sets in which it faulted.
    pub faulted: Option<String>,
    /// `drawn`; with `bot`, `won` or `lost` (from its side): only the sets so decided.
    pub result: Option<String>,
    /// The sets numbered below this one, newest first.
    pub before: Option<u64>,
    /// The sets numbered after this one (the first of them on the page's end).
    pub after: Option<u64>,
}

/// A set's result as the archive filters by it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The filter's bot won the set.
    Won,
    /// Nobody won.
    Drawn,
    /// The filter's bot lost the set.
    Lost,
}

impl Outcome {
    /// Every result, in the filters' order.
    pub const ALL: [Outcome; 3] = [Outcome::Won, Outcome::Drawn, Outcome::Lost];

    /// Its name in the query (`won`, `drawn`, `lost`).
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Won => "won",
            Outcome::Drawn => "drawn",
            Outcome::Lost => "lost",
        }
    }
}

/// Where a link of the archive goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Page {
    /// The newest sets.
    First,
    /// The sets numbered below this one.
    Before(u64),
    /// The sets numbered after this one.
    After(u64),
}

impl ArchiveQuery {
    /// The result asked for, if it is one of `Outcome`'s names.
    pub fn outcome(&self) -> Option<Outcome> {
        let asked = self.result.as_deref()?;
        Outcome::ALL.into_iter().find(|o| o.name() == asked)
    }

    /// Why the query cannot be answered, if it cannot: `vs` without `bot`, an unknown
    /// result, `won` or `lost` without a bot, or both `before` and `after`.
    pub fn refusal(&self) -> Option<&'static str> {
        if self.vs.is_some() && self.bot.is_none() {
            return Some("vs=NAME needs bot=NAME: the sets between the two");
        }
        match (self.result.as_deref(), self.outcome(), &self.bot) {
            (Some(_), None, _) => return Some("result= takes won, drawn or lost"),
            (_, Some(Outcome::Won | Outcome::Lost), None) => {
                return Some("result=won and result=lost need bot=NAME: whose result")
            }
            _ => {}
        }
        (self.before.is_some() && self.after.is_some())
            .then_some("give before=N or after=N, not both")
    }

    /// The archive's address with this filter, at `page`.
    pub fn href(&self, page: Page) -> String {
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
        if let Some(o) = self.outcome() {
            parts.push(format!("result={}", o.name()));
        }
        match page {
            Page::First => {}
            Page::Before(b) => parts.push(format!("before={b}")),
            Page::After(a) => parts.push(format!("after={a}")),
        }
        if parts.is_empty() {
            "/sets".to_string()
        } else {
            format!("/sets?{}", parts.join("&"))
        }
    }

    /// The filter in words.
    fn said(&self) -> String {
        let sets = match (&self.bot, &self.vs, self.faulted.is_some()) {
            (Some(b), Some(v), _) => format!("the sets between {b} and {v}"),
            (Some(b), None, true) => format!("the sets in which {b} faulted"),
            (Some(b), None, false) => format!("{b}'s sets"),
            _ => "every set".to_string(),
        };
        match (self.outcome(), &self.bot) {
            (Some(Outcome::Drawn), _) => format!("{sets}, drawn"),
            (Some(o), Some(b)) => format!("{sets}, {} by {b}", o.name()),
            _ => sets,
        }
    }

    /// The new sets this page takes in as they finish: those of its filter on its
    /// newest page, none on another page or with a result filter.
    fn feed(&self) -> Feed<'_> {
        if self.before.is_some() || self.after.is_some() || self.result.is_some() {
            return Feed::None;
        }
        match (&self.bot, &self.vs, self.faulted.is_some()) {
            (Some(a), Some(b), _) => Feed::Pair(a, b),
            (Some(a), None, true) => Feed::Faulted(a),
            (Some(a), None, false) => Feed::Bot(a),
            (None, _, _) => Feed::All,
        }
    }

    /// This filter with another result (`None`: any).
    fn with_result(&self, result: Option<Outcome>) -> ArchiveQuery {
        ArchiveQuery {
            result: result.map(|o| o.name().to_string()),
            before: None,
            after: None,
            ..self.clone()
        }
    }
}

/// The archive's content: a page of sets, newest first, with the filters and the links
/// to the newer page (`newer`: the sets after that number) and the older one
/// (`older`: the sets below that number).
pub fn archive_main(
    st: &Standings,
    q: &ArchiveQuery,
    sets: &[SetView],
    newer: Option<u64>,
    older: Option<u64>,
) -> Markup {
    let results: Vec<Option<Outcome>> = if q.bot.is_some() {
        std::iter::once(None)
            .chain(Outcome::ALL.map(Some))
            .collect()
    } else {
        vec![None, Some(Outcome::Drawn)]
    };
    html! {
        h2 { "Sets" }
        p { "Showing " (q.said()) ", newest first, " (ARCHIVE_SETS) " a page (fewer when a result is asked for and rare: the links go on from where the reading stopped). Times are UTC, when the result was recorded." }
        nav class="filters" aria-label="filters" {
            a href="/sets" { "every set" }
            @for b in &st.bots {
                " · " a href=(ArchiveQuery { bot: Some(b.name.clone()), ..Default::default() }.href(Page::First)) { (b.name) }
                @if b.faults.total > 0 {
                    " (" a href=(ArchiveQuery { bot: Some(b.name.clone()), faulted: Some("1".into()), ..Default::default() }.href(Page::First)) { "faulted" } ")"
                }
            }
        }
        @if let (Some(bot), None) = (&q.bot, &q.vs) {
            p class="filters" {
                "Against: "
                @for o in st.bots.iter().filter(|o| o.name != *bot) {
                    a href=(ArchiveQuery { bot: Some(bot.clone()), vs: Some(o.name.clone()), ..Default::default() }.href(Page::First)) { (o.name) } " "
                }
            }
        }
        p class="filters results" {
            "Result: "
            @for (i, r) in results.iter().enumerate() {
                @if i > 0 { " · " }
                @let label = r.map_or("any", |o| o.name());
                @if *r == q.outcome() {
                    strong aria-current="page" { (label) }
                } @else {
                    a href=(q.with_result(*r).href(Page::First)) { (label) }
                }
            }
        }
        (sets_table("sets", sets, q.feed()))
        nav class="pages" aria-label="pages of sets" {
            @match newer {
                Some(after) => { a rel="prev" href=(q.href(Page::After(after))) { "‹ newer" } }
                None => { span class="muted" { "newest" } }
            }
            " · "
            @match older {
                Some(before) => { a rel="next" href=(q.href(Page::Before(before))) { "older ›" } }
                None => { span class="muted" { "oldest" } }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::html::test_data::*;

    /// The archive's links keep its filter; the newer and older pages are `after` and
    /// `before` the numbers given; a result is a filter of its own.
    #[test]
    fn the_archive_pages_keep_their_filter() {
        let q = ArchiveQuery {
            bot: Some("a b".into()),
            vs: Some("c".into()),
            ..Default::default()
        };
        assert_eq!(q.href(Page::Before(9)), "/sets?bot=a%20b&vs=c&before=9");
        assert_eq!(q.href(Page::After(9)), "/sets?bot=a%20b&vs=c&after=9");
        assert_eq!(ArchiveQuery::default().href(Page::First), "/sets");
        let faulted = ArchiveQuery {
            bot: Some("x".into()),
            faulted: Some("1".into()),
            ..Default::default()
        };
        assert_eq!(faulted.href(Page::First), "/sets?bot=x&faulted=1");
        assert_eq!(faulted.said(), "the sets in which x faulted");
        let won = ArchiveQuery {
            bot: Some("x".into()),
            result: Some("won".into()),
            ..Default::default()
        };
        assert_eq!(won.href(Page::Before(3)), "/sets?bot=x&result=won&before=3");
        assert_eq!(won.said(), "x's sets, won by x");
        assert_eq!(won.refusal(), None);
        for (bad, why) in [
            (
                ArchiveQuery {
                    result: Some("won".into()),
                    ..Default::default()
                },
                "need bot=",
            ),
            (
                ArchiveQuery {
                    result: Some("maybe".into()),
                    ..Default::default()
                },
                "takes won",
            ),
            (
                ArchiveQuery {
                    vs: Some("x".into()),
                    ..Default::default()
                },
                "needs bot=",
            ),
            (
                ArchiveQuery {
                    before: Some(3),
                    after: Some(1),
                    ..Default::default()
                },
                "not both",
            ),
        ] {
            assert!(bad.refusal().is_some_and(|r| r.contains(why)), "{bad:?}");
        }
        let st = standings();
        let html = archive_main(&st, &q, &[set_view(2)], Some(120), Some(40)).into_string();
        assert!(
            html.contains(
                "<a rel=\"prev\" href=\"/sets?bot=a%20b&amp;vs=c&amp;after=120\">‹ newer</a>"
            ),
            "{html}"
        );
        assert!(
            html.contains(
                "<a rel=\"next\" href=\"/sets?bot=a%20b&amp;vs=c&amp;before=40\">older ›</a>"
            ),
            "{html}"
        );
        assert!(
            html.contains("<a href=\"/sets?bot=a%20b&amp;vs=c&amp;result=lost\">lost</a>"),
            "{html}"
        );
        let first = archive_main(&st, &ArchiveQuery::default(), &[], None, None).into_string();
        assert!(
            first.contains(">newest</span> · <span class=\"muted\">oldest</span>"),
            "{first}"
        );
        // Without a bot, only `drawn` is a result to ask for.
        assert!(
            first.contains("Result: <strong aria-current=\"page\">any</strong> · <a href=\"/sets?result=drawn\">drawn</a></p>"),
            "{first}"
        );
    }
}
