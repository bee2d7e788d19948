//! The two sides of a set and what each has: [`Side`] (bot A or bot B; in a team set,
//! team A or team B) and [`BySide`], one value per side. The engine's
//! [`Player`](engine::Player) is who moves first in one game; a side keeps its letter
//! for the whole set, and [`Seating`] says which side plays which player in a game.
//! Logs name the sides `0` and `1` (LOGS.md, "Conventions"): both types serialize as
//! those numbers, so records hold `"bot":0` and `"points":[1,0]`.

use std::fmt;
use std::ops::{Index, IndexMut};

use engine::Player;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A side of a set: bot A (`0` in logs, the first bot on the command line) or bot B
/// (`1`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Side {
    /// Bot A, `0`: the first bot on the command line (team A in a team set).
    A,
    /// Bot B, `1`: the second.
    B,
}

impl Side {
    /// Both sides, A first.
    pub const BOTH: [Side; 2] = [Side::A, Side::B];

    /// `0` for A, `1` for B: the number logs write.
    pub fn index(self) -> usize {
        match self {
            Side::A => 0,
            Side::B => 1,
        }
    }

    /// The side numbered `index` in logs, if any.
    pub fn from_index(index: usize) -> Option<Side> {
        match index {
            0 => Some(Side::A),
            1 => Some(Side::B),
            _ => None,
        }
    }

    /// The opponent.
    pub fn other(self) -> Side {
        match self {
            Side::A => Side::B,
            Side::B => Side::A,
        }
    }

    /// `"A"` or `"B"`, as people read it.
    pub fn letter(self) -> &'static str {
        match self {
            Side::A => "A",
            Side::B => "B",
        }
    }

    /// `"a"` or `"b"`: the side in file names (`.a.stderr`).
    pub fn lower(self) -> &'static str {
        match self {
            Side::A => "a",
            Side::B => "b",
        }
    }
}

/// The number logs write: `0` or `1`.
impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.index())
    }
}

impl Serialize for Side {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u8(self.index() as u8)
    }
}

impl<'de> Deserialize<'de> for Side {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Side, D::Error> {
        let n = u64::deserialize(deserializer)?;
        usize::try_from(n)
            .ok()
            .and_then(Side::from_index)
            .ok_or_else(|| {
                serde::de::Error::invalid_value(
                    serde::de::Unexpected::Unsigned(n),
                    &"a bot: 0 (A) or 1 (B)",
                )
            })
    }
}

/// One value for each side, A's first; serialized as the array `[a, b]`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct BySide<T>([T; 2]);

impl<T> BySide<T> {
    /// A's value and B's.
    pub const fn new(a: T, b: T) -> BySide<T> {
        BySide([a, b])
    }

    /// A value for each side, made from the side.
    pub fn from_fn(mut f: impl FnMut(Side) -> T) -> BySide<T> {
        BySide([f(Side::A), f(Side::B)])
    }

    /// Each side's value turned into another.
    pub fn map<U>(self, f: impl FnMut(T) -> U) -> BySide<U> {
        BySide(self.0.map(f))
    }

    /// References to the values.
    pub fn each_ref(&self) -> BySide<&T> {
        BySide([&self.0[0], &self.0[1]])
    }

    /// The values, A's first.
    pub fn iter(&self) -> std::slice::Iter<'_, T> {
        self.0.iter()
    }

    /// The values, A's first, to change.
    pub fn iter_mut(&mut self) -> std::slice::IterMut<'_, T> {
        self.0.iter_mut()
    }

    /// Each side with its value, A first.
    pub fn sides(&self) -> impl Iterator<Item = (Side, &T)> {
        Side::BOTH.into_iter().zip(self.0.iter())
    }

    /// The values as an array, A's first.
    pub fn into_array(self) -> [T; 2] {
        self.0
    }

    /// The values as an array, A's first.
    pub fn as_array(&self) -> &[T; 2] {
        &self.0
    }
}

impl<T> From<[T; 2]> for BySide<T> {
    fn from(values: [T; 2]) -> BySide<T> {
        BySide(values)
    }
}

impl<T> From<BySide<T>> for [T; 2] {
    fn from(values: BySide<T>) -> [T; 2] {
        values.0
    }
}

