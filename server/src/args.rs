//! The raw arguments of `hus serve` and `hus serve-token`, as clap parses them.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Args;

/// The raw arguments of `hus serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The league file (TOML), as for `hus league`: bots, rules, time control, format,
    /// concurrency, seed (`rounds` is not used: the server plays until stopped).
    #[arg(value_name = "LEAGUE.toml")]
    pub file: PathBuf,
    /// The league's directory (store, logs, lock, admin token digest). Default: beside
    /// the file, named after it, as for `hus league`.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Where the dashboard and the API listen. Port 0 takes a free port (the address
    /// is printed). Only loopback by default: anything else is reachable by others.
    #[arg(long, default_value = "127.0.0.1:8080", value_name = "ADDR:PORT")]
    pub listen: SocketAddr,
    /// Where remote bots (`remote = true` in the league file) connect with their tokens
    /// (`hus connect`). Opened when the league has a remote bot or this is given;
    /// default 127.0.0.1:7000. A remote bot not connected when a pairing wants it is
    /// skipped for now, not forfeited.
    #[arg(long, value_name = "ADDR:PORT")]
    pub bot_listen: Option<SocketAddr>,
    /// Most HTTP connections open at once (live pages hold one each); more are closed
    /// at once.
    #[arg(long, default_value_t = 1024, value_name = "N")]
    pub max_connections: usize,
    /// No line per finished set on stderr.
    #[arg(long)]
    pub quiet: bool,
}

/// The raw arguments of `hus serve-token`.
#[derive(Debug, Args)]
pub struct ServeTokenArgs {
    /// The league file.
    #[arg(value_name = "LEAGUE.toml")]
    pub file: PathBuf,
    /// The league's directory, if not the default.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}
