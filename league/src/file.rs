//! The league file: TOML read by serde into raw structs that refuse unknown keys, then
//! checked into a [`LeagueConfig`]. Every error names the key and its line
//! (`LEAGUE.toml line 7: move_time: ...`). Paths in the file are relative to the file's
//! directory. The keys are documented in docs/league.md.

use std::collections::{BTreeMap, HashSet};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Duration;

use engine::{Preset, Rules};
use referee::{defaults, parse_bytes, parse_clock, parse_duration, BotSpec, Limits, TimeControl};
use serde::Deserialize;
use toml::Spanned;

use crate::error::{Error, Result};

/// Most games in one set, as for `hus match --games`.
const MAX_GAMES: u32 = 100_000;
/// Most rounds: far beyond any real league, low enough that a typo cannot schedule
/// billions of sets.
const MAX_ROUNDS: u32 = 10_000;
/// Most sets played at once.
const MAX_CONCURRENCY: u32 = 1024;
/// Longest bot name: names become parts of file names.
const MAX_NAME: usize = 40;
/// The rating of the anchor when the file names none: the pool's average.
pub const DEFAULT_ANCHOR_RATING: f64 = 1500.0;
/// The lag allowance's cap when the file gives none.
pub const DEFAULT_LAG_CAP: Duration = Duration::from_millis(100);
/// The largest `lag_cap`: beyond this, network time is not what is being credited.
const MAX_LAG_CAP: Duration = Duration::from_secs(5);

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLeague {
    rules: Option<Spanned<String>>,
    width: Option<Spanned<u32>>,
    games: Option<Spanned<u32>>,
    move_time: Option<Spanned<String>>,
    clock: Option<Spanned<String>>,
    ready_time: Option<Spanned<String>>,
    format: Option<Spanned<String>>,
    challengers: Option<Spanned<Vec<Spanned<String>>>>,
    rounds: Option<Spanned<u32>>,
    concurrency: Option<Spanned<u32>>,
    seed: Option<Spanned<u64>>,
    openings: Option<Spanned<String>>,
    anchor: Option<Spanned<String>>,
    anchor_rating: Option<Spanned<f64>>,
    lag_cap: Option<Spanned<String>>,
    store: Option<Spanned<String>>,
    gate: Option<Spanned<String>>,
    #[serde(default)]
    bot: Vec<Spanned<RawBot>>,
    #[serde(default)]
    team: Vec<Spanned<RawTeam>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTeam {
    name: Spanned<String>,
    members: Spanned<Vec<Spanned<String>>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBot {
    name: Spanned<String>,
    command: Option<Spanned<String>>,
    remote: Option<Spanned<bool>>,
    token_sha256: Option<Spanned<String>>,
    dir: Option<Spanned<String>>,
    #[serde(default)]
    env: Vec<Spanned<String>>,
    #[serde(default)]
    clean_env: bool,
    memory: Option<Spanned<String>>,
    cpu: Option<Spanned<String>>,
    files: Option<Spanned<u64>>,
    sandbox: Option<Spanned<bool>>,
    #[serde(default)]
    sandbox_writable: bool,
    #[serde(default)]
    sandbox_ro: Vec<Spanned<String>>,
    sandbox_processes: Option<Spanned<u32>>,
    sandbox_tmp: Option<Spanned<String>>,
    sandbox_memory: Option<Spanned<String>>,
    sandbox_user: Option<Spanned<String>>,
}

/// Checks the `store` key: a PostgreSQL connection URL. The message never repeats the
/// value (it may hold a password).
fn check_store_url(url: &str) -> std::result::Result<String, String> {
    if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
        return Err(
            "must be a PostgreSQL URL (postgres://USER:PASSWORD@HOST:PORT/DB); without \
             the key, the league is kept in its directory's SQLite file"
                .to_string(),
        );
    }
    crate::store::pg_url::parse(url).map_err(|e| e.to_string())?;
    Ok(url.to_string())
}

/// Who plays whom in each round.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Format {
    /// Every pair of bots once per round.
    RoundRobin,
    /// Each challenger against every bot that is not one; challengers do not meet.
    Gauntlet {
        /// The challengers' names, in the file's order.
        challengers: Vec<String>,
    },
}

/// Where the rating scale is pinned.
#[derive(Clone, Debug, PartialEq)]
pub enum Anchor {
    /// The mean rating of all bots is this.
    PoolAverage(f64),
    /// This bot's rating is fixed at this.
    Bot {
        /// The bot's name.
        name: String,
        /// Its rating.
        rating: f64,
    },
}

/// One bot of the league, checked.
#[derive(Clone, Debug)]
pub struct BotConfig {
    /// Its unique name, safe in file names.
    pub name: String,
    /// How it plays: a process the league starts, or a link it opens itself.
    pub transport: Transport,
    /// The uploaded version it is (docs/upload.md), which the logs' headers of its sets
    /// name (`bots[].version`); `None` for every bot of a league file.
    pub version: Option<referee::UploadedVersion>,
}

