//! Live games: every record of every running set, kept for the pages and sent to the
//! streams that show it, at a cost per stream that does not grow with the league's speed.
//! Records with a position carry its `board` (pits, width, side to move, sowing), which
//! the dashboard draws with the viewer's `HusBoard`.
//!
//! Each running set has a [`LiveTap`], the extra sink `league::play_claimed` hands every
//! record to after the log has it, on the set's own thread (`league::SetPool`). The tap
//! stamps the record with the time and keeps the current game's records (made into
//! events when a page asks: [`Hub::snapshot`]) and what the set's card shows: its
//! latest position, last move, each bot's last move time and clock. Nothing is
//! serialized then, unless a stream follows that one set.
//!
//! Two kinds of live stream read the hub (`web::events`):
//!
//! - the dashboard's ([`Hub::cursor`], [`Hub::boards`], [`Hub::pages`]): a stream asks
//!   the hub, every [`BOARD_EVERY`], for what changed among the sets the strip shows (the
//!   first [`BOARDS_SHOWN`] running sets in the order they started: each as a `card`,
//!   the set's whole state, so the latest replaces any it did not send; a `set-over`
//!   for each of them that ended), and every [`PAGE_EVERY`] for the pages' events (the
//!   newest [`FINISHED_SHOWN`] sets that ended, the newest [`RESULTS_SHOWN`] results,
//!   one `standings` event with the rows that changed, the status line). A card is
//!   serialized once a version, whatever the number of streams; a stream that cannot
//!   write meanwhile gets the latest state when it can, never a backlog.
//! - a set's ([`Hub::follow`], `?set=STEM`): every record of that one set, in order,
//!   on a `broadcast` channel of its own made while someone follows it, after a
//!   `live-set` event with the set as `/api/live` shows it, taken under the same lock
//!   (nothing lost, nothing twice). A follower too slow to keep up loses the oldest
//!   events and is told so (`lagged`), never slows a set down.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::str::FromStr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use referee::{Record, RecordSink};
use serde::Serialize;
use serde_json::{json, Value};
use tokio::sync::broadcast;

/// How often a dashboard stream writes the cards that changed: a set's board moves on
/// the dashboard at most this often, whatever the bots' speed.
pub const BOARD_EVERY: Duration = Duration::from_millis(250);
/// How often a dashboard stream writes the pages' events (the finished sets of the
/// strip, results, standings rows, the status line): a whole multiple of `BOARD_EVERY`.
pub const PAGE_EVERY: Duration = Duration::from_secs(1);
/// Running sets whose cards a dashboard stream carries: the first to have started.
pub const BOARDS_SHOWN: usize = 8;
/// Finished sets the strip shows (`app.js`'s `FINISHED_SHOWN`): the newest.
pub const FINISHED_SHOWN: usize = 4;
/// Results a dashboard stream carries every `PAGE_EVERY` at most: the newest (a page
/// that missed some fetches itself again, at most once a minute).
pub const RESULTS_SHOWN: usize = 4;
/// Sets that ended kept for the streams (the `set-over` of a set a stream showed; a
/// `?set=` of a set just over): 1,024 sets a second for `BOARD_EVERY`.
const ENDED_KEPT: usize = 256;
/// Events a set's channel keeps for a follower that falls behind.
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
    /// The time control, as the header has it (`null` until the header is written).
    pub time: Option<Value>,
    /// The events of the current game so far, from its `game-start`.
    pub events: Vec<Value>,
}

/// A record kept for pages: the record, its `t`, and each bot's clock after it (with a
/// clock time control, once the game started).
type Kept = (Record, f64, Option<[f64; 2]>);

/// A running set as the hub keeps it.
struct Running {
    /// Its place in the order sets started: the strip shows the first ones.
    order: u64,
    bots: [String; 2],
    announced: [Option<String>; 2],
    game: u32,
    games_planned: u32,
    points: [u64; 2],
    time: Option<Value>,
    /// The current game's records as they came.
    records: Vec<Kept>,
    /// Moves of the whole set so far: what its replay page would hold.
    moves: u64,
    /// Plies of the current game so far.
    ply: u32,
    /// Indexes in `records` of the last record with a position and of the last move.
    position_at: Option<usize>,
    move_at: Option<usize>,
    /// Each bot's last move time, in ms.
    ms: [Option<f64>; 2],
    /// Each bot's clock after its last move, with a clock time control.
    clocks: Option<[f64; 2]>,
    /// The bot (0 = A, 1 = B) of each engine player in this game.
    bot_of: [usize; 2],
    /// How the current game ended, once it has.
    over: Option<Value>,
    /// Bumped by every record: a stream sends a card again when it changed.
    version: u64,
    /// The card of `version`, made by the first stream that asked.
    card: Option<(u64, Arc<str>)>,
    /// The channel of the streams that follow this set, while one does.
    followers: Option<broadcast::Sender<Arc<str>>>,
}

