//! Fills a league's store with results drawn from known true ratings, so that a server
//! (`hus serve`), `hus standings` or a benchmark (tests/bench/serve_soak.py) can be run
//! on a store with a long history without playing it:
//!
//! ```text
//! cargo run --release -p league --example prefill -- LEAGUE.toml --dir DIR [--games 1000000]
//! cargo run --release -p league --example prefill -- LEAGUE.toml --store postgres://... [--threads 2]
//! ```
//!
//! It does what `hus league` does before its first set (the directory's lock, the
//! settings settled with the file's), then plays no game: it schedules the sets of a
//! round-robin (or the file's gauntlet) of as many rounds as the games need, `--batch`
//! sets at a time (`Store::sync` with the batch as the schedule: its sets are added as
//! pending, and the finished sets before them count as any finished set outside the
//! schedule does), claims each set (`Store::claim_next`) and records a result
//! (`Store::record`), each in the store's
//! own transaction, so every row is written by the store's code and is what a real set
//! leaves (the set's status, its number in the order results were recorded, its games
//! and points). Each set's games follow the rating model of docs/ratings.md with the
//! true ratings given (`--rating NAME=ELO`, else 0, `--spread`, 2 × `--spread`, ... in
//! the file's order, shifted to average 0) and a first-move advantage (`--advantage`):
//! the first mover wins with probability 1 / (1 + 10^(-(r_first - r_second + advantage)
//! / 400)), after a draw (by repetition, 0 points each) drawn with probability
//! `--draws`; under rules that score a double win, `--doubles` of the wins are double
//! (2 points). The first mover of each game is the one the referee would draw from the
//! set's seed. A set's randomness comes from its own seed and `--seed` alone, so the
//! same command on an empty store writes the same results, whatever the order the sets
//! are claimed in (PostgreSQL with several threads). The generated sets have no log:
//! their `log` is empty.
//!
//! The store must hold no finished set. Prints one JSON line at the end: sets, games,
//! seconds, sets per second.

use std::path::PathBuf;
use std::time::Instant;

