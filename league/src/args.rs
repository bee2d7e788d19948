//! The raw arguments of the league's commands, as clap parses them; the `hus` binary
//! only gathers them into subcommands.

use std::path::PathBuf;

use clap::Args;

use crate::standings::OutputFormat;

/// The raw arguments of `hus league`.
#[derive(Debug, Args)]
pub struct LeagueArgs {
    /// The league file (TOML): bots, rules, time control, format, rounds, seed. Its keys
    /// are described in docs/league.md.
    #[arg(value_name = "LEAGUE.toml")]
    pub file: PathBuf,
    /// The league's directory: its store (league.sqlite), the sets' logs and its lock.
    /// Default: beside the file, named after it (leagues/sample.toml: leagues/sample).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// How the final standings are printed: text, json, csv or markdown.
    #[arg(long, value_enum, default_value = "text", value_name = "FORMAT")]
    pub format: OutputFormat,
    /// No progress on stderr (warnings and errors only).
    #[arg(long)]
    pub quiet: bool,
}

/// The raw arguments of `hus standings`.
#[derive(Debug, Args)]
pub struct StandingsArgs {
    /// The league's directory (where its league.sqlite is).
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// text, json, csv or markdown.
    #[arg(long, value_enum, default_value = "text", value_name = "FORMAT")]
    pub format: OutputFormat,
}