/// A set that ended, as the streams tell it.
struct Ended {
    /// Its place in the order sets ended (from 1).
    order: u64,
    set: String,
    /// The `set-over` event.
    text: Arc<str>,
}

/// The pages' events as the streams take them: the newest results, the latest row of
/// each bot and the order, the status line; each change numbered.
#[derive(Default)]
struct Pages {
    /// The newest `RESULTS_SHOWN` results: the set's number and its `result` event.
    results: VecDeque<(u64, Arc<str>)>,
    /// Each bot's latest standings row and the version it came with.
    rows: HashMap<String, (u64, String)>,
    order: Vec<String>,
    standings: u64,
    status: (u64, String),
}

/// What the hub holds, under one lock.
#[derive(Default)]
struct State {
    sets: BTreeMap<String, Running>,
    started: u64,
    ended: VecDeque<Ended>,
    ended_count: u64,
    pages: Pages,
}

/// The live state.
pub struct Hub {
    state: Mutex<State>,
    /// Live streams open now, of both kinds.
    watchers: AtomicUsize,
}

/// What a dashboard stream has sent: each shown set's card version, and how far it has
/// read the sets that ended, the results, the standings and the status line.
#[derive(Debug, Default)]
pub struct Cursor {
    shown: HashMap<String, u64>,
    ended: u64,
    /// Sets that ended whose `set-over` went out with the boards since the last pages.
    over_sent: Vec<u64>,
    result: u64,
    standings: u64,
    status: u64,
}

/// What a stream that follows one set starts with.
pub enum Follow {
    /// The set runs: its `live-set` event, then every event of its channel.
    Running(String, broadcast::Receiver<Arc<str>>),
    /// It ended a moment ago: its `set-over` event.
    Ended(Arc<str>),
    /// This server is not playing it and has not lately: an `unknown-set` event.
    Unknown(String),
}

/// A stream open: counted in [`Hub::watchers`] as long as it lives.
pub struct Watching(Arc<Hub>);

