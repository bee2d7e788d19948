//! Live games: every record of every running set, fanned out to the watchers.
//!
//! Each running set has a [`LiveTap`], the extra sink `league::play_claimed` hands every
//! record to after the log has it, on the set's own thread (`league::SetPool`). The tap turns the record into one JSON event
//! (serialized once, whatever the number of watchers), keeps the current game's events
//! for watchers that arrive mid-game, and sends it on a `tokio::sync::broadcast`
//! channel that each server-sent-events stream reads. A watcher too slow to keep up
//! loses the oldest events and is told so (`lagged`), never slows a set down.

use std::collections::BTreeMap;
use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use referee::{Record, RecordSink};
use serde::Serialize;
use serde_json::{json, Value};
use tokio::sync::broadcast;

/// Events kept for watchers that fall behind, per channel.
const CHANNEL: usize = 4096;

/// A running set as the live page shows it.
#[derive(Clone, Debug, Serialize)]
pub struct LiveSet {
    /// The set's stem (`r1-alpha-vs-greedy`).
    pub set: String,
    /// The league's names of bots A and B.
    pub bots: [String; 2],
    /// The names the bots announced in their `ready` lines (bot-supplied text).
    pub announced: [Option<String>; 2],
    /// The game being played (0 before the first).
    pub game: u32,
    /// The events of the current game so far, from its `game-start`.
    pub events: Vec<Value>,
}

/// The live state and the channel.
pub struct Hub {
    sets: Mutex<BTreeMap<String, LiveSet>>,
    sender: broadcast::Sender<Arc<str>>,
}

impl Default for Hub {
    fn default() -> Self {
        Hub::new()
    }
}

/// Milliseconds since the Unix epoch, with fractions: the `t` of every event.
pub fn unix_ms() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64() * 1000.0)
        .unwrap_or(0.0)
}

/// The pits of a position in notation, as two arrays in sowing order (player 0's,
/// player 1's), with the side to move; `null` if the text is not a position.
fn board(position: &str) -> Value {
    match engine::Position::from_str(position) {
        Ok(p) => json!({
            "pits": [p.pits(engine::Player::Zero), p.pits(engine::Player::One)],
            "width": p.width(),
            "to_move": p.to_move().index(),
        }),
        Err(_) => Value::Null,
    }
}

impl Hub {
    /// An empty hub.
    pub fn new() -> Hub {
        let (sender, _) = broadcast::channel(CHANNEL);
        Hub {
            sets: Mutex::new(BTreeMap::new()),
            sender,
        }
    }

    /// A new watcher's receiver.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<str>> {
        self.sender.subscribe()
    }

    /// Watchers connected now.
    pub fn watchers(&self) -> usize {
        self.sender.receiver_count()
    }

    /// The running sets with their current games.
    pub fn snapshot(&self) -> Vec<LiveSet> {
        match self.sets.lock() {
            Ok(sets) => sets.values().cloned().collect(),
            Err(poisoned) => poisoned.into_inner().values().cloned().collect(),
        }
    }

    fn with_sets<T>(&self, f: impl FnOnce(&mut BTreeMap<String, LiveSet>) -> T) -> T {
        match self.sets.lock() {
            Ok(mut sets) => f(&mut sets),
            Err(poisoned) => f(&mut poisoned.into_inner()),
        }
    }

    /// A set starts: watchers are told, and it appears in the snapshot.
    pub fn started(&self, set: &str, bots: [String; 2]) {
        let event = json!({"set": set, "t": unix_ms(), "type": "set-started", "bots": bots});
        self.with_sets(|sets| {
            sets.insert(
                set.to_string(),
                LiveSet {
                    set: set.to_string(),
                    bots,
                    announced: [None, None],
                    game: 0,
                    events: Vec::new(),
                },
            )
        });
        let _ = self.sender.send(Arc::from(event.to_string()));
    }

    /// A set is over (`how`: `finished`, `stopped`, `failed`): it leaves the snapshot.
    pub fn ended(&self, set: &str, how: &str) {
        self.with_sets(|sets| sets.remove(set));
        let event = json!({"set": set, "t": unix_ms(), "type": "set-over", "how": how});
        let _ = self.sender.send(Arc::from(event.to_string()));
    }

    /// One record of a running set.
    pub fn record(&self, set: &str, record: &Record) {
        let Ok(Value::Object(mut fields)) = serde_json::to_value(record) else {
            return;
        };
        fields.insert("set".into(), Value::from(set));
        fields.insert("t".into(), Value::from(unix_ms()));
        if let Record::Header(h) = record {
            // For JavaScript, whose numbers keep 53 of the seed's 64 bits (docs/api.md).
            fields.insert("seed_str".into(), Value::from(h.seed.to_string()));
        }
        if let Some(Value::String(position)) = fields.get("position") {
            let b = board(position);
            fields.insert("board".into(), b);
        }
        let event = Value::Object(fields);
        let text: Arc<str> = Arc::from(event.to_string());
        self.with_sets(|sets| {
            let Some(live) = sets.get_mut(set) else {
                return;
            };
            match record {
                Record::Ready(r) if r.bot < 2 => live.announced[r.bot] = r.name.clone(),
                Record::GameStart(g) => {
                    live.game = g.game;
                    live.events.clear();
                }
                _ => {}
            }
            // Keep the current game only (a game has at most a few hundred plies).
            if live.game > 0 {
                live.events.push(event);
            }
        });
        let _ = self.sender.send(text);
    }
}

/// The sink that shows one set's records live.
pub struct LiveTap {
    /// The set's stem.
    pub set: String,
    /// Where the records go.
    pub hub: Arc<Hub>,
}

impl RecordSink for LiveTap {
    fn record(&mut self, record: &Record) -> anyhow::Result<()> {
        self.hub.record(&self.set, record);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_board_in_sowing_order_per_player() {
        let start =
            engine::Position::start(engine::Rules::new(engine::Preset::Hus, 8).expect("rules"));
        let b = board(&start.to_string());
        assert_eq!(b["width"], 8);
        assert_eq!(b["pits"][0].as_array().map(Vec::len), Some(16));
        assert_eq!(board("not a position"), Value::Null);
    }
}
