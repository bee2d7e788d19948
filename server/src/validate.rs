//! The check of an uploaded version before it enters the league: `hus check-bot`'s
//! whole check (`referee::check_bot`, the one code path of both), run on the built
//! version in its sandbox with the league's rules, width, time control and number of
//! games: the probe (`hello` and a first turn), then a validation set against the
//! built-in random mover (this very binary), played by `play_set` like every set. A
//! fault of the version, or any problem the check finds, rejects it; its author is
//! told the fault's kind and detail, the check's report and the end of the bot's
//! stderr. The set's log (which names the version and its hash) and the bot's stderr
//! are kept in `uploads/validation/NAME.vN/`, and pass `hus replay` like every log.

use std::path::Path;

use league::{BotConfig, LeagueConfig, Transport};
use referee::{check_bot, check_seed, CheckConfig, SetConfig};

/// The validation logs' directory, in the uploads' directory.
pub const VALIDATION_DIR: &str = "validation";

/// Checks the version `bot` (named `name` in the league); `Err` says why it is
/// rejected, for its author. `dir` is the uploads' directory.
pub async fn validate(
    bot: &BotConfig,
    league: &LeagueConfig,
    name: &str,
    dir: &Path,
) -> Result<(), String> {
    let Transport::Process { spec, limits } = &bot.transport else {
        return Err("an uploaded version is a process".into());
    };
    // The check runs a sandbox only once it was seen to start: a machine that cannot
    // sandbox is the server's problem, never a check without isolation.
    if let Some(sandbox) = limits.sandbox.clone() {
        let (spec, limits) = (spec.clone(), limits.clone());
        tokio::task::spawn_blocking(move || sandbox.probe(&spec, &limits))
            .await
            .map_err(|e| format!("the sandbox's check stopped: {e}"))?
            .map_err(|e| format!("the version's sandbox cannot start: {e}"))?;
    }
    let logs = dir.join(VALIDATION_DIR).join(name);
    referee::create_dir(&logs).map_err(|e| format!("cannot make {}: {e}", logs.display()))?;
    let exe = std::env::current_exe()
        .map_err(|e| format!("cannot find the hus binary (the random mover): {e}"))?;
    let seed = check_seed(referee::fresh_seed(), league.games);
    let config = CheckConfig {
        bot: spec.clone(),
        limits: limits.clone(),
        opponent: CheckConfig::random_mover(&exe, seed),
        set: SetConfig {
            rules: league.rules,
            games: league.games,
            seed,
            time: league.time,
            ready_time: league.ready_time,
            early_stop: false,
            openings: Vec::new(),
            sprt: None,
        },
        version: bot.version.clone(),
    };
    let verdict = check_bot(&config, &logs, &mut |_| Ok(()))
        .await
        .map_err(|e| format!("its check could not run: {e:#}"))?;
    if verdict.passed {
        return Ok(());
    }
    let mut why = match (&verdict.fault, &verdict.first_problem) {
        (Some(fault), _) => format!(
            "it faulted in its validation set against the random mover: {}: {}",
            fault.kind, fault.detail
        ),
        (None, Some(problem)) => format!("its check found a problem: {problem}"),
        (None, None) => "its check found a problem".to_string(),
    };
    why.push_str("\n\n--- hus check-bot's report ---\n");
    for check in &verdict.checks {
        why.push_str(check);
    }
    if !verdict.stderr.trim().is_empty() {
        why.push_str("--- the end of its stderr ---\n");
        why.push_str(verdict.stderr.trim_end());
        why.push('\n');
    }
    Err(why)
}
