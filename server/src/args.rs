//! The raw arguments of `hus serve` and `hus token`, as clap parses them.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

/// The raw arguments of `hus serve`.
#[derive(Debug, Args)]
#[command(mut_arg("store", |a| a.help(
    "Keep the league in this PostgreSQL database (postgres://USER:PASSWORD@HOST:PORT/DB) \
     instead of the directory's SQLite file, as `hus league --store` does (the same order: \
     this, else the environment variable HUS_STORE, else the file's `store` key). `hus \
     worker` processes then play the league's sets too, and the dashboard shows their \
     results, their logs and the workers. See docs/deploy.md"
)))]
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
    /// Keep the logs of this many most recently finished sets; older sets' logs (and
    /// stderr files, and the logs a PostgreSQL store keeps for them) are deleted as new
    /// sets finish. Every result stays; their pages say the log was pruned. Default:
    /// keep every log.
    #[arg(long, value_name = "N")]
    pub keep_logs: Option<u64>,
    /// Keep every finished set's log as a file of its own (`logs/STEM.jsonl.zst`)
    /// instead of archiving them 64 sets to a file (`logs/archive/sets-FROM-TO.tar.zst`,
    /// about 0.5 KB a set against 5 KB; docs/server.md "Disk").
    #[arg(long)]
    pub no_archive: bool,
    /// The free-space floor of the server's directory and its logs.
    #[command(flatten)]
    pub min_free: league::MinFreeArg,
    /// Most HTTP connections open at once (live pages hold one each); more are closed
    /// at once.
    #[arg(long, default_value_t = 1024, value_name = "N")]
    pub max_connections: usize,
    /// Most log downloads sent at once (/api/logs/FILE, /api/sets/SET/log); one more is
    /// answered 503 with Retry-After.
    #[arg(long, default_value_t = crate::download::MAX_DOWNLOADS, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub max_downloads: u32,
    /// Most log downloads of one client address (an IPv4 address, or an IPv6 /64) sent
    /// at once; one more is answered 503 with Retry-After. Default: 4, or
    /// --max-downloads if lower. Behind a reverse proxy every client has the proxy's
    /// address: raise it.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub max_downloads_per_address: Option<u32>,
    /// Time one log download may take, from its answer to its last byte (5m is a 30 MB
    /// log at 100 kB/s); past it the download is cut.
    #[arg(long, default_value = "5m", value_name = "DURATION",
          value_parser = league::positive_duration)]
    pub download_time: Duration,
    /// Most moves a set's replay page (/sets/SET/replay) may hold; a set of more is
    /// answered 422 (its log can still be downloaded), decided by the move count the
    /// store keeps, before the log is read.
    #[arg(long, default_value_t = crate::pages::MAX_PAGE_MOVES, value_name = "N")]
    pub max_page_moves: u64,
    /// Most HTTP connections one client address (an IPv4 address, or an IPv6 /64) holds
    /// at once; more are closed at once. Default: 64, or --max-connections if lower.
    /// Behind a reverse proxy every client has the proxy's address: raise it.
    #[arg(long, value_name = "N")]
    pub max_connections_per_address: Option<usize>,
    /// Most live streams (/api/live/events) open at once; more get 503. Less than
    /// --max-connections: the rest is kept for the pages, the API and the admin.
    /// Default: 512, or half of --max-connections if lower.
    #[arg(long, value_name = "N")]
    pub max_live: Option<usize>,
    /// Most live streams of one client address. Default: 16, or --max-live if lower.
    #[arg(long, value_name = "N")]
    pub max_live_per_address: Option<usize>,
    /// A host name the dashboard is reached by (behind a reverse proxy, or by the
    /// machine's name), accepted in the request's Host; repeat it for several. Without
    /// it only localhost, loopback addresses and the --listen address are served (any
    /// IP address of the machine when it is 0.0.0.0 or [::]): other names get 421, so a
    /// page of another site cannot read the dashboard through DNS rebinding.
    #[arg(long, value_name = "NAME")]
    pub allowed_host: Vec<String>,
    /// No line per finished set on stderr.
    #[arg(long)]
    pub quiet: bool,
    /// The league's PostgreSQL store.
    #[command(flatten)]
    pub store: league::StoreArg,
    /// Sets this server plays at once, instead of the file's `concurrency`, and batches
    /// of an SPRT gate's test. 0: it plays none (with a PostgreSQL store, the workers
    /// play them all; without one, the gate still plays one batch at a time).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(0..=1024))]
    pub concurrency: Option<u32>,
    /// Versions an author may send in 24 hours (hus submit; docs/upload.md); more are
    /// answered 429 with when to come back.
    #[arg(long, value_name = "N", default_value_t = crate::uploads::DEFAULT_UPLOADS_PER_DAY,
          value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub uploads_per_day: u32,
    /// Uploaded versions built and checked at once (the others wait in the queue).
    #[arg(long, value_name = "N", default_value_t = crate::uploads::DEFAULT_BUILDS as u32,
          value_parser = clap::value_parser!(u32).range(1..=64))]
    pub builds: u32,
    /// The wall time of one version's build, past which it is stopped.
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = league::positive_duration)]
    pub build_time: Duration,
    /// The unprivileged user uploaded versions are built and played as when hus runs as
    /// root (default: nobody); never root.
    #[arg(long, value_name = "USER")]
    pub upload_user: Option<String>,
    /// How often the built trees of uploaded versions no longer played (retired, their
    /// sets ended; refused by the gate) are looked for: each goes at the second look
    /// that finds it unneeded, and is built again from its archive if it is wanted again.
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = league::positive_duration)]
    pub prune_every: Duration,
}

