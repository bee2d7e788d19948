//! An uploaded bot's pages: its versions (`/bots/NAME/versions`), each with its state,
//! author, time, hash, and its rating while it played; and one version
//! (`/bots/NAME/versions/N`) with its build's output and the cause of a refusal. A
//! version that played links to its own bot page (`/bots/NAME.vN`), where its results
//! stay after a newer version replaced it.

use league::{BotStanding, VersionRow, VersionState};
use maud::{html, Markup};

use super::cells::{bot_link, rating};
use super::figures::chart;
use super::links::encode;
use crate::charts::{Axes, Series};
use crate::gate::GateResult;

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

/// A version's SPRT tests against another version (the gate's, or asked for), newest
/// first: where each stands, and its LLR after each batch drawn between its bounds at
/// the pairs counted so far, as fishtest draws its tests.
fn tests_main(tests: &[GateResult]) -> Markup {
    let axes = Axes {
        x: "game pairs",
        y: "log-likelihood ratio",
        whole_x: true,
        counts: false,
    };
    html! {
        @if !tests.is_empty() {
            h2 { "SPRT tests" }
            @for t in tests.iter().rev() {
                section class="sprt" {
                    h3 { "against " (bot_link(&t.active)) ": " (t.verdict.as_str()) }
                    p {
                        "elo0 " (t.elo0) ", elo1 " (t.elo1) ", alpha " (t.alpha) ", beta " (t.beta)
                        "; LLR " (format!("{:.3}", t.llr)) " in [" (format!("{:.3}", t.lower)) ", "
                        (format!("{:.3}", t.upper)) "] after " (t.pairs()) " pairs in " (t.batches.len()) " batches ("
                        (t.games_played) " of at most " (t.games) " games); pairs by points 0, ½, 1, 1½, 2: "
                        (format!("{:?}", t.pentanomial))
                        @if let Some(e) = t.elo {
                            "; Elo " (format!("{:+.1} ({:+.1} to {:+.1})", e.value, e.low, e.high))
                            ", likelihood of superiority " (format!("{:.1}%", e.los * 100.0))
                        }
                        @if !t.abandoned.is_empty() {
                            "; batches abandoned when it ended (not counted): " (format!("{:?}", t.abandoned))
                        }
                        @if let Some(error) = &t.error { "; " (error) }
                    }
                    @let xs = pairs_after_each_batch(t);
                    @let pairs = |ys: &mut dyn Iterator<Item = f64>| -> Series {
                        Series { points: xs.iter().copied().zip(ys).collect(), band: Vec::new() }
                    };
                    @let n = t.llrs.len();
                    (chart(
                        "the LLR after each batch",
                        "sprt-llr",
                        &axes,
                        &[
                            pairs(&mut t.llrs.iter().copied()),
                            pairs(&mut std::iter::repeat_n(t.upper, n)),
                            pairs(&mut std::iter::repeat_n(t.lower, n)),
                        ],
                        &["LLR".to_string(), "accept (upper bound)".to_string(), "reject (lower bound)".to_string()],
                        "no pair played yet",
                    ))
                }
            }
        }
    }
}

/// The pairs counted after each batch of a test: the chart's x (a result without its
/// batches, from before they were kept: one pair a point).
fn pairs_after_each_batch(t: &GateResult) -> Vec<f64> {
    if t.batches.len() != t.llrs.len() {
        return (1..=t.llrs.len()).map(|i| i as f64).collect();
    }
    t.batches
        .iter()
        .scan(0u64, |sum, b| {
            *sum += b.pentanomial.iter().sum::<u64>();
            Some(*sum as f64)
        })
        .collect()
}

/// One version's page: its record, its build's output and why it was refused, and its
/// SPRT tests.
pub fn version_main(
    v: &VersionRow,
    standing: Option<&BotStanding>,
    tests: &[GateResult],
) -> Markup {
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
        (tests_main(tests))
        h2 { "The build's output" }
        @if v.output.is_empty() {
            p { @if v.state.is_pending() { "Not built yet." } @else { "The build wrote nothing." } }
        } @else {
            pre.stderr { (v.output) }
        }
    }
}
