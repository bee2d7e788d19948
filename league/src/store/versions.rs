//! Uploaded bots' versions (docs/upload.md): each submitted archive is a version of a
//! bot, numbered from 1 per bot, with its author, the archive's SHA-256, its time and
//! its state. The archive itself is kept once per hash, so that a worker on another
//! machine plays the very code its hash names without anyone copying files.
//!
//! In the league a version plays under a name of its own, [`version_name`]
//! (`NAME.vN`): its results and rating are its own, and a newer version starts
//! unrated. A league file's bot names hold no `.`, so no organiser's bot can take one.

use super::StoreError;

/// The most bytes of a build's output (or of a rejection's detail) a version keeps.
pub const MAX_VERSION_TEXT: usize = 256 << 10;

/// A version's place in its life. Only `Active` plays new sets; a bot has at most
/// one active version.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VersionState {
    /// Received, waiting for a build slot.
    Queued,
    /// Being built in the sandbox.
    Building,
    /// Its build failed or was stopped at a bound (the output says why).
    BuildFailed,
    /// Built; being checked (check-bot and the validation set against the random mover,
    /// then, with a gate, the SPRT against the active version).
    Checking,
    /// A check, the validation set or the gate refused it (the detail says why).
    Rejected,
    /// The version that plays.
    Active,
    /// Played before; another version is active now. Its results stay.
    Retired,
}

impl VersionState {
    /// As stored and shown: `queued`, `building`, `build failed`, `checking`,
    /// `rejected`, `active`, `retired`.
    pub fn as_str(self) -> &'static str {
        match self {
            VersionState::Queued => "queued",
            VersionState::Building => "building",
            VersionState::BuildFailed => "build failed",
            VersionState::Checking => "checking",
            VersionState::Rejected => "rejected",
            VersionState::Active => "active",
            VersionState::Retired => "retired",
        }
    }

    /// The state stored as `text`.
    pub fn parse(text: &str) -> Option<VersionState> {
        Some(match text {
            "queued" => VersionState::Queued,
            "building" => VersionState::Building,
            "build failed" => VersionState::BuildFailed,
            "checking" => VersionState::Checking,
            "rejected" => VersionState::Rejected,
            "active" => VersionState::Active,
            "retired" => VersionState::Retired,
            _ => return None,
        })
    }

    /// Whether the version is still on its way (queued, building or checking): an
    /// author has one such version at a time.
    pub fn is_pending(self) -> bool {
        matches!(
            self,
            VersionState::Queued | VersionState::Building | VersionState::Checking
        )
    }

    /// Whether the version has been built and passed its checks once (active or
    /// retired): only such a version can be made active again.
    pub fn has_played(self) -> bool {
        matches!(self, VersionState::Active | VersionState::Retired)
    }
}

impl std::fmt::Display for VersionState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The league's name of version `number` of bot `bot`: `bot.vNUMBER`.
pub fn version_name(bot: &str, number: u32) -> String {
    format!("{bot}.v{number}")
}

/// The bot and number of a league name made by [`version_name`]; `None` for any other
/// name (a league file's bot).
pub fn parse_version_name(name: &str) -> Option<(&str, u32)> {
    let (bot, number) = name.rsplit_once(".v")?;
    let n: u32 = number.parse().ok()?;
    (n >= 1 && !bot.is_empty() && number == n.to_string()).then_some((bot, n))
}

/// A version as submitted, before it is numbered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewVersion {
    /// The bot's name (a league file's bot name: letters, digits, `-`, `_`).
    pub bot: String,
    /// Its author's name.
    pub author: String,
    /// The archive's SHA-256, 64 lowercase hexadecimal digits.
    pub hash: String,
    /// The archive (tar + zstd), kept once per hash.
    pub archive: Vec<u8>,
    /// When it was received: RFC 3339, UTC (`2026-12-05T02:30:00.123Z`).
    pub submitted: String,
}

/// A version as the store keeps it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VersionRow {
    /// The bot's name.
    pub bot: String,
    /// Its number, from 1 per bot.
    pub number: u32,
    /// Its author's name.
    pub author: String,
    /// The archive's SHA-256.
    pub hash: String,
    /// When it was received (RFC 3339, UTC).
    pub submitted: String,
    /// When its state last changed (RFC 3339, UTC).
    pub changed: String,
    /// Its state.
    pub state: VersionState,
    /// Its build's output (stdout and stderr together), at most [`MAX_VERSION_TEXT`]
    /// bytes; empty before the build.
    pub output: String,
    /// Why it was rejected or its build failed, for its author (a fault's detail and
    /// the bot's stderr); empty otherwise.
    pub detail: String,
}

impl VersionRow {
    /// Its name in the league ([`version_name`]).
    pub fn league_name(&self) -> String {
        version_name(&self.bot, self.number)
    }
}

/// The uploaded bots' versions and their archives. Each call that changes more than
/// one row is one transaction.
pub trait Versions {
    /// Adds a version in state `queued`, numbered one past the bot's highest, and keeps
    /// its archive unless the store has that hash already. Returns its number.
    fn add_version(&mut self, version: &NewVersion) -> Result<u32, StoreError>;

    /// Sets a version's state (and its `changed` time to `now`), and its build output
    /// and detail where given (cut to [`MAX_VERSION_TEXT`] bytes at a character
    /// boundary). False if there is no such version.
    fn set_version_state(
        &mut self,
        bot: &str,
        number: u32,
        state: VersionState,
        output: Option<&str>,
        detail: Option<&str>,
        now: &str,
    ) -> Result<bool, StoreError>;

    /// Makes version `number` of `bot` its active version and the one active before,
    /// if any, retired, in one transaction; returns the number of the one retired.
    fn activate_version(
        &mut self,
        bot: &str,
        number: u32,
        now: &str,
    ) -> Result<Option<u32>, StoreError>;

    /// Every version of `bot`, oldest first.
    fn versions_of(&self, bot: &str) -> Result<Vec<VersionRow>, StoreError>;

    /// Version `number` of `bot`.
    fn version(&self, bot: &str, number: u32) -> Result<Option<VersionRow>, StoreError>;

    /// The versions in any of `states`, of every bot, by bot then number (the active
    /// ones to enter the league at a start; the pending ones to build again after a
    /// restart).
    fn versions_in(&self, states: &[VersionState]) -> Result<Vec<VersionRow>, StoreError>;

    /// The archive whose SHA-256 is `hash`.
    fn archive(&self, hash: &str) -> Result<Option<Vec<u8>>, StoreError>;

    /// The submission times (RFC 3339, oldest first) of `author`'s versions received at
    /// or after `since`: for the daily limit, and when it lets the author send again.
    fn submitted_since(&self, author: &str, since: &str) -> Result<Vec<String>, StoreError>;
}
