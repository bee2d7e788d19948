//! Playing one set between two bots: the single code path for every command that plays
//! games. It owns the bot processes and the game state, checks every line against the
//! protocol and every move against the engine, keeps the clocks, and reports each
//! event as a [`Record`] to a [`RecordSink`] (the log, the console, a summary).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use engine::{AnyPosition, Board, Game, GameEnd, Player, Rules, SetScore};
use protocol::{
    decode_bot_message, excerpt, BotMessage, Bye, FaultKind, GameResult, GameStart, Hello, Outcome,
    Points, RefereeMessage, RulesInfo, Turn, MAX_LINE_LEN, PROTOCOL_VERSION,
};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use tokio::time::Instant;

use crate::bot::{describe_status, spawn_hint, BotProcess, Output, WRITE_GRACE};
use crate::config::{BotSpec, SetConfig, TimeControl};
use crate::files::FilePlace;
use crate::limits::Limits;
use crate::link::Connect;
use crate::records::{self, GameEndReason, Record, Stage, UploadedVersion};
use crate::side::{BySide, Seating, Side};
use crate::sprt::{sprt_record, SprtTally};
use crate::stderr::StderrBudget;

/// The set's steps fail only when a record cannot be written.
type Result<T, E = WriteError> = std::result::Result<T, E>;

/// How long a bot has to exit by itself after `bye` before it is terminated.
pub const BYE_GRACE: Duration = Duration::from_secs(2);
/// Longest excerpt of an offending line kept in a report.
const EXCERPT_CHARS: usize = 200;

/// Receives every record of a set, in order. An error stops the set: a log that cannot
/// be written must not be reported as complete.
pub trait RecordSink: Send {
    /// Takes one record; an error stops the set.
    fn record(&mut self, record: &Record) -> Result<(), WriteError>;
}

/// A record that could not be written to a set's log (a full disk, a file-size limit):
/// the error of a [`RecordSink`], which stops the set. Its message holds its cause,
/// which is no `source` (a chain of sources would say it twice).
#[derive(Debug, thiserror::Error)]
#[error("cannot write to the log {}: {error}", path.display())]
pub struct WriteError {
    /// The log's file.
    pub path: PathBuf,
    /// Why.
    pub error: std::io::Error,
}

/// Why [`play_set`] did not play its set to the end: one variant per cause. Everything
/// a bot does wrong once it runs is a fault, recorded in the log, and no error.
#[derive(Debug, thiserror::Error)]
pub enum SetError {
    /// A team without members. Checked before anything is written: nothing was played.
    #[error("team {team:?} has no members")]
    EmptyTeam {
        /// The team's name.
        team: String,
    },
    /// A team against a single bot. Checked before anything is written: nothing was
    /// played.
    #[error("a team set needs a team on each side")]
    MixedLineup,
    /// A bot of the set cannot be started: its command does not run, or a remote bot
    /// does not connect within the start-up allowance. No game was played, and the log
    /// holds only its header, written before the bots start
    /// ([`crate::LogWriter::discard_unstarted`] removes it).
    #[error("cannot start {who} ({command:?}): {reason}")]
    CannotStart {
        /// The bot in words: `bot A`, or `bot greedy (2) of team red`.
        who: String,
        /// Its command (for a remote bot, what the log's header shows).
        command: String,
        /// Why: the system's error with a hint, or the link's.
        reason: String,
    },
    /// The log's header, the set's first record, could not be written: the set never
    /// began (no bot was started).
    #[error(transparent)]
    NoHeader(WriteError),
    /// A record after the header could not be written: the set stopped there, and its
    /// log is incomplete.
    #[error(transparent)]
    CannotWrite(WriteError),
}

impl SetError {
    /// Whether the set stopped before anything was played: no bot said `ready`, no game
    /// began, and the log holds at most its header (the caller removes it). Only a log
    /// that broke off during the set holds more.
    pub fn nothing_played(&self) -> bool {
        !matches!(self, SetError::CannotWrite(_))
    }
}

impl From<WriteError> for SetError {
    fn from(e: WriteError) -> Self {
        SetError::CannotWrite(e)
    }
}

/// One side of a set, or a member of a team: where its bot comes from. A bot is a
/// process the referee starts or a link it is handed, never neither and never both.
// A set has a handful: the size of a process's limits costs nothing.
#[allow(clippy::large_enum_variant)]
pub enum Entrant {
    /// A bot program: the referee starts it from its command (and again after a fault).
    Process {
        /// The bot's command.
        spec: BotSpec,
        /// Where its stderr is kept (the first 1 MiB of the set, all its processes together),
        /// opened as each process starts without following a link.
        stderr: FilePlace,
        /// The limits its process runs under.
        limits: Limits,
        /// The uploaded version it is, which the log's header names
        /// (`bots[].version`); `None` for any other bot.
        version: Option<UploadedVersion>,
    },
    /// A bot reached over a link (a remote bot, the person's seat of `hus play`).
    /// Everything else about the set is the same; a disconnect is a crash, and a
    /// restart asks for a new link. It has no stderr file.
    Link {
        /// What the log's header shows as its command: `remote NAME`, `person`.
        command: String,
        /// Where its links come from.
        connect: Arc<dyn Connect>,
        /// A time control of its own instead of the set's (`None`: the set's): the
        /// person's seat of `hus play` takes its time while the bot keeps the set's.
        /// Its `hello` states it, and the log's header records it (`bots[].time`). In
        /// a team, only the first member's counts (a side has one clock).
        time: Option<TimeControl>,
    },
}

impl Entrant {
    /// Starts the bot's process (its stderr kept as far as `stderr_budget` allows), or
    /// gets a link to it (waiting up to `wait` for it).
    async fn open(
        &self,
        wait: Duration,
        stderr_budget: &StderrBudget,
    ) -> std::result::Result<BotProcess, String> {
        match self {
            Entrant::Link { connect, .. } => connect
                .connect(Instant::now() + wait)
                .await
                .map(BotProcess::from_link),
            Entrant::Process {
                spec,
                stderr,
                limits,
                ..
            } => BotProcess::spawn(spec, stderr, stderr_budget, limits)
                .await
                .map_err(|e| format!("{e}{}", spawn_hint(&e))),
        }
    }

