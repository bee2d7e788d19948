//! [`WidePosition`]: the board for widths above 16 (and for any board holding more
//! seeds than a [`Position`](crate::Position) can): one byte per pit, the whole byte a
//! seed count, so a board holds at most [`MAX_WIDE_TOTAL_SEEDS`] seeds and sowing is
//! still a plain increment. It plays moves with the same `sow` as `Position`.

use std::fmt;

use crate::board::Board;
use crate::position::{gather_high_bits, Moves, Player, Setup, SetupError, HIGH_BITS};
use crate::rules::{Rules, MAX_WIDTH};
use crate::sow::{sow, Recorder, Summary};

/// Bytes per player: room for the widest ring (2 x 32 pits).
const HALF: usize = 2 * MAX_WIDTH;

/// Most seeds a [`WidePosition`] (and so an [`AnyPosition`](crate::AnyPosition)) may
/// hold: a pit's count is one whole byte. RULINGS.md sets no limit; the widest start
/// (W = 32) has 192 seeds.
pub const MAX_WIDE_TOTAL_SEEDS: u32 = u8::MAX as u32;

/// A validated board of any width from 8 to 32: player `p`'s pit `i` is byte
/// `i` of ring `p` (byte `64 * p + i`; the bytes of a ring past its 2W pits are always
/// 0), followed by the rules and the side to move (131 bytes, `Copy`).
/// Build one with [`WidePosition::start`], from the notation, or with
/// [`Board::from_setup`]; use it through [`Board`].
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct WidePosition {
    rings: [[u8; HALF]; 2],
    rules: Rules,
    to_move: Player,
}

impl WidePosition {
    /// The starting position of `rules` (any width), player 0 to move.
    #[inline]
    pub fn start(rules: Rules) -> WidePosition {
        let mut rings = [[0u8; HALF]; 2];
        let (w, n) = (rules.width(), rules.pits());
        let front = rules.starting_front_pits();
        for ring in &mut rings {
            ring[front.clone()].fill(2);
            ring[w..n].fill(2);
        }
        WidePosition {
            rings,
            rules,
            to_move: Player::Zero,
        }
    }

    #[inline]
    fn ring(&self, player: Player) -> &[u8] {
        &self.rings[player.index()][..self.rules.pits()]
    }
}

impl Board for WidePosition {
    #[inline]
    fn from_setup(setup: &Setup) -> Result<Self, SetupError> {
        let total = setup.checked_total()?;
        if total > MAX_WIDE_TOTAL_SEEDS {
            return Err(SetupError::TooManySeeds {
                total,
                max: MAX_WIDE_TOTAL_SEEDS,
            });
        }
        let n = setup.rules.pits();
        let mut rings = [[0u8; HALF]; 2];
        for player in Player::BOTH {
            rings[player.index()][..n].copy_from_slice(&setup.pits[player.index()]);
        }
        Ok(WidePosition {
            rings,
            rules: setup.rules,
            to_move: setup.to_move,
        })
    }

    #[inline]
    fn rules(&self) -> Rules {
        self.rules
    }

    #[inline]
    fn to_move(&self) -> Player {
        self.to_move
    }

    #[inline]
    fn seeds(&self, player: Player, pit: usize) -> u8 {
        assert!(pit < self.rules.pits(), "pit {pit} out of range");
        self.rings[player.index()][pit]
    }

    #[inline]
    fn pits(&self, player: Player) -> Vec<u8> {
        self.ring(player).to_vec()
    }

    #[inline]
    fn seeds_of(&self, player: Player) -> u32 {
        self.ring(player).iter().map(|&c| c as u32).sum()
    }

    #[inline]
    fn legal_moves(&self) -> Moves {
        // Eight pits at a time: a count is 2 or more exactly when it has a bit above
        // the lowest, and a byte t is not zero exactly when t | (t & 0x7f) + 0x7f has
        // its high bit set.
        let mut mask = 0u64;
        for (k, chunk) in self.rings[self.to_move.index()].chunks_exact(8).enumerate() {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            let t = u64::from_le_bytes(word) & 0xfefe_fefe_fefe_fefe;
            let high = (t | ((t & 0x7f7f_7f7f_7f7f_7f7f) + 0x7f7f_7f7f_7f7f_7f7f)) & HIGH_BITS;
            mask |= gather_high_bits(high) << (8 * k);
        }
        let n = self.rules.pits();
        Moves::from_mask(if n == 64 {
            mask
        } else {
            mask & ((1u64 << n) - 1)
        })
    }

    #[inline]
    fn play_unchecked<R: Recorder>(&mut self, pit: usize, recorder: &mut R) -> Summary {
        let [zero, one] = &mut self.rings;
        let (mine, theirs) = match self.to_move {
            Player::Zero => (zero, one),
            Player::One => (one, zero),
        };
        let (preset, w) = (self.rules.preset(), self.rules.width());
        let summary = sow::<{ u8::MAX }, HALF, R>(mine, theirs, preset, w, pit, recorder);
        self.to_move = self.to_move.other();
        summary
    }

    #[inline]
    fn key(&self) -> u64 {
        let mut h: u64 = 0x9e37_79b9_7f4a_7c15
            ^ (self.to_move as u64) << 62
            ^ (self.rules.preset().code() as u64) << 56
            ^ self.rules.width() as u64;
        for chunk in self.rings.as_flattened().chunks_exact(8) {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            h = (h ^ u64::from_le_bytes(word)).wrapping_mul(0xff51_afd7_ed55_8ccd);
            h ^= h >> 29;
        }
        h
    }
}

impl TryFrom<&Setup> for WidePosition {
    type Error = SetupError;
    fn try_from(setup: &Setup) -> Result<WidePosition, SetupError> {
        WidePosition::from_setup(setup)
    }
}

impl fmt::Debug for WidePosition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "WidePosition({self})")
    }
}
