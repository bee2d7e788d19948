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
/// two rings of `RING` cells (a power of two) whose first 2W hold the pits, the seed
/// counts in the low bits `SEEDS` (the other bits belong to the board and are kept; the
/// cells past 2W hold 0 and stay so). `pit` is only checked to be below 2W. The board's
/// total must fit in `SEEDS`, so that every increment stays within the count's bits.
///
/// Every index into a ring is taken modulo `RING` (a mask that changes nothing, as all
/// are below 2W): the compiler then knows it is in bounds and checks nothing per seed.
/// The mover's ring is only written by [`sow_pass`], whole: a byte written alone and
/// then read back within a wider word stalls the processor (the store cannot be
/// forwarded to the load), and sowing reads the ring right after writing it.
#[inline(always)]
pub(crate) fn sow<const SEEDS: u8, const RING: usize, R: Recorder>(
    mine: &mut [u8; RING],
    theirs: &mut [u8; RING],
    preset: Preset,
    w: usize,
    pit: usize,
    recorder: &mut R,
) -> Summary {
    const { assert!(RING.is_power_of_two() && RING <= MAX_RING) };
    let n = 2 * w;
    assert!(pit < n && n <= RING, "pit {pit} out of range");
    let mut summary = Summary {
        pit: pit as u8,
        ..Summary::default()
    };
    let mut hand = (mine[pit % RING] & SEEDS) as u32;
    // The pit whose seeds are in the hand, emptied by the next pass; `RING` for none.
    let mut lifted = pit;
    // `at` is the last pit sown into; the next seed goes to `at + 1`.
    let mut at = pit;
    loop {
        // Sow the hand: whole laps (rare) and the rest from `at + 1` on, in one pass.
        let (laps, rest) = if hand < n as u32 {
            (0, hand as usize)
        } else {
            ((hand / n as u32) as u8, (hand % n as u32) as usize)
        };
        // The pit the last seed lands in, and its count after the pass, worked out from
        // its count before it (none if it is the pit just lifted), a seed a lap and the
        // last seed: the next step need not wait for the pass's store to read it back.
        let from = at + 1;
        at += rest;
        if at >= n {
            at -= n;
        }
        let before = std::hint::select_unpredictable(at == lifted, 0, mine[at % RING] & SEEDS);
        let landed = before as u32 + laps as u32 + (rest > 0) as u32;
        sow_pass::<SEEDS, RING>(mine, n, lifted, from, rest, laps);
        summary.sown += hand;
        if summary.sown >= MAX_SOWN_PER_MOVE {
            summary.truncated = true;
            break;
        }
        // 1: the pit was empty. 0 only when an unchecked move lifted an empty pit.
        if landed <= 1 {
            break;
        }
        // Whether the landing pit is a front pit across from a pit with seeds, without a
        // branch on the front row test (half of all landings, unpredictable): a back pit
        // looks across into a ring of zeros instead of the opponent's.
        let across = (w - 1).wrapping_sub(at);
        let facing = std::hint::select_unpredictable(at < w, &theirs[..], first::<RING>(0));
        if facing[across % RING] & SEEDS != 0 {
            summary.captures += 1;
            let taken = match preset {
                Preset::Hus => take_front_run::<SEEDS, RING, R>(theirs, w, across, recorder),
                Preset::Rulebook | Preset::MancalaWorld => {
                    take::<SEEDS, RING, R>(theirs, across, recorder)
                        + take::<SEEDS, RING, R>(theirs, w + at, recorder)
                }
            };
            summary.captured += taken;
            let own = if preset == Preset::Rulebook {
                lifted = at;
                landed
            } else {
                lifted = RING;
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
        lifted = at;
        hand = landed;
    }
    summary
}

/// The longest ring [`sow`] takes.
const MAX_RING: usize = 64;

/// `MAX_RING` ones then `MAX_RING` zeros: its `RING` bytes from `MAX_RING - j` on are `j`
/// ones then zeros, the cells `0..j` of a ring.
static STEP: [u8; 2 * MAX_RING] = {
    let mut step = [0u8; 2 * MAX_RING];
    let mut i = 0;
    while i < MAX_RING {
        step[i] = 1;
        i += 1;
    }
    step
};

/// `MAX_RING` zeros, a one, `MAX_RING` zeros: its `RING` bytes from `MAX_RING - j` on
/// are a one at `j` and zeros elsewhere.
static ONE: [u8; 2 * MAX_RING + 1] = {
    let mut one = [0u8; 2 * MAX_RING + 1];
    one[MAX_RING] = 1;
    one
};

/// The cells `0..j` of a ring of `RING` cells (`j <= RING`) as ones, the rest as zeros.
#[inline(always)]
fn first<const RING: usize>(j: usize) -> &'static [u8] {
    &STEP[MAX_RING - j..MAX_RING - j + RING]
}

/// Cell `j` of a ring of `RING` cells as a one, the rest as zeros; all zeros for
/// `j == RING`.
#[inline(always)]
fn only<const RING: usize>(j: usize) -> &'static [u8] {
    &ONE[MAX_RING - j..MAX_RING - j + RING]
}

