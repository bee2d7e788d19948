//! Playing a move: sowing, relays, captures and the 3000-seed stop.
//!
//! One function, `sow`, does the work for every caller and both board types
//! ([`Position`](crate::Position) and [`WidePosition`](crate::WidePosition)). It is generic
//! over a [`Recorder`]: the hot path passes `()` and gets a [`Summary`] (plain counters, no allocation),
//! the referee and the replay tool pass a [`MoveReport`] that lists every relay and
//! capture.

use std::fmt;

use crate::rules::{Preset, MAX_SOWN_PER_MOVE, MIN_SEEDS_TO_MOVE};

/// Why a move was refused. The position is left untouched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IllegalMove {
    /// The pit number is not below 2W.
    OutOfRange {
        /// The pit asked for.
        pit: usize,
        /// 2W: pits run from 0 to this minus one.
        pits: usize,
    },
    /// The pit holds fewer than 2 seeds.
    TooFewSeeds {
        /// The pit asked for.
        pit: usize,
        /// Seeds it holds.
        seeds: u8,
    },
}

impl fmt::Display for IllegalMove {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IllegalMove::OutOfRange { pit, pits } => {
                write!(f, "pit {pit} does not exist (pits are 0 to {})", pits - 1)
            }
            IllegalMove::TooFewSeeds { pit, seeds } => write!(
                f,
                "pit {pit} holds {seeds} seed{}, a move needs at least {MIN_SEEDS_TO_MOVE}",
                if *seeds == 1 { "" } else { "s" }
            ),
        }
    }
}

impl std::error::Error for IllegalMove {}

/// Receives what happens during a move. All methods have empty defaults.
pub trait Recorder {
    /// The last seed landed in occupied pit `pit` (mover's numbering) with no capture
    /// possible: its `seeds` (the last one included) are lifted and sown on from `pit + 1`.
    fn relay(&mut self, pit: usize, seeds: u32) {
        let _ = (pit, seeds);
    }
    /// One opponent pit emptied by the capture that is being made.
    fn capture_pit(&mut self, opponent_pit: usize, seeds: u32) {
        let _ = (opponent_pit, seeds);
    }
    /// A capture ends: the last seed landed in front pit `landing`; `own` seeds were lifted
    /// from it (`rulebook` only), `total` seeds (own and taken) are sown from `sown_from`.
    fn capture(&mut self, landing: usize, own: u32, total: u32, sown_from: usize) {
        let _ = (landing, own, total, sown_from);
    }
}

/// What every move reports, without allocating.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// The pit played.
    pub pit: u8,
    /// Seeds placed in this move, every lap counted.
    pub sown: u32,
    /// Number of relays.
    pub relays: u32,
    /// Number of captures.
    pub captures: u32,
    /// Seeds taken from the opponent.
    pub captured: u32,
    /// The move stopped at the 3000-seed limit.
    pub truncated: bool,
}

/// Records nothing: the hot path's recorder.
impl Recorder for () {}

/// One relay: the last seed fell in an occupied pit and its seeds were lifted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Relay {
    /// The pit lifted (mover's numbering); sowing goes on from the next pit.
    pub pit: u8,
    /// Seeds lifted, the last one sown included.
    pub seeds: u32,
}

/// One opponent pit emptied by a capture.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Taken {
    /// The pit, in the opponent's numbering.
    pub pit: u8,
    /// Seeds taken from it.
    pub seeds: u32,
}

/// One capture.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Capture {
    /// The front pit where the last seed landed (mover's numbering).
    pub landing: u8,
    /// The opponent's pits emptied, in the order they were taken.
    pub taken: Vec<Taken>,
    /// Seeds lifted from the landing pit itself (`rulebook`; 0 otherwise).
    pub own: u32,
    /// Seeds sown: `own` plus everything taken.
    pub sown: u32,
    /// The pit the sowing of these seeds starts in (mover's numbering).
    pub sown_from: u8,
}

/// A relay or a capture, in the order they happened.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(tag = "kind", rename_all = "kebab-case"))]
pub enum Event {
    /// A relay.
    Relay(Relay),
    /// A capture.
    Capture(Capture),
}

/// Everything that happened in one move, for logs and viewers.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct MoveReport {
    /// The counters.
    pub summary: Summary,
    /// Relays and captures in order.
    pub events: Vec<Event>,
    pending: Vec<Taken>,
}

impl MoveReport {
    /// The captures, in order.
    pub fn captures(&self) -> impl Iterator<Item = &Capture> {
        self.events.iter().filter_map(|e| match e {
            Event::Capture(c) => Some(c),
            Event::Relay(_) => None,
        })
    }

    /// The relays, in order.
    pub fn relays(&self) -> impl Iterator<Item = &Relay> {
        self.events.iter().filter_map(|e| match e {
            Event::Relay(r) => Some(r),
            Event::Capture(_) => None,
        })
    }
}

