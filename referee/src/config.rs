//! Checked configuration: what the rest of the program sees instead of raw flags.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use engine::{AnyPosition, Rules};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::side::Side;

/// How long each move may take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeControl {
    /// The same allowance for every move.
    PerMove(Duration),
    /// A chess clock per game: `base` at the start, `increment` added after each move.
    Clock {
        /// Time on each clock when a game starts.
        base: Duration,
        /// Time added after each move.
        increment: Duration,
    },
}

/// One bot: the command line, split into program and arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BotSpec {
    /// The command as the user wrote it.
    pub command: String,
    /// Program and arguments, split like a shell would (no shell is run).
    pub argv: Vec<String>,
}

impl BotSpec {
    /// Splits a command line the way a shell would (quotes work; no shell is run).
    pub fn parse(command: &str) -> Result<BotSpec> {
        let argv = shlex::split(command)
            .with_context(|| format!("bot command {command:?} has unbalanced quotes"))?;
        if argv.is_empty() {
            bail!("bot command is empty");
        }
        Ok(BotSpec {
            command: command.to_string(),
            argv,
        })
    }

    /// A short name from the program, for file names and the console before the bot
    /// announces its own: `python3 bots/greedy.py` gives `greedy`.
    pub fn short_name(&self) -> String {
        let interpreters = [
            "python", "python3", "node", "java", "ruby", "perl", "sh", "bash",
        ];
        let program = self
            .argv
            .iter()
            .find(|a| {
                let base = a.rsplit('/').next().unwrap_or(a);
                !a.starts_with('-') && !interpreters.contains(&base)
            })
            .or(self.argv.first());
        // A remote bot has no argv: its command names it (`remote NAME`).
        let Some(program) = program else {
            let name = self.command.rsplit(' ').next().unwrap_or_default();
            return sanitize(name);
        };
        let base = program.rsplit('/').next().unwrap_or(program);
        let stem = base.split('.').next().unwrap_or(base);
        sanitize(stem)
    }
}

/// The program to start for a command's first word: a relative path with a slash
/// (`./bot`, `bots/x`) means the referee's directory, also when the bot runs in another
/// one; anything else is taken as written (a bare name is looked up on PATH).
pub(crate) fn program_path(argv0: &str) -> PathBuf {
    let program = Path::new(argv0);
    if program.is_relative() && argv0.contains('/') {
        std::fs::canonicalize(program).unwrap_or_else(|_| program.to_path_buf())
    } else {
        program.to_path_buf()
    }
}

/// Everything a set needs, checked.
#[derive(Clone, Debug)]
pub struct SetConfig {
    /// The preset and width every game is played with.
    pub rules: Rules,
    /// Games in the set.
    pub games: u32,
    /// Seed of the lots: who begins each game.
    pub seed: u64,
    /// How long each move may take.
    pub time: TimeControl,
    /// Time from a bot's start to its `ready`.
    pub ready_time: Duration,
    /// Stop once the set is decided (off by default: all games are played).
    pub early_stop: bool,
    /// The set's openings (docs/openings.md), in order: games 2k-1 and 2k start from
    /// opening k, going round the list when the set has more pairs. Empty: every game
    /// starts from the preset's starting position, with a lot for each game.
    pub openings: Vec<AnyPosition>,
    /// Play until this test decides, `games` being the most to play: bot A's results
    /// in game pairs (pentanomial), checked after each pair.
    pub sprt: Option<ratings::Sprt>,
}

impl SetConfig {
    /// Whether games go in pairs (2k-1, 2k) with the first mover swapped: with openings
    /// (both games of a pair start from the same one) or an SPRT.
    pub fn paired(&self) -> bool {
        !self.openings.is_empty() || self.sprt.is_some()
    }

    /// The position game `game` (from 1) starts from.
    pub fn start_of(&self, game: u32) -> AnyPosition {
        opening_of(&self.openings, game)
            .copied()
            .unwrap_or_else(|| AnyPosition::start(self.rules))
    }

