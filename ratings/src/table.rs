//! Games aggregated per ordered pair of bots: the only input of a rating fit.

use crate::Error;

/// The result of one game for one side: which side is meant is said where it is used
/// (the first mover in a [`GameTable`], bot A in a [`Wdl`] given to
/// [`Sprt::trinomial`](crate::Sprt::trinomial) or a [`Pentanomial`](crate::Pentanomial)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum Outcome {
    /// A win: scores 1.
    Win,
    /// A draw: scores ½.
    Draw,
    /// A loss: scores 0.
    Loss,
}

impl Outcome {
    /// The score of the outcome: 1, ½ or 0.
    pub fn score(self) -> f64 {
        match self {
            Outcome::Win => 1.0,
            Outcome::Draw => 0.5,
            Outcome::Loss => 0.0,
        }
    }

    /// The same game seen from the other side.
    pub fn reversed(self) -> Outcome {
        match self {
            Outcome::Win => Outcome::Loss,
            Outcome::Draw => Outcome::Draw,
            Outcome::Loss => Outcome::Win,
        }
    }
}

/// Wins, draws and losses, counted from one side.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Wdl {
    /// Games won.
    pub wins: u64,
    /// Games drawn.
    pub draws: u64,
    /// Games lost.
    pub losses: u64,
}

impl Wdl {
    /// Counts from their parts.
    pub fn new(wins: u64, draws: u64, losses: u64) -> Wdl {
        Wdl {
            wins,
            draws,
            losses,
        }
    }

    /// All games counted, or `None` if the sum overflows.
    pub fn games(&self) -> Option<u64> {
        self.wins.checked_add(self.draws)?.checked_add(self.losses)
    }

    /// Points scored: a win 1, a draw ½.
    pub fn points(&self) -> f64 {
        self.wins as f64 + 0.5 * self.draws as f64
    }

    /// The same games seen from the other side.
    pub fn reversed(&self) -> Wdl {
        Wdl {
            wins: self.losses,
            draws: self.draws,
            losses: self.wins,
        }
    }

    fn checked_add(&self, other: &Wdl) -> Option<Wdl> {
        let sum = Wdl {
            wins: self.wins.checked_add(other.wins)?,
            draws: self.draws.checked_add(other.draws)?,
            losses: self.losses.checked_add(other.losses)?,
        };
        sum.games()?;
        Some(sum)
    }
}

/// Games between `bots` bots, counted per ordered pair (first mover, second mover) as
/// wins, draws and losses of the first mover.
///
/// 100,000 games among 100 bots fit in at most 100 × 99 cells; a fit reads only the
/// cells, so its cost does not grow with the number of games.
///
/// With the `serde` feature it serializes (as `bots` and the row-major `cells`) but does
/// not deserialize: a table is built through its methods, which keep it consistent.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct GameTable {
    bots: usize,
    /// Row `first`, column `second`; the diagonal stays empty.
    cells: Vec<Wdl>,
}

impl GameTable {
    /// An empty table of `bots` bots, numbered `0..bots`.
    pub fn new(bots: usize) -> GameTable {
        GameTable {
            bots,
            cells: vec![Wdl::default(); bots * bots],
        }
    }

    /// The number of bots.
    pub fn bots(&self) -> usize {
        self.bots
    }

    /// Adds a bot with no games and returns its index (the previous number of bots).
    pub fn add_bot(&mut self) -> usize {
        let old = self.bots;
        let new = old + 1;
        let mut cells = vec![Wdl::default(); new * new];
        for first in 0..old {
            for second in 0..old {
                cells[first * new + second] = self.cells[first * old + second];
            }
        }
        self.bots = new;
        self.cells = cells;
        old
    }

    fn index(&self, first: usize, second: usize) -> Result<usize, Error> {
        for bot in [first, second] {
            if bot >= self.bots {
                return Err(Error::BotOutOfRange {
                    bot,
                    bots: self.bots,
                });
            }
        }
        if first == second {
            return Err(Error::SelfPlay { bot: first });
        }
        Ok(first * self.bots + second)
    }

    /// Records one game: `first` moved first, and `outcome` is the first mover's result.
    pub fn add_game(&mut self, first: usize, second: usize, outcome: Outcome) -> Result<(), Error> {
        let wdl = match outcome {
            Outcome::Win => Wdl::new(1, 0, 0),
            Outcome::Draw => Wdl::new(0, 1, 0),
            Outcome::Loss => Wdl::new(0, 0, 1),
        };
        self.add_games(first, second, wdl)
    }

    /// Records many games at once: `first` moved first in all of them, and `wdl` counts
    /// the first mover's results. On error nothing is recorded.
    pub fn add_games(&mut self, first: usize, second: usize, wdl: Wdl) -> Result<(), Error> {
        let index = self.index(first, second)?;
        self.cells[index] = self.cells[index]
            .checked_add(&wdl)
            .ok_or(Error::CountOverflow)?;
        Ok(())
    }

    /// The first mover's results in the games `first` began against `second`.
    pub fn get(&self, first: usize, second: usize) -> Result<Wdl, Error> {
        Ok(self.cells[self.index(first, second)?])
    }

    /// Cells with at least one game, as (first, second, results of first).
    pub fn cells(&self) -> impl Iterator<Item = (usize, usize, Wdl)> + '_ {
        let n = self.bots;
        self.cells
            .iter()
            .enumerate()
            .filter(|(_, wdl)| **wdl != Wdl::default())
            .map(move |(index, wdl)| (index / n, index % n, *wdl))
    }

    /// All games of `bot`, in both seats, counted from its side.
    pub fn record(&self, bot: usize) -> Result<Wdl, Error> {
        if bot >= self.bots {
            return Err(Error::BotOutOfRange {
                bot,
                bots: self.bots,
            });
        }
        let mut total = Wdl::default();
        for other in (0..self.bots).filter(|&o| o != bot) {
            let as_first = self.cells[bot * self.bots + other];
            let as_second = self.cells[other * self.bots + bot].reversed();
            total = total
                .checked_add(&as_first)
                .and_then(|t| t.checked_add(&as_second))
                .ok_or(Error::CountOverflow)?;
        }
        Ok(total)
    }

    /// Every game in the table, or `None` if the total overflows a `u64`.
    pub fn total_games(&self) -> Option<u64> {
        self.cells
            .iter()
            .try_fold(0u64, |acc, wdl| acc.checked_add(wdl.games()?))
    }
}
