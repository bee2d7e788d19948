//! The board: an unvalidated [`Setup`] and the validated, packed [`Position`].

use std::fmt;

use crate::board::Board;
use crate::rules::{Preset, Rules, MAX_NARROW_WIDTH, MIN_SEEDS_TO_MOVE};
use crate::sow::{sow, IllegalMove, Recorder, Summary};

/// Bytes per player in the packed board: room for the widest narrow ring (2 x 16 pits).
const HALF: usize = 2 * MAX_NARROW_WIDTH;
/// Low seven bits of a cell: the seed count.
pub(crate) const SEEDS: u8 = 0x7f;
/// High bit of a cell: one bit of the packed metadata.
pub(crate) const FLAG: u8 = 0x80;
/// Most seeds a [`Position`] may hold, so that no pit can ever overflow seven bits.
/// [`AnyPosition`](crate::AnyPosition) takes boards with more (up to
/// [`MAX_WIDE_TOTAL_SEEDS`](crate::MAX_WIDE_TOTAL_SEEDS)) as [`WidePosition`](crate::WidePosition)s.
pub const MAX_TOTAL_SEEDS: u32 = SEEDS as u32;

/// One of the two players. Player 0 moves first from the starting position.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(into = "u8", try_from = "u8"))]
pub enum Player {
    /// The player who moves first from the starting position.
    Zero,
    /// The other player.
    One,
}

impl Player {
    /// Both players, `Zero` first.
    pub const BOTH: [Player; 2] = [Player::Zero, Player::One];

    /// The opponent.
    pub fn other(self) -> Player {
        match self {
            Player::Zero => Player::One,
            Player::One => Player::Zero,
        }
    }

    /// 0 or 1.
    pub fn index(self) -> usize {
        self as usize
    }

    /// `Zero` for 0, `One` for 1, `None` otherwise.
    pub fn from_index(i: usize) -> Option<Player> {
        match i {
            0 => Some(Player::Zero),
            1 => Some(Player::One),
            _ => None,
        }
    }
}

impl From<Player> for u8 {
    fn from(p: Player) -> u8 {
        p as u8
    }
}

impl TryFrom<u8> for Player {
    type Error = String;
    fn try_from(v: u8) -> Result<Player, String> {
        Player::from_index(v as usize).ok_or_else(|| format!("player must be 0 or 1, got {v}"))
    }
}

impl fmt::Display for Player {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.index())
    }
}

/// An unvalidated position with public fields: build one by hand, then turn it into a
/// [`Position`] with [`Setup::validate`] (or `Position::try_from`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setup {
    /// The rules the position is played under.
    pub rules: Rules,
    /// Each player's 2W pits in that player's own numbering (front row `0..W`, back row
    /// `W..2W`), indexed by [`Player::index`].
    pub pits: [Vec<u8>; 2],
    /// Who moves next.
    pub to_move: Player,
}

/// Why a [`Setup`] is not a position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SetupError {
    /// A player's pit list does not have 2W entries.
    PitCount {
        /// Whose pits.
        player: Player,
        /// 2W.
        expected: usize,
        /// What was given.
        found: usize,
    },
    /// More seeds on the board than the board type holds: [`MAX_TOTAL_SEEDS`] for a
    /// [`Position`], [`MAX_WIDE_TOTAL_SEEDS`](crate::MAX_WIDE_TOTAL_SEEDS) for a [`WidePosition`](crate::WidePosition)
    /// and an [`AnyPosition`](crate::AnyPosition).
    TooManySeeds {
        /// Seeds on the board.
        total: u32,
        /// The most the board type holds.
        max: u32,
    },
    /// The rules' width is more than a [`Position`] holds ([`MAX_NARROW_WIDTH`]): such a
    /// board is a [`WidePosition`](crate::WidePosition) (or an
    /// [`AnyPosition`](crate::AnyPosition)).
    TooWide {
        /// The rules' width.
        width: usize,
    },
}

