//! `hus match BOT_A BOT_B`: one set between two bots, logged, with a console report.

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Context, Result};

use crate::cli::args::MatchArgs;
use crate::cli::match_config::MatchConfig;
use crate::config::BotSpec;
use crate::limits::Limits;
use crate::names::{log_stem, referee_version};
use crate::report::{Console, LogWriter, Tee};
use crate::set::{play_set, Entrant, Lineup, Member, Team};
use crate::side::{BySide, Side};
use crate::stop::stop_signal;

/// `hus match`: plays one set, logs it, prints the report; exit 0, or 130 when stopped.
pub fn run(args: &MatchArgs) -> Result<ExitCode> {
    let mut config = MatchConfig::from_args(args)?;
    probe_sandboxes(&config.bots, &config.limits)?;
    let nice = crate::limits::raise_referee_priority();
    for limits in config.limits.iter_mut().flatten() {
        limits.nice = nice;
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async move {
        // A spawned task rather than the future `block_on` drives: a bot's reader task
        // then wakes it through the scheduler's queue, without an extra poll of the OS
        // on every ply.
        tokio::spawn(run_match(config))
            .await
            .context("the set's task failed")?
    })
}

/// Runs each bot's sandbox once, before any game: a machine that cannot sandbox is an
/// error here, never a set played without isolation.
pub fn probe_sandboxes(bots: &BySide<Vec<BotSpec>>, limits: &BySide<Vec<Limits>>) -> Result<()> {
    for b in Side::BOTH {
        let team = bots[b].len() > 1;
        for (i, (spec, limits)) in bots[b].iter().zip(&limits[b]).enumerate() {
            if let Some(sandbox) = &limits.sandbox {
                sandbox.probe(spec, limits).with_context(|| {
                    let which = b.letter();
                    if team {
                        format!(
                            "--sandbox: bot {} of team {which} ({:?})",
                            i + 1,
                            spec.command
                        )
                    } else {
                        format!("--sandbox: bot {which} ({:?})", spec.command)
                    }
                })?;
            }
        }
    }
    Ok(())
}

