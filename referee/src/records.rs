//! The records of a set: what happened, in the shape the log stores it (LOGS.md). The
//! set runner produces them, the log writes them, the console and the JSON summary
//! read them, and `hus replay` parses them back. Bots are [`Side`]s, written as their
//! index in the set, `0` (BOT_A) and `1` (BOT_B); players by engine number, `0` moving first.

use serde::{Deserialize, Serialize};

pub use crate::side::{BySide, Side};

/// The version of the log format described in LOGS.md.
pub const LOG_VERSION: u32 = 1;

pub use engine::Preset;
pub use protocol::FaultKind;

/// `fault.stage`: when a fault happened (LOGS.md lists exactly these values).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stage {
    /// `game`: during the game, from its `game` message to its last turn. Logs written
    /// before the field existed only have faults in games.
    #[default]
    Game,
    /// `start-up`: the bot was starting, answering `hello` (at the start of the set or
    /// at its restart); the fault costs the game that follows, before its first move.
    StartUp,
    /// `result`: the previous game's `result` could not be written to the bot; the
    /// fault costs the game that follows, before its first move.
    Result,
}

impl Stage {
    /// Every value, in the order LOGS.md lists them.
    pub const ALL: [Stage; 3] = [Stage::Game, Stage::StartUp, Stage::Result];

    /// The value as the log writes it: `game`, `start-up`, `result`.
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Game => "game",
            Stage::StartUp => "start-up",
            Stage::Result => "result",
        }
    }
}

impl std::fmt::Display for Stage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `game-end.reason`: an end rule of RULES.md, or the kind of the fault that ended the
/// game. Written and read as one string (`no-moves`, `time-out`, ...); any other string
/// is refused when a log is read. Unlike the protocol's [`protocol::Reason`], which a bot
/// must read leniently, this set is closed: the referee writes nothing else.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GameEndReason {
    /// `no-moves`: the side to move had no pit with enough seeds.
    NoMoves,
    /// `repetition`: a position occurred for the second time.
    Repetition,
    /// `no-capture-limit`: too many plies in a row without a capture.
    NoCaptureLimit,
    /// A fault ended the game (with both faulted, the kind of the first).
    Fault(FaultKind),
}

impl GameEndReason {
    /// Every value, in the order LOGS.md lists them: the end rules, then the fault kinds.
    pub const ALL: [GameEndReason; 12] = [
        GameEndReason::NoMoves,
        GameEndReason::Repetition,
        GameEndReason::NoCaptureLimit,
        GameEndReason::Fault(FaultKind::TimeOut),
        GameEndReason::Fault(FaultKind::StartUp),
        GameEndReason::Fault(FaultKind::Crash),
        GameEndReason::Fault(FaultKind::Malformed),
        GameEndReason::Fault(FaultKind::WrongMessage),
        GameEndReason::Fault(FaultKind::InvalidPit),
        GameEndReason::Fault(FaultKind::IllegalMove),
        GameEndReason::Fault(FaultKind::OversizedLine),
        GameEndReason::Fault(FaultKind::UnsolicitedMessage),
    ];

    /// The wire strings of [`GameEndReason::ALL`], for serde's error messages.
    const NAMES: [&'static str; 12] = [
        "no-moves",
        "repetition",
        "no-capture-limit",
        "time-out",
        "start-up",
        "crash",
        "malformed",
        "wrong-message",
        "invalid-pit",
        "illegal-move",
        "oversized-line",
        "unsolicited-message",
    ];

    /// The value as the log writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            GameEndReason::NoMoves => "no-moves",
            GameEndReason::Repetition => "repetition",
            GameEndReason::NoCaptureLimit => "no-capture-limit",
            GameEndReason::Fault(kind) => kind.as_str(),
        }
    }

    /// The end rule the engine applied; `None` for [`engine::EndReason::Fault`], which
    /// does not say which fault (the referee's records do).
    pub fn of_rules(reason: engine::EndReason) -> Option<GameEndReason> {
        match reason {
            engine::EndReason::NoMoves => Some(GameEndReason::NoMoves),
            engine::EndReason::Repetition => Some(GameEndReason::Repetition),
            engine::EndReason::NoCaptureLimit => Some(GameEndReason::NoCaptureLimit),
            engine::EndReason::Fault => None,
        }
    }

    /// The fault kind, when a fault ended the game.
    pub fn fault(self) -> Option<FaultKind> {
        match self {
            GameEndReason::Fault(kind) => Some(kind),
            _ => None,
        }
    }
}