    /// The bot that moves first in each game, from the seed: a lot for each game, or
    /// with pairs a lot for the first game of each pair and the other bot in the second.
    pub fn first_movers(&self) -> Vec<Side> {
        first_movers(self.seed, self.games, self.paired())
    }
}

/// The opening of game `game` (from 1) in a set's list of openings: pairs of games
/// share one, in order, going round the list. `None` when there is none.
pub fn opening_of<T>(openings: &[T], game: u32) -> Option<&T> {
    if openings.is_empty() {
        return None;
    }
    let pair = game.saturating_sub(1) as usize / 2;
    openings.get(pair % openings.len())
}

/// The lots of a set: for each game, the bot that moves first. The same seed always
/// draws the same lots.
pub fn lots(seed: u64, games: u32) -> Vec<usize> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..games).map(|_| rng.gen_range(0..2usize)).collect()
}

/// The first movers of a set's games: the lots of [`lots`], with, in a paired
/// set, the second game of each pair given to the other bot.
pub fn first_movers(seed: u64, games: u32, paired: bool) -> Vec<Side> {
    let mut firsts: Vec<Side> = lots(seed, games)
        .into_iter()
        .map(|lot| if lot == 0 { Side::A } else { Side::B })
        .collect();
    if paired {
        for k in (1..firsts.len()).step_by(2) {
            firsts[k] = firsts[k - 1].other();
        }
    }
    firsts
}

/// `d`, if it is more than zero and at most a day.
pub fn check_positive(d: Duration, flag: &str) -> Result<Duration> {
    if d.is_zero() {
        bail!("{flag} must be more than 0");
    }
    if d > Duration::from_secs(24 * 3600) {
        bail!("{flag} must be at most 24h");
    }
    Ok(d)
}

/// A seed from the clock and the process id, for sets run without `--seed`.
pub fn fresh_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let mut x = nanos ^ (std::process::id() as u64).rotate_left(32);
    // splitmix64 finaliser, so nearby times give unrelated seeds
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    // Nine digits: easy to read, copy and type back into --seed.
    (x ^ (x >> 31)) % 1_000_000_000
}

/// A duration as [`parse_duration`] reads it back, and as the league file and the
/// command lines' defaults write it: `100ms`, `2s`, `1.5ms`.
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

/// Parses `250ms`, `1.5s`, `2m`, `1h`, or a bare number of milliseconds.
pub fn parse_duration(text: &str) -> Result<Duration> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    if number.is_empty() {
        bail!("{text:?} is not a duration (try 250ms, 1.5s, 2m, or a number of milliseconds)");
    }
    let value: f64 = number
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite())
        .with_context(|| format!("{text:?} is not a duration (bad number {number:?})"))?;
    let millis = match unit.trim() {
        "" | "ms" => value,
        "s" => value * 1000.0,
        "m" | "min" => value * 60_000.0,
        "h" => value * 3_600_000.0,
        other => bail!("{text:?} is not a duration: unknown unit {other:?} (use ms, s, m or h)"),
    };
    if millis > 1e12 {
        bail!("{text:?} is too long");
    }
    Ok(Duration::from_micros((millis * 1000.0).round() as u64))
}

/// `512M`, `2G`, `1048576`, `64K` (powers of 1024).
pub fn parse_bytes(text: &str) -> anyhow::Result<u64> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let value: u64 = number
        .parse()
        .map_err(|_| anyhow::anyhow!("{text:?} is not a size (try 512M or 2G)"))?;
    let factor: u64 = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 1,
        "K" | "KB" | "KIB" => 1 << 10,
        "M" | "MB" | "MIB" => 1 << 20,
        "G" | "GB" | "GIB" => 1 << 30,
        other => anyhow::bail!("{text:?} is not a size: unknown unit {other:?} (use K, M or G)"),
    };
    value
        .checked_mul(factor)
        .filter(|&v| v > 0)
        .ok_or_else(|| anyhow::anyhow!("{text:?} is not a usable size"))
}