/// How a bot of the league plays: what the file's `command` or `remote = true` says.
// A league has a handful of bots: the size of a process's limits costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum Transport {
    /// A process the league starts from a command line, under limits.
    Process {
        /// Its command line; a relative program path with a slash is made relative to
        /// the league file's directory (`command` keeps what the file says).
        spec: BotSpec,
        /// Its limits; its working directory is the file's directory unless `dir` says
        /// otherwise.
        limits: Limits,
    },
    /// A remote bot (`remote = true`): it runs on its author's machine and connects to
    /// the server's bot port with a token whose SHA-256 is this.
    Link {
        /// The SHA-256 of its token.
        token_sha256: [u8; 32],
    },
}

impl BotConfig {
    /// Whether the bot plays remotely (connects with a token) rather than as a process.
    pub fn is_remote(&self) -> bool {
        matches!(self.transport, Transport::Link { .. })
    }

    /// Its command as the store, the standings and the logs name it: the file's
    /// `command`, or `remote NAME` for a remote bot.
    pub fn command(&self) -> String {
        match &self.transport {
            Transport::Process { spec, .. } => spec.command.clone(),
            Transport::Link { .. } => format!("remote {}", self.name),
        }
    }

    /// The command line and limits of a bot the league starts; `None` for a remote bot.
    pub fn process(&self) -> Option<(&BotSpec, &Limits)> {
        match &self.transport {
            Transport::Process { spec, limits } => Some((spec, limits)),
            Transport::Link { .. } => None,
        }
    }

    /// The SHA-256 of a remote bot's token; `None` for a bot the league starts.
    pub fn token_sha256(&self) -> Option<[u8; 32]> {
        match &self.transport {
            Transport::Process { .. } => None,
            Transport::Link { token_sha256 } => Some(*token_sha256),
        }
    }

    /// Sets the nice value its process runs at (`referee::raise_referee_priority`);
    /// nothing for a remote bot.
    pub fn set_nice(&mut self, nice: Option<i32>) {
        if let Transport::Process { limits, .. } = &mut self.transport {
            limits.nice = nice;
        }
    }

    /// Starts its sandbox once to see that it works (`referee::Sandbox::probe`), when
    /// the league starts it in one; nothing to do for a bot without a sandbox or a
    /// remote bot.
    pub fn probe_sandbox(&self) -> std::result::Result<(), referee::SandboxError> {
        match self.process() {
            Some((spec, limits)) => match &limits.sandbox {
                Some(sandbox) => sandbox.probe(spec, limits),
                None => Ok(()),
            },
            None => Ok(()),
        }
    }

    /// The nice value its process runs at; `None` for a remote bot.
    pub fn nice(&self) -> Option<i32> {
        self.process().and_then(|(_, limits)| limits.nice)
    }
}

/// A team of the league: its members take their side's turns in an order drawn for
/// each game (`referee::Lineup::Team`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TeamConfig {
    /// Its unique name, safe in file names.
    pub name: String,
    /// Its members, names of the file's bots, in the team's list order.
    pub members: Vec<String>,
}

/// The book of openings a league's sets start their games from (docs/openings.md).
#[derive(Clone, Debug)]
pub struct Openings {
    /// The path as the league file writes it (relative to the file's directory).
    pub written: String,
    /// The path, resolved against the league file's directory.
    pub path: PathBuf,
    /// The book's openings, checked against the league's rules, in the file's order.
    pub book: Vec<engine::AnyPosition>,
}

impl Openings {
    /// A hash of the book's content (its positions in order, in notation: comments and
    /// layout do not count), as 16 hexadecimal digits: SipHash-1-3 with fixed keys, the
    /// same with every build.
    pub fn hash(&self) -> String {
        use std::hash::Hasher;
        let mut h = siphasher::sip::SipHasher13::new_with_keys(0x6f70_656e, 0x696e_6773);
        for p in &self.book {
            h.write(p.to_string().as_bytes());
            h.write_u8(b'\n');
        }
        format!("{:016x}", h.finish())
    }
}

/// A league file, checked: what the rest of the league sees instead of raw TOML.
#[derive(Clone, Debug)]
pub struct LeagueConfig {
    /// The file, as given.
    pub path: PathBuf,
    /// The directory relative paths of the file are resolved against.
    pub base: PathBuf,
    /// Preset and width of every game.
    pub rules: Rules,
    /// Games per set.
    pub games: u32,
    /// Time per move or clock.
    pub time: TimeControl,
    /// Time from a bot's start to its `ready`.
    pub ready_time: Duration,
    /// Round-robin or gauntlet.
    pub format: Format,
    /// How many times the pairings are played.
    pub rounds: u32,
    /// Most sets played at once.
    pub concurrency: usize,
    /// The league's seed, when the file gives one.
    pub seed: Option<u64>,
    /// The league's openings, when the file names a book of them.
    pub openings: Option<Openings>,
    /// Where the ratings are pinned.
    pub anchor: Anchor,
    /// The most network time credited to a remote bot per move (its measured
    /// round-trip time, up to this; PROTOCOL.md, "Remote bots"). Zero: network time
    /// counts against the bot.
    pub lag_cap: Duration,
    /// The bots, in the file's order.
    pub bots: Vec<BotConfig>,
    /// The teams, in the file's order; empty when the league is one of bots. When the
    /// file declares teams, the teams are the league's entrants: they are scheduled,
    /// rated and ranked, and the bots only play as their members.
    pub teams: Vec<TeamConfig>,
    /// The line of each top-level key the file sets, for messages about it later.
    pub lines: BTreeMap<&'static str, usize>,
    /// The league's PostgreSQL store (`store = "postgres://..."`), used by `hus league`
    /// when no `--store` is given; `None`: the SQLite store of the league's directory.
    pub store: Option<String>,
    /// The SPRT a new uploaded version plays against the bot's active version before
    /// it replaces it (`gate = "sprt elo0=0 elo1=10"`, docs/upload.md); `None`: a
    /// version that passes its validation set replaces the active one at once.
    pub gate: Option<Gate>,
}

