//! What the web side reads: a snapshot the runner replaces after every change (the
//! store has one owner, the runner; the pages never wait for it), the live hub, and the
//! channel for admin commands.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use league::{FinishedSet, LogPlace, Standings};
use referee::{FaultKind, GameEndReason, Side};
use serde::Serialize;
use tokio::sync::{mpsc, oneshot, watch};

use crate::live::Hub;

/// One game of a finished set.
#[derive(Clone, Debug, Serialize)]
pub struct GameView {
    /// Games count from 1.
    pub game: u32,
    /// The bot that moved first.
    pub first: String,
    /// The winner's name; `null` for a draw.
    pub winner: Option<String>,
    /// Points of A and B.
    pub points: [u32; 2],
    /// Why it ended: `no-moves`, `repetition`, `no-capture-limit`, or a fault kind.
    pub reason: GameEndReason,
    /// Moves played.
    pub plies: u32,
    /// The loser had no seeds at all.
    pub double: bool,
}

/// One fault of a finished set.
#[derive(Clone, Debug, Serialize)]
pub struct FaultView {
    /// The game it cost.
    pub game: u32,
    /// The ply.
    pub ply: u32,
    /// Who faulted.
    pub bot: String,
    /// The fault kind (PROTOCOL.md).
    pub kind: FaultKind,
    /// In plain words (may quote what the bot sent).
    pub detail: String,
}

/// A finished set.
#[derive(Clone, Debug, Serialize)]
pub struct SetView {
    /// Its stem, the set's name in every URL: `r3-alpha-vs-greedy`.
    pub set: String,
    /// Its number in the order results were recorded (1 for the first set finished):
    /// a list's next page is `before` the last one's.
    pub number: u64,
    /// Its log was deleted by the retention rule (`--keep-logs`, `hus prune`); its
    /// result stays.
    pub pruned: bool,
    /// The pair's round.
    pub round: u32,
    /// Bots A and B.
    pub bots: [String; 2],
    /// The set's seed, a number for machines.
    pub seed: u64,
    /// The same seed in decimal, for JavaScript: its numbers keep 53 bits, a seed has
    /// 64 (docs/api.md).
    pub seed_str: String,
    /// Points of A and B.
    pub points: [u32; 2],
    /// The winner's name; `null` for a drawn set.
    pub winner: Option<String>,
    /// Moves of A and B.
    pub moves: [u64; 2],
    /// Mean milliseconds per move of A and B (`null` without moves).
    pub mean_move_ms: [Option<f64>; 2],
    /// Where the log is: `logs/STEM.jsonl.zst` (relative to the league's directory),
    /// `store:ID` (kept by a shared store).
    pub log: LogPlace,
    /// When its result was recorded, in RFC 3339 (UTC); `null` when the store has no
    /// time for it.
    pub finished: Option<String>,
    /// Every game.
    pub games: Vec<GameView>,
    /// Every fault.
    pub faults: Vec<FaultView>,
}

impl SetView {
    /// From the store's form and the set's number.
    pub fn from_finished(number: u64, f: &FinishedSet) -> SetView {
        let o = &f.outcome;
        let bots = [f.key.a.clone(), f.key.b.clone()];
        let name = |side: Side| bots[side.index()].clone();
        SetView {
            set: f.key.stem(),
            number,
            pruned: f.pruned,
            round: f.key.round,
            seed: f.seed,
            seed_str: f.seed.to_string(),
            points: o.points,
            winner: o.winner.map(name),
            moves: o.moves,
            mean_move_ms: [0, 1]
                .map(|s| (o.moves[s] > 0).then(|| o.move_ms[s] / o.moves[s] as f64)),
            log: o.log.clone(),
            finished: f.finished.clone(),
            games: o
                .games
                .iter()
                .map(|g| GameView {
                    game: g.game,
                    first: name(g.first),
                    winner: g.winner.map(name),
                    points: g.points,
                    reason: g.reason,
                    plies: g.plies,
                    double: g.double,
                })
                .collect(),
            faults: o
                .faults
                .iter()
                .map(|x| FaultView {
                    game: x.game,
                    ply: x.ply,
                    bot: name(x.bot),
                    kind: x.kind,
                    detail: x.detail.clone(),
                })
                .collect(),
            bots,
        }
    }
}