impl From<FaultKind> for GameEndReason {
    fn from(kind: FaultKind) -> GameEndReason {
        GameEndReason::Fault(kind)
    }
}

/// The same reason in the protocol's `result.reason`.
impl From<GameEndReason> for protocol::Reason {
    fn from(reason: GameEndReason) -> protocol::Reason {
        match reason {
            GameEndReason::NoMoves => protocol::Reason::NoMoves,
            GameEndReason::Repetition => protocol::Reason::Repetition,
            GameEndReason::NoCaptureLimit => protocol::Reason::NoCaptureLimit,
            GameEndReason::Fault(kind) => protocol::Reason::Fault(kind),
        }
    }
}

impl std::fmt::Display for GameEndReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for GameEndReason {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for GameEndReason {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;

        impl serde::de::Visitor<'_> for Visitor {
            type Value = GameEndReason;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an end rule or a fault kind")
            }

            fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<GameEndReason, E> {
                GameEndReason::ALL
                    .into_iter()
                    .find(|r| r.as_str() == name)
                    .ok_or_else(|| E::unknown_variant(name, &GameEndReason::NAMES))
            }
        }

        deserializer.deserialize_str(Visitor)
    }
}

/// `set-end.sprt.decision`: what the set's SPRT decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SprtDecision {
    /// `accept-h1`: the LLR reached the upper bound.
    AcceptH1,
    /// `accept-h0`: the LLR reached the lower bound.
    AcceptH0,
    /// `none`: the set played all its games first (or was stopped).
    #[serde(rename = "none")]
    Undecided,
}

impl SprtDecision {
    /// Every value, in the order LOGS.md lists them.
    pub const ALL: [SprtDecision; 3] = [
        SprtDecision::AcceptH1,
        SprtDecision::AcceptH0,
        SprtDecision::Undecided,
    ];

    /// The value as the log writes it: `accept-h1`, `accept-h0`, `none`.
    pub fn as_str(self) -> &'static str {
        match self {
            SprtDecision::AcceptH1 => "accept-h1",
            SprtDecision::AcceptH0 => "accept-h0",
            SprtDecision::Undecided => "none",
        }
    }
}

impl std::fmt::Display for SprtDecision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One line of a log.
// The header is the large variant, and there is one per log: records are handled one
// at a time, never kept by the million.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum Record {
    /// The set's settings and bots; always the first line.
    Header(Header),
    /// A bot answered `hello`.
    Ready(Ready),
    /// A game begins.
    GameStart(GameStart),
    /// A move, with its report and the position after it.
    Move(MoveRecord),
    /// A fault by one bot.
    Fault(Fault),
    /// A game ended.
    GameEnd(GameEnd),
    /// A faulted bot is started again before a game.
    Restart(Restart),
    /// A bot process ended.
    Shutdown(Shutdown),
    /// The set's result; the last line of a complete log.
    SetEnd(SetEnd),
    /// The set was stopped by a signal.
    Aborted(Aborted),
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub log_version: u32,
    /// `hus 0.1.0`.
    pub referee: String,
    pub rules: RulesRecord,
    pub time: TimeRecord,
    pub seed: u64,
    pub games: u32,
    pub early_stop: bool,
    pub bots: BySide<BotRecord>,
    /// UTC, RFC 3339.
    pub started: String,
    /// Bytes: the longest line a bot may send.
    pub line_limit: u64,
    /// The process that writes the log, so that a reader following it can tell when it
    /// is gone without `set-end`. Absent when the system has no `/proc`, and in logs
    /// of earlier versions of hus.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writer: Option<Box<Writer>>,
    /// The set's openings, in notation: games 2k-1 and 2k start from opening k
    /// (cycling). Absent (empty) when every game starts from the starting position.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub openings: Vec<String>,
    /// The SPRT the set runs until it decides (`games` is then the most it plays).
    /// Absent for other sets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sprt: Option<SprtRecord>,
    /// Team sets only: side 0's team and side 1's. `bots[s]` then describes side `s`
    /// as a whole (the team's name, its members' commands joined by ` + `, no stderr
    /// file). Absent in an ordinary set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub teams: Option<Box<BySide<TeamRecord>>>,
}

