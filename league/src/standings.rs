//! Standings: the table of a league, computed from the store's finished sets alone, and
//! printed as text, JSON, CSV or Markdown. The JSON fields are documented in
//! docs/league.md and are stable.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use serde::Serialize;

use crate::store::{BotRow, FinishedSet, Progress};

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
    fn add(&mut self, mine: Option<bool>) {
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
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LeagueInfo {
    /// The rules preset.
    pub rules: String,
    /// The row width.
    pub width: u32,
    /// The time control, as the file writes it: `move_time = "100ms"`.
    pub time: String,
    /// Games per set.
    pub games_per_set: u32,
    /// The league's seed.
    pub seed: u64,
}

impl LeagueInfo {
    /// From the store's settings (missing values stay empty or zero).
    pub fn from_settings(settings: &BTreeMap<String, String>) -> LeagueInfo {
        let get = |k: &str| settings.get(k).cloned().unwrap_or_default();
        LeagueInfo {
            rules: get("rules"),
            width: get("width").parse().unwrap_or(0),
            time: get("time"),
            games_per_set: get("games").parse().unwrap_or(0),
            seed: get("seed").parse().unwrap_or(0),
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
    /// Results by ordered pair (first mover, second mover), for the ratings.
    pub pairs: Vec<PairCounts>,
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
    let mut map: BTreeMap<(&str, &str), PairCounts> = BTreeMap::new();
    for set in sets {
        let names = [set.key.a.as_str(), set.key.b.as_str()];
        for g in &set.outcome.games {
            let first = names[usize::from(g.first & 1)];
            let second = names[usize::from(1 - (g.first & 1))];
            let entry = map.entry((first, second)).or_insert_with(|| PairCounts {
                first: first.to_string(),
                second: second.to_string(),
                ..PairCounts::default()
            });
            match g.winner {
                None => entry.drawn += 1,
                Some(w) if w == g.first => entry.first_won += 1,
                Some(_) => entry.second_won += 1,
            }
        }
    }
    map.into_values().collect()
}

/// Computes the table from every bot and every finished set.
pub fn compute(
    league: LeagueInfo,
    progress: Progress,
    bots: &[BotRow],
    sets: &[FinishedSet],
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
        })
        .collect();
    let index: HashMap<String, usize> = lines
        .iter()
        .enumerate()
        .map(|(i, l)| (l.name.clone(), i))
        .collect();
    let mut move_ms = vec![0.0f64; lines.len()];
    let mut games_played = 0;
    let mut first_mover = FirstMover::default();
    for set in sets {
        let (Some(&ia), Some(&ib)) = (index.get(&set.key.a), index.get(&set.key.b)) else {
            continue;
        };
        let seats = [ia, ib];
        let o = &set.outcome;
        for seat in 0..2 {
            let line = &mut lines[seats[seat]];
            line.points += u64::from(o.points[seat]);
            line.sets.add(o.winner.map(|w| usize::from(w) == seat));
            line.moves += o.moves[seat];
            move_ms[seats[seat]] += o.move_ms[seat];
        }
        for g in &o.games {
            games_played += 1;
            for (seat, &i) in seats.iter().enumerate() {
                lines[i].games.add(g.winner.map(|w| usize::from(w) == seat));
            }
            match g.winner {
                None => first_mover.drawn += 1,
                Some(w) if w == g.first => first_mover.won += 1,
                Some(_) => first_mover.lost += 1,
            }
        }
        for f in &o.faults {
            let line = &mut lines[seats[usize::from(f.bot & 1)]];
            line.faults.total += 1;
            *line.faults.by_kind.entry(f.kind.clone()).or_insert(0) += 1;
        }
    }
    for (line, ms) in lines.iter_mut().zip(&move_ms) {
        line.mean_move_ms = (line.moves > 0).then(|| ms / line.moves as f64);
    }
    lines.sort_by(|x, y| {
        y.points
            .cmp(&x.points)
            .then(y.games.won.cmp(&x.games.won))
            .then(x.name.cmp(&y.name))
    });
    for (i, line) in lines.iter_mut().enumerate() {
        line.rank = i + 1;
    }
    Standings {
        league,
        progress: progress.into(),
        games_played,
        first_mover,
        bots: lines,
        pairs: pair_counts(sets),
    }
}

/// How standings are printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    /// A table for people.
    Text,
    /// One JSON object with every figure (docs/league.md).
    Json,
    /// One line per bot, with a header line.
    Csv,
    /// A Markdown table.
    Markdown,
}

