//! The ladder's rating list: the standings of the league `leagues/ladder.toml`, as
//! `hus standings leagues/ladder --format json` writes them (`leagues/ladder.json`,
//! built into this crate).

use std::fmt;

use serde::Deserialize;

/// The shipped rating list: `hus standings leagues/ladder --format json`.
pub const SHIPPED: &str = include_str!("../../leagues/ladder.json");
/// The book of openings the ladder's games start from (`openings/hus-8.txt`).
pub const BOOK: &str = include_str!("../../openings/hus-8.txt");
/// Where [`BOOK`] comes from, for messages and logs.
pub const BOOK_NAME: &str = "openings/hus-8.txt";
/// The ladder's rules: the `hus` preset at width 8.
pub const RULES: (engine::Preset, usize) = (engine::Preset::Hus, 8);
/// The bot whose rating is 0 by definition: the built-in random mover.
pub const ANCHOR: &str = "random";

/// Why a rating list cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum LadderError {
    /// Not the JSON of `hus standings --format json` (the JSON error is in the
    /// message, not a source of its own: it would be said twice).
    #[error("the ladder's list is not the JSON of `hus standings --format json`: {0}")]
    Json(serde_json::Error),
    /// Measured with other rules than the ladder's.
    #[error(
        "the ladder's list was measured with {preset} at width {width}: a ladder is hus at width 8"
    )]
    Rules {
        /// The preset of the list.
        preset: String,
        /// Its width.
        width: usize,
    },
    /// A bot that is neither the random mover nor a level.
    #[error("the ladder's bot {0:?} is neither \"random\" (the built-in random mover) nor \"level-N\" (alphabeta-bot --level N, N from 1 to 10)")]
    UnknownBot(String),
    /// A bot without a rating.
    #[error("the ladder's bot {0:?} has no rating")]
    Unrated(String),
    /// Not anchored at the random mover.
    #[error("the ladder's list is anchored at {anchor:?} = {rating}: it must be anchored at \"random\" = 0")]
    Anchor {
        /// Its anchor (empty: the pool average).
        anchor: String,
        /// The anchor's rating.
        rating: f64,
    },
    /// Fewer than two rungs.
    #[error("the ladder's list has {0} rated bots: it needs at least two")]
    TooSmall(usize),
}

/// Who plays a rung of the ladder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RungBot {
    /// The built-in random mover, `hus random-bot`.
    Random,
    /// `alphabeta-bot --level N`.
    Level(u32),
}

impl RungBot {
    /// From a name of the list: `random` or `level-N`.
    pub fn from_name(name: &str) -> Option<RungBot> {
        if name == ANCHOR {
            return Some(RungBot::Random);
        }
        let n: u32 = name.strip_prefix("level-")?.parse().ok()?;
        (1..=10).contains(&n).then_some(RungBot::Level(n))
    }
}

impl fmt::Display for RungBot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RungBot::Random => write!(f, "{ANCHOR}"),
            RungBot::Level(n) => write!(f, "level-{n}"),
        }
    }
}

/// One rung: a bot of the ladder with its measured rating.
#[derive(Clone, Debug, PartialEq)]
pub struct Rung {
    /// Who plays it.
    pub bot: RungBot,
    /// Its rating (Elo scale, the random mover at 0).
    pub rating: f64,
    /// The low end of its 95% interval.
    pub low: f64,
    /// The high end of its 95% interval.
    pub high: f64,
}

/// The rating list of the ladder.
#[derive(Clone, Debug, PartialEq)]
pub struct Ladder {
    /// The rungs, weakest first.
    pub rungs: Vec<Rung>,
    /// The first-mover advantage the league measured, in Elo.
    pub advantage: f64,
    /// Games the league played.
    pub games: u64,
    /// The league's time control, as its file writes it (`move_time = "1s"`).
    pub time: String,
}

#[derive(Deserialize)]
struct Standings {
    league: League,
    games_played: u64,
    bots: Vec<Bot>,
    ratings: Option<Fit>,
}

#[derive(Deserialize)]
struct League {
    rules: String,
    width: usize,
    time: String,
}

#[derive(Deserialize)]
struct Bot {
    name: String,
    rating: Option<Rating>,
}

#[derive(Deserialize)]
struct Rating {
    value: f64,
    low: f64,
    high: f64,
}

#[derive(Deserialize)]
struct Fit {
    anchor: Option<String>,
    anchor_rating: f64,
    first_move_advantage: Rating,
}

impl Ladder {
    /// The shipped list, [`SHIPPED`].
    pub fn shipped() -> Result<Ladder, LadderError> {
        Ladder::from_standings(SHIPPED)
    }

