//! `server`: the match server. `hus serve LEAGUE.toml` plays a league without end (the
//! `league` crate's file, store, logs and set pool, `SetPool`, so every set goes through
//! `referee::play_set`), choosing each set where it shrinks the ratings' uncertainty
//! most ([`pairing`]), and serves a dashboard, a JSON API and live games (server-sent
//! events) from the same process (axum on hyper). docs/server.md describes it,
//! docs/api.md the API.
//!
//! - [`runner`]: the set loop, sole user of the store (through its `StoreThread`); publishes snapshots.
//! - [`live`]: every record of every running set, fanned out to watchers.
//! - [`web`]: routes, handlers (pages, API, logs, replay pages, the live stream,
//!   admin), security headers, the `Host` check, request limits; [`html`]: the pages'
//!   markup, below `web` (it never calls into it); [`http`]: the
//!   listener (connections in all and per address, header size and time, stalled
//!   writes); [`capacity`]: slots counted in all and per client address.
//! - [`download`]: log downloads, streamed, counted (in all and per address) and timed;
//!   [`pages`]: replay pages, built once per finished set (refusals too), by a bounded
//!   number of builders; [`refused`]: refused pages counted per address a minute.
//! - [`admin`]: the admin token (its SHA-256 only is stored; constant-time check).
//! - [`gate`]: the SPRT gate of an uploaded version against the bot's active one.
//!
//! [`run_token`] is `hus token`: bots' tokens and the admin token, one code path;
//! [`remote_tokens`] gives the bot port the league file's remote bots and their
//! tokens' hashes.

#![deny(missing_docs)]

pub mod admin;
mod args;
pub mod authors;
pub mod capacity;
pub mod charts;
pub mod download;
mod error;
pub mod gate;
pub mod html;
pub mod http;
pub mod live;
pub mod pages;
pub mod pairing;
pub mod reader;
pub mod refused;
pub mod runner;
pub mod state;
pub mod uploads;
mod validate;
pub mod web;

use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;
use league::{DirLock, LeagueConfig, PgStore, Store};
use tokio::sync::{mpsc, watch};

pub use args::{ServeArgs, TokenArgs};

/// `hus token`: a new token, shown once (printed, or written to a new file only its
/// owner can read). A bot's: prints the `token_sha256` line for its `[[bot]]` table.
/// With `--admin LEAGUE.toml`, the league's admin token: its digest replaces the
/// previous one in the league's directory. With `--author NAME`, an author's token for
/// `hus submit` (`authors`). All are `remote::new_token`, hashed by `remote::token_hash`.
pub fn run_token(args: &TokenArgs) -> anyhow::Result<ExitCode> {
    let token = remote::new_token();
    let mut stdout = Vec::new();
    if args.dir.is_some() && args.admin.is_none() && args.author.is_none() {
        anyhow::bail!("--dir goes with --admin or --author (a bot's token has no directory)");
    }
    // The token's file first: a digest is kept only for a token that was kept too.
    if let Some(path) = &args.out {
        write_private(path, &token)?;
    }
    let kept = (|| -> anyhow::Result<String> {
        Ok(match (&args.admin, &args.author, &args.league) {
            (None, Some(author), Some(file)) => {
                let config = LeagueConfig::load(file)?;
                let dir = args.dir.clone().unwrap_or_else(|| config.default_dir());
                authors::add(&dir, author, &args.bots, &token)?;
                format!(
                "author {author}'s token, for hus submit (bots {}); its SHA-256 is in {} (an earlier token of {author} no longer works)",
                args.bots.join(", "),
                authors::authors_file(&dir).display()
            )
            }
            (Some(file), _, _) => {
                let config = LeagueConfig::load(file)?;
                let dir = args.dir.clone().unwrap_or_else(|| config.default_dir());
                admin::store_digest(&dir, &token)?;
                format!(
                "the league's admin token; its SHA-256 is in {} (the previous admin token no longer works)",
                admin::token_file(&dir).display()
            )
            }
            _ => {
                stdout.push(format!(
                    "token_sha256 = \"{}\"",
                    remote::hex(&remote::token_hash(&token))
                ));
                "give it to the bot's author; the line for the bot's [[bot]] table is on stdout"
                    .to_string()
            }
        })
    })();
    let kept = match kept {
        Ok(kept) => kept,
        Err(e) => {
            if let Some(path) = &args.out {
                let _ = std::fs::remove_file(path);
            }
            return Err(e);
        }
    };
    match &args.out {
        Some(path) => {
            eprintln!("hus token: the token is in {}: {kept}", path.display());
        }
        None => {
            eprintln!("hus token: the token is shown only this once, first on stdout: {kept}");
            stdout.insert(0, token);
        }
    }
    for line in stdout {
        println!("{line}");
    }
    Ok(ExitCode::SUCCESS)
}

/// The league's remote bots and the SHA-256 of their tokens (the file's
/// `token_sha256`), for the bot port's `remote::Registry`: `remote` knows no league
/// file and takes them as plain data, at start and again when the admin adds a bot.
pub fn remote_tokens(config: &LeagueConfig) -> HashMap<String, [u8; 32]> {
    config
        .bots
        .iter()
        .filter_map(|b| b.token_sha256().map(|h| (b.name.clone(), h)))
        .collect()
}