impl Standings {
    /// The standings in `format`, ending with a newline.
    pub fn render(&self, format: OutputFormat) -> String {
        match format {
            OutputFormat::Text => self.text(),
            OutputFormat::Json => {
                let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
                s.push('\n');
                s
            }
            OutputFormat::Csv => self.csv(),
            OutputFormat::Markdown => self.markdown(),
        }
    }

    fn label(b: &BotStanding) -> String {
        if b.active {
            b.name.clone()
        } else {
            format!("{} (removed)", b.name)
        }
    }

    fn ms(b: &BotStanding) -> String {
        b.mean_move_ms
            .map(|m| format!("{m:.2}"))
            .unwrap_or_else(|| "-".to_string())
    }

    /// The header of the table for people: settings and progress.
    pub fn summary_line(&self) -> String {
        let l = &self.league;
        let p = &self.progress;
        let mut s = format!(
            "{} at width {}, {}, {} games per set, seed {}\n{} of {} sets played ({} games)",
            l.rules,
            l.width,
            l.time,
            l.games_per_set,
            l.seed,
            p.sets_done,
            p.sets_scheduled,
            self.games_played
        );
        if p.sets_done_elsewhere > 0 {
            let _ = write!(
                s,
                ", and {} sets of bots no longer scheduled",
                p.sets_done_elsewhere
            );
        }
        s
    }

    fn text(&self) -> String {
        let mut s = self.summary_line();
        s.push_str("\n\n");
        let width = self
            .bots
            .iter()
            .map(|b| Self::label(b).len())
            .max()
            .unwrap_or(3)
            .max(3);
        let _ = writeln!(
            s,
            "{:>4}  {:<width$}  {:>7}  {:>10}  {:>11}  {:>6}  {:>9}",
            "rank", "bot", "points", "sets w-d-l", "games w-d-l", "faults", "ms/move"
        );
        for b in &self.bots {
            let _ = writeln!(
                s,
                "{:>4}  {:<width$}  {:>7}  {:>10}  {:>11}  {:>6}  {:>9}",
                b.rank,
                Self::label(b),
                b.points,
                b.sets.show(),
                b.games.show(),
                b.faults.total,
                Self::ms(b)
            );
        }
        let faulty: Vec<&BotStanding> = self.bots.iter().filter(|b| b.faults.total > 0).collect();
        if !faulty.is_empty() {
            s.push_str("\nfaults:\n");
            for b in faulty {
                let kinds: Vec<String> = b
                    .faults
                    .by_kind
                    .iter()
                    .map(|(k, n)| format!("{n} {k}"))
                    .collect();
                let _ = writeln!(s, "  {}: {}", b.name, kinds.join(", "));
            }
        }
        let f = &self.first_mover;
        if self.games_played > 0 {
            let _ = writeln!(
                s,
                "\nthe first mover won {}, drew {} and lost {} of {} games",
                f.won, f.drawn, f.lost, self.games_played
            );
        }
        s
    }

    fn csv(&self) -> String {
        let mut s = String::from(
            "rank,name,active,points,sets_played,sets_won,sets_drawn,sets_lost,games_played,games_won,games_drawn,games_lost,faults,faults_by_kind,moves,mean_move_ms\n",
        );
        for b in &self.bots {
            let kinds: Vec<String> = b
                .faults
                .by_kind
                .iter()
                .map(|(k, n)| format!("{k}={n}"))
                .collect();
            let _ = writeln!(
                s,
                "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
                b.rank,
                b.name,
                b.active,
                b.points,
                b.sets.played,
                b.sets.won,
                b.sets.drawn,
                b.sets.lost,
                b.games.played,
                b.games.won,
                b.games.drawn,
                b.games.lost,
                b.faults.total,
                kinds.join(";"),
                b.moves,
                b.mean_move_ms
                    .map(|m| format!("{m:.3}"))
                    .unwrap_or_default()
            );
        }
        s
    }