impl Recorder for MoveReport {
    fn relay(&mut self, pit: usize, seeds: u32) {
        self.events.push(Event::Relay(Relay {
            pit: pit as u8,
            seeds,
        }));
    }
    fn capture_pit(&mut self, opponent_pit: usize, seeds: u32) {
        self.pending.push(Taken {
            pit: opponent_pit as u8,
            seeds,
        });
    }
    fn capture(&mut self, landing: usize, own: u32, total: u32, sown_from: usize) {
        self.events.push(Event::Capture(Capture {
            landing: landing as u8,
            taken: std::mem::take(&mut self.pending),
            own,
            sown: total,
            sown_from: sown_from as u8,
        }));
    }
}

/// The one implementation of a move, for both board types: `mine` and `theirs` are the
/// two rings of 2W cells whose low bits `SEEDS` hold the seed counts (the other bits
/// belong to the board and are kept). `pit` is not checked. The board's total must fit
/// in `SEEDS`, so that every increment stays within the count's bits.
#[inline(always)]
pub(crate) fn sow<const SEEDS: u8, R: Recorder>(
    mine: &mut [u8],
    theirs: &mut [u8],
    preset: Preset,
    w: usize,
    pit: usize,
    recorder: &mut R,
) -> Summary {
    let n = 2 * w;
    let keep = !SEEDS;
    let mut summary = Summary {
        pit: pit as u8,
        ..Summary::default()
    };
    let mut hand = (mine[pit] & SEEDS) as u32;
    mine[pit] &= keep;
    // `at` is the last pit sown into; the next seed goes to `at + 1`.
    let mut at = pit;
    loop {
        // Sow the hand: whole laps first, then the remainder seed by seed.
        let laps = hand / n as u32;
        if laps > 0 {
            for cell in mine.iter_mut() {
                *cell += laps as u8;
            }
        }
        for _ in 0..hand % n as u32 {
            at += 1;
            if at == n {
                at = 0;
            }
            mine[at] += 1;
        }
        summary.sown += hand;
        if summary.sown >= MAX_SOWN_PER_MOVE {
            summary.truncated = true;
            break;
        }
        let landed = (mine[at] & SEEDS) as u32;
        // 1: the pit was empty. 0 only when an unchecked move lifted an empty pit.
        if landed <= 1 {
            break;
        }
        let across = if at < w { w - 1 - at } else { usize::MAX };
        if across != usize::MAX && theirs[across] & SEEDS != 0 {
            summary.captures += 1;
            let taken = match preset {
                Preset::Hus => take_front_run::<SEEDS, R>(theirs, w, across, recorder),
                Preset::Rulebook | Preset::MancalaWorld => {
                    take::<SEEDS, R>(theirs, across, recorder)
                        + take::<SEEDS, R>(theirs, w + at, recorder)
                }
            };
            summary.captured += taken;
            let own = if preset == Preset::Rulebook {
                mine[at] &= keep;
                landed
            } else {
                0
            };
            hand = own + taken;
            if preset == Preset::Hus {
                // The first captured seed goes into the landing pit itself.
                recorder.capture(at, own, hand, at);
                at = if at == 0 { n - 1 } else { at - 1 };
            } else {
                recorder.capture(at, own, hand, (at + 1) % n);
            }
            continue;
        }
        recorder.relay(at, landed);
        summary.relays += 1;
        mine[at] &= keep;
        hand = landed;
    }
    summary
}

/// Empties opponent pit `pit` (if it holds seeds) and returns its seeds.
#[inline(always)]
fn take<const SEEDS: u8, R: Recorder>(theirs: &mut [u8], pit: usize, recorder: &mut R) -> u32 {
    let seeds = (theirs[pit] & SEEDS) as u32;
    if seeds != 0 {
        theirs[pit] &= !SEEDS;
        recorder.capture_pit(pit, seeds);
    }
    seeds
}

/// The `hus` capture: opponent front pit `across`, then a run along their front row in
/// one direction until an empty pit or the row's end. The run goes the way that takes
/// more seeds; on a tie toward the opponent's lower pit numbers.
#[inline(always)]
fn take_front_run<const SEEDS: u8, R: Recorder>(
    theirs: &mut [u8],
    w: usize,
    across: usize,
    recorder: &mut R,
) -> u32 {
    let (mut lower, mut lower_end) = (0u32, across);
    while lower_end > 0 && theirs[lower_end - 1] & SEEDS != 0 {
        lower_end -= 1;
        lower += (theirs[lower_end] & SEEDS) as u32;
    }
    let (mut upper, mut upper_end) = (0u32, across);
    while upper_end + 1 < w && theirs[upper_end + 1] & SEEDS != 0 {
        upper_end += 1;
        upper += (theirs[upper_end] & SEEDS) as u32;
    }
    let mut total = take::<SEEDS, R>(theirs, across, recorder);
    if lower >= upper {
        for pit in (lower_end..across).rev() {
            total += take::<SEEDS, R>(theirs, pit, recorder);
        }
    } else {
        for pit in across + 1..=upper_end {
            total += take::<SEEDS, R>(theirs, pit, recorder);
        }
    }
    total
}
