//! Standings: the table of a league, computed from the store's finished sets alone, and
//! printed as text, JSON, CSV or Markdown. The JSON fields are documented in
//! docs/league.md and are stable.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use crate::store::{BotRow, FinishedSet, Progress};
use crate::tally::Tally;

mod render;

pub use render::OutputFormat;

/// Most rated bots whose likelihood of superiority is printed as a matrix in the text
/// table.
const MAX_LOS_MATRIX: usize = 12;

/// Won, drawn, lost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Record3 {
    /// Played: the sum of the three.
    pub played: u64,
    /// Won.
    pub won: u64,
    /// Drawn.
    pub drawn: u64,
    /// Lost.
    pub lost: u64,
}

impl Record3 {
    /// Adds another record's counts.
    pub(crate) fn merge(&mut self, other: &Record3) {
        self.played += other.played;
        self.won += other.won;
        self.drawn += other.drawn;
        self.lost += other.lost;
    }

    pub(crate) fn add(&mut self, mine: Option<bool>) {
        self.played += 1;
        match mine {
            Some(true) => self.won += 1,
            Some(false) => self.lost += 1,
            None => self.drawn += 1,
        }
    }

    fn show(&self) -> String {
        format!("{}-{}-{}", self.won, self.drawn, self.lost)
    }
}

/// A bot's faults.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Faults {
    /// All of them.
    pub total: u64,
    /// By fault kind (PROTOCOL.md): `time-out`, `crash`, ...
    pub by_kind: BTreeMap<String, u64>,
}

/// One line of the table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BotStanding {
    /// 1 for the leader; bots with equal figures share no rank (ties are broken by
    /// games won, then name).
    pub rank: usize,
    /// The bot's name.
    pub name: String,
    /// Its command, as last in the file.
    pub command: String,
    /// Still in the league file; a removed bot's finished sets still count.
    pub active: bool,
    /// Game points over all its sets.
    pub points: u64,
    /// Sets won (more points than the opponent), drawn, lost.
    pub sets: Record3,
    /// Games won, drawn, lost.
    pub games: Record3,
    /// Its faults.
    pub faults: Faults,
    /// Moves it made.
    pub moves: u64,
    /// Mean time per move in milliseconds (`null` before its first move).
    pub mean_move_ms: Option<f64>,
    /// Its rating (Elo scale) with the interval, from the fit of every game; `null` for
    /// a bot without games, or when fewer than two bots have played.
    pub rating: Option<RatingView>,
}

/// A fitted value with its standard error and 95% interval.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct RatingView {
    /// The estimate.
    pub value: f64,
    /// Its standard error (0 for the anchor bot).
    pub std_error: f64,
    /// Lower end of the 95% interval.
    pub low: f64,
    /// Upper end of the 95% interval.
    pub high: f64,
}

impl From<ratings::Estimate> for RatingView {
    fn from(e: ratings::Estimate) -> Self {
        RatingView {
            value: e.value,
            std_error: e.std_error,
            low: e.low,
            high: e.high,
        }
    }
}

/// The rating fit as a whole: its anchor, the first-move advantage, and the likelihood
/// of superiority of each pair.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RatingsView {
    /// The bot whose rating is held fixed, or `null` when the pool's average is.
    pub anchor: Option<String>,
    /// The anchor's rating (the pool average's when `anchor` is `null`).
    pub anchor_rating: f64,
    /// Confidence level of the intervals: 0.95.
    pub confidence: f64,
    /// Elo added to the first mover's rating difference, with its interval.
    pub first_move_advantage: RatingView,
    /// Every pair of rated bots, the better-rated first.
    pub pairs: Vec<PairComparison>,
}

/// Two rated bots compared.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PairComparison {
    /// The better-rated bot.
    pub a: String,
    /// The other.
    pub b: String,
    /// rating(a) − rating(b), with its interval (from the fit's covariance).
    pub difference: RatingView,
    /// The likelihood of superiority: the probability that a is stronger than b.
    pub los: f64,
}

/// Two bots' results against each other, over both seatings: a cell of the cross-table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HeadToHead {
    /// The better-ranked bot.
    pub a: String,
    /// The other.
    pub b: String,
    /// Game points of `a` and of `b` in their sets.
    pub points: [u64; 2],
    /// `a`'s games against `b`: won, drawn, lost.
    pub games: Record3,
    /// `a`'s sets against `b`: won, drawn, lost.
    pub sets: Record3,
}

