//! `hus check-bot BOT`: runs a bot through the protocol and tells its author, in plain
//! words, what it does wrong and how to fix it.
//!
//! Two stages, then a report:
//! 1. [`probe`] talks to one process of the bot directly through `BotProcess`: `hello`,
//!    then one `turn`. When an answer does not come in time it closes the bot's stdin
//!    and watches whether the answer arrives then: a bot that writes its lines without
//!    flushing them delivers them only when it exits. A bot that answered both is
//!    also watched for exiting when its stdin closes.
//! 2. A set against the built-in random mover (`hus random-bot`), played by
//!    `play_set`, the code path of `hus match`: first and second mover, the opponent's
//!    moves, captures, results, restarts after faults, `bye`. Its records go to a log.
//!
//! [`diagnose`] turns what both stages saw into one line per check. The exit status is
//! 0 without problems (warnings allowed), 1 with problems, and 2 (an error from
//! [`run`]) for bad arguments or a bot command that cannot be started at all.

mod diagnose;
mod probe;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use engine::{Preset, Rules};

use crate::cli::args::CheckBotArgs;
use crate::config::lots;
use crate::config::{
    check_positive, fresh_seed, parse_duration, sanitize, BotSpec, SetConfig, TimeControl,
};
use crate::limits::Limits;
use crate::names::referee_version;
use crate::records::{FaultKind, Record, UploadedVersion};
use crate::report::LogWriter;
use crate::set::{hello_line, play_set, Entrant, Lineup, RecordSink, WriteError};
use crate::side::Side;
use crate::stop::stop_signal;

use diagnose::Mark;

/// Most games a check plays.
const MAX_GAMES: u32 = 1000;

/// What [`check_bot`] checks: a bot, under its limits, in one set against the random
/// mover at these settings (`hus check-bot`'s arguments, checked; or a league's rules,
/// width, time control, games and seed, for an uploaded version).
#[derive(Clone, Debug)]
pub struct CheckConfig {
    /// The checked bot's command: bot A of the set.
    pub bot: BotSpec,
    /// Its working directory and sandbox. A sandbox here must have been probed
    /// ([`crate::Sandbox::probe`]) by the caller: a machine that cannot sandbox is the
    /// caller's error, never a check without isolation.
    pub limits: Limits,
    /// The built-in random mover's command ([`CheckConfig::random_mover`]): bot B,
    /// which runs as is.
    pub opponent: BotSpec,
    /// The set: rules, width, time control (per move or a clock), games, seed, the
    /// time to `ready`. No openings, no SPRT, no early stop.
    pub set: SetConfig,
    /// The uploaded version the checked bot is, which the set's log names
    /// (`header.bots[0].version`); `None` for `hus check-bot`.
    pub version: Option<UploadedVersion>,
}

impl CheckConfig {
    fn from_args(args: &CheckBotArgs) -> Result<CheckConfig> {
        let bot = BotSpec::parse(&args.bot)?;
        if let Some(dir) = &args.bot_dir {
            if !dir.is_dir() {
                bail!("--bot-dir {} is not a directory", dir.display());
            }
        }
        let (sandbox, bot) = args
            .sandbox
            .sandbox_for(&bot, args.bot_dir.as_deref())
            .context("--sandbox")?;
        let limits = Limits {
            cwd: args.bot_dir.clone(),
            sandbox,
            ..Limits::default()
        };
        let preset: Preset = args.rules.parse().context("invalid --rules")?;
        let rules = Rules::new(preset, args.width).context("invalid --width")?;
        if !(1..=MAX_GAMES).contains(&args.games) {
            bail!("--games must be 1 to {MAX_GAMES}, got {}", args.games);
        }
        let move_time = check_positive(
            parse_duration(&args.move_time).context("invalid --move-time")?,
            "--move-time",
        )?;
        let ready_time = check_positive(
            parse_duration(&args.ready_time).context("invalid --ready-time")?,
            "--ready-time",
        )?;
        let seed = match args.seed {
            Some(seed) => seed,
            None => check_seed(fresh_seed(), args.games),
        };
        let exe = std::env::current_exe()
            .context("cannot find the hus binary itself (to run the random mover)")?;
        Ok(CheckConfig {
            bot,
            limits,
            opponent: CheckConfig::random_mover(&exe, seed),
            set: SetConfig {
                rules,
                games: args.games,
                seed,
                time: TimeControl::PerMove(move_time),
                ready_time,
                early_stop: false,
                openings: Vec::new(),
                sprt: None,
            },
            version: None,
        })
    }