impl fmt::Display for SetupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SetupError::PitCount {
                player,
                expected,
                found,
            } => write!(f, "player {player} has {found} pits, expected {expected}"),
            SetupError::TooManySeeds { total, max } => {
                write!(f, "{total} seeds on the board, at most {max} are supported")
            }
            SetupError::TooWide { width } => write!(
                f,
                "a width of {width} needs a wide board: a Position holds widths up to \
                 {MAX_NARROW_WIDTH} (use AnyPosition)"
            ),
        }
    }
}

impl std::error::Error for SetupError {}

impl Setup {
    /// Checks the pit counts and returns the seeds on the board (no limit checked).
    pub(crate) fn checked_total(&self) -> Result<u32, SetupError> {
        let n = self.rules.pits();
        let mut total = 0u32;
        for player in Player::BOTH {
            let pits = &self.pits[player.index()];
            if pits.len() != n {
                return Err(SetupError::PitCount {
                    player,
                    expected: n,
                    found: pits.len(),
                });
            }
            total += pits.iter().map(|&s| s as u32).sum::<u32>();
        }
        Ok(total)
    }

    /// Checks the setup and packs it into a [`Position`]: widths up to
    /// [`MAX_NARROW_WIDTH`], at most [`MAX_TOTAL_SEEDS`]. [`AnyPosition`](crate::AnyPosition)
    /// takes every setup the rules allow.
    pub fn validate(&self) -> Result<Position, SetupError> {
        if self.rules.width() > MAX_NARROW_WIDTH {
            return Err(SetupError::TooWide {
                width: self.rules.width(),
            });
        }
        let n = self.rules.pits();
        let total = self.checked_total()?;
        if total > MAX_TOTAL_SEEDS {
            return Err(SetupError::TooManySeeds {
                total,
                max: MAX_TOTAL_SEEDS,
            });
        }
        let mut rings = [[0u8; HALF]; 2];
        for player in Player::BOTH {
            rings[player.index()][..n].copy_from_slice(&self.pits[player.index()]);
        }
        let mut pos = Position { rings };
        pos.set_meta(self.rules, self.to_move);
        Ok(pos)
    }
}

/// A validated position: the rules, both players' pits and who is to move, in 64 bytes.
///
/// Each byte holds one pit's seed count in its low seven bits (the board never holds more
/// than [`MAX_TOTAL_SEEDS`], so a count never reaches the eighth bit, and sowing a seed is a
/// plain increment). The high bits of the first eight bytes hold the preset, the width and
/// the side to move. Player `p`'s pit `i` is byte `i` of ring `p` (byte `32 * p + i`);
/// the bytes of a ring past its 2W pits are always 0. Equality and hashing compare all
/// of it, which is exactly what repetition needs.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Position {
    rings: [[u8; HALF]; 2],
}

const _: () = assert!(std::mem::size_of::<Position>() <= 64);

impl Position {
    /// The starting position of `rules`, player 0 to move.
    ///
    /// # Panics
    /// If the rules' width is above [`MAX_NARROW_WIDTH`]: wide boards are
    /// [`WidePosition`](crate::WidePosition)s, and [`AnyPosition::start`](crate::AnyPosition::start)
    /// takes any rules.
    #[inline]
    pub fn start(rules: Rules) -> Position {
        assert!(
            rules.width() <= MAX_NARROW_WIDTH,
            "Position::start at width {}: use AnyPosition",
            rules.width()
        );
        let mut rings = [[0u8; HALF]; 2];
        let (w, n) = (rules.width(), rules.pits());
        let front = rules.starting_front_pits();
        for ring in &mut rings {
            ring[front.clone()].fill(2);
            ring[w..n].fill(2);
        }
        let mut pos = Position { rings };
        pos.set_meta(rules, Player::Zero);
        pos
    }

    #[inline]
    fn meta(&self) -> u8 {
        // Gather the high bit of bytes 0..8 into one byte (bit i from byte i).
        let mut word = [0u8; 8];
        word.copy_from_slice(&self.rings[0][..8]);
        gather_high_bits(u64::from_le_bytes(word)) as u8
    }

