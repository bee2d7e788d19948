//! `hus match BOT_A BOT_B`: one set between two bots, logged, with a console report.

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Context, Result};

use crate::args::MatchArgs;
use crate::config::{BotSpec, MatchConfig};
use crate::limits::Limits;
use crate::records::{self, Record};
use crate::report::{Console, LogWriter, Tee};
use crate::set::{play_set, Entrant, RecordSink};

/// `hus 0.1.0`: the referee's name in `hello` and in logs.
pub fn referee_version() -> String {
    format!("hus {}", env!("CARGO_PKG_VERSION"))
}

/// `hus match`: plays one set, logs it, prints the report; exit 0, or 130 when stopped.
pub fn run(args: &MatchArgs) -> Result<ExitCode> {
    let mut config = MatchConfig::from_args(args)?;
    probe_sandboxes(&config.bots, &config.limits)?;
    let nice = crate::limits::raise_referee_priority();
    for limits in &mut config.limits {
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
pub fn probe_sandboxes(bots: &[BotSpec], limits: &[Limits]) -> Result<()> {
    for (b, (spec, limits)) in bots.iter().zip(limits).enumerate() {
        if let Some(sandbox) = &limits.sandbox {
            sandbox.probe(spec, limits).with_context(|| {
                format!("--sandbox: bot {} ({:?})", ["A", "B"][b], spec.command)
            })?;
        }
    }
    Ok(())
}

async fn run_match(config: MatchConfig) -> Result<ExitCode> {
    let stamp = time::OffsetDateTime::now_utc();
    let stem = format!(
        "{:04}{:02}{:02}-{:02}{:02}{:02}-{}-{}-vs-{}",
        stamp.year(),
        stamp.month() as u8,
        stamp.day(),
        stamp.hour(),
        stamp.minute(),
        stamp.second(),
        config.set.seed,
        config.bots[0].short_name(),
        config.bots[1].short_name()
    );
    let (mut log, stem) = LogWriter::create(&config.log_dir, &stem)?;
    let stderr_paths = [0, 1].map(|b| {
        config
            .log_dir
            .join(format!("{stem}.{}.stderr", ["a", "b"][b]))
    });
    let entrants = [0, 1].map(|b| Entrant {
        spec: config.bots[b].clone(),
        stderr_path: stderr_paths[b].clone(),
        limits: config.limits[b].clone(),
        link: None,
    });
    let mut console = Console::new(
        config.quiet || config.json,
        [
            config.bots[0].command.clone(),
            config.bots[1].command.clone(),
        ],
    );
    let referee = referee_version();
    let outcome = {
        let mut sink = Tee {
            log: &mut log,
            console: &mut console,
        };
        tokio::select! {
            result = play_set(&config.set, entrants, &referee, &mut sink) => Ok(result),
            signal = stop_signal() => Err(signal),
        }
    };
    let result = match outcome {
        Ok(result) => result,
        Err(signal) => {
            // The set's future is gone, and with it every bot: dropping a bot process
            // kills its whole process group.
            let aborted = Record::Aborted(records::Aborted {
                reason: format!("stopped by {signal}"),
                finished: records::now_rfc3339(),
            });
            let _ = log.record(&aborted);
            if !config.json {
                // An SPRT stopped part-way still tells what its pairs say so far.
                console.print_sprt(Some(signal));
            }
            eprintln!(
                "hus: stopped by {signal}; the games played so far are in {}",
                log.path().display()
            );
            return Ok(ExitCode::from(130));
        }
    };
    let end = match result {
        Ok(end) => end,
        Err(e) => {
            if log.remove_if_unwritten() {
                // Nothing happened yet (a bot command that cannot be started): no log,
                // and no stderr file unless a bot managed to write something in it.
                let kept: Vec<String> = stderr_paths
                    .iter()
                    .filter(|p| !remove_if_empty(p))
                    .map(|p| p.display().to_string())
                    .collect();
                let kept = if kept.is_empty() {
                    String::new()
                } else {
                    format!(" (its stderr is kept in {})", kept.join(" and "))
                };
                return Err(e.context(format!("no game was played and no log was written{kept}")));
            }
            return Err(e.context(format!(
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
        writeln!(std::io::stdout(), "{summary}")?;
    } else {
        console.print_sprt(None);
        console.print_table(log.path());
    }
    Ok(ExitCode::SUCCESS)
}

/// Deletes `path` if it is an empty file, or does not exist; whether it is gone.
fn remove_if_empty(path: &std::path::Path) -> bool {
    match std::fs::metadata(path) {
        Ok(m) if m.len() == 0 => std::fs::remove_file(path).is_ok(),
        Ok(_) => false,
        Err(_) => true,
    }
}

/// Resolves on Ctrl-C or SIGTERM, naming it.
pub async fn stop_signal() -> &'static str {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = match signal(SignalKind::terminate()) {
        Ok(s) => s,
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
            return "SIGINT";
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => "SIGINT",
        _ = term.recv() => "SIGTERM",
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