    /// Its command, as the log's header shows it.
    pub fn command(&self) -> &str {
        match self {
            Entrant::Process { spec, .. } => &spec.command,
            Entrant::Link { command, .. } => command,
        }
    }

    /// Its time control of its own, if any (only a link has one).
    fn time(&self) -> Option<TimeControl> {
        match self {
            Entrant::Process { .. } => None,
            Entrant::Link { time, .. } => *time,
        }
    }

    /// The file name of its stderr file, as the log's header gives it: empty for a link.
    fn stderr_name(&self) -> String {
        match self {
            Entrant::Process { stderr, .. } => file_name(&stderr.path()),
            Entrant::Link { .. } => String::new(),
        }
    }

    /// The uploaded version it is, if it is one.
    fn version(&self) -> Option<UploadedVersion> {
        match self {
            Entrant::Process { version, .. } => version.clone(),
            Entrant::Link { .. } => None,
        }
    }

    /// The name it will announce, when known before it starts (a person's seat).
    fn known_name(&self) -> Option<String> {
        match self {
            Entrant::Process { .. } => None,
            Entrant::Link { connect, .. } => connect.known_name(),
        }
    }
}

/// A fault, before it is tied to a game.
#[derive(Debug, Clone)]
struct FaultInfo {
    kind: FaultKind,
    detail: String,
    /// What the bot's stderr says last (crashes of a process): the log's detail adds
    /// it, the opponent's `result` does not (one bot's stderr is not another's to read).
    stderr: Option<String>,
    line: Option<String>,
    ms: Option<f64>,
    /// When it happened (LOGS.md, `fault.stage`): a fault outside a game costs the next
    /// one, and must not be reported as if it happened in it.
    stage: Stage,
}

impl FaultInfo {
    fn new(kind: FaultKind, detail: impl Into<String>) -> Self {
        FaultInfo {
            kind,
            detail: detail.into(),
            stderr: None,
            line: None,
            ms: None,
            stage: Stage::Game,
        }
    }

    fn at_stage(mut self, stage: Stage) -> Self {
        self.stage = stage;
        self
    }

    /// The detail as the log keeps it: with the last line of the bot's stderr.
    fn logged_detail(&self) -> String {
        match &self.stderr {
            Some(stderr) => format!("{}; {stderr}", self.detail),
            None => self.detail.clone(),
        }
    }
}

/// One side of a set: a single bot, or a team of bots.
pub enum Lineup {
    /// A single bot plays every turn of its side.
    Bot(Box<Entrant>),
    /// A team: its members take the side's turns one after another, in an order drawn
    /// by lot for each game ([`team_orders`]).
    Team(Team),
}

impl From<Entrant> for Lineup {
    fn from(entrant: Entrant) -> Self {
        Lineup::Bot(Box::new(entrant))
    }
}

/// A team of bots playing one side.
pub struct Team {
    /// The team's name (logs, `hello.team`, standings).
    pub name: String,
    /// Its members, in the team's list order (the indices of `hello.team.members` and
    /// of the log's `mate` fields). At least one.
    pub members: Vec<Member>,
}

/// A member of a team.
pub struct Member {
    /// The name its partners hear in `hello.team.members`.
    pub name: String,
    /// Its command, stderr file and limits.
    pub entrant: Entrant,
}

/// One bot process of a set, with its place: side and, in a team set, member index.
struct Seat {
    entrant: Entrant,
    /// Its stderr budget for the set, shared by every process it runs in it.
    stderr_budget: StderrBudget,
    /// The side it plays.
    side: Side,
    /// Team sets only: its index in its team.
    mate: Option<usize>,
    /// The name given to it by the caller (team sets), for `hello.team` and the log.
    given: String,
    /// The `hello` line it is sent (in a team set, with its own `team` field).
    hello: String,
    process: Option<BotProcess>,
    name: Option<String>,
    /// A fault that happened outside a game (failed start-up) and costs the next one.
    pending: Option<FaultInfo>,
    faults: u32,
    last_fault: Option<(FaultKind, String)>,
}

/// Plays a whole set and returns its final record. Bot commands that cannot be started
/// at all are an error before any game; everything a bot does wrong later is a fault.
/// Each side is a single bot or a team (both sides alike); a fault by any member of a
/// team loses the game for the team.
pub async fn play_set(
    config: &SetConfig,
    lineups: BySide<Lineup>,
    referee: &str,
    sink: &mut dyn RecordSink,
) -> Result<records::SetEnd, SetError> {
    let teams = match lineups.as_array() {
        [Lineup::Bot(_), Lineup::Bot(_)] => None,
        [Lineup::Team(a), Lineup::Team(b)] => {
            for t in [a, b] {
                if t.members.is_empty() {
                    return Err(SetError::EmptyTeam {
                        team: t.name.clone(),
                    });
                }
            }
            Some(BySide::new(a.name.clone(), b.name.clone()))
        }
        _ => return Err(SetError::MixedLineup),
    };
    let names: BySide<Vec<String>> = BySide::from_fn(|side| match &lineups[side] {
        // Only a team's members are named to their partners.
        Lineup::Bot(_) => vec![String::new()],
        Lineup::Team(t) => t.members.iter().map(|m| m.name.clone()).collect(),
    });
    let plain_hello = |time: Option<TimeControl>| {
        hello_message_timed(config, time.unwrap_or(config.time), referee, None).to_line()
    };
    let mut seats = Vec::new();
    let mut sides: BySide<Vec<usize>> = BySide::default();
    for (side, lineup) in Side::BOTH.into_iter().zip(lineups.into_array()) {
        let members: Vec<(Option<usize>, String, Entrant)> = match lineup {
            Lineup::Bot(e) => vec![(None, names[side][0].clone(), *e)],
            Lineup::Team(t) => t
                .members
                .into_iter()
                .enumerate()
                .map(|(i, m)| (Some(i), m.name, m.entrant))
                .collect(),
        };
        for (mate, given, entrant) in members {
            let hello = match (&teams, mate) {
                (Some(teams), Some(i)) => team_hello_line(
                    config,
                    referee,
                    protocol::TeamInfo {
                        name: teams[side].clone(),
                        members: names[side].clone(),
                        you: i as u32,
                        opponent: teams[side.other()].clone(),
                        opponent_members: names[side.other()].clone(),
                    },
                ),
                _ => plain_hello(entrant.time()),
            };
            sides[side].push(seats.len());
            seats.push(Seat {
                entrant,
                stderr_budget: StderrBudget::default(),
                side,
                mate,
                given,
                hello,
                process: None,
                name: None,
                pending: None,
                faults: 0,
                last_fault: None,
            });
        }
    }
    let mut runner = Runner {
        config,
        seats,
        sides,
        teams,
    };
    runner.run(referee, sink).await
}