    /// The built-in random mover of the `hus` binary at `exe`: `hus random-bot --seed
    /// SEED` (the log's header shows it so).
    pub fn random_mover(exe: &Path, seed: u64) -> BotSpec {
        BotSpec {
            command: format!("hus random-bot --seed {seed}"),
            argv: vec![
                exe.to_string_lossy().into_owned(),
                "random-bot".into(),
                "--seed".into(),
                seed.to_string(),
            ],
        }
    }

    /// The longest one move may take: the time per move, or with a clock the time on
    /// it when a game starts (the probe's first turn is given that much).
    fn move_time(&self) -> Duration {
        match self.set.time {
            TimeControl::PerMove(time) => time,
            TimeControl::Clock { base, .. } => base,
        }
    }

    /// The time control in the report's words: `1000 ms per move`, or `a clock of
    /// 60000 ms + 500 ms per move`.
    fn time_words(&self) -> String {
        match self.set.time {
            TimeControl::PerMove(time) => format!("{} ms per move", time.as_millis()),
            TimeControl::Clock { base, increment } => format!(
                "a clock of {} ms + {} ms per move",
                base.as_millis(),
                increment.as_millis()
            ),
        }
    }

    /// What a move's time is measured against, in the report's words: `the 1000 ms
    /// allowed`, or `the 60000 ms on its clock at the start`.
    fn allowance_words(&self) -> String {
        let ms = self.move_time().as_millis();
        match self.set.time {
            TimeControl::PerMove(_) => format!("the {ms} ms allowed"),
            TimeControl::Clock { .. } => format!("the {ms} ms on its clock at the start"),
        }
    }
}

/// From `start` on, the first seed whose lots make the checked bot (bot 0) move first
/// in one game and second in another, when there are two games or more: the seed of a
/// check, so that the bot is seen in both seats.
pub fn check_seed(start: u64, games: u32) -> u64 {
    if games < 2 {
        return start;
    }
    (start..start + 64)
        .find(|&seed| {
            let firsts = lots(seed, games);
            firsts.contains(&0) && firsts.contains(&1)
        })
        .unwrap_or(start)
}

/// Where the log and the stderr files go: `--log-dir`, kept, or a fresh temporary
/// directory, deleted at the end unless problems were found.
struct LogDir {
    path: PathBuf,
    temporary: bool,
}

impl LogDir {
    fn new(given: Option<&Path>) -> Result<LogDir> {
        if let Some(dir) = given {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create the log directory {}", dir.display()))?;
            return Ok(LogDir {
                path: dir.to_path_buf(),
                temporary: false,
            });
        }
        let base = std::env::temp_dir();
        for n in 0..1000 {
            let path = base.join(format!("hus-check-{}-{n}", std::process::id()));
            match std::fs::create_dir(&path) {
                Ok(()) => {
                    return Ok(LogDir {
                        path,
                        temporary: true,
                    })
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    return Err(e).with_context(|| {
                        format!("cannot create a temporary directory in {}", base.display())
                    })
                }
            }
        }
        bail!(
            "cannot find a free temporary directory name in {}",
            base.display()
        )
    }