    fn markdown(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "{}\n", self.summary_line().replace('\n', "; "));
        s.push_str("| rank | bot | points | sets w-d-l | games w-d-l | faults | ms/move |\n");
        s.push_str("|---:|---|---:|---:|---:|---|---:|\n");
        for b in &self.bots {
            let kinds: Vec<String> = b
                .faults
                .by_kind
                .iter()
                .map(|(k, n)| format!("{n} {k}"))
                .collect();
            let faults = if kinds.is_empty() {
                "0".to_string()
            } else {
                kinds.join(", ")
            };
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} | {} |",
                b.rank,
                Self::label(b),
                b.points,
                b.sets.show(),
                b.games.show(),
                faults,
                Self::ms(b)
            );
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schedule::SetKey;
    use crate::store::{FaultRow, GameRow, SetOutcome};

    fn game(n: u32, first: u8, winner: Option<u8>, points: [u32; 2]) -> GameRow {
        GameRow {
            game: n,
            first,
            winner,
            points,
            reason: "no-moves".into(),
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
                outcome: SetOutcome {
                    games: vec![
                        game(1, 0, Some(0), [2, 0]),
                        game(2, 1, Some(1), [0, 1]),
                        game(3, 0, None, [0, 0]),
                    ],
                    faults: vec![FaultRow {
                        game: 2,
                        ply: 3,
                        bot: 0,
                        kind: "time-out".into(),
                        detail: "late".into(),
                    }],
                    points: [2, 1],
                    winner: Some(0),
                    moves: [30, 29],
                    move_ms: [60.0, 29.0],
                    log: "logs/r1-x-vs-y.jsonl".into(),
                },
            },
            FinishedSet {
                key: SetKey {
                    round: 1,
                    a: "y".into(),
                    b: "z".into(),
                },
                seed: 2,
                outcome: SetOutcome {
                    games: vec![game(1, 1, Some(1), [0, 2])],
                    faults: Vec::new(),
                    points: [0, 2],
                    winner: Some(1),
                    moves: [10, 10],
                    move_ms: [10.0, 10.0],
                    log: "logs/r1-y-vs-z.jsonl".into(),
                },
            },
        ]
    }

    #[test]
    fn the_table_adds_up_every_set_game_and_fault() {
        let bots = [bot("x", true), bot("y", true), bot("z", false)];
        let s = compute(LeagueInfo::default(), Progress::default(), &bots, &sample());
        let by_name = |n: &str| s.bots.iter().find(|b| b.name == n).cloned();
        let x = by_name("x").expect("x");
        assert_eq!((x.rank, x.points), (1, 2));
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
        assert_eq!((y.rank, y.points), (3, 1));
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
        assert_eq!((z.rank, z.points, z.active), (2, 2, false));
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

    #[test]
    fn formats() {
        let bots = [bot("x", true), bot("y", true), bot("z", false)];
        let info = LeagueInfo {
            rules: "hus".into(),
            width: 8,
            time: "move_time = \"100ms\"".into(),
            games_per_set: 3,
            seed: 9,
        };
        let progress = Progress {
            scheduled: 2,
            done: 1,
            running: 0,
            pending: 1,
            done_elsewhere: 1,
        };
        let s = compute(info, progress, &bots, &sample());
        assert_eq!(
            s.render(OutputFormat::Text),
            "hus at width 8, move_time = \"100ms\", 3 games per set, seed 9
1 of 2 sets played (4 games), and 1 sets of bots no longer scheduled

rank  bot           points  sets w-d-l  games w-d-l  faults    ms/move
   1  x                  2       1-0-0        1-1-1       1       2.00
   2  z (removed)        2       1-0-0        1-0-0       0       1.00
   3  y                  1       0-0-2        1-1-2       0       1.00

faults:
  x: 1 time-out

the first mover won 3, drew 1 and lost 0 of 4 games
"
        );
        assert_eq!(
            s.render(OutputFormat::Csv),
            "rank,name,active,points,sets_played,sets_won,sets_drawn,sets_lost,games_played,games_won,games_drawn,games_lost,faults,faults_by_kind,moves,mean_move_ms
1,x,true,2,1,1,0,0,3,1,1,1,1,time-out=1,30,2.000
2,z,false,2,1,1,0,0,1,1,0,0,0,,10,1.000
3,y,true,1,2,0,0,2,4,1,1,2,0,,39,1.000
"
        );
        let md = s.render(OutputFormat::Markdown);
        assert!(
            md.contains("| 1 | x | 2 | 1-0-0 | 1-1-1 | 1 time-out | 2.00 |"),
            "{md}"
        );
        let json: serde_json::Value =
            serde_json::from_str(&s.render(OutputFormat::Json)).expect("json");
        assert_eq!(json["bots"][0]["name"], "x");
        assert_eq!(json["bots"][0]["games"]["won"], 1);
        assert_eq!(json["bots"][0]["faults"]["by_kind"]["time-out"], 1);
        assert_eq!(json["progress"]["sets_pending"], 1);
        assert_eq!(json["league"]["seed"], 9);
        assert_eq!(json["pairs"][0]["first"], "x");
    }
}