struct Runner<'a> {
    config: &'a SetConfig,
    /// Every bot of the set: side A's first, in their team's order.
    seats: Vec<Seat>,
    /// The seats of each side, in the team's list order (one for a single bot).
    sides: BySide<Vec<usize>>,
    /// Team sets only: the teams' names.
    teams: Option<BySide<String>>,
}

/// How a game ended: by its rules (with the log's reason), or by the kind of its first
/// fault.
enum Ended {
    Rules(GameEnd, GameEndReason),
    Fault(FaultKind),
}

/// What ended a turn.
enum TurnOutcome {
    Moved { pit: u32 },
    Fault(FaultInfo),
}

impl Runner<'_> {
    async fn run(
        &mut self,
        referee: &str,
        sink: &mut dyn RecordSink,
    ) -> Result<records::SetEnd, SetError> {
        // The header first, before any bot starts: however early the set is stopped, its
        // log starts with its header (LOGS.md). The names the bots announce come later,
        // in their `ready` records.
        sink.record(&Record::Header(self.header(referee)))
            .map_err(SetError::NoHeader)?;
        // Then every bot: a command that cannot run at all is the user's error before
        // any game ([`CannotStart`]: the caller removes the log, which holds only its
        // header). A remote bot that is not connected in time is the same: the set is
        // not played.
        for k in 0..self.seats.len() {
            let entrant = &self.seats[k].entrant;
            let process = entrant
                .open(self.config.ready_time, &self.seats[k].stderr_budget)
                .await
                .map_err(|reason| SetError::CannotStart {
                    who: self.who(k),
                    command: entrant.command().to_string(),
                    reason,
                })?;
            self.seats[k].process = Some(process);
        }
        // `hello` to all, then each one's `ready`: every bot's allowance runs from its
        // own start, and its line is stamped when read, whoever is waited for first.
        // A stall of the referee seen while it waited for one bot's `ready` also ran on
        // the allowances of the bots waited for after it.
        let mut answers = Vec::with_capacity(self.seats.len());
        for seat in &mut self.seats {
            answers.push(send_hello(seat, self.config.ready_time).await);
        }
        let mut stalled = Duration::ZERO;
        for (k, answer) in answers.iter_mut().enumerate() {
            if answer.is_ok() {
                let seat = &mut self.seats[k];
                let (ready, stall) = await_ready(seat, self.config.ready_time, stalled).await;
                *answer = ready;
                stalled += stall;
            }
        }
        for (k, r) in answers.into_iter().enumerate() {
            let r = r.map_err(|f| f.at_stage(Stage::StartUp));
            self.after_handshake(k, r, sink)?;
        }

        let firsts = self.config.first_movers();
        let mut score = SetScore::default();
        let mut tally = self.config.sprt.map(SprtTally::new);
        let mut played = 0;
        for (game_no, &first) in (1..=self.config.games).zip(&firsts) {
            self.restart_faulted(game_no, sink).await?;
            let start = self.config.start_of(game_no);
            let end = self.play_game(game_no, first, start, sink).await?;
            played += 1;
            score.record(end.points.into_array(), end.winner.map(Side::index));
            if let Some(tally) = tally.as_mut() {
                tally.add_game(game_no, end.winner);
            }
            sink.record(&Record::GameEnd(end))?;
            let left = self.config.games - game_no;
            if self.config.early_stop
                && score.decided(left, self.config.rules.max_points_per_game())
            {
                break;
            }
            // The test is looked at after each whole pair: it decides only then.
            if tally.as_ref().is_some_and(SprtTally::decided) {
                break;
            }
        }

        // Bye, then let each bot exit by itself within the grace period.
        let points = BySide::from(score.points);
        let leader = score.leader().and_then(Side::from_index);
        for k in 0..self.seats.len() {
            let b = self.seats[k].side;
            let outcome = outcome_of(leader, b);
            let msg = RefereeMessage::Bye(Bye {
                points: Points {
                    you: points[b],
                    opponent: points[b.other()],
                },
                outcome,
            });
            if let Some(p) = self.seats[k].process.as_mut() {
                let _ = p.send(&msg.to_line(), Instant::now() + WRITE_GRACE).await;
            }
        }
        // All at once: each may take the whole grace period.
        let stopping: Vec<_> = self
            .seats
            .iter_mut()
            .map(|seat| tokio::spawn(stop(seat.process.take(), BYE_GRACE)))
            .collect();
        for (k, task) in stopping.into_iter().enumerate() {
            if let Ok(Some(ending)) = task.await {
                sink.record(&Record::Shutdown(self.shutdown_record(k, ending)))?;
            }
        }
        let end = records::SetEnd {
            games_played: played,
            points,
            wins: score.wins.into(),
            draws: score.draws,
            winner: leader,
            faults: BySide::from_fn(|b| self.sides[b].iter().map(|&k| self.seats[k].faults).sum()),
            finished: records::now_rfc3339(),
            sprt: tally.as_ref().map(SprtTally::end_record),
        };
        sink.record(&Record::SetEnd(end.clone()))?;
        Ok(end)
    }

    fn header(&self, referee: &str) -> records::Header {
        let c = self.config;
        records::Header {
            log_version: records::LOG_VERSION,
            referee: referee.to_string(),
            rules: records::RulesRecord {
                preset: c.rules.preset(),
                width: c.rules.width() as u32,
            },
            time: wire_time(c),
            seed: c.seed,
            games: c.games,
            early_stop: c.early_stop,
            bots: BySide::from_fn(|b| self.side_record(b)),
            started: records::now_rfc3339(),
            line_limit: MAX_LINE_LEN as u64,
            writer: records::Writer::this_process(),
            openings: c.openings.iter().map(|p| p.to_string()).collect(),
            sprt: c.sprt.as_ref().map(sprt_record),
            teams: self.teams.as_ref().map(|names| {
                Box::new(BySide::from_fn(|b| {
                    records::TeamRecord {
                        name: names[b].clone(),
                        members: self.sides[b]
                            .iter()
                            .map(|&k| {
                                let seat = &self.seats[k];
                                records::MateRecord {
                                    name: seat.given.clone(),
                                    command: seat.entrant.command().to_string(),
                                    // Written before the bots start: what
                                    // they announce is in `ready`.
                                    announced: None,
                                    stderr: seat.entrant.stderr_name(),
                                }
                            })
                            .collect(),
                    }
                }))
            }),
        }
    }

    /// `header.bots[b]`: the bot of side `b`, or in a team set the team as a whole.
    fn side_record(&self, b: Side) -> records::BotRecord {
        match &self.teams {
            None => {
                let seat = &self.seats[self.sides[b][0]];
                records::BotRecord {
                    command: seat.entrant.command().to_string(),
                    // Written before the bot starts: a bot's name is in its `ready`;
                    // only a seat that knows its name up front (a person's) has one.
                    name: seat.entrant.known_name(),
                    stderr: seat.entrant.stderr_name(),
                    time: seat
                        .entrant
                        .time()
                        .map(|t| wire_time_of(t, self.config.ready_time)),
                    version: seat.entrant.version(),
                }
            }
            Some(names) => records::BotRecord {
                command: self.sides[b]
                    .iter()
                    .map(|&k| self.seats[k].entrant.command())
                    .collect::<Vec<_>>()
                    .join(" + "),
                name: Some(names[b].clone()),
                stderr: String::new(),
                time: None,
                version: None,
            },
        }
    }

    /// The time control of side `b`: its (first) seat's own, or the set's.
    fn time_of_side(&self, b: Side) -> TimeControl {
        self.seats[self.sides[b][0]]
            .entrant
            .time()
            .unwrap_or(self.config.time)
    }

    /// The bot of seat `k` in words: `bot A`, or `bot greedy (2) of team red`.
    fn who(&self, k: usize) -> String {
        let seat = &self.seats[k];
        match (&self.teams, seat.mate) {
            (Some(teams), Some(i)) => format!(
                "bot {} ({}) of team {}",
                seat.given,
                i + 1,
                teams[seat.side]
            ),
            _ => format!("bot {}", seat.side.letter()),
        }
    }

    fn shutdown_record(&self, k: usize, e: crate::bot::Ending) -> records::Shutdown {
        let strays = shutdown_strays(&e);
        records::Shutdown {
            bot: self.seats[k].side,
            mate: self.seats[k].mate,
            status: e.status,
            stopped_by: e.stopped_by,
            leaked: e.leaked,
            escaped: e.escaped,
            strays,
            stderr_bytes: e.stderr_bytes,
            stderr_cut: e.stderr_cut,
        }
    }

    fn after_handshake(
        &mut self,
        k: usize,
        result: std::result::Result<(Option<String>, f64), FaultInfo>,
        sink: &mut dyn RecordSink,
    ) -> Result<()> {
        match result {
            Ok((name, ms)) => {
                self.seats[k].name = name.clone();
                let link = self.seats[k]
                    .process
                    .as_ref()
                    .and_then(BotProcess::link_info);
                sink.record(&Record::Ready(records::Ready {
                    bot: self.seats[k].side,
                    mate: self.seats[k].mate,
                    name,
                    ms,
                    peer: link.as_ref().map(|(peer, _)| peer.clone()),
                    rtt_ms: link
                        .and_then(|(_, rtt)| rtt)
                        .map(|d| d.as_micros() as f64 / 1000.0),
                }))
            }
            Err(fault) => {
                self.seats[k].pending = Some(fault);
                Ok(())
            }
        }
    }

    /// Restarts every bot that faulted (its process was stopped when the fault was
    /// recorded) before game `game_no`.
    async fn restart_faulted(&mut self, game_no: u32, sink: &mut dyn RecordSink) -> Result<()> {
        for k in 0..self.seats.len() {
            if self.seats[k].process.is_some() {
                continue;
            }
            sink.record(&Record::Restart(records::Restart {
                bot: self.seats[k].side,
                mate: self.seats[k].mate,
                game: game_no,
            }))?;
            let seat = &mut self.seats[k];
            match seat
                .entrant
                .open(self.config.ready_time, &seat.stderr_budget)
                .await
            {
                Ok(p) => {
                    seat.process = Some(p);
                    let r = handshake(seat, self.config.ready_time).await;
                    self.after_handshake(k, r, sink)?;
                }
                Err(e) => {
                    seat.pending = Some(
                        FaultInfo::new(FaultKind::StartUp, format!("could not be restarted: {e}"))
                            .at_stage(Stage::StartUp),
                    );
                }
            }
        }
        Ok(())
    }

    /// Plays game `game_no` from `start`, the side `first` being its side to move.
    async fn play_game(
        &mut self,
        game_no: u32,
        first: Side,
        start: AnyPosition,
        sink: &mut dyn RecordSink,
    ) -> Result<records::GameEnd> {
        let rules = self.config.rules;
        // A fresh history: the start is its own first occurrence (RULES.md, section 7).
        let mut game = Game::new(start);
        let seating = Seating::new(first, start.to_move());
        // Team sets: who of each team plays its side's 1st, 2nd... move, by lot.
        let order = self.teams.as_ref().map(|_| {
            team_orders(
                self.config.seed,
                game_no,
                self.sides.each_ref().map(Vec::len),
            )
        });
        sink.record(&Record::GameStart(records::GameStart {
            game: game_no,
            first,
            position: game.position().to_string(),
            order: order.clone(),
        }))?;

        // Faults from a failed start-up cost this game before any move. `faulted` holds
        // seats and their faults' kinds; a side has faulted when any of its seats has.
        let mut faulted: Vec<(usize, FaultKind)> = Vec::new();
        for k in 0..self.seats.len() {
            if let Some(f) = self.seats[k].pending.take() {
                let kind = f.kind;
                self.fault(game_no, &game, k, f, sink).await?;
                faulted.push((k, kind));
            }
        }
        // Every bot still running hears `game`, even when its opponent has already lost
        // this game: `game` precedes every `result` (PROTOCOL.md, "Message order").
        for k in 0..self.seats.len() {
            if faulted.iter().any(|&(j, _)| j == k) {
                continue;
            }
            let b = self.seats[k].side;
            let me = seating.player(b);
            let pos = game.position();
            let as_wire = |o: &Vec<usize>| o.iter().map(|&i| i as u32).collect::<Vec<u32>>();
            let msg = RefereeMessage::Game(GameStart {
                game: game_no,
                first: b == first,
                you: pits(pos, me),
                opponent: pits(pos, me.other()),
                order: order.as_ref().map(|o| as_wire(&o[b])),
                opponent_order: order.as_ref().map(|o| as_wire(&o[b.other()])),
            });
            if let Some(f) = self.send(k, &msg).await {
                let kind = f.kind;
                self.fault(game_no, &game, k, f, sink).await?;
                faulted.push((k, kind));
            }
        }

        let mut clocks = BySide::from_fn(|b| match self.time_of_side(b) {
            TimeControl::PerMove(_) => Duration::ZERO,
            TimeControl::Clock { base, .. } => base,
        });
        let mut last_move: Option<(Side, u32)> = None; // (side, pit)
        let mut moves_by_side = BySide::new(0usize, 0);
        let ended = loop {
            if let Some(&(_, kind)) = faulted.first() {
                break Ended::Fault(kind);
            }
            // The rules' end: never `EndReason::Fault`, which only a forfeit gives.
            if let Some(end) = game.end() {
                if let Some(reason) = GameEndReason::of_rules(end.reason) {
                    break Ended::Rules(*end, reason);
                }
            }
            let b = seating.side(game.position().to_move());
            let k = match &order {
                Some(o) => self.sides[b][o[b][moves_by_side[b] % o[b].len()]],
                None => self.sides[b][0],
            };
            match self
                .turn(game_no, &mut game, k, last_move, &mut clocks, sink)
                .await?
            {
                TurnOutcome::Moved { pit } => {
                    last_move = Some((b, pit));
                    moves_by_side[b] += 1;
                }
                TurnOutcome::Fault(f) => {
                    let kind = f.kind;
                    self.fault(game_no, &game, k, f, sink).await?;
                    faulted.push((k, kind));
                }
            }
        };

        let fault_detail = faulted
            .first()
            .and_then(|&(k, _)| self.seats[k].last_fault.clone())
            .map(|(_, detail)| detail);
        let mut faulted_sides: Vec<Side> = Vec::new();
        for &(k, _) in &faulted {
            if !faulted_sides.contains(&self.seats[k].side) {
                faulted_sides.push(self.seats[k].side);
            }
        }
        let (reason, winner, double, points) = match (ended, faulted_sides.as_slice()) {
            (Ended::Rules(end, reason), _) => {
                let points = seating.by_side(rules.points(&end, game.position()));
                (
                    reason,
                    end.winner.map(|p| seating.side(p)),
                    end.double,
                    points,
                )
            }
            (Ended::Fault(kind), [b]) => {
                let b = *b;
                let loser = seating.player(b);
                game.forfeit(loser);
                let end = GameEnd::forfeit(loser);
                let points = seating.by_side(rules.points(&end, game.position()));
                (GameEndReason::Fault(kind), Some(b.other()), false, points)
            }
            // Both sides faulted (a fault of each before the game's first move).
            (Ended::Fault(kind), _) => (GameEndReason::Fault(kind), None, false, BySide::new(0, 0)),
        };
        let end = records::GameEnd {
            game: game_no,
            reason,
            winner,
            faulted: faulted_sides.clone(),
            double,
            points,
            plies: game.plies(),
            position: game.position().to_string(),
        };
        // Tell every bot still running (a faulted bot has already been stopped and hears
        // nothing; in a team set its team-mates hear that their side faulted).
        for k in 0..self.seats.len() {
            if self.seats[k].process.is_none() {
                continue;
            }
            let b = self.seats[k].side;
            let me = seating.player(b);
            let pos = game.position();
            let msg = RefereeMessage::Result(GameResult {
                game: game_no,
                outcome: outcome_of(winner, b),
                reason: reason.into(),
                points: Points {
                    you: points[b],
                    opponent: points[b.other()],
                },
                // The last move of the game, whoever played it: a bot whose own move
                // ended the game learns it was the last (protocol 1, version notes).
                last: last_move.map(|(_, pit)| pit),
                you: pits(pos, me),
                opponent: pits(pos, me.other()),
                plies: game.plies(),
                fault_by: faulted_sides.first().map(|&f| {
                    if f == b {
                        protocol::Side::You
                    } else {
                        protocol::Side::Opponent
                    }
                }),
                detail: fault_detail.clone(),
            });
            if let Some(f) = self.send(k, &msg).await {
                // It broke after the game: it starts the next game with this fault.
                self.seats[k].pending = Some(f.at_stage(Stage::Result));
                self.stop_faulted(k, sink).await?;
            }
        }
        Ok(end)
    }
}

