//! The one-line position notation:
//! `PRESET WIDTH P0FRONT/P0BACK P1FRONT/P1BACK TOMOVE`, for example the `hus` start
//! `hus 8 0,0,0,0,2,2,2,2/2,2,2,2,2,2,2,2 0,0,0,0,2,2,2,2/2,2,2,2,2,2,2,2 0`.

use std::fmt;
use std::str::FromStr;

use crate::board::Board;
use crate::position::{Player, Position, Setup, SetupError};
use crate::rules::{Preset, Rules, RulesError};
use crate::wide::WidePosition;

/// Why a notation string is not a position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotationError {
    /// Not five space-separated fields.
    FieldCount(usize),
    /// The preset or the width is not accepted.
    Rules(RulesError),
    /// The width is not a number.
    Width(String),
    /// A player's field is not `FRONT/BACK`.
    Rows {
        /// Whose field.
        player: Player,
        /// The field.
        field: String,
    },
    /// A row has the wrong number of pits.
    RowLength {
        /// Whose row.
        player: Player,
        /// `"front"` or `"back"`.
        row: &'static str,
        /// W.
        expected: usize,
        /// Pits given.
        found: usize,
    },
    /// A pit is not a seed count.
    Seeds {
        /// Whose pit.
        player: Player,
        /// The pit number.
        pit: usize,
        /// The text found.
        text: String,
    },
    /// The side to move is not `0` or `1`.
    ToMove(String),
    /// The board is not a valid position.
    Setup(SetupError),
}

impl fmt::Display for NotationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotationError::FieldCount(n) => write!(
                f,
                "expected 5 fields separated by spaces (PRESET WIDTH P0FRONT/P0BACK \
                 P1FRONT/P1BACK TOMOVE), found {n}"
            ),
            NotationError::Rules(e) => e.fmt(f),
            NotationError::Width(t) => write!(f, "width {t:?} is not a number"),
            NotationError::Rows { player, field } => write!(
                f,
                "player {player}'s pits {field:?} should be FRONT/BACK, two comma-separated rows"
            ),
            NotationError::RowLength {
                player,
                row,
                expected,
                found,
            } => write!(
                f,
                "player {player}'s {row} row has {found} pits, expected {expected}"
            ),
            NotationError::Seeds { player, pit, text } => write!(
                f,
                "player {player}'s pit {pit}: {text:?} is not a seed count (0 to 255)"
            ),
            NotationError::ToMove(t) => write!(f, "side to move {t:?} should be 0 or 1"),
            NotationError::Setup(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for NotationError {}

impl FromStr for Position {
    type Err = NotationError;

    fn from_str(s: &str) -> Result<Position, NotationError> {
        parse_setup(s)?.validate().map_err(NotationError::Setup)
    }
}

impl FromStr for WidePosition {
    type Err = NotationError;

    fn from_str(s: &str) -> Result<WidePosition, NotationError> {
        WidePosition::from_setup(&parse_setup(s)?).map_err(NotationError::Setup)
    }
}

/// Reads the notation into a [`Setup`]: the fields, the rules and the seed counts
/// (0 to 255 each) are checked here, the board's limits by the board type.
pub(crate) fn parse_setup(s: &str) -> Result<Setup, NotationError> {
    let fields: Vec<&str> = s.split_whitespace().collect();
    let [preset, width, p0, p1, to_move] = fields[..] else {
        return Err(NotationError::FieldCount(fields.len()));
    };
    let preset: Preset = preset.parse().map_err(NotationError::Rules)?;
    let width: usize = width
        .parse()
        .map_err(|_| NotationError::Width(width.to_string()))?;
    let rules = Rules::new(preset, width).map_err(NotationError::Rules)?;
    let pits = [
        parse_side(Player::Zero, p0, width)?,
        parse_side(Player::One, p1, width)?,
    ];
    let to_move = match to_move {
        "0" => Player::Zero,
        "1" => Player::One,
        other => return Err(NotationError::ToMove(other.to_string())),
    };
    Ok(Setup {
        rules,
        pits,
        to_move,
    })
}

fn parse_side(player: Player, field: &str, width: usize) -> Result<Vec<u8>, NotationError> {
    let Some((front, back)) = field.split_once('/') else {
        return Err(NotationError::Rows {
            player,
            field: field.to_string(),
        });
    };
    let mut pits = Vec::with_capacity(2 * width);
    for (row, text, offset) in [("front", front, 0), ("back", back, width)] {
        let cells: Vec<&str> = text.split(',').collect();
        if cells.len() != width {
            return Err(NotationError::RowLength {
                player,
                row,
                expected: width,
                found: cells.len(),
            });
        }
        for (i, cell) in cells.iter().enumerate() {
            let seeds = cell
                .parse::<u8>()
                .ok()
                .filter(|_| !cell.starts_with('+'))
                .ok_or_else(|| NotationError::Seeds {
                    player,
                    pit: offset + i,
                    text: cell.to_string(),
                })?;
            pits.push(seeds);
        }
    }
    Ok(pits)
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_notation(self, f)
    }
}

impl fmt::Display for WidePosition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_notation(self, f)
    }
}

fn write_notation<B: Board>(board: &B, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    // Built in a stack buffer and written once: logs and replays format one position
    // per move. At most 2 x 64 pits of up to 3 digits and a separator each, plus the
    // preset, the width and the side to move.
    let mut buf = [0u8; 600];
    let mut len = 0;
    let mut put = |bytes: &[u8]| {
        buf[len..len + bytes.len()].copy_from_slice(bytes);
        len += bytes.len();
    };
    let number = |n: u8| -> ([u8; 3], usize) {
        match n {
            0..=9 => ([b'0' + n, 0, 0], 1),
            10..=99 => ([b'0' + n / 10, b'0' + n % 10, 0], 2),
            _ => ([b'0' + n / 100, b'0' + n / 10 % 10, b'0' + n % 10], 3),
        }
    };
    let w = board.width();
    put(board.rules().preset().name().as_bytes());
    put(b" ");
    let (digits, n) = number(w as u8);
    put(&digits[..n]);
    for player in Player::BOTH {
        for pit in 0..2 * w {
            put(match pit {
                0 => b" ",
                p if p == w => b"/",
                _ => b",",
            });
            let (digits, n) = number(board.seeds(player, pit));
            put(&digits[..n]);
        }
    }
    put(if board.to_move() == Player::Zero {
        b" 0"
    } else {
        b" 1"
    });
    f.write_str(std::str::from_utf8(&buf[..len]).map_err(|_| fmt::Error)?)
}
