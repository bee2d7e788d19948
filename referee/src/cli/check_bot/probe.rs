//! The probe: one process of the bot, driven directly through `BotProcess`, to see what
//! a set cannot tell apart. In a set, a bot that never answers and a bot whose answer
//! sits unflushed in its output buffer both time out. Here, when an answer is late, the
//! probe first waits a little longer with stdin open (a slow answer arrives then), then
//! closes the bot's stdin: a bot that wrote its answer without flushing it flushes it
//! when it exits at the end of its input, and the line arrives at once.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};
use engine::{AnyPosition, Board, Player};
use protocol::{decode_bot_message, excerpt, BotMessage, GameStart, RefereeMessage, Turn};
use tokio::time::Instant;

use crate::bot::{describe_status, spawn_hint, BotProcess, Output, WRITE_GRACE};
use crate::config::{BotSpec, SetConfig, TimeControl};
use crate::limits::Limits;
use crate::records::StoppedBy;
use crate::set::BYE_GRACE;

/// After `ready` was due, how much longer the probe waits with stdin open (at most).
const LATE_READY_WAIT: Duration = Duration::from_secs(2);
/// After a move was due, how much longer the probe waits with stdin open: the move
/// time, but at least this ...
const LATE_MOVE_WAIT_MIN: Duration = Duration::from_millis(500);
/// ... and at most this.
const LATE_MOVE_WAIT_MAX: Duration = Duration::from_secs(2);
/// After stdin is closed, how long an unflushed answer may take to arrive: the bot
/// has to see the end of its input and exit (a JVM, or any bot on a loaded machine,
/// may take a while). Only a bot that sends nothing at all waits this long.
const AFTER_CLOSE_WAIT: Duration = Duration::from_secs(3);
/// After an answer, how long the probe listens for a line nobody asked for (a second
/// move for one turn). In a set such a line can race with the next turn and be taken
/// as its answer; here nothing else is going on.
const UNASKED_WAIT: Duration = Duration::from_millis(100);
/// Longest excerpt of a line shown in the report.
const EXCERPT_CHARS: usize = 200;

/// How the bot answered `hello`.
#[derive(Clone, Debug, PartialEq)]
pub enum Hello {
    /// `ready`, this many ms after the start, within the allowance.
    Ready { ms: f64 },
    /// A first line within the allowance that is not `ready`: the games classify it.
    Other,
    /// It exited or closed its stdout without a line: the games classify it.
    Gone,
    /// A line only after the allowance, with stdin still open: a slow start. `line` is
    /// the line when it is not `ready`.
    Late { ms: f64, line: Option<String> },
    /// Its first line came only when its stdin was closed: not flushed.
    Unflushed { after_close_ms: f64, line: String },
    /// Nothing at all, not even when its stdin was closed; `status` if it exited.
    Silent { status: Option<String> },
}

/// How the bot answered the first `turn` of a game (sent only after a `ready`).
#[derive(Clone, Debug, PartialEq)]
pub enum TurnAnswer {
    /// A line, this many ms after the turn, within the time.
    Answered { ms: f64 },
    /// It exited or closed its stdout: the games classify it.
    Gone,
    /// A line after the time, with stdin still open: slow.
    Late { ms: f64 },
    /// A line only when its stdin was closed: not flushed.
    Unflushed { after_close_ms: f64, line: String },
    /// Nothing, not even when its stdin was closed.
    NoAnswer,
}