/// Games decided between the bot that moved first and the one that moved second: the
/// input of a rating fit with a first-move advantage.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PairCounts {
    /// The bot that moved first.
    pub first: String,
    /// The bot that moved second.
    pub second: String,
    /// Games the first mover won.
    pub first_won: u64,
    /// Drawn games.
    pub drawn: u64,
    /// Games the second mover won.
    pub second_won: u64,
}

/// The league's settings, as shown above the table.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LeagueInfo {
    /// The rules preset.
    pub rules: String,
    /// The row width.
    pub width: u32,
    /// The time control, as the file writes it: `move_time = "100ms"`.
    pub time: String,
    /// Games per set.
    pub games_per_set: u32,
    /// The league's seed, a number for machines.
    pub seed: u64,
    /// The same seed in decimal, for JavaScript: its numbers keep 53 bits, a seed has
    /// 64.
    pub seed_str: String,
    /// The bot the ratings are anchored at; `null`: the pool's average.
    pub anchor: Option<String>,
    /// The anchor's rating.
    pub anchor_rating: f64,
    /// A league of teams: each team and its members (the entrants ranked below are the
    /// teams). Empty for a league of bots.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub teams: Vec<TeamView>,
}

/// A team of a league of teams, as the standings name it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TeamView {
    /// The team's name: an entrant of the table.
    pub name: String,
    /// Its members, bots of the league file.
    pub members: Vec<String>,
}

/// The store's `teams` setting: one team a line, `name: member, member`.
pub fn teams_setting(teams: &[crate::file::TeamConfig]) -> String {
    teams
        .iter()
        .map(|t| format!("{}: {}", t.name, t.members.join(", ")))
        .collect::<Vec<_>>()
        .join("\n")
}

fn parse_teams(text: &str) -> Vec<TeamView> {
    text.lines()
        .filter_map(|line| {
            let (name, members) = line.split_once(": ")?;
            Some(TeamView {
                name: name.to_string(),
                members: members.split(", ").map(str::to_string).collect(),
            })
        })
        .collect()
}

impl LeagueInfo {
    /// From the store's settings (missing values stay empty or zero).
    pub fn from_settings(settings: &BTreeMap<String, String>) -> LeagueInfo {
        let get = |k: &str| settings.get(k).cloned().unwrap_or_default();
        let seed = get("seed").parse().unwrap_or(0);
        LeagueInfo {
            rules: get("rules"),
            width: get("width").parse().unwrap_or(0),
            time: get("time"),
            games_per_set: get("games").parse().unwrap_or(0),
            seed,
            seed_str: seed.to_string(),
            anchor: settings.get("anchor").filter(|a| !a.is_empty()).cloned(),
            anchor_rating: get("anchor_rating")
                .parse()
                .unwrap_or(crate::file::DEFAULT_ANCHOR_RATING),
            teams: parse_teams(&get("teams")),
        }
    }
}

/// The whole table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Standings {
    /// The league's settings.
    pub league: LeagueInfo,
    /// How far it is.
    pub progress: ProgressView,
    /// Games in the finished sets.
    pub games_played: u64,
    /// Games won by the bot that moved first, drawn, and won by the second.
    pub first_mover: FirstMover,
    /// One line per bot, best first.
    pub bots: Vec<BotStanding>,
    /// The rating fit: anchor, first-move advantage, likelihood of superiority of each
    /// pair; `null` until two bots have played, or if the fit fails (`ratings_error`).
    pub ratings: Option<RatingsView>,
    /// Why there are no ratings although games were played, if the fit failed.
    pub ratings_error: Option<String>,
    /// Results by ordered pair (first mover, second mover): what the ratings are
    /// fitted to.
    pub pairs: Vec<PairCounts>,
    /// Every pair of bots that played, with its results over both seatings, in rank
    /// order (the better-ranked bot first): the cross-table.
    pub head_to_head: Vec<HeadToHead>,
}

/// Games by who moved first, over the whole league.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FirstMover {
    /// Won by the bot that moved first.
    pub won: u64,
    /// Drawn.
    pub drawn: u64,
    /// Won by the bot that moved second.
    pub lost: u64,
}

/// [`Progress`] as the standings show it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ProgressView {
    /// Sets of the current schedule.
    pub sets_scheduled: u64,
    /// Of those, finished.
    pub sets_done: u64,
    /// Being played now (or interrupted, when no league runs).
    pub sets_running: u64,
    /// Still to play.
    pub sets_pending: u64,
    /// Finished sets outside the current schedule (removed bots): they count.
    pub sets_done_elsewhere: u64,
}