/// A team of a team set: its name and its members, in the team's list order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TeamRecord {
    pub name: String,
    pub members: Vec<MateRecord>,
}

/// A member of a team.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MateRecord {
    /// The name its partners hear in `hello.team.members` (the league's bot name, or a
    /// name made from the command).
    pub name: String,
    /// The command line as given.
    pub command: String,
    /// The name the bot announced in `ready` at the start of the set, if it did.
    pub announced: Option<String>,
    /// Its stderr file, beside the log.
    pub stderr: String,
}

/// The hypotheses and error rates of a set's SPRT (`hus match --sprt`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SprtRecord {
    /// H0: bot A is elo0 Elo stronger than bot B.
    pub elo0: f64,
    /// H1: bot A is elo1 Elo stronger.
    pub elo1: f64,
    /// The false-positive rate.
    pub alpha: f64,
    /// The false-negative rate.
    pub beta: f64,
}

/// Where a set's SPRT stood when the set ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SprtEnd {
    /// `accept-h1`, `accept-h0`, or `none` (the set reached its most games first).
    pub decision: SprtDecision,
    /// The log-likelihood ratio after the last whole pair.
    pub llr: f64,
    /// The bounds: at or below `lower` H0 is accepted, at or above `upper` H1.
    pub lower: f64,
    pub upper: f64,
    /// Pairs of games by bot A's points in the pair: 0, 1/2, 1, 3/2, 2.
    pub pentanomial: [u64; 5],
}

/// Which process writes a log: enough to tell, later and from another process, whether
/// that very process still runs. A pid alone is not: pids are reused.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Writer {
    /// Its process id.
    pub pid: u32,
    /// When it started, in clock ticks after boot (field 22 of `/proc/PID/stat`): a
    /// later process with the same pid started later.
    pub start_time: u64,
    /// The kernel's boot id (`/proc/sys/kernel/random/boot_id`): start times count
    /// from this boot.
    pub boot_id: String,
    /// Its PID namespace (the link `/proc/self/ns/pid`, e.g. `pid:[4026531836]`): the
    /// pid means this process only in this namespace.
    pub pid_ns: String,
    /// The machine's host name.
    pub host: String,
}

impl Writer {
    /// This process, or `None` where `/proc` does not tell.
    pub fn this_process() -> Option<Box<Writer>> {
        let pid = std::process::id();
        Some(Box::new(Writer {
            pid,
            start_time: start_time(pid)?.0,
            boot_id: boot_id()?,
            pid_ns: pid_namespace()?,
            host: host_name()?,
        }))
    }
}

/// The start time of process `pid` (field 22 of `/proc/PID/stat`, clock ticks after
/// boot), and whether it is a zombie or dead (state `Z` or `X`): exited, only not yet
/// reaped. `None` when there is no such process.
pub(crate) fn start_time(pid: u32) -> Option<(u64, bool)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces and
    // parentheses itself: the fields after it start after the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?;
    // `rest` starts at field 3 (the state): field 22 is 19 further on.
    let start = fields.nth(18)?.parse().ok()?;
    Some((start, matches!(state, "Z" | "X")))
}

/// This boot of the kernel.
pub(crate) fn boot_id() -> Option<String> {
    let id = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    Some(id.trim().to_string())
}

/// The PID namespace of this process.
pub(crate) fn pid_namespace() -> Option<String> {
    let link = std::fs::read_link("/proc/self/ns/pid").ok()?;
    Some(link.to_string_lossy().into_owned())
}

