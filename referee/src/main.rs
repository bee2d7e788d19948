//! `hus`: the Hus referee. Thin glue: parse the command line, run the subcommand, print
//! errors as `error: ...` with their whole chain.

mod bot;
mod check_bot;
mod cli;
mod config;
mod limits;
mod match_cmd;
mod perft_cmd;
mod random_bot;
mod records;
mod replay;
mod report;
mod set;

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
        cli::Command::Match(args) => match_cmd::run(&args),
        cli::Command::Perft(args) => perft_cmd::run(&args),
        cli::Command::Replay(args) => replay::run(&args),
        cli::Command::CheckBot(args) => check_bot::run(&args),
        cli::Command::RandomBot(args) => random_bot::run(&args),
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