    #[inline]
    fn set_meta(&mut self, rules: Rules, to_move: Player) {
        let meta = to_move as u8 | rules.preset().code() << 1 | ((rules.width() - 8) as u8) << 3;
        for i in 0..8 {
            let bit = (meta >> i) & 1;
            self.rings[0][i] = (self.rings[0][i] & SEEDS) | bit << 7;
        }
    }

    /// The rules this position is played under.
    #[inline]
    pub fn rules(&self) -> Rules {
        let meta = self.meta();
        let width = 8 + ((meta >> 3) & 0xf) as usize;
        let preset = Preset::from_code((meta >> 1) & 0x3);
        Rules::new(preset, width).unwrap_or_default()
    }

    /// Row width W.
    #[inline]
    pub fn width(&self) -> usize {
        8 + ((self.meta() >> 3) & 0xf) as usize
    }

    /// Who moves next.
    #[inline]
    pub fn to_move(&self) -> Player {
        if self.rings[0][0] & FLAG != 0 {
            Player::One
        } else {
            Player::Zero
        }
    }

    /// Hands the move to the other player: flips the flag bit of byte 0, as a write of
    /// the whole first word. A one-byte write there would stall the next read of the
    /// word (by [`Position::key`] or [`Position::legal_moves`], right after every move):
    /// the processor cannot forward a narrow store to a wider load. `black_box` keeps the
    /// compiler from narrowing the write back to that one byte.
    #[inline]
    pub(crate) fn flip_to_move(&mut self) {
        let mut word = [0u8; 8];
        word.copy_from_slice(&self.rings[0][..8]);
        let flipped = u64::from_le_bytes(word) ^ std::hint::black_box(FLAG as u64);
        self.rings[0][..8].copy_from_slice(&flipped.to_le_bytes());
    }

    /// Seeds in `player`'s pit `pit` (own numbering). Panics if `pit >= 2W`.
    #[inline]
    pub fn seeds(&self, player: Player, pit: usize) -> u8 {
        assert!(pit < 2 * self.width(), "pit {pit} out of range");
        self.rings[player.index()][pit] & SEEDS
    }

    /// `player`'s 2W pits in their own numbering.
    #[inline]
    pub fn pits(&self, player: Player) -> Vec<u8> {
        let n = 2 * self.width();
        self.rings[player.index()][..n]
            .iter()
            .map(|c| c & SEEDS)
            .collect()
    }

    /// Seeds on `player`'s side.
    #[inline]
    pub fn seeds_of(&self, player: Player) -> u32 {
        let n = 2 * self.width();
        self.rings[player.index()][..n]
            .iter()
            .map(|&c| (c & SEEDS) as u32)
            .sum()
    }

    /// Seeds on the board.
    #[inline]
    pub fn total_seeds(&self) -> u32 {
        self.seeds_of(Player::Zero) + self.seeds_of(Player::One)
    }

    /// The pits the side to move may play: those holding 2 or more seeds.
    #[inline]
    pub fn legal_moves(&self) -> Moves {
        let n = 2 * self.width();
        let ring = &self.rings[self.to_move().index()];
        // Eight pits at a time: a count c <= 127 is 2 or more exactly when c + 126 sets
        // the byte's high bit (no carry leaves the byte).
        let mut mask = 0u64;
        for (k, chunk) in ring.chunks_exact(8).enumerate() {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            let counts = u64::from_le_bytes(word) & LOW_SEVEN;
            let high = (counts + 0x7e7e_7e7e_7e7e_7e7e) & HIGH_BITS;
            mask |= gather_high_bits(high) << (8 * k);
        }
        Moves {
            mask: mask & ((1u64 << n) - 1),
        }
    }

    /// Whether the side to move may play `pit`.
    #[inline]
    pub fn is_legal(&self, pit: usize) -> bool {
        pit < 2 * self.width() && self.legal_moves().contains(pit)
    }

    /// The unvalidated form, with the pits as vectors.
    pub fn to_setup(&self) -> Setup {
        Setup {
            rules: self.rules(),
            pits: [self.pits(Player::Zero), self.pits(Player::One)],
            to_move: self.to_move(),
        }
    }

