//! `hus`: the Hus referee's command line. Thin glue over the library crates: parse the command line, run the subcommand, print
//! errors as `error: ...` with their whole chain.

mod cli;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    // A file-size limit (ulimit -f) must turn into a write error that is reported, not
    // into a signal that kills the referee in the middle of a log line.
    // SAFETY: setting a signal's disposition to SIG_IGN at start-up, before any thread.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
    let cli = cli::Cli::parse();
    let result = match cli.command {
        cli::Command::Match(args) => referee::run_match(&args),
        cli::Command::Perft(args) => referee::run_perft(&args),
        cli::Command::Line(args) => referee::run_line(&args),
        cli::Command::Replay(args) => referee::run_replay(&args),
        cli::Command::CheckBot(args) => referee::run_check_bot(&args),
        cli::Command::RandomBot(args) => referee::run_random_bot(&args),
        cli::Command::League(args) => league::run_league(&args).map_err(anyhow::Error::from),
        cli::Command::Standings(args) => league::run_standings(&args).map_err(anyhow::Error::from),
        cli::Command::Serve(args) => server::run_serve(&args),
        cli::Command::Worker(args) => league::run_worker(&args).map_err(anyhow::Error::from),
        cli::Command::Workers(args) => league::run_workers(&args).map_err(anyhow::Error::from),
        cli::Command::Export(args) => league::run_export(&args).map_err(anyhow::Error::from),
        cli::Command::Token(args) => server::run_token(&args),
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
            eprintln!("error: {err:#}");
            ExitCode::from(2)
        }
    }
}

/// A closed stdout (`hus ... | head`) is a normal way for output to end.
fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