impl From<Progress> for ProgressView {
    fn from(p: Progress) -> Self {
        ProgressView {
            sets_scheduled: p.scheduled,
            sets_done: p.done,
            sets_running: p.running,
            sets_pending: p.pending,
            sets_done_elsewhere: p.done_elsewhere,
        }
    }
}

/// Per ordered pair (first mover, second mover), the games' results: what a rating fit
/// with a first-move advantage takes. Sorted by names.
pub fn pair_counts(sets: &[FinishedSet]) -> Vec<PairCounts> {
    Tally::of(sets).pair_counts()
}

/// Computes the table from every bot and every finished set: their [`Tally`], then its
/// standings.
pub fn compute(
    league: LeagueInfo,
    progress: Progress,
    bots: &[BotRow],
    sets: &[FinishedSet],
) -> Standings {
    Tally::of(sets).standings(league, progress, bots)
}

impl Tally {
    /// The table of `bots` (the store's, removed ones included) from the sets counted
    /// so far; a set of a bot not among them does not count. The rating fit starts
    /// from this tally's last one when the same bots are rated.
    pub fn standings(
        &mut self,
        league: LeagueInfo,
        progress: Progress,
        bots: &[BotRow],
    ) -> Standings {
        let mut lines: Vec<BotStanding> = bots
            .iter()
            .map(|b| BotStanding {
                rank: 0,
                name: b.name.clone(),
                command: b.command.clone(),
                active: b.active,
                points: 0,
                sets: Record3::default(),
                games: Record3::default(),
                faults: Faults::default(),
                moves: 0,
                mean_move_ms: None,
                rating: None,
            })
            .collect();
        let index: HashMap<String, usize> = lines
            .iter()
            .enumerate()
            .map(|(i, l)| (l.name.clone(), i))
            .collect();
        let mut move_ms = vec![0.0f64; lines.len()];
        for ((a, b), pair) in &self.seated {
            let (Some(&ia), Some(&ib)) = (index.get(a), index.get(b)) else {
                continue;
            };
            for (seat, &i) in [ia, ib].iter().enumerate() {
                let t = &pair.seats[seat];
                let line = &mut lines[i];
                line.points += t.points;
                line.sets.merge(&t.sets);
                line.games.merge(&t.games);
                line.moves += t.moves;
                move_ms[i] += t.move_ms;
                line.faults.total += t.faults.total;
                for (kind, n) in &t.faults.by_kind {
                    *line.faults.by_kind.entry(kind.clone()).or_insert(0) += n;
                }
            }
        }
        for (line, ms) in lines.iter_mut().zip(&move_ms) {
            line.mean_move_ms = (line.moves > 0).then(|| ms / line.moves as f64);
        }
        let mut games_played = 0;
        let mut first_mover = FirstMover::default();
        for p in self.movers.values() {
            if index.contains_key(&p.first) && index.contains_key(&p.second) {
                games_played += p.first_won + p.drawn + p.second_won;
                first_mover.won += p.first_won;
                first_mover.drawn += p.drawn;
                first_mover.lost += p.second_won;
            }
        }
        let pairs = self.pair_counts();
        let (ratings, ratings_error) = match fit(&league, &pairs, &mut lines, &mut self.last_fit) {
            Ok(view) => (view, None),
            Err(e) => (None, Some(e.to_string())),
        };
        rank(&mut lines);
        let head_to_head = self.head_to_head(&lines);
        let ratings = ratings.map(|mut r| {
            // Pairs in rank order, the better-rated first.
            let rank: HashMap<&str, usize> =
                lines.iter().map(|l| (l.name.as_str(), l.rank)).collect();
            r.pairs.sort_by_key(|p| {
                (
                    rank.get(p.a.as_str()).copied(),
                    rank.get(p.b.as_str()).copied(),
                )
            });
            r
        });
        Standings {
            league,
            progress: progress.into(),
            games_played,
            first_mover,
            bots: lines,
            ratings,
            ratings_error,
            pairs,
            head_to_head,
        }
    }

