//! `hus rate BOT`: the bot against the ladder, set by set, each set through
//! `referee::play_set`; after each set its rating is fitted with the ladder's ratings
//! held fixed, and the next set goes to the opponent whose games tell most about it.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use engine::Rules;
use ratings::{Advantage, Anchor, FitOptions, GameTable, Outcome, Ratings};
use referee::{
    play_set, BotSpec, Entrant, Limits, Lineup, LogWriter, Record, RecordSink, SetConfig, Side,
    TimeControl,
};
use serde_json::json;

use crate::args::RateArgs;
use crate::list::{Ladder, RungBot, BOOK, BOOK_NAME, RULES};

/// The least time per move: the ladder's own (`leagues/ladder.toml`).
pub const LADDER_MOVE_TIME: Duration = Duration::from_secs(1);
/// Most games `hus rate` plays.
const MAX_GAMES: u32 = 10_000;

/// `hus rate`, checked.
struct RateConfig {
    bot: BotSpec,
    ladder: Ladder,
    /// The rungs it may play, indices into `ladder.rungs`.
    allowed: Vec<usize>,
    ladder_bot: PathBuf,
    hus: PathBuf,
    book: Vec<engine::AnyPosition>,
    games: u32,
    set_games: u32,
    move_time: Duration,
    ready_time: Duration,
    seed: u64,
    log_dir: PathBuf,
    json: bool,
}

impl RateConfig {
    fn from_args(args: &RateArgs) -> Result<RateConfig> {
        let ladder = load_ladder(args)?;
        let Some(bot) = &args.bot else {
            bail!("give the command of the bot to rate");
        };
        let bot = BotSpec::parse(bot)?;
        let allowed = if args.only.is_empty() {
            (0..ladder.rungs.len()).collect()
        } else {
            let mut allowed = Vec::new();
            for name in &args.only {
                let index = RungBot::from_name(name)
                    .and_then(|b| ladder.rungs.iter().position(|r| r.bot == b))
                    .with_context(|| {
                        format!(
                            "--only: the ladder has no bot {name:?} (it has {})",
                            names(&ladder)
                        )
                    })?;
                if !allowed.contains(&index) {
                    allowed.push(index);
                }
            }
            allowed
        };
        if args.set_games == 0 || !args.set_games.is_multiple_of(2) {
            bail!(
                "--set-games must be an even number (games go in pairs), got {}",
                args.set_games
            );
        }
        if args.games == 0 || args.games > MAX_GAMES || !args.games.is_multiple_of(args.set_games) {
            bail!(
                "--games must be a multiple of --set-games ({}) from {} to {MAX_GAMES}, got {}",
                args.set_games,
                args.set_games,
                args.games
            );
        }
        let move_time = referee::parse_duration(&args.move_time).context("invalid --move-time")?;
        if move_time < LADDER_MOVE_TIME {
            bail!(
                "--move-time must be at least 1s, the ladder's own: its levels were rated at 1s a move (got {})",
                args.move_time
            );
        }
        let ready_time =
            referee::parse_duration(&args.ready_time).context("invalid --ready-time")?;
        if ready_time.is_zero() {
            bail!("--ready-time must be more than 0");
        }
        let hus = std::env::current_exe()
            .context("cannot find the hus binary itself (to run the random mover)")?;
        let ladder_bot = match &args.ladder_bot {
            Some(path) => path.clone(),
            None => default_ladder_bot(&hus),
        };
        let plays_levels = allowed
            .iter()
            .any(|&i| matches!(ladder.rungs[i].bot, RungBot::Level(_)));
        if plays_levels && !ladder_bot.is_file() {
            bail!(
                "the ladder's levels are played by the Rust alpha-beta bot, and there is no {}: build it with `cargo build --release -p alphabeta-bot`, or give its path with --ladder-bot",
                ladder_bot.display()
            );
        }
        let rules = Rules::new(RULES.0, RULES.1).context("the ladder's rules")?;
        let book = referee::openings_from_text(Path::new(BOOK_NAME), BOOK, rules)
            .context("the ladder's book")?;
        Ok(RateConfig {
            bot,
            ladder,
            allowed,
            ladder_bot,
            hus,
            book,
            games: args.games,
            set_games: args.set_games,
            move_time,
            ready_time,
            seed: args.seed.unwrap_or_else(referee::fresh_seed),
            log_dir: args.log_dir.clone(),
            json: args.json,
        })
    }

    /// The command of a rung's bot for the set with seed `seed`.
    fn rung_command(&self, bot: RungBot, seed: u64) -> BotSpec {
        let (shown, argv) = match bot {
            RungBot::Random => (
                format!("hus random-bot --seed {seed}"),
                vec![
                    self.hus.display().to_string(),
                    "random-bot".into(),
                    "--seed".into(),
                    seed.to_string(),
                ],
            ),
            RungBot::Level(n) => {
                let argv = vec![
                    self.ladder_bot.display().to_string(),
                    "--level".into(),
                    n.to_string(),
                    "--seed".into(),
                    seed.to_string(),
                ];
                (argv.join(" "), argv)
            }
        };
        BotSpec {
            command: shown,
            argv,
        }
    }
}

