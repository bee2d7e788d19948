//! `play`: a person's seat. A person takes a seat against any bot, and the game is
//! played by `referee::play_set` like every other game: the same rules checks, the same
//! log (named as `hus match` names its logs, replayable by `hus replay`).
//!
//! The seat ([`PersonSeat`], in `seat.rs`) is a [`referee::Connect`] whose links are
//! in-memory duplex streams: the referee drives it through the same `BotProcess` as a
//! bot's pipes, and at the other end ([`SeatEnd`]) a user interface speaks protocol v1
//! exactly as a bot does. [`run_play`] (`hus play BOT`) puts the terminal there
//! ([`Terminal`], in `terminal.rs`): boards drawn and moves described as `hus replay`
//! draws and describes them, a move typed as a pit number; with `--web`,
//! [`web::run`] puts a browser page there instead (`web.rs`): the replay viewer's board,
//! served on loopback, a move played by clicking a pit.
//!
//! The person plays on a time control of their own ([`referee::Entrant::time`]; no
//! limit unless `--my-time`), the bot on the set's.

#![deny(missing_docs)]

mod args;
mod seat;
mod terminal;
pub mod web;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result};
use referee::{BotSpec, BySide, Entrant, Limits, Lineup, LogWriter, Side};

pub use args::{First, PlayArgs, PlayConfig, NO_LIMIT};
pub use seat::{PersonSeat, SeatEnd};
pub use terminal::{stdin_lines, InputLine, Terminal, UiEnd};

/// The command the log's header shows for a person's seat.
pub const PERSON_COMMAND: &str = "person";

/// `hus play BOT`: a person plays a set against a bot in the terminal. Exit 0 when the
/// set is played to its end, 130 when the person stops it (Ctrl-C, Ctrl-D, `q`, or
/// SIGTERM): the log then ends with `aborted`, as `hus match`'s does.
pub fn run_play(args: &PlayArgs) -> Result<ExitCode> {
    let config = PlayConfig::from_args(args)?;
    if args.web {
        return web::run(config, args.listen.as_deref());
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async move {
        tokio::spawn(play_in_terminal(config))
            .await
            .context("the set's task failed")?
    })
}

/// The two entrants of a `hus play` set, in side order, and the log: the bot's stderr
/// beside the log as `hus match` keeps it; the person's seat has none.
pub struct Seating {
    /// Side A's and side B's lineups.
    pub lineups: [Lineup; 2],
    /// The log, already created.
    pub log: LogWriter,
    /// The bot's stderr file.
    pub stderr: PathBuf,
}

/// Seats the person (through `seat`) and the bot on the sides `config` asks for, and
/// creates the log, named as `hus match` names its logs.
pub fn seat(config: &PlayConfig, seat: Arc<PersonSeat>) -> Result<Seating> {
    let person = config.person_side();
    let mut names = BySide::<String>::default();
    names[person] = referee::sanitize(&config.name);
    names[person.other()] = bot_short_name(&config.bot);
    let stem = referee::log_stem(config.set.seed, names.into_array());
    let (log, stem) = LogWriter::create(&config.log_dir, &stem)?;
    let stderr = config
        .log_dir
        .join(format!("{stem}.{}.stderr", person.other().lower()));
    let bot = Entrant::Process {
        spec: config.bot.clone(),
        stderr: stderr.clone().into(),
        limits: Limits::default(),
        version: None,
    };
    let me = Entrant::Link {
        command: PERSON_COMMAND.to_string(),
        connect: seat,
        time: Some(config.my_time),
    };
    let lineups = match person {
        Side::A => [Lineup::from(me), Lineup::from(bot)],
        Side::B => [Lineup::from(bot), Lineup::from(me)],
    };
    Ok(Seating {
        lineups,
        log,
        stderr,
    })
}

/// The bot's name in the log's file name and on the board: `random` for the random
/// mover, else its program's (as `hus match`).
pub(crate) fn bot_short_name(spec: &BotSpec) -> String {
    if spec.argv.get(1).map(String::as_str) == Some("random-bot") {
        "random".to_string()
    } else {
        spec.short_name()
    }
}

async fn play_in_terminal(config: PlayConfig) -> Result<ExitCode> {
    let (person_seat, ends) = PersonSeat::new("terminal", &config.name);
    let Seating {
        lineups,
        mut log,
        stderr,
    } = seat(&config, Arc::new(person_seat))?;
    let mut terminal = Terminal {
        name: config.name.clone(),
        bot: bot_short_name(&config.bot),
        style: referee::Style {
            color: config.color,
        },
        out: std::io::stdout(),
    };
    let mut input = stdin_lines();
    let mut ui = tokio::spawn(async move { terminal.run(ends, &mut input).await });
    let referee_name = referee::referee_version();
    let mut set = Box::pin(referee::play_set(
        &config.set,
        lineups.into(),
        &referee_name,
        &mut log,
    ));
    let stop = referee::stop_signal();
    tokio::pin!(stop);
    let mut ui_end = None;
    let mut open_seat = None;
    let outcome = loop {
        tokio::select! {
            result = &mut set => break Ok(result),
            signal = &mut stop => break Err(format!("stopped by {signal}")),
            end = &mut ui, if ui_end.is_none() => match end {
                Ok((UiEnd::Quit(why), seat)) => {
                    open_seat = seat;
                    break Err(why);
                }
                other => ui_end = Some(other),
            },
        }
    };
    // Dropping the set's future drops the bot's process (its process group is killed),
    // and only then the person's seat: closed first, it would be a disconnect.
    drop(set);
    drop(open_seat);
    let result = match outcome {
        Ok(result) => result,
        Err(reason) => {
            ui.abort();
            log.end_aborted(reason.clone());
            eprintln!("hus play: {reason}; {}", log.stopped_words());
            return Ok(ExitCode::from(130));
        }
    };
    match result {
        Ok(_) => {
            if ui_end.is_none() {
                // The terminal prints the last result and the set's end first.
                let _ = ui.await;
            }
            println!(
                "the log: {} (hus replay {} --game 1 shows it move by move)",
                log.path().display(),
                log.path().display()
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            ui.abort();
            if e.nothing_played() {
                log.discard_unstarted(&[stderr]);
                return Err(
                    anyhow::Error::new(e).context("no game was played and no log was written")
                );
            }
            Err(anyhow::Error::new(e).context(format!(
                "the set did not finish; the log {} is incomplete",
                log.path().display()
            )))
        }
    }
}
