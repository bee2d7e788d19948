//! The raw command line, as clap parses it. Each subcommand validates its own arguments
//! into a configuration before doing anything.

use clap::{Args, Parser, Subcommand};

/// Referee and match server for Hus, the four-row mancala of Namibia.
#[derive(Debug, Parser)]
#[command(name = "hus", version, about, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Count move sequences from a position, depth by depth (checks a move generator).
    Perft(PerftArgs),
}

#[derive(Debug, Args)]
pub struct PerftArgs {
    /// Rules preset: hus, rulebook or mancala-world.
    #[arg(long, default_value = "hus")]
    pub rules: String,
    /// Row width, 8 to 16.
    #[arg(long, default_value_t = 8)]
    pub width: usize,
    /// Deepest ply to count (1 or more).
    #[arg(long)]
    pub depth: u32,
    /// Start from this position (the one-line notation of RULES.md) instead of the
    /// starting position; --rules and --width are then taken from it.
    #[arg(long)]
    pub position: Option<String>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}