/// The host name (of this UTS namespace).
pub(crate) fn host_name() -> Option<String> {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname").ok()?;
    Some(name.trim().to_string())
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RulesRecord {
    /// Serialized as its name: `hus`, `rulebook`, `mancala-world`.
    pub preset: Preset,
    pub width: u32,
}

/// The time control, in the same form as `hello.time` of the protocol.
pub use protocol::TimeControl as TimeRecord;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BotRecord {
    /// The command line as given.
    pub command: String,
    /// The name the bot announced in `ready` at the start of the set, if it did.
    pub name: Option<String>,
    /// Its stderr file, beside the log.
    pub stderr: String,
    /// A time control of its own, when the side does not play on the set's (`time`):
    /// the person's seat of `hus play`. Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<TimeRecord>,
    /// The uploaded version this bot is (docs/upload.md): the bot, the version's number
    /// and its archive's SHA-256. Absent for every other bot, and in earlier logs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<UploadedVersion>,
}

/// An uploaded bot's version, as `header.bots[].version` names it: which version of
/// which bot played, and the SHA-256 of the archive it was built from (the same hash
/// plays the same code on every machine).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct UploadedVersion {
    /// The bot's name (the league's name of the version is `BOT.vNUMBER`).
    pub bot: String,
    /// The version's number, from 1 per bot.
    pub number: u32,
    /// The archive's SHA-256: 64 lowercase hexadecimal digits.
    pub sha256: String,
}

impl UploadedVersion {
    /// What is wrong with it, if anything: an empty bot name, number 0, or a SHA-256
    /// that is not 64 lowercase hexadecimal digits. What `hus replay` checks.
    pub fn problem(&self) -> Option<String> {
        if self.bot.is_empty() {
            return Some("its bot is empty".to_string());
        }
        if self.number == 0 {
            return Some("its number is 0 (versions count from 1)".to_string());
        }
        let hex = |c: char| c.is_ascii_digit() || ('a'..='f').contains(&c);
        if self.sha256.len() != 64 || !self.sha256.chars().all(hex) {
            return Some(format!(
                "its sha256 {:?} is not 64 lowercase hexadecimal digits",
                self.sha256
            ));
        }
        None
    }
}

/// A bot answered `hello` (or failed to): at the start of the set and after restarts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Ready {
    pub bot: Side,
    /// Team sets only: which member of side `bot`'s team (an index into
    /// `header.teams[bot].members`). Absent in an ordinary set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mate: Option<usize>,
    pub name: Option<String>,
    /// From spawn to the `ready` line.
    pub ms: f64,
    /// A remote bot: the address it connected from. Absent for a process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer: Option<String>,
    /// A remote bot: the round-trip time measured when it connected, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rtt_ms: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameStart {
    pub game: u32,
    /// The bot that moves first (the player to move in `position`: player 0 from the
    /// preset's starting position), drawn by lot.
    pub first: Side,
    /// Starting position, in the notation of RULES.md: the preset's, or the opening.
    pub position: String,
    /// Team sets only: for each side, the order in which its members take the side's
    /// turns in this game (indices into `header.teams[side].members`), drawn by lot
    /// from the set's seed. Absent in an ordinary set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<BySide<Vec<usize>>>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MoveRecord {
    pub game: u32,
    /// 0 for the first move of the game.
    pub ply: u32,
    pub bot: Side,
    /// Team sets only: which member of side `bot`'s team (an index into
    /// `header.teams[bot].members`). Absent in an ordinary set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mate: Option<usize>,
    /// Engine player: 0 moves first (written as the number).
    pub player: engine::Player,
    pub pit: u32,
    /// Time the bot took, from turn written to move read.
    pub ms: f64,
    /// A remote bot: the round-trip time measured before the turn, when it could be.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rtt_ms: Option<f64>,
    /// A remote bot: the lag allowance credited (added to the deadline, taken off the
    /// clock). Absent for a process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag_ms: Option<f64>,
    /// The referee's own stalls while it waited for the move (its process stopped or
    /// not run): credited to the bot (added to the deadline, taken off the clock).
    /// Absent when there was none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stall_ms: Option<f64>,
    pub sown: u32,
    /// Relays and captures in order (engine `Event`s).
    pub events: Vec<engine::Event>,
    pub truncated: bool,
    /// The position after the move, in the notation of RULES.md.
    pub position: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Fault {
    pub game: u32,
    /// The ply at which it happened (the number of moves played in the game).
    pub ply: u32,
    pub bot: Side,
    /// Team sets only: which member of side `bot`'s team (an index into
    /// `header.teams[bot].members`). Absent in an ordinary set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mate: Option<usize>,
    /// A fault kind of PROTOCOL.md: `time-out`, `crash`, ...
    pub kind: FaultKind,
    /// In plain words.
    pub detail: String,
    /// The offending line, escaped and cut, when there was one.
    pub line: Option<String>,
    /// The position the bot was to move in.
    pub position: String,
    /// Time from turn written to the fault, when a turn was pending.
    pub ms: Option<f64>,
    /// When it happened. Logs written before the field existed only have faults in
    /// games: a missing `stage` is [`Stage::Game`].
    #[serde(default)]
    pub stage: Stage,
}

