//! The league file: TOML read by serde into raw structs that refuse unknown keys, then
//! checked into a [`LeagueConfig`]. Every error names the key and its line
//! (`LEAGUE.toml line 7: move_time: ...`). Paths in the file are relative to the file's
//! directory. The keys are documented in docs/league.md.

use std::collections::{BTreeMap, HashSet};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Duration;

use engine::{Preset, Rules};
use referee::{parse_bytes, parse_clock, parse_duration, BotSpec, Limits, TimeControl};
use serde::Deserialize;
use toml::Spanned;

use crate::error::{Error, Result};

/// Most games in one set, as for `hus match --games`.
const MAX_GAMES: u32 = 100_000;
/// Most rounds: far beyond any real league, low enough that a typo cannot schedule
/// billions of sets.
const MAX_ROUNDS: u32 = 10_000;
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
    sandbox_user: Option<Spanned<String>>,
}

/// Checks the `store` key: a PostgreSQL connection URL. The message never repeats the
/// value (it may hold a password).
fn check_store_url(url: &str) -> std::result::Result<String, String> {
    if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
        return Err(
            "store: must be a PostgreSQL URL (postgres://USER:PASSWORD@HOST:PORT/DB); without \
             the key, the league is kept in its directory's SQLite file"
                .to_string(),
        );
    }
    crate::store::pg_url::parse(url).map_err(|e| format!("store: {e}"))?;
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
    /// Its command line; a relative program path with a slash is made relative to the
    /// league file's directory (`command` keeps what the file says).
    pub spec: BotSpec,
    /// Its limits; its working directory is the file's directory unless `dir` says
    /// otherwise.
    pub limits: Limits,
    /// A remote bot (`remote = true`): it connects to the server's bot port with a
    /// token whose SHA-256 is this, instead of being run from a command. Its `spec` is
    /// then `remote NAME`, which only the logs show.
    pub token_sha256: Option<[u8; 32]>,
}

impl BotConfig {
    /// Whether the bot plays remotely (connects with a token) rather than as a process.
    pub fn is_remote(&self) -> bool {
        self.token_sha256.is_some()
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
        let mut lines = BTreeMap::new();
        let mut line_of = |key: &'static str, span: Range<usize>| {
            lines.insert(key, file.line(span.start));
        };

        let preset = match &raw.rules {
            Some(r) => {
                line_of("rules", r.span());
                r.get_ref()
                    .parse::<Preset>()
                    .map_err(|e| file.error(Some(r.span()), format!("rules: {e}")))?
            }
            None => Preset::Hus,
        };
        let width = match &raw.width {
            Some(w) => {
                line_of("width", w.span());
                *w.get_ref()
            }
            None => 8,
        };
        let rules = Rules::new(preset, width as usize).map_err(|e| {
            let span = raw.width.as_ref().map(|w| w.span());
            file.error(span, format!("width: {e}"))
        })?;
        let games = match &raw.games {
            Some(g) => {
                line_of("games", g.span());
                let n = *g.get_ref();
                if n == 0 || n > MAX_GAMES {
                    return Err(file.error(
                        Some(g.span()),
                        format!("games: must be between 1 and {MAX_GAMES}, not {n}"),
                    ));
                }
                n
            }
            None => 7,
        };
        let time = match (&raw.move_time, &raw.clock) {
            (Some(_), Some(c)) => {
                return Err(file.error(
                    Some(c.span()),
                    "clock: give either move_time or clock, not both".to_string(),
                ))
            }
            (Some(m), None) => {
                line_of("move_time", m.span());
                let d = parse_duration(m.get_ref())
                    .map_err(|e| file.error(Some(m.span()), format!("move_time: {e:#}")))?;
                TimeControl::PerMove(
                    positive(d, "move_time").map_err(|e| file.error(Some(m.span()), e))?,
                )
            }
            (None, Some(c)) => {
                line_of("clock", c.span());
                parse_clock(c.get_ref())
                    .map_err(|e| file.error(Some(c.span()), format!("clock: {e:#}")))?
            }
            (None, None) => TimeControl::PerMove(Duration::from_secs(1)),
        };
        let ready_time = match &raw.ready_time {
            Some(r) => {
                let d = parse_duration(r.get_ref())
                    .map_err(|e| file.error(Some(r.span()), format!("ready_time: {e:#}")))?;
                positive(d, "ready_time").map_err(|e| file.error(Some(r.span()), e))?
            }
            None => Duration::from_secs(10),
        };
        let rounds = match &raw.rounds {
            Some(r) => {
                let n = *r.get_ref();
                if n == 0 || n > MAX_ROUNDS {
                    return Err(file.error(
                        Some(r.span()),
                        format!("rounds: must be between 1 and {MAX_ROUNDS}, not {n}"),
                    ));
                }
                n
            }
            None => 1,
        };
        let concurrency = match &raw.concurrency {
            Some(c) => {
                let n = *c.get_ref();
                if n == 0 || n > 1024 {
                    return Err(file.error(
                        Some(c.span()),
                        format!("concurrency: must be between 1 and 1024, not {n}"),
                    ));
                }
                n as usize
            }
            None => cores(),
        };
        if let Some(s) = &raw.seed {
            line_of("seed", s.span());
        }
        let openings = match &raw.openings {
            Some(o) => {
                line_of("openings", o.span());
                let p = base.join(o.get_ref());
                if !p.is_file() {
                    return Err(file.error(
                        Some(o.span()),
                        format!("openings: {} is not a file", p.display()),
                    ));
                }
                let book = referee::read_openings(&p, rules)
                    .map_err(|e| file.error(Some(o.span()), format!("openings: {e}")))?;
                Some(Openings {
                    written: o.get_ref().clone(),
                    path: p,
                    book,
                })
            }
            None => None,
        };