    /// The results of each pair of `lines`' bots over both seatings, the better-ranked
    /// bot first, in rank order.
    fn head_to_head(&self, lines: &[BotStanding]) -> Vec<HeadToHead> {
        let rank: HashMap<&str, usize> = lines.iter().map(|l| (l.name.as_str(), l.rank)).collect();
        let mut cells: BTreeMap<(usize, usize), HeadToHead> = BTreeMap::new();
        for ((x, y), pair) in &self.seated {
            let (Some(&rx), Some(&ry)) = (rank.get(x.as_str()), rank.get(y.as_str())) else {
                continue;
            };
            // Seats of the better-ranked bot and of the other in this seating.
            let (a, b, seat_a, seat_b) = if rx <= ry { (x, y, 0, 1) } else { (y, x, 1, 0) };
            let cell = cells
                .entry((rx.min(ry), rx.max(ry)))
                .or_insert_with(|| HeadToHead {
                    a: a.clone(),
                    b: b.clone(),
                    points: [0, 0],
                    games: Record3::default(),
                    sets: Record3::default(),
                });
            cell.points[0] += pair.seats[seat_a].points;
            cell.points[1] += pair.seats[seat_b].points;
            cell.games.merge(&pair.seats[seat_a].games);
            cell.sets.merge(&pair.seats[seat_a].sets);
        }
        cells.into_values().collect()
    }
}

/// Best rating first; bots without one (no games) after, by points; then games won,
/// then name. Numbers the ranks.
fn rank(lines: &mut [BotStanding]) {
    lines.sort_by(|x, y| {
        let rating = |b: &BotStanding| b.rating.map(|r| r.value);
        match (rating(x), rating(y)) {
            (Some(rx), Some(ry)) => ry.total_cmp(&rx),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => std::cmp::Ordering::Equal,
        }
        .then(y.points.cmp(&x.points))
        .then(y.games.won.cmp(&x.games.won))
        .then(x.name.cmp(&y.name))
    });
    for (i, line) in lines.iter_mut().enumerate() {
        line.rank = i + 1;
    }
}

