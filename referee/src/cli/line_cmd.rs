//! `hus line`: plays a line of moves from a position and tells, move by move, what the
//! referee's engine makes of it: relays, captures, seeds sown, the 3000-seed stop, the
//! position after each move, and the end of the game with the history of the line
//! taken into account (repetition, the 200-ply rule). It answers a bot author's rules
//! questions in any language, in words or as JSON.
//!
//! Every move goes through [`engine::Game`], the same judge as a real game; the words
//! and boards are those of `hus replay` (`replay::text`).

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Context, Result};
use engine::{AnyPosition, Board, EndReason, Event, Game, PlayError, Player, Preset, Rules};
use serde::Serialize;

use crate::cli::args::LineArgs;
use crate::replay::text::{self, Marks, Style};

/// The whole line, as `--json` prints it (README, "Write your own bot").
#[derive(Debug, Serialize)]
struct LineReport {
    start: String,
    moves: Vec<MoveOut>,
    plies: u32,
    end: Option<EndOut>,
    to_move: usize,
    legal: Vec<usize>,
    quiet_plies: u32,
    error: Option<ErrorOut>,
}

#[derive(Debug, Serialize)]
struct MoveOut {
    ply: u32,
    player: usize,
    pit: usize,
    sown: u32,
    events: Vec<Event>,
    truncated: bool,
    position: String,
    quiet_plies: u32,
    /// Plies played when this position occurred before in the line (0: the start).
    repeats: Option<u32>,
}

#[derive(Debug, Serialize)]
struct EndOut {
    reason: EndReason,
    winner: Option<usize>,
    double: bool,
    points: [u32; 2],
    seeds: [u32; 2],
}

#[derive(Debug, Serialize)]
struct ErrorOut {
    ply: u32,
    pit: usize,
    message: String,
}