/// What the probe saw.
#[derive(Clone, Debug)]
pub struct Probe {
    pub hello: Hello,
    /// `None` when there was no `ready` to follow up.
    pub turn: Option<TurnAnswer>,
    /// Lines sent when nothing was asked: after which answer, and the line.
    pub unasked: Vec<(&'static str, String)>,
    /// Whether the bot was idle, waiting for its next line, when its stdin was closed
    /// at the end: only then is not exiting its fault.
    pub exit_judged: bool,
    /// `itself`, `sigterm` or `sigkill`.
    pub stopped_by: StoppedBy,
    /// What it left running after it exited or was stopped, in the console's words
    /// (`report::stray_words`).
    pub leaks: Vec<String>,
}

impl Probe {
    /// Whether a set is worth playing: not when every game would begin with a long
    /// start-up time-out, nor when every move would sit in the bot's buffer.
    pub fn games_can_run(&self) -> bool {
        match &self.hello {
            Hello::Ready { .. } => !matches!(self.turn, Some(TurnAnswer::Unflushed { .. })),
            Hello::Other | Hello::Gone => true,
            Hello::Late { .. } | Hello::Unflushed { .. } | Hello::Silent { .. } => false,
        }
    }
}

/// Starts the bot, sends `hello` and, after a `ready`, the first turn of a game; then
/// stops it. An error only when the command cannot be started at all.
pub async fn run(
    bot: &BotSpec,
    limits: &Limits,
    stderr: &Path,
    hello: &str,
    config: &SetConfig,
    move_time: Duration,
) -> Result<Probe> {
    let mut process = BotProcess::spawn(
        bot,
        &stderr.to_path_buf().into(),
        &crate::stderr::StderrBudget::default(),
        limits,
    )
    .await
    .map_err(|e| anyhow::anyhow!("{e}{}", spawn_hint(&e)))
    .with_context(|| format!("cannot start the bot {:?}", bot.command))?;
    let hello = answer_hello(&mut process, hello, config.ready_time).await;
    let mut unasked = Vec::new();
    let turn = match hello {
        Hello::Ready { .. } => {
            let turn = answer_turn(&mut process, config, move_time, &mut unasked).await;
            if let TurnAnswer::Answered { .. } = turn {
                unasked.extend(listen(&mut process, "after its first move").await);
            }
            Some(turn)
        }
        _ => None,
    };
    let exit_judged = matches!(turn, Some(TurnAnswer::Answered { .. }));
    let grace = if exit_judged {
        BYE_GRACE
    } else {
        Duration::ZERO
    };
    let ending = process.shutdown(grace).await;
    Ok(Probe {
        hello,
        turn,
        unasked,
        exit_judged,
        stopped_by: ending.stopped_by,
        leaks: crate::report::leak_words(
            &crate::set::shutdown_strays(&ending),
            ending.leaked,
            ending.stopped_by,
        ),
    })
}

async fn answer_hello(process: &mut BotProcess, hello: &str, ready_time: Duration) -> Hello {
    let started = process.started();
    if process.send(hello, started + ready_time).await.is_err() {
        return Hello::Gone;
    }
    match process.next_output(started + ready_time).await {
        Some(Output::Line { bytes, at }) => {
            return if is_ready(&bytes) {
                Hello::Ready {
                    ms: ms_between(started, at),
                }
            } else {
                Hello::Other
            }
        }
        Some(_) => return Hello::Gone,
        None => {}
    }
    let late = Instant::now() + ready_time.min(LATE_READY_WAIT);
    match process.next_output(late).await {
        Some(Output::Line { bytes, at }) => {
            return Hello::Late {
                ms: ms_between(started, at),
                line: (!is_ready(&bytes)).then(|| excerpt(&bytes, EXCERPT_CHARS)),
            }
        }
        Some(_) => return silent(process).await,
        None => {}
    }
    process.close_stdin();
    let closed = Instant::now();
    match process.next_output(closed + AFTER_CLOSE_WAIT).await {
        Some(Output::Line { bytes, at }) => Hello::Unflushed {
            after_close_ms: ms_between(closed, at),
            line: excerpt(&bytes, EXCERPT_CHARS),
        },
        _ => silent(process).await,
    }
}

/// A line the bot sends within [`UNASKED_WAIT`] though nothing was asked.
async fn listen(process: &mut BotProcess, when: &'static str) -> Option<(&'static str, String)> {
    match process.next_output(Instant::now() + UNASKED_WAIT).await {
        Some(Output::Line { bytes, .. }) => Some((when, excerpt(&bytes, EXCERPT_CHARS))),
        _ => None,
    }
}

async fn silent(process: &mut BotProcess) -> Hello {
    let status = process.wait_exit(Duration::from_millis(100)).await;
    Hello::Silent {
        status: status.map(describe_status),
    }
}

/// Game 1 with the bot moving first, a moment's silence, and its first turn.
async fn answer_turn(
    process: &mut BotProcess,
    config: &SetConfig,
    move_time: Duration,
    unasked: &mut Vec<(&'static str, String)>,
) -> TurnAnswer {
    let pos = AnyPosition::start(config.rules);
    let pits = |p: Player| -> Vec<u32> { pos.pits(p).into_iter().map(u32::from).collect() };
    let game = RefereeMessage::Game(GameStart {
        game: 1,
        first: true,
        you: pits(Player::Zero),
        opponent: pits(Player::One),
        order: None,
        opponent_order: None,
    });
    let turn = RefereeMessage::Turn(Turn {
        game: 1,
        ply: 0,
        you: pits(Player::Zero),
        opponent: pits(Player::One),
        legal: pos.legal_moves().map(|p| p as u32).collect(),
        last: None,
        time_ms: move_time.as_millis() as u64,
        // With a clock, the opponent's is as full as the bot's at the first move.
        opponent_time_ms: match config.time {
            TimeControl::PerMove(_) => None,
            TimeControl::Clock { .. } => Some(move_time.as_millis() as u64),
        },
    });
    if process
        .send(&game.to_line(), Instant::now() + WRITE_GRACE)
        .await
        .is_err()
    {
        return TurnAnswer::Gone;
    }
    unasked.extend(
        listen(
            process,
            "before its first turn (after ready and the game message)",
        )
        .await,
    );
    let Ok(written) = process
        .send(&turn.to_line(), Instant::now() + move_time)
        .await
    else {
        return TurnAnswer::Gone;
    };
    match process.next_output(written + move_time).await {
        Some(Output::Line { at, .. }) => {
            return TurnAnswer::Answered {
                ms: ms_between(written, at),
            }
        }
        Some(_) => return TurnAnswer::Gone,
        None => {}
    }
    let late = Instant::now() + move_time.clamp(LATE_MOVE_WAIT_MIN, LATE_MOVE_WAIT_MAX);
    match process.next_output(late).await {
        Some(Output::Line { at, .. }) => {
            return TurnAnswer::Late {
                ms: ms_between(written, at),
            }
        }
        Some(_) => return TurnAnswer::Gone,
        None => {}
    }
    process.close_stdin();
    let closed = Instant::now();
    match process.next_output(closed + AFTER_CLOSE_WAIT).await {
        Some(Output::Line { bytes, at }) => TurnAnswer::Unflushed {
            after_close_ms: ms_between(closed, at),
            line: excerpt(&bytes, EXCERPT_CHARS),
        },
        _ => TurnAnswer::NoAnswer,
    }
}

fn is_ready(line: &[u8]) -> bool {
    matches!(decode_bot_message(line), Ok(BotMessage::Ready { .. }))
}

/// Milliseconds, to the microsecond.
fn ms_between(from: Instant, to: Instant) -> f64 {
    to.saturating_duration_since(from).as_micros() as f64 / 1000.0
}
