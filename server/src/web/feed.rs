//! What changed on the pages, for the live stream: each new snapshot the runner
//! publishes is compared with the one before, and the differences are handed to the
//! hub (`crate::live::Hub::result`, `standings`, `status`), whose dashboard streams send
//! them at most once a second (the newest results, the rows changed since the stream's
//! last write), as events that `app.js` applies in place instead of fetching its page
//! again:
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
            let (results, standings) = changes(&last, &now);
            for (number, event) in results {
                app.hub.result(number, &event);
            }
            if let Some((rows, order)) = standings {
                app.hub.standings(rows, order);
            }
            let status = Status::of(&app).line();
            if status != line {
                app.hub.status(status.clone());
                line = status;
            }
        }
        last = now;
    }
}

/// Standings rows that changed (each bot and its row) and every bot in the table's
/// order.
type RowChanges = (Vec<(String, String)>, Vec<String>);

/// The `result` events from `old` to `new` (each with its set's number, oldest first),
/// and the standings rows that changed, if any.
fn changes(old: &Snapshot, new: &Snapshot) -> (Vec<(u64, Value)>, Option<RowChanges>) {
    let seen = old.sets.back().map_or(0, |s| s.number);
    let results: Vec<(u64, Value)> = new
        .sets
        .iter()
        .filter(|s| s.number > seen)
        .map(|s| {
            let mut faulted: Vec<&str> = s.faults.iter().map(|f| f.bot.as_str()).collect();
            faulted.sort_unstable();
            faulted.dedup();
            let event = json!({
                "type": "result",
                "set": s.set,
                "number": s.number,
                "bots": s.bots,
                "winner": s.winner,
                "faulted": faulted,
                "row": set_row(s).into_string(),
            });
            (s.number, event)
        })
        .collect();
    let before: HashMap<&str, _> = old
        .standings
        .bots
        .iter()
        .map(|b| (b.name.as_str(), b))
        .collect();
    let rows: Vec<(String, String)> = new
        .standings
        .bots
        .iter()
        .filter(|b| before.get(b.name.as_str()) != Some(b))
        .map(|b| (b.name.clone(), standings_row(b).into_string()))
        .collect();
    let standings = (!rows.is_empty()).then(|| {
        let order = new.standings.bots.iter().map(|b| b.name.clone()).collect();
        (rows, order)
    });
    (results, standings)
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
        let (results, standings) = changes(&old, &new);
        assert_eq!(results.len(), 2, "{results:?}");
        let (number, event) = &results[0];
        assert_eq!(*number, 3);
        assert_eq!(
            (&event["type"], &event["set"], &event["number"]),
            (&json!("result"), &json!("r3-x-vs-y"), &json!(3))
        );
        assert_eq!(event["faulted"], json!(["y"]));
        assert_eq!(event["row"], json!(set_row(&new.sets[2]).into_string()));
        assert_eq!(results[1].0, 4);
        assert_eq!(results[1].1["set"], "r4-x-vs-y");
        let (rows, order) = standings.expect("a standings change");
        assert_eq!(order, ["x", "y", "z"]);
        assert_eq!(
            rows,
            [(
                "x".to_string(),
                standings_row(&new.standings.bots[0]).into_string()
            )]
        );
        let (results, standings) = changes(&new, &new);
        assert!(results.is_empty() && standings.is_none());
    }
}