impl Fault {
    /// Where it happened, for people: `in game 2 at ply 7`, `answering hello before
    /// game 1`, `when sent the result of game 1 (it costs game 2)`.
    pub fn place(&self) -> String {
        match self.stage {
            Stage::StartUp => format!("answering hello, before game {}", self.game),
            Stage::Result => format!(
                "when sent the result of game {}, costing game {}",
                self.game.saturating_sub(1),
                self.game
            ),
            Stage::Game => format!("in game {} at ply {}", self.game, self.ply),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameEnd {
    pub game: u32,
    /// `no-moves`, `repetition`, `no-capture-limit`, or a fault kind.
    pub reason: GameEndReason,
    /// The winning bot, `null` for a draw.
    pub winner: Option<Side>,
    /// The bots (in a team set, the sides) that faulted: one, or both when neither
    /// could start the game.
    pub faulted: Vec<Side>,
    /// The loser had no seeds at all.
    pub double: bool,
    /// Points of bot 0 and bot 1.
    pub points: BySide<u32>,
    pub plies: u32,
    /// Final position.
    pub position: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Restart {
    pub bot: Side,
    /// Team sets only: which member of side `bot`'s team (an index into
    /// `header.teams[bot].members`). Absent in an ordinary set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mate: Option<usize>,
    /// The game it is restarted for.
    pub game: u32,
}

/// How a bot process ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shutdown {
    pub bot: Side,
    /// Team sets only: which member of side `bot`'s team (an index into
    /// `header.teams[bot].members`). Absent in an ordinary set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mate: Option<usize>,
    /// `exit status 0`, `killed by signal 9 (SIGKILL)`, or null if never reaped.
    pub status: Option<String>,
    /// Why it ended.
    pub stopped_by: StoppedBy,
    /// A process it started kept its pipes open after its group was killed.
    pub leaked: bool,
    /// The pids of the processes of `strays` that had left its process group.
    #[serde(default)]
    pub escaped: Vec<i32>,
    /// The processes it started that were still running after it had exited or been
    /// stopped, killed by the referee.
    #[serde(default)]
    pub strays: Vec<StrayProcess>,
    pub stderr_bytes: u64,
    pub stderr_cut: bool,
}

/// `shutdown.stopped_by`: why a bot ended (LOGS.md lists exactly these values). A value
/// the referee cannot write cannot be read either: a log with another one is corrupt.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StoppedBy {
    /// A process exited when its stdin closed; a remote bot closed its connection
    /// within the grace period.
    #[default]
    Itself,
    /// A process had to be stopped with SIGTERM.
    Sigterm,
    /// A process had to be stopped with SIGKILL.
    Sigkill,
    /// A remote bot's connection was closed by the referee.
    Closed,
}

impl StoppedBy {
    /// Every value, in the order LOGS.md lists them.
    pub const ALL: [StoppedBy; 4] = [
        StoppedBy::Itself,
        StoppedBy::Sigterm,
        StoppedBy::Sigkill,
        StoppedBy::Closed,
    ];

    /// The value as the log writes it: `itself`, `sigterm`, `sigkill`, `closed`.
    pub fn as_str(self) -> &'static str {
        match self {
            StoppedBy::Itself => "itself",
            StoppedBy::Sigterm => "sigterm",
            StoppedBy::Sigkill => "sigkill",
            StoppedBy::Closed => "closed",
        }
    }
}

impl std::fmt::Display for StoppedBy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A process a bot left running, as the `shutdown` record tells it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StrayProcess {
    pub pid: i32,
    /// Its command line, cut to 120 characters.
    pub command: String,
    /// Whether it had left the bot's process group.
    pub left_group: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SetEnd {
    pub games_played: u32,
    pub points: BySide<u32>,
    pub wins: BySide<u32>,
    pub draws: u32,
    /// The bot with more points, `null` for a drawn set.
    pub winner: Option<Side>,
    pub faults: BySide<u32>,
    /// UTC, RFC 3339.
    pub finished: String,
    /// With an SPRT (`header.sprt`): where it stood, and so why the set ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sprt: Option<SprtEnd>,
}

/// The referee was stopped (Ctrl-C, SIGTERM) before the set ended: the last line of
/// an interrupted log. Whoever stops a set writes it (`hus match`, `hus league`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Aborted {
    /// Why, in plain words: `stopped by SIGINT`.
    pub reason: String,
    /// When, UTC, RFC 3339.
    pub finished: String,
}

/// Now, UTC, RFC 3339 with seconds.
pub fn now_rfc3339() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_else(|_| "unknown".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The values LOGS.md names, in backticks, in the meaning of the row of `field` in
    /// the table of record `record` (the section headed `### \`record\``).
    fn documented(record: &str, field: &str) -> Vec<&'static str> {
        let logs: &'static str = include_str!("../../LOGS.md");
        let heading = format!("\n### `{record}`\n");
        let start = logs
            .find(&heading)
            .unwrap_or_else(|| panic!("LOGS.md has a section {heading:?}"))
            + heading.len();
        let section = &logs[start..];
        let section = &section[..section.find("\n#").unwrap_or(section.len())];
        let prefix = format!("| `{field}`");
        let row = section
            .lines()
            .find(|l| l.starts_with(&prefix))
            .unwrap_or_else(|| panic!("LOGS.md's {heading} has a row for {field}"));
        let meaning = row.split('|').nth(2).unwrap_or_default();
        meaning.split('`').skip(1).step_by(2).collect()
    }