/// The test an author may ask for in a league without a gate (`POST
/// /api/bots/NAME/versions/N/sprt`), written as the `gate` key.
pub const DEFAULT_GATE: &str = "sprt elo0=0 elo1=10";

/// Games a gate's SPRT plays at most when its key gives no `games=`.
pub const DEFAULT_GATE_GAMES: u32 = 2000;

/// Game pairs in each batch of a gate's test when its key gives no `batch=`: a batch
/// is one set of twice as many games, played by the server or a worker.
pub const DEFAULT_GATE_BATCH: u32 = 4;

/// The most game pairs in a batch (`batch=`).
pub const MAX_GATE_BATCH: u32 = 1000;

/// The `gate` key, checked: a pentanomial SPRT of a new version against the active
/// one, in game pairs, stopped when it decides or after `games` games.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Gate {
    /// The test: H0 the new version is `elo0` Elo stronger, H1 `elo1`; its error
    /// rates (0.05 each unless the key says otherwise).
    pub sprt: ratings::Sprt,
    /// The most games played (even: pairs); past them the test is undecided, and an
    /// undecided test does not accept the version.
    pub games: u32,
    /// Game pairs in each batch (a set of `2 * batch` games, played by the server's
    /// threads or a worker); the test's tally grows by whole batches.
    pub batch: u32,
}

/// Parses the `gate` key's value: `sprt` then `KEY=VALUE` items separated by spaces
/// or commas: `elo0`, `elo1`, optionally `alpha` and `beta` (read by
/// `referee::parse_sprt`, the parser of `hus match --sprt`), and `games` (the most
/// games, even, [`DEFAULT_GATE_GAMES`] by default) and `batch` (game pairs in a batch,
/// [`DEFAULT_GATE_BATCH`] by default, 1 to [`MAX_GATE_BATCH`]).
pub fn parse_gate(text: &str) -> std::result::Result<Gate, String> {
    let rest = match text.trim().strip_prefix("sprt") {
        Some(rest) if rest.is_empty() || rest.starts_with([' ', '\t', ',']) => rest,
        _ => {
            return Err(format!(
                "{text:?} is not a gate: the one kind is an SPRT, e.g. \"sprt elo0=0 elo1=10\""
            ))
        }
    };
    let mut games = None;
    let mut batch = None;
    let mut test = Vec::new();
    for item in rest.split([' ', '\t', ',']).filter(|i| !i.is_empty()) {
        if let Some(value) = item.strip_prefix("batch=") {
            let n: u32 = value
                .parse()
                .map_err(|_| format!("batch={value}: {value:?} is not a number of game pairs"))?;
            if batch.replace(n).is_some() {
                return Err("batch is given twice".into());
            }
            if !(1..=MAX_GATE_BATCH).contains(&n) {
                return Err(format!(
                    "batch={n}: the game pairs of a batch must be between 1 and {MAX_GATE_BATCH}"
                ));
            }
            continue;
        }
        match item.strip_prefix("games=") {
            Some(value) => {
                let n: u32 = value
                    .parse()
                    .map_err(|_| format!("games={value}: {value:?} is not a number of games"))?;
                if games.replace(n).is_some() {
                    return Err("games is given twice".into());
                }
                if !(2..=MAX_GAMES).contains(&n) || n % 2 == 1 {
                    return Err(format!(
                        "games={n}: the most games must be even (games go in pairs), \
                         between 2 and {MAX_GAMES}"
                    ));
                }
            }
            None => test.push(item),
        }
    }
    if test.is_empty() {
        return Err("give the test's elo0 and elo1, e.g. \"sprt elo0=0 elo1=10\"".into());
    }
    let sprt = referee::parse_sprt(&test.join(","))?;
    Ok(Gate {
        sprt,
        games: games.unwrap_or(DEFAULT_GATE_GAMES),
        batch: batch.unwrap_or(DEFAULT_GATE_BATCH),
    })
}

impl LeagueConfig {
    /// Reads and checks a league file.
    pub fn load(path: &Path) -> Result<LeagueConfig> {
        let text = std::fs::read_to_string(path).map_err(|error| Error::ReadFile {
            path: path.to_path_buf(),
            error,
        })?;
        LeagueConfig::parse(path, &text)
    }

