//! The raw arguments of `hus connect`.

use std::path::PathBuf;

use clap::Args;

/// `hus connect`: run a bot here and play for it on a server.
#[derive(Args, Debug, Clone)]
pub struct ConnectArgs {
    /// The server's bot port, HOST:PORT.
    #[arg(value_name = "HOST:PORT")]
    pub server: String,
    /// The bot's name in the server's league.
    #[arg(long)]
    pub bot: String,
    /// The file holding the bot's token (made by hus token).
    #[arg(long, value_name = "FILE")]
    pub token_file: PathBuf,
    /// Stop after this many logged-in connections have ended (each carries at most
    /// one set; for tests and one-off sets); without it, connect again for ever.
    #[arg(long, value_name = "N")]
    pub sessions: Option<u32>,
    /// The bot's command, after `--`: started for each set, its stdin and stdout
    /// bridged to the server.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}
