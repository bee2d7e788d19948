//! The raw arguments of `hus token` and `hus connect`.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Args;

/// `hus token`: make a bot's token.
#[derive(Args, Debug, Clone)]
pub struct TokenArgs {
    /// Write the token to this new file (readable by its owner only) instead of
    /// printing it; the file must not exist.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

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

/// The bot port's options, for a server command to flatten into its own arguments
/// (`hus serve --bot-listen`).
#[derive(Args, Debug, Clone)]
pub struct BotPortArgs {
    /// Where remote bots connect (README, "Remote bots"). Only loopback by default:
    /// anything else is reachable by others. Port 0 takes a free port.
    #[arg(long, default_value = crate::port::DEFAULT_BOT_LISTEN, value_name = "ADDR:PORT")]
    pub bot_listen: SocketAddr,
    /// Most bot connections open at once (logging in, waiting, playing).
    #[arg(long, default_value_t = 256, value_name = "N")]
    pub bot_max_connections: usize,
}
