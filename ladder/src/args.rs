//! The raw arguments of `hus rate`, as clap parses them; [`crate::run_rate`] checks them.

use clap::Args;

/// Rates a bot on the hus ladder: plays it against the ladder's rated opponents (the
/// built-in random mover and the Rust alpha-beta bot's levels 1 to 10), in sets of
/// game pairs from the ladder's book of openings, each set against the opponent whose
/// games tell most about the bot's rating so far, and prints its rating with a 95%
/// interval, the ladder's ratings held fixed.
#[derive(Debug, Args)]
pub struct RateArgs {
    /// The bot's command line, split like a shell would (no shell is run).
    #[arg(value_name = "BOT", required_unless_present = "list")]
    pub bot: Option<String>,
    /// Games to play in all (a multiple of --set-games; more games, a narrower
    /// interval).
    #[arg(long, default_value_t = 64)]
    pub games: u32,
    /// Games per set: each set is against one opponent, in pairs from the book with
    /// the first mover swapped (an even number).
    #[arg(long, default_value_t = 8, value_name = "N")]
    pub set_games: u32,
    /// Time for each move (at least the ladder's own, 1s, so that the levels play as
    /// they were rated).
    #[arg(long, default_value_t = referee::show_duration(crate::LADDER_MOVE_TIME), value_name = "DURATION")]
    pub move_time: String,
    /// Time from a bot's start to its ready.
    #[arg(long, default_value_t = referee::show_duration(referee::defaults::READY_TIME), value_name = "DURATION")]
    pub ready_time: String,
    /// Seed of the lots, the openings and the ladder bots' choices (default: drawn,
    /// and printed).
    #[arg(long)]
    pub seed: Option<u64>,
    /// The Rust alpha-beta bot that plays the levels (default: `alphabeta-bot` in the
    /// directory of this hus binary, as `cargo build --release --workspace` leaves it).
    #[arg(long, value_name = "PATH")]
    pub ladder_bot: Option<std::path::PathBuf>,
    /// Another rating list: the JSON of `hus standings DIR --format json` for a league
    /// of `random` and `level-N` bots anchored at random = 0 (default: the shipped
    /// list, leagues/ladder.json).
    #[arg(long, value_name = "FILE")]
    pub ladder: Option<std::path::PathBuf>,
    /// Only these rungs of the ladder, e.g. `random,level-1,level-2` (default: all).
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    pub only: Vec<String>,
    /// Where the sets' logs and the bots' stderr go.
    #[arg(long, default_value = referee::defaults::LOG_DIR, value_name = "DIR")]
    pub log_dir: std::path::PathBuf,
    /// Print one JSON object at the end instead of the report.
    #[arg(long)]
    pub json: bool,
    /// Print the ladder's rating list and exit.
    #[arg(long)]
    pub list: bool,
}
