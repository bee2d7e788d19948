//! What every runner of a league does before its first set and around it, `hus league`,
//! `hus league --store`, `hus worker` and `hus serve` alike: settle the settings with
//! the store's, bring the store in line with the file, put interrupted sets back, read
//! the standings. The runners' loops (`run.rs`, `worker.rs`, the server's runner) and
//! the set pool (`pool.rs`) stand on it; it imports none of them.

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::{Error, Result};
use crate::file::{show_time, Anchor, LeagueConfig};
use crate::schedule::schedule;
use crate::set_files::{set_aside, LOGS_DIR};
use crate::standings::{LeagueInfo, Standings};
use crate::store::{BotEntry, Reads, SqliteStore, Store, SyncReport};
use crate::tally::Tally;

/// The store's file in the league's directory.
pub const STORE_FILE: &str = "league.sqlite";
/// What every runner of a league's directory does before its first set, `hus league`
/// and `hus serve` alike, once it holds the directory's lock and the settings are
/// settled: puts back every set a stopped run left running (their partial logs set
/// aside, so they are kept and never overwritten), telling `say` one line per set, and
/// checks that every sandboxed bot's sandbox starts (a machine that cannot sandbox is an
/// error before any set, as in `hus match`).
pub fn prepare_run<S: Store + ?Sized>(
    config: &LeagueConfig,
    store: &mut S,
    logs: &Path,
    say: &mut dyn FnMut(String),
) -> Result<()> {
    for r in store.requeue_running()? {
        let kept = set_aside(logs, &r.key.stem())?;
        say(format!(
            "{} was interrupted; it will be played again from its start{}",
            r.key,
            match kept.first() {
                Some(log) => format!(" (its partial log is kept as {})", log.display()),
                None => String::new(),
            }
        ));
    }
    for bot in &config.bots {
        bot.probe_sandbox().map_err(|error| Error::Sandbox {
            bot: bot.name.clone(),
            error,
        })?;
    }
    Ok(())
}

/// Opens the SQLite store of the league's directory `dir`, `hus league` and `hus
/// serve` alike, creating it at the league's first run. A store that lost its league (a
/// missing file, one of 0 bytes, or one without the league's settings) beside the logs of sets
/// played in the directory is refused ([`Error::LostStore`]) before anything is
/// written: taken for a new league, it would draw a new seed and set every log aside.
pub fn open_dir_store(dir: &Path) -> Result<SqliteStore> {
    let path = dir.join(STORE_FILE);
    let logs = dir.join(LOGS_DIR);
    let lost = |what: &'static str| -> Result<()> {
        match played_logs(&logs)? {
            0 => Ok(()),
            count => Err(Error::LostStore {
                store: path.clone(),
                what,
                logs: logs.clone(),
                count,
            }),
        }
    };
    match path.symlink_metadata() {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => lost("is missing")?,
        Ok(m) if m.is_file() && m.len() == 0 => lost("is empty (0 bytes)")?,
        _ => {}
    }
    let store = SqliteStore::open(&path, true)?;
    if store.settings()?.is_empty() {
        lost("holds no league settings")?;
    }
    Ok(store)
}

/// How many sets' logs `logs` holds (`STEM.jsonl`, with or without a compression
/// suffix; the set-aside attempts, `STEM.partial-N.jsonl`, are not counted).
fn played_logs(logs: &Path) -> Result<usize> {
    let entries = match std::fs::read_dir(logs) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(error) => {
            return Err(Error::Io {
                what: "cannot read the logs' directory",
                path: logs.to_path_buf(),
                error,
            })
        }
    };
    let mut count = 0;
    for entry in entries {
        let entry = entry.map_err(|error| Error::Io {
            what: "cannot read the logs' directory",
            path: logs.to_path_buf(),
            error,
        })?;
        // Only files: a link there is none of hus's (it never writes through one, and
        // refuses it when it comes to that name).
        if !entry.file_type().is_ok_and(|t| t.is_file()) {
            continue;
        }
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.contains(".jsonl") && !name.contains(".partial-") {
            count += 1;
        }
    }
    Ok(count)
}

/// The league's PostgreSQL store, for `hus league` and `hus serve` alike: `--store`
/// (or the environment variable HUS_STORE), else the file's `store` key; `None`: the
/// SQLite file of the league's directory.
pub fn store_url<'a>(given: Option<&'a str>, config: &'a LeagueConfig) -> Option<&'a str> {
    given.or(config.store.as_deref())
}

/// Brings the store in line with the file: the bots and the schedule from `seed`, with
/// a line on stderr for each bot that left, came back or changed its command.
pub(crate) fn sync_with_file(
    config: &LeagueConfig,
    store: &mut dyn Store,
    seed: u64,
    quiet: bool,
) -> Result<()> {
    // The entrants: the bots, or the teams when the file declares them.
    let entrants = config.entrants();
    let names: Vec<String> = entrants.iter().map(|(name, _)| name.clone()).collect();
    let plan = schedule(&names, &config.format, config.rounds, seed);
    let entries: Vec<BotEntry> = entrants
        .into_iter()
        .map(|(name, command)| BotEntry { name, command })
        .collect();
    let sync = store.sync(&entries, &plan)?;
    announce_sync(&sync, &config.path, &mut |line| {
        if !quiet {
            eprintln!("hus league: {line}");
        }
    });
    Ok(())
}