impl ServeArgs {
    /// The bounds on log downloads, checked: per address 4 by default (or all, if
    /// fewer), never more than all.
    pub fn download_limits(&self) -> anyhow::Result<crate::download::DownloadLimits> {
        let max = self.max_downloads;
        let per_address = self
            .max_downloads_per_address
            .unwrap_or(crate::download::MAX_DOWNLOADS_PER_ADDRESS.min(max));
        if per_address > max {
            anyhow::bail!(
                "--max-downloads-per-address {per_address}: give a number from 1 to \
                 --max-downloads ({max})"
            );
        }
        Ok(crate::download::DownloadLimits {
            max: max as usize,
            per_address: per_address as usize,
            time: self.download_time,
        })
    }
}

/// The raw arguments of `hus token`: a remote bot's token, or with `--admin` a
/// league's admin token. One code path makes and hashes both (`remote::new_token`,
/// `remote::token_hash`).
#[derive(Debug, Args)]
pub struct TokenArgs {
    /// Write the token to this new file (readable by its owner only) instead of
    /// printing it; the file must not exist.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Make the admin token of this league's `hus serve` (pause, resume, add, remove)
    /// instead of a bot's: its SHA-256 goes to admin-token.sha256 in the league's
    /// directory, and the previous admin token stops working.
    #[arg(long, value_name = "LEAGUE.toml")]
    pub admin: Option<PathBuf>,
    /// Make an author's token instead of a bot's: the author may submit versions of
    /// the bots --bots names (hus submit), and nothing else. Its SHA-256 goes to
    /// authors.json in the league's directory (--league); an author of that name
    /// already there gets the new token, and the old one stops working.
    #[arg(long, value_name = "NAME", requires_all = ["league", "bots"], conflicts_with = "admin")]
    pub author: Option<String>,
    /// With --author: the bots the author may submit, names or prefixes ending in `*`
    /// (`alice-*`), comma-separated or the option repeated.
    #[arg(
        long,
        value_name = "PATTERN",
        value_delimiter = ',',
        requires = "author"
    )]
    pub bots: Vec<String>,
    /// With --author: the league file whose server takes the author's versions.
    #[arg(long, value_name = "LEAGUE.toml", requires = "author")]
    pub league: Option<PathBuf>,
    /// With --admin or --author: the league's directory, if not the default.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        serve: ServeArgs,
    }

    /// The download places in all and per address that `options` give.
    fn places(options: &[&str]) -> Result<(usize, usize), String> {
        let cli = Cli::try_parse_from(["hus", "L.toml"].iter().chain(options))
            .map_err(|e| e.to_string())?;
        let limits = cli.serve.download_limits().map_err(|e| e.to_string())?;
        Ok((limits.max, limits.per_address))
    }

    #[test]
    fn download_places_per_address_default_to_four_and_never_exceed_the_whole() {
        assert_eq!(places(&[]), Ok((16, 4)));
        assert_eq!(places(&["--max-downloads", "2"]), Ok((2, 2)));
        assert_eq!(places(&["--max-downloads-per-address", "16"]), Ok((16, 16)));
        assert_eq!(
            places(&["--max-downloads-per-address", "17"]),
            Err(
                "--max-downloads-per-address 17: give a number from 1 to --max-downloads (16)"
                    .to_string()
            )
        );
    }
}
