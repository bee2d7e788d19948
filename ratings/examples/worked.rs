//! `cargo run -p ratings --example worked`: prints the figures of the worked example in
//! docs/ratings.md (three bots, then an SPRT), so the document can be checked against
//! the code.

use ratings::{Anchor, Error, FitOptions, GameTable, Pentanomial, Ratings, Sprt, Wdl};

fn main() -> Result<(), Error> {
    let names = ["A", "B", "C"];
    let mut games = GameTable::new(3);
    // First mover's wins, draws, losses.
    games.add_games(0, 1, Wdl::new(6, 2, 2))?;
    games.add_games(0, 2, Wdl::new(9, 1, 0))?;
    games.add_games(1, 0, Wdl::new(3, 3, 4))?;
    games.add_games(1, 2, Wdl::new(4, 3, 3))?;
    games.add_games(2, 0, Wdl::new(0, 2, 8))?;
    games.add_games(2, 1, Wdl::new(3, 4, 3))?;

    let ratings = Ratings::fit(&games, &FitOptions::default())?;
    println!(
        "pool average 1500, prior 2 draws, {} Newton iterations",
        ratings.iterations()
    );
    for (bot, e) in ratings.estimates().iter().enumerate() {
        let record = games.record(bot)?;
        println!(
            "{}: {:.1} ± {:.1}  [{:.1}, {:.1}]  (won {}, drew {}, lost {})",
            names[bot],
            e.value,
            e.std_error,
            e.low,
            e.high,
            record.wins,
            record.draws,
            record.losses
        );
    }
    let a = ratings.advantage();
    println!(
        "first-move advantage: {:.1} ± {:.1}  [{:.1}, {:.1}]",
        a.value, a.std_error, a.low, a.high
    );
    for (i, j) in [(0, 1), (0, 2), (1, 2)] {
        let c = ratings.compare(i, j)?;
        let variances_only = (ratings.covariance(i, i)? + ratings.covariance(j, j)?).sqrt();
        println!(
            "{} - {}: {:.1} ± {:.1} (variances alone: ± {:.1}), LOS {:.3}",
            names[i], names[j], c.difference.value, c.difference.std_error, variances_only, c.los
        );
    }
    let next = ratings.most_informative_game();
    println!(
        "most informative game: {} first against {}, pool variance -{:.1} Elo²",
        names[next.first], names[next.second], next.pool_variance_reduction
    );

    let anchored = Ratings::fit(
        &games,
        &FitOptions {
            anchor: Anchor::Bot {
                bot: 1,
                rating: 1500.0,
            },
            ..FitOptions::default()
        },
    )?;
    let no_prior = Ratings::fit(
        &games,
        &FitOptions {
            prior_draws: 0.0,
            ..FitOptions::default()
        },
    )?;
    for (bot, name) in names.iter().enumerate() {
        let e = anchored.rating(bot)?;
        println!(
            "{}: anchored on B {:.1} ± {:.1}; without prior {:.1}",
            name,
            e.value,
            e.std_error,
            no_prior.ratings()[bot]
        );
    }
    println!("advantage without prior: {:.1}", no_prior.advantage().value);

    let sprt = Sprt::new(0.0, 10.0, 0.05, 0.05)?;
    let pairs = Pentanomial::new([20, 180, 420, 230, 30]);
    let status = sprt.pentanomial(&pairs);
    let elo = pairs.elo(0.95)?;
    println!(
        "SPRT: LLR {:.2} in [{:.3}, {:.3}]: {:?}; Elo {:+.1} [{:.1}, {:.1}], LOS {:.3}",
        status.llr,
        status.lower_bound,
        status.upper_bound,
        status.decision,
        elo.elo,
        elo.low,
        elo.high,
        elo.los
    );
    Ok(())
}