impl Runner<'_> {
    /// Sends `msg` to the bot of seat `k`; a bot that cannot be written to has crashed.
    async fn send(&mut self, k: usize, msg: &RefereeMessage) -> Option<FaultInfo> {
        let process = self.seats[k].process.as_mut()?;
        match process
            .send(&msg.to_line(), Instant::now() + WRITE_GRACE)
            .await
        {
            Ok(_) => None,
            Err(e) => {
                let what = format!("its {} could not be written ({e})", process.input_name());
                Some(crash_fault(process, what, None).await)
            }
        }
    }

    /// Records a fault by the bot of seat `k` in this game and stops the bot: it is
    /// restarted before the next game (its team-mates play on).
    async fn fault(
        &mut self,
        game_no: u32,
        game: &Game<AnyPosition>,
        k: usize,
        f: FaultInfo,
        sink: &mut dyn RecordSink,
    ) -> Result<()> {
        let seat = &mut self.seats[k];
        seat.faults += 1;
        seat.last_fault = Some((f.kind, f.detail.clone()));
        sink.record(&Record::Fault(records::Fault {
            game: game_no,
            ply: game.plies(),
            bot: seat.side,
            mate: seat.mate,
            kind: f.kind,
            detail: f.logged_detail(),
            line: f.line,
            position: game.position().to_string(),
            ms: f.ms,
            stage: f.stage,
        }))?;
        self.stop_faulted(k, sink).await
    }

    async fn stop_faulted(&mut self, k: usize, sink: &mut dyn RecordSink) -> Result<()> {
        if let Some(process) = self.seats[k].process.take() {
            let ending = process.shutdown(Duration::ZERO).await;
            sink.record(&Record::Shutdown(self.shutdown_record(k, ending)))?;
        }
        Ok(())
    }

    /// One turn: unsolicited output first, then the turn line, then the move or a fault.
    async fn turn(
        &mut self,
        game_no: u32,
        game: &mut Game<AnyPosition>,
        k: usize,
        last_move: Option<(Side, u32)>,
        clocks: &mut BySide<Duration>,
        sink: &mut dyn RecordSink,
    ) -> Result<TurnOutcome> {
        // Clocks are the sides': a team shares one.
        let b = self.seats[k].side;
        let mate = self.seats[k].mate;
        let pos = *game.position();
        let me = pos.to_move();
        let time = self.time_of_side(b);
        let opponent_time = self.time_of_side(b.other());
        let allowance = match time {
            TimeControl::PerMove(d) => d,
            TimeControl::Clock { .. } => clocks[b],
        };
        let Some(process) = self.seats[k].process.as_mut() else {
            return Ok(TurnOutcome::Fault(FaultInfo::new(
                FaultKind::Crash,
                "not running",
            )));
        };
        // Anything the bot wrote since its last move was not asked for.
        if let Some(out) = process.pending() {
            let now = Instant::now();
            return Ok(TurnOutcome::Fault(output_fault(process, out, now).await));
        }
        if process.has_exited() {
            let f = crash_fault(process, "exited between its moves".into(), None).await;
            return Ok(TurnOutcome::Fault(f));
        }
        // A remote bot's network time, credited up to its cap (PROTOCOL.md, "Remote
        // bots"): measured before the turn, it extends the deadline and is taken off
        // the time charged.
        let lag = process.lag();
        let credit = lag.map_or(Duration::ZERO, |l| l.allowance);
        let turn = RefereeMessage::Turn(Turn {
            game: game_no,
            ply: game.plies(),
            you: pits(&pos, me),
            opponent: pits(&pos, me.other()),
            legal: pos.legal_moves().map(|p| p as u32).collect(),
            // The last move on the board, whoever played it (sides alternate: the
            // opponent's; in a team set, whichever opposing team-mate played it).
            last: last_move.map(|(_, pit)| pit),
            time_ms: allowance.as_millis() as u64,
            opponent_time_ms: match opponent_time {
                TimeControl::PerMove(_) => None,
                TimeControl::Clock { .. } => Some(clocks[b.other()].as_millis() as u64),
            },
        });
        let asked = Instant::now();
        let written = match process
            .send(&turn.to_line(), asked + allowance + credit)
            .await
        {
            Ok(at) => at,
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {
                let mut f = FaultInfo::new(
                    FaultKind::TimeOut,
                    format!(
                        "did not read its input: the turn could not be written within {} ms",
                        allowance.as_millis()
                    ),
                );
                f.ms = Some(ms_between(asked, Instant::now()));
                return Ok(TurnOutcome::Fault(f));
            }
            Err(e) => {
                let what = format!("its {} is closed ({e})", process.input_name());
                let f = crash_fault(process, what, None).await;
                return Ok(TurnOutcome::Fault(f));
            }
        };
        let deadline = written + allowance + credit;
        let within = match credit.is_zero() {
            true => format!("{} ms", allowance.as_millis()),
            false => format!(
                "{} ms and a lag allowance of {:.1} ms",
                allowance.as_millis(),
                credit.as_micros() as f64 / 1000.0
            ),
        };
        // A stall of the referee itself (its process stopped, swapped out) is not the
        // bot's: it moves the deadline later and is taken off the time charged
        // (PROTOCOL.md, "Timing").
        let (out, stalled) = process.next_output_unstalled(written, deadline).await;
        let deadline = deadline + stalled;
        let within = match stalled.is_zero() {
            true => within,
            false => format!(
                "{within} and a stall of the referee of {:.1} ms",
                stalled.as_micros() as f64 / 1000.0
            ),
        };
        let out = match out {
            Some(out) => out,
            None => {
                let mut f = FaultInfo::new(FaultKind::TimeOut, format!("no move within {within}"));
                f.ms = Some(ms_between(written, Instant::now()));
                return Ok(TurnOutcome::Fault(f));
            }
        };
        let (bytes, at) = match out {
            Output::Line { bytes, at } => (bytes, at),
            other => {
                return Ok(TurnOutcome::Fault(
                    output_fault(process, other, written).await,
                ))
            }
        };
        let ms = ms_between(written, at);
        if at > deadline {
            let f = line_fault(
                FaultKind::TimeOut,
                format!("move read {ms:.1} ms after the turn, over the {within} allowed"),
                &bytes,
                Some(ms),
            );
            return Ok(TurnOutcome::Fault(f));
        }
        let pit = match decode_bot_message(&bytes) {
            Ok(BotMessage::Move { pit }) => pit,
            Ok(BotMessage::Ready { .. }) => {
                return Ok(TurnOutcome::Fault(line_fault(
                    FaultKind::WrongMessage,
                    "sent ready when a move was asked for".into(),
                    &bytes,
                    Some(ms),
                )))
            }
            Err(e) => {
                return Ok(TurnOutcome::Fault(line_fault(
                    e.kind().into(),
                    e.to_string(),
                    &bytes,
                    Some(ms),
                )))
            }
        };
        // The engine checks the range too; a pit beyond usize is out of range anyway.
        let report = match game.play(usize::try_from(pit).unwrap_or(usize::MAX)) {
            Ok(report) => report,
            Err(e) => {
                return Ok(TurnOutcome::Fault(line_fault(
                    FaultKind::IllegalMove,
                    e.to_string(),
                    &bytes,
                    Some(ms),
                )))
            }
        };
        if let TimeControl::Clock { increment, .. } = time {
            let charged = (at - written).saturating_sub(credit + stalled);
            clocks[b] = clocks[b].saturating_sub(charged) + increment;
        }
        sink.record(&Record::Move(records::MoveRecord {
            game: game_no,
            ply: game.plies() - 1,
            bot: b,
            mate,
            player: me,
            pit: pit as u32,
            ms,
            rtt_ms: lag
                .and_then(|l| l.rtt)
                .map(|d| d.as_micros() as f64 / 1000.0),
            lag_ms: lag.map(|l| l.allowance.as_micros() as f64 / 1000.0),
            stall_ms: (!stalled.is_zero()).then(|| stalled.as_micros() as f64 / 1000.0),
            sown: report.summary.sown,
            events: report.events,
            truncated: report.summary.truncated,
            position: game.position().to_string(),
        }))?;
        Ok(TurnOutcome::Moved { pit: pit as u32 })
    }
}