    /// Each value is written as `"wire"` and read back as itself; `bad` is refused with
    /// serde's message naming every value.
    fn pinned<T>(values: &[T], wire: &[&str], bad: &str, refusal: &str)
    where
        T: Serialize
            + serde::de::DeserializeOwned
            + PartialEq
            + std::fmt::Debug
            + std::fmt::Display,
    {
        assert_eq!(values.len(), wire.len());
        for (value, name) in values.iter().zip(wire) {
            let json = serde_json::to_string(value).expect("serialize");
            assert_eq!(json, format!("\"{name}\""));
            assert_eq!(value.to_string(), *name);
            assert_eq!(
                serde_json::from_str::<T>(&json).ok().as_ref(),
                Some(value),
                "{json}"
            );
        }
        let err = serde_json::from_str::<T>(&format!("\"{bad}\"")).expect_err("not a value");
        assert_eq!(err.to_string(), refusal);
    }

    #[test]
    fn fault_kinds_are_written_as_logs_md_lists_them_and_nothing_else_is_read() {
        let wire = [
            "time-out",
            "start-up",
            "crash",
            "malformed",
            "wrong-message",
            "invalid-pit",
            "illegal-move",
            "oversized-line",
            "unsolicited-message",
        ];
        pinned(
            &FaultKind::ALL,
            &wire,
            "timeout",
            "unknown variant `timeout`, expected one of `time-out`, `start-up`, `crash`, \
             `malformed`, `wrong-message`, `invalid-pit`, `illegal-move`, `oversized-line`, \
             `unsolicited-message` at line 1 column 9",
        );
        assert_eq!(documented("fault", "kind"), wire);
    }

