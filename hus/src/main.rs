//! `hus`: the Hus referee's command line. Thin glue over the library crates: parse the command line, run the subcommand, print
//! errors as `error: ...` with their whole chain.

mod cli;

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::Parser;
use tracing_subscriber::EnvFilter;

fn main() -> ExitCode {
    // A file-size limit (ulimit -f) must turn into a write error that is reported, not
    // into a signal that kills the referee in the middle of a log line.
    // SAFETY: setting a signal's disposition to SIG_IGN at start-up, before any thread.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
    let cli = cli::Cli::parse();
    if let Err(err) = install_log() {
        eprintln!("error: {err}");
        return ExitCode::from(2);
    }
    let result = match cli.command {
        cli::Command::Match(args) => referee::run_match(&args),
        cli::Command::Perft(args) => referee::run_perft(&args),
        cli::Command::Line(args) => referee::run_line(&args),
        cli::Command::Replay(args) => referee::run_replay(&args),
        cli::Command::CheckBot(args) => referee::run_check_bot(&args),
        cli::Command::RandomBot(args) => referee::run_random_bot(&args),
        cli::Command::League(args) => league::run_league(&args).map_err(anyhow::Error::from),
        cli::Command::Standings(args) => league::run_standings(&args).map_err(anyhow::Error::from),
        cli::Command::Prune(args) => league::run_prune(&args).map_err(anyhow::Error::from),
        cli::Command::Serve(args) => server::run_serve(&args),
        cli::Command::Worker(args) => league::run_worker(&args).map_err(anyhow::Error::from),
        cli::Command::Workers(args) => league::run_workers(&args).map_err(anyhow::Error::from),
        cli::Command::Export(args) => league::run_export(&args).map_err(anyhow::Error::from),
        cli::Command::Token(args) => server::run_token(&args),
        cli::Command::Submit(args) => Ok(upload::run_submit(&args)),
        cli::Command::Connect(args) => remote::run_connect(&args),
        cli::Command::Rate(args) => ladder::run_rate(&args),
        cli::Command::Play(args) => play::run_play(&args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            if is_broken_pipe(&err) {
                return ExitCode::SUCCESS;
            }
            eprintln!("error: {}", chain(&err));
            ExitCode::from(2)
        }
    }
}

/// What the log shows unless `HUS_LOG` (or `RUST_LOG`) says otherwise: warnings and
/// errors of every crate, and the information lines of hus's own (the bot port's
/// logins, the match server's events), none of which `hus match` and the other
/// commands that print results emit.
const DEFAULT_LOG: &str =
    "warn,hus=info,referee=info,league=info,remote=info,server=info,play=info,ladder=info";

/// Sends the libraries' `tracing` events to stderr, filtered by `HUS_LOG`, or by
/// `RUST_LOG` when `HUS_LOG` is not set (the `tracing_subscriber` filter syntax:
/// `remote=debug,warn`), or else by [`DEFAULT_LOG`]. A filter that does not parse is
/// an error: a typo must not silence the log.
fn install_log() -> anyhow::Result<()> {
    let (name, value) = ["HUS_LOG", "RUST_LOG"]
        .into_iter()
        .find_map(|name| std::env::var_os(name).map(|v| (name, v)))
        .unwrap_or(("the default log filter", DEFAULT_LOG.into()));
    let text = value
        .to_str()
        .ok_or_else(|| anyhow::anyhow!("{name} is not valid UTF-8"))?;
    let filter = EnvFilter::builder()
        .parse(text)
        .map_err(|e| anyhow::anyhow!("{name}: {text:?} is not a log filter: {e}"))?;
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init()
        .map_err(|e| anyhow::anyhow!("cannot start the log: {e}"))
}

/// An error and its causes, each once, joined with ": " (`cannot listen on ...: the
/// address is in use`). An error type whose message holds its cause does not also
/// return it as its `source` (the workspace's error types keep to that), else the
/// cause would be said twice.
fn chain(err: &anyhow::Error) -> String {
    err.chain()
        .map(|cause| cause.to_string())
        .collect::<Vec<_>>()
        .join(": ")
}

/// A closed stdout (`hus ... | head`) is a normal way for output to end.
fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