    /// Deletes a temporary directory; a `--log-dir` is always kept.
    fn discard(&self) {
        if self.temporary {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

/// `check-DATE-TIME-SEED-NAME`, made unique in `dir` for the log and the stderr file.
fn free_stem(dir: &Path, seed: u64, bot: &BotSpec) -> String {
    let t = time::OffsetDateTime::now_utc();
    let stem = format!(
        "check-{:04}{:02}{:02}-{:02}{:02}{:02}-{seed}-{}",
        t.year(),
        t.month() as u8,
        t.day(),
        t.hour(),
        t.minute(),
        t.second(),
        sanitize(&bot.short_name())
    );
    (1..1000)
        .map(|n| {
            if n == 1 {
                stem.clone()
            } else {
                format!("{stem}-{n}")
            }
        })
        .find(|s| {
            !dir.join(format!("{s}.jsonl")).exists() && !dir.join(format!("{s}.a.stderr")).exists()
        })
        .unwrap_or(stem)
}

/// What the set against the random mover left behind.
pub struct SetEvidence {
    pub records: Vec<Record>,
    pub log: PathBuf,
}

/// Everything the check saw.
pub struct Evidence {
    pub probe: probe::Probe,
    /// `None` when the games were skipped (the bot cannot get through a first turn).
    pub set: Option<SetEvidence>,
    /// The bot's stderr file: the probe's process and every process of the set.
    pub stderr: PathBuf,
}

/// Sends every record to the log and keeps it for the diagnosis.
struct Collect<'a> {
    log: &'a mut LogWriter,
    records: Vec<Record>,
}

impl RecordSink for Collect<'_> {
    fn record(&mut self, record: &Record) -> Result<(), WriteError> {
        self.log.record(record)?;
        self.records.push(record.clone());
        Ok(())
    }
}

/// What [`check_bot`] found: the verdict, each check as `hus check-bot` prints it, and
/// what a bot's author needs to see of a rejection.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckVerdict {
    /// No check found a problem (warnings allowed): `hus check-bot` exits with 0.
    pub passed: bool,
    /// Every check, in the report's order, as `hus check-bot` prints it: its mark,
    /// title and summary on one line, then its indented details, each line ending in a
    /// newline.
    pub checks: Vec<String>,
    /// How many checks found a problem.
    pub problems: usize,
    /// How many checks warned.
    pub warnings: usize,
    /// The first problem's line (mark, title and summary), if any: why the bot failed
    /// when no fault says it (a bot that never answered `hello` plays no game).
    pub first_problem: Option<String>,
    /// The checked bot's first fault in the set against the random mover, if any.
    pub fault: Option<CheckFault>,
    /// The end of the checked bot's stderr (at most [`STDERR_EXCERPT`] bytes, whole
    /// characters); empty when it wrote nothing there.
    pub stderr: String,
    /// The set's log; `None` when the games were skipped (the bot could not get
    /// through its first turn).
    pub log: Option<PathBuf>,
    /// The checked bot's stderr file: the probe's process and every process of the set.
    pub stderr_file: PathBuf,
}

/// A fault of the checked bot, as the set's log has it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckFault {
    /// Its kind (PROTOCOL.md).
    pub kind: FaultKind,
    /// In plain words (the log's `detail`).
    pub detail: String,
}

/// The most bytes of the bot's stderr a [`CheckVerdict`] holds: its end.
pub const STDERR_EXCERPT: u64 = 4096;

