//! An uploaded bot's pages: its versions (`/bots/NAME/versions`), each with its state,
//! author, time, hash, and its rating while it played; and one version
//! (`/bots/NAME/versions/N`) with its build's output and the cause of a refusal. A
//! version that played links to its own bot page (`/bots/NAME.vN`), where its results
//! stay after a newer version replaced it.

use league::{BotStanding, VersionRow, VersionState};
use maud::{html, Markup};

use super::cells::{bot_link, rating};
use super::links::encode;

/// The address of an uploaded bot's versions.
pub fn versions_href(bot: &str) -> String {
    format!("/bots/{}/versions", encode(bot))
}

/// The address of one version's page.
pub fn version_href(bot: &str, number: u32) -> String {
    format!("/bots/{}/versions/{number}", encode(bot))
}

fn state_class(state: VersionState) -> &'static str {
    match state {
        VersionState::Active => "good",
        VersionState::BuildFailed | VersionState::Rejected => "bad",
        _ => "",
    }
}

/// The list of a bot's versions, newest first; `standings` gives each version that
/// played its rating and sets.
pub fn versions_main(bot: &str, versions: &[VersionRow], standings: &[BotStanding]) -> Markup {
    let active = versions.iter().find(|v| v.state == VersionState::Active);
    html! {
        h1 { "Versions of " (bot) }
        p {
            @match active {
                Some(v) => { "Plays as " (bot_link(&v.league_name())) " (version " (v.number) "). " }
                None => { "No version plays now. " }
            }
            "Every version keeps its results and rating; a newer one starts unrated."
        }
        table {
            thead { tr { th { "version" } th { "state" } th { "author" } th { "sent" }
                         th { "sha256" } th.num { "rating" } th.num { "sets" } } }
            tbody {
                @for v in versions.iter().rev() {
                    @let standing = standings.iter().find(|b| b.name == v.league_name());
                    tr {
                        td { a href=(version_href(&v.bot, v.number)) { "v" (v.number) } }
                        td class=(state_class(v.state)) { (v.state.as_str()) }
                        td { (v.author) }
                        td { (v.submitted) }
                        td { code { (v.hash.get(..16).unwrap_or(&v.hash)) } }
                        @match standing {
                            Some(b) => {
                                td.num { (rating(b)) }
                                td.num { a href=(super::links::bot_href(&b.name)) { (b.sets.played) } }
                            }
                            None => { td.num { "–" } td.num { "0" } }
                        }
                    }
                }
            }
        }
    }
}

/// One version's page: its record, its build's output and why it was refused.
pub fn version_main(v: &VersionRow, standing: Option<&BotStanding>) -> Markup {
    html! {
        h1 { (v.bot) ", version " (v.number) }
        p { a href=(versions_href(&v.bot)) { "every version of " (v.bot) } }
        table {
            tr { th { "state" } td class=(state_class(v.state)) { (v.state.as_str()) } }
            tr { th { "author" } td { (v.author) } }
            tr { th { "sent" } td { (v.submitted) } }
            tr { th { "last change" } td { (v.changed) } }
            tr { th { "sha256" } td { code { (v.hash) } } }
            @if v.state.has_played() {
                tr { th { "plays as" } td { (bot_link(&v.league_name())) } }
            }
            @if let Some(b) = standing {
                tr { th { "rating" } td { (rating(b)) } }
                tr { th { "sets" } td { (b.sets.played) } }
            }
        }
        @if !v.detail.is_empty() {
            h2 { @if v.state == VersionState::BuildFailed { "Why the build failed" } @else { "Why it was refused" } }
            pre.stderr { (v.detail) }
        }
        h2 { "The build's output" }
        @if v.output.is_empty() {
            p { @if v.state.is_pending() { "Not built yet." } @else { "The build wrote nothing." } }
        } @else {
            pre.stderr { (v.output) }
        }
    }
}
