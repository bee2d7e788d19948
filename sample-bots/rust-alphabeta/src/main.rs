//! `alphabeta-bot`: a sample Hus bot in Rust, and a starting point for your own.
//!
//! Run it from the repository root with
//!
//! ```text
//! cargo run --release -p alphabeta-bot
//! ```
//!
//! and let the referee play it, for instance against the Python greedy bot:
//!
//! ```text
//! cargo build --release -p alphabeta-bot
//! hus match "target/release/alphabeta-bot" "python3 sample-bots/python/greedy_bot.py"
//! ```
//!
//! # How it is built
//!
//! - **Talking to the referee** (this file). The `protocol` crate of this workspace
//!   reads one referee line at a time ([`protocol::read_referee_line`]), decodes it
//!   ([`protocol::decode_referee_message`], which ignores unknown fields and turns
//!   unknown message types into `Unknown`) and writes and flushes our answers
//!   ([`protocol::write_message`]). We answer `hello` with `ready` and every `turn`
//!   with `move`, say nothing to anything else, and exit on `bye` or at the end of
//!   stdin. Everything for humans goes to stderr: one line per move with the depth
//!   reached, the score and the node count.
//! - **The rules** are not reimplemented: the `engine` crate (the referee's own) plays
//!   the moves. `hello` names the preset and the row width; every `turn` shows both
//!   sides' pits in their owners' numbering, which is exactly what [`engine::Setup`]
//!   takes, so we build the position with ourselves as `Player::Zero`, to move.
//! - **Never lose by a fault.** If anything about a turn looks wrong (a position the
//!   engine rejects, legal pits that differ from the engine's, a turn before `hello`),
//!   the bot logs it and plays the first pit of the turn's `legal` list. It never sends
//!   a pit that is not in `legal`, and it answers well within `time_ms`.
//! - **The search** (`search.rs`): negamax alpha-beta with iterative deepening, best
//!   moves of earlier iterations searched first, then captures. The evaluation is the
//!   seed balance; finished games are scored by the engine's own end and scoring rules.
//!   The repetition and 200-ply rules are ignored inside the search.
//! - **Time.** Per move the search gets a third of `time_ms` minus 5 ms (at least 1 ms;
//!   with a chess clock, a twentieth of the clock plus most of the increment). It reads
//!   the clock every few hundred nodes, and when time is up it plays the best move of
//!   the last depth it completed.
//!
//! # Options
//!
//! - `--first-legal`: answer every turn at once with the first legal pit, no search
//!   (for throughput tests of the referee; accepts any rules).
//! - `--depth N`: search exactly N plies deep instead of by time (for tests). The bot
//!   still stops at three quarters of `time_ms`, so it never loses on time.
//! - `--name NAME`: the name sent in `ready` (default `alphabeta`).
//!
//! To write your own bot, copy this crate and change `search.rs`: a better evaluation
//! (seeds that are exposed to capture, mobility), a transposition table that also
//! stores scores, or thinking on the opponent's time are the obvious next steps.

use std::io::{self, BufRead, Write};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use engine::{AnyPosition, Board, Player, Preset, Rules, Setup};
use protocol::{
    decode_referee_message, read_referee_line, write_message, BotMessage, RefereeMessage, Turn,
};
use serde_json::Value;

use alphabeta_bot::{AnySearcher, Limits, MAX_DEPTH};

const USAGE: &str = "usage: alphabeta-bot [--first-legal] [--depth N] [--name NAME]";

/// `time_ms` values above this (about 2.8 hours) are treated as this, so that no
/// deadline arithmetic can overflow.
const MAX_TIME_MS: u64 = 10_000_000;

/// The command-line options.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Options {
    first_legal: bool,
    depth: Option<u32>,
    name: String,
}

fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Option<Options>, String> {
    let mut options = Options {
        first_legal: false,
        depth: None,
        name: "alphabeta".to_string(),
    };
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--first-legal" => options.first_legal = true,
            "--depth" => {
                let value = args.next().ok_or("--depth needs a number")?;
                let depth: u32 = value
                    .parse()
                    .map_err(|_| format!("--depth {value:?} is not a number"))?;
                if !(1..=MAX_DEPTH).contains(&depth) {
                    return Err(format!("--depth must be 1 to {}", MAX_DEPTH));
                }
                options.depth = Some(depth);
            }
            "--name" => options.name = args.next().ok_or("--name needs a name")?,
            "-h" | "--help" => return Ok(None),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(Some(options))
}

fn main() -> ExitCode {
    let options = match parse_args(std::env::args().skip(1)) {
        Ok(Some(options)) => options,
        Ok(None) => {
            eprintln!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("alphabeta-bot: {message}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let mut bot = Bot::new(options);
    let outcome = bot.run(&mut io::stdin().lock(), &mut io::stdout().lock());
    match outcome {
        Ok(End::Finished) => ExitCode::SUCCESS,
        Ok(End::Refused(why)) => {
            bot.log(&format!("refusing to play: {why}"));
            ExitCode::from(2)
        }
        Err(e) => {
            bot.log(&format!("cannot write to the referee: {e}"));
            ExitCode::FAILURE
        }
    }
}

/// Why [`Bot::run`] returned.
#[derive(Debug, PartialEq, Eq)]
enum End {
    /// `bye` or the end of stdin.
    Finished,
    /// `hello` announced rules the engine does not know.
    Refused(String),
}

/// What to do after a message.
enum Next {
    Read,
    Stop(End),
}

struct Bot {
    options: Options,
    /// The rules from `hello`; `None` before it.
    rules: Option<Rules>,
    /// `Some(increment_ms)` when `hello` announced a chess clock.
    clock_increment: Option<u64>,
    /// Created at `hello` (not in `--first-legal` mode).
    searcher: Option<AnySearcher>,
}

impl Bot {
    fn new(options: Options) -> Bot {
        Bot {
            options,
            rules: None,
            clock_increment: None,
            searcher: None,
        }
    }

    fn log(&self, message: &str) {
        eprintln!("[{}] {message}", self.options.name);
    }

    /// Reads the referee's lines until `bye`, the end of stdin or a refusal. Only
    /// failing to write is an error: a line we cannot read is logged and skipped.
    fn run(&mut self, input: &mut impl BufRead, output: &mut impl Write) -> io::Result<End> {
        loop {
            let line = match read_referee_line(input) {
                Ok(Some(line)) => line,
                Ok(None) => return Ok(End::Finished),
                Err(e) if e.kind() == io::ErrorKind::InvalidData => {
                    self.log(&format!("skipping a line: {e}"));
                    continue;
                }
                Err(e) => {
                    self.log(&format!("stopping: stdin: {e}"));
                    return Ok(End::Finished);
                }
            };
            // The referee's clock is already running: start ours before parsing.
            let received = Instant::now();
            if let Next::Stop(end) = self.handle(&line, received, output)? {
                return Ok(end);
            }
        }
    }

    fn handle(
        &mut self,
        line: &str,
        received: Instant,
        output: &mut impl Write,
    ) -> io::Result<Next> {
        match decode_referee_message(line) {
            Ok(RefereeMessage::Turn(turn)) => {
                let (pit, note) = self.choose(&turn, received);
                write_message(output, &BotMessage::Move { pit })?;
                // Logged after the move is sent: the time is the referee's clock's.
                if let Some(note) = note {
                    self.log(&note);
                }
                Ok(Next::Read)
            }
            Ok(RefereeMessage::Hello(_)) => self.hello(line, output),
            Ok(RefereeMessage::Bye(_)) => Ok(Next::Stop(End::Finished)),
            Ok(RefereeMessage::Game(_) | RefereeMessage::Result(_) | RefereeMessage::Unknown) => {
                Ok(Next::Read)
            }
            Err(e) => self.salvage(line, &e.to_string(), output),
        }
    }

    /// `hello`: read the preset and the width (from the raw JSON, so that a preset
    /// this build does not know is named in the refusal), then answer `ready`.
    fn hello(&mut self, line: &str, output: &mut impl Write) -> io::Result<Next> {
        if !self.options.first_legal {
            match read_rules(line) {
                Ok((rules, clock_increment)) => {
                    self.rules = Some(rules);
                    self.clock_increment = clock_increment;
                    self.searcher.get_or_insert_with(AnySearcher::default);
                    self.log(&format!("playing {rules}"));
                }
                Err(why) => return Ok(Next::Stop(End::Refused(why))),
            }
        }
        let name = Some(self.options.name.clone());
        write_message(output, &BotMessage::Ready { name })?;
        Ok(Next::Read)
    }

    /// A line that did not decode. Whatever it is, a `turn` must still be answered.
    fn salvage(&mut self, line: &str, error: &str, output: &mut impl Write) -> io::Result<Next> {
        let value: Value = serde_json::from_str(line).unwrap_or(Value::Null);
        match value["type"].as_str() {
            Some("turn") => {
                // The first legal pit if there is one; 0 is a guess, but silence is a
                // certain time-out.
                let pit = value["legal"][0].as_u64().unwrap_or(0);
                write_message(output, &BotMessage::Move { pit })?;
                self.log(&format!(
                    "a turn I could not decode ({error}): played pit {pit}"
                ));
                Ok(Next::Read)
            }
            Some("hello") => self.hello(line, output),
            Some("bye") => Ok(Next::Stop(End::Finished)),
            _ => {
                self.log(&format!("ignoring a line I could not decode: {error}"));
                Ok(Next::Read)
            }
        }
    }

    /// The pit to play, and a line for the log.
    fn choose(&mut self, turn: &Turn, received: Instant) -> (u64, Option<String>) {
        let Some(&first) = turn.legal.first() else {
            let note = format!("turn {} of game {} lists no legal pit", turn.ply, turn.game);
            return (0, Some(note));
        };
        let first = u64::from(first);
        if self.options.first_legal {
            return (first, None);
        }
        let (Some(rules), Some(searcher)) = (self.rules, self.searcher.as_mut()) else {
            return (first, Some("a turn before hello: first legal pit".into()));
        };
        let pos = match position_of(rules, turn) {
            Ok(pos) => pos,
            Err(why) => return (first, Some(format!("{why}: first legal pit"))),
        };
        let time_ms = turn.time_ms.min(MAX_TIME_MS);
        let clock = self.clock_increment.or(turn.opponent_time_ms.map(|_| 0));
        let limits = match self.options.depth {
            Some(depth) => Limits::depth(depth, received + hard_limit(time_ms)),
            None => Limits::timed(received, move_budget(time_ms, clock)),
        };
        match searcher.search(&pos, &limits) {
            Some(report) => {
                let note = format!(
                    "game {} ply {}: pit {} depth {} score {} nodes {} in {:.1} ms",
                    turn.game,
                    turn.ply,
                    report.best,
                    report.depth,
                    report.score,
                    report.nodes,
                    report.elapsed.as_secs_f64() * 1000.0
                );
                (report.best as u64, Some(note))
            }
            None => (
                first,
                Some("the engine finds no move: first legal pit".into()),
            ),
        }
    }
}

/// The rules announced by a `hello` line, and the clock increment in clock mode.
fn read_rules(line: &str) -> Result<(Rules, Option<u64>), String> {
    let hello: Value = serde_json::from_str(line).map_err(|e| format!("hello is not JSON: {e}"))?;
    let rules = &hello["rules"];
    let preset: Preset = rules["preset"]
        .as_str()
        .ok_or("hello has no string rules.preset")?
        .parse()
        .map_err(|e: engine::RulesError| e.to_string())?;
    let width = rules["width"]
        .as_u64()
        .ok_or("hello has no integer rules.width")?;
    let rules = Rules::new(preset, usize::try_from(width).unwrap_or(usize::MAX))
        .map_err(|e| e.to_string())?;
    let clock_increment = match hello["time"]["mode"].as_str() {
        Some("clock") => Some(hello["time"]["increment_ms"].as_u64().unwrap_or(0)),
        _ => None,
    };
    Ok((rules, clock_increment))
}

/// The engine position of a turn, with us as `Player::Zero` to move, checked against
/// the turn's `legal` list.
fn position_of(rules: Rules, turn: &Turn) -> Result<AnyPosition, String> {
    let side = |name: &str, pits: &[u32]| -> Result<Vec<u8>, String> {
        pits.iter()
            .map(|&seeds| {
                u8::try_from(seeds).map_err(|_| format!("{name}: a pit holds {seeds} seeds"))
            })
            .collect()
    };
    let setup = Setup {
        rules,
        pits: [side("you", &turn.you)?, side("opponent", &turn.opponent)?],
        to_move: Player::Zero,
    };
    let pos = AnyPosition::try_from(&setup).map_err(|e| e.to_string())?;
    let mut legal = 0u64;
    for &pit in &turn.legal {
        if pit as usize >= rules.pits() {
            return Err(format!("legal pit {pit} does not exist"));
        }
        legal |= 1 << pit;
    }
    if legal != pos.legal_moves().mask() {
        return Err(format!(
            "the referee's legal pits {:?} differ from the engine's {:?}",
            turn.legal,
            pos.legal_moves().collect::<Vec<_>>()
        ));
    }
    Ok(pos)
}

/// How long to think about a move that must be answered within `time_ms`:
/// a third, minus 5 ms for reading, writing and the operating system, and at least
/// 1 ms. With a chess clock (`clock` = the increment), a twentieth of the clock plus
/// three quarters of the increment, at most a third. Under 10 ms there is no time to
/// think: a quarter of it, so that the search gives up before it starts.
fn move_budget(time_ms: u64, clock: Option<u64>) -> Duration {
    if time_ms < 10 {
        return Duration::from_micros(time_ms * 250);
    }
    let share = match clock {
        None => time_ms / 3,
        Some(increment) => (time_ms / 20 + increment.min(MAX_TIME_MS) * 3 / 4).min(time_ms / 3),
    };
    Duration::from_millis(share.saturating_sub(5).max(1))
}

/// With `--depth`: the search stops anyway at three quarters of `time_ms`, minus 5 ms.
fn hard_limit(time_ms: u64) -> Duration {
    Duration::from_micros(time_ms * 750).saturating_sub(Duration::from_millis(5))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Result<Option<Options>, String> {
        parse_args(list.iter().map(|s| s.to_string()))
    }

    #[test]
    fn options() {
        let options = args(&["--depth", "4", "--name", "x", "--first-legal"])
            .expect("valid")
            .expect("not --help");
        assert_eq!(options.depth, Some(4));
        assert_eq!(options.name, "x");
        assert!(options.first_legal);
        assert!(args(&["--depth"]).is_err());
        assert!(args(&["--depth", "0"]).is_err());
        assert!(args(&["--depth", "x"]).is_err());
        assert!(args(&["--frist-legal"]).is_err());
        assert_eq!(args(&["--help"]), Ok(None));
    }

    #[test]
    fn budgets_stay_well_inside_the_time() {
        assert_eq!(move_budget(100, None), Duration::from_millis(28));
        assert_eq!(move_budget(1000, None), Duration::from_millis(328));
        assert_eq!(move_budget(12, None), Duration::from_millis(1));
        assert_eq!(move_budget(4, None), Duration::from_millis(1));
        assert_eq!(move_budget(0, None), Duration::ZERO);
        assert_eq!(move_budget(60_000, Some(0)), Duration::from_millis(2995));
        assert_eq!(move_budget(1000, Some(1000)), Duration::from_millis(328));
        for time_ms in 0..2000 {
            for clock in [None, Some(0), Some(100)] {
                let budget = move_budget(time_ms, clock);
                assert!(budget.as_micros() <= u128::from(time_ms) * 1000 / 3 + 1000);
            }
            assert!(hard_limit(time_ms).as_micros() < u128::from(time_ms.max(1)) * 1000);
        }
    }

    #[test]
    fn hello_rules() {
        let hello = r#"{"type":"hello","rules":{"preset":"mancala-world","width":12},"time":{"mode":"clock","base_ms":1,"increment_ms":50}}"#;
        let (rules, clock) = read_rules(hello).expect("valid hello");
        assert_eq!(rules, Rules::new(Preset::MancalaWorld, 12).expect("valid"));
        assert_eq!(clock, Some(50));
        let unknown = read_rules(r#"{"rules":{"preset":"oware","width":8}}"#);
        assert!(unknown.expect_err("unknown preset").contains("oware"));
        let wide = read_rules(r#"{"rules":{"preset":"hus","width":32}}"#);
        assert_eq!(wide.map(|(r, _)| r.width()), Ok(32));
        let too_wide = read_rules(r#"{"rules":{"preset":"hus","width":33}}"#);
        assert!(too_wide.expect_err("too wide").contains("33"));
    }

    fn turn(you: Vec<u32>, opponent: Vec<u32>, legal: Vec<u32>) -> Turn {
        Turn {
            game: 1,
            ply: 0,
            you,
            opponent,
            legal,
            last: None,
            time_ms: 100,
            opponent_time_ms: None,
        }
    }

    #[test]
    fn positions_are_checked_against_legal() {
        let rules = Rules::default();
        let start = AnyPosition::start(rules);
        let pits = start.pits(Player::Zero);
        let to_u32 = |v: &[u8]| v.iter().map(|&s| u32::from(s)).collect::<Vec<_>>();
        let legal: Vec<u32> = (4..16).collect();
        let good = turn(to_u32(&pits), to_u32(&pits), legal.clone());
        assert_eq!(position_of(rules, &good), Ok(start));
        let short = turn(to_u32(&pits[1..]), to_u32(&pits), legal.clone());
        assert!(position_of(rules, &short).is_err());
        let wrong = turn(to_u32(&pits), to_u32(&pits), vec![4, 5]);
        assert!(position_of(rules, &wrong).is_err());
        let out = turn(to_u32(&pits), to_u32(&pits), vec![40]);
        assert!(position_of(rules, &out).is_err());
        let heavy = turn(vec![300; 16], to_u32(&pits), legal);
        assert!(position_of(rules, &heavy).is_err());
        // A long board: width 32, the wide board type.
        let rules = Rules::new(Preset::Rulebook, 32).expect("valid");
        let start = AnyPosition::start(rules);
        let pits = to_u32(&start.pits(Player::Zero));
        let legal: Vec<u32> = (16..64).collect();
        let wide = position_of(rules, &turn(pits.clone(), pits, legal));
        assert!(matches!(wide, Ok(AnyPosition::Wide(_))));
        assert_eq!(wide, Ok(start));
    }

    #[test]
    fn a_bad_turn_gets_the_first_legal_pit() {
        let mut bot = Bot::new(Options {
            first_legal: false,
            depth: None,
            name: "t".into(),
        });
        let mut out = Vec::new();
        let hello = r#"{"type":"hello","rules":{"preset":"hus","width":8}}"#;
        assert!(matches!(bot.hello(hello, &mut out), Ok(Next::Read)));
        let bad = turn(vec![2; 16], vec![2; 16], vec![3, 9]);
        assert_eq!(bot.choose(&bad, Instant::now()).0, 3);
    }
}
