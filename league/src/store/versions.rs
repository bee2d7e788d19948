//! Uploaded bots' versions (docs/upload.md): each submitted archive is a version of a
//! bot, numbered from 1 per bot, with its author, the archive's SHA-256, its time and
//! its state. The archive itself is kept once per hash, so that a worker on another
//! machine plays the very code its hash names without anyone copying files.
//!
//! In the league a version plays under a name of its own, [`version_name`]
//! (`NAME.vN`): its results and rating are its own, and a newer version starts
//! unrated. A league file's bot names hold no `.`, so no organiser's bot can take one.

use super::StoreError;

/// The form in which both stores keep and give back a version's times: RFC 3339 in
/// UTC with six digits of fraction (`2026-12-05T02:30:00.123000Z`), whose text order
/// is time order (an index on it serves [`Versions::submitted_since`]) and which
/// PostgreSQL's `timestamptz` holds exactly.
const STORED_TIME: &[time::format_description::FormatItem<'static>] = time::macros::format_description!(
    "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:6]Z"
);

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
    /// When it was received (RFC 3339, UTC, to the microsecond as both stores give
    /// it back: `2026-12-05T02:30:00.123000Z`).
    pub submitted: String,
    /// When its state last changed (the same form).
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
/// one row is one transaction. Every time given is RFC 3339 (any offset); one that is
/// not is [`StoreError::Invalid`].
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
    /// if any, retired, in one transaction; returns the number of the one retired
    /// (`None` when none was, or when this one was active already, which changes
    /// nothing). The store does not judge the version's state: the caller does. A
    /// version the store does not have is [`StoreError::NoVersion`], and changes
    /// nothing.
    fn activate_version(
        &mut self,
        bot: &str,
        number: u32,
        now: &str,
    ) -> Result<Option<u32>, StoreError>;

    /// Every version of `bot`, oldest first, without their output and detail (empty:
    /// read one version for them).
    fn versions_of(&self, bot: &str) -> Result<Vec<VersionRow>, StoreError>;

    /// Version `number` of `bot`.
    fn version(&self, bot: &str, number: u32) -> Result<Option<VersionRow>, StoreError>;

    /// The versions in any of `states`, of every bot, by bot then number (the active
    /// ones to enter the league at a start; the pending ones to build again after a
    /// restart), without their output and detail (empty: read one version for them).
    fn versions_in(&self, states: &[VersionState]) -> Result<Vec<VersionRow>, StoreError>;

    /// The archive whose SHA-256 is `hash` (`None` once emptied by
    /// [`Versions::drop_refused_archive`]).
    fn archive(&self, hash: &str) -> Result<Option<Vec<u8>>, StoreError>;

    /// Empties the archive `hash` when every version of it was refused for good
    /// (`build failed`, or `rejected` with a detail that does not begin with
    /// `kept_refusal`: the gate's refusal, after which a version may still play a
    /// test), so that refused uploads do not fill the store over months. The row stays
    /// for the versions that name it, with their output and detail; the same archive
    /// sent again is kept again. True if it was emptied now. Stores without archives
    /// of their own keep nothing to empty.
    fn drop_refused_archive(&mut self, hash: &str, kept_refusal: &str) -> Result<bool, StoreError> {
        let _ = (hash, kept_refusal);
        Ok(false)
    }

    /// The submission times (RFC 3339, oldest first, in the form of
    /// [`VersionRow::submitted`]) of `author`'s versions received at or after `since`:
    /// for the daily limit, and when it lets the author send again.
    fn submitted_since(&self, author: &str, since: &str) -> Result<Vec<String>, StoreError>;
}