    /// A 64-bit hash of the whole position, used to pick repetition candidates (equality
    /// then decides). Cheaper than an incremental Zobrist key here: one move may touch
    /// every pit of a ring many times, while this reads eight words once.
    #[inline]
    pub fn key(&self) -> u64 {
        let mut h: u64 = 0x9e37_79b9_7f4a_7c15;
        for chunk in self.rings.as_flattened().chunks_exact(8) {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            h = (h ^ u64::from_le_bytes(word)).wrapping_mul(0xff51_afd7_ed55_8ccd);
            h ^= h >> 29;
        }
        h
    }
}

// The legal-move masks below test for 2 or more with byte arithmetic.
const _: () = assert!(MIN_SEEDS_TO_MOVE == 2);

/// The low seven bits of every byte of a word.
const LOW_SEVEN: u64 = 0x7f7f_7f7f_7f7f_7f7f;
/// The high bit of every byte of a word.
pub(crate) const HIGH_BITS: u64 = 0x8080_8080_8080_8080;

/// The high bits of the eight bytes of `word` (little-endian), as bits 0 to 7.
#[inline(always)]
pub(crate) fn gather_high_bits(word: u64) -> u64 {
    let x = (word >> 7) & 0x0101_0101_0101_0101;
    x.wrapping_mul(0x0102_0408_1020_4080) >> 56
}

impl TryFrom<&Setup> for Position {
    type Error = SetupError;
    fn try_from(setup: &Setup) -> Result<Position, SetupError> {
        setup.validate()
    }
}

impl fmt::Debug for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Position({self})")
    }
}

/// A set of pits, as returned by [`Position::legal_moves`]; iterates in increasing order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Moves {
    mask: u64,
}

impl Moves {
    /// Number of pits in the set.
    #[inline]
    pub fn len(self) -> usize {
        self.mask.count_ones() as usize
    }

    /// Whether the set is empty.
    #[inline]
    pub fn is_empty(self) -> bool {
        self.mask == 0
    }

    /// Whether `pit` is in the set.
    #[inline]
    pub fn contains(self, pit: usize) -> bool {
        pit < 64 && self.mask >> pit & 1 == 1
    }

    /// The set as a bit mask, bit `i` for pit `i`.
    #[inline]
    pub fn mask(self) -> u64 {
        self.mask
    }

    /// The set of pits whose bits are set in `mask`.
    #[inline]
    pub fn from_mask(mask: u64) -> Moves {
        Moves { mask }
    }
}

impl Iterator for Moves {
    type Item = usize;
    #[inline]
    fn next(&mut self) -> Option<usize> {
        if self.mask == 0 {
            return None;
        }
        let pit = self.mask.trailing_zeros() as usize;
        self.mask &= self.mask - 1;
        Some(pit)
    }

    /// The pit `n` places on, found without a loop or a branch (a random playout picks
    /// one this way every ply, and a loop of random length costs a mispredicted branch):
    /// the pits before it are then dropped with it.
    #[inline]
    fn nth(&mut self, n: usize) -> Option<usize> {
        if n >= self.len() {
            self.mask = 0;
            return None;
        }
        let pit = select_bit(self.mask, n as u32);
        self.mask &= (!1u64).checked_shl(pit).unwrap_or(0);
        Some(pit as usize)
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.mask.count_ones() as usize;
        (n, Some(n))
    }
}

impl ExactSizeIterator for Moves {}

/// The index of the set bit of `word` that has `rank` set bits below it; `rank` must be
/// below the number of set bits (else the answer is some index below 64). Broadword,
/// after S. Vigna, "Broadword implementation of rank/select queries" (2008): the set
/// bits of each byte are counted and summed into running totals, one per byte, the byte
/// that holds the bit is the number of totals not above `rank`, and a table finds the
/// bit within the byte.
#[inline]
fn select_bit(word: u64, rank: u32) -> u32 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    let mut counts = word - ((word >> 1) & 0x5555_5555_5555_5555);
    counts = (counts & 0x3333_3333_3333_3333) + ((counts >> 2) & 0x3333_3333_3333_3333);
    counts = (counts + (counts >> 4)) & 0x0f0f_0f0f_0f0f_0f0f;
    // Byte i: set bits in bytes 0..=i (at most 64, so no byte overflows).
    let totals = counts.wrapping_mul(ONES);
    let rank = (rank % 64) as u64;
    // The high bit of byte i is set when its total is at most `rank` (no borrow crosses
    // a byte: 128 + rank minus at most 64 stays positive).
    let not_above = (((rank * ONES) | HIGH_BITS) - totals) & HIGH_BITS;
    let byte = ((not_above >> 7).wrapping_mul(ONES) >> 56) % 8;
    let below = (totals << 8 >> (8 * byte)) & 0xff;
    let bits = (word >> (8 * byte)) & 0xff;
    8 * byte as u32 + SELECT_IN_BYTE[bits as usize][((rank - below) % 8) as usize] as u32
}