    /// Checks the text of a league file; `path` names it in messages and anchors its
    /// relative paths.
    pub fn parse(path: &Path, text: &str) -> Result<LeagueConfig> {
        let file = FileText { path, text };
        let raw: RawLeague =
            toml::from_str(text).map_err(|e| file.error(e.span(), file.explain(&e)))?;
        let base = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        // Each top-level key: its value checked, or the default (referee::defaults for
        // what `hus match` also sets), its line kept for later messages (`place`).
        let mut keys = Keys {
            file: &file,
            lines: BTreeMap::new(),
        };
        let preset = keys.get("rules", &raw.rules, defaults::PRESET, |r| {
            r.parse::<Preset>().map_err(|e| e.to_string())
        })?;
        let width = keys.get("width", &raw.width, defaults::WIDTH, |&w| Ok(w as usize))?;
        let rules = Rules::new(preset, width).map_err(|e| {
            let span = raw.width.as_ref().map(|w| w.span());
            file.error(span, format!("width: {e}"))
        })?;
        let games = keys.get("games", &raw.games, defaults::GAMES, |&n| {
            between(n, MAX_GAMES)
        })?;
        if let (Some(_), Some(c)) = (&raw.move_time, &raw.clock) {
            return Err(file.error(
                Some(c.span()),
                "clock: give either move_time or clock, not both".to_string(),
            ));
        }
        let move_time = keys.get("move_time", &raw.move_time, defaults::MOVE_TIME, |m| {
            positive(parse_duration(m).map_err(|e| format!("{e:#}"))?)
        })?;
        let time = keys.get("clock", &raw.clock, TimeControl::PerMove(move_time), |c| {
            parse_clock(c).map_err(|e| format!("{e:#}"))
        })?;
        let ready_time = keys.get("ready_time", &raw.ready_time, defaults::READY_TIME, |r| {
            positive(parse_duration(r).map_err(|e| format!("{e:#}"))?)
        })?;
        let rounds = keys.get("rounds", &raw.rounds, 1, |&n| between(n, MAX_ROUNDS))?;
        let concurrency = keys.get("concurrency", &raw.concurrency, cores(), |&n| {
            Ok(between(n, MAX_CONCURRENCY)? as usize)
        })?;
        let seed = keys.get("seed", &raw.seed, None, |&s| Ok(Some(s)))?;
        let openings = keys.get("openings", &raw.openings, None, |o| {
            let p = base.join(o);
            if !p.is_file() {
                return Err(format!("{} is not a file", p.display()));
            }
            let book = referee::read_openings(&p, rules).map_err(|e| e.to_string())?;
            Ok(Some(Openings {
                written: o.clone(),
                path: p,
                book,
            }))
        })?;
        let store = keys.get("store", &raw.store, None, |s| check_store_url(s).map(Some))?;
        let gate = keys.get("gate", &raw.gate, None, |g| parse_gate(g).map(Some))?;

        // Bots.
        let mut bots = Vec::with_capacity(raw.bot.len());
        let mut names = HashSet::new();
        for b in &raw.bot {
            let bot = b.get_ref();
            let name = bot.name.get_ref();
            check_name(name).map_err(|e| file.error(Some(bot.name.span()), e))?;
            if !names.insert(name.clone()) {
                return Err(file.error(
                    Some(bot.name.span()),
                    format!(
                        "name: a bot named {name:?} is already in the league; names must be unique"
                    ),
                ));
            }
            bots.push(check_bot(&file, &base, bot, b.span())?);
        }
        if bots.len() < 2 {
            let span = raw.bot.last().map(|b| b.span());
            return Err(file.error(
                span,
                format!(
                    "a league needs at least two bots ([[bot]] tables), this file has {}",
                    bots.len()
                ),
            ));
        }

        // Teams: when the file declares any, they are the entrants.
        let mut teams = Vec::with_capacity(raw.team.len());
        let mut team_names = HashSet::new();
        for t in &raw.team {
            let team = t.get_ref();
            let name = team.name.get_ref();
            check_name(name).map_err(|e| file.error(Some(team.name.span()), e))?;
            if names.contains(name) {
                return Err(file.error(
                    Some(team.name.span()),
                    format!("name: {name:?} is already the name of a bot; a team needs a name of its own"),
                ));
            }
            if !team_names.insert(name.clone()) {
                return Err(file.error(
                    Some(team.name.span()),
                    format!(
                        "name: a team named {name:?} is already in the league; names must be unique"
                    ),
                ));
            }
            let mut members = Vec::new();
            for m in team.members.get_ref() {
                if !names.contains(m.get_ref()) {
                    return Err(file.error(
                        Some(m.span()),
                        format!("members: no bot is named {:?}", m.get_ref()),
                    ));
                }
                if members.contains(m.get_ref()) {
                    return Err(file.error(
                        Some(m.span()),
                        format!("members: {:?} is named twice", m.get_ref()),
                    ));
                }
                members.push(m.get_ref().clone());
            }
            if members.len() < 2 {
                return Err(file.error(
                    Some(team.members.span()),
                    format!(
                        "members: a team needs two or more bots, team {name:?} has {}",
                        members.len()
                    ),
                ));
            }
            teams.push(TeamConfig {
                name: name.clone(),
                members,
            });
        }
        if teams.len() == 1 {
            return Err(file.error(
                raw.team.last().map(|t| t.span()),
                "a league of teams needs at least two teams ([[team]] tables), this file has 1"
                    .to_string(),
            ));
        }
        // Challengers and the anchor name entrants: the teams, if there are any.
        let (names, entrant_count, what) = if teams.is_empty() {
            (names, bots.len(), "bot")
        } else {
            (team_names, teams.len(), "team")
        };

        let format = match (&raw.format, &raw.challengers) {
            (None, None) => Format::RoundRobin,
            (Some(f), challengers) => match f.get_ref().as_str() {
                "round-robin" => {
                    if let Some(c) = challengers {
                        return Err(file.error(
                            Some(c.span()),
                            "challengers: only a gauntlet has challengers (format = \"gauntlet\")"
                                .to_string(),
                        ));
                    }
                    Format::RoundRobin
                }
                "gauntlet" => {
                    let Some(list) = challengers else {
                        return Err(file.error(
                            Some(f.span()),
                            "format: a gauntlet needs challengers = [\"name\", ...]".to_string(),
                        ));
                    };
                    let mut seen = HashSet::new();
                    let mut out = Vec::new();
                    for c in list.get_ref() {
                        if !names.contains(c.get_ref()) {
                            return Err(file.error(
                                Some(c.span()),
                                format!("challengers: no {what} is named {:?}", c.get_ref()),
                            ));
                        }
                        if !seen.insert(c.get_ref().clone()) {
                            return Err(file.error(
                                Some(c.span()),
                                format!("challengers: {:?} is named twice", c.get_ref()),
                            ));
                        }
                        out.push(c.get_ref().clone());
                    }
                    if out.is_empty() || out.len() == entrant_count {
                        return Err(file.error(
                            Some(list.span()),
                            format!("challengers: a gauntlet needs at least one challenger and one {what} that is not one"),
                        ));
                    }
                    Format::Gauntlet { challengers: out }
                }
                other => {
                    return Err(file.error(
                        Some(f.span()),
                        format!(
                        "format: {other:?} is not a format (use \"round-robin\" or \"gauntlet\")"
                    ),
                    ))
                }
            },
            (None, Some(c)) => {
                return Err(file.error(
                    Some(c.span()),
                    "challengers: only a gauntlet has challengers (format = \"gauntlet\")"
                        .to_string(),
                ))
            }
        };

        let rating = keys.get(
            "anchor_rating",
            &raw.anchor_rating,
            DEFAULT_ANCHOR_RATING,
            |&v| {
                if !v.is_finite() || v.abs() > 1e6 {
                    return Err(format!("{v} is not a usable rating"));
                }
                Ok(v)
            },
        )?;
        let anchor = keys.get("anchor", &raw.anchor, Anchor::PoolAverage(rating), |a| {
            if !names.contains(a) {
                return Err(format!("no {what} is named {a:?}"));
            }
            Ok(Anchor::Bot {
                name: a.clone(),
                rating,
            })
        })?;
        let lag_cap = keys.get("lag_cap", &raw.lag_cap, DEFAULT_LAG_CAP, |l| {
            let d = parse_duration(l).map_err(|e| format!("{e:#}"))?;
            if d > MAX_LAG_CAP {
                return Err(format!(
                    "at most {} ms, not {} ms",
                    MAX_LAG_CAP.as_millis(),
                    d.as_millis()
                ));
            }
            Ok(d)
        })?;

        Ok(LeagueConfig {
            path: path.to_path_buf(),
            base,
            rules,
            games,
            time,
            ready_time,
            format,
            rounds,
            concurrency,
            seed,
            openings,
            anchor,
            lag_cap,
            bots,
            teams,
            lines: keys.lines,
            store,
            gate,
        })
    }