/// `alphabeta-bot` beside hus: in the directory of the command as it was run
/// (`./target/release/hus`, even when that is a link), else in that of the binary.
fn default_ladder_bot(hus: &Path) -> PathBuf {
    let named = std::env::args_os()
        .next()
        .map(PathBuf::from)
        .filter(|p| p.components().count() > 1)
        .and_then(|p| p.parent().map(|dir| dir.join("alphabeta-bot")));
    let beside_binary = hus.parent().map(|dir| dir.join("alphabeta-bot"));
    named
        .filter(|p| p.is_file())
        .or(beside_binary)
        .unwrap_or_else(|| PathBuf::from("alphabeta-bot"))
}

fn names(ladder: &Ladder) -> String {
    ladder
        .rungs
        .iter()
        .map(|r| r.bot.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// One set's result, for the report.
#[derive(Clone, Debug)]
struct SetResult {
    opponent: RungBot,
    opponent_rating: f64,
    wins: u32,
    draws: u32,
    losses: u32,
    faults: u32,
    log: PathBuf,
}

/// The games of the rated bot so far, and what they say.
struct Tally {
    /// Rungs 0..n, then the rated bot at index n.
    table: GameTable,
    options: FitOptions,
    bot: usize,
    sets_against: Vec<u32>,
}

impl Tally {
    fn new(ladder: &Ladder) -> Tally {
        let n = ladder.rungs.len();
        Tally {
            table: GameTable::new(n + 1),
            options: FitOptions {
                anchor: Anchor::Fixed(
                    ladder
                        .rungs
                        .iter()
                        .enumerate()
                        .map(|(i, r)| (i, r.rating))
                        .collect(),
                ),
                advantage: Advantage::Fixed(ladder.advantage),
                ..FitOptions::default()
            },
            bot: n,
            sets_against: vec![0; n],
        }
    }

    fn fit(&self) -> Result<Ratings> {
        Ratings::fit(&self.table, &self.options).context("cannot fit the rating")
    }

    /// The rung to play next: the one whose game tells most about the bot's rating
    /// (the largest p·(1−p), p the bot's expected score against it), each counting
    /// less the more sets it has already played: information / (1 + sets).
    fn next_rung(&self, ladder: &Ladder, allowed: &[usize], estimate: f64) -> usize {
        let mut best = (f64::MIN, allowed[0]);
        for &i in allowed {
            let p = ratings::expected_score(estimate - ladder.rungs[i].rating);
            let value = p * (1.0 - p) / (1.0 + f64::from(self.sets_against[i]));
            if value > best.0 {
                best = (value, i);
            }
        }
        best.1
    }
}

/// Collects a set's games as the log is written.
struct Collector {
    log: LogWriter,
    /// (first mover, winner) of each finished game, by side (A: the rated bot).
    games: Vec<(Side, Option<Side>)>,
    first: Side,
    faults: u32,
}

impl RecordSink for Collector {
    fn record(&mut self, record: &Record) -> Result<(), referee::WriteError> {
        self.log.record(record)?;
        match record {
            Record::GameStart(start) => self.first = start.first,
            Record::GameEnd(end) => self.games.push((self.first, end.winner)),
            Record::Fault(fault) if fault.bot == Side::A => self.faults += 1,
            _ => {}
        }
        Ok(())
    }
}

/// The ladder of `--ladder FILE`, or the shipped one.
fn load_ladder(args: &RateArgs) -> Result<Ladder> {
    match &args.ladder {
        None => Ladder::shipped().context("the shipped ladder"),
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read --ladder {}", path.display()))?;
            Ladder::from_standings(&text).with_context(|| format!("--ladder {}", path.display()))
        }
    }
}

/// `hus rate`: exit 0 when every game was played, 130 when stopped by Ctrl-C or
/// SIGTERM.
pub fn run(args: &RateArgs) -> Result<ExitCode> {
    if args.list {
        let ladder = load_ladder(args)?;
        print!("{}", ladder.to_text());
        return Ok(ExitCode::SUCCESS);
    }
    let config = RateConfig::from_args(args)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async move {
        // Installed before the first set: a stop at any moment ends the set being played
        // with its `aborted` record, as `hus match` does.
        let stop = referee::stop_signal();
        rate(&config, stop).await
    })
}

/// Prints a line of the report (not with --json). A closed stdout does not stop the
/// games.
fn say(config: &RateConfig, line: &str) {
    if !config.json {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }
}