/// Fits ratings to every game at once (the `ratings` crate: Bradley-Terry on the Elo
/// scale with a first-move advantage and a weak prior that keeps a bot that won or lost
/// everything finite; docs/ratings.md), over the bots that have played, and writes each
/// bot's rating into its line. `None` until two bots have played.
fn fit(
    league: &LeagueInfo,
    pairs: &[PairCounts],
    lines: &mut [BotStanding],
    last_fit: &mut Option<(Vec<String>, ratings::Ratings)>,
) -> Result<Option<RatingsView>, ratings::Error> {
    let rated: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].games.played > 0)
        .collect();
    if rated.len() < 2 {
        return Ok(None);
    }
    let index: HashMap<&str, usize> = rated
        .iter()
        .enumerate()
        .map(|(k, &i)| (lines[i].name.as_str(), k))
        .collect();
    let mut table = ratings::GameTable::new(rated.len());
    for p in pairs {
        if let (Some(&f), Some(&s)) = (index.get(p.first.as_str()), index.get(p.second.as_str())) {
            table.add_games(f, s, ratings::Wdl::new(p.first_won, p.drawn, p.second_won))?;
        }
    }
    // A bot anchor that has not played yet cannot hold the scale: the pool average
    // does, at the same rating, and the view says so.
    let anchor_bot = league
        .anchor
        .as_ref()
        .and_then(|name| index.get(name.as_str()).map(|&k| (name.clone(), k)));
    let anchor = match &anchor_bot {
        Some((_, k)) => ratings::Anchor::Bot {
            bot: *k,
            rating: league.anchor_rating,
        },
        None => ratings::Anchor::Average(league.anchor_rating),
    };
    let options = ratings::FitOptions {
        anchor,
        ..ratings::FitOptions::default()
    };
    let names: Vec<String> = rated.iter().map(|&i| lines[i].name.clone()).collect();
    let previous = last_fit
        .as_ref()
        .filter(|(bots, _)| *bots == names)
        .map(|(_, fitted)| fitted);
    let fitted = ratings::Ratings::fit_from(&table, &options, previous)?;
    *last_fit = Some((names, fitted.clone()));
    for (k, &i) in rated.iter().enumerate() {
        lines[i].rating = Some(fitted.rating(k)?.into());
    }
    let mut comparisons = Vec::new();
    for a in 0..rated.len() {
        for b in a + 1..rated.len() {
            let c = fitted.compare(a, b)?;
            let (a, b, c) = if c.difference.value >= 0.0 {
                (a, b, c)
            } else {
                (b, a, fitted.compare(b, a)?)
            };
            comparisons.push(PairComparison {
                a: lines[rated[a]].name.clone(),
                b: lines[rated[b]].name.clone(),
                difference: c.difference.into(),
                los: c.los,
            });
        }
    }
    Ok(Some(RatingsView {
        anchor: anchor_bot.map(|(name, _)| name),
        anchor_rating: league.anchor_rating,
        confidence: fitted.confidence(),
        first_move_advantage: fitted.advantage().into(),
        pairs: comparisons,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log_place::LogPlace;
    use crate::schedule::SetKey;
    use crate::store::{FaultRow, GameRow, SetOutcome};
    use referee::{FaultKind, GameEndReason, Side};
    use Side::{A, B};

    fn game(n: u32, first: Side, winner: Option<Side>, points: [u32; 2]) -> GameRow {
        GameRow {
            game: n,
            first,
            winner,
            points,
            reason: GameEndReason::NoMoves,
            plies: 40,
            double: false,
            faulted: Vec::new(),
        }
    }

    fn bot(name: &str, active: bool) -> BotRow {
        BotRow {
            name: name.into(),
            command: format!("./{name}"),
            active,
        }
    }

    fn sample() -> Vec<FinishedSet> {
        vec![
            FinishedSet {
                key: SetKey {
                    round: 1,
                    a: "x".into(),
                    b: "y".into(),
                },
                seed: 1,
                pruned: false,
                finished: None,
                outcome: SetOutcome {
                    games: vec![
                        game(1, A, Some(A), [2, 0]),
                        game(2, B, Some(B), [0, 1]),
                        game(3, A, None, [0, 0]),
                    ],
                    faults: vec![FaultRow {
                        game: 2,
                        ply: 3,
                        bot: A,
                        kind: FaultKind::TimeOut,
                        detail: "late".into(),
                    }],
                    points: [2, 1],
                    winner: Some(A),
                    moves: [30, 29],
                    move_ms: [60.0, 29.0],
                    log: LogPlace::parse("logs/r1-x-vs-y.jsonl").expect("a log"),
                },
            },
            FinishedSet {
                key: SetKey {
                    round: 1,
                    a: "y".into(),
                    b: "z".into(),
                },
                seed: 2,
                pruned: false,
                finished: None,
                outcome: SetOutcome {
                    games: vec![game(1, B, Some(B), [0, 2])],
                    faults: Vec::new(),
                    points: [0, 2],
                    winner: Some(B),
                    moves: [10, 10],
                    move_ms: [10.0, 10.0],
                    log: LogPlace::parse("logs/r1-y-vs-z.jsonl").expect("a log"),
                },
            },
        ]
    }

    #[test]
    fn head_to_head_sums_both_seatings_the_better_ranked_first() {
        let bots = [bot("x", true), bot("y", true), bot("z", false)];
        let mut sets = sample();
        // y meets x again, seated first: y wins 2-0.
        let mut again = sets[0].clone();
        again.key.round = 2;
        std::mem::swap(&mut again.key.a, &mut again.key.b);
        again.outcome.games = vec![game(1, A, Some(A), [2, 0])];
        again.outcome.points = [2, 0];
        again.outcome.winner = Some(A);
        sets.push(again);
        let s = compute(LeagueInfo::default(), Progress::default(), &bots, &sets);
        let rank = |n: &str| s.bots.iter().position(|b| b.name == n).expect("ranked");
        assert_eq!(s.head_to_head.len(), 2);
        for cell in &s.head_to_head {
            assert!(rank(&cell.a) < rank(&cell.b), "{cell:?}");
        }
        let xy = s
            .head_to_head
            .iter()
            .find(|c| {
                [&c.a, &c.b].contains(&&"x".to_string()) && [&c.a, &c.b].contains(&&"y".to_string())
            })
            .expect("x and y");
        // x: 2 points in round 1, 0 in round 2; y: 1 and 2. Games: x won 1, drew 1,
        // lost 2; sets: x won 1, lost 1.
        let (points, games, sets_won) = if xy.a == "x" {
            ([2, 3], (1, 1, 2), (1, 0, 1))
        } else {
            ([3, 2], (2, 1, 1), (1, 0, 1))
        };
        assert_eq!(xy.points, points);
        assert_eq!((xy.games.won, xy.games.drawn, xy.games.lost), games);
        assert_eq!(xy.games.played, 4);
        assert_eq!((xy.sets.won, xy.sets.drawn, xy.sets.lost), sets_won);
        let yz = s
            .head_to_head
            .iter()
            .find(|c| c.a != "x" && c.b != "x")
            .expect("y and z");
        let (points, games) = if yz.a == "y" {
            ([0, 2], (0, 0, 1))
        } else {
            ([2, 0], (1, 0, 0))
        };
        assert_eq!(yz.points, points);
        assert_eq!((yz.games.won, yz.games.drawn, yz.games.lost), games);
    }

    #[test]
    fn the_table_adds_up_every_set_game_and_fault() {
        let bots = [bot("x", true), bot("y", true), bot("z", false)];
        let s = compute(LeagueInfo::default(), Progress::default(), &bots, &sample());
        let by_name = |n: &str| s.bots.iter().find(|b| b.name == n).cloned();
        let x = by_name("x").expect("x");
        assert_eq!(x.points, 2);
        assert_eq!(
            x.sets,
            Record3 {
                played: 1,
                won: 1,
                drawn: 0,
                lost: 0
            }
        );
        assert_eq!(
            x.games,
            Record3 {
                played: 3,
                won: 1,
                drawn: 1,
                lost: 1
            }
        );
        assert_eq!(x.faults.total, 1);
        assert_eq!(x.faults.by_kind.get("time-out"), Some(&1));
        assert_eq!(x.mean_move_ms, Some(2.0));
        let y = by_name("y").expect("y");
        assert_eq!(y.points, 1);
        assert_eq!(
            y.sets,
            Record3 {
                played: 2,
                won: 0,
                drawn: 0,
                lost: 2
            }
        );
        assert_eq!(
            y.games,
            Record3 {
                played: 4,
                won: 1,
                drawn: 1,
                lost: 2
            }
        );
        assert_eq!(y.mean_move_ms, Some(1.0));
        let z = by_name("z").expect("z");
        assert_eq!((z.points, z.active), (2, false));
        assert_eq!(s.games_played, 4);
        assert_eq!(
            s.first_mover,
            FirstMover {
                won: 3,
                drawn: 1,
                lost: 0
            }
        );
    }

    #[test]
    fn pair_counts_are_by_first_and_second_mover() {
        let pairs = pair_counts(&sample());
        let show: Vec<(String, String, u64, u64, u64)> = pairs
            .into_iter()
            .map(|p| (p.first, p.second, p.first_won, p.drawn, p.second_won))
            .collect();
        assert_eq!(
            show,
            [
                ("x".into(), "y".into(), 1, 1, 0),
                ("y".into(), "x".into(), 1, 0, 0),
                ("z".into(), "y".into(), 1, 0, 0),
            ]
        );
    }

    fn info(anchor: Option<&str>) -> LeagueInfo {
        LeagueInfo {
            rules: "hus".into(),
            width: 8,
            time: "move_time = \"100ms\"".into(),
            games_per_set: 3,
            seed: 9,
            seed_str: "9".into(),
            anchor: anchor.map(String::from),
            anchor_rating: 1500.0,
            teams: Vec::new(),
        }
    }

    #[test]
    fn the_teams_setting_reads_back() {
        let teams = [
            crate::file::TeamConfig {
                name: "red".into(),
                members: vec!["greedy".into(), "random".into()],
            },
            crate::file::TeamConfig {
                name: "blue".into(),
                members: vec!["js".into(), "java".into(), "rust".into()],
            },
        ];
        let text = teams_setting(&teams);
        assert_eq!(text, "red: greedy, random\nblue: js, java, rust");
        let back = parse_teams(&text);
        assert_eq!(back.len(), 2);
        assert_eq!(back[1].name, "blue");
        assert_eq!(back[1].members, ["js", "java", "rust"]);
        assert!(parse_teams("").is_empty());
    }

    #[test]
    fn ratings_are_the_fit_of_every_game_by_first_mover() {
        let bots = [
            bot("x", true),
            bot("y", true),
            bot("z", false),
            bot("new", true),
        ];
        let s = compute(info(None), Progress::default(), &bots, &sample());
        // The same fit, made by hand from the games: x-y 1 win and 1 draw for the
        // first mover x, y-x 1 win for the first mover y, z-y 1 win for z.
        let mut table = ratings::GameTable::new(3);
        let [x, y, z] = [0, 1, 2];
        table
            .add_games(x, y, ratings::Wdl::new(1, 1, 0))
            .expect("cell");
        table
            .add_games(y, x, ratings::Wdl::new(1, 0, 0))
            .expect("cell");
        table
            .add_games(z, y, ratings::Wdl::new(1, 0, 0))
            .expect("cell");
        let fit = ratings::Ratings::fit(&table, &ratings::FitOptions::default()).expect("fit");
        let rating = |name: &str| {
            s.bots
                .iter()
                .find(|b| b.name == name)
                .and_then(|b| b.rating)
        };
        for (name, k) in [("x", x), ("y", y), ("z", z)] {
            let expected = RatingView::from(fit.rating(k).expect("rating"));
            assert_eq!(rating(name), Some(expected), "{name}");
        }
        // A bot without games has no rating and comes last, after the rated ones in
        // rating order.
        assert_eq!(rating("new"), None);
        let order: Vec<&str> = s.bots.iter().map(|b| b.name.as_str()).collect();
        let mut rated: Vec<(&str, f64)> = ["x", "y", "z"]
            .iter()
            .map(|n| (*n, rating(n).map_or(0.0, |r| r.value)))
            .collect();
        rated.sort_by(|a, b| b.1.total_cmp(&a.1));
        assert_eq!(
            order[..3],
            rated.iter().map(|r| r.0).collect::<Vec<_>>()[..]
        );
        assert_eq!(order[3], "new");
        let mean: f64 = rated.iter().map(|r| r.1).sum::<f64>() / 3.0;
        assert!((mean - 1500.0).abs() < 1e-6, "{mean}");
        let view = s.ratings.as_ref().expect("ratings");
        assert_eq!(view.anchor, None);
        assert_eq!(view.first_move_advantage, RatingView::from(fit.advantage()));
        // Every pair once, the better-rated first, with the fit's LOS.
        assert_eq!(view.pairs.len(), 3);
        for p in &view.pairs {
            assert!(p.difference.value >= 0.0 && p.los >= 0.5, "{p:?}");
            assert!(rating(&p.a).map(|r| r.value) >= rating(&p.b).map(|r| r.value));
        }
        let (xi, zi) = (x, z);
        let c = fit.compare(zi, xi).expect("compare");
        let pair = view
            .pairs
            .iter()
            .find(|p| (p.a == "z" && p.b == "x") || (p.a == "x" && p.b == "z"))
            .expect("x-z");
        let los_z_over_x = if pair.a == "z" {
            pair.los
        } else {
            1.0 - pair.los
        };
        assert!((los_z_over_x - c.los).abs() < 1e-12);
    }

    #[test]
    fn a_bot_anchor_holds_its_rating_until_then_the_pool_average_does() {
        let bots = [
            bot("x", true),
            bot("y", true),
            bot("z", true),
            bot("w", true),
        ];
        let mut league = info(Some("y"));
        league.anchor_rating = 2000.0;
        let s = compute(league.clone(), Progress::default(), &bots, &sample());
        let y = s.bots.iter().find(|b| b.name == "y").and_then(|b| b.rating);
        assert_eq!(y.map(|r| (r.value, r.std_error)), Some((2000.0, 0.0)));
        assert_eq!(
            s.ratings.as_ref().and_then(|r| r.anchor.clone()),
            Some("y".into())
        );
        // w has not played: the pool's average holds the scale at its rating.
        league.anchor = Some("w".into());
        let s = compute(league, Progress::default(), &bots, &sample());
        let view = s.ratings.as_ref().expect("ratings");
        assert_eq!((view.anchor.clone(), view.anchor_rating), (None, 2000.0));
        let mean: f64 = s
            .bots
            .iter()
            .filter_map(|b| b.rating)
            .map(|r| r.value)
            .sum::<f64>()
            / 3.0;
        assert!((mean - 2000.0).abs() < 1e-6, "{mean}");
    }

    #[test]
    fn no_ratings_before_two_bots_have_played() {
        let bots = [bot("x", true), bot("y", true)];
        let s = compute(info(None), Progress::default(), &bots, &[]);
        assert_eq!(s.ratings, None);
        assert_eq!(s.ratings_error, None);
        assert!(s.bots.iter().all(|b| b.rating.is_none()));
        assert!(!s.render(OutputFormat::Text).contains("ratings:"));
    }

    #[test]
    fn formats() {
        let bots = [bot("x", true), bot("y", true), bot("z", false)];
        let progress = Progress {
            scheduled: 2,
            done: 1,
            running: 0,
            pending: 1,
            done_elsewhere: 1,
        };
        let s = compute(info(None), progress, &bots, &sample());
        let r = |name: &str| -> RatingView {
            s.bots
                .iter()
                .find(|b| b.name == name)
                .and_then(|b| b.rating)
                .expect("rated")
        };
        let (x, y, z) = (r("x"), r("y"), r("z"));
        // The figures of this data are tested above; here, the layout. In rating order:
        // y above x, since x's draw came with the first move.
        let order: Vec<&str> = s.bots.iter().map(|b| b.name.as_str()).collect();
        assert_eq!(order, ["z", "y", "x"]);
        let adv = s.ratings.as_ref().expect("ratings").first_move_advantage;
        let los = |a: &str, b: &str| s.los(a, b).map(|p| format!("{p:.2}")).unwrap_or_default();
        let iv = |v: RatingView| format!("[{:.0}, {:.0}]", v.low, v.high);
        assert_eq!(
            s.render(OutputFormat::Text),
            format!(
                "hus at width 8, move_time = \"100ms\", 3 games per set, seed 9
1 of 2 sets played (4 games), and 1 sets of bots no longer scheduled

rank  bot          rating    95% interval  points  sets w-d-l  games w-d-l  faults    ms/move
   1  z (removed)  {:>6}  {:>14}       2       1-0-0        1-0-0       0       1.00
   2  y            {:>6}  {:>14}       1       0-0-2        1-1-2       0       1.00
   3  x            {:>6}  {:>14}       2       1-0-0        1-1-1       1       2.00

faults:
  x: 1 time-out

the first mover won 3, drew 1 and lost 0 of 4 games

ratings: Elo scale, fitted to all 4 games at once, pool average 1500, 95% intervals; first-move advantage {:+.0} [{:+.0}, {:+.0}]
likelihood of superiority (row over column):
        z     y     x
  z     -  {:>4}  {:>4}
  y  {:>4}     -  {:>4}
  x  {:>4}  {:>4}     -
",
                format!("{:.0}", z.value),
                iv(z),
                format!("{:.0}", y.value),
                iv(y),
                format!("{:.0}", x.value),
                iv(x),
                adv.value,
                adv.low,
                adv.high,
                los("z", "y"),
                los("z", "x"),
                los("y", "z"),
                los("y", "x"),
                los("x", "z"),
                los("x", "y"),
            )
        );
        assert_eq!(
            s.render(OutputFormat::Csv),
            format!(
                "rank,name,active,rating,rating_low,rating_high,points,sets_played,sets_won,sets_drawn,sets_lost,games_played,games_won,games_drawn,games_lost,faults,faults_by_kind,moves,mean_move_ms
1,z,false,{:.1},{:.1},{:.1},2,1,1,0,0,1,1,0,0,0,,10,1.000
2,y,true,{:.1},{:.1},{:.1},1,2,0,0,2,4,1,1,2,0,,39,1.000
3,x,true,{:.1},{:.1},{:.1},2,1,1,0,0,3,1,1,1,1,time-out=1,30,2.000
",
                z.value, z.low, z.high, y.value, y.low, y.high, x.value, x.low, x.high
            )
        );
        let md = s.render(OutputFormat::Markdown);
        assert!(
            md.contains(&format!(
                "| 3 | x | {:.0} | {} | 2 | 1-0-0 | 1-1-1 | 1 time-out | 2.00 |",
                x.value,
                iv(x)
            )),
            "{md}"
        );
        let json: serde_json::Value =
            serde_json::from_str(&s.render(OutputFormat::Json)).expect("json");
        assert_eq!(json["bots"][2]["name"], "x");
        assert_eq!(json["bots"][2]["games"]["won"], 1);
        assert_eq!(json["bots"][2]["faults"]["by_kind"]["time-out"], 1);
        assert_eq!(json["bots"][2]["rating"]["value"], x.value);
        assert_eq!(json["progress"]["sets_pending"], 1);
        assert_eq!(json["league"]["seed"], 9);
        assert_eq!(json["league"]["seed_str"], "9");
        assert_eq!(json["league"]["anchor"], serde_json::Value::Null);
        assert_eq!(json["ratings"]["pairs"][0]["a"], "z");
        assert_eq!(json["ratings"]["first_move_advantage"]["value"], adv.value);
        assert_eq!(json["pairs"][0]["first"], "x");
    }
}