    /// `FILE line N` for a top-level key the file sets, else `FILE`.
    pub fn place(&self, key: &str) -> String {
        match self.lines.get(key) {
            Some(line) => format!("{} line {line}", self.path.display()),
            None => self.path.display().to_string(),
        }
    }

    /// The league's directory when `--dir` is not given: beside the file, named after
    /// its stem (`leagues/sample.toml` gives `leagues/sample`).
    pub fn default_dir(&self) -> PathBuf {
        let stem = self
            .path
            .file_stem()
            .map(|s| s.to_os_string())
            .unwrap_or_else(|| "league".into());
        self.base.join(stem)
    }

    /// The league's entrants, each with the command the store keeps for it: the bots,
    /// or, when the file declares teams, the teams (their command is their members'
    /// names and commands: `greedy: python3 greedy_bot.py + random: ...`).
    pub fn entrants(&self) -> Vec<(String, String)> {
        if self.teams.is_empty() {
            return self
                .bots
                .iter()
                .map(|b| (b.name.clone(), b.command()))
                .collect();
        }
        self.teams
            .iter()
            .map(|t| {
                let members: Vec<String> = t
                    .members
                    .iter()
                    .map(|m| match self.bot(m) {
                        Some(b) => format!("{m}: {}", b.command()),
                        None => m.clone(),
                    })
                    .collect();
                (t.name.clone(), members.join(" + "))
            })
            .collect()
    }

    /// The team of this name, if the file has it.
    pub fn team(&self, name: &str) -> Option<&TeamConfig> {
        self.teams.iter().find(|t| t.name == name)
    }