/// The order of each team's members in game `game` (from 1) of a team set whose teams
/// have `sizes` members: for each side, a shuffle of its member indices, drawn from the
/// set's seed (a ChaCha8 stream of its own for each game, apart from the first-mover
/// lots of [`crate::config::lots`]). The same seed always draws the same orders.
pub fn team_orders(seed: u64, game: u32, sizes: BySide<usize>) -> BySide<Vec<usize>> {
    use rand::seq::SliceRandom;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(u64::from(game));
    sizes.map(|n| {
        let mut order: Vec<usize> = (0..n).collect();
        order.shuffle(&mut rng);
        order
    })
}

fn pits(pos: &AnyPosition, player: Player) -> Vec<u32> {
    pos.pits(player).into_iter().map(u32::from).collect()
}

fn outcome_of(winner: Option<Side>, bot: Side) -> Outcome {
    match winner {
        None => Outcome::Draw,
        Some(w) if w == bot => Outcome::Win,
        Some(_) => Outcome::Loss,
    }
}

async fn stop(process: Option<BotProcess>, grace: Duration) -> Option<crate::bot::Ending> {
    match process {
        Some(p) => Some(p.shutdown(grace).await),
        None => None,
    }
}

/// The time control as `hello` and the log's header state it.
fn wire_time(config: &SetConfig) -> protocol::TimeControl {
    wire_time_of(config.time, config.ready_time)
}