/// Writes `token` to a new file readable by its owner only.
fn write_private(path: &std::path::Path, token: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut file = referee::create_file(path, referee::Create::New, Some(0o600))
        .with_context(|| format!("cannot create the token file {}", path.display()))?;
    writeln!(file, "{token}")
        .with_context(|| format!("cannot write the token file {}", path.display()))?;
    Ok(())
}

/// `hus serve`: plays the league and serves the dashboard until Ctrl-C or SIGTERM;
/// exit 0 then (the same command carries on).
pub fn run_serve(args: &ServeArgs) -> anyhow::Result<ExitCode> {
    let limits = http::Limits::from_args(args)?;
    let download_limits = args.download_limits()?;
    // Checked before anything starts; the listening port is filled in once bound.
    referee::web_host::AllowedHosts::new(args.listen, &args.allowed_host)?;
    let mut config = LeagueConfig::load(&args.file)?;
    if let Some(n) = args.concurrency {
        config.concurrency = n as usize;
    }
    let dir = args.dir.clone().unwrap_or_else(|| config.default_dir());
    let logs = dir.join(league::LOGS_DIR);
    referee::create_dir(&logs)
        .with_context(|| format!("cannot create the league's directory {}", logs.display()))?;
    let _lock = DirLock::acquire(&dir)?;
    // The store: --store (or HUS_STORE), else the file's `store` key, as for `hus
    // league`; else the directory's SQLite file.
    let url = league::store_url(args.store.url.as_deref(), &config).map(str::to_string);
    let (mut store, reader): (Box<dyn Store + Send>, reader::Reader) = match &url {
        Some(url) => {
            let mut store = PgStore::connect(url)?;
            store.set_name(&format!("serve@{}", store.name()));
            let url = url.clone();
            let reader = reader::Reader::start(Box::new(move || {
                PgStore::connect(&url).map(|s| Box::new(s) as Box<dyn Store + Send>)
            }))
            .context("cannot start the store's reader thread")?;
            (Box::new(store), reader)
        }
        None => {
            let store = league::open_dir_store(&dir)?;
            let file = dir.join(league::STORE_FILE);
            let reader = reader::Reader::start(Box::new(move || {
                league::SqliteStore::open(&file, false)
                    .map(|s| Box::new(s) as Box<dyn Store + Send>)
            }))
            .context("cannot start the store's reader thread")?;
            (Box::new(store), reader)
        }
    };
    let seed = league::settle_settings(&config, &mut *store, &dir)?;
    if url.is_some() {
        // The workers play with the file's bots' commands, as `hus league --store`.
        league::carry_file(&config, &mut *store)?;
    }
    let say = |line: String| {
        if !args.quiet {
            eprintln!("hus serve: {line}");
        }
    };
    league::prepare_run(&config, &mut *store, &logs, &mut |line| say(line))?;
    if !args.listen.ip().is_loopback() {
        eprintln!(
            "warning: hus serve listens on {}, reachable from other machines",
            args.listen
        );
    }
    if config.openings.is_none() {
        eprintln!("{}", no_openings_warning(&args.file));
    }
    let nice = referee::raise_referee_priority();
    let shared = league::Shared::new(&config, dir.join(league::LOGS_DIR), nice);
    let concurrency = config.concurrency;
    let has_remote = config.bots.iter().any(|b| b.is_remote());
    let tokens = remote_tokens(&config);
    let lag_cap = config.lag_cap;
    let upload_settings = uploads::UploadSettings {
        per_day: args.uploads_per_day,
        builds: args.builds as usize,
        bounds: upload::Bounds::default(),
        build: upload::BuildLimits {
            wall: args.build_time,
            user: args.upload_user.clone(),
            ..upload::BuildLimits::default()
        },
        user: args.upload_user.clone(),
        cache: dir.join(uploads::UPLOADS_DIR),
        gate_threads: concurrency,
        gate_store: url.is_some(),
        prune_every: args.prune_every,
    };
    let league_file = config.clone();

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let stopped = runtime.block_on(async move {
        // From here on the store is the runner's, on a thread of its own.
        let mut runner = runner::Runner::new(config, &dir, store, seed, shared, args.quiet).await?;
        runner.keep_logs = args.keep_logs;
        runner.archive_logs = !args.no_archive;
        runner.floor = league::DiskFloor::new(
            vec![dir.clone(), dir.join(league::LOGS_DIR)],
            args.min_free.bytes()?,
        );
        let sync = runner.sync_bots().await?;
        league::announce_sync(&sync, &args.file, &mut |line| say(line));
        let snapshot = runner.snapshot().await?;
        // Installed before the dashboard line, which scripts wait for: one that stops
        // the server as soon as it reads the line stops it cleanly (status 0).
        let stop = referee::stop_signal();
        let listener = remote::listen(args.listen).map_err(|error| referee::ListenError {
            addr: args.listen,
            option: "--listen",
            error,
        })?;
        let addr = listener
            .local_addr()
            .context("the listener has no address")?;
        // Always said, even with --quiet: tests and scripts read the port from it.
        eprintln!(
            "hus serve: dashboard on http://{addr}/ (league directory {})",
            dir.display()
        );
        // The bot port, for the league's remote bots.
        let mut port = None;
        if has_remote || args.bot_listen.is_some() {
            let mut config = remote::PortConfig::default();
            if let Some(listen) = args.bot_listen {
                config.listen = listen;
            }
            let registry = Arc::new(remote::Registry::new(tokens, lag_cap, config.max_per_bot));
            let addr = config.listen;
            let bound = remote::BotPort::bind(config, registry.clone())
                .await
                .map_err(|error| referee::ListenError {
                    addr,
                    option: "--bot-listen",
                    error,
                })?;
            eprintln!("hus serve: bot port on {}", bound.local_addr());
            runner.use_registry(registry);
            port = Some(bound);
        }
        let registry = port.as_ref().map(|p| p.registry().clone());
        let (shutdown_tx, shutdown_rx) = watch::channel(None::<&'static str>);
        let (commands_tx, commands_rx) = mpsc::channel(16);
        let uploads = Arc::new(uploads::Uploads::new(
            upload_settings,
            league_file,
            runner.store_caller(),
            commands_tx.clone(),
        )?);
        let app = Arc::new(state::AppState {
            dir: dir.clone(),
            snapshot: watch::channel(Arc::new(snapshot)).0,
            hub: Arc::new(live::Hub::new()),
            commands: commands_tx,
            started: Instant::now(),
            concurrency,
            remote: registry,
            reader,
            hosts: referee::web_host::AllowedHosts::new(addr, &args.allowed_host)?,
            live_slots: capacity::Capacity::new(limits.live, limits.live_per_address),
            refusals: Arc::new(admin::RefusalLog::default()),
            downloads: download::Downloads::new(download_limits),
            pages: pages::ReplayPages::new(pages::BUILDERS, pages::KEPT_BYTES),
            page_refusals: refused::PageRefusals::default(),
            max_page_moves: args.max_page_moves,
            uploads: uploads.clone(),
        });
        let upload_queue = tokio::spawn(uploads.run(shutdown_rx.clone()));
        let refusal_log = tokio::spawn(app.refusals.clone().run(shutdown_rx.clone()));
        let signals = {
            let tx = shutdown_tx.clone();
            tokio::spawn(async move {
                let name = stop.await;
                let _ = tx.send(Some(name));
            })
        };
        let router = web::router(app.clone(), shutdown_rx.clone());
        let feed = tokio::spawn(web::feed(app.clone(), shutdown_rx.clone()));
        let http = tokio::spawn(http::serve(
            listener,
            router,
            capacity::Capacity::new(limits.connections, limits.connections_per_address),
            shutdown_rx.clone(),
        ));
        let result = runner.run(app, commands_rx, shutdown_rx).await;
        // The runner ends on a signal or on an error: either way the pages go too.
        let _ = shutdown_tx.send(Some(match &result {
            Ok(name) => name,
            Err(_) => "an error",
        }));
        let _ = http.await;
        let _ = refusal_log.await;
        let _ = feed.await;
        let _ = upload_queue.await;
        drop(port);
        signals.abort();
        result.map_err(anyhow::Error::from)
    })?;
    drop(runtime);
    eprintln!(
        "hus serve: stopped by {stopped}; finished sets are kept, and the same command carries on"
    );
    Ok(ExitCode::SUCCESS)
}

/// Said at start by a server whose league has no book: a server plays without end, and
/// two deterministic bots then play the same two games (one per first mover) for ever
/// (docs/server.md, "Openings").
fn no_openings_warning(file: &std::path::Path) -> String {
    format!(
        "warning: {} names no openings: every game starts from the starting position, and \
         two bots that always answer a position with the same move play the same games \
         over and over; give the league a book with the key openings = \"FILE\" \
         (docs/openings.md; hus's openings/ has one for each preset at width 8)",
        file.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_hus_token_prints_is_what_the_league_file_reads_back() {
        let token = remote::new_token();
        let stored = remote::token_hash(&token);
        // `hus token` prints `token_sha256 = "HEX"`; the league file's parser reads it.
        assert_eq!(league::parse_sha256(&remote::hex(&stored)), Ok(stored));
        let text = format!(
            "[[bot]]\nname = \"local\"\ncommand = \"python3 a.py\"\n\n\
             [[bot]]\nname = \"far\"\nremote = true\ntoken_sha256 = \"{}\"\n\n\
             [[bot]]\nname = \"near\"\ncommand = \"python3 b.py\"\n",
            remote::hex(&stored)
        );
        let config = LeagueConfig::parse(std::path::Path::new("L.toml"), &text).unwrap();
        // Only the remote bot, with its token's hash: the registry lets it log in with
        // the token.
        let tokens = remote_tokens(&config);
        assert_eq!(tokens, HashMap::from([("far".to_string(), stored)]));
        assert!(remote::token_matches(&token, &tokens["far"]));
    }
}
