//! Live games: every record of every running set, fanned out to the watchers.
//! Records with a position carry its `board` (pits, width, side to move, sowing), which
//! the dashboard draws with the viewer's `HusBoard`.
//!
//! Each running set has a [`LiveTap`], the extra sink `league::play_claimed` hands every
//! record to after the log has it, on the set's own thread (`league::SetPool`). The tap
//! stamps the record with the time, keeps the current game's records for watchers that
//! arrive mid-game (made into events when a page asks: [`Hub::snapshot`]), and while
//! any stream is open turns it into one JSON event (serialized once, whatever the number
//! of watchers) sent on a `tokio::sync::broadcast` channel that each server-sent-events
//! stream reads. A set no one watches pays for a copy of each record, not for its JSON:
//! the live view costs the sets nothing that the league's own sets do not pay. A watcher too slow to keep up
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
    /// The games the set plays, as its header says (0 until the header is written).
    pub games_planned: u32,
    /// The points of bots A and B in the games finished so far: the set's score.
    pub points: [u64; 2],
    /// The time control, as the header has it (`null` until the header is written):
    /// with a clock, a page computes the clocks from it and the moves' times.
    pub time: Option<Value>,
    /// The events of the current game so far, from its `game-start`.
    pub events: Vec<Value>,
}

/// A running set as the hub keeps it: its current game's records as they came, each
/// with its `t`.
#[derive(Clone)]
struct Running {
    bots: [String; 2],
    announced: [Option<String>; 2],
    game: u32,
    games_planned: u32,
    points: [u64; 2],
    time: Option<Value>,
    records: Vec<(Record, f64)>,
    /// Moves of the whole set so far: what its replay page would hold.
    moves: u64,
}

/// The live state and the channel.
pub struct Hub {
    sets: Mutex<BTreeMap<String, Running>>,
    sender: broadcast::Sender<Arc<str>>,
}

