//! The records of a set: what happened, in the shape the log stores it (LOGS.md). The
//! set runner produces them, the log writes them, the console and the JSON summary
//! read them, and `hus replay` parses them back. Bots are named by their index in the
//! set, `0` (BOT_A) and `1` (BOT_B); players by engine number, `0` moving first.

use serde::{Deserialize, Serialize};

/// The version of the log format described in LOGS.md.
pub const LOG_VERSION: u32 = 1;

/// `fault.stage`: the bot was starting, answering `hello` (at the start of the set or
/// at its restart); the fault costs the game that follows, before its first move.
pub const STAGE_START_UP: &str = "start-up";
/// `fault.stage`: during the game, from its `game` message to its last turn.
pub const STAGE_GAME: &str = "game";
/// `fault.stage`: the previous game's `result` could not be written to the bot; the
/// fault costs the game that follows, before its first move.
pub const STAGE_RESULT: &str = "result";

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
    pub bots: [BotRecord; 2],
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
    pub teams: Option<Box<[TeamRecord; 2]>>,
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
    /// `accept-h0`, `accept-h1`, or `none` (the set reached its most games first).
    pub decision: String,
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
    pub preset: String,
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
}

/// A bot answered `hello` (or failed to): at the start of the set and after restarts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Ready {
    pub bot: usize,
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
    pub first: usize,
    /// Starting position, in the notation of RULES.md: the preset's, or the opening.
    pub position: String,
    /// Team sets only: for each side, the order in which its members take the side's
    /// turns in this game (indices into `header.teams[side].members`), drawn by lot
    /// from the set's seed. Absent in an ordinary set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<[Vec<usize>; 2]>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MoveRecord {
    pub game: u32,
    /// 0 for the first move of the game.
    pub ply: u32,
    pub bot: usize,
    /// Team sets only: which member of side `bot`'s team (an index into
    /// `header.teams[bot].members`). Absent in an ordinary set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mate: Option<usize>,
    /// Engine player: 0 moves first.
    pub player: usize,
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
    pub bot: usize,
    /// Team sets only: which member of side `bot`'s team (an index into
    /// `header.teams[bot].members`). Absent in an ordinary set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mate: Option<usize>,
    /// A fault kind of PROTOCOL.md: `time-out`, `crash`, ...
    pub kind: String,
    /// In plain words.
    pub detail: String,
    /// The offending line, escaped and cut, when there was one.
    pub line: Option<String>,
    /// The position the bot was to move in.
    pub position: String,
    /// Time from turn written to the fault, when a turn was pending.
    pub ms: Option<f64>,
    /// When it happened: [`STAGE_START_UP`], [`STAGE_GAME`] or [`STAGE_RESULT`]. Logs
    /// written before the field existed only have faults in games.
    #[serde(default = "stage_game")]
    pub stage: String,
}

fn stage_game() -> String {
    STAGE_GAME.to_string()
}

impl Fault {
    /// Where it happened, for people: `in game 2 at ply 7`, `answering hello before
    /// game 1`, `when sent the result of game 1 (it costs game 2)`.
    pub fn place(&self) -> String {
        match self.stage.as_str() {
            STAGE_START_UP => format!("answering hello, before game {}", self.game),
            STAGE_RESULT => format!(
                "when sent the result of game {}, costing game {}",
                self.game.saturating_sub(1),
                self.game
            ),
            _ => format!("in game {} at ply {}", self.game, self.ply),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameEnd {
    pub game: u32,
    /// `no-moves`, `repetition`, `no-capture-limit`, or a fault kind.
    pub reason: String,
    /// The winning bot, `null` for a draw.
    pub winner: Option<usize>,
    /// The bots (in a team set, the sides) that faulted: one, or both when neither
    /// could start the game.
    pub faulted: Vec<usize>,
    /// The loser had no seeds at all.
    pub double: bool,
    /// Points of bot 0 and bot 1.
    pub points: [u32; 2],
    pub plies: u32,
    /// Final position.
    pub position: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Restart {
    pub bot: usize,
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
    pub bot: usize,
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
    pub points: [u32; 2],
    pub wins: [u32; 2],
    pub draws: u32,
    /// The bot with more points, `null` for a drawn set.
    pub winner: Option<usize>,
    pub faults: [u32; 2],
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

    #[test]
    fn stopped_by_is_written_as_logs_md_lists_it_and_nothing_else_is_read() {
        for by in StoppedBy::ALL {
            let json = serde_json::to_string(&by).expect("serialize");
            assert_eq!(json, format!("\"{by}\""));
            assert_eq!(serde_json::from_str::<StoppedBy>(&json).ok(), Some(by));
        }
        let err = serde_json::from_str::<StoppedBy>("\"bye\"").expect_err("not a value");
        assert_eq!(
            err.to_string(),
            "unknown variant `bye`, expected one of `itself`, `sigterm`, `sigkill`, `closed` at line 1 column 5"
        );
        // LOGS.md's row of `stopped_by` names exactly these values, in backticks.
        let logs = include_str!("../../LOGS.md");
        let row = logs
            .lines()
            .find(|l| l.starts_with("| `stopped_by` |"))
            .expect("LOGS.md has a row for stopped_by");
        let named: Vec<&str> = row
            .trim_start_matches("| `stopped_by` |")
            .split('`')
            .skip(1)
            .step_by(2)
            .collect();
        assert_eq!(named, StoppedBy::ALL.map(StoppedBy::as_str), "{row}");
    }
}