impl<T> Index<Side> for BySide<T> {
    type Output = T;

    fn index(&self, side: Side) -> &T {
        &self.0[side.index()]
    }
}

impl<T> IndexMut<Side> for BySide<T> {
    fn index_mut(&mut self, side: Side) -> &mut T {
        &mut self.0[side.index()]
    }
}

impl<'a, T> IntoIterator for &'a BySide<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

/// Which side plays which engine player in one game. The side that moves first
/// (`game-start.first`) is the player to move in the game's starting position: player 0
/// from the preset's start, possibly player 1 from an opening.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seating {
    /// The side of player 0 and of player 1.
    by_player: [Side; 2],
}

impl Seating {
    /// The seating of a game whose side `first` moves first, `to_move` being the player
    /// to move in its starting position.
    pub fn new(first: Side, to_move: Player) -> Seating {
        let by_player = match to_move {
            Player::Zero => [first, first.other()],
            Player::One => [first.other(), first],
        };
        Seating { by_player }
    }

    /// The side that plays `player`.
    pub fn side(self, player: Player) -> Side {
        self.by_player[player.index()]
    }

    /// The player that `side` plays.
    pub fn player(self, side: Side) -> Player {
        if self.by_player[0] == side {
            Player::Zero
        } else {
            Player::One
        }
    }

    /// Values by player (the engine's order), turned into values by side.
    pub fn by_side<T>(self, by_player: [T; 2]) -> BySide<T> {
        let [zero, one] = by_player;
        match self.by_player[0] {
            Side::A => BySide::new(zero, one),
            Side::B => BySide::new(one, zero),
        }
    }

    /// The sides of player 0 and player 1.
    pub fn sides_by_player(self) -> [Side; 2] {
        self.by_player
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sides_are_written_as_the_logs_numbers_and_nothing_else_is_read() {
        for (side, n) in [(Side::A, "0"), (Side::B, "1")] {
            assert_eq!(serde_json::to_string(&side).expect("serialize"), n);
            assert_eq!(serde_json::from_str::<Side>(n).ok(), Some(side));
            assert_eq!(side.to_string(), n);
            assert_eq!(side.other().other(), side);
            assert_ne!(side.other(), side);
            assert_eq!(Side::from_index(side.index()), Some(side));
        }
        assert_eq!(
            serde_json::from_str::<Side>("2")
                .expect_err("not a side")
                .to_string(),
            "invalid value: integer `2`, expected a bot: 0 (A) or 1 (B)"
        );
        assert!(serde_json::from_str::<Side>("-1").is_err());
        assert!(serde_json::from_str::<Side>("\"A\"").is_err());
        assert_eq!(Side::from_index(2), None);
    }

    #[test]
    fn by_side_is_an_array_indexed_by_side() {
        let mut points = BySide::new(3u32, 1);
        assert_eq!(serde_json::to_string(&points).expect("serialize"), "[3,1]");
        assert_eq!(
            serde_json::from_str::<BySide<u32>>("[3,1]").ok(),
            Some(points)
        );
        points[Side::B] += 2;
        assert_eq!((points[Side::A], points[Side::B]), (3, 3));
        assert_eq!(points.map(|p| p * 2).into_array(), [6, 6]);
        assert_eq!(
            BySide::from_fn(Side::index).sides().collect::<Vec<_>>(),
            [(Side::A, &0), (Side::B, &1)]
        );
    }

    #[test]
    fn a_seating_turns_players_into_sides_and_back() {
        for (first, to_move, by_player) in [
            (Side::A, Player::Zero, [Side::A, Side::B]),
            (Side::B, Player::Zero, [Side::B, Side::A]),
            (Side::A, Player::One, [Side::B, Side::A]),
            (Side::B, Player::One, [Side::A, Side::B]),
        ] {
            let s = Seating::new(first, to_move);
            assert_eq!(s.sides_by_player(), by_player);
            assert_eq!(s.side(to_move), first);
            for player in Player::BOTH {
                assert_eq!(s.player(s.side(player)), player);
            }
            let by_side = s.by_side([10, 20]);
            assert_eq!(by_side[s.side(Player::Zero)], 10);
            assert_eq!(by_side[s.side(Player::One)], 20);
        }
    }
}