/// `SELECT_IN_BYTE[b][r]`: the index of the set bit of byte `b` with `r` set bits below
/// it (0 where there is none).
static SELECT_IN_BYTE: [[u8; 8]; 256] = {
    let mut table = [[0u8; 8]; 256];
    let mut b = 0;
    while b < 256 {
        let (mut bit, mut rank) = (0, 0);
        while bit < 8 {
            if b >> bit & 1 == 1 {
                table[b][rank] = bit as u8;
                rank += 1;
            }
            bit += 1;
        }
        b += 1;
    }
    table
};

impl Position {
    /// Plays `pit` for the side to move and reports every relay and capture.
    /// On an illegal move the position is unchanged. (The checks are [`Board::play`]'s,
    /// here so that callers need not import the trait.)
    #[inline]
    pub fn play(&mut self, pit: usize) -> Result<crate::MoveReport, IllegalMove> {
        Board::play(self, pit)
    }

    /// Plays `pit`, telling `recorder` what happens, and returns the move's counters.
    /// On an illegal move the position is unchanged and `recorder` hears nothing
    /// ([`Board::play_with`]).
    #[inline]
    pub fn play_with<R: Recorder>(
        &mut self,
        pit: usize,
        recorder: &mut R,
    ) -> Result<Summary, IllegalMove> {
        Board::play_with(self, pit, recorder)
    }

    /// Plays `pit` without checking it. For trusted hot paths that took `pit` from
    /// [`Position::legal_moves`]: an out-of-range pit panics, and a pit with fewer than
    /// two seeds makes a move the rules do not allow (the board stays consistent).
    #[inline]
    pub fn play_unchecked<R: Recorder>(&mut self, pit: usize, recorder: &mut R) -> Summary {
        let (rules, me) = (self.rules(), self.to_move());
        let [zero, one] = &mut self.rings;
        let (mine, theirs) = match me {
            Player::Zero => (zero, one),
            Player::One => (one, zero),
        };
        let summary =
            sow::<SEEDS, HALF, R>(mine, theirs, rules.preset(), rules.width(), pit, recorder);
        self.flip_to_move();
        summary
    }
}

impl Board for Position {
    #[inline]
    fn from_setup(setup: &Setup) -> Result<Self, SetupError> {
        setup.validate()
    }
    #[inline]
    fn rules(&self) -> Rules {
        Position::rules(self)
    }
    #[inline]
    fn width(&self) -> usize {
        Position::width(self)
    }
    #[inline]
    fn to_move(&self) -> Player {
        Position::to_move(self)
    }
    #[inline]
    fn seeds(&self, player: Player, pit: usize) -> u8 {
        Position::seeds(self, player, pit)
    }
    #[inline]
    fn pits(&self, player: Player) -> Vec<u8> {
        Position::pits(self, player)
    }
    #[inline]
    fn seeds_of(&self, player: Player) -> u32 {
        Position::seeds_of(self, player)
    }
    #[inline]
    fn legal_moves(&self) -> Moves {
        Position::legal_moves(self)
    }
    #[inline]
    fn play_unchecked<R: Recorder>(&mut self, pit: usize, recorder: &mut R) -> Summary {
        Position::play_unchecked(self, pit, recorder)
    }
    #[inline]
    fn key(&self) -> u64 {
        Position::key(self)
    }
}