/// `time` as `hello` and the log state it, with the set's start-up allowance.
fn wire_time_of(time: TimeControl, ready_time: Duration) -> protocol::TimeControl {
    let ready_ms = ready_time.as_millis() as u64;
    match time {
        TimeControl::PerMove(d) => protocol::TimeControl::PerMove {
            move_ms: d.as_millis() as u64,
            ready_ms,
        },
        TimeControl::Clock { base, increment } => protocol::TimeControl::Clock {
            base_ms: base.as_millis() as u64,
            increment_ms: increment.as_millis() as u64,
            ready_ms,
        },
    }
}

/// The `hello` line every bot of an ordinary set is sent.
pub fn hello_line(config: &SetConfig, referee: &str) -> String {
    hello_message(config, referee, None).to_line()
}

/// The `hello` line of a member of a team.
pub fn team_hello_line(config: &SetConfig, referee: &str, team: protocol::TeamInfo) -> String {
    hello_message(config, referee, Some(team)).to_line()
}

fn hello_message(
    config: &SetConfig,
    referee: &str,
    team: Option<protocol::TeamInfo>,
) -> RefereeMessage {
    hello_message_timed(config, config.time, referee, team)
}

/// The `hello` of a seat whose time control is `time`.
fn hello_message_timed(
    config: &SetConfig,
    time: TimeControl,
    referee: &str,
    team: Option<protocol::TeamInfo>,
) -> RefereeMessage {
    let rules = config.rules;
    RefereeMessage::Hello(Hello {
        protocol: PROTOCOL_VERSION,
        referee: referee.to_string(),
        rules: rules_info(rules),
        time: wire_time_of(time, config.ready_time),
        games: config.games,
        line_limit: MAX_LINE_LEN as u64,
        team,
    })
}

