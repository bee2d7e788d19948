//! What changed on the pages, sent on the live stream as it changes: each new
//! snapshot the runner publishes is compared with the one before, and the differences
//! go out as events that `app.js` applies in place, instead of fetching its page again:
//!
//! - `result`: a set finished (its name, number, bots, winner, the bots that faulted in
//!   it, and `row`, its row of a list of sets as the pages render it);
//! - `standings`: the rows of the standings table that changed (`rows`, each a bot
//!   and its row) and the bots in table order (`order`);
//! - `status`: the status line under the title, when it changed.
//!
//! The rows are the pages' own markup (`crate::html`, escaped by `maud`); the page parses
//! them without running anything, as it parses a page. Nothing is computed while no
//! stream is open.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{json, Value};
use tokio::sync::watch;

use crate::html::{set_row, standings_row, Status};
use crate::state::{AppState, Snapshot};

/// Sends what changed between successive snapshots on the live stream, until shutdown.
pub async fn feed(app: Arc<AppState>, mut shutdown: watch::Receiver<Option<&'static str>>) {
    let mut snapshots = app.snapshot.subscribe();
    let mut last = snapshots.borrow_and_update().clone();
    let mut line = Status::of(&app).line();
    loop {
        tokio::select! {
            changed = snapshots.changed() => {
                if changed.is_err() {
                    return;
                }
            }
            _ = shutdown.wait_for(|s| s.is_some()) => return,
        }
        let now = snapshots.borrow_and_update().clone();
        if app.hub.watchers() > 0 {
            for event in changes(&last, &now) {
                app.hub.notify(&event);
            }
            let status = Status::of(&app).line();
            if status != line {
                app.hub.notify(&json!({ "type": "status", "line": status }));
                line = status;
            }
        }
        last = now;
    }
}

/// The `result` and `standings` events from `old` to `new`.
fn changes(old: &Snapshot, new: &Snapshot) -> Vec<Value> {
    let seen = old.sets.back().map_or(0, |s| s.number);
    let mut out: Vec<Value> = new
        .sets
        .iter()
        .filter(|s| s.number > seen)
        .map(|s| {
            let mut faulted: Vec<&str> = s.faults.iter().map(|f| f.bot.as_str()).collect();
            faulted.sort_unstable();
            faulted.dedup();
            json!({
                "type": "result",
                "set": s.set,
                "number": s.number,
                "bots": s.bots,
                "winner": s.winner,
                "faulted": faulted,
                "row": set_row(s).into_string(),
            })
        })
        .collect();
    let before: HashMap<&str, _> = old
        .standings
        .bots
        .iter()
        .map(|b| (b.name.as_str(), b))
        .collect();
    let rows: Vec<Value> = new
        .standings
        .bots
        .iter()
        .filter(|b| before.get(b.name.as_str()) != Some(b))
        .map(|b| json!({ "bot": b.name, "row": standings_row(b).into_string() }))
        .collect();
    if !rows.is_empty() {
        let order: Vec<&str> = new.standings.bots.iter().map(|b| b.name.as_str()).collect();
        out.push(json!({ "type": "standings", "rows": rows, "order": order }));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::html::test_data::{set_view, standings};

    fn snapshot(sets: &[u64], points: u64) -> Snapshot {
        let mut st = standings();
        st.bots[0].points = points;
        Snapshot {
            standings: st,
            sets: sets
                .iter()
                .map(|n| {
                    let mut v = set_view(1);
                    v.number = *n;
                    v.set = format!("r{n}-x-vs-y");
                    Arc::new(v)
                })
                .collect(),
            paused: false,
            low_space: None,
            removed: Vec::new(),
            problems: Vec::new(),
            started: 0,
            finished: 0,
        }
    }

    /// Two sets finished and x's points changed: two results (oldest first, each with
    /// its row as the pages render it) and x's standings row; nothing new, nothing sent.
    #[test]
    fn a_new_snapshot_sends_its_new_results_and_changed_rows_only() {
        let old = snapshot(&[1, 2], 5);
        let new = snapshot(&[1, 2, 3, 4], 6);
        let events = changes(&old, &new);
        assert_eq!(events.len(), 3, "{events:?}");
        assert_eq!(
            (&events[0]["type"], &events[0]["set"], &events[0]["number"]),
            (&json!("result"), &json!("r3-x-vs-y"), &json!(3))
        );
        assert_eq!(events[0]["faulted"], json!(["y"]));
        assert_eq!(events[0]["row"], json!(set_row(&new.sets[2]).into_string()));
        assert_eq!(events[1]["set"], "r4-x-vs-y");
        assert_eq!(events[2]["type"], "standings");
        assert_eq!(events[2]["order"], json!(["x", "y", "z"]));
        let rows = events[2]["rows"].as_array().expect("rows");
        assert_eq!(rows.len(), 1, "{rows:?}");
        assert_eq!(rows[0]["bot"], "x");
        assert_eq!(
            rows[0]["row"],
            json!(standings_row(&new.standings.bots[0]).into_string())
        );
        assert!(changes(&new, &new).is_empty());
    }
}
