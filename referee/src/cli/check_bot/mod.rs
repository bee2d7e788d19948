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
use crate::records::Record;
use crate::report::LogWriter;
use crate::set::{hello_line, play_set, Entrant, Lineup, RecordSink, WriteError};
use crate::stop::stop_signal;

use diagnose::Mark;

/// Most games a check plays.
const MAX_GAMES: u32 = 1000;

/// `hus check-bot`, checked.
struct CheckConfig {
    bot: BotSpec,
    /// The checked bot's working directory and sandbox (the random mover runs as is).
    limits: Limits,
    /// The built-in random mover: this very binary, `random-bot --seed S`.
    opponent: BotSpec,
    set: SetConfig,
    move_time: Duration,
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
            None => seed_with_both_seats(fresh_seed(), args.games),
        };
        let exe = std::env::current_exe()
            .context("cannot find the hus binary itself (to run the random mover)")?;
        let opponent = BotSpec {
            command: format!("hus random-bot --seed {seed}"),
            argv: vec![
                exe.to_string_lossy().into_owned(),
                "random-bot".into(),
                "--seed".into(),
                seed.to_string(),
            ],
        };
        Ok(CheckConfig {
            bot,
            limits,
            opponent,
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
            move_time,
        })
    }
}

/// From `start` on, the first seed whose lots make the checked bot (bot 0) move first
/// in one game and second in another, when there are two games or more.
fn seed_with_both_seats(start: u64, games: u32) -> u64 {
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
    let outcome = runtime.block_on(async {
        tokio::select! {
            evidence = check(&config, &dir) => Ok(evidence),
            signal = stop_signal() => Err(signal),
        }
    });
    let evidence = match outcome {
        Ok(Ok(evidence)) => evidence,
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
    let checks = diagnose::checks(&config, &evidence);
    let problems = checks.iter().filter(|c| c.mark == Mark::Problem).count();
    let warnings = checks.iter().filter(|c| c.mark == Mark::Warning).count();
    let mut report = String::from("\n");
    for check in &checks {
        report.push_str(&check.to_string());
    }
    report.push_str(&format!(
        "\n{}, {}.\n",
        count(problems, "problem", "no problems"),
        count(warnings, "warning", "no warnings")
    ));
    let keep = problems > 0 || !dir.temporary;
    if keep {
        if let Some(set) = &evidence.set {
            report.push_str(&format!("log: {}\n", set.log.display()));
        }
        report.push_str(&format!(
            "your bot's stderr: {}\n",
            evidence.stderr.display()
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
    Ok(if problems > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
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

async fn check(config: &CheckConfig, dir: &LogDir) -> Result<Evidence> {
    let referee = referee_version();
    let stem = free_stem(&dir.path, config.set.seed, &config.bot);
    let stderr = dir.path.join(format!("{stem}.a.stderr"));
    let rules = config.set.rules;
    say(&format!(
        "hus check-bot: {}\n  {} at width {}, {} ms per move, {} ms to start, seed {}\n",
        config.bot.command,
        rules.preset().name(),
        rules.width(),
        config.move_time.as_millis(),
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
        config.move_time,
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
    let (mut log, stem) = LogWriter::create(&dir.path, &stem)?;
    let stderr = dir.path.join(format!("{stem}.a.stderr"));
    let entrants = [
        Entrant::Process {
            spec: config.bot.clone(),
            stderr: stderr.clone().into(),
            limits: config.limits.clone(),
        },
        Entrant::Process {
            spec: config.opponent.clone(),
            stderr: dir.path.join(format!("{stem}.b.stderr")).into(),
            limits: Limits::default(),
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
            let seed = seed_with_both_seats(start, 2);
            let firsts = lots(seed, 2);
            assert_ne!(firsts[0], firsts[1], "seed {seed}");
        }
        assert_eq!(seed_with_both_seats(5, 1), 5);
    }
}