impl Drop for Watching {
    fn drop(&mut self) {
        self.0.watchers.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A record as a live event: its fields, the set, the time `t`, the seed as a string
/// for a header, the board for a record with a position, and with a clock time control
/// each bot's `clocks` after it.
fn event(set: &str, record: &Record, t: f64, clocks: Option<[f64; 2]>) -> Value {
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
    if let Some(clocks) = clocks {
        fields.insert("clocks".into(), json!(clocks));
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

/// The engine player to move in a position, if the text is one.
fn to_move(position: &str) -> Option<usize> {
    use engine::Board as _;
    engine::AnyPosition::from_str(position)
        .ok()
        .map(|p| p.to_move().index())
}

/// The position a record carries (after it), if any.
fn position(record: &Record) -> Option<&str> {
    match record {
        Record::GameStart(g) => Some(&g.position),
        Record::Move(m) => Some(&m.position),
        Record::Fault(f) => Some(&f.position),
        Record::GameEnd(e) => Some(&e.position),
        _ => None,
    }
}

/// A clock time control's base and increment in ms, from the header's `time`.
fn clock(time: Option<&Value>) -> Option<(f64, f64)> {
    let time = time?;
    if time["mode"] != "clock" {
        return None;
    }
    Some((time["base_ms"].as_f64()?, time["increment_ms"].as_f64()?))
}

/// Appends one server-sent event: `event: NAME` if named, then the data (a serialized
/// JSON object, so one line; a line break would start another `data:` line), then a
/// blank line.
pub fn push_event(out: &mut String, name: Option<&str>, data: &str) {
    if let Some(name) = name {
        out.push_str("event: ");
        out.push_str(name);
        out.push('\n');
    }
    for line in data.split('\n') {
        out.push_str("data: ");
        out.push_str(line);
        out.push('\n');
    }
    out.push('\n');
}

impl Running {
    fn new(order: u64, bots: [String; 2]) -> Running {
        Running {
            order,
            bots,
            announced: [None, None],
            game: 0,
            games_planned: 0,
            points: [0, 0],
            time: None,
            records: Vec::new(),
            moves: 0,
            ply: 0,
            position_at: None,
            move_at: None,
            ms: [None, None],
            clocks: None,
            bot_of: [0, 1],
            over: None,
            version: 0,
            card: None,
            followers: None,
        }
    }

    /// Takes one record in: the set's score and header, the card's state, the kept
    /// records of the current game. The clocks after it (with a clock, in a game).
    fn take(&mut self, record: &Record, t: f64) -> Option<[f64; 2]> {
        self.version += 1;
        match record {
            Record::Header(h) => {
                self.time = serde_json::to_value(h.time).ok();
                self.games_planned = h.games;
            }
            Record::GameEnd(e) => {
                for side in referee::Side::BOTH {
                    self.points[side.index()] += u64::from(e.points[side]);
                }
                self.over = serde_json::to_value(e.reason).ok();
            }
            Record::Ready(r) => self.announced[r.bot.index()] = r.name.clone(),
            Record::GameStart(g) => {
                self.game = g.game;
                self.records.clear();
                self.ply = 0;
                self.position_at = None;
                self.move_at = None;
                self.over = None;
                self.clocks = clock(self.time.as_ref()).map(|(base, _)| [base, base]);
                // The bot that moves first is the player to move at the start.
                if let Some(player) = to_move(&g.position) {
                    let first = g.first.index();
                    self.bot_of[player] = first;
                    self.bot_of[1 - player] = 1 - first;
                }
            }
            Record::Move(m) => {
                self.moves += 1;
                self.ply = m.ply + 1;
                let bot = m.bot.index();
                self.bot_of[m.player.index()] = bot;
                self.ms[bot] = Some(m.ms);
                // As the referee counts (PROTOCOL.md, "Timing"): the bot's time less
                // its lag allowance and the referee's stalls, then the increment.
                if let (Some(clocks), Some((_, increment))) =
                    (self.clocks.as_mut(), clock(self.time.as_ref()))
                {
                    let used =
                        (m.ms - m.lag_ms.unwrap_or(0.0) - m.stall_ms.unwrap_or(0.0)).max(0.0);
                    clocks[bot] = (clocks[bot] - used).max(0.0) + increment;
                }
            }
            _ => {}
        }
        // Keep the current game only (a game has at most a few hundred plies).
        if self.game > 0 {
            if position(record).is_some() {
                self.position_at = Some(self.records.len());
            }
            if matches!(record, Record::Move(_)) {
                self.move_at = Some(self.records.len());
            }
            self.records.push((record.clone(), t, self.clocks));
        }
        self.clocks
    }

    /// The set as `/api/live` shows it, its records made events.
    fn live(&self, set: &str) -> LiveSet {
        LiveSet {
            set: set.to_string(),
            bots: self.bots.clone(),
            announced: self.announced.clone(),
            game: self.game,
            games_planned: self.games_planned,
            points: self.points,
            time: self.time.clone(),
            events: self
                .records
                .iter()
                .map(|(record, t, clocks)| event(set, record, *t, *clocks))
                .filter(|e| !e.is_null())
                .collect(),
        }
    }

    /// The set's card: what the strip shows of it, whole, as one `card` event.
    fn card(&mut self, set: &str) -> Arc<str> {
        if let Some((version, text)) = &self.card {
            if *version == self.version {
                return text.clone();
            }
        }
        let position = self
            .position_at
            .and_then(|i| self.records.get(i))
            .and_then(|(record, _, _)| position(record))
            .map(board);
        let last = self.move_at.and_then(|i| self.records.get(i));
        let played = last.and_then(|(record, _, _)| match record {
            Record::Move(m) => Some(json!({
                "player": m.player.index(), "pit": m.pit, "events": m.events,
            })),
            _ => None,
        });
        let t = self.records.last().map_or_else(unix_ms, |(_, t, _)| *t);
        let text: Arc<str> = Arc::from(
            json!({
                "type": "card", "set": set, "t": t, "bots": self.bots,
                "announced": self.announced, "game": self.game,
                "games_planned": self.games_planned, "points": self.points,
                "time": self.time, "ply": self.ply, "board": position, "move": played,
                "ms": self.ms, "clocks": self.clocks, "bot_of": self.bot_of,
                "over": self.over,
            })
            .to_string(),
        );
        self.card = Some((self.version, text.clone()));
        text
    }
}

impl State {
    fn ended_set(&self, set: &str) -> Option<&Ended> {
        self.ended.iter().rev().find(|e| e.set == set)
    }
}

impl Hub {
    /// An empty hub.
    pub fn new() -> Hub {
        Hub {
            state: Mutex::new(State::default()),
            watchers: AtomicUsize::new(0),
        }
    }

    /// A stream opens: counted among the watchers until the guard is dropped.
    pub fn watching(self: &Arc<Self>) -> Watching {
        self.watchers.fetch_add(1, Ordering::Relaxed);
        Watching(self.clone())
    }

    /// Live streams open now.
    pub fn watchers(&self) -> usize {
        self.watchers.load(Ordering::Relaxed)
    }

    fn with_state<T>(&self, f: impl FnOnce(&mut State) -> T) -> T {
        match self.state.lock() {
            Ok(mut state) => f(&mut state),
            Err(poisoned) => f(&mut poisoned.into_inner()),
        }
    }

    /// The running sets with their current games, in the order they started. The
    /// records are made into events under the lock: a page holds the sets up for as
    /// long as that takes (a game has at most a few hundred plies).
    pub fn snapshot(&self) -> Vec<LiveSet> {
        self.with_state(|state| {
            let mut sets: Vec<(&String, &Running)> = state.sets.iter().collect();
            sets.sort_by_key(|(_, r)| r.order);
            sets.into_iter().map(|(set, r)| r.live(set)).collect()
        })
    }

    /// The moves a running set has made so far, or `None` if it is not running here.
    pub fn moves(&self, set: &str) -> Option<u64> {
        self.with_state(|state| state.sets.get(set).map(|r| r.moves))
    }

    /// The stems of the running sets.
    pub fn running(&self) -> Vec<String> {
        self.with_state(|state| state.sets.keys().cloned().collect())
    }

    /// A set starts: it appears in the snapshot and, among the first running, on the
    /// dashboards.
    pub fn started(&self, set: &str, bots: [String; 2]) {
        self.with_state(|state| {
            state.started += 1;
            let running = Running::new(state.started, bots);
            state.sets.insert(set.to_string(), running);
        });
    }

    /// A set is over (`how`: `finished`, `stopped`, `failed`): it leaves the snapshot;
    /// its `set-over` (with its bots and score) goes to its followers, whose streams
    /// then end, and is kept for the dashboards.
    pub fn ended(&self, set: &str, how: &str) {
        self.with_state(|state| {
            let Some(running) = state.sets.remove(set) else {
                return;
            };
            let text: Arc<str> = Arc::from(
                json!({"set": set, "t": unix_ms(), "type": "set-over", "how": how,
                       "bots": running.bots, "points": running.points})
                .to_string(),
            );
            if let Some(followers) = &running.followers {
                let _ = followers.send(text.clone());
            }
            state.ended_count += 1;
            let order = state.ended_count;
            state.ended.push_back(Ended {
                order,
                set: set.to_string(),
                text,
            });
            while state.ended.len() > ENDED_KEPT {
                state.ended.pop_front();
            }
        });
    }

    /// One record of a running set. Made an event only if a stream follows the set.
    pub fn record(&self, set: &str, record: &Record) {
        let t = unix_ms();
        self.with_state(|state| {
            let Some(live) = state.sets.get_mut(set) else {
                return;
            };
            let clocks = live.take(record, t);
            if let Some(followers) = &live.followers {
                if followers.receiver_count() == 0 {
                    live.followers = None;
                } else {
                    let e = event(set, record, t, clocks);
                    if !e.is_null() {
                        let _ = followers.send(Arc::from(e.to_string()));
                    }
                }
            }
        });
    }

    /// A stream follows one set: the set as `/api/live` shows it and a receiver of its
    /// next events, taken together under the lock; or how it ended, or that it is
    /// unknown.
    pub fn follow(&self, set: &str) -> Follow {
        self.with_state(|state| {
            if let Some(running) = state.sets.get_mut(set) {
                let receiver = match &running.followers {
                    Some(sender) => sender.subscribe(),
                    None => {
                        let (sender, receiver) = broadcast::channel(CHANNEL);
                        running.followers = Some(sender);
                        receiver
                    }
                };
                let mut first = serde_json::to_value(running.live(set)).unwrap_or(Value::Null);
                if let Value::Object(fields) = &mut first {
                    fields.insert("type".into(), Value::from("live-set"));
                    fields.insert("t".into(), Value::from(unix_ms()));
                }
                return Follow::Running(first.to_string(), receiver);
            }
            match state.ended_set(set) {
                Some(ended) => Follow::Ended(ended.text.clone()),
                None => Follow::Unknown(
                    json!({"type": "unknown-set", "set": set, "t": unix_ms()}).to_string(),
                ),
            }
        })
    }

    /// A new dashboard stream's cursor: it has sent no card; the sets that end and the
    /// pages' events from now on (the page it serves has the earlier results).
    pub fn cursor(&self) -> Cursor {
        self.with_state(|state| Cursor {
            shown: HashMap::new(),
            ended: state.ended_count,
            over_sent: Vec::new(),
            result: state.pages.results.back().map_or(0, |(n, _)| *n),
            standings: state.pages.standings,
            status: state.pages.status.0,
        })
    }

    /// The boards' part of a dashboard stream's write, every `BOARD_EVERY`: a `set-over`
    /// for each set it showed that ended, and a `card` for each of the first
    /// `BOARDS_SHOWN` running sets that changed since it was last sent.
    pub fn boards(&self, cursor: &mut Cursor, out: &mut String) {
        self.with_state(|state| {
            let mut shown: Vec<(&String, &Running)> = state.sets.iter().collect();
            shown.sort_by_key(|(_, r)| r.order);
            shown.truncate(BOARDS_SHOWN);
            let shown: Vec<String> = shown.into_iter().map(|(s, _)| s.clone()).collect();
            let gone: Vec<String> = cursor
                .shown
                .keys()
                .filter(|s| !state.sets.contains_key(s.as_str()))
                .cloned()
                .collect();
            for set in gone {
                cursor.shown.remove(&set);
                // Past `ENDED_KEPT` sets since (a thousand a second), the page drops
                // the card itself once `/api/live` no longer lists it.
                if let Some(ended) = state.ended_set(&set) {
                    push_event(out, None, &ended.text);
                    cursor.over_sent.push(ended.order);
                }
            }
            for set in shown {
                let Some(running) = state.sets.get_mut(&set) else {
                    continue;
                };
                if cursor.shown.get(&set) == Some(&running.version) {
                    continue;
                }
                cursor.shown.insert(set.clone(), running.version);
                push_event(out, None, &running.card(&set));
            }
        });
    }

    /// The pages' part of a dashboard stream's write, every `PAGE_EVERY`: the newest
    /// `FINISHED_SHOWN` sets that ended since (their `set-over`), the newest
    /// `RESULTS_SHOWN` results since, one `standings` event with every row that changed
    /// since, and the status line if it changed.
    pub fn pages(&self, cursor: &mut Cursor, out: &mut String) {
        self.with_state(|state| {
            let over_sent = std::mem::take(&mut cursor.over_sent);
            let fresh: Vec<&Ended> = state
                .ended
                .iter()
                .filter(|e| e.order > cursor.ended && !over_sent.contains(&e.order))
                .collect();
            for ended in &fresh[fresh.len().saturating_sub(FINISHED_SHOWN)..] {
                push_event(out, None, &ended.text);
            }
            cursor.ended = state.ended_count;
            let pages = &state.pages;
            for (number, text) in &pages.results {
                if *number > cursor.result {
                    push_event(out, None, text);
                }
            }
            cursor.result = pages.results.back().map_or(cursor.result, |(n, _)| *n);
            if pages.standings > cursor.standings {
                let rows: Vec<Value> = pages
                    .order
                    .iter()
                    .filter_map(|bot| {
                        let (version, row) = pages.rows.get(bot)?;
                        (*version > cursor.standings).then(|| json!({"bot": bot, "row": row}))
                    })
                    .collect();
                let event = json!({"type": "standings", "rows": rows, "order": pages.order});
                push_event(out, None, &event.to_string());
                cursor.standings = pages.standings;
            }
            if pages.status.0 > cursor.status {
                let event = json!({"type": "status", "line": pages.status.1});
                push_event(out, None, &event.to_string());
                cursor.status = pages.status.0;
            }
        });
    }

    /// A set finished (`web::feed`): its `result` event, numbered by the set, kept
    /// among the newest `RESULTS_SHOWN`.
    pub fn result(&self, number: u64, event: &Value) {
        let text: Arc<str> = Arc::from(event.to_string());
        self.with_state(|state| {
            let results = &mut state.pages.results;
            if results.back().is_some_and(|(n, _)| *n >= number) {
                return;
            }
            results.push_back((number, text));
            while results.len() > RESULTS_SHOWN {
                results.pop_front();
            }
        });
    }

    /// Standings rows that changed (`web::feed`: each bot and its row, rendered) and
    /// every bot in the table's order.
    pub fn standings(&self, rows: Vec<(String, String)>, order: Vec<String>) {
        self.with_state(|state| {
            let pages = &mut state.pages;
            pages.standings += 1;
            for (bot, row) in rows {
                pages.rows.insert(bot, (pages.standings, row));
            }
            // Only the bots of the table: a bot removed from it leaves with its row.
            pages.rows.retain(|bot, _| order.contains(bot));
            pages.order = order;
        });
    }

    /// The status line, when it changed (`web::feed`).
    pub fn status(&self, line: String) {
        self.with_state(|state| {
            let status = &mut state.pages.status;
            if status.1 != line {
                *status = (status.0 + 1, line);
            }
        });
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
        // A stream follows the set: it gets the same event the page shows.
        let Follow::Running(first, mut stream) = hub.follow("s") else {
            panic!("s runs");
        };
        let first: Value = serde_json::from_str(&first).expect("json");
        assert_eq!(
            (&first["type"], &first["game"]),
            (&json!("live-set"), &json!(1))
        );
        assert_eq!(first["events"].as_array().map(Vec::len), Some(1));
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
        // Its followers get its end with the bots and the score, then the end of the
        // channel.
        let over: Value =
            serde_json::from_str(&stream.try_recv().expect("set-over")).expect("json");
        assert_eq!(
            (&over["type"], &over["how"], &over["bots"], &over["points"]),
            (
                &json!("set-over"),
                &json!("finished"),
                &json!(["a", "b"]),
                &json!([0, 2])
            )
        );
        assert!(matches!(
            stream.try_recv(),
            Err(broadcast::error::TryRecvError::Closed)
        ));
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

/// Records of a made-up set, for the tests of the hub and of the streams.
#[cfg(test)]
pub(crate) mod made_up {
    use referee::Record;
    use serde_json::json;

    fn record(value: serde_json::Value) -> Record {
        serde_json::from_value(value).expect("a record")
    }

    /// The starting position of hus at width 8.
    pub(crate) fn start() -> String {
        engine::Position::start(engine::Rules::new(engine::Preset::Hus, 8).expect("rules"))
            .to_string()
    }

    /// A set's header: `games` games, a clock of 60 s + 1 s a move.
    pub(crate) fn header(games: u32) -> Record {
        record(json!({
            "type": "header", "log_version": 1, "referee": "hus 0.1.0",
            "rules": {"preset": "hus", "width": 8},
            "time": {"mode": "clock", "base_ms": 60000, "increment_ms": 1000, "ready_ms": 10000},
            "seed": 1, "games": games,
            "early_stop": false, "started": "2026-11-29T23:43:10Z", "line_limit": 65536,
            "bots": [{"command": "a", "name": null, "stderr": "a.stderr"},
                     {"command": "b", "name": null, "stderr": "b.stderr"}],
        }))
    }

    /// Game `game` starts, bot A first.
    pub(crate) fn game_start(game: u32) -> Record {
        record(json!({"type": "game-start", "game": game, "first": 0, "position": start()}))
    }

    /// The move of ply `ply` of game `game` (bots take turns, A first), `ms` long.
    pub(crate) fn move_record(game: u32, ply: u32, ms: f64) -> Record {
        record(json!({
            "type": "move", "game": game, "ply": ply, "bot": ply % 2, "player": ply % 2,
            "pit": 5, "ms": ms, "sown": 2, "events": [], "truncated": false,
            "position": start(),
        }))
    }

    /// Game `game` ends after `plies`, won by bot B (2 points).
    pub(crate) fn game_end(game: u32, plies: u32) -> Record {
        record(json!({
            "type": "game-end", "game": game, "reason": "no-moves", "winner": 1,
            "faulted": [], "double": false, "points": [0, 2], "plies": plies,
            "position": start(),
        }))
    }
}