/// `time` (RFC 3339, any offset and precision) in the stores' form ([`STORED_TIME`]),
/// cut to the microsecond. A time that is not RFC 3339 is refused: the store would
/// otherwise keep what it cannot order.
pub(crate) fn stored_time(place: &str, time: &str) -> Result<String, StoreError> {
    let invalid = || StoreError::Invalid {
        place: place.to_string(),
        what: format!("the time {time:?} is not RFC 3339"),
    };
    let parsed = time::OffsetDateTime::parse(time, &time::format_description::well_known::Rfc3339)
        .map_err(|_| invalid())?;
    parsed
        .to_offset(time::UtcOffset::UTC)
        .format(STORED_TIME)
        .map_err(|_| invalid())
}

/// The error of an operation on version `number` of `bot`, which the store at `place`
/// does not have.
pub(crate) fn no_such_version(place: &str, bot: &str, number: u32) -> StoreError {
    StoreError::NoVersion {
        place: place.to_string(),
        bot: bot.to_string(),
        number,
    }
}

/// `text` cut to at most [`MAX_VERSION_TEXT`] bytes, at a character boundary.
pub(crate) fn cut_text(text: &str) -> &str {
    if text.len() <= MAX_VERSION_TEXT {
        return text;
    }
    let mut end = MAX_VERSION_TEXT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The state stored as `text`, or [`StoreError::Invalid`]: a row holding a state this
/// code never writes.
pub(crate) fn stored_state(place: &str, text: &str) -> Result<VersionState, StoreError> {
    VersionState::parse(text).ok_or_else(|| StoreError::Invalid {
        place: place.to_string(),
        what: format!("a version's state is {text:?}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_names_round_trip_and_other_names_are_none() {
        assert_eq!(version_name("alpha", 1), "alpha.v1");
        assert_eq!(parse_version_name("alpha.v1"), Some(("alpha", 1)));
        for (bot, number) in [("a", 1), ("my-bot_2", 17), ("x.v2", 3), ("b", u32::MAX)] {
            assert_eq!(
                parse_version_name(&version_name(bot, number)),
                Some((bot, number))
            );
        }
        for name in [
            "a.v0",
            "a.v01",
            ".v1",
            "a.vx",
            "a.v",
            "a",
            "a.v-1",
            "a.v+1",
            "a.v4294967296",
        ] {
            assert_eq!(parse_version_name(name), None, "{name}");
        }
    }

    #[test]
    fn every_state_parses_back_and_nothing_else_does() {
        let all = [
            VersionState::Queued,
            VersionState::Building,
            VersionState::BuildFailed,
            VersionState::Checking,
            VersionState::Rejected,
            VersionState::Active,
            VersionState::Retired,
        ];
        for state in all {
            assert_eq!(VersionState::parse(state.as_str()), Some(state));
        }
        assert_eq!(VersionState::parse("Active"), None);
        assert_eq!(VersionState::parse("build_failed"), None);
        assert!(matches!(
            stored_state("here", "done"),
            Err(StoreError::Invalid { what, .. }) if what == "a version's state is \"done\""
        ));
    }

    #[test]
    fn times_are_kept_in_utc_to_the_microsecond() {
        let t = |s| stored_time("here", s).ok();
        assert_eq!(
            t("2026-12-05T02:30:00.123Z").as_deref(),
            Some("2026-12-05T02:30:00.123000Z")
        );
        assert_eq!(
            t("2026-12-05T03:30:00.1234569+01:00").as_deref(),
            Some("2026-12-05T02:30:00.123456Z")
        );
        assert_eq!(
            t("2026-12-05T02:30:00Z").as_deref(),
            Some("2026-12-05T02:30:00.000000Z")
        );
        assert_eq!(t("yesterday"), None);
    }

    #[test]
    fn text_is_cut_at_a_character_boundary() {
        assert_eq!(cut_text("short"), "short");
        // 'é' is two bytes: a cut at MAX_VERSION_TEXT would split the last one.
        let long = format!("a{}", "é".repeat(MAX_VERSION_TEXT));
        let cut = cut_text(&long);
        assert_eq!(cut.len(), MAX_VERSION_TEXT - 1);
        assert!(long.starts_with(cut));
    }
}