/// Says what a sync of the store with the league file changed among the bots, a line
/// each (`say` adds the command's name): a bot added, removed, back, or with another
/// command. At the league's first run every bot is new: nothing is said then.
pub fn announce_sync(sync: &SyncReport, file: &Path, say: &mut dyn FnMut(String)) {
    if !sync.first {
        for name in &sync.added_bots {
            say(format!(
                "{name} is new in {}: its sets join the schedule",
                file.display()
            ));
        }
    }
    for name in &sync.removed_bots {
        say(format!(
            "{name} is no longer in {}: its finished sets still count, it plays no more",
            file.display()
        ));
    }
    for name in &sync.returned_bots {
        say(format!("{name} is back in the league"));
    }
    for (name, before, now) in &sync.changed_commands {
        say(format!(
            "{name}'s command changed from {before:?} to {now:?}; its finished sets keep their results"
        ));
    }
}

/// The standings from everything in a store: its finished sets are read in batches
/// into a [`Tally`], so memory stays bounded by the number of bots and pairs however
/// many sets the store holds.
pub fn read_standings(store: &dyn Store) -> Result<Standings> {
    let info = LeagueInfo::from_settings(&store.settings()?);
    let progress = store.progress()?;
    let bots = store.bots()?;
    let mut tally = Tally::new();
    store.each_finished(0, &mut |_, set| tally.add(&set))?;
    Ok(tally.standings(info, progress, &bots))
}

pub(crate) fn print(text: &str) {
    use std::io::Write;
    // A closed stdout (`hus standings DIR | head`) is a normal end.
    let _ = std::io::stdout().write_all(text.as_bytes());
}

/// Compares the file's settings with those the league was played with (refusing a
/// change that makes results incomparable), stores them at the first run, and returns
/// the league's seed: the file's, else the stored one, else a fresh one.
pub fn settle_settings(config: &LeagueConfig, store: &mut dyn Store, dir: &Path) -> Result<u64> {
    let stored = store.settings()?;
    let time_key = match config.time {
        referee::TimeControl::PerMove(_) => "move_time",
        referee::TimeControl::Clock { .. } => "clock",
    };
    let fixed: [(&str, &str, String); 5] = [
        (
            "rules",
            "rules",
            format!("rules = \"{}\"", config.rules.preset().name()),
        ),
        (
            "width",
            "width",
            format!("width = {}", config.rules.width()),
        ),
        ("time", time_key, show_time(&config.time)),
        ("games", "games", format!("games = {}", config.games)),
        (
            "openings",
            "openings",
            shown("openings", &raw_value("openings", config)),
        ),
    ];
    let mut settings = BTreeMap::new();
    for (key, file_key, now) in fixed {
        // A league played before openings were stored played none.
        let before = match (key, stored.get(key)) {
            ("openings", None) if stored.contains_key("rules") => Some(""),
            (_, before) => before.map(String::as_str),
        };
        if let Some(before) = before {
            let before = shown(key, before);
            if before != now {
                return Err(Error::Incompatible {
                    place: config.place(file_key),
                    now,
                    before,
                    dir: dir.to_path_buf(),
                });
            }
        }
        settings.insert(key.to_string(), raw_value(key, config));
    }
    let stored_seed = stored.get("seed").and_then(|s| s.parse::<u64>().ok());
    let seed = match (config.seed, stored_seed) {
        (Some(file), Some(before)) if file != before => {
            return Err(Error::Incompatible {
                place: config.place("seed"),
                now: format!("seed = {file}"),
                before: format!("seed = {before}"),
                dir: dir.to_path_buf(),
            })
        }
        (Some(file), _) => file,
        (None, Some(before)) => before,
        (None, None) => {
            let fresh = rand::random::<u64>() % 1_000_000_000;
            eprintln!(
                "hus league: the file gives no seed; this league's seed is {fresh} (kept in {})",
                dir.join(STORE_FILE).display()
            );
            fresh
        }
    };
    settings.insert("seed".into(), seed.to_string());
    let (anchor, rating) = match &config.anchor {
        Anchor::PoolAverage(r) => (String::new(), *r),
        Anchor::Bot { name, rating } => (name.clone(), *rating),
    };
    settings.insert("anchor".into(), anchor);
    settings.insert("anchor_rating".into(), rating.to_string());
    settings.insert("file".into(), config.path.display().to_string());
    // Not compared: a league of teams names them in its standings.
    settings.insert(
        "teams".into(),
        crate::standings::teams_setting(&config.teams),
    );
    store.save_settings(&settings)?;
    Ok(seed)
}

/// The stored form of a compared setting: the same text the messages show. Openings
/// are stored as the path the file writes, the number of openings and a hash of them
/// (`book.txt 64 0123456789abcdef`), or empty for none.
fn raw_value(key: &str, config: &LeagueConfig) -> String {
    match key {
        "rules" => config.rules.preset().name().to_string(),
        "width" => config.rules.width().to_string(),
        "time" => show_time(&config.time),
        "openings" => match &config.openings {
            Some(o) => format!("{} {} {}", o.book.len(), o.hash(), o.written),
            None => String::new(),
        },
        _ => config.games.to_string(),
    }
}

/// A stored setting as the file would write it.
fn shown(key: &str, value: &str) -> String {
    match key {
        "rules" => format!("rules = \"{value}\""),
        "time" => value.to_string(),
        "openings" => {
            let mut parts = value.splitn(3, ' ');
            match (parts.next(), parts.next(), parts.next()) {
                (Some(count), Some(hash), Some(path)) => format!(
                    "openings = {} ({count} openings, content hash {hash})",
                    toml_string(path)
                ),
                _ => "no openings".to_string(),
            }
        }
        _ => format!("{key} = {value}"),
    }
}

/// A string as TOML writes it (a basic string, escaped).
fn toml_string(text: &str) -> String {
    toml::Value::String(text.to_string()).to_string()
}
