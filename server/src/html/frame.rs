//! The frame of every page: the head, the title line with the server's status, the
//! live games' place (filled by `app.js`), the page's `<main>` and the footer.

use maud::{html, Markup, DOCTYPE};

use super::links::replay_href;
use crate::state::AppState;

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
    /// The line of `app` as it is now.
    pub fn of(app: &AppState) -> Status {
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
    pub fn line(&self) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::html::test_data::*;
    use crate::html::{bot_href, bot_main, pair_href, set_main, standings_main};

    #[test]
    fn bot_supplied_text_is_escaped_on_every_page() {
        let st = standings();
        let set = set_view(2);
        let faulted = vec![serde_json::json!({
            "set": "r1-x-vs-y", "number": 1,
            "faults": [{"game": 1, "ply": 3, "bot": "y", "kind": "malformed", "detail": EVIL,
                        "stderr": [EVIL, "last"], "stderr_games": [1, 1]}],
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
        // The fault's stderr excerpt, as text.
        let bot = bot_main(&st.bots[0], std::slice::from_ref(&set), &faulted).into_string();
        assert!(
            bot.contains(&format!(
                "<pre class=\"stderr\">{EVIL_ESCAPED}\nlast\n</pre>"
            )),
            "{bot}"
        );
        // A name in a path is percent-encoded.
        assert_eq!(bot_href("a b/<c>"), "/bots/a%20b%2F%3Cc%3E");
        assert_eq!(pair_href("a-1", "b_2.x"), "/bots/a-1?vs=b_2.x");
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