    /// The bot of this name, if the file has it.
    pub fn bot(&self, name: &str) -> Option<&BotConfig> {
        self.bots.iter().find(|b| b.name == name)
    }
}

/// The text of the file, for turning byte offsets into lines.
struct FileText<'a> {
    path: &'a Path,
    text: &'a str,
}

impl FileText<'_> {
    fn line(&self, offset: usize) -> usize {
        let end = offset.min(self.text.len());
        self.text.as_bytes()[..end]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1
    }

    /// The parser's message, with the key it concerns and in the file's terms.
    fn explain(&self, e: &toml::de::Error) -> String {
        let mut message = e.message().trim_end().to_string();
        for (rust, words) in [
            ("expected u32", "expected a whole number of 0 or more"),
            ("expected u64", "expected a whole number of 0 or more"),
            ("expected f64", "expected a number"),
        ] {
            message = message.replace(rust, words);
        }
        // Only bots and teams have required keys.
        if message.starts_with("missing field `members`") {
            return format!("[[team]]: {message} (every team needs a name and members)");
        }
        if message.starts_with("missing field") {
            return format!(
                "[[bot]]: {message} (every bot needs a name, and a command unless it is remote)"
            );
        }
        // The key of the line the error is on, when the message does not name it.
        let key = e.span().and_then(|span| {
            let bytes = self.text.as_bytes();
            let start = bytes[..span.start.min(bytes.len())]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |i| i + 1);
            // A newline is a character boundary, so this slice cannot fail; `get` keeps
            // it so whatever the parser's offsets are.
            let line = self.text.get(start..)?.lines().next()?;
            let (key, _) = line.split_once('=')?;
            let key = key.trim();
            let bare = !key.is_empty()
                && key
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.');
            bare.then(|| key.to_string())
        });
        match key {
            Some(key) if !message.contains(&format!("`{key}`")) => format!("{key}: {message}"),
            _ => message,
        }
    }

    fn error(&self, span: Option<Range<usize>>, message: String) -> Error {
        let place = match span {
            Some(span) => format!("{} line {}", self.path.display(), self.line(span.start)),
            None => self.path.display().to_string(),
        };
        Error::File { place, message }
    }
}

fn check_bot(file: &FileText, base: &Path, bot: &RawBot, span: Range<usize>) -> Result<BotConfig> {
    let name = bot.name.get_ref().clone();
    let at = |span: Range<usize>, key: &str, e: String| {
        file.error(Some(span), format!("bot {name:?}: {key}: {e}"))
    };
    if bot.remote.as_ref().is_some_and(|r| *r.get_ref()) {
        return check_remote_bot(file, bot, span);
    }
    if let Some(t) = &bot.token_sha256 {
        return Err(at(
            t.span(),
            "token_sha256",
            "only a remote bot (remote = true) has a token".to_string(),
        ));
    }
    let Some(command) = &bot.command else {
        return Err(file.error(
            Some(span),
            format!("bot {name:?}: command: missing (a bot that is not remote needs a command)"),
        ));
    };
    let mut spec = BotSpec::parse(command.get_ref())
        .map_err(|e| at(command.span(), "command", format!("{e:#}")))?;
    // A program path with a slash means the league file's directory, wherever the bot
    // runs; a bare program name is looked up in PATH as usual.
    if spec.argv[0].contains('/') && Path::new(&spec.argv[0]).is_relative() {
        let program = base.join(&spec.argv[0]);
        spec.argv[0] = program.to_string_lossy().into_owned();
    }
    if spec.argv[0].contains('/') && !Path::new(&spec.argv[0]).is_file() {
        return Err(at(
            command.span(),
            "command",
            format!("the program {} does not exist", spec.argv[0]),
        ));
    }
    let cwd = match &bot.dir {
        Some(d) => {
            let dir = base.join(d.get_ref());
            if !dir.is_dir() {
                return Err(at(
                    d.span(),
                    "dir",
                    format!("{} is not a directory", dir.display()),
                ));
            }
            dir
        }
        None => base.to_path_buf(),
    };
    let memory = match &bot.memory {
        Some(m) => {
            Some(parse_bytes(m.get_ref()).map_err(|e| at(m.span(), "memory", format!("{e:#}")))?)
        }
        None => None,
    };
    let cpu_seconds = match &bot.cpu {
        Some(c) => {
            let d =
                parse_duration(c.get_ref()).map_err(|e| at(c.span(), "cpu", format!("{e:#}")))?;
            Some(d.as_secs().max(1))
        }
        None => None,
    };
    if let Some(f) = &bot.files {
        if *f.get_ref() == 0 {
            return Err(at(f.span(), "files", "must be at least 1".to_string()));
        }
    }
    for var in &bot.env {
        let name_part = var.get_ref().split('=').next().unwrap_or("");
        if name_part.is_empty() || name_part.contains('\0') || var.get_ref().contains('\0') {
            return Err(at(
                var.span(),
                "env",
                format!("{:?} is not NAME=value or NAME", var.get_ref()),
            ));
        }
    }
    let env = if bot.clean_env || !bot.env.is_empty() {
        Some(bot.env.iter().map(|v| v.get_ref().clone()).collect())
    } else {
        None
    };
    let (sandbox, spec, cwd) = check_sandbox(file, base, bot, &name, spec, cwd)?;
    Ok(BotConfig {
        name,
        transport: Transport::Process {
            spec,
            limits: Limits {
                memory,
                cpu_seconds,
                open_files: bot.files.as_ref().map(|f| *f.get_ref()),
                cwd: Some(cwd),
                env,
                nice: None,
                sandbox,
            },
        },
        version: None,
    })
}