/// The rules as `hello` announces them: the preset and every parameter.
pub fn rules_info(rules: Rules) -> RulesInfo {
    use engine::{CaptureRule, CapturedSownFrom as From, Preset as P, Scoring as S, Sowing as W};
    let preset = rules.preset();
    RulesInfo {
        preset: match preset {
            P::Hus => protocol::Preset::Hus,
            P::Rulebook => protocol::Preset::Rulebook,
            P::MancalaWorld => protocol::Preset::MancalaWorld,
        },
        width: rules.width() as u32,
        sowing: match preset.sowing() {
            W::Clockwise => protocol::Sowing::Clockwise,
            W::Anticlockwise => protocol::Sowing::Anticlockwise,
        },
        capture: match preset.capture() {
            CaptureRule::FrontRun => protocol::Capture::FrontRun,
            CaptureRule::LandingAndAcross => protocol::Capture::LandingAndAcross,
            CaptureRule::AcrossAndBehind => protocol::Capture::AcrossAndBehind,
        },
        captured_sown_from: match preset.captured_sown_from() {
            From::Landing => protocol::CapturedSownFrom::Landing,
            From::Next => protocol::CapturedSownFrom::Next,
        },
        scoring: match preset.scoring() {
            S::Wins { .. } => protocol::Scoring::Wins,
            S::Seeds => protocol::Scoring::Seeds,
        },
        double_win: rules.scores_doubles(),
        min_seeds_to_move: engine::MIN_SEEDS_TO_MOVE as u32,
        max_sown_per_move: engine::MAX_SOWN_PER_MOVE,
        no_capture_limit: engine::NO_CAPTURE_LIMIT,
        repetition: true,
        seeds_per_player: rules.seeds_per_player(),
    }
}

/// Sends `hello` and waits for `ready` within the start-up allowance, counted from the
/// spawn. Returns the announced name and the time taken, or the fault (of the start-up
/// stage: it costs the next game, but did not happen in it).
async fn handshake(
    seat: &mut Seat,
    ready_time: Duration,
) -> std::result::Result<(Option<String>, f64), FaultInfo> {
    let answer = match send_hello(seat, ready_time).await {
        Ok(_) => await_ready(seat, ready_time, Duration::ZERO).await.0,
        Err(f) => Err(f),
    };
    answer.map_err(|f| f.at_stage(Stage::StartUp))
}