        let store = match &raw.store {
            Some(s) => {
                line_of("store", s.span());
                Some(check_store_url(s.get_ref()).map_err(|e| file.error(Some(s.span()), e))?)
            }
            None => None,
        };

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

        let rating = match &raw.anchor_rating {
            Some(r) => {
                let v = *r.get_ref();
                if !v.is_finite() || v.abs() > 1e6 {
                    return Err(file.error(
                        Some(r.span()),
                        format!("anchor_rating: {v} is not a usable rating"),
                    ));
                }
                v
            }
            None => DEFAULT_ANCHOR_RATING,
        };
        let anchor = match &raw.anchor {
            Some(a) => {
                if !names.contains(a.get_ref()) {
                    return Err(file.error(
                        Some(a.span()),
                        format!("anchor: no {what} is named {:?}", a.get_ref()),
                    ));
                }
                Anchor::Bot {
                    name: a.get_ref().clone(),
                    rating,
                }
            }
            None => Anchor::PoolAverage(rating),
        };

        let lag_cap = match &raw.lag_cap {
            Some(l) => {
                line_of("lag_cap", l.span());
                let d = parse_duration(l.get_ref())
                    .map_err(|e| file.error(Some(l.span()), format!("lag_cap: {e:#}")))?;
                if d > MAX_LAG_CAP {
                    return Err(file.error(
                        Some(l.span()),
                        format!(
                            "lag_cap: at most {} ms, not {} ms",
                            MAX_LAG_CAP.as_millis(),
                            d.as_millis()
                        ),
                    ));
                }
                d
            }
            None => DEFAULT_LAG_CAP,
        };

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
            seed: raw.seed.as_ref().map(|s| *s.get_ref()),
            openings,
            anchor,
            lag_cap,
            bots,
            teams,
            lines,
            store,
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
                .map(|b| (b.name.clone(), b.spec.command.clone()))
                .collect();
        }
        self.teams
            .iter()
            .map(|t| {
                let members: Vec<String> = t
                    .members
                    .iter()
                    .map(|m| match self.bot(m) {
                        Some(b) => format!("{m}: {}", b.spec.command),
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
        token_sha256: None,
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
        spec: BotSpec {
            command: format!("remote {name}"),
            argv: vec!["remote".to_string(), name.clone()],
        },
        name,
        limits: Limits::default(),
        token_sha256: Some(hash),
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
    let options = referee::SandboxOptions {
        writable: bot.sandbox_writable,
        read_only: bot
            .sandbox_ro
            .iter()
            .map(|p| base.join(p.get_ref()))
            .collect(),
        max_processes: bot.sandbox_processes.as_ref().map(|n| *n.get_ref()),
        tmp_size,
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

fn positive(d: Duration, key: &str) -> Result<Duration, String> {
    if d.is_zero() {
        return Err(format!("{key}: must be more than 0"));
    }
    if d > Duration::from_secs(24 * 3600) {
        return Err(format!("{key}: must be at most 24h"));
    }
    Ok(d)
}

/// The machine's cores, as the default concurrency.
pub fn cores() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

/// A duration as the file would write it: `100ms`, `2s`, `1.5ms`.
pub fn show_duration(d: Duration) -> String {
    let micros = d.as_micros();
    if micros.is_multiple_of(1_000_000) {
        format!("{}s", micros / 1_000_000)
    } else if micros.is_multiple_of(1000) {
        format!("{}ms", micros / 1000)
    } else {
        format!("{}.{:03}ms", micros / 1000, micros % 1000)
    }
}

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