/// Parses `BASE+INCREMENT`, each a duration: `60s+1s`, `2m+500ms`, `60000+0`.
pub fn parse_clock(text: &str) -> Result<TimeControl> {
    let Some((base, inc)) = text.split_once('+') else {
        bail!("{text:?} should be BASE+INCREMENT, for example 60s+1s");
    };
    let base = check_positive(parse_duration(base)?, "the clock's base time")?;
    let increment = parse_duration(inc)?;
    Ok(TimeControl::Clock { base, increment })
}

/// Keeps `[A-Za-z0-9_-]`, turns the rest into `_`, caps the length: a name from a bot
/// can never choose a path.
pub fn sanitize(name: &str) -> String {
    let mut out: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(32)
        .collect();
    if out.is_empty() || out.chars().all(|c| c == '_') {
        out = "bot".to_string();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(
            parse_duration("250ms").ok(),
            Some(Duration::from_millis(250))
        );
        assert_eq!(
            parse_duration("1.5s").ok(),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(parse_duration("2m").ok(), Some(Duration::from_secs(120)));
        assert_eq!(parse_duration("100").ok(), Some(Duration::from_millis(100)));
        assert_eq!(
            parse_duration(" 0.5 ").ok(),
            Some(Duration::from_micros(500))
        );
        for bad in ["", "ms", "1x", "-1s", "1.2.3s", "s1"] {
            assert!(parse_duration(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            parse_duration("3 weeks").map_err(|e| e.to_string()).err(),
            Some(
                "\"3 weeks\" is not a duration: unknown unit \"weeks\" (use ms, s, m or h)".into()
            )
        );
    }

    #[test]
    fn pairs_share_an_opening_and_swap_the_first_mover() {
        let openings = ["a", "b", "c"];
        let of: Vec<&str> = (1..=9)
            .map(|g| *opening_of(&openings, g).expect("one"))
            .collect();
        assert_eq!(of, ["a", "a", "b", "b", "c", "c", "a", "a", "b"]);
        assert_eq!(opening_of::<&str>(&[], 1), None);
        for seed in 0..20 {
            let lots = lots(seed, 7);
            // Without pairs: the lots themselves, as before openings.
            let indices =
                |firsts: Vec<Side>| firsts.into_iter().map(Side::index).collect::<Vec<_>>();
            assert_eq!(indices(first_movers(seed, 7, false)), lots);
            let paired = indices(first_movers(seed, 7, true));
            for g in 0..7 {
                let expected = if g % 2 == 1 { 1 - lots[g - 1] } else { lots[g] };
                assert_eq!(paired[g], expected, "seed {seed}, game {}", g + 1);
            }
        }
    }

    #[test]
    fn clocks() {
        assert_eq!(
            parse_clock("60s+1s").ok(),
            Some(TimeControl::Clock {
                base: Duration::from_secs(60),
                increment: Duration::from_secs(1)
            })
        );
        assert!(parse_clock("60s").is_err());
        assert!(parse_clock("0+1s").is_err());
    }

    #[test]
    fn names_cannot_choose_paths() {
        assert_eq!(sanitize("../../etc/passwd"), "______etc_passwd");
        assert_eq!(sanitize("greedy bot ü"), "greedy_bot__");
        assert_eq!(sanitize(""), "bot");
        assert_eq!(sanitize("///"), "bot");
        assert_eq!(sanitize(&"x".repeat(100)).len(), 32);
        let spec = BotSpec::parse("python3 sample-bots/python/greedy_bot.py --fast").ok();
        assert_eq!(spec.map(|s| s.short_name()), Some("greedy_bot".to_string()));
        let spec = BotSpec::parse("'./my bot' arg").ok();
        assert_eq!(
            spec.as_ref().map(|s| s.argv.clone()),
            Some(vec!["./my bot".into(), "arg".into()])
        );
        assert!(BotSpec::parse("python3 'unclosed").is_err());
        assert!(BotSpec::parse("   ").is_err());
    }
}