/// "1240 ± 45" from an estimate: the half-width of its interval.
fn plus_minus(value: f64, low: f64, high: f64) -> String {
    format!("{:.0} ± {:.0}", value, (high - low) / 2.0)
}

async fn rate(
    config: &RateConfig,
    stop: impl std::future::Future<Output = &'static str>,
) -> Result<ExitCode> {
    tokio::pin!(stop);
    let ladder = &config.ladder;
    let sets = config.games / config.set_games;
    say(
        config,
        &format!(
            "hus rate: {} against the hus ladder ({} rungs, the random mover at 0)",
            config.bot.command,
            config.allowed.len()
        ),
    );
    say(
        config,
        &format!(
            "  hus at width 8, {} a move, {} games in sets of {} from {BOOK_NAME}, seed {}",
            referee::show_duration(config.move_time),
            config.games,
            config.set_games,
            config.seed
        ),
    );
    let referee = referee::referee_version();
    let mut tally = Tally::new(ladder);
    let mut results: Vec<SetResult> = Vec::new();
    // Before any game: the middle of the ladder.
    let mut estimate = {
        let allowed: Vec<f64> = config
            .allowed
            .iter()
            .map(|&i| ladder.rungs[i].rating)
            .collect();
        allowed.iter().sum::<f64>() / allowed.len() as f64
    };
    let mut fitted = None;
    for set_no in 1..=sets {
        let rung_index = tally.next_rung(ladder, &config.allowed, estimate);
        let rung = &ladder.rungs[rung_index];
        let seed = config.seed.wrapping_add(u64::from(set_no));
        let stem = format!("rate-{}-set{set_no}-vs-{}", config.seed, rung.bot);
        let (log, stem) = LogWriter::create(&config.log_dir, &stem)?;
        let entrants = [
            Entrant::Process {
                spec: config.bot.clone(),
                stderr: config.log_dir.join(format!("{stem}.a.stderr")).into(),
                limits: Limits::default(),
                version: None,
            },
            Entrant::Process {
                spec: config.rung_command(rung.bot, seed),
                stderr: config.log_dir.join(format!("{stem}.b.stderr")).into(),
                limits: Limits::default(),
                version: None,
            },
        ];
        let set = SetConfig {
            rules: Rules::new(RULES.0, RULES.1).context("the ladder's rules")?,
            games: config.set_games,
            seed,
            time: TimeControl::PerMove(config.move_time),
            ready_time: config.ready_time,
            early_stop: false,
            openings: referee::openings_for_set(&config.book, seed, config.set_games),
            sprt: None,
        };
        let mut sink = Collector {
            log,
            games: Vec::new(),
            first: Side::A,
            faults: 0,
        };
        let log_path = sink.log.path().to_path_buf();
        let played = tokio::select! {
            result = play_set(&set, entrants.map(Lineup::from).into(), &referee, &mut sink) => Ok(result),
            why = &mut stop => Err(why),
        };
        match played {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => {
                if e.nothing_played() {
                    // A bot that cannot start leaves no log (it would hold only its
                    // header).
                    sink.log.discard_unstarted(&[]);
                }
                return Err(
                    anyhow::Error::new(e).context(format!("set {set_no} against {}", rung.bot))
                );
            }
            Err(why) => {
                // The set's future is gone, and with it its bots: its log ends with
                // `aborted`, and so replays as a set stopped part-way.
                sink.log.end_aborted(format!("stopped by {why}"));
                eprintln!(
                    "hus rate: stopped by {why} in set {set_no}; {}",
                    sink.log.stopped_words()
                );
                return Ok(ExitCode::from(130));
            }
        }
        let mut result = SetResult {
            opponent: rung.bot,
            opponent_rating: rung.rating,
            wins: 0,
            draws: 0,
            losses: 0,
            faults: sink.faults,
            log: log_path,
        };
        for &(first, winner) in &sink.games {
            let outcome = match winner {
                None => Outcome::Draw,
                Some(w) if w == first => Outcome::Win,
                Some(_) => Outcome::Loss,
            };
            let (a, b) = match first {
                Side::A => (tally.bot, rung_index),
                Side::B => (rung_index, tally.bot),
            };
            tally.table.add_game(a, b, outcome)?;
            match winner {
                None => result.draws += 1,
                Some(Side::A) => result.wins += 1,
                Some(Side::B) => result.losses += 1,
            }
        }
        tally.sets_against[rung_index] += 1;
        let fit = tally.fit()?;
        let now = fit.rating(tally.bot)?;
        estimate = now.value;
        say(
            config,
            &format!(
                "set {set_no} against {} (rated {:.0}): won {}, drawn {}, lost {}{}; your bot is now {}",
                rung.bot,
                rung.rating,
                result.wins,
                result.draws,
                result.losses,
                match result.faults {
                    0 => String::new(),
                    n => format!(" ({n} by faults of your bot: see {})", result.log.display()),
                },
                plus_minus(now.value, now.low, now.high)
            ),
        );
        results.push(result);
        fitted = Some(now);
    }
    let Some(rating) = fitted else {
        bail!("no set was played");
    };
    let (wins, draws, losses, faults) = results.iter().fold((0, 0, 0, 0), |t, r| {
        (t.0 + r.wins, t.1 + r.draws, t.2 + r.losses, t.3 + r.faults)
    });
    if config.json {
        let summary = json!({
            "bot": config.bot.command,
            "rating": {
                "value": rating.value,
                "std_error": rating.std_error,
                "low": rating.low,
                "high": rating.high,
            },
            "seed": config.seed,
            "games": wins + draws + losses,
            "won": wins,
            "drawn": draws,
            "lost": losses,
            "faults": faults,
            "sets": results.iter().map(|r| json!({
                "opponent": r.opponent.to_string(),
                "opponent_rating": r.opponent_rating,
                "won": r.wins,
                "drawn": r.draws,
                "lost": r.losses,
                "faults": r.faults,
                "log": r.log.display().to_string(),
            })).collect::<Vec<_>>(),
        });
        println!("{summary}");
    } else {
        say(config, "");
        say(
            config,
            &format!(
                "your bot is {} on the hus ladder",
                plus_minus(rating.value, rating.low, rating.high)
            ),
        );
        say(
            config,
            &format!(
                "  95% interval [{:.0}, {:.0}]; {} games: won {wins}, drawn {draws}, lost {losses}, faults {faults}; logs in {}",
                rating.low,
                rating.high,
                wins + draws + losses,
                config.log_dir.display()
            ),
        );
        let below = ladder.rungs.iter().rev().find(|r| r.rating <= rating.value);
        let above = ladder.rungs.iter().find(|r| r.rating > rating.value);
        let place = match (below, above) {
            (Some(b), Some(a)) => format!(
                "between {} ({:.0}) and {} ({:.0})",
                b.bot, b.rating, a.bot, a.rating
            ),
            (Some(b), None) => format!("above the top of the ladder, {} ({:.0})", b.bot, b.rating),
            (None, Some(a)) => format!(
                "below the bottom of the ladder, {} ({:.0})",
                a.bot, a.rating
            ),
            (None, None) => String::new(),
        };
        say(config, &format!("  {place}"));
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ladder() -> Ladder {
        let json = r#"{"league":{"rules":"hus","width":8,"time":"move_time = \"1s\""},"games_played":10,
            "bots":[{"name":"random","rating":{"value":0,"low":0,"high":0}},
                    {"name":"level-1","rating":{"value":300,"low":250,"high":350}},
                    {"name":"level-2","rating":{"value":600,"low":550,"high":650}}],
            "ratings":{"anchor":"random","anchor_rating":0,"first_move_advantage":{"value":0,"low":0,"high":0}}}"#;
        Ladder::from_standings(json).expect("valid")
    }

    #[test]
    fn the_next_rung_is_the_nearest_and_spreads_over_neighbours() {
        let ladder = ladder();
        let mut tally = Tally::new(&ladder);
        let all = [0, 1, 2];
        assert_eq!(tally.next_rung(&ladder, &all, 280.0), 1);
        assert_eq!(tally.next_rung(&ladder, &all, 590.0), 2);
        assert_eq!(tally.next_rung(&ladder, &[0, 2], 280.0), 0);
        tally.sets_against[1] = 1;
        // Halved, level-1's information drops below that of level-2 at 150 Elo.
        assert_eq!(tally.next_rung(&ladder, &all, 420.0), 2);
    }

    #[test]
    fn the_fit_keeps_the_ladder_fixed_and_follows_the_score() {
        let ladder = ladder();
        let mut tally = Tally::new(&ladder);
        for _ in 0..20 {
            tally
                .table
                .add_game(tally.bot, 1, Outcome::Win)
                .expect("valid");
            tally
                .table
                .add_game(1, tally.bot, Outcome::Loss)
                .expect("valid");
            tally
                .table
                .add_game(tally.bot, 2, Outcome::Loss)
                .expect("valid");
            tally
                .table
                .add_game(2, tally.bot, Outcome::Win)
                .expect("valid");
        }
        let fit = tally.fit().expect("fits");
        assert_eq!(fit.ratings()[..3], [0.0, 300.0, 600.0]);
        let bot = fit.rating(tally.bot).expect("rated");
        // Beats level-1 always and loses to level-2 always: in between.
        assert!(bot.value > 300.0 && bot.value < 600.0, "{bot:?}");
        assert!(bot.low < bot.value && bot.value < bot.high);
    }

    #[test]
    fn plus_minus_is_the_half_width() {
        assert_eq!(plus_minus(1240.2, 1195.0, 1285.0), "1240 ± 45");
    }
}