    #[test]
    fn stages_are_written_as_logs_md_lists_them_and_nothing_else_is_read() {
        let wire = ["game", "start-up", "result"];
        pinned(
            &Stage::ALL,
            &wire,
            "later",
            "unknown variant `later`, expected one of `game`, `start-up`, `result` at line 1 column 7",
        );
        let named = documented("fault", "stage");
        for name in wire {
            assert!(named.contains(&name), "{name} in {named:?}");
        }
        // A fault of a log written before `stage` existed happened in a game.
        let fault: Fault = serde_json::from_str(
            r#"{"game":1,"ply":3,"bot":0,"kind":"crash","detail":"","line":null,"position":"","ms":null}"#,
        )
        .expect("a fault without stage");
        assert_eq!(fault.stage, Stage::Game);
    }

    #[test]
    fn game_end_reasons_are_written_as_logs_md_lists_them_and_nothing_else_is_read() {
        let wire = [
            "no-moves",
            "repetition",
            "no-capture-limit",
            "time-out",
            "start-up",
            "crash",
            "malformed",
            "wrong-message",
            "invalid-pit",
            "illegal-move",
            "oversized-line",
            "unsolicited-message",
        ];
        pinned(
            &GameEndReason::ALL,
            &wire,
            "resigned",
            "unknown variant `resigned`, expected one of `no-moves`, `repetition`, \
             `no-capture-limit`, `time-out`, `start-up`, `crash`, `malformed`, \
             `wrong-message`, `invalid-pit`, `illegal-move`, `oversized-line`, \
             `unsolicited-message` at line 1 column 10",
        );
        // The end rules in game-end's row, the fault kinds in fault's.
        let named = documented("game-end", "reason");
        for name in &wire[..3] {
            assert!(named.contains(name), "{name} in {named:?}");
        }
        assert_eq!(documented("fault", "kind"), wire[3..]);
        // The same strings as the engine's end rules and the protocol's reasons.
        for rule in [
            engine::EndReason::NoMoves,
            engine::EndReason::Repetition,
            engine::EndReason::NoCaptureLimit,
        ] {
            let reason = GameEndReason::of_rules(rule).expect("an end rule");
            assert_eq!(reason.as_str(), rule.name());
        }
        assert_eq!(GameEndReason::of_rules(engine::EndReason::Fault), None);
        for reason in GameEndReason::ALL {
            assert_eq!(protocol::Reason::from(reason).as_str(), reason.as_str());
            assert_eq!(
                reason.fault().map(GameEndReason::from),
                reason.fault().map(|_| reason)
            );
        }
    }

    #[test]
    fn sprt_decisions_are_written_as_logs_md_lists_them_and_nothing_else_is_read() {
        let wire = ["accept-h1", "accept-h0", "none"];
        pinned(
            &SprtDecision::ALL,
            &wire,
            "continue",
            "unknown variant `continue`, expected one of `accept-h1`, `accept-h0`, `none` at line 1 column 10",
        );
        let named = documented("set-end", "sprt.decision");
        assert_eq!(named[..3], wire, "{named:?}");
    }

    #[test]
    fn presets_are_written_as_logs_md_lists_them_and_nothing_else_is_read() {
        let wire = ["hus", "rulebook", "mancala-world"];
        pinned(
            &Preset::ALL,
            &wire,
            "kalah",
            "unknown variant `kalah`, expected one of `hus`, `rulebook`, `mancala-world` at line 1 column 7",
        );
        let named = documented("header", "rules.preset");
        for name in wire {
            assert!(named.contains(&name), "{name} in {named:?}");
        }
    }

    #[test]
    fn stopped_by_is_written_as_logs_md_lists_it_and_nothing_else_is_read() {
        pinned(
            &StoppedBy::ALL,
            &StoppedBy::ALL.map(StoppedBy::as_str),
            "bye",
            "unknown variant `bye`, expected one of `itself`, `sigterm`, `sigkill`, `closed` at line 1 column 5",
        );
        assert_eq!(
            documented("shutdown", "stopped_by"),
            StoppedBy::ALL.map(StoppedBy::as_str)
        );
    }
}