/// A remote bot: a name and the SHA-256 of its token, nothing about a process.
fn check_remote_bot(file: &FileText, bot: &RawBot, span: Range<usize>) -> Result<BotConfig> {
    let name = bot.name.get_ref().clone();
    let at = |span: Range<usize>, key: &str, e: String| {
        file.error(Some(span), format!("bot {name:?}: {key}: {e}"))
    };
    if let Some(c) = &bot.command {
        return Err(at(
            c.span(),
            "command",
            "a remote bot has no command: it runs on its author's machine and connects with hus connect".to_string(),
        ));
    }
    let process_keys = [
        (bot.dir.is_some(), "dir"),
        (!bot.env.is_empty(), "env"),
        (bot.clean_env, "clean_env"),
        (bot.memory.is_some(), "memory"),
        (bot.cpu.is_some(), "cpu"),
        (bot.files.is_some(), "files"),
        (bot.sandbox.is_some(), "sandbox"),
        (bot.sandbox_writable, "sandbox_writable"),
        (!bot.sandbox_ro.is_empty(), "sandbox_ro"),
        (bot.sandbox_processes.is_some(), "sandbox_processes"),
        (bot.sandbox_tmp.is_some(), "sandbox_tmp"),
        (bot.sandbox_memory.is_some(), "sandbox_memory"),
        (bot.sandbox_user.is_some(), "sandbox_user"),
    ];
    if let Some((_, key)) = process_keys.iter().find(|(set, _)| *set) {
        return Err(file.error(
            Some(span),
            format!(
                "bot {name:?}: {key}: a remote bot runs on its author's machine; {key} is only for bots the league runs"
            ),
        ));
    }
    let Some(token) = &bot.token_sha256 else {
        return Err(file.error(
            Some(span),
            format!(
                "bot {name:?}: token_sha256: missing (a remote bot needs the hash of its token: run hus token)"
            ),
        ));
    };
    let hash = parse_sha256(token.get_ref()).map_err(|e| at(token.span(), "token_sha256", e))?;
    Ok(BotConfig {
        name,
        transport: Transport::Link { token_sha256: hash },
        version: None,
    })
}

/// 64 hexadecimal digits (what `hus token` prints) into the 32 bytes of a SHA-256.
pub fn parse_sha256(text: &str) -> std::result::Result<[u8; 32], String> {
    let digits = text.as_bytes();
    if digits.len() != 64 {
        return Err(format!(
            "expected the 64 hexadecimal digits of a SHA-256 (as hus token prints them), got {} characters",
            text.chars().count()
        ));
    }
    let mut out = [0u8; 32];
    for (i, pair) in digits.chunks(2).enumerate() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (hex(pair[0]), hex(pair[1])) {
            (Some(h), Some(l)) => out[i] = (h * 16 + l) as u8,
            _ => {
                return Err(format!(
                    "{:?} at character {} is not a hexadecimal digit",
                    String::from_utf8_lossy(pair),
                    2 * i + 1
                ))
            }
        }
    }
    Ok(out)
}