async fn run_match(config: MatchConfig) -> Result<ExitCode> {
    let stem = log_stem(
        config.set.seed,
        [side_name(&config, Side::A), side_name(&config, Side::B)],
    );
    let (mut log, stem) = LogWriter::create(&config.log_dir, &stem)?;
    // `STEM.a.stderr`, or for a team `STEM.a1.stderr`, `STEM.a2.stderr`...
    let mut stderr_paths = Vec::new();
    let entrants: BySide<Vec<Entrant>> = BySide::from_fn(|b| {
        (0..config.bots[b].len())
            .map(|i| {
                let suffix = match config.teams {
                    None => b.lower().to_string(),
                    Some(_) => format!("{}{}", b.lower(), i + 1),
                };
                let stderr_path = config.log_dir.join(format!("{stem}.{suffix}.stderr"));
                stderr_paths.push(stderr_path.clone());
                Entrant::Process {
                    spec: config.bots[b][i].clone(),
                    stderr: stderr_path.into(),
                    limits: config.limits[b][i].clone(),
                    version: None,
                }
            })
            .collect()
    });
    let commands = Side::BOTH.map(|b| {
        config.bots[b]
            .iter()
            .map(|s| s.command.as_str())
            .collect::<Vec<_>>()
            .join(" + ")
    });
    let lineups = match &config.teams {
        None => entrants.into_array().map(|mut e| match e.pop() {
            Some(e) => Lineup::from(e),
            None => Lineup::Team(Team {
                name: String::new(),
                members: Vec::new(),
            }),
        }),
        Some(names) => {
            let [a, b] = entrants.into_array();
            [(Side::A, a), (Side::B, b)].map(|(side, members)| {
                let mut given: Vec<String> = Vec::new();
                let members = members
                    .into_iter()
                    .enumerate()
                    .map(|(i, entrant)| {
                        // Names its partners can tell apart: `random`, `random-2`.
                        let mut name = config.bots[side][i].short_name();
                        if given.contains(&name) {
                            name = format!("{name}-{}", i + 1);
                        }
                        given.push(name.clone());
                        Member { name, entrant }
                    })
                    .collect();
                Lineup::Team(Team {
                    name: names[side].clone(),
                    members,
                })
            })
        }
    };
    let mut console = Console::new(config.quiet || config.json, commands);
    let referee = referee_version();
    let outcome = {
        let mut sink = Tee {
            log: &mut log,
            console: &mut console,
        };
        tokio::select! {
            result = play_set(&config.set, lineups.into(), &referee, &mut sink) => Ok(result),
            signal = stop_signal() => Err(signal),
        }
    };
    let result = match outcome {
        Ok(result) => result,
        Err(signal) => {
            // The set's future is gone, and with it every bot: dropping a bot process
            // kills its whole process group.
            log.end_aborted(format!("stopped by {signal}"));
            if !config.json {
                // An SPRT stopped part-way still tells what its pairs say so far.
                console.print_sprt(Some(signal));
            }
            eprintln!("hus: stopped by {signal}; {}", log.stopped_words());
            return Ok(ExitCode::from(130));
        }
    };
    let end = match result {
        Ok(end) => end,
        Err(e) if e.nothing_played() => {
            // Nothing was played (a bot command that cannot be started): no log, and no
            // stderr file unless a bot managed to write something in it.
            let kept = log.discard_unstarted(&stderr_paths);
            let kept: Vec<String> = kept.iter().map(|p| p.display().to_string()).collect();
            let kept = if kept.is_empty() {
                String::new()
            } else {
                format!(" (its stderr is kept in {})", kept.join(" and "))
            };
            return Err(anyhow::Error::new(e)
                .context(format!("no game was played and no log was written{kept}")));
        }
        Err(e) => {
            return Err(anyhow::Error::new(e).context(format!(
                "the set did not finish; the log {} is incomplete",
                log.path().display()
            )));
        }
    };
    if config.json {
        let summary = serde_json::json!({
            "log": log.path(),
            "seed": config.set.seed,
            "rules": {"preset": config.set.rules.preset().name(), "width": config.set.rules.width()},
            "games_played": end.games_played,
            "winner": end.winner,
            "points": end.points,
            "bots": console.bots.iter().map(|s| serde_json::json!({
                "command": s.command,
                "name": s.name,
                "points": s.points,
                "wins": s.wins,
                "draws": s.draws,
                "losses": s.losses,
                "faults": s.faults,
                "moves": s.moves,
                "mean_ms": s.mean_ms(),
                "max_ms": s.max_ms,
            })).collect::<Vec<_>>(),
            "games": console.games,
            "faults": console.faults,
            "referee_max_rss_kib": max_rss_kib(),
        });
        let mut summary = summary;
        if config.set.sprt.is_some() {
            summary["sprt"] = console.sprt_json();
        }
        if config.teams.is_some() {
            summary["teams"] = console.teams_json();
        }
        writeln!(std::io::stdout(), "{summary}")?;
    } else {
        console.print_sprt(None);
        console.print_table(log.path());
    }
    Ok(ExitCode::SUCCESS)
}

/// A side's name in the log's file name: the bot's short name, or the team's name.
fn side_name(config: &MatchConfig, b: Side) -> String {
    match &config.teams {
        Some(names) => crate::config::sanitize(&names[b]),
        None => config.bots[b]
            .first()
            .map(BotSpec::short_name)
            .unwrap_or_default(),
    }
}

/// The referee's own peak resident memory, in KiB (bots not included): `VmHWM` of
/// `/proc/self/status`, the high-water mark of the address space `exec` gave this
/// process. Not `getrusage`'s `ru_maxrss`: on Linux that maximum survives `execve`, so
/// it would report the peak of whatever process started `hus` when that was larger.
/// `None` where there is no `/proc` (the summary then says `null`).
fn max_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    vm_hwm_kib(&status)
}

/// The `VmHWM:   4244 kB` line of a `/proc/PID/status` text, in KiB.
fn vm_hwm_kib(status: &str) -> Option<u64> {
    let value = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))?
        .trim();
    value.strip_suffix("kB")?.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_peak_is_read_from_vm_hwm() {
        let status = "Name:\thus\nVmPeak:\t   12000 kB\nVmHWM:\t    4244 kB\nVmRSS:\t    4100 kB\n";
        assert_eq!(vm_hwm_kib(status), Some(4244));
        assert_eq!(vm_hwm_kib("Name:\thus\n"), None);
        assert_eq!(vm_hwm_kib("VmHWM:\t lots kB\n"), None);
        // This process has a /proc: its own figure is there and not zero.
        assert!(max_rss_kib().is_some_and(|kib| kib > 0));
    }
}