/// One pass of sowing over the whole ring: empties the seed count of cell `lifted`
/// (none if `lifted == RING`), then adds `laps` seeds to each of the first `n` cells,
/// and one more to each of the `count` cells from `from` on (`from <= n`, `count < n`),
/// wrapping from cell `n - 1` to cell 0. Without a branch or a loop per seed (whose
/// length the processor cannot predict): the run is cells `0..end` less cells
/// `0..from`, plus cells `0..wrap` past the wrap, each a slice of [`STEP`], added in
/// one pass that the compiler turns into a few vector instructions.
#[inline(always)]
fn sow_pass<const SEEDS: u8, const RING: usize>(
    ring: &mut [u8; RING],
    n: usize,
    lifted: usize,
    from: usize,
    count: usize,
    laps: u8,
) {
    let end = from + count;
    let (end, wrap) = if end > n { (n, end - n) } else { (end, 0) };
    let (to_end, to_from, to_wrap) = (first::<RING>(end), first::<RING>(from), first::<RING>(wrap));
    let lifted = only::<RING>(lifted);
    for i in 0..RING {
        // 0 where the count is kept, the count's bits in the lifted cell.
        let emptied = 0u8.wrapping_sub(lifted[i]) & SEEDS;
        ring[i] = (ring[i] & !emptied) + to_end[i] - to_from[i] + to_wrap[i];
    }
    if laps > 0 {
        for cell in &mut ring[..n] {
            *cell += laps;
        }
    }
}

/// Empties opponent pit `pit` (if it holds seeds) and returns its seeds.
#[inline(always)]
fn take<const SEEDS: u8, const RING: usize, R: Recorder>(
    theirs: &mut [u8; RING],
    pit: usize,
    recorder: &mut R,
) -> u32 {
    let seeds = (theirs[pit % RING] & SEEDS) as u32;
    if seeds != 0 {
        theirs[pit % RING] &= !SEEDS;
        recorder.capture_pit(pit, seeds);
    }
    seeds
}

/// The `hus` capture: opponent front pit `across`, then a run along their front row in
/// one direction until an empty pit or the row's end. The run goes the way that takes
/// more seeds; on a tie toward the opponent's lower pit numbers.
#[inline(always)]
fn take_front_run<const SEEDS: u8, const RING: usize, R: Recorder>(
    theirs: &mut [u8; RING],
    w: usize,
    across: usize,
    recorder: &mut R,
) -> u32 {
    let (mut lower, mut lower_end) = (0u32, across);
    while lower_end > 0 && theirs[(lower_end - 1) % RING] & SEEDS != 0 {
        lower_end -= 1;
        lower += (theirs[lower_end % RING] & SEEDS) as u32;
    }
    let (mut upper, mut upper_end) = (0u32, across);
    while upper_end + 1 < w && theirs[(upper_end + 1) % RING] & SEEDS != 0 {
        upper_end += 1;
        upper += (theirs[upper_end % RING] & SEEDS) as u32;
    }
    let mut total = take::<SEEDS, RING, R>(theirs, across, recorder);
    if lower >= upper {
        for pit in (lower_end..across).rev() {
            total += take::<SEEDS, RING, R>(theirs, pit, recorder);
        }
    } else {
        for pit in across + 1..=upper_end {
            total += take::<SEEDS, RING, R>(theirs, pit, recorder);
        }
    }
    total
}