use clap::Parser;
use engine::Scoring;
use league::{
    open_dir_store, schedule, settle_settings, BotEntry, DirLock, GameRow, LeagueConfig, LogForm,
    LogPlace, PgStore, SetKey, SetOutcome, Store,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use referee::{GameEndReason, Side};

/// Fills a league's store with generated results (see the example's documentation).
#[derive(Parser, Debug)]
#[command(name = "prefill")]
struct Args {
    /// The league file.
    file: PathBuf,
    /// The league's directory (its SQLite store); default: the file's default, as for
    /// hus league.
    #[arg(long, conflicts_with = "store")]
    dir: Option<PathBuf>,
    /// A PostgreSQL store instead (postgres://...).
    #[arg(long)]
    store: Option<String>,
    /// Games to write (rounded up to whole sets of the file's games).
    #[arg(long, default_value_t = 1_000_000)]
    games: u64,
    /// The generator's seed (the league's own seed comes from the file or the store).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// A bot's true rating, NAME=ELO (repeatable); the others follow --spread.
    #[arg(long = "rating", value_name = "NAME=ELO")]
    ratings: Vec<String>,
    /// Elo between consecutive bots of the file when no --rating gives theirs.
    #[arg(long, default_value_t = 40.0)]
    spread: f64,
    /// The first mover's advantage, in Elo.
    #[arg(long, default_value_t = 30.0)]
    advantage: f64,
    /// The share of games drawn.
    #[arg(long, default_value_t = 0.05)]
    draws: f64,
    /// The share of wins that are double, where the rules score them.
    #[arg(long, default_value_t = 0.1)]
    doubles: f64,
    /// Connections writing at once (PostgreSQL only; SQLite has one writer).
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Sets scheduled at once: each batch is synced as the schedule, then claimed and
    /// recorded set by set (a claim looks among the pending sets only).
    #[arg(long, default_value_t = 1_000)]
    batch: usize,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    let config = LeagueConfig::load(&args.file)?;
    let double_win = match config.rules.preset().scoring() {
        Scoring::Wins { double_win } => double_win,
        Scoring::Seeds => {
            return Err("the league's rules score seeds: prefill writes only win/draw/loss results (rules hus or mancala-world)".into())
        }
    };
    if !(0.0..=1.0).contains(&args.draws) || !(0.0..=1.0).contains(&args.doubles) {
        return Err("--draws and --doubles are shares, from 0 to 1".into());
    }
    let entrants = config.entrants();
    let names: Vec<String> = entrants.iter().map(|(n, _)| n.clone()).collect();
    let ratings = true_ratings(&names, &args)?;
    let entries: Vec<BotEntry> = entrants
        .into_iter()
        .map(|(name, command)| BotEntry { name, command })
        .collect();

    // What hus league does before its first set.
    let mut stores: Vec<Box<dyn Store + Send>> = Vec::new();
    let mut _lock = None;
    let place = match &args.store {
        Some(url) => {
            let mut place = PathBuf::new();
            for t in 0..args.threads.max(1) {
                let mut store = PgStore::connect(url)?;
                store.set_name(&format!("prefill-{t}"));
                place = PathBuf::from(store.place());
                stores.push(Box::new(store));
            }
            place
        }
        None => {
            let dir = args.dir.clone().unwrap_or_else(|| config.default_dir());
            referee::create_dir(&dir)?;
            _lock = Some(DirLock::acquire(&dir)?);
            stores.push(Box::new(open_dir_store(&dir)?));
            dir
        }
    };
    let seed = settle_settings(&config, &mut *stores[0], &place)?;
    let progress = stores[0].progress()?;
    if progress.done + progress.done_elsewhere > 0 {
        return Err(format!(
            "the store already holds {} finished sets: prefill fills only a store without results",
            progress.done + progress.done_elsewhere
        )
        .into());
    }
    let sets = args.games.div_ceil(u64::from(config.games.max(1)));
    let per_round = schedule(&names, &config.format, 1, seed).len().max(1) as u64;
    let rounds = u32::try_from(sets.div_ceil(per_round))?;
    let plan: Vec<_> = schedule(&names, &config.format, rounds, seed)
        .into_iter()
        .take(sets as usize)
        .collect();
    eprintln!(
        "prefill: {} sets of {} games ({rounds} rounds), {} at a time; league seed {seed}",
        plan.len(),
        config.games,
        args.batch
    );

    let model = Model {
        ratings,
        games: config.games,
        paired: config.openings.is_some(),
        advantage: args.advantage,
        draws: args.draws,
        doubles: if double_win { args.doubles } else { 0.0 },
        seed: args.seed,
    };
    let start = Instant::now();
    let mut written = 0u64;
    let mut said = 0;
    for batch in plan.chunks(args.batch.max(1)) {
        // The batch becomes the schedule: its sets are added as pending, the sets of
        // the batch before stay done (finished sets count whatever the schedule).
        stores[0].sync(&entries, batch)?;
        written += std::thread::scope(|scope| -> Result<u64, String> {
            let handles: Vec<_> = stores
                .iter_mut()
                .map(|store| {
                    let model = &model;
                    scope.spawn(move || fill(&mut **store, model).map_err(|e| e.to_string()))
                })
                .collect();
            let mut written = 0;
            for h in handles {
                written += h.join().map_err(|_| "a thread panicked".to_string())??;
            }
            Ok(written)
        })?;
        if written / 50_000 > said {
            said = written / 50_000;
            eprintln!(
                "prefill: {written} of {} sets, {:.0} a second",
                plan.len(),
                written as f64 / start.elapsed().as_secs_f64()
            );
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    println!(
        "{{\"sets\": {written}, \"games\": {}, \"seconds\": {seconds:.1}, \"sets_per_s\": {:.0}}}",
        written * u64::from(config.games),
        written as f64 / seconds
    );
    Ok(())
}

/// Each bot's true rating: given, else from the file's order and the spread, with the
/// bots without a given rating averaging 0.
fn true_ratings(
    names: &[String],
    args: &Args,
) -> Result<std::collections::HashMap<String, f64>, Box<dyn std::error::Error>> {
    let n = names.len() as f64;
    let mut ratings: std::collections::HashMap<String, f64> = names
        .iter()
        .enumerate()
        .map(|(i, name)| (name.clone(), args.spread * (i as f64 - (n - 1.0) / 2.0)))
        .collect();
    for given in &args.ratings {
        let (name, elo) = given
            .split_once('=')
            .ok_or_else(|| format!("--rating {given:?}: NAME=ELO"))?;
        let elo: f64 = elo
            .parse()
            .map_err(|_| format!("--rating {given:?}: {elo:?} is not a number"))?;
        match ratings.get_mut(name) {
            Some(r) => *r = elo,
            None => return Err(format!("--rating {given:?}: no bot {name:?} in the file").into()),
        }
    }
    Ok(ratings)
}

/// How results are drawn.
struct Model {
    ratings: std::collections::HashMap<String, f64>,
    games: u32,
    paired: bool,
    advantage: f64,
    draws: f64,
    doubles: f64,
    seed: u64,
}

impl Model {
    /// The result of the set with this seed between `a` and `b`.
    fn outcome(&self, set_seed: u64, set: &SetKey) -> SetOutcome {
        let (a, b) = (set.a.as_str(), set.b.as_str());
        let mut key = [0u8; 32];
        key[..8].copy_from_slice(&set_seed.to_le_bytes());
        key[8..16].copy_from_slice(&self.seed.to_le_bytes());
        let mut rng = ChaCha8Rng::from_seed(key);
        let rating = |name: &str| self.ratings.get(name).copied().unwrap_or(0.0);
        let (ra, rb) = (rating(a), rating(b));
        // Named as a server names a finished set's log (no file is written).
        let mut outcome = SetOutcome::new(LogPlace::file(&set.stem(), LogForm::Zstd));
        for (i, first) in referee::first_movers(set_seed, self.games, self.paired)
            .into_iter()
            .enumerate()
        {
            let diff = if first == Side::A { ra - rb } else { rb - ra } + self.advantage;
            let p_first = 1.0 / (1.0 + 10f64.powf(-diff / 400.0));
            let plies: u32 = rng.gen_range(30..=150);
            let (winner, reason, double) = if rng.gen_bool(self.draws) {
                (None, GameEndReason::Repetition, false)
            } else {
                let first_wins = rng.gen_bool(p_first.clamp(0.0, 1.0));
                let winner = if first_wins { first } else { first.other() };
                (
                    Some(winner),
                    GameEndReason::NoMoves,
                    rng.gen_bool(self.doubles),
                )
            };
            let mut points = [0u32; 2];
            if let Some(w) = winner {
                points[w.index()] = if double { 2 } else { 1 };
            }
            // The first mover makes the odd plies.
            let (by_first, by_second) = (plies.div_ceil(2), plies / 2);
            let moves = if first == Side::A {
                [by_first, by_second]
            } else {
                [by_second, by_first]
            };
            for s in 0..2 {
                outcome.points[s] += points[s];
                outcome.moves[s] += u64::from(moves[s]);
                outcome.move_ms[s] += f64::from(moves[s]) * 0.02;
            }
            outcome.games.push(GameRow {
                game: i as u32 + 1,
                first,
                winner,
                points,
                reason,
                plies,
                double,
                faulted: Vec::new(),
            });
        }
        outcome.winner = match outcome.points[0].cmp(&outcome.points[1]) {
            std::cmp::Ordering::Greater => Some(Side::A),
            std::cmp::Ordering::Less => Some(Side::B),
            std::cmp::Ordering::Equal => None,
        };
        outcome
    }
}

/// Claims and records sets until none is left; returns the sets written.
fn fill(store: &mut dyn Store, model: &Model) -> Result<u64, league::StoreError> {
    let mut written = 0u64;
    while let Some(set) = store.claim_next()? {
        let outcome = model.outcome(set.seed, &set.key);
        store.record(set.claim(), &outcome)?;
        written += 1;
    }
    Ok(written)
}