/// Sends the seat's `hello` (its allowance for `ready` runs from its spawn).
async fn send_hello(
    seat: &mut Seat,
    ready_time: Duration,
) -> std::result::Result<(Option<String>, f64), FaultInfo> {
    let Some(process) = seat.process.as_mut() else {
        return Err(FaultInfo::new(FaultKind::StartUp, "not running"));
    };
    let deadline = process.started() + ready_time;
    if let Err(e) = process.send(&seat.hello, deadline).await {
        return Err(crash_fault(process, format!("could not be sent hello: {e}"), None).await);
    }
    Ok((None, 0.0))
}

/// Waits for the `ready` that answers `hello`, until the start-up allowance from the
/// bot's spawn, moved later by `earlier_stalls` (the referee's own, seen while it
/// waited for other bots) and by the stalls seen in this wait; also those.
async fn await_ready(
    seat: &mut Seat,
    ready_time: Duration,
    earlier_stalls: Duration,
) -> (
    std::result::Result<(Option<String>, f64), FaultInfo>,
    Duration,
) {
    let Some(process) = seat.process.as_mut() else {
        let f = FaultInfo::new(FaultKind::StartUp, "not running");
        return (Err(f), Duration::ZERO);
    };
    let started = process.started();
    let deadline = started + ready_time + earlier_stalls;
    // A stall of the referee is not the bot's, as in a turn. Counted from now: the
    // time before was another wait's to see.
    let (out, stall) = process
        .next_output_unstalled(Instant::now(), deadline)
        .await;
    let stalled = earlier_stalls + stall;
    let ready = match out {
        None if stalled.is_zero() => Err(FaultInfo::new(
            FaultKind::StartUp,
            format!(
                "no ready within the start-up allowance of {} ms",
                ready_time.as_millis()
            ),
        )),
        None => Err(FaultInfo::new(
            FaultKind::StartUp,
            format!(
                "no ready within the start-up allowance of {} ms and a stall of the referee of {:.1} ms",
                ready_time.as_millis(),
                stalled.as_micros() as f64 / 1000.0
            ),
        )),
        Some(Output::Line { bytes, at }) => {
            let ms = ms_between(started, at);
            match decode_bot_message(&bytes) {
                Ok(BotMessage::Ready { name }) => Ok((name, ms)),
                Ok(BotMessage::Move { .. }) => Err(line_fault(
                    FaultKind::WrongMessage,
                    "sent a move before ready (hello must be answered with ready)".into(),
                    &bytes,
                    Some(ms),
                )),
                Err(e) => Err(line_fault(
                    e.kind().into(),
                    format!("answered hello with a bad line: {e}"),
                    &bytes,
                    Some(ms),
                )),
            }
        }
        Some(other) => Err(output_fault(process, other, started).await),
    };
    (ready, stall)
}

/// The file name of a stderr path, as the log's header gives it.
fn file_name(path: &std::path::Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Milliseconds, to the microsecond.
fn ms_between(from: Instant, to: Instant) -> f64 {
    to.saturating_duration_since(from).as_micros() as f64 / 1000.0
}

fn line_fault(kind: FaultKind, detail: String, bytes: &[u8], ms: Option<f64>) -> FaultInfo {
    FaultInfo {
        kind,
        detail,
        stderr: None,
        line: Some(excerpt(bytes, EXCERPT_CHARS)),
        ms,
        stage: Stage::Game,
    }
}

/// A fault for anything read from stdout other than a complete line.
async fn output_fault(process: &mut BotProcess, output: Output, since: Instant) -> FaultInfo {
    match output {
        Output::Line { bytes, at } => line_fault(
            FaultKind::UnsolicitedMessage,
            "sent a line when no move was asked for".into(),
            &bytes,
            Some(ms_between(since, at)),
        ),
        Output::TooLong { limit, at } => FaultInfo {
            kind: FaultKind::OversizedLine,
            detail: format!("sent a line longer than {limit} bytes"),
            stderr: None,
            line: None,
            ms: Some(ms_between(since, at)),
            stage: Stage::Game,
        },
        Output::Closed { partial, at } => {
            let what = match (&partial, process.is_link()) {
                (Some(_), false) => "closed its stdout in the middle of a line",
                (None, false) => "closed its stdout",
                (Some(_), true) => "disconnected in the middle of a line",
                (None, true) => "disconnected",
            };
            let mut f = crash_fault(process, what.to_string(), partial.as_deref()).await;
            f.ms = Some(ms_between(since, at));
            f
        }
        Output::Exited { status, at } => FaultInfo {
            kind: FaultKind::Crash,
            detail: format!(
                "exited ({}) while a process it started kept its stdout open",
                describe_status(status)
            ),
            stderr: stderr_words(process).await,
            line: None,
            ms: Some(ms_between(since, at)),
            stage: Stage::Game,
        },
        Output::ReadError { message, at } => {
            let mut f = crash_fault(
                process,
                format!("its stdout could not be read: {message}"),
                None,
            )
            .await;
            f.ms = Some(ms_between(since, at));
            f
        }
    }
}

/// A crash fault, with the exit status if the process exits within a moment, and the
/// last line of its stderr.
async fn crash_fault(process: &mut BotProcess, what: String, partial: Option<&[u8]>) -> FaultInfo {
    let status = process.wait_exit(Duration::from_millis(200)).await;
    let mut detail = match status {
        Some(s) => format!("{what} ({})", describe_status(s)),
        None if process.is_link() => what,
        None => format!("{what} (still running)"),
    };
    // A sandbox over its memory budget: the cause, from its memory cgroup.
    if let Some(words) = process.memory_events().and_then(|m| m.words()) {
        detail = format!("{detail}: {words}");
    }
    FaultInfo {
        kind: FaultKind::Crash,
        detail,
        stderr: stderr_words(process).await,
        line: partial.map(|p| excerpt(p, EXCERPT_CHARS)),
        ms: None,
        stage: Stage::Game,
    }
}

/// What a crashed bot's stderr says last, in the words of a fault's detail; `None` for
/// a link (a remote bot, a person) and a bot that wrote nothing there.
async fn stderr_words(process: &mut BotProcess) -> Option<String> {
    process.stderr_tail().await.map(|tail| tail.words())
}

/// The processes a bot left running, as its `shutdown` record lists them.
pub(crate) fn shutdown_strays(ending: &crate::bot::Ending) -> Vec<records::StrayProcess> {
    ending
        .strays
        .iter()
        .map(|s| records::StrayProcess {
            pid: s.pid,
            command: s.command.clone(),
            left_group: s.left_group,
        })
        .collect()
}
