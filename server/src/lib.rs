//! `server`: the match server. `hus serve LEAGUE.toml` plays a league without end (the
//! `league` crate's file, store, logs and `play_claimed`, so every set goes through
//! `referee::play_set`), choosing each set where it shrinks the ratings' uncertainty
//! most ([`pairing`]), and serves a dashboard, a JSON API and live games (server-sent
//! events) from the same process (axum on hyper). docs/server.md describes it,
//! docs/api.md the API.
//!
//! - [`runner`]: the set loop, sole owner of the store; publishes snapshots.
//! - [`live`]: every record of every running set, fanned out to watchers.
//! - [`web`]: routes, security headers, request limits; [`http`]: the listener
//!   (connection count, header size and time).
//! - [`admin`]: the admin token (its SHA-256 only is stored; constant-time check).

#![deny(missing_docs)]

pub mod admin;
mod args;
pub mod http;
pub mod live;
pub mod pairing;
pub mod runner;
pub mod state;
pub mod web;

use std::process::ExitCode;
use std::sync::{Arc, RwLock};
use std::time::Instant;

use anyhow::Context;
use league::{DirLock, LeagueConfig, SqliteStore, Store};
use tokio::sync::{mpsc, watch};

pub use args::{ServeArgs, ServeTokenArgs};

/// `hus serve-token`: a new admin token, printed once; its digest replaces the
/// previous one in the league's directory.
pub fn run_serve_token(args: &ServeTokenArgs) -> anyhow::Result<ExitCode> {
    let config = LeagueConfig::load(&args.file)?;
    let dir = args.dir.clone().unwrap_or_else(|| config.default_dir());
    let token = admin::new_token(&dir)?;
    println!("{token}");
    eprintln!(
        "hus serve-token: the admin token is shown once, above; its SHA-256 is in {} (the previous token no longer works)",
        admin::token_file(&dir).display()
    );
    Ok(ExitCode::SUCCESS)
}

/// `hus serve`: plays the league and serves the dashboard until Ctrl-C or SIGTERM;
/// exit 0 then (the same command carries on).
pub fn run_serve(args: &ServeArgs) -> anyhow::Result<ExitCode> {
    let config = LeagueConfig::load(&args.file)?;
    let dir = args.dir.clone().unwrap_or_else(|| config.default_dir());
    let logs = dir.join(league::LOGS_DIR);
    std::fs::create_dir_all(&logs)
        .with_context(|| format!("cannot create the league's directory {}", logs.display()))?;
    let _lock = DirLock::acquire(&dir)?;
    let mut store = SqliteStore::open(&dir.join(league::STORE_FILE), true)?;
    let seed = league::settle_settings(&config, &mut store, &dir)?;
    let say = |line: String| {
        if !args.quiet {
            eprintln!("hus serve: {line}");
        }
    };
    for r in store.requeue_running()? {
        let kept = league::set_aside(&logs, &r.key.stem())?;
        say(format!(
            "{} was interrupted; it will be played again{}",
            r.key,
            match kept.first() {
                Some(log) => format!(" (its partial log is kept as {})", log.display()),
                None => String::new(),
            }
        ));
    }
    for bot in &config.bots {
        if let Some(sandbox) = &bot.limits.sandbox {
            sandbox
                .probe(&bot.spec, &bot.limits)
                .with_context(|| format!("bot {}'s sandbox", bot.name))?;
        }
    }
    if !args.listen.ip().is_loopback() {
        eprintln!(
            "warning: hus serve listens on {}, reachable from other machines",
            args.listen
        );
    }
    let nice = referee::raise_referee_priority();
    let shared = league::Shared::new(&config, dir.join(league::LOGS_DIR), nice);
    let concurrency = config.concurrency;
    let has_remote = config.bots.iter().any(|b| b.is_remote());
    let tokens = remote::Registry::tokens_of(&config);
    let lag_cap = config.lag_cap;
    let mut runner = runner::Runner::new(config, &dir, store, seed, shared, args.quiet)?;
    runner.sync_bots()?;
    let snapshot = runner.snapshot()?;

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let stopped = runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(args.listen)
            .await
            .with_context(|| format!("cannot listen on {}", args.listen))?;
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
            let bound = remote::BotPort::bind(config, registry.clone()).await?;
            eprintln!("hus serve: bot port on {}", bound.local_addr());
            runner.use_registry(registry);
            port = Some(bound);
        }
        let registry = port.as_ref().map(|p| p.registry().clone());
        let (shutdown_tx, shutdown_rx) = watch::channel(None::<&'static str>);
        let (commands_tx, commands_rx) = mpsc::channel(16);
        let app = Arc::new(state::AppState {
            dir: dir.clone(),
            snapshot: RwLock::new(Arc::new(snapshot)),
            hub: Arc::new(live::Hub::new()),
            commands: commands_tx,
            started: Instant::now(),
            concurrency,
            remote: registry,
        });
        let signals = {
            let tx = shutdown_tx.clone();
            tokio::spawn(async move {
                let name = referee::stop_signal().await;
                let _ = tx.send(Some(name));
            })
        };
        let router = web::router(app.clone(), shutdown_rx.clone());
        let http = tokio::spawn(http::serve(
            listener,
            router,
            args.max_connections,
            shutdown_rx.clone(),
        ));
        let result = runner.run(app, commands_rx, shutdown_rx).await;
        // The runner ends on a signal or on an error: either way the pages go too.
        let _ = shutdown_tx.send(Some(match &result {
            Ok(name) => name,
            Err(_) => "an error",
        }));
        let _ = http.await;
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