/// Runs the whole check of `hus check-bot` on `config.bot`: the probe (one process,
/// `hello` and a first turn), then, when it can play, the set against the random mover
/// through [`play_set`], whose log and stderr files go to `log_dir` (which must
/// exist), and the diagnosis. `progress` is given each line `hus check-bot` prints
/// while it runs (a heading, then "playing N games ..."); its error stops the check.
///
/// An error is a check that could not run: the bot's command cannot be started at all
/// (its message says why), the log cannot be written, or the set broke off. For an
/// uploaded version that is a rejection too, with the error's message.
///
/// The future is `Send`: a server runs it on its runtime. Dropping it stops every bot
/// process it started.
pub async fn check_bot(
    config: &CheckConfig,
    log_dir: &Path,
    progress: &mut (dyn FnMut(&str) -> Result<()> + Send),
) -> Result<CheckVerdict> {
    let evidence = check(config, log_dir, progress).await?;
    let checks = diagnose::checks(config, &evidence);
    let problems = checks.iter().filter(|c| c.mark == Mark::Problem).count();
    let warnings = checks.iter().filter(|c| c.mark == Mark::Warning).count();
    let first_problem = checks.iter().find(|c| c.mark == Mark::Problem).map(|c| {
        let text = c.to_string();
        text.lines().next().unwrap_or_default().to_string()
    });
    let fault = evidence.set.as_ref().and_then(|set| {
        set.records.iter().find_map(|r| match r {
            Record::Fault(f) if f.bot == Side::A => Some(CheckFault {
                kind: f.kind,
                detail: f.detail.clone(),
            }),
            _ => None,
        })
    });
    Ok(CheckVerdict {
        passed: problems == 0,
        checks: checks.iter().map(|c| c.to_string()).collect(),
        problems,
        warnings,
        first_problem,
        fault,
        stderr: stderr_excerpt(&evidence.stderr),
        log: evidence.set.map(|set| set.log),
        stderr_file: evidence.stderr,
    })
}

/// The last [`STDERR_EXCERPT`] bytes of the file at `path` (none when there is no such
/// file: the bot wrote nothing), from the first whole character.
fn stderr_excerpt(path: &Path) -> String {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut file) = std::fs::File::open(path) else {
        return String::new();
    };
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let start = len.saturating_sub(STDERR_EXCERPT);
    let mut bytes = Vec::new();
    if file.seek(SeekFrom::Start(start)).is_err()
        || file.take(STDERR_EXCERPT).read_to_end(&mut bytes).is_err()
    {
        return String::new();
    }
    // A cut inside a character leaves up to three continuation bytes at the start.
    let skip = if start > 0 {
        bytes
            .iter()
            .take(3)
            .take_while(|&&b| b & 0xC0 == 0x80)
            .count()
    } else {
        0
    };
    String::from_utf8_lossy(&bytes[skip..]).into_owned()
}