/// A set that could not be played (a bot that cannot start, a log that cannot be
/// written): the server goes on and holds the pair back for a while.
#[derive(Clone, Debug, Serialize)]
pub struct Problem {
    /// When (RFC 3339).
    pub at: String,
    /// The set.
    pub set: String,
    /// What went wrong.
    pub error: String,
}

/// The normal quantile of the standings' 95% intervals (`ratings::FitOptions`'
/// default confidence), for the rating history's bands (the API and the pages' charts).
pub(crate) const Z95: f64 = 1.959_963_984_540_054;

/// How many of the latest finished sets a snapshot holds: the longest list a page
/// asks for at once.
pub const RECENT_SETS: usize = 500;

/// Everything the pages show but the live games, as of the runner's last change.
#[derive(Clone, Debug, Serialize)]
pub struct Snapshot {
    /// The table, as `hus standings --format json` prints it.
    pub standings: Standings,
    /// The most recent finished sets, oldest first: at most [`RECENT_SETS`] (older
    /// ones are read from the store, a page at a time).
    #[serde(skip)]
    pub sets: VecDeque<Arc<SetView>>,
    /// New sets are not started (running ones go on).
    pub paused: bool,
    /// Below the free-space floor (`--min-free-space`): why no set starts, in a sentence.
    pub low_space: Option<String>,
    /// Bots the admin removed while the server runs.
    pub removed: Vec<String>,
    /// The latest problems, newest last (at most 20).
    pub problems: Vec<Problem>,
    /// Sets started by this run.
    pub started: u64,
    /// Sets finished by this run.
    pub finished: u64,
}

/// An admin command for the runner; the answer is a sentence for the admin.
#[derive(Debug)]
pub enum Command {
    /// Start no new sets.
    Pause,
    /// Start sets again.
    Resume,
    /// Take a bot of the league file (read again now) into the league.
    AddBot(String),
    /// Start no more sets with this bot (its running sets finish; its results stay).
    RemoveBot(String),
    /// Pair this uploaded version (`NAME.vN`, built and checked) from now on, in place
    /// of its bot's other versions (their running sets finish; their results stay).
    EnterVersion(Box<league::BotConfig>),
}

/// A command with the channel of its answer.
pub type Request = (Command, oneshot::Sender<Result<String, String>>);

/// What the web handlers share.
pub struct AppState {
    /// The league's directory.
    pub dir: PathBuf,
    /// The latest snapshot, on a channel: the handlers read it, and the live stream's
    /// feed (`web::feed`) is told of each new one to send what changed.
    pub snapshot: watch::Sender<Arc<Snapshot>>,
    /// Live games.
    pub hub: Arc<Hub>,
    /// Admin commands to the runner.
    pub commands: mpsc::Sender<Request>,
    /// When the server started.
    pub started: Instant,
    /// `set` concurrency of the league.
    pub concurrency: usize,
    /// The remote bots' registry, when the bot port is open.
    pub remote: Option<std::sync::Arc<remote::Registry>>,
    /// The pages' reader of a shared (PostgreSQL) store: the workers, and the logs
    /// they sent. `None` with SQLite.
    pub reader: crate::reader::Reader,
    /// The log downloads under way, and their bounds.
    pub downloads: crate::download::Downloads,
    /// The replay pages: finished sets' pages kept, builds shared and bounded.
    pub pages: crate::pages::ReplayPages,
    /// Replay pages refused, per client this minute.
    pub page_refusals: crate::refused::PageRefusals,
    /// Moves a replay page may hold (`--max-page-moves`).
    pub max_page_moves: u64,
    /// The `Host` values the pages are served for (no DNS rebinding).
    pub hosts: referee::web_host::AllowedHosts,
    /// The live streams' slots, in all and per client (`--max-live`,
    /// `--max-live-per-address`).
    pub live_slots: Arc<crate::capacity::Capacity>,
    /// Refused admin requests, counted for the log.
    pub refusals: Arc<crate::admin::RefusalLog>,
    /// Bots by upload: the versions' queue and the store they are kept in.
    pub uploads: Arc<crate::uploads::Uploads>,
}

impl AppState {
    /// The latest snapshot.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.snapshot.borrow().clone()
    }

    /// Replaces the snapshot.
    pub fn publish(&self, snapshot: Snapshot) {
        self.snapshot.send_replace(Arc::new(snapshot));
    }
}