/// The bot's sandbox, built from its `sandbox_*` keys as `hus match --sandbox` builds it
/// from its flags (both through `referee::SandboxOptions`), with
/// the paths of the file made relative to its directory: the sandbox's directory is the
/// bot's `dir` if the file gives one, else the directory of the file its command names.
/// The bot then runs in that directory.
fn check_sandbox(
    file: &FileText,
    base: &Path,
    bot: &RawBot,
    name: &str,
    spec: BotSpec,
    cwd: PathBuf,
) -> Result<(Option<referee::Sandbox>, BotSpec, PathBuf)> {
    let on = bot.sandbox.as_ref().is_some_and(|s| *s.get_ref());
    if !on {
        let stray = [
            (bot.sandbox_writable, "sandbox_writable"),
            (!bot.sandbox_ro.is_empty(), "sandbox_ro"),
            (bot.sandbox_processes.is_some(), "sandbox_processes"),
            (bot.sandbox_tmp.is_some(), "sandbox_tmp"),
            (bot.sandbox_memory.is_some(), "sandbox_memory"),
            (bot.sandbox_user.is_some(), "sandbox_user"),
        ];
        if let Some((_, key)) = stray.iter().find(|(set, _)| *set) {
            let span = bot
                .sandbox
                .as_ref()
                .map(|s| s.span())
                .or(Some(bot.name.span()));
            return Err(file.error(
                span,
                format!("bot {name:?}: {key}: only with sandbox = true"),
            ));
        }
        return Ok((None, spec, cwd));
    }
    let at = bot.sandbox.as_ref().map(|s| s.span());
    // The command's paths mean the file's directory; the sandbox looks for the bot's
    // directory among them, so they are made absolute first.
    let mut absolute = spec.clone();
    for arg in absolute.argv.iter_mut().skip(1) {
        if arg.starts_with('-') || Path::new(arg.as_str()).is_absolute() {
            continue;
        }
        let path = base.join(arg.as_str());
        if path.exists() {
            if let Ok(full) = std::fs::canonicalize(&path) {
                *arg = full.to_string_lossy().into_owned();
            }
        }
    }
    let tmp_size = match &bot.sandbox_tmp {
        Some(size) => Some(parse_bytes(size.get_ref()).map_err(|e| {
            file.error(
                Some(size.span()),
                format!("bot {name:?}: sandbox_tmp: {e:#}"),
            )
        })?),
        None => None,
    };
    let memory = match &bot.sandbox_memory {
        Some(size) => Some(parse_bytes(size.get_ref()).map_err(|e| {
            file.error(
                Some(size.span()),
                format!("bot {name:?}: sandbox_memory: {e:#}"),
            )
        })?),
        None => None,
    };
    let options = referee::SandboxOptions {
        writable: bot.sandbox_writable,
        read_only: bot
            .sandbox_ro
            .iter()
            .map(|p| base.join(p.get_ref()))
            .collect(),
        max_processes: bot.sandbox_processes.as_ref().map(|n| *n.get_ref()),
        tmp_size,
        memory,
        user: bot.sandbox_user.as_ref().map(|u| u.get_ref().clone()),
    };
    let dir = bot.dir.as_ref().map(|_| cwd.clone());
    let (sandbox, spec) = options
        .sandbox_for(&absolute, dir.as_deref())
        .map_err(|e| {
            use referee::SandboxOption as O;
            let span = |key: Option<std::ops::Range<usize>>| key.or(at.clone());
            let (key, span) = match e.option {
                O::BotDir => ("sandbox", at.clone()),
                O::ReadOnly => ("sandbox_ro", span(bot.sandbox_ro.first().map(|p| p.span()))),
                O::MaxProcesses => (
                    "sandbox_processes",
                    span(bot.sandbox_processes.as_ref().map(|n| n.span())),
                ),
                O::TmpSize => (
                    "sandbox_tmp",
                    span(bot.sandbox_tmp.as_ref().map(|t| t.span())),
                ),
                O::Memory => (
                    "sandbox_memory",
                    span(bot.sandbox_memory.as_ref().map(|t| t.span())),
                ),
                O::User => (
                    "sandbox_user",
                    span(bot.sandbox_user.as_ref().map(|u| u.span())),
                ),
            };
            file.error(span, format!("bot {name:?}: {key}: {}", e.error))
        })?;
    let sandbox = Some(sandbox);
    let cwd = sandbox
        .as_ref()
        .map(|s| s.bot_dir().to_path_buf())
        .unwrap_or(cwd);
    Ok((sandbox, spec, cwd))
}

/// Names become parts of log file names and of the set's identity.
fn check_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= MAX_NAME
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "name: {name:?} is not a usable bot name: use 1 to {MAX_NAME} letters, digits, '-' or '_'"
        ))
    }
}

/// A time of the file's, checked: more than 0, at most a day.
fn positive(d: Duration) -> std::result::Result<Duration, String> {
    if d.is_zero() {
        return Err("must be more than 0".to_string());
    }
    if d > Duration::from_secs(24 * 3600) {
        return Err("must be at most 24h".to_string());
    }
    Ok(d)
}

/// A count of the file's, checked: from 1 to `max`.
fn between(n: u32, max: u32) -> std::result::Result<u32, String> {
    if n == 0 || n > max {
        return Err(format!("must be between 1 and {max}, not {n}"));
    }
    Ok(n)
}

/// The top-level keys of a file being checked, and the line of each key it sets.
struct Keys<'a> {
    file: &'a FileText<'a>,
    lines: BTreeMap<&'static str, usize>,
}

impl Keys<'_> {
    /// The setting of top-level `key`: its `value` checked by `check`, or `default`
    /// when the file does not set it. Keeps the key's line; an error of `check` is
    /// placed at it, after `key: `.
    fn get<V, T>(
        &mut self,
        key: &'static str,
        value: &Option<Spanned<V>>,
        default: T,
        check: impl FnOnce(&V) -> std::result::Result<T, String>,
    ) -> Result<T> {
        let Some(value) = value else {
            return Ok(default);
        };
        self.lines.insert(key, self.file.line(value.span().start));
        check(value.get_ref())
            .map_err(|e| self.file.error(Some(value.span()), format!("{key}: {e}")))
    }
}

/// The machine's cores, as the default concurrency.
pub fn cores() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

pub use referee::show_duration;

/// The time control as a line of the file: `move_time = "100ms"`, `clock = "60s+1s"`.
pub fn show_time(time: &TimeControl) -> String {
    match time {
        TimeControl::PerMove(d) => format!("move_time = \"{}\"", show_duration(*d)),
        TimeControl::Clock { base, increment } => format!(
            "clock = \"{}+{}\"",
            show_duration(*base),
            show_duration(*increment)
        ),
    }
}
