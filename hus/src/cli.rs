//! The command line: one subcommand per library entry point. Each subcommand's
//! arguments are defined, and validated, by the crate that runs it.

use clap::{Parser, Subcommand};
use ladder::RateArgs;
use league::{ExportArgs, LeagueArgs, PruneArgs, StandingsArgs, WorkerArgs, WorkersArgs};
use play::PlayArgs;
use referee::{CheckBotArgs, LineArgs, MatchArgs, PerftArgs, RandomBotArgs, ReplayArgs};
use remote::ConnectArgs;
use server::{ServeArgs, TokenArgs};
use upload::SubmitArgs;

/// Referee and match server for Hus, the four-row mancala of Namibia.
#[derive(Debug, Parser)]
#[command(
    name = "hus",
    version,
    about = "Referee and match server for Hus, the four-row mancala of Namibia",
    propagate_version = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Play a set between two bots, timed and logged.
    Match(Box<MatchArgs>),
    /// Count move sequences from a position, depth by depth (checks a move generator).
    Perft(PerftArgs),
    /// Play a line of moves from a position: each move's relays and captures, the
    /// position after it, and the game's end (repetition and the 200-ply rule included).
    ///
    /// Exit status 0 when every pit was played, 1 when one could not be (illegal, or
    /// the game was over), 2 for bad arguments.
    Line(LineArgs),
    /// Verify a match log, show its games, follow a live one, or write an HTML viewer.
    Replay(ReplayArgs),
    /// Run a bot through the protocol and explain, in plain words, what it does wrong.
    ///
    /// Exit status 0 without problems (warnings allowed), 1 with problems, 2 for bad
    /// arguments or a bot command that cannot be started.
    CheckBot(CheckBotArgs),
    /// Play a league (round-robin or gauntlet) from a league file; resumable.
    ///
    /// Exit status 0 when every set is played, 130 when stopped by Ctrl-C or SIGTERM (run
    /// the same command to continue), 2 for a bad league file or an unusable setup.
    League(LeagueArgs),
    /// Print the standings of a league directory (or PostgreSQL store), running or not.
    Standings(StandingsArgs),
    /// Delete the logs of a league directory's older finished sets, keeping every result.
    ///
    /// Exit status 0 when done, 2 when the directory holds no league or a league or
    /// server runs on it.
    Prune(PruneArgs),
    /// Play a league without end and serve its dashboard, JSON API and live games.
    ///
    /// Stops on Ctrl-C or SIGTERM (exit 0; running sets are cut off and played again by
    /// the next run), 2 for a bad league file or an unusable setup.
    Serve(ServeArgs),
    /// Play the sets of a league kept in PostgreSQL (`hus league FILE --store URL`), on
    /// this machine, beside any number of workers on others.
    ///
    /// Exit status 0 when done (--until-done), 130 when stopped by Ctrl-C or SIGTERM (its
    /// sets in play are given back), 2 for an unusable store or league.
    Worker(WorkerArgs),
    /// List the workers of a PostgreSQL store: last heartbeat, sets in flight, sets per
    /// hour.
    Workers(WorkersArgs),
    /// Write the logs a PostgreSQL store keeps to files (or one to stdout), for `hus
    /// replay`.
    Export(ExportArgs),
    /// Make a token: 256 random bits, shown once, only its SHA-256 kept. A remote bot's
    /// (prints the token_sha256 line for its [[bot]] table), with --admin LEAGUE.toml
    /// the admin token of that league's `hus serve`, or with --author NAME an author's
    /// token for `hus submit`.
    Token(TokenArgs),
    /// Send a bot's code to a server as a new version (docs/upload.md): pack the
    /// directory, send it with your author's token, and follow its build and checks.
    ///
    /// Exit status 0 once the version plays, 1 if its build failed or a check refused
    /// it (the output or the cause is shown), 2 for anything else (a refused token, the
    /// daily limit, an archive out of bounds, bad arguments).
    Submit(SubmitArgs),
    /// Run a bot program here and play for it on a server (its bot port), connecting
    /// again after each set and, with growing waits, after failures.
    ///
    /// Exit status 130 when stopped by Ctrl-C or SIGTERM (it says which, and whether a
    /// set was cut off), 2 when the server refuses the token or the program cannot be
    /// started, or for bad arguments.
    Connect(ConnectArgs),
    /// Rate a bot on the hus ladder (the random mover at 0, the Rust bot's levels 1 to
    /// 10 above it): "your bot is 1240 ± 45 on the hus ladder".
    ///
    /// Exit status 0 when every game was played, 130 when stopped by Ctrl-C or
    /// SIGTERM, 2 for bad arguments or a bot command that cannot be started.
    Rate(RateArgs),
    /// Play a bot yourself, in the terminal: each board drawn and each move described
    /// as `hus replay` does, your move typed as a pit number; or with --web in a
    /// browser, clicking the pits of the replay viewer's board; logged like a `hus
    /// match` set.
    ///
    /// Exit status 0 when the set was played to its end, 130 when you stop it (Ctrl-C,
    /// Ctrl-D, q; the log ends with aborted), 2 for bad arguments or a bot command that
    /// cannot be started.
    Play(Box<PlayArgs>),
    /// A built-in bot that plays random legal moves (the opponent of `check-bot`).
    #[command(hide = true)]
    RandomBot(RandomBotArgs),
}