/// `hus line`: plays the pits from the position; exit 0 when every pit was played, 1
/// when one could not be (illegal, or the game was over), 2 for bad arguments.
pub fn run(args: &LineArgs) -> Result<ExitCode> {
    let start = start_position(args)?;
    let report = play_line(start, &args.pits);
    let mut out = std::io::stdout().lock();
    if args.json {
        let json = serde_json::to_string(&report).context("cannot encode the line as JSON")?;
        writeln!(out, "{json}")?;
    } else {
        out.write_all(words(&report, start, args).as_bytes())?;
    }
    out.flush()?;
    Ok(if report.error.is_some() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn start_position(args: &LineArgs) -> Result<AnyPosition> {
    if let Some(text) = &args.position {
        return text
            .parse()
            .with_context(|| format!("invalid --position {text:?}"));
    }
    let preset: Preset = args.rules.parse().context("invalid --rules")?;
    let rules = Rules::new(preset, args.width).context("invalid --width")?;
    Ok(AnyPosition::start(rules))
}

/// Plays `pits` from `start` as one game, stopping at the first pit that cannot be
/// played.
fn play_line(start: AnyPosition, pits: &[usize]) -> LineReport {
    let mut game = Game::new(start);
    // Every position of the line, the start first: only to say where a repeated
    // position occurred before; whether it ends the game is the engine's judgement.
    let mut seen = vec![start];
    let mut moves = Vec::new();
    let mut error = None;
    for &pit in pits {
        let ply = game.plies();
        let player = game.position().to_move();
        match game.play(pit) {
            Ok(report) => {
                let after = *game.position();
                let repeats = seen.iter().position(|p| *p == after).map(|i| i as u32);
                seen.push(after);
                moves.push(MoveOut {
                    ply,
                    player: player.index(),
                    pit,
                    sown: report.summary.sown,
                    events: report.events,
                    truncated: report.summary.truncated,
                    position: after.to_string(),
                    quiet_plies: game.quiet_plies(),
                    repeats,
                });
            }
            Err(e) => {
                let message = match e {
                    PlayError::Illegal(illegal) => illegal.to_string(),
                    PlayError::GameOver => "the game is already over".to_string(),
                };
                error = Some(ErrorOut { ply, pit, message });
                break;
            }
        }
    }
    let position = *game.position();
    let end = game.end().map(|end| EndOut {
        reason: end.reason,
        winner: end.winner.map(Player::index),
        double: end.double,
        points: game.rules().points(end, &position),
        seeds: Player::BOTH.map(|p| position.seeds_of(p)),
    });
    LineReport {
        start: start.to_string(),
        moves,
        plies: game.plies(),
        legal: if end.is_some() {
            Vec::new()
        } else {
            position.legal_moves().collect()
        },
        end,
        to_move: position.to_move().index(),
        quiet_plies: game.quiet_plies(),
        error,
    }
}

/// The line in words: each move and the position after it, then the end (or where the
/// game stands).
fn words(report: &LineReport, start: AnyPosition, args: &LineArgs) -> String {
    let style = Style { color: false };
    let names = [String::new(), String::new()];
    let mut s = format!("start: {}\n", report.start);
    if args.boards {
        text::draw_board(&mut s, &start, &names, &Marks::default(), false, &style);
    }
    let shown = args
        .last
        .map_or(0, |n| report.moves.len().saturating_sub(n));
    if shown > 0 {
        s.push_str(&format!(
            "... {} not shown (--last {})\n",
            text::plural(shown as u64, "move", "moves"),
            args.last.unwrap_or_default()
        ));
    }
    for (i, m) in report.moves.iter().enumerate().skip(shown) {
        s.push_str(&format!(
            "ply {}: player {} plays {}\n",
            m.ply,
            m.player,
            text::report_words(m.pit as u32, m.sown, &m.events, m.truncated)
        ));
        s.push_str(&format!("  {}\n", m.position));
        if args.boards {
            let after: AnyPosition = match m.position.parse() {
                Ok(p) => p,
                Err(_) => continue,
            };
            let mover = Player::from_index(m.player).unwrap_or(Player::Zero);
            let over = report.end.is_some() && i + 1 == report.moves.len();
            text::draw_board(
                &mut s,
                &after,
                &names,
                &Marks::of(mover, m.pit, &m.events),
                over,
                &style,
            );
        }
    }
    if let Some(e) = &report.error {
        s.push_str(&format!(
            "ply {}: pit {} cannot be played: {}\n",
            e.ply, e.pit, e.message
        ));
    }
    match &report.end {
        Some(end) => s.push_str(&end_words(report, end)),
        None => s.push_str(&format!(
            "not over after {}: player {} to move, legal pits {}; {} in a row without a capture\n",
            text::plural(report.plies, "ply", "plies"),
            report.to_move,
            report
                .legal
                .iter()
                .map(|p| p.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            text::plural(report.quiet_plies, "ply", "plies"),
        )),
    }
    s
}

fn end_words(report: &LineReport, end: &EndOut) -> String {
    let after = text::plural(report.plies, "ply", "plies");
    let mover = report.to_move;
    let why = match end.reason {
        EndReason::NoMoves if end.double => {
            format!("player {mover}, to move, has no seeds at all")
        }
        EndReason::NoMoves => format!("player {mover}, to move, has no pit with 2 or more seeds"),
        EndReason::Repetition => {
            let before =
                report
                    .moves
                    .last()
                    .and_then(|m| m.repeats)
                    .map_or_else(String::new, |k| match k {
                        0 => " (it was the start)".to_string(),
                        k => format!(" (it was the position after ply {})", k - 1),
                    });
            format!("the position, player {mover} to move, occurred before{before}")
        }
        EndReason::NoCaptureLimit => format!(
            "{} plies in a row without a capture",
            engine::NO_CAPTURE_LIMIT
        ),
        EndReason::Fault => end.reason.to_string(),
    };
    let result = match end.winner {
        Some(w) if end.double => format!("player {w} wins double"),
        Some(w) if end.reason == EndReason::NoMoves => format!("player {w} wins"),
        Some(w) => format!(
            "player {w} wins, {} seeds to {}",
            end.seeds[w],
            end.seeds[1 - w]
        ),
        None => format!("a draw, {} seeds each", end.seeds[0]),
    };
    format!(
        "game over after {after}, by {}: {why}; {result}; points {}-{} (player 0-player 1)\n",
        end.reason, end.points[0], end.points[1]
    )
}
