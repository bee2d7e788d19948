//! The workers of a shared store (`/workers`, and on the standings page): `hus
//! workers`' table, and the line that says when the league is stuck.

use league::WorkerRow;
use maud::{html, Markup};

use super::cells::scroller;

/// The workers' table, as `hus workers` prints it.
pub(super) fn workers_table(rows: &[WorkerRow]) -> Markup {
    scroller(
        "workers",
        html! {
            table class="workers" {
                thead { tr {
                    th scope="col" { "worker" }
                    th scope="col" { "host" }
                    th class="num" scope="col" { "last heartbeat" }
                    th class="num" scope="col" { "in flight" }
                    th class="num" scope="col" { "sets/hour" }
                    th class="num" scope="col" { "finished" }
                    th class="num" scope="col" { "duplicates" }
                    th scope="col" { "problem" }
                } }
                tbody {
                    @for w in rows {
                        // As /api/workers rounds it: tenths of a second.
                        @let ago = (w.seen_ago * 10.0).round() / 10.0;
                        tr data-worker=(w.name) {
                            td { (w.name) }
                            td { (w.host) }
                            td class="num" {
                                @if w.stopped { "stopped " (format!("{ago:.0}")) " s ago" }
                                @else { (format!("{ago:.1}")) " s ago" }
                            }
                            td class="num" { (w.in_flight) }
                            td class="num" { (w.last_hour) }
                            td class="num" { (w.finished) }
                            td class="num" { (w.duplicates) }
                            @match &w.problem {
                                Some(p) => td class="problem" {
                                    (p) "; leaves " (w.leaves.join(" and ")) "'s sets to the others"
                                },
                                None => td {},
                            }
                        }
                    }
                }
            }
        },
    )
}

/// The workers page's content: the workers of a shared store (`hus workers`' table),
/// and the line that says when the league is stuck.
pub fn workers_main(workers: &[WorkerRow], stuck: Option<&str>) -> Markup {
    html! {
        h2 { "Workers" }
        @if workers.is_empty() {
            p { "No worker: every set is played by this server (hus worker processes share a PostgreSQL store: docs/deploy.md)." }
        } @else {
            (workers_table(workers))
        }
        @if let Some(stuck) = stuck {
            p class="problem" data-stuck="" { (stuck) }
        }
    }
}