/// `hus check-bot`: runs a bot through the protocol and explains what it does wrong.
pub fn run(args: &CheckBotArgs) -> Result<ExitCode> {
    let config = CheckConfig::from_args(args)?;
    if let Some(sandbox) = &config.limits.sandbox {
        // Before anything runs: a machine that cannot sandbox is an error, never a
        // check without isolation.
        sandbox
            .probe(&config.bot, &config.limits)
            .context("--sandbox")?;
    }
    let dir = LogDir::new(args.log_dir.as_deref())?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let mut progress = |line: &str| say(line);
    let outcome = runtime.block_on(async {
        tokio::select! {
            verdict = check_bot(&config, &dir.path, &mut progress) => Ok(verdict),
            signal = stop_signal() => Err(signal),
        }
    });
    let verdict = match outcome {
        Ok(Ok(verdict)) => verdict,
        Ok(Err(e)) => {
            dir.discard();
            return Err(e);
        }
        Err(signal) => {
            // The check's future is gone, and with it every bot process (dropping one
            // kills its process group).
            eprintln!("hus: check stopped by {signal}");
            dir.discard();
            return Ok(ExitCode::from(130));
        }
    };
    let mut report = String::from("\n");
    for check in &verdict.checks {
        report.push_str(check);
    }
    report.push_str(&format!(
        "\n{}, {}.\n",
        count(verdict.problems, "problem", "no problems"),
        count(verdict.warnings, "warning", "no warnings")
    ));
    let keep = !verdict.passed || !dir.temporary;
    if keep {
        if let Some(log) = &verdict.log {
            report.push_str(&format!("log: {}\n", log.display()));
        }
        report.push_str(&format!(
            "your bot's stderr: {}\n",
            verdict.stderr_file.display()
        ));
        if dir.temporary {
            report.push_str(&format!(
                "(kept in the temporary directory {}; delete it when you are done)\n",
                dir.path.display()
            ));
        }
    } else {
        dir.discard();
        report.push_str(&format!(
            "(the log was in the temporary directory {}, now deleted; --log-dir DIR keeps it)\n",
            dir.path.display()
        ));
    }
    say(&report)?;
    Ok(if verdict.passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Writes to stdout and flushes; a closed stdout is an error (which `main` treats as a
/// normal end), not a panic.
fn say(text: &str) -> Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .context("cannot write to stdout")
}

fn count(n: usize, what: &str, none: &str) -> String {
    match n {
        0 => none.to_string(),
        1 => format!("1 {what}"),
        n => format!("{n} {what}s"),
    }
}

async fn check(
    config: &CheckConfig,
    dir: &Path,
    say: &mut (dyn FnMut(&str) -> Result<()> + Send),
) -> Result<Evidence> {
    let referee = referee_version();
    let stem = free_stem(dir, config.set.seed, &config.bot);
    let stderr = dir.join(format!("{stem}.a.stderr"));
    let rules = config.set.rules;
    say(&format!(
        "hus check-bot: {}\n  {} at width {}, {}, {} ms to start, seed {}\n",
        config.bot.command,
        rules.preset().name(),
        rules.width(),
        config.time_words(),
        config.set.ready_time.as_millis(),
        config.set.seed
    ))?;
    if let Some(sandbox) = &config.limits.sandbox {
        let mut seen = vec![format!(
            "{} ({})",
            sandbox.bot_dir().display(),
            if sandbox.is_writable() {
                "writable"
            } else {
                "read-only"
            }
        )];
        seen.extend(
            sandbox
                .read_only_paths()
                .iter()
                .map(|p| format!("{} (read-only)", p.display())),
        );
        let user = sandbox
            .run_as_user()
            .map(|u| format!("; as user {}", u.name()))
            .unwrap_or_default();
        say(&format!(
            "  in a sandbox: it sees the system's files, {}, a private /tmp; at most {} processes{user}\n",
            seen.join(", "),
            sandbox.process_limit()
        ))?;
    }
    let hello = hello_line(&config.set, &referee);
    let probe = probe::run(
        &config.bot,
        &config.limits,
        &stderr,
        &hello,
        &config.set,
        config.move_time(),
    )
    .await?;
    if !probe.games_can_run() {
        return Ok(Evidence {
            probe,
            set: None,
            stderr,
        });
    }
    say(&format!(
        "  playing {} game{} against the built-in random mover ...\n",
        config.set.games,
        if config.set.games == 1 { "" } else { "s" }
    ))?;
    let (mut log, stem) = LogWriter::create(dir, &stem)?;
    let stderr = dir.join(format!("{stem}.a.stderr"));
    let entrants = [
        Entrant::Process {
            spec: config.bot.clone(),
            stderr: stderr.clone().into(),
            limits: config.limits.clone(),
            version: config.version.clone(),
        },
        Entrant::Process {
            spec: config.opponent.clone(),
            stderr: dir.join(format!("{stem}.b.stderr")).into(),
            limits: Limits::default(),
            version: None,
        },
    ];
    let mut sink = Collect {
        log: &mut log,
        records: Vec::new(),
    };
    play_set(
        &config.set,
        entrants.map(Lineup::from).into(),
        &referee,
        &mut sink,
    )
    .await
    .with_context(|| {
        format!(
            "the games did not finish; the log {} is incomplete",
            sink.log.path().display()
        )
    })?;
    let records = sink.records;
    Ok(Evidence {
        probe,
        set: Some(SetEvidence {
            records,
            log: log.path().to_path_buf(),
        }),
        stderr,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chosen_seed_seats_the_bot_both_ways() {
        for start in [0, 1, 99, 123_456] {
            let seed = check_seed(start, 2);
            let firsts = lots(seed, 2);
            assert_ne!(firsts[0], firsts[1], "seed {seed}");
        }
        assert_eq!(check_seed(5, 1), 5);
    }
}