    /// A list from the JSON standings of a league of the random mover and levels
    /// (`hus standings DIR --format json`), anchored at the random mover = 0.
    pub fn from_standings(json: &str) -> Result<Ladder, LadderError> {
        let standings: Standings = serde_json::from_str(json).map_err(LadderError::Json)?;
        let (preset, width) = RULES;
        if standings.league.rules != preset.name() || standings.league.width != width {
            return Err(LadderError::Rules {
                preset: standings.league.rules,
                width: standings.league.width,
            });
        }
        let Some(fit) = standings.ratings else {
            return Err(LadderError::TooSmall(0));
        };
        if fit.anchor.as_deref() != Some(ANCHOR) || fit.anchor_rating != 0.0 {
            return Err(LadderError::Anchor {
                anchor: fit.anchor.unwrap_or_default(),
                rating: fit.anchor_rating,
            });
        }
        let mut rungs = Vec::with_capacity(standings.bots.len());
        for bot in standings.bots {
            let kind = RungBot::from_name(&bot.name)
                .ok_or_else(|| LadderError::UnknownBot(bot.name.clone()))?;
            let rating = bot.rating.ok_or(LadderError::Unrated(bot.name))?;
            rungs.push(Rung {
                bot: kind,
                rating: rating.value,
                low: rating.low,
                high: rating.high,
            });
        }
        if rungs.len() < 2 {
            return Err(LadderError::TooSmall(rungs.len()));
        }
        rungs.sort_by(|a, b| a.rating.total_cmp(&b.rating));
        Ok(Ladder {
            rungs,
            advantage: fit.first_move_advantage.value,
            games: standings.games_played,
            time: standings.league.time,
        })
    }

    /// The rung of a bot, if it is on the ladder.
    pub fn rung(&self, bot: RungBot) -> Option<&Rung> {
        self.rungs.iter().find(|r| r.bot == bot)
    }

    /// The list as a table: rung, rating, 95% interval.
    pub fn to_text(&self) -> String {
        let mut out = format!("{:<10} {:>7}  {:>16}\n", "bot", "rating", "95% interval");
        for rung in self.rungs.iter().rev() {
            let interval = if rung.low == rung.high {
                "(the anchor)".to_string()
            } else {
                format!("[{:.0}, {:.0}]", rung.low, rung.high)
            };
            out.push_str(&format!(
                "{:<10} {:>7.0}  {:>16}\n",
                rung.bot.to_string(),
                rung.rating,
                interval
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_list_holds_the_random_mover_at_0_and_ten_levels_in_order() {
        let ladder = Ladder::shipped().expect("the shipped list reads");
        assert_eq!(ladder.rungs.len(), 11);
        let random = ladder.rung(RungBot::Random).expect("the random mover");
        assert_eq!((random.rating, random.low, random.high), (0.0, 0.0, 0.0));
        let levels: Vec<&Rung> = (1..=10)
            .map(|n| ladder.rung(RungBot::Level(n)).expect("every level"))
            .collect();
        for pair in levels.windows(2) {
            assert!(pair[1].rating > pair[0].rating, "{pair:?}");
        }
        assert!(levels[0].rating > 0.0);
        for rung in &ladder.rungs {
            assert!(rung.low <= rung.rating && rung.rating <= rung.high);
        }
        assert!(ladder.games > 0);
    }

    #[test]
    fn names() {
        assert_eq!(RungBot::from_name("random"), Some(RungBot::Random));
        assert_eq!(RungBot::from_name("level-10"), Some(RungBot::Level(10)));
        for bad in [
            "level-0", "level-11", "level-", "level-x", "Random", "greedy",
        ] {
            assert_eq!(RungBot::from_name(bad), None, "{bad}");
        }
        assert_eq!(RungBot::Level(3).to_string(), "level-3");
    }

    fn standings(anchor: &str, rules: &str, bots: &str) -> String {
        format!(
            r#"{{"league":{{"rules":"{rules}","width":8,"time":"move_time = \"1s\""}},"games_played":10,
            "bots":[{bots}],
            "ratings":{{"anchor":{anchor},"anchor_rating":0,"first_move_advantage":{{"value":30,"low":0,"high":60}}}}}}"#
        )
    }

    #[test]
    fn bad_lists_are_refused_with_the_reason() {
        let two = r#"{"name":"random","rating":{"value":0,"low":0,"high":0}},
                     {"name":"level-1","rating":{"value":200,"low":150,"high":250}}"#;
        let good = Ladder::from_standings(&standings("\"random\"", "hus", two)).expect("valid");
        assert_eq!(good.rungs[1].bot, RungBot::Level(1));
        assert_eq!(good.advantage, 30.0);
        let message = |json: String| {
            Ladder::from_standings(&json)
                .expect_err("refused")
                .to_string()
        };
        assert!(message(standings("null", "hus", two)).contains("anchored at \"\""));
        assert!(message(standings("\"random\"", "rulebook", two)).contains("rulebook at width 8"));
        let odd = r#"{"name":"random","rating":{"value":0,"low":0,"high":0}},
                     {"name":"greedy","rating":{"value":200,"low":150,"high":250}}"#;
        assert!(message(standings("\"random\"", "hus", odd)).contains("\"greedy\""));
        let unrated = r#"{"name":"random","rating":{"value":0,"low":0,"high":0}},
                     {"name":"level-2","rating":null}"#;
        assert!(message(standings("\"random\"", "hus", unrated)).contains("no rating"));
        assert!(message("{".into()).contains("not the JSON"));
    }
}