/// A record as a live event: its fields, the set, the time `t`, the seed as a string
/// for a header, and the board for a record with a position.
fn event(set: &str, record: &Record, t: f64) -> Value {
    let Ok(Value::Object(mut fields)) = serde_json::to_value(record) else {
        return Value::Null;
    };
    fields.insert("set".into(), Value::from(set));
    fields.insert("t".into(), Value::from(t));
    if let Record::Header(h) = record {
        // For JavaScript, whose numbers keep 53 of the seed's 64 bits (docs/api.md).
        fields.insert("seed_str".into(), Value::from(h.seed.to_string()));
    }
    if let Some(Value::String(position)) = fields.get("position") {
        let b = board(position);
        fields.insert("board".into(), b);
    }
    Value::Object(fields)
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
/// player 1's), with the width, the side to move and the sowing direction of its
/// rules (how the dashboard's board lays the pits out); `null` if the text is not a
/// position. Any width the rules allow (an `AnyPosition`).
fn board(position: &str) -> Value {
    use engine::Board as _;
    match engine::AnyPosition::from_str(position) {
        Ok(p) => json!({
            "pits": [p.pits(engine::Player::Zero), p.pits(engine::Player::One)],
            "width": p.width(),
            "to_move": p.to_move().index(),
            "sowing": match p.rules().preset().sowing() {
                engine::Sowing::Clockwise => "clockwise",
                engine::Sowing::Anticlockwise => "anticlockwise",
            },
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

    /// The running sets with their current games. The records are copied under the
    /// lock and made into events outside it: a page never holds a set up for longer
    /// than a copy.
    pub fn snapshot(&self) -> Vec<LiveSet> {
        let sets = self.with_sets(|sets| sets.clone());
        sets.into_iter()
            .map(|(set, r)| LiveSet {
                events: r
                    .records
                    .iter()
                    .map(|(record, t)| event(&set, record, *t))
                    .filter(|e| !e.is_null())
                    .collect(),
                set,
                bots: r.bots,
                announced: r.announced,
                game: r.game,
                games_planned: r.games_planned,
                points: r.points,
                time: r.time,
            })
            .collect()
    }

    /// The moves a running set has made so far, or `None` if it is not running here.
    pub fn moves(&self, set: &str) -> Option<u64> {
        self.with_sets(|sets| sets.get(set).map(|r| r.moves))
    }

    /// The stems of the running sets.
    pub fn running(&self) -> Vec<String> {
        self.with_sets(|sets| sets.keys().cloned().collect())
    }

    fn with_sets<T>(&self, f: impl FnOnce(&mut BTreeMap<String, Running>) -> T) -> T {
        match self.sets.lock() {
            Ok(mut sets) => f(&mut sets),
            Err(poisoned) => f(&mut poisoned.into_inner()),
        }
    }

    /// An event of the pages (a result, standings rows, the status line: `web::feed`),
    /// sent to the open streams as it is; nothing when no stream is open.
    pub fn notify(&self, event: &Value) {
        if self.sender.receiver_count() > 0 {
            let _ = self.sender.send(Arc::from(event.to_string()));
        }
    }

    /// A set starts: watchers are told, and it appears in the snapshot.
    pub fn started(&self, set: &str, bots: [String; 2]) {
        let event = json!({"set": set, "t": unix_ms(), "type": "set-started", "bots": bots});
        self.with_sets(|sets| {
            sets.insert(
                set.to_string(),
                Running {
                    bots,
                    announced: [None, None],
                    game: 0,
                    games_planned: 0,
                    points: [0, 0],
                    time: None,
                    records: Vec::new(),
                    moves: 0,
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
        let t = unix_ms();
        // No stream open: nothing to send (a stream opened from now on gets the next
        // event, as it would have had this one been sent to no one).
        let text: Option<Arc<str>> = (self.sender.receiver_count() > 0)
            .then(|| event(set, record, t))
            .filter(|e| !e.is_null())
            .map(|e| Arc::from(e.to_string()));
        self.with_sets(|sets| {
            let Some(live) = sets.get_mut(set) else {
                return;
            };
            match record {
                Record::Header(h) => {
                    live.time = serde_json::to_value(h.time).ok();
                    live.games_planned = h.games;
                }
                Record::GameEnd(e) => {
                    for side in referee::Side::BOTH {
                        live.points[side.index()] += u64::from(e.points[side]);
                    }
                }
                Record::Ready(r) => live.announced[r.bot.index()] = r.name.clone(),
                Record::GameStart(g) => {
                    live.game = g.game;
                    live.records.clear();
                }
                Record::Move(_) => live.moves += 1,
                _ => {}
            }
            // Keep the current game only (a game has at most a few hundred plies).
            if live.game > 0 {
                live.records.push((record.clone(), t));
            }
        });
        if let Some(text) = text {
            let _ = self.sender.send(text);
        }
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
    fn record(&mut self, record: &Record) -> Result<(), referee::WriteError> {
        self.hub.record(&self.set, record);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_no_one_watches_keeps_its_records_and_a_page_gets_the_events_a_stream_gets() {
        let hub = Hub::new();
        hub.started("s", ["a".into(), "b".into()]);
        let start =
            engine::Position::start(engine::Rules::new(engine::Preset::Hus, 8).expect("rules"))
                .to_string();
        let game_start = |game: u32| -> Record {
            serde_json::from_value(
                json!({"type": "game-start", "game": game, "first": 0, "position": start}),
            )
            .expect("a game-start record")
        };
        // The header's time control is kept for pages that open later.
        assert_eq!(hub.snapshot()[0].time, None);
        let clock =
            json!({"mode": "clock", "base_ms": 60000, "increment_ms": 1000, "ready_ms": 10000});
        let header: Record = serde_json::from_value(json!({
            "type": "header", "log_version": 1, "referee": "hus 0.1.0",
            "rules": {"preset": "hus", "width": 8}, "time": clock, "seed": 1, "games": 2,
            "early_stop": false, "started": "2026-11-29T23:43:10Z", "line_limit": 65536,
            "bots": [{"command": "a", "name": null, "stderr": "a.stderr"},
                     {"command": "b", "name": null, "stderr": "b.stderr"}],
        }))
        .expect("a header record");
        hub.record("s", &header);
        assert_eq!(hub.snapshot()[0].time, Some(clock));
        assert_eq!(hub.snapshot()[0].games_planned, 2);
        assert_eq!(hub.snapshot()[0].points, [0, 0]);
        // No stream open: the record is kept, and made an event when a page asks.
        hub.record("s", &game_start(1));
        let live = hub.snapshot();
        assert_eq!(live.len(), 1);
        assert_eq!((live[0].set.as_str(), live[0].game), ("s", 1));
        assert_eq!(live[0].events.len(), 1);
        let e = &live[0].events[0];
        assert_eq!(
            (&e["type"], &e["set"], &e["game"]),
            (&json!("game-start"), &json!("s"), &json!(1))
        );
        assert_eq!(e["board"]["width"], 8);
        assert!(e["t"].as_f64().is_some_and(|t| t > 0.0), "{e}");
        // A stream open: it gets the same event the page shows.
        let mut stream = hub.subscribe();
        hub.record("s", &game_start(2));
        // Compared as the text a stream sends: a time like 1796342796731.87 read back
        // from text may differ from the kept value in its last bit.
        let sent = stream.try_recv().expect("an event");
        let live = hub.snapshot();
        assert_eq!(live[0].game, 2);
        // A game's end adds its points to the set's score.
        let end: Record = serde_json::from_value(json!({
            "type": "game-end", "game": 2, "reason": "no-moves", "winner": 1, "faulted": [],
            "double": false, "points": [0, 2], "plies": 30, "position": start,
        }))
        .expect("a game-end record");
        hub.record("s", &end);
        let _ = stream.try_recv();
        assert_eq!(hub.snapshot()[0].points, [0, 2]);
        let shown: Vec<String> = live[0].events.iter().map(Value::to_string).collect();
        assert_eq!(shown, [sent.to_string()]);
        assert_eq!(hub.running(), ["s"]);
        hub.ended("s", "finished");
        assert_eq!(hub.running(), Vec::<String>::new());
        assert!(hub.snapshot().is_empty());
    }

    #[test]
    fn a_board_in_sowing_order_per_player() {
        let start =
            engine::Position::start(engine::Rules::new(engine::Preset::Hus, 8).expect("rules"));
        let b = board(&start.to_string());
        assert_eq!(b["width"], 8);
        assert_eq!(b["pits"][0].as_array().map(Vec::len), Some(16));
        assert_eq!(
            (&b["to_move"], &b["sowing"]),
            (&json!(0), &json!("clockwise"))
        );
        let world = engine::Position::start(
            engine::Rules::new(engine::Preset::MancalaWorld, 8).expect("rules"),
        );
        assert_eq!(board(&world.to_string())["sowing"], "anticlockwise");
        // The widest board too (not an engine::Position: a WidePosition).
        let wide = engine::AnyPosition::start(
            engine::Rules::new(engine::Preset::Hus, engine::MAX_WIDTH).expect("rules"),
        );
        assert!(matches!(wide, engine::AnyPosition::Wide(_)));
        let b = board(&wide.to_string());
        assert_eq!(b["width"], engine::MAX_WIDTH);
        assert_eq!(
            b["pits"][1].as_array().map(Vec::len),
            Some(2 * engine::MAX_WIDTH)
        );
        assert_eq!(board("not a position"), Value::Null);
    }
}
